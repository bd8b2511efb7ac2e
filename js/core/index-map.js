/**
 * A sharded checkpoint's index parsed in wasm as it arrives (src/index_map.hpp): the boundary
 * with the sharded-index module, dist/safetensors_index.mjs (src/index_module.cpp), a module of
 * its own loaded on first use, so that pages that never open a sharded set never download it.
 *
 *   const parser = await openIndexParser('model.safetensors.index.json')
 *   for await (const chunk of body) parser.feed(chunk)   // any sizes
 *   const index = parser.finish()                          // a CoreIndex, or a SafetensorsError
 *   index.shardOf(name); index.names; index.dispose()
 *
 * Memory: the parser, then the CoreIndex, owns its tables in the module's heap (about 20 bytes
 * per name); dispose() frees them (a parser that failed has freed them already). Once none holds
 * tables in a module whose heap grew, the module is let go and the next index loads a new one.
 * Chunks are copied through one heap buffer of at most FEED_BYTES; `names` is decoded on first
 * use from one UTF-8 blob with one TextDecoder call.
 */
import { SafetensorsError } from '../errors.js'
import { DISPOSE } from '../dispose.js'

/**
 * Word positions and sizes in what the module hands JS, in the order of src/index_module.cpp's
 * kLayout (indexLayout()); tests/js/index-map.test.js compares the two. tables(): `words` uint32
 * words; each shard `shardWords` uint32 words, in path order; namesInto's ends are `end`-byte.
 */
export const INDEX_LAYOUT = {
  pointer: 4, words: 9, count: 0, shardCount: 1, shards: 2, paths: 3, pathsLength: 4, metadata: 5,
  metadataLength: 6, namesLength: 7, bytesInUse: 8, shardWords: 5, pathOffset: 0, pathLength: 1, firstName: 2,
  nameCount: 3, id: 4, end: 4,
}

/** The heap buffer chunks are fed through. */
const FEED_BYTES = 1 << 20
const utf8 = /* @__PURE__ */ new TextDecoder()
const encoder = /* @__PURE__ */ new TextEncoder()

/** @type {Promise<any> | null} the module new parsers use */
let loading = null
/** @type {any} that module, once loaded */
let current = null
/** @type {Map<any, { holders: number, initialBytes: number }>} each module in use: how many parsers and indexes hold tables in its heap, and the heap's size when loaded */
const modules = new Map()

/**
 * @returns {Promise<any>} the sharded-index module, loaded once per realm and loaded again after
 * a release (release())
 */
export function loadIndexModule() {
  return (loading ??= import('../../dist/safetensors_index.mjs').then((m) => m.default()).then((mod) => {
    modules.set(mod, { holders: 0, initialBytes: mod.HEAPU8.byteLength })
    return (current = mod)
  }))
}

/** A parser or index holds tables in `mod`'s heap. @param {any} mod */
function hold(mod) {
  const entry = modules.get(mod)
  if (entry) entry.holders++
}

/**
 * A parser or index freed its tables. A wasm heap never shrinks: once nothing holds tables in a
 * module whose heap grew (a large index was read), the next index is read in a module loaded
 * anew, and this one, with its heap, is left to the garbage collector.
 * @param {any} mod
 */
function release(mod) {
  const entry = modules.get(mod)
  if (!entry || --entry.holders > 0) return
  if (mod !== current) modules.delete(mod)
  else if (mod.HEAPU8.byteLength > entry.initialBytes) {
    modules.delete(mod)
    loading = null
    current = null
  }
}

/** @param {any} mod @param {number} ptr a NUL-terminated string's address */
function cString(mod, ptr) {
  const heap = /** @type {Uint8Array} */ (mod.HEAPU8)
  return utf8.decode(heap.subarray(ptr, heap.indexOf(0, ptr)))
}

/** @param {any} mod @param {number} size */
function alloc(mod, size) {
  const ptr = size > 0xffff0000 ? 0 : mod._malloc(Math.max(size, 1)) >>> 0
  if (ptr === 0) {
    throw new SafetensorsError('OutOfMemory', `cannot allocate ${size} bytes in the sharded-index module's heap, ` +
      `which holds ${mod._heapInUse()} bytes now and cannot grow past 4 GiB: dispose indexes no longer needed`)
  }
  return ptr
}

/**
 * The module is built without exceptions: a table that fails to grow aborts it. Before each
 * call that allocates, as in js/core/index.js (reserveFor), a block of at least what the call
 * can allocate is allocated and freed at once (OutOfMemory when it cannot be): the parser's
 * tables copied once as one of them doubles (twice what it holds), 8 bytes per byte fed, and
 * 1 MiB for the rest (messages, the shard tables finish() builds).
 * @param {any} mod @param {number} handle a parser, or 0 before one exists @param {number} fed bytes the call reads
 */
function reserveFor(mod, handle, fed) {
  const holds = handle ? mod._indexParserBytesInUse(handle) : 0
  mod._free(alloc(mod, 2 * holds + 8 * fed + (1 << 20)))
}

/**
 * @param {string} where the index's path or URL, for messages
 * @param {{ maxBytes?: number }} [options] maxBytes: refuse an index longer than this
 * @returns {Promise<IndexParser>}
 */
export async function openIndexParser(where, options = {}) {
  return new IndexParser(await loadIndexModule(), where, options.maxBytes ?? Infinity)
}

/**
 * Parses a whole index: bytes, or an iterable or async iterable of byte chunks.
 * @param {Uint8Array | Iterable<Uint8Array> | AsyncIterable<Uint8Array>} source
 * @param {string} where
 * @param {{ maxBytes?: number }} [options]
 */
export async function parseIndexCore(source, where, options) {
  const parser = await openIndexParser(where, options)
  try {
    if (source instanceof Uint8Array) parser.feed(source)
    else for await (const chunk of source) parser.feed(chunk)
    return parser.finish()
  } finally {
    parser.dispose()
  }
}

export class IndexParser {
  #mod
  #where
  #maxBytes
  #handle
  #buffer = 0
  #bufferSize = 0
  #read = 0

  /** @param {any} mod @param {string} where @param {number} maxBytes */
  constructor(mod, where, maxBytes) {
    this.#mod = mod
    this.#where = where
    this.#maxBytes = maxBytes
    reserveFor(mod, 0, 0)
    this.#handle = mod._indexParserNew() >>> 0
    if (this.#handle) hold(mod)
  }

  /** Bytes fed so far. */
  get bytesRead() { return this.#read }

  /** The next bytes of the index, of any length. Throws the index's error at the first bad byte. */
  feed(/** @type {Uint8Array} */ bytes) {
    const mod = this.#mod
    if (!this.#handle) throw new SafetensorsError('Closed', `${this.#where}: the index parser was finished or disposed`)
    if (this.#read + bytes.length > this.#maxBytes) {
      this.#fail(new SafetensorsError('InvalidIndex', `${this.#where} is over ${this.#maxBytes} bytes, the most an ` +
        'index may have here (maxIndexBytes): is it a shard?', { offset: this.#maxBytes }))
    }
    for (let at = 0; at < bytes.length; at += FEED_BYTES) {
      const piece = bytes.subarray(at, at + FEED_BYTES)
      this.#growBuffer(piece.length)
      mod.HEAPU8.set(piece, this.#buffer)
      this.#reserve(piece.length)
      if (!mod._indexParserFeed(this.#handle, this.#buffer, piece.length)) this.#fail(this.#error())
      this.#read += piece.length
    }
  }

  /** The end of the index: the parsed index, or its error. Either way the parser is done. */
  finish() {
    const mod = this.#mod
    if (!this.#handle) throw new SafetensorsError('Closed', `${this.#where}: the index parser was finished or disposed`)
    this.#reserve(0)
    if (!mod._indexParserFinish(this.#handle)) this.#fail(this.#error())
    const handle = this.#handle
    this.#handle = 0
    this.#freeBuffer()
    return new CoreIndex(mod, handle)
  }

  /** Frees what the parser holds (nothing after finish(): the index owns it then). */
  dispose() {
    this.#freeBuffer()
    if (!this.#handle) return
    this.#mod._indexParserDelete(this.#handle)
    this.#handle = 0
    release(this.#mod)
  }

  [DISPOSE]() { this.dispose() }

  /** @param {number} size the buffer must hold, at most FEED_BYTES */
  #growBuffer(size) {
    if (this.#bufferSize >= size) return
    this.#freeBuffer()
    this.#bufferSize = Math.min(Math.max(size, 64 * 1024), FEED_BYTES)
    this.#buffer = alloc(this.#mod, this.#bufferSize)
  }

  /** reserveFor, or the parser disposed and OutOfMemory thrown. @param {number} fed */
  #reserve(fed) {
    try {
      reserveFor(this.#mod, this.#handle, fed)
    } catch (error) {
      this.#fail(/** @type {SafetensorsError} */ (error))
    }
  }

  #freeBuffer() {
    if (this.#buffer) this.#mod._free(this.#buffer)
    this.#buffer = 0
    this.#bufferSize = 0
  }

  #error() {
    const text = this.#mod._indexParserError(this.#handle) >>> 0
    if (!text) return new SafetensorsError('OutOfMemory', `${this.#where}: no heap left for the index's error`)
    const info = JSON.parse(cString(this.#mod, text))
    this.#mod._free(text)
    return new SafetensorsError(info.code, `${this.#where}: ${info.message}`, {
      tensor: info.tensor === '' ? null : info.tensor, offset: info.offset,
    })
  }

  /** @param {SafetensorsError} error @returns {never} */
  #fail(error) {
    this.dispose()
    throw error
  }
}

/**
 * A parsed index, as js/sharded.js's ShardIndex: metadata, shard paths (sorted as JS sorts
 * strings), names grouped by shard (shards in path order, weight_map order within a shard),
 * shardOf and has. Its tables stay in the module's heap until dispose().
 */
export class CoreIndex {
  #mod
  #handle
  /** @type {string[] | null} */
  #names = null
  #query = 0
  #querySize = 0

  /** @param {any} mod @param {number} handle a finished st::IndexParser */
  constructor(mod, handle) {
    this.#mod = mod
    this.#handle = handle
    const L = INDEX_LAYOUT
    const words = new Uint32Array(mod.HEAPU8.buffer, mod._indexParserTables(handle) >>> 0, L.words)
    /** Names in the index. */
    this.count = words[L.count]
    /** Heap bytes the index holds in the module (the names' JS strings, once decoded, not counted). */
    this.byteSize = words[L.bytesInUse]
    this.namesLength = words[L.namesLength]
    const records = new Uint32Array(mod.HEAPU8.buffer, words[L.shards], words[L.shardCount] * L.shardWords).slice()
    const paths = mod.HEAPU8.subarray(words[L.paths], words[L.paths] + words[L.pathsLength])
    /** @type {string[]} shard paths, sorted */
    this.shards = []
    /** @type {{ first: number, count: number }[]} each shard's names: names.slice(first, first + count) */
    this.ranges = []
    for (let i = 0; i < records.length; i += L.shardWords) {
      const at = records[i + L.pathOffset]
      this.shards.push(utf8.decode(paths.subarray(at, at + records[i + L.pathLength])))
      this.ranges.push({ first: records[i + L.firstName], count: records[i + L.nameCount] })
    }
    const metadataLength = words[L.metadataLength]
    /** @type {Record<string, unknown> | null} the index's "metadata" object, or null */
    this.metadata = metadataLength
      ? JSON.parse(utf8.decode(mod.HEAPU8.subarray(words[L.metadata], words[L.metadata] + metadataLength)))
      : null
  }

  /** Every name, grouped by shard (shards in path order), in weight_map order within a shard. */
  get names() {
    if (this.#names) return this.#names
    const mod = this.#mod
    const handle = this.#live()
    const blob = alloc(mod, this.namesLength)
    let ends = 0
    try {
      ends = alloc(mod, this.count * INDEX_LAYOUT.end)
      mod._indexParserNames(handle, blob, ends)
      const text = utf8.decode(mod.HEAPU8.subarray(blob, blob + this.namesLength))
      const stops = new Uint32Array(mod.HEAPU8.buffer, ends, this.count)
      const names = new Array(this.count)
      let from = 0
      for (let k = 0; k < names.length; k++) names[k] = text.slice(from, (from = stops[k]))
      this.#names = names
    } finally {
      mod._free(blob)
      if (ends) mod._free(ends)
    }
    return this.#names
  }

  /**
   * @param {string} name
   * @returns {number | undefined} the position in `shards` of the shard holding `name`
   */
  shardOf(name) {
    const mod = this.#mod
    const handle = this.#live()
    if (this.#querySize < name.length * 3) {
      if (this.#query) mod._free(this.#query)
      this.#querySize = Math.max(256, name.length * 3)
      this.#query = alloc(mod, this.#querySize)
    }
    const { written } = encoder.encodeInto(name, mod.HEAPU8.subarray(this.#query, this.#query + this.#querySize))
    const shard = mod._indexParserShardOf(handle, this.#query, written)
    return shard < 0 ? undefined : shard
  }

  /** @param {string} name */
  has(name) { return this.shardOf(name) !== undefined }

  /** Frees the tables; shardOf and has refuse afterwards (names already decoded stay). */
  dispose() {
    if (this.#query) this.#mod._free(this.#query)
    this.#query = 0
    this.#querySize = 0
    if (!this.#handle) return
    this.#mod._indexParserDelete(this.#handle)
    this.#handle = 0
    release(this.#mod)
    // A disposed index kept by the app must not keep the module (and its heap) alive.
    this.#mod = null
  }

  [DISPOSE]() { this.dispose() }

  #live() {
    if (!this.#handle) throw new SafetensorsError('Closed', 'the index was disposed')
    return this.#handle
  }
}

/**
 * Sharded checkpoints: a `*.safetensors.index.json` ({ metadata, weight_map: { tensor: shard } })
 * opened as one file. Names come from the weight_map alone; a shard's header is fetched only when
 * one of its tensors (or its info) is needed, once, and shared by concurrent callers.
 *
 * Shard paths must be relative paths inside the index's folder: no scheme or absolute path, no
 * backslash, no `.`/`..` segment (also percent-encoded), no `?` or `#`, no empty segment.
 * Anything else is refused with UnsafeShardPath before any request is made.
 */
import { ASYNC_DISPOSE } from './dispose.js'
import { SafetensorsError, throwIfAborted } from './errors.js'
import { pool } from './io/pool.js'
import { checkConcurrency, checkNumber } from './options.js'
import { elementCount } from './dtypes.js'
import { PARTS, READ_RANGES, copyEntry, openSource, quantizedEntry, refuseOversize } from './file.js'
import { countParameters, detect, detectPausing, quantConfig } from './quant/detect.js'
import { CACHE, CONCURRENCY, INITIAL_FETCH_SIZE, urlSource } from './io/http.js'
import { fetchBytes } from './io/http-whole.js'
import { openAny } from './open.js'
import { readExactly, sourceOf } from './io/sources.js'
import { heapFree } from './core/index.js'
import { IndexParser, loadIndexModule, parseIndexCore } from './core/index-map.js'
import { loadCore as loadCoreOf } from './wasm.js'
import { lowerBound } from './name-finder.js'

/** Bytes of first-request prefixes a sharded set keeps over all its shards: past it, a newly
 * opened shard keeps only its parsed header (thousands of shards x P would not fit). */
const SHARD_PREFIX_BUDGET = 64 * 1024 * 1024
/**
 * Shard headers fetched at once by loadHeaders when no `concurrency` is given: in Node, enough
 * that the 282 shards of the largest sets take two rounds (undici opens as many connections as
 * asked); in browsers fewer, within an HTTP/2 connection's usual 100 streams, leaving room for
 * the page's own requests (on HTTP/1.1 the browser queues past its 6 connections anyway).
 */
// A function, not a constant: a module-level read of a global would count as a side effect to
// bundlers, which then put this module (loaded on demand) into every page's first load.
const headerConcurrency = () => (typeof process !== 'undefined' && process.versions?.node ? 256 : 32)

/**
 * maxIndexBytes's default: an index longer than this is refused (before it is read, when its
 * length is known). Real indexes are a few MB (tens of thousands of names); 500,000 names make
 * about 46 MB. An index whose length is not known is parsed as it arrives until it passes the
 * limit; a name, shard path or metadata over its own cap (src/index_map.cpp: 64 KiB, 4 KiB, 1 MiB)
 * is refused as it arrives (a single name the length of the index, held whole and copied as it
 * grew, cost about 4 times the limit in memory). A shard given as the index fails at its first
 * bytes whatever the limit.
 */
export const MAX_INDEX_BYTES = 64 * 1024 * 1024

/**
 * @typedef {import('./file.js').SafetensorsFile} SafetensorsFile
 * @typedef {import('./io/reader.js').ReadOptions} ReadOptions
 * @typedef {import('./tensor.js').Tensor} Tensor
 * @typedef {import('./core/index-map.js').CoreIndex} CoreIndex
 * @typedef {import('./table.js').TensorInfo & { shard: string }} ShardTensorInfo
 * @typedef {(shard: string, signal: AbortSignal | undefined) => Promise<SafetensorsFile>} ShardOpener
 * @typedef {{ metadata: Record<string, unknown> | null, shards: string[], names: string[],
 *   ranges: { first: number, count: number }[], shardOf(name: string): number | undefined,
 *   dispose(): void }} ShardIndex a parsed index (js/core/index-map.js's CoreIndex); ranges[i]
 *   is shard i's run of names
 * @typedef {string | URL | Blob | ArrayBuffer | ArrayBufferView | import('./io/sources.js').ByteSource} ShardSource
 * @typedef {Record<string, ShardSource> | Map<string, ShardSource> |
 *   ((path: string) => ShardSource | null | undefined)} ShardSources
 */

/**
 * The URL of a shard: relative to the index URL's folder, without the index's query or hash.
 * @param {URL} indexUrl
 * @param {string} path a shard path of a parsed index (checked safe: src/index_map.cpp)
 */
export function shardUrl(indexUrl, path) {
  const folder = new URL('.', indexUrl)
  const url = new URL(path.split('/').map(encodeURIComponent).join('/'), folder)
  if (url.origin !== folder.origin || !url.pathname.startsWith(folder.pathname))
    throw new SafetensorsError('UnsafeShardPath', `${indexUrl.href}: shard ${JSON.stringify(path)} resolves outside the index's folder`)
  return url
}

/**
 * Opens a sharded set from the URL of its index (parsed as it downloads, with the same retries
 * as ranges).
 * Shards are fetched from URLs relative to the index with the same options (headers, fetch...).
 * @param {URL} url
 * @param {import('./io/http.js').HttpOptions & { concurrency?: number }} options
 */
export async function openIndexUrl(url, options) {
  const index = await fetchIndex(url, options)
  const { onProgress, ...shardOptions } = options  // open's progress is the index's
  const windows = options.initialFetchSize === undefined ? firstWindows(index) : null
  let kept = 0
  return new ShardedFile(index, async (shard, signal) => {
    const initialFetchSize = windows?.get(shard) ?? options.initialFetchSize
    const source = await urlSource(shardUrl(url, shard), { ...shardOptions, initialFetchSize, signal })
      .catch((error) => { throw shardMissing(error, shard, url.href) })
    try {
      const file = await openSource(source, { signal, closeSource: true })
      if (kept + source.cachedBytes <= SHARD_PREFIX_BUDGET) kept += source.cachedBytes
      else source.releaseCache()
      return file
    } catch (error) {
      source.close()
      throw error
    }
  }, { ...options, settled: () => /** @type {Record<symbol, any>} */ (options)[CACHE]?.settled() })
}

/** What a header entry holds besides its name, at most for most tensors: `"":{"dtype":"BF16",
 * "shape":[7168,2048],"data_offsets":[68719476736,68733157376]},` is 81 bytes. */
const ENTRY_BYTES = 88
/** The largest first request sized from an index: a longer header takes a second request. */
const MAX_SIZED_WINDOW = 16 * 1024 * 1024

/**
 * Each shard's first request, sized from the index so that the shard's header comes whole in
 * it (one round trip): its names at the set's mean name length, ENTRY_BYTES each besides, and an
 * eighth more, rounded up to 64 KiB. Never less than the default window; shards whose headers
 * fit that are left out.
 * @param {CoreIndex} index @returns {Map<string, number>} shard path to bytes
 */
function firstWindows(index) {
  const meanName = index.count > 0 ? index.namesLength / index.count : 0
  /** @type {Map<string, number>} */
  const windows = new Map()
  index.shards.forEach((path, i) => {
    const header = 8 + index.ranges[i].count * (meanName + ENTRY_BYTES)
    const window = Math.ceil((header * 1.125 + 4096) / 65536) * 65536
    if (window > INITIAL_FETCH_SIZE) windows.set(path, Math.min(window, MAX_SIZED_WINDOW))
  })
  return windows
}

/**
 * The index at `url`, fed to the parser as its bytes arrive (a retry starts a new parser).
 * @param {URL} url @param {import('./io/http.js').HttpOptions & { maxIndexBytes?: number }} options
 * @returns {Promise<CoreIndex>}
 */
async function fetchIndex(url, options) {
  const mod = await loadIndexModule()
  const maxBytes = maxIndexBytes(options)
  /** @type {IndexParser | null} */
  let parser = null
  try {
    await fetchBytes(url, { ...options, maxBytes, sink: {
      start() {
        parser?.dispose()
        parser = new IndexParser(mod, url.href, maxBytes)
      },
      chunk: (bytes) => /** @type {IndexParser} */ (parser).feed(bytes),
    } })
    return /** @type {IndexParser} */ (/** @type {unknown} */ (parser)).finish()
  } finally {
    /** @type {IndexParser | null} */ (parser)?.dispose()
  }
}

/**
 * The index of a ByteSource, read and parsed in pieces; refused unread when longer than
 * maxIndexBytes.
 * @param {import('./io/sources.js').ByteSource} source @param {string} where
 * @param {{ maxIndexBytes?: number, signal?: AbortSignal }} options
 * @returns {Promise<CoreIndex>}
 */
export async function readIndex(source, where, options) {
  const maxBytes = maxIndexBytes(options)
  if (source.byteLength > maxBytes) {
    throw new SafetensorsError('InvalidIndex', `${where} is ${source.byteLength} bytes, more than an index ` +
      `may have here (maxIndexBytes, ${maxBytes}): is it a shard?`)
  }
  const pieces = async function* () {
    for (let at = 0; at < source.byteLength; at += INDEX_PIECE) {
      throwIfAborted(options.signal)
      yield await readExactly(source, at, Math.min(INDEX_PIECE, source.byteLength - at), { signal: options.signal })
    }
  }
  return parseIndexCore(pieces(), where, { maxBytes })
}

/** How far from detection's position (view.at) a part is looked for by comparing names. */
const NEAR = 4

/** Bytes of an index read at once from a file or Blob: the first piece already tells a shard. */
const INDEX_PIECE = 4 * 1024 * 1024

/** @param {{ maxIndexBytes?: number }} options */
function maxIndexBytes(options) {
  return checkNumber('maxIndexBytes', options.maxIndexBytes, MAX_INDEX_BYTES, { min: 1 })
}

/**
 * Opens a sharded set from files the caller holds (the files of a folder dropped on a page, say):
 * `src` is the index's content (a Blob or File, bytes, or a ByteSource) and `options.shards`
 * gives each shard the index names, by its path in the index, as anything `open` takes for one
 * file: an object or Map from path to source, or a function of the path. A shard without a
 * source is refused here, before any shard is read; each is opened on first use.
 * @param {unknown} src
 * @param {import('./open.js').OpenOptions & { shards: ShardSources }} options
 * @param {import('./open.js').Resolver[]} resolvers for shards given as strings or URLs
 */
export async function openIndexWith(src, options, resolvers) {
  const { shards, ...shardOptions } = options
  const lookup = typeof shards === 'function' ? shards
    : shards instanceof Map ? (/** @type {string} */ path) => shards.get(path)
      : typeof shards === 'object' && shards !== null
        ? (/** @type {string} */ path) => (Object.hasOwn(shards, path) ? shards[path] : undefined)
        : null
  if (!lookup) throw new SafetensorsError('InvalidArgument', 'options.shards is not an object, a Map or a function')
  const where = typeof Blob !== 'undefined' && src instanceof Blob && 'name' in src ? String(src.name) : 'the index'
  const source = sourceOf(src)
  if (!source) {
    throw new SafetensorsError('UnsupportedSource', 'with options.shards, open() takes the index itself ' +
      '(a Blob or File, an ArrayBuffer, a Uint8Array or a ByteSource), not its URL or path')
  }
  throwIfAborted(options.signal)
  const index = await readIndex(source, where, options)
  const given = new Map(index.shards.map((path) => [path, lookup(path)]))
  const missing = index.shards.filter((path) => given.get(path) === undefined || given.get(path) === null)
  if (missing.length > 0) {
    const listed = missing.slice(0, 3).map((path) => JSON.stringify(path)).join(', ')
    throw new SafetensorsError('ShardMissing', `${where} names ${index.shards.length} shards, and options.shards ` +
      `lacks ${missing.length} of them: ${listed}${missing.length > 3 ? ', ...' : ''}`)
  }
  return new ShardedFile(index, (shard, signal) =>
    openAny(given.get(shard), { ...shardOptions, signal }, resolvers), { concurrency: options.concurrency })
}

/**
 * ShardMissing for a shard the index names that is not there (HTTP 404, no such file); any
 * other error as it is.
 * @param {unknown} error @param {string} shard @param {string} where the index
 */
export function shardMissing(error, shard, where) {
  if (!(error instanceof SafetensorsError) || error.code !== 'NotFound') return error
  return new SafetensorsError('ShardMissing', `${where} names the shard ${JSON.stringify(shard)}, which is not ` +
    `there: ${error.message}`, { status: error.status, cause: error })
}

export class ShardedFile {
  #index
  #openShard
  #concurrency
  #headerConcurrency
  /** @type {Map<number, Promise<SafetensorsFile>>} */
  #pending = new Map()
  /** @type {Map<number, SafetensorsFile>} */
  #opened = new Map()
  /** @type {Map<number, { rows: Uint32Array, table: import('./table.js').TensorTable } | null>} see #aligned */
  #alignedShards = new Map()
  #closed = false
  #settled
  #quantization
  /** @type {import('./quant/detect.js').Detection | null} over every shard, once all are loaded */
  #detection = null
  /** @type {Promise<import('./quant/detect.js').Detection> | null} the detection under way */
  #detecting = null
  /** @type {Map<string, import('./quant/detect.js').Detection>} dequantize's, by weight, before that */
  #detectedFor = new Map()

  /**
   * @param {ShardIndex} index
   * @param {ShardOpener} openShard opens (fetches the header of) one shard
   * @param {{ concurrency?: number, quantization?: any, settled?: () => Promise<void> | undefined }} [options]
   *   concurrency: requests at once (shard headers by loadHeaders, headerConcurrency() by default; ranges by load);
   *   quantization: the model's quantization_config or config.json; settled: what close awaits
   *   last (the cache's writes, the index's among them)
   */
  constructor(index, openShard, options = {}) {
    this.#index = index
    this.#openShard = openShard
    this.#settled = options.settled
    this.#concurrency = checkConcurrency(options.concurrency, CONCURRENCY)
    this.#headerConcurrency = checkConcurrency(options.concurrency, headerConcurrency())
    this.#quantization = quantConfig(options.quantization)
  }

  /** The index's own "metadata" object as written (e.g. { total_size: 4305 }), or null. Each
   * shard's `__metadata__` is on `(await f.shard(path)).metadata`. */
  get metadata() { return this.#index.metadata }

  /** Tensor names, grouped by shard, from the index alone. */
  get names() { return this.#index.names.slice() }

  /** Shard paths (relative to the index), sorted. */
  get shards() { return this.#index.shards.slice() }

  /** Sum of the shards' lengths once every shard header is loaded, else null. */
  get byteLength() {
    if (this.#opened.size < this.#index.shards.length) return null
    let sum = 0
    for (const file of this.#opened.values()) sum += file.byteLength
    return sum
  }

  /** @param {string} name @returns {string} the shard path holding `name`, from the index */
  shardOf(name) { return this.#index.shards[this.#require(name)] }

  /**
   * The index's names in shard `path`, in index order: the run of `names` that shard holds.
   * From the index alone, with no lookup of each name (shardOf costs a hash lookup a name).
   * @param {string} path a shard path from `shards`
   * @returns {string[]}
   */
  namesIn(path) {
    const i = this.#index.shards.indexOf(path)
    if (i < 0) throw new SafetensorsError('NotFound', `no shard ${JSON.stringify(path)} in the index`)
    const { first, count } = this.#index.ranges[i]
    return this.#index.names.slice(first, first + count)
  }

  /** Whether the index names a tensor `name` (nothing is read). @param {string} name */
  has(name) { return this.#index.shardOf(name) !== undefined }

  /** @param {string} name */
  #require(name) {
    const i = this.#index.shardOf(name)
    if (i === undefined) throw new SafetensorsError('TensorNotFound', `no tensor named ${JSON.stringify(name)} in the index`, { tensor: name })
    return i
  }

  #open() {
    if (this.#closed) throw new SafetensorsError('Closed', 'the file was closed')
  }

  /**
   * The shard, opened once (its header fetched) and shared. A caller whose own signal is not
   * aborted does not inherit another caller's abort: it opens the shard itself.
   * @param {number} i @param {AbortSignal | undefined} signal
   * @returns {Promise<SafetensorsFile>}
   */
  async #file(i, signal) {
    for (;;) {
      this.#open()
      throwIfAborted(signal)
      let pending = this.#pending.get(i)
      if (!pending) {
        pending = this.#openShard(this.#index.shards[i], signal).then(async (file) => {
          if (this.#closed) {
            await file.close()
            throw new SafetensorsError('Closed', 'the file was closed')
          }
          this.#opened.set(i, file)
          return file
        }, (error) => {
          this.#pending.delete(i)
          throw error
        })
        this.#pending.set(i, pending)
      }
      try {
        return await pending
      } catch (error) {
        if (/** @type {any} */ (error)?.code !== 'Aborted' || signal?.aborted) throw error
      }
    }
  }

  /**
   * The shard's own SafetensorsFile (its header fetched if not yet).
   * @param {string} path a shard path from `shards`
   * @param {{ signal?: AbortSignal }} [options]
   */
  shard(path, options = {}) {
    const i = this.#index.shards.indexOf(path)
    if (i < 0) return Promise.reject(new SafetensorsError('NotFound', `no shard ${JSON.stringify(path)} in the index`))
    return this.#file(i, options.signal)
  }

  /**
   * Fetches every shard header not yet fetched, `concurrency` at a time (headerConcurrency() by
   * default: 256 in Node, 32 in browsers). Only parsed headers are kept (each shard's first
   * window too, within a budget), so hundreds of shards fit. `onProgress` counts
   * shards: `{ loaded, total }` with loaded the shards whose header is in, total all of them.
   * Each header is matched to the index as it arrives (#aligned).
   * @param {{ signal?: AbortSignal, concurrency?: number,
   *   onProgress?: (p: { loaded: number, total: number }) => void }} [options]
   */
  async loadHeaders(options = {}) {
    const total = this.#index.shards.length
    const todo = this.#index.shards.map((_, i) => i).filter((i) => !this.#opened.has(i))
    let loaded = total - todo.length
    options.onProgress?.({ loaded, total })
    await pool(todo, options.concurrency ?? this.#headerConcurrency, options.signal, async (i, signal) => {
      await this.#file(i, signal)
      // Matched to the index as it arrives, while the other headers are on their way: a count
      // or a detection over every name afterwards finds each shard's rows in order (the first
      // shard in also decodes the index's names, which they need).
      this.#aligned(i)
      options.onProgress?.({ loaded: ++loaded, total })
    })
  }

  /**
   * @param {string} name
   * @param {{ signal?: AbortSignal }} [options]
   * @returns {Promise<ShardTensorInfo>} the shard's info (offsets within the shard) plus its path
   */
  async info(name, options = {}) {
    const i = this.#require(name)
    const file = await this.#file(i, options.signal)
    // A new object each call (file.info's): given its shard in place, as spreading it into a
    // literal with one more field costs microseconds a tensor in Node 20.
    return Object.assign(this.#inShard(file, i, name), { shard: this.#index.shards[i] })
  }

  /** @param {SafetensorsFile} file @param {number} i @param {string} name */
  #inShard(file, i, name) {
    try {
      return file.info(name)
    } catch (error) {
      if (/** @type {any} */ (error)?.code !== 'TensorNotFound') throw error
      throw new SafetensorsError('TensorNotFound', `the index puts ${JSON.stringify(name)} in ` +
        `${this.#index.shards[i]}, whose header has no such tensor`, { tensor: name })
    }
  }

  /**
   * Counts the parameters of every tensor in the index (fetches every shard header), as
   * SafetensorsFile.parameterCount does: quantized weights once by logical shape, under byScheme.
   * Options as loadHeaders's.
   * @param {{ signal?: AbortSignal, concurrency?: number, onProgress?: (p: { loaded: number, total: number }) => void }} [options]
   * @returns {Promise<{ total: number, byDtype: Record<string, number>, byScheme: Record<string, number> }>}
   */
  async parameterCount(options = {}) {
    const found = await this.#detectAll(options)
    return countParameters(this.#view(this.#index.names), found)
  }

  /**
   * The quantized weights of the whole set (fetches every shard header); see
   * SafetensorsFile.quantized. A weight's parts may sit in different shards. Options as loadHeaders's.
   * @param {{ signal?: AbortSignal, concurrency?: number, onProgress?: (p: { loaded: number, total: number }) => void }} [options]
   */
  async quantized(options = {}) {
    const found = await this.#detectAll(options)
    if (found.problems.length > 0) throw found.problems[0]
    return found.entries.map(copyEntry)
  }

  /**
   * A quantized weight's values as a float32 Tensor (see SafetensorsFile.dequantize). Fetches
   * only the headers of the shards that hold the weight's parts.
   * @param {string} name
   * @param {import('./quant/dequantize.js').DequantizeOptions} [options]
   */
  async dequantize(name, options = {}) {
    this.#open()
    let found = this.#detection ?? this.#detectedFor.get(name)
    if (!found) {
      // The parts share the logical name's module prefix: detect among those names alone, once
      // per weight (stats and toGPU dequantize a weight piece by piece).
      const prefix = name.endsWith('.weight') ? name.slice(0, -'.weight'.length) : name
      const names = this.#index.names.filter((n) => n.startsWith(prefix))
      const shards = new Set(names.map((n) => /** @type {number} */ (this.#index.shardOf(n))))
      await pool([...shards], this.#headerConcurrency, options.signal, (i, signal) => this.#file(i, signal))
      found = detect(this.#view(names), this.#quantization)
      this.#detectedFor.set(name, found)
    }
    const entry = quantizedEntry(found, name, (n) => this.#index.shardOf(n) !== undefined)
    const { dequantize } = await import('./quant/dequantize.js')
    const get = this.#view([]).get
    return dequantize({ core: await loadCoreOf(), get: (n) => /** @type {any} */ (get(n)), read: (r, o) => this.#readRanges(r, o) },
      entry, options)
  }

  /** @param {{ signal?: AbortSignal, concurrency?: number, onProgress?: (p: { loaded: number, total: number }) => void }} options */
  async #detectAll(options) {
    await this.loadHeaders(options)
    if (this.#detection) return this.#detection
    // One detection for every caller, a block of names a task (half a second's work at 500,000
    // names). A caller's abort is seen once it is over: others may be waiting for it.
    this.#detecting ??= detectPausing(this.#view(this.#index.names), this.#quantization, async () => {
      await new Promise((resolve) => setTimeout(resolve, 0))
      this.#open()
    }).then((found) => (this.#detection = found), (error) => {
      this.#detecting = null
      throw error
    })
    const found = await this.#detecting
    throwIfAborted(options.signal)
    return found
  }

  /**
   * Detection's view of the set: names, and each part's info and bytes from its loaded shard.
   * @param {string[]} names
   * @returns {import('./quant/detect.js').TensorView}
   */
  #view(names) {
    /** @type {Map<number, ReturnType<SafetensorsFile[typeof PARTS]>>} */
    const parts = new Map()
    /** @param {string} name */
    const of = (name) => {
      const i = this.#index.shardOf(name)
      const file = i === undefined ? undefined : this.#opened.get(i)
      if (i === undefined || !file) return undefined
      let p = parts.get(i)
      if (!p) parts.set(i, (p = file[PARTS]()))
      return p
    }
    const whole = names === this.#index.names ? this.#index.ranges : null
    // Where detection is (at), and that position's shard.
    let cursor = -1
    let shard = 0
    return {
      names,
      // The index groups its names by shard: a pass over all of them asks each shard's table
      // alone, without looking up each name's shard in the index's module.
      eachStored: whole ? (skip, visit) => {
        whole.forEach(({ first, count }, i) => {
          if (count === 0) return
          const file = /** @type {SafetensorsFile} */ (this.#opened.get(i))
          const aligned = this.#aligned(i)
          if (aligned) {
            const { rows, table } = aligned
            for (let j = 0; j < count; j++) {
              if (!skip(names[first + j])) visit(table.dtype(rows[j]), table.elementCount(rows[j]))
            }
            return
          }
          const p = file[PARTS]()
          for (let k = first; k < first + count; k++) {
            const name = names[k]
            if (skip(name)) continue
            const { dtype, shape } = p.get(name) ?? this.#inShard(file, i, name)
            visit(dtype, elementCount(shape))
          }
        })
      } : undefined,
      at: whole ? (k) => {
        cursor = k
        while (shard > 0 && k < whole[shard].first) shard--
        while (shard < whole.length - 1 && k >= whole[shard].first + whole[shard].count) shard++
      } : undefined,
      get: (name) => {
        const found = whole ? this.#alignedInfo(name, cursor, shard) : null
        if (found) return found
        const p = of(name)
        const info = p?.get(name)
        // The index names it in a loaded shard whose header lacks it: TensorNotFound, as for reads.
        if (p && !info) this.#inShard(/** @type {any} */ (this.#opened.get(this.#require(name))), this.#require(name), name)
        return info
      },
      value: (name) => of(name)?.value(name),
    }
  }

  /**
   * A name's info by position, where its shard is aligned (#aligned): first among the names
   * next to position `cursor` (in shard `shard`), where a weight's parts sit; else by a binary
   * search in its shard's names. null where neither finds it (each then looks it up).
   * @param {string} name @param {number} cursor @param {number} shard
   * @returns {{ dtype: string, shape: any[] } | null}
   */
  #alignedInfo(name, cursor, shard) {
    const names = this.#index.names
    const ranges = this.#index.ranges
    /** @param {number} s @param {number} k */
    const at = (s, k) => {
      const aligned = this.#aligned(s)
      if (!aligned) return null
      const r = aligned.rows[k - ranges[s].first]
      return { dtype: aligned.table.dtype(r), shape: aligned.table.shape(r) }
    }
    for (let d = 0; cursor >= 0 && d <= NEAR; d = d > 0 ? -d : 1 - d) {
      const k = cursor + d
      if (k < 0 || k >= names.length || names[k] !== name) continue
      let s = shard
      while (k < ranges[s].first) s--
      while (k >= ranges[s].first + ranges[s].count) s++
      return at(s, k)
    }
    const s = this.#index.shardOf(name)
    if (s === undefined || !this.#aligned(s)) return null
    const { first, count } = ranges[s]
    const lo = lowerBound(first, first + count, (k) => names[k], name)
    // Not found: the shard's names sort otherwise as JS strings than as bytes (or it is absent).
    return lo < first + count && names[lo] === name ? at(s, lo) : null
  }

  /**
   * Loaded shard i's table and, for each of the index's names of the shard in order, its row:
   * when the header holds exactly those names and both list them in the same order once the
   * header's are sorted by bytes (an index whose keys are sorted, as transformers writes it).
   * Then one string comparison a name matches them, where a table of names costs about a
   * microsecond a name to build and as much a lookup at 500,000 names. null otherwise (each
   * name is then looked up).
   * @param {number} i
   * @returns {{ rows: Uint32Array, table: import('./table.js').TensorTable } | null}
   */
  #aligned(i) {
    let aligned = this.#alignedShards.get(i)
    if (aligned !== undefined) return aligned
    const file = this.#opened.get(i)
    if (!file) return null  // (not loaded yet: asked again once it is)
    aligned = null
    const { first, count } = this.#index.ranges[i]
    const { table } = file[PARTS]()
    if (table.count === count) {
      const rows = table.byName
      const names = this.#index.names
      const own = table.names
      let j = 0
      while (j < count && names[first + j] === own[rows[j]]) j++
      if (j === count) aligned = { rows, table }
    }
    this.#alignedShards.set(i, aligned)
    return aligned
  }

  /**
   * Byte ranges of tensors in their shards (see SafetensorsFile's READ_RANGES), in order.
   * @param {{ name: string, start: number, length: number }[]} ranges @param {ReadOptions} options
   */
  async #readRanges(ranges, options) {
    /** @type {Map<number, number[]>} */
    const byShard = new Map()
    ranges.forEach((r, k) => {
      const i = this.#require(r.name)
      byShard.set(i, [...(byShard.get(i) ?? []), k])
    })
    /** @type {number[]} */
    const ptrs = new Array(ranges.length).fill(0)
    const core = await loadCoreOf()
    try {
      await Promise.all([...byShard].map(async ([i, ks]) => {
        const file = await this.#file(i, options.signal)
        const got = await file[READ_RANGES](ks.map((k) => ranges[k]), options)
        ks.forEach((k, j) => { ptrs[k] = got[j] })
      }))
    } catch (error) {
      for (const p of ptrs) if (p) heapFree(core, p)
      throw error
    }
    return ptrs
  }

  /** @param {string} name @param {ReadOptions} [options] @returns {Promise<Tensor>} */
  async tensor(name, options = {}) {
    const i = this.#require(name)
    const file = await this.#file(i, options.signal)
    this.#inShard(file, i, name)
    return file.tensor(name, options)
  }

  /**
   * Reads the slice from its shard: only the slice's bytes.
   * @param {string} name
   * @param {Parameters<SafetensorsFile['slice']>[1]} spec
   * @param {ReadOptions} [options]
   * @returns {Promise<Tensor>}
   */
  async slice(name, spec, options = {}) {
    const i = this.#require(name)
    const file = await this.#file(i, options.signal)
    this.#inShard(file, i, name)
    return file.slice(name, spec, options)
  }

  /**
   * A tensor's bytes piece by piece from its shard (see SafetensorsFile.chunks).
   * @param {string} name
   * @param {Parameters<SafetensorsFile['chunks']>[1]} [options]
   * @returns {AsyncGenerator<import('./io/stream.js').Chunk, void, undefined>}
   */
  async* chunks(name, options = {}) {
    const i = this.#require(name)
    const file = await this.#file(i, options.signal)
    this.#inShard(file, i, name)
    yield* file.chunks(name, options)
  }

  /**
   * SHA-256 of a tensor's bytes (each shard's own digest(): the whole shard file).
   * @param {string} name @param {import('./io/stream.js').ChunkOptions} [options]
   */
  async digest(name, options) {
    const { digest } = await import('./stream/digest.js')
    return digest(this, name, options)
  }

  /**
   * Tensor.stats of a tensor or a quantized weight, streamed (see SafetensorsFile.stats).
   * @param {string} name @param {import('./io/stream.js').ChunkOptions & { bins?: number, slice?: any }} [options]
   */
  async stats(name, options) {
    const { streamStats } = await import('./stream/stats.js')
    return streamStats(this, name, options)
  }

  /**
   * Uploads tensors to WebGPU (see SafetensorsFile.toGPU).
   * @param {any} device @param {Iterable<string>} names @param {Record<string, any>} [options]
   * @returns {Promise<Map<string, any>>}
   */
  async toGPU(device, names, options) {
    const { toGPU } = await import('./gpu/upload.js')
    return toGPU(this, device, names, options)
  }

  /**
   * Reads several tensors, grouped by shard. With `concurrency` c: up to c shards at once, the c
   * requests shared among them. On any failure every tensor already read is disposed.
   * @param {Iterable<string>} names
   * @param {ReadOptions} [options]
   * @returns {Promise<Map<string, Tensor>>}
   */
  async load(names, options = {}) {
    this.#open()
    const unique = [...new Set(names)]
    /** @type {Map<number, string[]>} */
    const groups = new Map()
    for (const name of unique) {
      const i = this.#require(name)
      const group = groups.get(i)
      if (group) group.push(name)
      else groups.set(i, [name])
    }
    const c = checkConcurrency(options.concurrency, this.#concurrency)
    // The headers first: tensors that cannot be in the heap together are refused before a read.
    await pool([...groups.keys()], c, options.signal, (i, signal) => this.#file(i, signal))
    let bytes = 0
    for (const [i, group] of groups) {
      const file = /** @type {SafetensorsFile} */ (this.#opened.get(i))
      for (const name of group) bytes += this.#inShard(file, i, name).byteLength
    }
    refuseOversize(bytes, unique.length)
    const perShard = Math.max(1, Math.floor(c / Math.min(c, Math.max(1, groups.size))))
    const loaded = new Map()
    const totals = new Map()
    const progress = () => options.onProgress?.({
      loaded: sum(loaded.values()), total: sum(totals.values()),
    })
    /** @type {Map<string, Tensor>} */
    const read = new Map()
    try {
      await pool([...groups.keys()], c, options.signal, async (i, signal) => {
        const file = await this.#file(i, signal)
        const group = /** @type {string[]} */ (groups.get(i))
        for (const name of group) this.#inShard(file, i, name)
        const map = await file.load(group, {
          ...options, signal, concurrency: perShard,
          onProgress: (p) => { loaded.set(i, p.loaded); totals.set(i, p.total); progress() },
        })
        for (const [name, t] of map) read.set(name, t)
      })
    } catch (error) {
      for (const t of read.values()) t.dispose()
      throw error
    }
    return new Map(unique.map((name) => [name, /** @type {Tensor} */ (read.get(name))]))
  }

  /** Closes every opened shard. Tensors already read stay valid. */
  async close() {
    if (this.#closed) return
    this.#closed = true
    const files = await Promise.allSettled([...this.#pending.values()])
    await Promise.all(files.map((r) => (r.status === 'fulfilled' ? r.value.close() : undefined)))
    this.#index.dispose()
    await this.#settled?.()
  }

  async [ASYNC_DISPOSE]() { await this.close() }
}

/** @param {Iterable<number>} values */
function sum(values) {
  let s = 0
  for (const v of values) s += v
  return s
}


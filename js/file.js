/**
 * SafetensorsFile: a parsed header over a byte source. Opening reads the 8-byte length and
 * the header (a remote source serves both from its first request); tensors are read only
 * when asked for, straight into the wasm heap.
 */
import { heapAlloc, heapFree, heapView, parseHeader, planSlice, readHeaderLength } from './core/index.js'
import { ASYNC_DISPOSE } from './dispose.js'
import { SafetensorsError, throwIfAborted } from './errors.js'
import { readTargets } from './io/reader.js'
import { checkPiece, readExactly } from './io/sources.js'
import { TensorTable } from './table.js'
import { Tensor } from './tensor.js'
import { loadCore } from './wasm.js'
import { DTYPE_BITS, arrayTypeOf } from './dtypes.js'

/** Internal: a file's part lookups for a sharded set's detection, and raw byte reads for dequantize. */
export const PARTS = Symbol('parts')
export const READ_RANGES = Symbol('readRanges')
/** Internal: the file's raw bytes streamed through two heap buffers (a whole-file digest). */
export const RAW_CHUNKS = Symbol('rawChunks')

/**
 * @typedef {import('./io/reader.js').ReadOptions} ReadOptions
 * @typedef {import('./io/sources.js').ByteSource} ByteSource
 * @typedef {import('./table.js').TensorInfo} TensorInfo
 */

/**
 * Parses the header of `source`.
 * @param {ByteSource} source
 * @param {{ signal?: AbortSignal, closeSource?: boolean, onProgress?: ReadOptions['onProgress'], quantization?: any }} [options]
 *   closeSource: the file closes the source when it is closed (the source was made by open);
 *   onProgress: the header's bytes as they arrive, counted from the file's start; quantization:
 *   the model's quantization_config or config.json (see quant/detect.js)
 */
export async function openSource(source, options = {}) {
  const core = await loadCore()
  const { signal } = options
  const quantization = options.quantization ?? null
  if (quantization !== null && (typeof quantization !== 'object' || Array.isArray(quantization)))
    throw new SafetensorsError('InvalidArgument', 'options.quantization is a quantization_config object or a whole config.json object')
  throwIfAborted(signal)
  const fileLength = source.byteLength
  const prefix = await readExactly(source, 0, Math.min(8, fileLength), { signal })
  const headerLength = readHeaderLength(core, prefix, fileLength)
  if (typeof headerLength !== 'number') throw await lengthError(source, headerLength, signal)
  const ptr = heapAlloc(core, headerLength)
  try {
    // A URL source has the first request's bytes (already reported) in hand: report only when
    // the header goes past them.
    const inHand = /** @type {{ cachedBytes?: number }} */ (source).cachedBytes ?? 0
    const onProgress = 8 + headerLength > inHand ? options.onProgress : undefined
    // The planning and the pool of readTargets serve a header past what is in hand; a header in
    // hand (or a source that only has `read`: bytes in memory, a Blob) is one read. (Hundreds of
    // shards opened at once under one signal would otherwise each hang a listener on it.)
    if ((source.stream || source.readInto) && 8 + headerLength > inHand) {
      await readTargets(core, source, [{ offset: 8, length: headerLength, ptr }], {
        signal, onProgress: onProgress && ((p) => onProgress({ loaded: 8 + p.loaded, total: 8 + p.total })),
      })
    } else {
      // In hand, the header goes to the heap piece by piece as the source keeps it (a view made
      // after each await: another file's open may grow the heap meanwhile).
      let got = 0
      if (source.stream) {
        for await (const piece of source.stream(8, headerLength, { signal })) {
          checkPiece(piece, 8 + got, headerLength - got)
          heapView(core, ptr + got, piece.length).set(piece)
          got += piece.length
        }
      } else {
        const header = await readExactly(source, 8, headerLength, { signal })
        got = header.length
        heapView(core, ptr, got).set(header)
      }
      throwIfAborted(signal)
      if (got !== headerLength)
        throw new SafetensorsError('ShortRead', `asked for ${headerLength} bytes at offset 8, the source gave ${got}`,
          { offset: 8 + got })
      onProgress?.({ loaded: 8 + headerLength, total: 8 + headerLength })
    }
    const table = new TensorTable(parseHeader(core, ptr, headerLength, fileLength), 8 + headerLength)
    // The detector loads only for a header that names a quantized weight's part.
    const detector = table.mentions(QUANT_MARKS) ? await import('./quant/detect.js') : null
    const small = detector ? await readShapeCarriers(core, source, table, detector, signal) : new Map()
    return new SafetensorsFile(core, source, table, headerLength, options.closeSource ?? false,
      { small, detector, quantization: detector?.quantConfig(quantization) })
  } finally {
    heapFree(core, ptr)
  }
}

/**
 * Name endings of the tensors that carry a quantized weight's shape, and with them those that
 * mark a quantized weight (quant/detect.js, anchorOf): one pattern, one scan of the names.
 */
const SHAPE_MARKS = /\.weight_shape|\.quant_state\.bitsandbytes__/
const QUANT_MARKS = /_scale_inv|\.weight_scale|_blocks|\.weight_packed|\.weight_scale_2|\.qweight|\.weight_shape|\.quant_state\.bitsandbytes__/

/** @typedef {typeof import('./quant/detect.js')} Detector */

/**
 * The small tensors that hold quantized weights' logical shapes (see quant/detect.js), read at
 * open so that quantized() and parameterCount() need no read.
 * @param {any} core @param {ByteSource} source @param {TensorTable} table @param {Detector} detector
 * @param {AbortSignal | undefined} signal
 * @returns {Promise<Map<string, Uint8Array>>}
 */
async function readShapeCarriers(core, source, table, detector, signal) {
  const small = new Map()
  if (!table.mentions(SHAPE_MARKS)) return small
  const names = detector.shapeCarriers(table.names, (name) => table.info(table.require(name)))
  const targets = names.map((name) => {
    const i = table.require(name)
    return { name, offset: table.byteOffset(i), length: table.byteLength(i), ptr: 0 }
  })
  try {
    for (const t of targets) t.ptr = heapAlloc(core, t.length)
    await readTargets(core, source, targets, { signal })
    for (const t of targets) small.set(t.name, heapView(core, t.ptr, t.length).slice())
  } finally {
    for (const t of targets) if (t.ptr) heapFree(core, t.ptr)
  }
  return small
}

/**
 * The core's verdict on a header length that cannot be right, or NotSafetensors when the first
 * bytes say what the file is instead (a page, an LFS pointer...). The sniffer loads only then,
 * out of a page's first download; where it cannot load, the verdict stands.
 * @param {ByteSource & { response?: { status: number, contentType: string | null } }} source
 * @param {SafetensorsError} verdict @param {AbortSignal | undefined} signal
 */
async function lengthError(source, verdict, signal) {
  const sniff = await import('./io/sniff.js').catch(() => null)
  if (!sniff) return verdict
  const head = await source.read(0, Math.min(sniff.SNIFF_BYTES, source.byteLength), { signal }).catch(() => null)
  return (head && sniff.notSafetensors(verdict, head, source.describe ?? 'the file', source.response)) ?? verdict
}

export class SafetensorsFile {
  #core
  #source
  #table
  #closeSource
  #closed = false
  #small
  #quantization
  #detector
  /** @type {import('./quant/detect.js').Detection | null} */
  #detection = null

  /**
   * @param {any} core
   * @param {ByteSource} source
   * @param {TensorTable} table
   * @param {number} headerLength
   * @param {boolean} closeSource
   * @param {{ small?: Map<string, Uint8Array>, detector?: Detector | null,
   *   quantization?: Record<string, any> | null }} [quant]
   *   small: the shape carriers' bytes (readShapeCarriers); detector: quant/detect.js when the
   *   header names quantized parts, else null; quantization: the model's config
   */
  constructor(core, source, table, headerLength, closeSource, quant = {}) {
    this.#small = quant.small ?? new Map()
    this.#detector = quant.detector ?? null
    this.#quantization = quant.quantization ?? null
    this.#core = core
    this.#source = source
    this.#table = table
    this.#closeSource = closeSource
    /** @readonly total file length in bytes */
    this.byteLength = source.byteLength
    /** @readonly N, the header's length in bytes (padding included) */
    this.headerLength = headerLength
  }

  /** @returns {Record<string, string> | null} */
  get metadata() { return this.#table.metadata }

  /** Tensor names in file (offset) order. */
  get names() { return this.#table.names.slice() }

  /** @param {string} name @returns {TensorInfo} */
  info(name) { return this.#table.info(this.#table.require(name)) }

  /** Whether the file holds a tensor `name` (nothing is read). @param {string} name */
  has(name) { return this.#table.indexOf(name) >= 0 }

  /**
   * As ShardedFile.shardOf, for code that takes either: a single file has no shards, so null
   * for a tensor it holds (TensorNotFound for one it does not).
   * @param {string} name @returns {null}
   */
  shardOf(name) {
    this.#table.require(name)
    return null
  }

  /**
   * Parameters: plain tensors by dtype; each quantized weight (see quantized()) once, by its
   * logical shape, under byScheme; the parts of quantized weights (scales, zeros...) count zero.
   * @returns {{ total: number, byDtype: Record<string, number>, byScheme: Record<string, number> }}
   */
  parameterCount() {
    if (!this.#detector) return plainCount(this.#table)
    return this.#detector.countParameters(this[PARTS](), this.#detect())
  }

  /**
   * The quantized weights, one entry each (logical name, scheme, logical shape, stored parts);
   * plain tensors are not listed. Throws the first inconsistency found (a missing part...).
   * @returns {import('./quant/detect.js').QuantizedWeight[]}
   */
  quantized() {
    const found = this.#detect()
    if (found.problems.length > 0) throw found.problems[0]
    return found.entries.map(copyEntry)
  }

  /**
   * A quantized weight's values as a float32 Tensor of its logical shape; `slice` is
   * [start, stop] over the leading dimension (docs/quantized.md: what each scheme reads).
   * @param {string} name a logical name from quantized()
   * @param {import('./quant/dequantize.js').DequantizeOptions} [options]
   * @returns {Promise<Tensor>}
   */
  async dequantize(name, options = {}) {
    this.#open()
    const entry = quantizedEntry(this.#detect(), name, (n) => this.#table.indexOf(n) >= 0)
    const { dequantize } = await import('./quant/dequantize.js')
    return dequantize({ core: this.#core, get: (n) => this.info(n), read: (r, o) => this[READ_RANGES](r, o) }, entry, options)
  }

  /** @returns {import('./quant/detect.js').Detection} */
  #detect() {
    this.#detection ??= this.#detector?.detect(this[PARTS](), this.#quantization)
      ?? { entries: [], problems: [], byName: new Map(), partNames: new Set() }
    return this.#detection
  }

  /** Internal (sharded sets, detection): names, part infos and the shape carriers' bytes. */
  [PARTS]() {
    const table = this.#table
    return {
      names: table.names,
      table,
      /** @param {string} name */
      get: (name) => {
        const i = table.indexOf(name)
        return i < 0 ? undefined : { dtype: table.dtype(i), shape: table.shape(i) }
      },
      /** @param {string} name */
      value: (name) => this.#small.get(name),
    }
  }

  /**
   * Internal (dequantize): byte ranges of tensors, each into its own heap allocation, which the
   * caller frees. On failure none is left allocated.
   * @param {{ name: string, start: number, length: number }[]} ranges
   * @param {ReadOptions} [options]
   * @returns {Promise<number[]>}
   */
  async [READ_RANGES](ranges, options = {}) {
    this.#open()
    const targets = []
    try {
      for (const { name, start, length } of ranges) {
        const i = this.#table.require(name)
        if (start < 0 || start + length > this.#table.byteLength(i))
          throw new SafetensorsError('InvalidArgument', `bytes ${start} to ${start + length} are outside ${JSON.stringify(name)}`, { tensor: name })
        targets.push({ offset: this.#table.byteOffset(i) + start, length, ptr: heapAlloc(this.#core, length) })
      }
      await readTargets(this.#core, this.#source, targets, options)
    } catch (error) {
      for (const { ptr } of targets) heapFree(this.#core, ptr)
      throw error
    }
    return targets.map((t) => t.ptr)
  }

  #open() {
    if (this.#closed) throw new SafetensorsError('Closed', 'the file was closed')
  }

  /**
   * Reads one tensor into the heap.
   * @param {string} name
   * @param {ReadOptions} [options]
   * @returns {Promise<Tensor>}
   */
  async tensor(name, options) {
    const map = await this.load([name], options)
    return /** @type {Tensor} */ (map.get(name))
  }

  /**
   * Reads several tensors; close ranges are fetched together.
   * @param {Iterable<string>} names
   * @param {ReadOptions} [options]
   * @returns {Promise<Map<string, Tensor>>}
   */
  async load(names, options = {}) {
    this.#open()
    const unique = [...new Set(names)]
    const indices = unique.map((n) => this.#table.require(n))
    refuseOversize(indices.reduce((sum, i) => sum + this.#table.byteLength(i), 0), indices.length)
    /** @type {{ ptr: number, index: number }[]} */
    const allocations = []
    try {
      for (const index of indices)
        allocations.push({ ptr: heapAlloc(this.#core, this.#table.byteLength(index)), index })
      const targets = allocations.map(({ ptr, index }) => ({
        offset: this.#table.byteOffset(index), length: this.#table.byteLength(index), ptr,
      }))
      await readTargets(this.#core, this.#source, targets, options)
    } catch (error) {
      for (const { ptr } of allocations) heapFree(this.#core, ptr)
      throw error
    }
    const result = new Map()
    for (const { ptr, index } of allocations) {
      const t = this.#table
      result.set(t.names[index], new Tensor(this.#core, ptr, t.names[index], t.dtype(index), t.shape(index), t.byteLength(index)))
    }
    return result
  }

  /**
   * Reads only the bytes of a slice: `spec` is a string like '0, 2:5' or an array like
   * [0, [2, 5]] (an integer drops the dimension, [start, stop] keeps it; null or a missing
   * bound means the dimension's start or end; negative values count from the end).
   * @param {string} name
   * @param {string | Array<number | bigint | [number | bigint | null, number | bigint | null] | null>} spec
   * @param {ReadOptions} [options]
   * @returns {Promise<Tensor>}
   */
  async slice(name, spec, options = {}) {
    this.#open()
    const index = this.#table.require(name)
    const plan = this.#planSlice(index, specText(spec, name))
    const ptr = heapAlloc(this.#core, plan.byteLength)
    try {
      const targets = []
      let at = ptr
      for (const [offset, length] of plan.ranges) {
        targets.push({ offset, length, ptr: at })
        at += length
      }
      await readTargets(this.#core, this.#source, targets, options)
    } catch (error) {
      heapFree(this.#core, ptr)
      throw error
    }
    return new Tensor(this.#core, ptr, name, this.#table.dtype(index), plan.shape, plan.byteLength)
  }

  /**
   * @param {number} index
   * @param {string} spec
   * @returns {{ shape: any[], byteLength: number, ranges: [number, number][] }}
   */
  #planSlice(index, spec) {
    const t = this.#table
    return planSlice(this.#core, t.names[index], t.dtype(index), t.shape(index), t.byteOffset(index), spec)
  }

  /**
   * The tensor's bytes (or a slice's, in C order) piece by piece through two heap buffers, so
   * that a tensor of any size streams through a bounded heap: `{ offset, data }` with `data` a
   * typed view into the heap (the class `t.data` has), valid until the next step, and `offset`
   * the byte offset of data[0]. Pieces hold whole elements (whole bytes for F4 and F6).
   * @param {string} name
   * @param {import('./io/stream.js').ChunkOptions & { slice?: Parameters<SafetensorsFile['slice']>[1] }} [options]
   * @returns {AsyncGenerator<import('./io/stream.js').Chunk, void, undefined>}
   */
  async* chunks(name, options = {}) {
    this.#open()
    const index = this.#table.require(name)
    const dtype = this.#table.dtype(index)
    /** @type {[number, number][]} */
    const ranges = options.slice === undefined ? [[this.#table.byteOffset(index), this.#table.byteLength(index)]]
      : this.#planSlice(index, specText(options.slice, name)).ranges
    const bits = DTYPE_BITS[dtype]
    const unit = bits % 8 === 0 ? bits / 8 : bits === 4 ? 1 : 3
    // Loaded on first use, as the other streaming paths are.
    const { streamRanges } = await import('./io/stream.js')
    yield* streamRanges(this.#core, this.#source, ranges, { unit, ctor: arrayTypeOf(dtype).ctor }, options)
  }

  /**
   * @param {number} start @param {number} length
   * @param {import('./io/stream.js').ChunkOptions} [options]
   */
  async* [RAW_CHUNKS](start, length, options = {}) {
    this.#open()
    if (!(start >= 0 && length >= 0 && start + length <= this.byteLength))
      throw new SafetensorsError('OutOfRange', `bytes ${start} to ${start + length} of a ${this.byteLength}-byte file`)
    const { streamRanges } = await import('./io/stream.js')
    yield* streamRanges(this.#core, this.#source, [[start, length]], { unit: 1, ctor: Uint8Array }, options)
  }

  /**
   * SHA-256 (lowercase hex) of a tensor's bytes, or with no name of the whole file (what the Hub
   * lists as its LFS oid), streamed through the core.
   * @param {string} [name]
   * @param {import('./io/stream.js').ChunkOptions} [options]
   * @returns {Promise<string>}
   */
  async digest(name, options) {
    const { digest } = await import('./stream/digest.js')
    return digest(this, name, options)
  }

  /**
   * Tensor.stats of a tensor (or a quantized weight's dequantized values), streamed: the tensor
   * is never whole in the heap.
   * @param {string} name
   * @param {import('./io/stream.js').ChunkOptions & { bins?: number, slice?: any }} [options]
   */
  async stats(name, options) {
    const { streamStats } = await import('./stream/stats.js')
    return streamStats(this, name, options)
  }

  /**
   * Uploads tensors to WebGPU buffers, each streamed through the heap into writeBuffer.
   * @param {any} device a GPUDevice
   * @param {Iterable<string>} names
   * @param {Record<string, any>} [options] dtype, usage, chunkBytes, signal, onProgress
   * @returns {Promise<Map<string, any>>}
   */
  async toGPU(device, names, options) {
    const { toGPU } = await import('./gpu/upload.js')
    return toGPU(this, device, names, options)
  }

  /**
   * The awkward array stored by awkward-array's ak.to_safetensors (metadata "form" and
   * "length", buffers "{form_key}-{attribute}"); see js/awkward/array.js. Checks the form against the
   * tensors and reads no data.
   * @returns {Promise<import('./awkward/array.js').AwkwardArray>}
   */
  async awkward() {
    this.#open()
    // Loaded on first use: a page that never opens an awkward file never downloads its reader.
    const { openAwkward } = await import('./awkward/array.js')
    return openAwkward(this)
  }

  /** Releases the source (a Node file handle, say). Tensors already read stay valid. */
  async close() {
    if (this.#closed) return
    this.#closed = true
    if (this.#closeSource) await this.#source.close?.()
  }

  async [ASYNC_DISPOSE]() { await this.close() }
}

/**
 * The slice as the core's text form. An array holds, per leading dimension, an index (a Number or
 * BigInt), a range [start, stop] (either may be null or omitted for the dimension's end) or null
 * for the whole dimension; anything else (a step, a third bound, a fraction) is InvalidSlice.
 * @param {string | Array<number | bigint | [number | bigint | null, number | bigint | null] | null>} spec
 * @param {string} tensor
 * @returns {string}
 */
function specText(spec, tensor) {
  if (typeof spec === 'string') return spec
  if (!Array.isArray(spec))
    throw new SafetensorsError('InvalidSlice', 'a slice is a string like "0, 2:5" or an array like [0, [2, 5]]', { tensor })
  /** @param {unknown} v @returns {string} */
  const describe = (v) => (typeof v === 'bigint' ? `${v}n` : Array.isArray(v) ? `[${v.map(describe).join(', ')}]`
    : typeof v === 'string' ? JSON.stringify(v) : String(v))
  /** @param {unknown} v */
  const integer = (v) => typeof v === 'bigint' || Number.isInteger(v)
  return spec.map((s, dim) => {
    if (s === null || s === undefined) return ':'
    if (integer(s)) return String(s)
    if (Array.isArray(s)) {
      const bound = (/** @type {unknown} */ v) => v === null || v === undefined || integer(v)
      if (s.length > 2) {
        throw new SafetensorsError('InvalidSlice', `slice element ${describe(s)} (dimension ${dim}) has ${s.length} ` +
          'numbers: a range is [start, stop]; steps are not supported', { tensor })
      }
      if (!bound(s[0]) || !bound(s[1])) {
        throw new SafetensorsError('InvalidSlice', `slice element ${describe(s)} (dimension ${dim}): the bounds of a ` +
          'range are integers or null', { tensor })
      }
      return `${s[0] ?? ''}:${s[1] ?? ''}`
    }
    throw new SafetensorsError('InvalidSlice', `slice element ${describe(s)} (dimension ${dim}) is not an integer, ` +
      '[start, stop] or null', { tensor })
  }).join(',')
}

/** @param {import('./quant/detect.js').QuantizedWeight} e a copy the caller may change */
export function copyEntry(e) {
  return { name: e.name, scheme: e.scheme, shape: e.shape.slice(), parts: { ...e.parts }, details: copyDetails(e.details) }
}

/**
 * A deep copy of an entry's details, JSON values all (numbers and strings, and what a config
 * gave). structuredClone costs several times more, which counts at hundreds of thousands of weights.
 * @param {any} value
 * @returns {any}
 */
function copyDetails(value) {
  if (Array.isArray(value)) return value.map(copyDetails)
  if (value === null || typeof value !== 'object') return value
  /** @type {Record<string, any>} */
  const out = {}
  for (const key of Object.keys(value)) out[key] = copyDetails(value[key])
  return out
}

/**
 * The detected weight by logical name; its problem, or NotQuantized.
 * @param {import('./quant/detect.js').Detection} found @param {string} name
 * @param {(name: string) => boolean} stored whether a tensor of that name is stored
 */
export function quantizedEntry(found, name, stored) {
  const entry = found.byName.get(name)
  if (entry instanceof SafetensorsError) throw entry
  if (entry) return entry
  const hint = stored(name) ? `it is a plain ${found.partNames.has(name) ? 'part of a quantized weight' : 'tensor'}: read it with tensor()`
    : 'no tensor or quantized weight has that name'
  throw new SafetensorsError('NotQuantized', `${JSON.stringify(name)} is not a quantized weight (${hint}); ` +
    `quantized() lists the ${found.entries.length} there are`, { tensor: name })
}

/** @param {TensorTable} table parameters when no tensor is part of a quantized weight */
function plainCount(table) {
  /** @type {Record<string, number>} */
  const byDtype = {}
  let total = 0
  for (let i = 0; i < table.count; i++) {
    const n = table.elementCount(i)
    const dtype = table.dtype(i)
    byDtype[dtype] = (byDtype[dtype] ?? 0) + n
    total += n
  }
  return { total, byDtype, byScheme: {} }
}

/** The most bytes read() can place in the heap at once: malloc serves what wasm32 addresses. */
const HEAP_LIMIT = 0xffff0000

/**
 * OutOfMemory, before any read, for tensors that cannot be in the heap together.
 * @param {number} bytes @param {number} count
 */
export function refuseOversize(bytes, count) {
  if (bytes <= HEAP_LIMIT) return
  throw new SafetensorsError('OutOfMemory', `${count} tensor${count === 1 ? '' : 's'} of ${bytes} bytes in all cannot ` +
    'be in the wasm heap at once (4 GiB at most): stream them with chunks(), stats() or toGPU(), or read slices')
}

/**
 * f.stats(name, options): Tensor.stats of a tensor of any size, streamed through f.chunks() into
 * the core's accumulator (st::StatsAccumulator), so that the tensor is never whole in the heap
 * (two chunks and, for 16-bit dtypes, a 512 KiB table at most). The result is Tensor.stats's
 * for the same bytes, bit for bit: the core gathers the pieces into the decode chunks
 * computeStats uses (8 KiB of decoded values) and merges them in the same order; chunkBytes is
 * rounded up to a multiple of 8 KiB so that every piece is summarised in place.
 *
 * The histogram needs min and max, known only at the end. Dtypes of at most 16 bits have every
 * code counted in a table during the one pass and the table binned at the end. Wider dtypes
 * (32 and 64 bits, C64) read the tensor twice: the second pass bins (onProgress's total counts
 * both passes; a tensor that fits one chunk is read once, and the second pass is skipped when
 * the histogram is already known: no finite values, all equal, or bins 0).
 *
 * A quantized weight (a logical name f.quantized() lists) is summarised by its dequantized
 * float32 values, read by ranges of rows with f.dequantize({ slice: [r0, r1] }), each piece
 * disposed before the next; the same two passes as float32 (two dequantizations of each piece,
 * unless the weight fits one). Compare with f.dequantize(name).stats().
 */
import { StatsStream, isHeapView } from '../core/index.js'
import { DTYPE_BITS, elementCount } from '../dtypes.js'
import { SafetensorsError, throwIfAborted } from '../errors.js'
import { loadCore } from '../wasm.js'

/** The core's decode chunk in bytes of input, or a multiple of it, for every dtype. */
const CORE_CHUNK_BYTES = 8192
const DEFAULT_CHUNK_BYTES = 4 << 20
/** GPTQ and AWQ read the whole packed weight for any range of rows: read them in large pieces. */
const WHOLE_READ_PIECE_ELEMENTS = 1 << 26

/**
 * @typedef {import('../core/index.js').Stats} Stats
 * @typedef {{ bins?: number, slice?: any, chunkBytes?: number, signal?: AbortSignal,
 *   onProgress?: (p: { loaded: number, total: number }) => void }} StreamStatsOptions
 */

/**
 * @param {any} file a SafetensorsFile or ShardedFile (only its public API is used)
 * @param {string} name a tensor, or a quantized weight's logical name
 * @param {StreamStatsOptions} [options]
 * @returns {Promise<Stats>}
 */
export async function streamStats(file, name, options = {}) {
  const bins = options.bins ?? 64
  if (!Number.isInteger(bins) || bins < 0 || bins > 1 << 20)
    throw new SafetensorsError('InvalidArgument', `bins must be an integer from 0 to 2^20, got ${bins}`)
  const requested = options.chunkBytes ?? DEFAULT_CHUNK_BYTES
  if (!Number.isInteger(requested) || requested <= 0)
    throw new SafetensorsError('InvalidArgument', `chunkBytes must be a positive integer, got ${requested}`)
  const chunkBytes = Math.ceil(requested / CORE_CHUNK_BYTES) * CORE_CHUNK_BYTES
  throwIfAborted(options.signal)
  const core = await loadCore()
  const weight = await quantizedWeight(file, name, options.signal)
  if (weight) return quantizedStats(core, file, weight, bins, chunkBytes, options)
  const info = await file.info(name)
  return tensorStats(core, file, info, bins, chunkBytes, options)
}

/**
 * The quantized weight named `name`, or null for a plain tensor. An inconsistent checkpoint
 * (quantized() throws) still has its plain tensors summarised.
 * @param {any} file @param {string} name @param {AbortSignal | undefined} signal
 */
async function quantizedWeight(file, name, signal) {
  if (typeof file.quantized !== 'function') return null
  try {
    const list = await file.quantized({ signal })
    return list.find((/** @type {any} */ q) => q.name === name) ?? null
  } catch (error) {
    if (error instanceof SafetensorsError && error.code === 'Aborted') throw error
    if (await isStored(file, name)) return null
    throw error
  }
}

/** @param {any} file @param {string} name */
async function isStored(file, name) {
  try {
    await file.info(name)
    return true
  } catch {
    return false
  }
}

/**
 * Heap address of a typed view, which chunks() and Tensor.data give into the heap.
 * @param {any} core @param {ArrayBufferView} view
 */
function addressOf(core, view) {
  if (!isHeapView(core, view)) throw new Error('internal: a piece that is not in the wasm heap')
  return view.byteOffset
}

/**
 * @param {any} core @param {any} file @param {{ name: string, dtype: string, shape: any[] }} info
 * @param {number} bins @param {number} chunkBytes @param {StreamStatsOptions} options
 * @returns {Promise<Stats>}
 */
async function tensorStats(core, file, info, bins, chunkBytes, options) {
  const { name, dtype } = info
  const bits = DTYPE_BITS[dtype]
  if (bits === 6)
    throw new SafetensorsError('UnsupportedDtype', `${dtype} values cannot be summarised`, { tensor: name })
  // F4: two elements a byte, but a whole tensor of an odd count ends on half a byte.
  const elementsOf = bits === 4 ? ((/** @type {number} */ bytes, /** @type {number} */ seen) =>
    Math.min(bytes * 2, elementCount(info.shape) - seen)) : ((/** @type {number} */ bytes) => (bytes * 8) / bits)
  const passes = bins > 0 && (bits > 16 || dtype === 'C64') ? 2 : 1
  const { signal, onProgress } = options
  const stream = new StatsStream(core, dtype, bins)
  try {
    let total = 0
    /** @param {number} pass */
    const progress = (pass) => (/** @type {{ loaded: number, total: number }} */ p) => {
      total = p.total
      // A tensor within one chunk is read once.
      const n = p.total <= chunkBytes ? 1 : passes
      onProgress?.({ loaded: pass * p.total + p.loaded, total: n * p.total })
    }
    const read = { chunkBytes, signal, ...(options.slice === undefined ? {} : { slice: options.slice }) }
    let seen = 0
    /** @type {{ stats: Stats, complete: boolean } | null} */
    let done = null
    for await (const { data } of file.chunks(name, { ...read, onProgress: progress(0) })) {
      const elements = elementsOf(data.byteLength, seen)
      // The address, not the view: finish() allocates, which may grow the heap and detach views.
      const ptr = addressOf(core, data)
      stream.add(ptr, elements)
      seen += elements
      if (data.byteLength === total) {
        // The whole tensor in one piece: both passes over it while it is here.
        done = stream.finish()
        if (!done.complete) {
          stream.addHistogram(ptr, elements)
          done = { stats: stream.finishHistogram(), complete: true }
        }
      }
    }
    done ??= stream.finish()
    if (!done.complete) {
      seen = 0
      for await (const { data } of file.chunks(name, { ...read, onProgress: progress(1) })) {
        const elements = elementsOf(data.byteLength, seen)
        stream.addHistogram(addressOf(core, data), elements)
        seen += elements
      }
      return stream.finishHistogram()
    }
    if (passes === 2 && total > chunkBytes) onProgress?.({ loaded: 2 * total, total: 2 * total })
    return done.stats
  } finally {
    stream.dispose()
  }
}

/**
 * @param {any} core @param {any} file @param {{ name: string, scheme: string, shape: number[] }} q
 * @param {number} bins @param {number} chunkBytes @param {StreamStatsOptions} options
 * @returns {Promise<Stats>}
 */
async function quantizedStats(core, file, q, bins, chunkBytes, options) {
  const { signal, onProgress } = options
  const pieces = rowPieces(q, options.slice, chunkBytes)
  const stream = new StatsStream(core, 'F32', bins)
  try {
    const perRow = q.shape.length === 0 ? 1 : elementCount(q.shape.slice(1))
    const outputBytes = pieces.reduce((n, p) => n + 4 * (p ? (p[1] - p[0]) * perRow : elementCount(q.shape)), 0)
    const passes = bins > 0 && pieces.length > 1 ? 2 : 1
    let loaded = 0
    /** @param {boolean} histogram */
    const pass = async (histogram) => {
      for (const slice of pieces) {
        throwIfAborted(signal)
        const t = await file.dequantize(q.name, slice === undefined ? { signal } : { signal, slice })
        try {
          const data = t.data
          const ptr = addressOf(core, data)
          const n = data.length
          if (histogram) stream.addHistogram(ptr, n)
          else stream.add(ptr, n)
          if (!histogram && pieces.length === 1) {
            const first = stream.finish()
            if (first.complete) return first.stats
            stream.addHistogram(ptr, n)
            return stream.finishHistogram()
          }
          loaded += n * 4
          onProgress?.({ loaded, total: passes * outputBytes })
        } finally {
          t.dispose()
        }
      }
      return null
    }
    const single = await pass(false)
    if (single) {
      onProgress?.({ loaded: outputBytes, total: outputBytes })
      return single
    }
    const first = stream.finish()
    if (first.complete) {
      onProgress?.({ loaded: passes * outputBytes, total: passes * outputBytes })
      return first.stats
    }
    await pass(true)
    return stream.finishHistogram()
  } finally {
    stream.dispose()
  }
}

/**
 * The ranges of leading rows f.dequantize reads, one piece at a time: whole rows, about
 * chunkBytes of float32 each (at least one row), `undefined` for the whole weight in one.
 * @param {{ name: string, scheme: string, shape: number[] }} q
 * @param {any} slice [start, stop] (dequantize's form, null or negatives allowed) or 'start:stop'
 * @param {number} chunkBytes
 * @returns {Array<[number, number] | undefined>}
 */
function rowPieces(q, slice, chunkBytes) {
  const maxElements = q.scheme === 'gptq' || q.scheme === 'awq' ? Math.max(chunkBytes / 4, WHOLE_READ_PIECE_ELEMENTS)
    : chunkBytes / 4
  const range = rowRange(q, slice)
  if (q.shape.length === 0) return [undefined]
  const perRow = Math.max(1, elementCount(q.shape.slice(1)))
  const [start, stop] = range ?? [0, q.shape[0]]
  if (!range && q.shape[0] * perRow <= maxElements) return [undefined]
  const rows = Math.max(1, Math.floor(maxElements / perRow))
  /** @type {Array<[number, number]>} */
  const out = []
  for (let r = start; r < stop; r += rows) out.push([r, Math.min(stop, r + rows)])
  return out
}

/**
 * @param {{ name: string, shape: number[] }} q @param {any} slice
 * @returns {[number, number] | null} null: every row
 */
function rowRange(q, slice) {
  if (slice === undefined || slice === null) return null
  const tensor = q.name
  let pair = slice
  if (typeof slice === 'string') {
    const m = /^\s*(-?\d+)?\s*:\s*(-?\d+)?\s*$/.exec(slice)
    if (!m) {
      throw new SafetensorsError('InvalidSlice', `the slice ${JSON.stringify(slice)} of the quantized weight ` +
        `${JSON.stringify(tensor)}: give a range of its leading rows, 'start:stop' or [start, stop]`, { tensor })
    }
    pair = [m[1] === undefined ? null : Number(m[1]), m[2] === undefined ? null : Number(m[2])]
  }
  const bound = (/** @type {unknown} */ v) => v === null || v === undefined || Number.isInteger(v)
  if (!Array.isArray(pair) || pair.length > 2 || !bound(pair[0]) || !bound(pair[1])) {
    throw new SafetensorsError('InvalidSlice', `the slice of a quantized weight is [start, stop] over its leading ` +
      `dimension (integers or null), got ${JSON.stringify(slice)}`, { tensor })
  }
  if (q.shape.length === 0) throw new SafetensorsError('TooManySlices', 'a scalar weight has no rows to slice', { tensor })
  const rows = q.shape[0]
  const at = (/** @type {any} */ v, /** @type {number} */ fallback) => (v === null || v === undefined ? fallback : v < 0 ? v + rows : v)
  const start = at(pair[0], 0)
  const stop = at(pair[1], rows)
  if (start < 0 || stop > rows || start > stop) {
    throw new SafetensorsError('SliceOutOfRange', `rows ${JSON.stringify(slice)} of ${JSON.stringify(tensor)}: the leading ` +
      `dimension has ${rows} rows (from ${-rows} to ${rows}, start before stop)`, { tensor })
  }
  return [start, stop]
}

/**
 * What the CLI does with quantized weights beyond listing them: reading a weight's dequantized
 * values in bounded pieces (f.dequantize with `slice`, a range of rows of the leading logical
 * dimension), and the statistics of those values (`stats` of a logical name).
 */
import { SafetensorsError } from '../node.js'
import { elementCount } from '../dtypes.js'

/**
 * @typedef {import('../overview.js').QuantizedWeight} QuantizedWeight
 * @typedef {import('../node.js').SafetensorsFile | import('../node.js').ShardedFile} AnyFile
 * @typedef {import('../index.js').Stats} Stats
 * @typedef {import('../node.js').Tensor} Tensor
 */

/** Float32 values per dequantize call: 16 MiB of output. */
export const CHUNK_ELEMENTS = 1 << 22

/**
 * GPTQ and AWQ store [in, out]: a range of output rows still reads the whole packed weight, so
 * they are read in pieces only when much larger (256 MiB of float32 per piece).
 */
const WHOLE_READ_CHUNK_ELEMENTS = 1 << 26

/** Elements of one row of the leading logical dimension (a scalar: 1). @param {number[]} shape */
function rowElements(shape) {
  return shape.length === 0 ? 1 : elementCount(shape.slice(1))
}

/**
 * `start:stop` (either may be left out, negative counts from the end, as Python) over a
 * dimension of `length`, clamped; or a single index `i` (its row, the dimension kept). What
 * --slice means for a quantized weight, which f.dequantize reads by ranges of its leading
 * logical dimension.
 * @param {string} spec
 * @param {number} length
 * @param {string} name for the error
 * @returns {[number, number]}
 */
export function leadingRange(spec, length, name) {
  const m = /^\s*(-?\d+)?\s*(:\s*(-?\d+)?\s*)?(,\s*:?\s*)*$/.exec(spec)
  if (!m || (m[1] === undefined && m[2] === undefined)) {
    throw new SafetensorsError('InvalidSlice', `--slice ${JSON.stringify(spec)} of the quantized weight ${JSON.stringify(name)}: ` +
      'a quantized weight is read by rows of its leading dimension: give START:STOP (or one row, I)', { tensor: name })
  }
  /** @param {string | undefined} text @param {number} otherwise */
  const at = (text, otherwise) => {
    if (text === undefined) return otherwise
    const n = Number(text)
    return Math.min(length, Math.max(0, n < 0 ? length + n : n))
  }
  if (m[2] === undefined) {
    const n = Number(m[1])
    const i = n < 0 ? length + n : n
    if (i < 0 || i >= length)
      throw new SafetensorsError('InvalidSlice', `row ${n} of ${JSON.stringify(name)}, whose leading dimension is ${length}`, { tensor: name })
    return [i, i + 1]
  }
  const start = at(m[1], 0)
  return [start, Math.max(start, at(m[3], length))]
}

/**
 * The pieces f.dequantize reads for rows [start, stop) of the leading logical dimension: whole
 * rows, at most `maxElements` values each (at least one row), one piece for the whole weight
 * when it fits. Each is `undefined` (no slice: the whole weight) or a [start, stop] range.
 * @param {QuantizedWeight} q
 * @param {{ range?: [number, number], maxElements?: number }} [options]
 * @returns {Array<[number, number] | undefined>}
 */
export function pieces(q, options = {}) {
  const whole = q.scheme === 'gptq' || q.scheme === 'awq'
  const maxElements = options.maxElements ?? (whole ? WHOLE_READ_CHUNK_ELEMENTS : CHUNK_ELEMENTS)
  if (q.shape.length === 0) return [undefined]
  const lead = q.shape[0]
  const [start, stop] = options.range ?? [0, lead]
  const perRow = rowElements(q.shape)
  if (!options.range && lead * perRow <= maxElements) return [undefined]
  const rows = Math.max(1, Math.floor(maxElements / Math.max(1, perRow)))
  /** @type {Array<[number, number]>} */
  const out = []
  for (let r = start; r < stop; r += rows) out.push([r, Math.min(stop, r + rows)])
  if (out.length === 0) out.push([start, start])
  return out
}

/**
 * The dequantized values of rows [start, stop) (default: all) as float32 tensors, piece by
 * piece; the caller disposes each before asking for the next (only one is in the heap at once).
 * @param {AnyFile} f
 * @param {QuantizedWeight} q
 * @param {{ range?: [number, number], maxElements?: number, signal?: AbortSignal,
 *   onProgress?: (p: { loaded: number, total: number }) => void }} [options]
 * @returns {AsyncGenerator<Tensor, void, void>}
 */
export async function* dequantizedPieces(f, q, options = {}) {
  for (const slice of pieces(q, options)) {
    const read = { signal: options.signal, onProgress: options.onProgress }
    yield await f.dequantize(q.name, slice === undefined ? read : { ...read, slice })
  }
}

/**
 * Statistics of the dequantized values of a weight (rows `range` of its leading dimension, else
 * all), as Tensor.stats gives them. A weight that fits one piece is read once and summarised by
 * Tensor.stats itself. A larger one is read twice, piece by piece: first the counts, min, max,
 * mean and std (pieces merged with Chan et al.'s formula, so mean and std can differ from a
 * whole-tensor summary in the last bits), then the histogram over the whole range, binned as
 * the core bins (src/stats.cpp: the same bin of every value).
 * @param {AnyFile} f
 * @param {QuantizedWeight} q
 * @param {{ bins: number, range?: [number, number], maxElements?: number, signal?: AbortSignal,
 *   onProgress?: (p: { loaded: number, total: number }) => void }} options
 * @returns {Promise<Stats & { shape: number[] }>}
 */
export async function dequantizedStats(f, q, options) {
  const { bins } = options
  const list = pieces(q, options)
  const shape = options.range ? [options.range[1] - options.range[0], ...q.shape.slice(1)] : q.shape.slice()
  if (list.length === 1) {
    const t = await f.dequantize(q.name, { signal: options.signal, onProgress: options.onProgress, ...(list[0] ? { slice: list[0] } : {}) })
    try {
      return { ...t.stats({ bins }), shape: t.shape.map(Number) }
    } finally {
      t.dispose()
    }
  }
  let done = 0
  const progress = () => options.onProgress?.({ loaded: done, total: list.length * (bins > 0 ? 2 : 1) })
  const s = { count: 0, finiteCount: 0, nanCount: 0, infCount: 0, zeroCount: 0, min: Infinity, max: -Infinity, mean: 0, m2: 0 }
  for await (const t of dequantizedPieces(f, q, { ...options, onProgress: undefined })) {
    try {
      const p = t.stats({ bins: 0 })
      s.count += p.count
      s.nanCount += p.nanCount
      s.infCount += p.infCount
      s.zeroCount += p.zeroCount
      if (p.finiteCount > 0) {
        const nA = s.finiteCount
        const nB = p.finiteCount
        const delta = p.mean - s.mean
        s.finiteCount += nB
        s.mean += delta * (nB / s.finiteCount)
        s.m2 += p.std * p.std * nB + delta * (delta * ((nA * nB) / s.finiteCount))
        s.min = Math.min(s.min, p.min)
        s.max = Math.max(s.max, p.max)
      }
    } finally {
      t.dispose()
    }
    done++
    progress()
  }
  const counts = new Array(bins).fill(0)
  const none = s.finiteCount === 0
  const result = {
    count: s.count, finiteCount: s.finiteCount, nanCount: s.nanCount, infCount: s.infCount, zeroCount: s.zeroCount,
    min: none ? NaN : s.min, max: none ? NaN : s.max, mean: none ? NaN : s.mean, std: none ? NaN : Math.sqrt(s.m2 / s.finiteCount),
    histogram: { min: none ? NaN : s.min, max: none ? NaN : s.max, counts }, shape,
  }
  if (bins === 0 || none) return result
  if (s.min === s.max) {
    counts[bins - 1] = s.finiteCount
    return result
  }
  // src/stats.cpp's binning: bin = min(bins - 1, floor((v - min) * (bins / (max - min)))), in
  // double (float32 values never need its power-of-two rescaling: their spread is within 2^±600).
  const perBin = bins / (s.max - s.min)
  const last = bins - 1
  for await (const t of dequantizedPieces(f, q, { ...options, onProgress: undefined })) {
    try {
      const v = /** @type {Float32Array} */ (t.data)
      for (let i = 0; i < v.length; i++) {
        const x = v[i]
        if (x - x !== 0) continue  // NaN and infinities
        const k = Math.floor((x - s.min) * perBin)
        counts[k < last ? k : last]++
      }
    } finally {
      t.dispose()
    }
    done++
    progress()
  }
  return result
}

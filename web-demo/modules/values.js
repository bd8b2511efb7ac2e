/**
 * Working with a loaded tensor's values in the page: what of a selection the heatmap and values
 * show (a leading block of a large one), the 2-D plane a heatmap shows, and the first values as text.
 */
import { elementCount, formatValue } from './format.js'

/** Selections larger than this are never read whole: their statistics are streamed, their
 * heatmap and values show a leading block. */
export const LARGE_TENSOR = 16 * 1024 * 1024
/** The leading block: up to 256 x 256 of the last two dimensions (about 1 MiB along one). */
const BLOCK = 256
const BLOCK_BYTES_1D = 1024 * 1024

const INTEGER_DTYPES = new Set(['U8', 'I8', 'U16', 'I16', 'U32', 'I32', 'U64', 'I64', 'BOOL'])

/** @param {string} dtype */
export function isInteger(dtype) {
  return INTEGER_DTYPES.has(dtype)
}

/**
 * @typedef {{ shape: number[], byteLength: number, preview: string | null }} Selection
 *   shape and byteLength: of the selection (a quantized weight's: of its float32 values);
 *   preview: what the heatmap and values show of it when it is over LARGE_TENSOR bytes, as a
 *   slice spec of the tensor (null: the selection itself)
 */

/**
 * A tensor's selection (the slice `spec`, '' for all of it) and, past LARGE_TENSOR bytes, its
 * leading block: index `start` of every kept dimension but the last two, and the first 256
 * entries of those (a 1-D selection: its first MiB, in a multiple of 4 elements so that sub-byte
 * dtypes stay aligned). Null when `spec` is not an index or start:stop per leading dimension
 * within the shape: the library then says what is wrong with it.
 * @param {string} spec @param {Array<number | bigint>} shape @param {number} bits per element
 * @returns {Selection | null}
 */
export function plainSelection(spec, shape, bits) {
  const dims = shape.map(Number)
  const items = resolveSpec(spec, dims)
  if (!items) return null
  /** @type {number[]} */
  const kept = []
  items.forEach((item, i) => { if (Array.isArray(item)) kept.push(i) })
  const selected = kept.map((i) => /** @type {[number, number]} */ (items[i])[1] - /** @type {[number, number]} */ (items[i])[0])
  const byteLength = Math.ceil((elementCount(selected) * bits) / 8)
  if (byteLength <= LARGE_TENSOR || kept.length === 0) return { shape: selected, byteLength, preview: null }
  const block = items.slice()
  const narrow = (/** @type {number} */ i, /** @type {number} */ n) => {
    const [start, stop] = /** @type {[number, number]} */ (items[i])
    block[i] = [start, Math.min(stop, start + n)]
  }
  if (kept.length === 1) {
    const n = Math.max(4, Math.floor((BLOCK_BYTES_1D * 8) / bits))
    narrow(kept[0], n - (n % 4))
  } else {
    kept.slice(0, -2).forEach((i) => { block[i] = /** @type {[number, number]} */ (items[i])[0] })
    kept.slice(-2).forEach((i) => narrow(i, BLOCK))
  }
  return { shape: selected, byteLength, preview: block.map((b) => (Array.isArray(b) ? `${b[0]}:${b[1]}` : String(b))).join(', ') }
}

/**
 * `spec` resolved against `dims`: per dimension an index or a [start, stop) range, missing
 * trailing dimensions whole; null when it is not of that form or out of range.
 * @param {string} spec @param {number[]} dims
 * @returns {Array<number | [number, number]> | null}
 */
function resolveSpec(spec, dims) {
  const parts = spec.trim() === '' ? [] : spec.split(',').map((p) => p.trim())
  if (parts.length > dims.length) return null
  /** @type {Array<number | [number, number]>} */
  const items = []
  for (let i = 0; i < dims.length; i++) {
    const d = dims[i]
    const part = parts[i]
    const at = (/** @type {string | undefined} */ t, /** @type {number} */ fallback) => (t === undefined ? fallback : Number(t) < 0 ? Number(t) + d : Number(t))
    if (part === undefined) {
      items.push([0, d])
    } else if (/^-?\d+$/.test(part)) {
      const index = at(part, 0)
      if (index < 0 || index >= d) return null
      items.push(index)
    } else {
      const range = /^(-?\d+)?\s*:\s*(-?\d+)?$/.exec(part)
      if (!range) return null
      const start = at(range[1], 0)
      const stop = at(range[2], d)
      if (start < 0 || stop > d || start > stop) return null
      items.push([start, stop])
    }
  }
  return items
}

/** A quantized weight's float32 rows the heatmap and values show when the selection exceeds LARGE_TENSOR. */
const QUANT_ROWS = 256

/**
 * A quantized weight's selection (leading rows `spec`, '' for all of it: dequantize slices the
 * first dimension only) and, when its float32 values exceed LARGE_TENSOR bytes, its leading
 * rows: up to QUANT_ROWS of them and LARGE_TENSOR bytes, at least one. Null when `spec` is not
 * such a range within the weight (dequantize then says why).
 * @param {string} spec @param {number[]} shape the logical shape
 * @returns {Selection | null}
 */
export function quantSelection(spec, shape) {
  if (shape.length === 0) return spec.trim() === '' ? { shape: [], byteLength: 4, preview: null } : null
  const range = quantSlice(spec, shape[0])
  if (range === 'invalid') return null
  const [start, stop] = range ?? [0, shape[0]]
  if (start < 0 || stop > shape[0] || start > stop) return null
  const perRow = elementCount(shape.slice(1))
  const selected = [stop - start, ...shape.slice(1)]
  const byteLength = (stop - start) * perRow * 4
  if (byteLength <= LARGE_TENSOR) return { shape: selected, byteLength, preview: null }
  const rows = Math.max(1, Math.min(stop - start, QUANT_ROWS, Math.floor(LARGE_TENSOR / (perRow * 4))))
  return { shape: selected, byteLength, preview: `${start}:${start + rows}` }
}

/**
 * The slice of a quantized weight's first dimension as dequantize takes it: [start, stop], null
 * for all of it, 'invalid' for anything else than `start:stop` (either may be left out or
 * negative) or one index, optionally followed by `, :` for the other dimensions.
 * @param {string} spec @param {number} length the first dimension
 * @returns {[number, number] | null | 'invalid'}
 */
export function quantSlice(spec, length) {
  const [first, ...rest] = spec.split(',').map((p) => p.trim())
  if (first === '' && rest.length === 0) return null
  if (rest.some((p) => p !== ':')) return 'invalid'
  const at = (/** @type {string} */ t) => (Number(t) < 0 ? Number(t) + length : Number(t))
  const range = /^(-?\d+)?\s*:\s*(-?\d+)?$/.exec(first)
  if (range) return [range[1] === undefined ? 0 : at(range[1]), range[2] === undefined ? length : at(range[2])]
  if (/^-?\d+$/.test(first)) return [at(first), at(first) + 1]
  return 'invalid'
}

/**
 * The plane at `index` (one index per dimension before the last two) of row-major values, as
 * floats; C64 planes are magnitudes |re + im i|.
 * @param {Float32Array} values
 * @param {number[]} shape
 * @param {number[]} index
 * @param {boolean} complex
 * @returns {{ values: Float32Array, rows: number, cols: number, offset: number } | null}
 */
export function planeOf(values, shape, index, complex) {
  if (shape.length < 2) return null
  const rows = shape[shape.length - 2]
  const cols = shape[shape.length - 1]
  const offset = planeOffset(shape, index)
  if (!complex) return { values: values.subarray(offset, offset + rows * cols), rows, cols, offset }
  const out = new Float32Array(rows * cols)
  for (let j = 0; j < out.length; j++) out[j] = Math.hypot(values[2 * (offset + j)], values[2 * (offset + j) + 1])
  return { values: out, rows, cols, offset }
}

/**
 * The row-major element index where the plane at `index` starts.
 * @param {number[]} shape @param {number[]} index one per dimension before the last two
 */
export function planeOffset(shape, index) {
  let offset = 0
  let stride = shape.length >= 2 ? shape[shape.length - 2] * shape[shape.length - 1] : 1
  for (let i = shape.length - 3; i >= 0; i--) {
    offset += (index[i] ?? 0) * stride
    stride *= shape[i]
  }
  return offset
}

/**
 * The text of element `i` (row-major): exact for integers (from the raw typed array), decoded
 * floats otherwise, `re ± im i` for C64.
 * @param {{ dtype: string, floats: Float32Array | null, exact: ArrayLike<number | bigint> | null, raw: Uint8Array | null }} data
 * @param {number} i
 * @returns {{ text: string, full: string }}
 */
export function valueText(data, i) {
  if (data.exact) {
    const v = data.exact[i]
    const text = data.dtype === 'BOOL' ? (v ? 'true' : 'false') : String(v)
    return { text, full: text }
  }
  if (data.floats) {
    if (data.dtype === 'C64') {
      const re = data.floats[2 * i]
      const im = data.floats[2 * i + 1]
      const text = `${formatValue(re)} ${im < 0 || Object.is(im, -0) ? '−' : '+'} ${formatValue(Math.abs(im))}i`
      return { text, full: `${re} ${im < 0 ? '-' : '+'} ${Math.abs(im)}i` }
    }
    const v = data.floats[i]
    return { text: formatValue(v), full: String(v) }
  }
  const b = data.raw?.[i] ?? 0
  const hex = `0x${b.toString(16).padStart(2, '0')}`
  return { text: hex, full: `byte ${hex}` }
}

/**
 * Working with a loaded tensor's values in the page: the slice to fetch by default for a large
 * tensor, the 2-D plane a heatmap shows, and the first values as text.
 */
import { elementCount, formatValue } from './format.js'

/** Tensors larger than this are not fetched whole by default: a leading block is. */
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
 * The slice prefilled for a tensor: '' (all of it) up to LARGE_TENSOR bytes; past that a small
 * leading block: index 0 of every dimension but the last two, and their first 256 entries (a
 * 1-D tensor: its first MiB, in a multiple of 4 elements so that sub-byte dtypes stay aligned).
 * @param {Array<number | bigint>} shape
 * @param {number} byteLength
 */
export function defaultSlice(shape, byteLength) {
  if (byteLength <= LARGE_TENSOR || shape.length === 0) return ''
  const dims = shape.map(Number)
  if (dims.length === 1) {
    const bits = (byteLength * 8) / elementCount(shape)
    const n = Math.max(4, Math.floor((BLOCK_BYTES_1D * 8) / bits))
    return `0:${Math.min(dims[0], n - (n % 4))}`
  }
  return dims.map((d, i) => (i < dims.length - 2 ? '0' : `0:${Math.min(d, BLOCK)}`)).join(', ')
}

/** A quantized weight's float32 rows read by default when the whole would exceed LARGE_TENSOR. */
const QUANT_ROWS = 256

/**
 * The slice prefilled for a quantized weight: '' (all of it) when its float32 form is at most
 * LARGE_TENSOR bytes; past that its leading rows (dequantize slices the first dimension only):
 * up to QUANT_ROWS of them and LARGE_TENSOR bytes of float32, at least one.
 * @param {number[]} shape the logical shape
 */
export function quantDefaultSlice(shape) {
  const elements = shape.reduce((a, b) => a * b, 1)
  if (shape.length === 0 || elements * 4 <= LARGE_TENSOR) return ''
  const perRow = elements / shape[0]
  const rows = Math.max(1, Math.min(shape[0], QUANT_ROWS, Math.floor(LARGE_TENSOR / (perRow * 4))))
  return `0:${rows}`
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

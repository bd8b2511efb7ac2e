/**
 * A tensor's values as files to download: numpy's .npy (format version 1.0) and JSON. Pure
 * functions of the values, no DOM, so that Node tests them too (tests/js/npy-export.test.js).
 *
 * .npy keeps the stored dtype where numpy has it (the bytes as they are: safetensors is
 * little-endian, as the descr says) and float32 otherwise (BF16, F8_*, F4: decoded by the
 * library's toFloat32). JSON holds the values as nested arrays in the tensor's shape; numbers
 * JSON cannot write (NaN, Infinity, -Infinity) are the strings "NaN", "Infinity", "-Infinity",
 * and 64-bit integers are written digit for digit (a reader that parses numbers as doubles rounds
 * those past 2^53, Python's json does not).
 */

/** numpy's descr for the dtypes it has; the others are exported as float32. */
const NUMPY_DESCR = /** @type {Record<string, string>} */ ({
  BOOL: '|b1', U8: '|u1', I8: '|i1', I16: '<i2', U16: '<u2', F16: '<f2', I32: '<i4', U32: '<u4',
  F32: '<f4', F64: '<f8', I64: '<i8', U64: '<u8', C64: '<c8',
})

/** The .npy magic string and the size the header (magic included) is padded to a multiple of. */
const MAGIC = [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59]
const ALIGN = 64

/**
 * Whether numpy has the dtype: its bytes are exported as they are; otherwise as float32.
 * @param {string} dtype
 */
export function numpyHas(dtype) {
  return dtype in NUMPY_DESCR
}

/**
 * The descr of an export of `dtype`: its own, or '<f4' for the dtypes numpy lacks.
 * @param {string} dtype
 */
export function npyDescr(dtype) {
  return NUMPY_DESCR[dtype] ?? '<f4'
}

/**
 * The .npy header dict as numpy writes it, e.g. `{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }`.
 * @param {string} descr @param {ArrayLike<number | bigint>} shape
 */
export function npyHeaderDict(descr, shape) {
  const dims = Array.from(shape, String)
  const tuple = dims.length === 1 ? `(${dims[0]},)` : `(${dims.join(', ')})`
  return `{'descr': '${descr}', 'fortran_order': False, 'shape': ${tuple}, }`
}

/**
 * A whole .npy file. `data` is the values in C order: for a dtype numpy has, its stored bytes
 * (little-endian); for the others, their float32 values (Tensor.toFloat32()).
 * @param {{ dtype: string, shape: ArrayLike<number | bigint>, data: ArrayBufferView }} tensor
 * @returns {Uint8Array<ArrayBuffer>}
 */
export function npyBytes(tensor) {
  const descr = npyDescr(tensor.dtype)
  if (!numpyHas(tensor.dtype) && !(tensor.data instanceof Float32Array))
    throw new TypeError(`${tensor.dtype} is exported as float32: pass its toFloat32() values`)
  const dict = npyHeaderDict(descr, tensor.shape)
  // Version 1.0 counts the header in 2 bytes; a header past that (a rank in the thousands) takes 2.0's 4.
  const v1 = MAGIC.length + 2 + 2 + dict.length + 1 <= 0xffff
  const lead = MAGIC.length + 2 + (v1 ? 2 : 4)
  const headerLength = Math.ceil((lead + dict.length + 1) / ALIGN) * ALIGN - lead
  const data = new Uint8Array(tensor.data.buffer, tensor.data.byteOffset, tensor.data.byteLength)
  const out = new Uint8Array(lead + headerLength + data.length)
  out.set(MAGIC, 0)
  out[6] = v1 ? 1 : 2
  out[7] = 0
  const view = new DataView(out.buffer)
  if (v1) view.setUint16(8, headerLength, true)
  else view.setUint32(8, headerLength, true)
  const text = dict + ' '.repeat(headerLength - dict.length - 1) + '\n'
  for (let i = 0; i < text.length; i++) out[lead + i] = text.charCodeAt(i)  // the dict is ASCII
  out.set(data, lead + headerLength)
  return out
}

/**
 * A float32 value as the shortest decimal that reads back as the same float32 (0.1, not
 * 0.10000000149011612); NaN and the infinities as strings.
 * @param {number} x
 */
export function float32Text(x) {
  if (!Number.isFinite(x)) return nonFinite(x)
  if (x === 0) return Object.is(x, -0) ? '-0' : '0'
  for (let digits = 1; digits < 9; digits++) {
    const n = Number(x.toPrecision(digits))
    if (Math.fround(n) === x) return String(n)
  }
  return String(Number(x.toPrecision(9)))
}

/** @param {number} x a float64 */
function float64Text(x) {
  if (!Number.isFinite(x)) return nonFinite(x)
  return Object.is(x, -0) ? '-0' : String(x)
}

/** @param {number} x NaN or an infinity */
function nonFinite(x) {
  return Number.isNaN(x) ? '"NaN"' : x > 0 ? '"Infinity"' : '"-Infinity"'
}

/**
 * The values as JSON: `{"name", "dtype", "shape", "slice", "values"}`, values nested in the
 * shape (a scalar's is the value itself). C64 values are [real, imaginary] pairs, one more level.
 * `values` is what the page read: the stored values of integer and BOOL dtypes (a typed array,
 * BigInt for 64-bit), F64's own, and float32 for every other float (toFloat32).
 * Returns the text in pieces (a Blob takes them without joining a string of hundreds of MB).
 * @param {{ name: string, dtype: string, shape: ArrayLike<number | bigint>, slice: string,
 *   values: ArrayLike<number | bigint> }} tensor
 * @returns {string[]}
 */
export function jsonPieces(tensor) {
  const shape = Array.from(tensor.shape, Number)
  const head = `{"name": ${JSON.stringify(tensor.name)}, "dtype": ${JSON.stringify(tensor.dtype)}, ` +
    `"shape": [${shape.join(', ')}], "slice": ${JSON.stringify(tensor.slice)}, "values": `
  return [head, ...nestedValues(tensor.dtype, shape, tensor.values), '}\n']
}

/** Values in one piece of the JSON text at most. */
const PIECE = 1 << 16

/**
 * @param {string} dtype @param {number[]} shape @param {ArrayLike<number | bigint>} values
 * @returns {string[]}
 */
function nestedValues(dtype, shape, values) {
  const text = dtype === 'BOOL' ? (/** @type {number} */ i) => (values[i] ? 'true' : 'false')
    : dtype === 'F64' ? (/** @type {number} */ i) => float64Text(Number(values[i]))
      : dtype === 'C64' ? (/** @type {number} */ i) => `[${float32Text(Number(values[2 * i]))}, ${float32Text(Number(values[2 * i + 1]))}]`
        : /^[IU]/.test(dtype) ? (/** @type {number} */ i) => String(values[i])
          : (/** @type {number} */ i) => float32Text(Number(values[i]))
  const count = shape.reduce((a, b) => a * b, 1)
  if (shape.length === 0) return [text(0)]
  if (count === 0) return [emptyNested(shape)]
  // Each value closes and opens as many brackets as dimensions it wraps around (from the last).
  const spans = []
  let span = 1
  for (let d = shape.length - 1; d >= 0; d--) spans.push(span *= shape[d])
  /** @type {string[]} */
  const pieces = []
  let piece = '['.repeat(shape.length)
  for (let i = 0; i < count; i++) {
    if (i > 0) {
      let wraps = 0
      while (wraps < shape.length - 1 && i % spans[wraps] === 0) wraps++
      piece += `${']'.repeat(wraps)}, ${'['.repeat(wraps)}`
    }
    piece += text(i)
    if (i % PIECE === PIECE - 1) {
      pieces.push(piece)
      piece = ''
    }
  }
  pieces.push(piece + ']'.repeat(shape.length))
  return pieces
}

/** Empty arrays written at most for a shape with no values ([1e9, 0] would be 4 GB of them). */
const MAX_EMPTY = 1 << 20

/** Nested empty arrays down to the first dimension of 0, e.g. [2, 0] -> [[], []]. @param {number[]} shape */
function emptyNested(shape) {
  const zero = shape.indexOf(0)
  if (shape.slice(0, zero).reduce((a, b) => a * b, 1) > MAX_EMPTY)
    throw new RangeError(`shape [${shape.join(', ')}] holds no values but ${zero} dimensions of empty arrays too many to write`)
  let text = '[]'
  for (let d = zero - 1; d >= 0; d--) text = `[${Array(shape[d]).fill(text).join(', ')}]`
  return text
}

/**
 * A file name for the export of `name` (and its slice): letters, digits, dot, dash and
 * underscore kept, anything else an underscore, at most 120 characters.
 * @param {string} name @param {string} slice @param {string} extension e.g. 'npy'
 */
export function exportFileName(name, slice, extension) {
  const base = (slice ? `${name}[${slice}]` : name).replace(/[^A-Za-z0-9._-]+/g, '_').replace(/^[._]+/, '').slice(0, 120)
  return `${base || 'tensor'}.${extension}`
}

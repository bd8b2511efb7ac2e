/**
 * Casting tensors to F32, BF16 or F16 in the wasm core (src/convert.hpp), chunk by chunk, so a
 * cast never needs more wasm heap than one chunk beyond the tensor itself.
 *
 * Every value is rounded exactly once, to nearest, ties to even: F32 -> BF16/F16 directly;
 * dtypes whose values are all exact in float32 (F16, BF16, F8_*, F4, BOOL, 8- and 16-bit ints)
 * are decoded exactly and then rounded; F64 is narrowed to float32 rounding to odd, which keeps
 * the second rounding correct (a plain F64 -> F32 -> F16 can round a value twice the wrong way).
 * 32- and 64-bit integers go to F32 only, and C64 and F6 are not cast (no real float32 form).
 */
import { float32ToHalfInto, heapAlloc, heapArray, heapFree, heapView, isHeapView, toFloat32Into } from './core/index.js'
import { DTYPE_BITS, arrayTypeOf, dtypeIndex } from './dtypes.js'
import { SafetensorsError } from './errors.js'
import { Tensor } from './tensor.js'
import { loadCore } from './wasm.js'

/** The dtypes a cast produces. */
export const CAST_DTYPES = /** @type {const} */ (['F32', 'BF16', 'F16'])

// Elements per chunk: scratch of at most 8 MiB (F64 in) + 4 MiB (float32) + 4 MiB (out). Even,
// so an F4 chunk ends on a byte boundary.
const CHUNK_ELEMENTS = 1 << 20

const EXACT_IN_F32 = /* @__PURE__ */ new Set(['BOOL', 'F4', 'U8', 'I8', 'F8_E5M2', 'F8_E4M3', 'F8_E8M0',
  'F8_E4M3FNUZ', 'F8_E5M2FNUZ', 'I16', 'U16', 'F16', 'BF16', 'F32'])

/**
 * How `from` becomes `to`, or why it cannot (a sentence).
 * @typedef {'copy' | 'toF32' | 'f32ToHalf' | 'viaF32' | 'viaF32Odd'} Route
 * @param {string} from
 * @param {string} to one of CAST_DTYPES
 * @returns {{ route: Route, reason?: undefined } | { route?: undefined, reason: string }}
 */
function routeOf(from, to) {
  if (dtypeIndex(from) < 0) return { reason: `unknown dtype ${JSON.stringify(from)}` }
  if (from === to) return { route: 'copy' }
  if (from === 'C64') return { reason: 'C64 is complex: it has no real value to cast' }
  if (from.startsWith('F6_')) return { reason: `${from} has no float32 form (its bit packing is not fixed)` }
  if (to === 'F32') return { route: 'toF32' }
  if (from === 'F32') return { route: 'f32ToHalf' }
  if (from === 'F64') return { route: 'viaF32Odd' }
  if (EXACT_IN_F32.has(from)) return { route: 'viaF32' }
  return { reason: `${from} values are not all exact in float32, so ${to} would round them twice: cast to F32` }
}

/**
 * Bytes of `elements` elements of dtype.
 * @param {string} dtype
 * @param {number} elements
 */
function byteLengthOf(dtype, elements) {
  return Math.ceil((elements * DTYPE_BITS[dtype]) / 8)
}

/**
 * The cast, as a sequence of chunks of the output's bytes. A chunk is a view of wasm memory
 * (scratch reused by the next chunk, or the input itself when from === to and it is on the
 * heap): use it before asking for the next one, and do not allocate on the heap meanwhile.
 * Input bytes already on the wasm heap are read in place; others are copied in per chunk.
 * Ending the iteration early frees the scratch.
 * @param {import('./core/index.js').Core} core the loaded module (js/wasm.js loadCore)
 * @param {Uint8Array} bytes the input, exactly `elements` elements of `from`
 * @param {string} from
 * @param {string} to one of CAST_DTYPES
 * @param {number} elements
 * @returns {Generator<Uint8Array, void, void>}
 */
export function* castChunks(core, bytes, from, to, elements) {
  const { route, reason } = routeOf(from, to)
  if (route === undefined) throw new SafetensorsError('UnsupportedDtype', `cannot cast ${from} to ${to}: ${reason}`)
  const inBits = DTYPE_BITS[from]
  const outSize = DTYPE_BITS[to] / 8
  // The core reads by address: never let it read past the input (a detached view is empty).
  if (bytes.byteLength !== byteLengthOf(from, elements))
    throw new SafetensorsError('TensorInvalidInfo', `${elements} ${from} elements are ${byteLengthOf(from, elements)} bytes, not ${bytes.byteLength}`)
  // On the heap already (a Tensor's bytes): read in place, by address, as long as it is aligned
  // for the core's typed access. Views are made afresh per chunk: the address outlives growth.
  const onHeap = isHeapView(core, bytes) && bytes.byteOffset % Math.max(1, inBits / 8) === 0
  const base = bytes.byteOffset
  const chunk = Math.min(elements, CHUNK_ELEMENTS)
  let scratchIn = 0
  let scratchF32 = 0
  let scratchOut = 0
  try {
    if (route !== 'copy' && chunk > 0) {
      if (!onHeap) scratchIn = heapAlloc(core, byteLengthOf(from, chunk))
      if (route === 'viaF32' || route === 'viaF32Odd') scratchF32 = heapAlloc(core, chunk * 4)
      scratchOut = heapAlloc(core, chunk * outSize)
    }
    const half = to === 'BF16'
    for (let done = 0; done < elements; done += chunk) {
      const n = Math.min(chunk, elements - done)
      const inAt = (done * inBits) / 8
      const inLength = byteLengthOf(from, n)
      if (route === 'copy') {
        yield onHeap ? heapView(core, base + inAt, inLength) : bytes.subarray(inAt, inAt + inLength)
        continue
      }
      let src = base + inAt
      if (!onHeap) {
        heapView(core, scratchIn, inLength).set(bytes.subarray(inAt, inAt + inLength))
        src = scratchIn
      }
      if (route === 'toF32') {
        toFloat32Into(core, from, src, n, scratchOut)
      } else if (route === 'f32ToHalf') {
        float32ToHalfInto(core, half, src, n, scratchOut)
      } else {
        toFloat32Into(core, from, src, n, scratchF32)
        if (route === 'viaF32Odd') roundToOdd(core, src, scratchF32, n)
        float32ToHalfInto(core, half, scratchF32, n, scratchOut)
      }
      yield heapView(core, scratchOut, n * outSize)
    }
  } finally {
    if (scratchIn) heapFree(core, scratchIn)
    if (scratchF32) heapFree(core, scratchF32)
    if (scratchOut) heapFree(core, scratchOut)
  }
}

/**
 * Turns the core's F64 -> F32 (nearest even) into round-to-odd: an inexact result whose last
 * bit is even moves one step towards the exact value. Float32's 24 bits are more than 2 beyond
 * BF16's 8 and F16's 11, so rounding that to nearest even then rounds the F64 value correctly.
 * @param {any} core
 * @param {number} f64 address of n doubles (8-aligned)
 * @param {number} f32 address of the n floats the core made from them
 * @param {number} n
 */
function roundToOdd(core, f64, f32, n) {
  const exact = heapArray(core, Float64Array, f64, n)
  const rounded = heapArray(core, Float32Array, f32, n)
  const bits = heapArray(core, Uint32Array, f32, n)
  for (let i = 0; i < n; i++) {
    const x = exact[i]
    const y = rounded[i]
    // Sign and magnitude: +1 on the bits is one step away from zero (0 -> the least subnormal,
    // infinity -1 -> the largest finite float), -1 one step towards it.
    if (y !== x && (bits[i] & 1) === 0 && x === x) bits[i] += Math.abs(x) > Math.abs(y) ? 1 : -1
  }
}

/**
 * @param {unknown} shape
 * @param {string} what
 * @returns {number} the element count (dimensions may be BigInts)
 */
function elementCount(shape, what) {
  if (shape === null || typeof shape !== 'object' || typeof (/** @type {any} */ (shape)).length !== 'number')
    throw new SafetensorsError('InvalidArgument', `${what} has no shape`)
  const dims = Array.from(/** @type {ArrayLike<unknown>} */ (shape))
  let n = 1
  for (const d of dims) {
    const ok = typeof d === 'bigint' ? d >= 0n : Number.isSafeInteger(d) && /** @type {number} */ (d) >= 0
    if (!ok) throw new SafetensorsError('InvalidArgument', `${what} has dimension ${String(d)}: dimensions are non-negative integers`)
    if (d === 0 || d === 0n) return 0
    n *= Number(d)
  }
  if (!Number.isSafeInteger(n)) throw new SafetensorsError('InvalidArgument', `${what} has too many elements to cast in memory`)
  return n
}

/**
 * Casts a tensor to F32, BF16 or F16 in the wasm core; the result is a plain tensor in JS
 * memory, independent of the input (a Tensor may be disposed afterwards), ready for serialize:
 * data is a Float32Array for F32, and for BF16 and F16 what Tensor.data uses (Uint16Array, or
 * Float16Array for F16 where the platform has it). Casting to the tensor's own dtype copies it.
 * @param {import('./writer.js').TensorLike | Tensor} tensor a Tensor or { dtype, shape, data }
 * @param {'F32' | 'BF16' | 'F16'} dtype
 * @param {{ into?: Float32Array | Uint16Array }} [options] into: the caller's array to write the
 *   values into (its byte length must be the result's, its elements the dtype's size), returned
 *   as `data`: a conversion repeated into warm memory skips a fresh array's first touch
 * @returns {Promise<{ dtype: 'F32' | 'BF16' | 'F16', shape: (number | bigint)[], data: Float32Array | Uint16Array }>}
 */
export async function castTensor(tensor, dtype, options = {}) {
  if (!CAST_DTYPES.includes(dtype))
    throw new SafetensorsError('InvalidArgument', `cannot cast to ${JSON.stringify(dtype)}: the targets are ${CAST_DTYPES.join(', ')}`)
  if (tensor === null || typeof tensor !== 'object')
    throw new SafetensorsError('InvalidArgument', 'castTensor takes a Tensor or { dtype, shape, data }')
  const name = tensor instanceof Tensor ? tensor.name : null
  const what = name === null ? 'the tensor' : `tensor ${JSON.stringify(name)}`
  const from = tensor.dtype
  const { reason } = routeOf(from, dtype)
  if (reason !== undefined)
    throw new SafetensorsError(dtypeIndex(from) < 0 ? 'InvalidArgument' : 'UnsupportedDtype', `cannot cast ${what} from ${from} to ${dtype}: ${reason}`, { tensor: name })
  const core = await loadCore()
  const elements = elementCount(tensor.shape, what)
  // Taken after loadCore: a Tensor's bytes are a heap view, made fresh here.
  const data = tensor instanceof Tensor ? tensor.bytes : tensor.data
  /** @type {Uint8Array} */
  let bytes
  if (data instanceof ArrayBuffer) bytes = new Uint8Array(data)
  else if (ArrayBuffer.isView(data)) bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
  else throw new SafetensorsError('InvalidArgument', `data of ${what} is not a TypedArray, DataView or ArrayBuffer`, { tensor: name })
  const expected = (elements * DTYPE_BITS[from]) / 8
  if (!Number.isInteger(expected))
    throw new SafetensorsError('TensorInvalidInfo', `${what} ${from} [${Array.from(tensor.shape).join(', ')}] does not fill whole bytes`, { tensor: name })
  if (bytes.byteLength !== expected)
    throw new SafetensorsError('TensorInvalidInfo', `${what} ${from} [${Array.from(tensor.shape).join(', ')}] needs ${expected} bytes but its data is ${bytes.byteLength}`, { tensor: name })
  const { ctor } = arrayTypeOf(dtype)
  const { into } = options
  const size = DTYPE_BITS[dtype] / 8
  if (into !== undefined && (!ArrayBuffer.isView(into) || /** @type {any} */ (into).BYTES_PER_ELEMENT !== size ||
    into.byteLength !== elements * size)) {
    throw new SafetensorsError('InvalidArgument', `options.into must be a typed array of ${elements} ${size}-byte elements ` +
      `for ${what} as ${dtype}`, { tensor: name })
  }
  const out = into ?? new ctor(elements)
  const outBytes = new Uint8Array(out.buffer, out.byteOffset, out.byteLength)
  let at = 0
  for (const chunk of castChunks(core, bytes, from, dtype, elements)) {
    outBytes.set(chunk, at)
    at += chunk.byteLength
  }
  return { dtype, shape: Array.from(tensor.shape), data: out }
}

/**
 * Dtype and shape facts needed on the JS side. The order is the table's in docs/format.md, "Dtypes" (and
 * the core's enum).
 */
export const DTYPES = /** @type {const} */ ([
  'BOOL', 'F4', 'F6_E2M3', 'F6_E3M2', 'U8', 'I8', 'F8_E5M2', 'F8_E4M3', 'F8_E8M0',
  'F8_E4M3FNUZ', 'F8_E5M2FNUZ', 'I16', 'U16', 'F16', 'BF16', 'I32', 'U32', 'F32', 'C64',
  'F64', 'I64', 'U64',
])

/** @type {Record<string, number>} */
export const DTYPE_BITS = {
  BOOL: 8, F4: 4, F6_E2M3: 6, F6_E3M2: 6, U8: 8, I8: 8, F8_E5M2: 8, F8_E4M3: 8, F8_E8M0: 8,
  F8_E4M3FNUZ: 8, F8_E5M2FNUZ: 8, I16: 16, U16: 16, F16: 16, BF16: 16, I32: 32, U32: 32,
  F32: 32, C64: 64, F64: 64, I64: 64, U64: 64,
}

/** @type {Map<string, number>} */
const DTYPE_INDEX = /* @__PURE__ */ new Map(DTYPES.map((name, i) => [name, i]))

/** @param {string} name */
export function dtypeIndex(name) {
  const i = DTYPE_INDEX.get(name)
  return i === undefined ? -1 : i
}

/** Float16Array where the platform has it (Chromium, Node 24+), else Uint16Array. */
const F16Array = /** @type {any} */ (globalThis).Float16Array ?? Uint16Array

/**
 * The typed-array class that `Tensor.data` uses for a dtype, and how many array elements one
 * tensor element takes (C64 is two floats). Sub-byte and 8-bit float types are raw bytes.
 * @param {string} dtype
 * @returns {{ ctor: any, perElement: number }}
 */
export function arrayTypeOf(dtype) {
  switch (dtype) {
    case 'F32': return { ctor: Float32Array, perElement: 1 }
    case 'F64': return { ctor: Float64Array, perElement: 1 }
    case 'C64': return { ctor: Float32Array, perElement: 2 }
    case 'F16': return { ctor: F16Array, perElement: 1 }
    case 'BF16': case 'U16': return { ctor: Uint16Array, perElement: 1 }
    case 'I16': return { ctor: Int16Array, perElement: 1 }
    case 'I32': return { ctor: Int32Array, perElement: 1 }
    case 'U32': return { ctor: Uint32Array, perElement: 1 }
    case 'I64': return { ctor: BigInt64Array, perElement: 1 }
    case 'U64': return { ctor: BigUint64Array, perElement: 1 }
    case 'I8': return { ctor: Int8Array, perElement: 1 }
    default: return { ctor: Uint8Array, perElement: 1 }  // BOOL, U8, F8_*, F4, F6_*
  }
}

/**
 * The number of elements of a shape (dimensions are Numbers, or BigInts above 2^53, which only a
 * tensor with another dimension of 0 can have). The one place every caller counts them.
 * @param {ArrayLike<number | bigint>} shape
 */
export function elementCount(shape) {
  let n = 1
  for (let i = 0; i < shape.length; i++) n *= Number(shape[i])
  return n
}

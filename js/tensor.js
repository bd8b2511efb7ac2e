/**
 * A tensor whose bytes live on the wasm heap. It owns that allocation: dispose() (or `using`)
 * frees it, and a FinalizationRegistry frees it if the Tensor is collected first.
 */
import { heapAlloc, heapArray, heapFree, heapView, isHeapView, stats, toFloat32, toFloat32Into } from './core/index.js'
import { DTYPE_BITS, arrayTypeOf, elementCount } from './dtypes.js'
import { SafetensorsError } from './errors.js'
import { DISPOSE } from './dispose.js'

/** @type {FinalizationRegistry<{ core: any, ptr: number }>} */
const registry = /* @__PURE__ */ new FinalizationRegistry(({ core, ptr }) => heapFree(core, ptr))

export class Tensor {
  #core
  #ptr
  #byteLength

  /**
   * @param {import('./core/index.js').Core} core the loaded module (js/wasm.js), handed to js/core/
   * @param {number} ptr heap address (js/core/ heapAlloc), now owned by this tensor
   * @param {string} name
   * @param {string} dtype
   * @param {any[]} shape
   * @param {number} byteLength
   */
  constructor(core, ptr, name, dtype, shape, byteLength) {
    this.#core = core
    this.#ptr = ptr
    this.#byteLength = byteLength
    /** @readonly */ this.name = name
    /** @readonly */ this.dtype = dtype
    /** @readonly */ this.shape = shape
    registry.register(this, { core, ptr }, this)
  }

  get byteLength() { return this.#byteLength }

  /** Number of elements (C64 counts one per complex value). */
  get elementCount() { return elementCount(this.shape) }

  #live() {
    if (this.#ptr === 0)
      throw new SafetensorsError('Disposed', `tensor ${JSON.stringify(this.name)} was disposed`, { tensor: this.name })
    return this.#ptr
  }

  /**
   * A typed view of the bytes in wasm memory, made anew on each access so it is right after
   * the heap grows. Do not keep it across calls that may allocate: a kept view is detached by
   * growth and then reads as empty.
   */
  get data() {
    const ptr = this.#live()
    const { ctor } = arrayTypeOf(this.dtype)
    return heapArray(this.#core, ctor, ptr, this.#byteLength / ctor.BYTES_PER_ELEMENT)
  }

  /** The raw bytes, as a view of wasm memory (same lifetime rules as `data`). */
  get bytes() {
    return heapView(this.#core, this.#live(), this.#byteLength)
  }

  /** A copy of `data` in ordinary JS memory, independent of this tensor's lifetime. */
  copy() {
    return this.data.slice()
  }

  /**
   * The values as float32, converted in C++ (C64: interleaved real, imaginary). With `into`, a
   * Float32Array of exactly that many values, they are written there and `into` is returned: a
   * conversion repeated into the same array reuses warm memory instead of a fresh array, whose
   * first touch can cost more than the conversion (bench/to-float32.js). Either way the heap
   * holds at most a 1 MiB scratch beyond the tensor with `into`, the whole output without.
   * @param {{ into?: Float32Array }} [options]
   * @returns {Float32Array}
   */
  toFloat32(options = {}) {
    const ptr = this.#live()
    const unsupported = () => new SafetensorsError('UnsupportedDtype',
      `${this.dtype} has no float32 form (its bit packing is not fixed): use .bytes`, { tensor: this.name })
    const { into } = options
    if (into === undefined) {
      const values = toFloat32(this.#core, this.dtype, ptr, this.elementCount)
      if (values === null) throw unsupported()
      return values
    }
    const count = this.elementCount * (this.dtype === 'C64' ? 2 : 1)
    if (!(into instanceof Float32Array) || into.length !== count) {
      const got = into instanceof Float32Array ? `a Float32Array of ${into.length}` : Object.prototype.toString.call(into)
      throw new SafetensorsError('InvalidArgument', `toFloat32's into must be a Float32Array of ${count} values ` +
        `(${this.dtype} ${JSON.stringify(this.shape.map(Number))}), got ${got}`, { tensor: this.name })
    }
    if (!toFloat32Pieces(this.#core, this.dtype, ptr, this.elementCount, into)) throw unsupported()
    return into
  }

  /**
   * Statistics over the finite values, computed in C++ without a copy of the data.
   * @param {{ bins?: number }} [options]
   */
  stats(options = {}) {
    const bins = options.bins ?? 64
    if (!Number.isInteger(bins) || bins < 0 || bins > 1 << 20)
      throw new SafetensorsError('InvalidArgument', `bins must be an integer from 0 to 2^20, got ${bins}`)
    const result = stats(this.#core, this.dtype, this.#live(), this.elementCount, bins)
    if (result === null)
      throw new SafetensorsError('UnsupportedDtype', `${this.dtype} values cannot be summarised`, { tensor: this.name })
    return result
  }

  /** Frees the heap memory. Further use throws; disposing twice is harmless. */
  dispose() {
    if (this.#ptr === 0) return
    registry.unregister(this)
    heapFree(this.#core, this.#ptr)
    this.#ptr = 0
  }

  [DISPOSE]() { this.dispose() }

  get disposed() { return this.#ptr === 0 }
}

/** Float32 values per piece of toFloat32({ into }): a 1 MiB scratch (bench/to-float32.js). */
const PIECE_VALUES = 1 << 18

/**
 * Converts `elements` of dtype at `ptr` into `into` (JS memory, or heap memory outside the
 * tensor) piece by piece through a heap scratch that stays in cache: converted, then copied.
 * False for dtypes without a float32 form.
 * @param {any} core @param {string} dtype @param {number} ptr @param {number} elements
 * @param {Float32Array} into
 */
function toFloat32Pieces(core, dtype, ptr, elements, into) {
  const bits = DTYPE_BITS[dtype]
  if (bits === 6) return false
  const per = dtype === 'C64' ? 2 : 1
  // `into` in the heap (another tensor's data): converted straight there.
  if (isHeapView(core, into)) return elements === 0 || toFloat32Into(core, dtype, ptr, elements, into.byteOffset)
  // F32 and C64 convert by a copy: one, straight from the tensor (NaN payloads kept, as memcpy).
  if (dtype === 'F32' || dtype === 'C64') {
    into.set(heapArray(core, Float32Array, ptr, elements * per))
    return true
  }
  const piece = Math.min(PIECE_VALUES / per, Math.max(elements, 1))
  const scratch = heapAlloc(core, piece * per * 4)
  try {
    for (let first = 0; first < elements; first += piece) {
      const n = Math.min(piece, elements - first)
      const src = ptr + (bits === 4 ? first / 2 : (first * bits) / 8)
      toFloat32Into(core, dtype, src, n, scratch)
      into.set(heapArray(core, Float32Array, scratch, n * per), first * per)
    }
  } finally {
    heapFree(core, scratch)
  }
  return true
}

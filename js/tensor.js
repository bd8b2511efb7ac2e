/**
 * A tensor whose bytes live on the wasm heap. It owns that allocation: dispose() (or `using`)
 * frees it, and a FinalizationRegistry frees it if the Tensor is collected first.
 */
import { heapArray, heapFree, heapView, stats, toFloat32 } from './core/index.js'
import { arrayTypeOf, elementCount } from './dtypes.js'
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
   * The values as float32, converted in C++ (C64: interleaved real, imaginary).
   * @returns {Float32Array}
   */
  toFloat32() {
    const values = toFloat32(this.#core, this.dtype, this.#live(), this.elementCount)
    if (values === null) {
      throw new SafetensorsError('UnsupportedDtype',
        `${this.dtype} has no float32 form (its bit packing is not fixed): use .bytes`, { tensor: this.name })
    }
    return values
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

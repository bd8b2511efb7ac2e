/**
 * SHA-256 (FIPS 180-4) over heap bytes, fed piece by piece: the compression runs in the lazily
 * loaded kernels module (src/quant/sha256.cpp), in place over the core's heap; this holds what
 * is cheap and happens once per piece or per hash: a partial block between pieces, the padding,
 * the hex. Its heap block (the state, then a partial block) belongs to the Sha256 until free().
 */
import { heapAlloc, heapFree, heapView } from '../core/index.js'

// The first 32 bits of the fractional parts of the square roots of the first 8 primes.
const INITIAL = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]
const STATE_BYTES = 32
const BLOCK = 64

export class Sha256 {
  #core
  #kernels
  #ctx
  #buffered = 0
  #length = 0

  /**
   * @param {any} core the loaded core (js/wasm.js)
   * @param {import('../quant/kernels.js').Kernels} kernels loadKernels(core)
   */
  constructor(core, kernels) {
    this.#core = core
    this.#kernels = kernels
    this.#ctx = heapAlloc(core, STATE_BYTES + BLOCK)
    this.#reset()
  }

  #reset() {
    const state = this.#view(0, STATE_BYTES)
    INITIAL.forEach((word, i) => state.setUint32(4 * i, word, true))  // uint32 words, as wasm stores them
    this.#buffered = 0
    this.#length = 0
  }

  /** @param {number} at @param {number} n a DataView of the heap block, valid until the heap grows */
  #view(at, n) {
    const bytes = heapView(this.#core, this.#ctx + at, n)
    return new DataView(bytes.buffer, bytes.byteOffset, n)
  }

  /** Compresses whole blocks at a heap address. @param {number} ptr @param {number} blocks */
  #compress(ptr, blocks) {
    this.#kernels.sha256Blocks(this.#ctx, ptr, blocks)
  }

  /**
   * Adds `n` heap bytes at `ptr` (any split of a message gives the same digest).
   * @param {number} ptr @param {number} n
   */
  update(ptr, n) {
    this.#length += n
    const heap = () => /** @type {Uint8Array} */ (this.#core.HEAPU8)  // current after any growth
    const partial = this.#ctx + STATE_BYTES
    if (this.#buffered > 0) {
      const take = Math.min(n, BLOCK - this.#buffered)
      heap().copyWithin(partial + this.#buffered, ptr, ptr + take)
      this.#buffered += take
      ptr += take
      n -= take
      if (this.#buffered < BLOCK) return
      this.#compress(partial, 1)
      this.#buffered = 0
    }
    const whole = Math.floor(n / BLOCK)
    if (whole > 0) this.#compress(ptr, whole)  // straight from the caller's bytes, no copy
    const rest = n - whole * BLOCK
    if (rest > 0) heap().copyWithin(partial, ptr + whole * BLOCK, ptr + n)
    this.#buffered = rest
  }

  /** The digest of everything added, as 64 lowercase hex digits; then starts over. */
  hex() {
    const partial = this.#ctx + STATE_BYTES
    // Padding: 0x80, zeros up to 56 mod 64, the message's length in bits (big-endian uint64).
    let block = heapView(this.#core, partial, BLOCK)
    block.fill(0, this.#buffered)
    block[this.#buffered] = 0x80
    if (this.#buffered >= BLOCK - 8) {
      this.#compress(partial, 1)
      block = heapView(this.#core, partial, BLOCK)
      block.fill(0)
    }
    const tail = this.#view(STATE_BYTES + BLOCK - 8, 8)
    tail.setUint32(0, Math.floor(this.#length / 2 ** 29))
    tail.setUint32(4, (this.#length * 8) % 2 ** 32)
    this.#compress(partial, 1)
    const state = this.#view(0, STATE_BYTES)
    let hex = ''
    for (let i = 0; i < 8; i++) hex += state.getUint32(4 * i, true).toString(16).padStart(8, '0')
    this.#reset()
    return hex
  }

  /** Gives the heap block back. */
  free() {
    heapFree(this.#core, this.#ctx)
  }
}

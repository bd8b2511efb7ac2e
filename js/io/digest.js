/**
 * The digests the `cache` option checks its entries with: XXH64 (xxhash.com), a fast
 * non-cryptographic 64-bit hash, in a small wasm module of its own (src/xxh64.wat, built into
 * dist/safetensors_digest.mjs; 805 bytes, compiled synchronously on first use). It is there
 * against edits, truncation and entries mixed up (another URL's, version's or offset's bytes),
 * not against an attacker: one who can write the
 * cache can write its digests too. It is several times faster than SHA-256, in Node and in a page
 * (bench/cache-ranges.js), and synchronous, so a read checks each block as it goes.
 *
 * Bytes are digested in blocks of BLOCK bytes, each seeded with the XXH64 of its label (whose
 * bytes, which version, where: cache.js) and its index, so that a read checks only the blocks it
 * touches, and a block moved elsewhere does not match.
 */

import wasmBytes from '../../dist/safetensors_digest.mjs'

/** Bytes per digested block: 1 MiB, the size the Node backend reads a file in. A read of a slice
 * reads at most one block more at each end than asked; 8 bytes of digest per MiB stored. */
export const BLOCK = 1 << 20
/** Bytes of one digest. */
export const DIGEST = 8

/** Where the module takes its seed (8 bytes), puts the digest (at 0), and reads the bytes. */
const SEED = 8
const DATA = 64

/** @type {{ memory: WebAssembly.Memory, xxh64: (ptr: number, len: number) => void } | null} */
let module = null
const encoder = new TextEncoder()

/**
 * XXH64 of `bytes` with `seed` (8 bytes, little-endian; zeros when not given).
 * @param {Uint8Array} bytes @param {Uint8Array} [seed] @returns {Uint8Array} 8 bytes
 */
export function xxh64(bytes, seed) {
  if (!module) {
    const code = wasmBytes()
    module = /** @type {any} */ (new WebAssembly.Instance(new WebAssembly.Module(code)).exports)
  }
  const { memory, xxh64: run } = /** @type {NonNullable<typeof module>} */ (module)
  const need = DATA + bytes.length - memory.buffer.byteLength
  if (need > 0) memory.grow(Math.ceil(need / 65536))
  const heap = new Uint8Array(memory.buffer)
  heap.fill(0, SEED, SEED + 8)
  if (seed) heap.set(seed, SEED)
  heap.set(bytes, DATA)
  run(DATA, bytes.length)
  return heap.slice(0, 8)
}

/** @param {Uint8Array} a @param {Uint8Array} b */
export const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i])

/** @param {Uint8Array} bytes */
export const hex = (bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')

/** Blocks of a range of `length` bytes. @param {number} length */
export const blocks = (length) => Math.ceil(length / BLOCK)

/** The digest of block `i` of the bytes labelled `label`. @param {string} label @param {number} i @param {Uint8Array} block */
export const blockDigest = (label, i, block) => xxh64(block, xxh64(encoder.encode(`${label}${i}`)))

/**
 * Block digests of bytes given in pieces of any size, one block in hand at most.
 */
export class BlockDigests {
  #label
  /** @type {Uint8Array | null} the block being filled */
  #block = null
  #fill = 0
  /** @type {Uint8Array[]} */
  #digests = []

  /** @param {string} label */
  constructor(label) { this.#label = label }

  /** @param {Uint8Array} chunk */
  update(chunk) {
    for (let at = 0; at < chunk.length;) {
      if (this.#fill === 0 && chunk.length - at >= BLOCK) {
        this.#digests.push(blockDigest(this.#label, this.#digests.length, chunk.subarray(at, at + BLOCK)))
        at += BLOCK
        continue
      }
      const n = Math.min(BLOCK - this.#fill, chunk.length - at)
      ;(this.#block ??= new Uint8Array(BLOCK)).set(chunk.subarray(at, at + n), this.#fill)
      this.#fill += n
      at += n
      if (this.#fill === BLOCK) this.#flush()
    }
  }

  #flush() {
    this.#digests.push(blockDigest(this.#label, this.#digests.length, /** @type {Uint8Array} */ (this.#block).subarray(0, this.#fill)))
    this.#fill = 0
  }

  /** The digests, DIGEST bytes per block, in order. */
  finish() {
    if (this.#fill > 0) this.#flush()
    this.#block = null
    const out = new Uint8Array(this.#digests.length * DIGEST)
    this.#digests.forEach((d, i) => out.set(d, i * DIGEST))
    return out
  }
}

/**
 * One digest (hex) of bytes given in pieces: the XXH64 of their block digests.
 * @param {string} label @param {Uint8Array[]} pieces
 */
export function digestOf(label, pieces) {
  const digests = new BlockDigests(label)
  for (const piece of pieces) digests.update(piece)
  return hex(xxh64(digests.finish(), xxh64(encoder.encode(label))))
}

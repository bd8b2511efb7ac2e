/**
 * Loads the wasm core once per realm. The module embeds its wasm (SINGLE_FILE), so loading
 * never fetches a path: the same code runs in Node, browsers and workers.
 */
import createCore from '../dist/safetensors_core.mjs'
import { SafetensorsError } from './errors.js'

/** @type {Promise<any> | null} */
let corePromise = null

/** @returns {Promise<any>} the Emscripten module with the Embind classes */
export function loadCore() {
  if (!corePromise) corePromise = createCore()
  return corePromise
}

// malloc can only serve what wasm32 addresses; the core itself caps memory at 4 GiB.
const MAX_ALLOCATION = 0xffff0000

/**
 * Allocates `byteLength` bytes on the wasm heap. The caller owns the pointer.
 * @param {any} core
 * @param {number} byteLength
 * @returns {number} the pointer, as an unsigned number
 */
export function heapAlloc(core, byteLength) {
  if (byteLength > MAX_ALLOCATION)
    throw new SafetensorsError('OutOfMemory',
      `cannot allocate ${byteLength} bytes: the wasm32 heap holds at most 4 GiB`)
  const ptr = core._malloc(Math.max(byteLength, 1)) >>> 0
  if (ptr === 0)
    throw new SafetensorsError('OutOfMemory', `wasm heap allocation of ${byteLength} bytes failed`)
  return ptr
}

/**
 * A view of heap bytes. Take it right before use: any allocation may grow the heap, which
 * detaches every earlier view (it then reads as length 0, never as wrong bytes).
 * @param {any} core
 * @param {number} ptr
 * @param {number} byteLength
 */
export function heapView(core, ptr, byteLength) {
  return new Uint8Array(core.HEAPU8.buffer, ptr, byteLength)
}

/**
 * Byte sources: where a file's bytes come from. Anything with this shape works:
 *
 *   { byteLength: number,
 *     read(offset, length, { signal }) => Promise<Uint8Array>,         // exactly `length` bytes
 *     readInto?(offset, length, viewAt, { signal }) => Promise<void>,  // writes into viewAt(at, n)
 *     stream?(offset, length, { signal }) => AsyncIterable<Uint8Array>, // chunks in order
 *     close?() => Promise<void> | void }
 *
 * `viewAt(at, n)` returns a fresh view of the destination's bytes [at, at + n): a source must
 * not keep a view across an await, because the wasm heap may grow (and detach it) meanwhile.
 */
import { SafetensorsError, throwIfAborted } from './errors.js'

/**
 * @typedef {{ signal?: AbortSignal }} SignalOption
 * @typedef {{
 *   byteLength: number,
 *   read(offset: number, length: number, options?: SignalOption): Promise<Uint8Array>,
 *   readInto?(offset: number, length: number, viewAt: (at: number, n: number) => Uint8Array, options?: SignalOption): Promise<void>,
 *   stream?(offset: number, length: number, options?: SignalOption): AsyncIterable<Uint8Array>,
 *   close?(): Promise<void> | void,
 *   defaultMergeGap?: number,
 *   defaultConcurrency?: number,
 *   describe?: string,
 * }} ByteSource
 */

/**
 * @param {number} offset
 * @param {number} length
 * @param {number} byteLength
 */
export function checkRange(offset, length, byteLength) {
  if (!Number.isSafeInteger(offset) || !Number.isSafeInteger(length) || offset < 0 || length < 0 ||
      offset + length > byteLength)
    throw new SafetensorsError('OutOfRange',
      `read of ${length} bytes at offset ${offset} is outside the source's ${byteLength} bytes`,
      { offset })
}

/**
 * Bytes already in memory. Reads are views: no copy until the heap copy.
 * @param {ArrayBuffer | ArrayBufferView} bytes
 * @returns {ByteSource}
 */
export function bytesSource(bytes) {
  const u8 = bytes instanceof Uint8Array ? bytes
    : ArrayBuffer.isView(bytes) ? new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength)
      : new Uint8Array(bytes)
  return {
    byteLength: u8.byteLength,
    describe: 'bytes in memory',
    async read(offset, length, options = {}) {
      throwIfAborted(options.signal)
      checkRange(offset, length, u8.byteLength)
      return u8.subarray(offset, offset + length)
    },
  }
}

/**
 * A Blob or File: each read slices only the bytes asked for.
 * @param {Blob} blob
 * @returns {ByteSource}
 */
export function blobSource(blob) {
  return {
    byteLength: blob.size,
    describe: 'name' in blob ? `file ${/** @type {File} */ (blob).name}` : 'blob',
    async read(offset, length, options = {}) {
      throwIfAborted(options.signal)
      checkRange(offset, length, blob.size)
      const buffer = await blob.slice(offset, offset + length).arrayBuffer()
      throwIfAborted(options.signal)
      return new Uint8Array(buffer)
    },
    defaultMergeGap: 1 << 20,
  }
}

/**
 * What `open` takes for bytes it does not fetch itself: bytes in memory, a Blob or File, or a
 * ByteSource as it is; null for anything else (a URL or path, say).
 * @param {unknown} src
 * @returns {ByteSource | null}
 */
export function sourceOf(src) {
  if (src instanceof ArrayBuffer || ArrayBuffer.isView(src)) return bytesSource(src)
  if (typeof Blob !== 'undefined' && src instanceof Blob) return blobSource(src)
  return isByteSource(src) ? src : null
}

/**
 * @param {unknown} src
 * @returns {src is ByteSource}
 */
export function isByteSource(src) {
  return typeof src === 'object' && src !== null && typeof (/** @type {any} */ (src).read) === 'function' &&
    typeof (/** @type {any} */ (src).byteLength) === 'number'
}

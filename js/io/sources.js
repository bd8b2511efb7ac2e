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
import { SafetensorsError, throwIfAborted } from '../errors.js'

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
 * A piece a source gave for bytes from `offset`, held to the contract before it goes near the
 * heap: a Uint8Array of at most `room` bytes. A user's ByteSource that gives more would write
 * past a heap block (another tensor's bytes, or a trap at the heap's end).
 * @param {unknown} piece @param {number} offset @param {number} room
 * @returns {Uint8Array}
 */
export function checkPiece(piece, offset, room) {
  if (!(piece instanceof Uint8Array))
    throw new SafetensorsError('InvalidSource', `the source gave ${describeValue(piece)} for bytes at offset ` +
      `${offset}, not a Uint8Array: read() and stream() must give Uint8Arrays`, { offset })
  if (piece.length > room)
    throw new SafetensorsError('InvalidSource', `the source gave ${piece.length} bytes at offset ${offset} where ` +
      `${room} were asked for: read(offset, length) must give exactly length bytes`, { offset })
  return piece
}

/**
 * `source.read(offset, length)`, held to its contract: exactly `length` bytes (fewer is
 * ShortRead; more, or not a Uint8Array, InvalidSource).
 * @param {ByteSource} source @param {number} offset @param {number} length @param {SignalOption} [options]
 * @returns {Promise<Uint8Array>}
 */
export async function readExactly(source, offset, length, options) {
  const bytes = checkPiece(await source.read(offset, length, options), offset, length)
  if (bytes.length < length)
    throw new SafetensorsError('ShortRead', `asked for ${length} bytes at offset ${offset}, the source gave ` +
      `${bytes.length}`, { offset: offset + bytes.length })
  return bytes
}

/** @param {unknown} value */
function describeValue(value) {
  if (value === null || typeof value !== 'object') return String(value)
  return `a ${value.constructor?.name ?? 'object'}`
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

/** A Blob is read this many bytes at a time: one `arrayBuffer()` of gigabytes fails in browsers
 * (NotReadableError, or an ArrayBuffer over the engine's limit) and would double the memory. */
export const BLOB_SLICE = 16 * 1024 * 1024

/**
 * A Blob or File: each read slices only the bytes asked for, in pieces of BLOB_SLICE, so a tensor
 * of any size streams into the heap without a JS copy of it whole.
 * @param {Blob} blob
 * @returns {ByteSource}
 */
export function blobSource(blob) {
  const describe = 'name' in blob ? `file ${/** @type {File} */ (blob).name}` : 'blob'
  /** @param {number} offset @param {number} length @param {SignalOption} options */
  async function piece(offset, length, options) {
    throwIfAborted(options.signal)
    let buffer
    try {
      buffer = await blob.slice(offset, offset + length).arrayBuffer()
    } catch (error) {
      // NotReadableError: the file changed or went away since it was picked, or memory ran out.
      const reason = /** @type {Error} */ (error)?.message ?? String(error)
      throw new SafetensorsError('IoError', `cannot read ${length} bytes at offset ${offset} of ${describe}: ${reason} ` +
        '(was the file changed or moved since it was chosen?)', { offset, cause: error })
    }
    throwIfAborted(options.signal)
    return new Uint8Array(buffer)
  }
  return {
    byteLength: blob.size,
    describe,
    async read(offset, length, options = {}) {
      checkRange(offset, length, blob.size)
      if (length <= BLOB_SLICE) return piece(offset, length, options)
      const out = new Uint8Array(length)
      for (let at = 0; at < length; at += BLOB_SLICE) out.set(await piece(offset + at, Math.min(BLOB_SLICE, length - at), options), at)
      return out
    },
    async* stream(offset, length, options = {}) {
      checkRange(offset, length, blob.size)
      for (let at = 0; at < length; at += BLOB_SLICE) yield await piece(offset + at, Math.min(BLOB_SLICE, length - at), options)
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
  if (!isByteSource(src)) return null
  if (!Number.isSafeInteger(src.byteLength) || src.byteLength < 0)
    throw new SafetensorsError('InvalidSource', `a ByteSource's byteLength must be an integer from 0 to 2^53 - 1, ` +
      `got ${src.byteLength}`)
  return src
}

/**
 * @param {unknown} src
 * @returns {src is ByteSource}
 */
export function isByteSource(src) {
  return typeof src === 'object' && src !== null && typeof (/** @type {any} */ (src).read) === 'function' &&
    typeof (/** @type {any} */ (src).byteLength) === 'number'
}

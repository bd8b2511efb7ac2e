/**
 * A Node file as a byte source. Reads go straight into the destination (the wasm heap view)
 * with fs reads at an explicit position: no intermediate buffer, no shared file position.
 */
import { open as fsOpen } from 'node:fs/promises'
import { SafetensorsError, throwIfAborted } from './errors.js'
import { checkRange } from './sources.js'

// One fs read per chunk: a fresh heap view for each, since the heap may grow between reads.
const CHUNK = 64 << 20

/**
 * @param {string} path
 * @returns {Promise<import('./sources.js').ByteSource>}
 */
export async function nodeFileSource(path) {
  let handle
  try {
    handle = await fsOpen(path, 'r')
  } catch (error) {
    const e = /** @type {NodeJS.ErrnoException} */ (error)
    throw new SafetensorsError(e.code === 'ENOENT' ? 'NotFound' : 'IoError', `cannot open ${path}: ${e.message}`, { cause: error })
  }
  const fh = handle
  const { size } = await fh.stat()

  /**
   * @param {number} offset
   * @param {number} length
   * @param {(at: number, n: number) => Uint8Array} viewAt
   * @param {{ signal?: AbortSignal }} [options]
   */
  async function readInto(offset, length, viewAt, options = {}) {
    checkRange(offset, length, size)
    let done = 0
    while (done < length) {
      throwIfAborted(options.signal)
      const n = Math.min(CHUNK, length - done)
      const { bytesRead } = await fh.read(viewAt(done, n), 0, n, offset + done)
      if (bytesRead === 0)
        throw new SafetensorsError('SourceChanged', `${path} ended at byte ${offset + done}, expected ${size} bytes`, { offset: offset + done })
      done += bytesRead
    }
  }

  return {
    byteLength: size,
    describe: path,
    readInto,
    async read(offset, length, options) {
      const out = new Uint8Array(length)
      await readInto(offset, length, (at, n) => out.subarray(at, at + n), options)
      return out
    },
    async close() { await fh.close() },
  }
}

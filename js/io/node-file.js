/**
 * A Node file as a byte source. Reads go straight into the destination (the wasm heap view)
 * with fs reads at an explicit position: no intermediate buffer, no shared file position.
 */
import { constants } from 'node:fs'
import { open as fsOpen, stat } from 'node:fs/promises'
import { SafetensorsError, throwIfAborted } from '../errors.js'
import { checkRange } from './sources.js'

// One fs read per chunk: a fresh heap view for each, since the heap may grow between reads.
const CHUNK = 64 << 20

/** @param {import('node:fs').Stats} info */
const kindOf = (info) => (info.isDirectory() ? 'a directory' : info.isFIFO() ? 'a named pipe (FIFO)'
  : info.isSocket() ? 'a socket' : info.isCharacterDevice() ? 'a character device' : info.isBlockDevice() ? 'a block device'
    : 'not a regular file')

/**
 * Opens `path` for reading if it is a regular file. Anything else is refused before a read: a
 * FIFO would block until a writer comes, a directory fails mid-read, a device never ends. The
 * check is made on the path first (opening a FIFO blocks) and again on the open handle (opened
 * without blocking), in case the path changed in between.
 * @param {string} path
 */
export async function openRegularFile(path) {
  /** @param {unknown} error */
  const failed = (error) => {
    const e = /** @type {NodeJS.ErrnoException} */ (error)
    return new SafetensorsError(e.code === 'ENOENT' ? 'NotFound' : 'IoError', `cannot open ${path}: ${e.message}`, { cause: error })
  }
  /** @param {import('node:fs').Stats} info */
  const refuse = (info) => new SafetensorsError('UnsupportedSource', `cannot open ${path}: it is ${kindOf(info)}, ` +
    'not a file (give the path of a .safetensors file)')
  const before = await stat(path).catch((error) => { throw failed(error) })
  if (!before.isFile()) throw refuse(before)
  const handle = await fsOpen(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0)).catch((error) => { throw failed(error) })
  const info = await handle.stat()
  if (!info.isFile()) {
    await handle.close()
    throw refuse(info)
  }
  return { handle, size: info.size }
}

/**
 * @param {string} path
 * @returns {Promise<import('./sources.js').ByteSource>}
 */
export async function nodeFileSource(path) {
  const { handle: fh, size } = await openRegularFile(path)
  let closed = false

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
      if (closed) throw new SafetensorsError('Closed', `${path} was closed`, { offset: offset + done })
      const n = Math.min(CHUNK, length - done)
      let bytesRead
      try {
        ({ bytesRead } = await fh.read(viewAt(done, n), 0, n, offset + done))
      } catch (error) {
        if (closed) throw new SafetensorsError('Closed', `${path} was closed while being read`, { offset: offset + done, cause: error })
        const e = /** @type {NodeJS.ErrnoException} */ (error)
        throw new SafetensorsError('IoError', `cannot read ${path} at byte ${offset + done}: ${e.message}`, { offset: offset + done, cause: error })
      }
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
    async close() {
      closed = true
      await fh.close()
    },
  }
}

/**
 * writeFile for Node: the header and each tensor's own bytes go to a temporary file in the
 * target's folder, which is renamed over the target only once everything is written and
 * flushed. A failure at any point removes the temporary file and leaves the target as it was.
 */
import { open as fsOpen, rename, unlink } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import { SafetensorsError } from './errors.js'
import { planFile, toEntries } from './writer.js'

/**
 * @param {string} path
 * @param {import('./writer.js').TensorsInput} tensors
 * @param {import('./writer.js').WriteOptions & { onProgress?: (p: { loaded: number, total: number }) => void }} [options]
 */
export async function writeFile(path, tensors, options = {}) {
  const { header, order, fileLength } = await planFile(toEntries(tensors), options.metadata)
  const temp = join(dirname(path), `.${basename(path)}.${process.pid}.${Date.now().toString(36)}.tmp`)
  const fh = await fsOpen(temp, 'wx')
  let written = 0
  try {
    /** @param {Uint8Array} bytes */
    const put = async (bytes) => {
      let done = 0
      while (done < bytes.length) {
        const { bytesWritten } = await fh.write(bytes, done, bytes.length - done)
        done += bytesWritten
      }
      written += bytes.length
      options.onProgress?.({ loaded: written, total: fileLength })
    }
    await put(header)
    for (const e of order) {
      const bytes = e.bytes()
      if (bytes.byteLength !== e.byteLength)
        throw new SafetensorsError('TensorInvalidInfo', `data of tensor ${JSON.stringify(e.name)} is ${bytes.byteLength} bytes, was ${e.byteLength} when planned (detached?)`, { tensor: e.name })
      await put(bytes)
    }
    await fh.sync()
    await fh.close()
    await rename(temp, path)
  } catch (error) {
    await fh.close().catch(() => {})
    await unlink(temp).catch(() => {})
    throw error
  }
}

/**
 * Writing files in Node: the header and each tensor's bytes go to a temporary file in the
 * target's folder, which is renamed over the target only once everything is written and
 * flushed. A failure at any point removes the temporary file and leaves the target as it was.
 * A target reached through a symbolic link is written where the link points (the link stays),
 * and a file replaced keeps its mode; a loop of links is refused (IoError), never replaced.
 * A kill leaves the temporary file, `.<name>.<pid>.<time>.tmp`: the next write to the same
 * target removes those of that target whose process is gone.
 */
import { unlinkSync } from 'node:fs'
import { chmod, open as fsOpen, lstat, readdir, readlink, realpath, rename, stat, unlink } from 'node:fs/promises'
import { basename, dirname, join, resolve } from 'node:path'
import { SafetensorsError, throwIfAborted } from '../errors.js'
import { planFile, toEntries } from '../writer.js'

/** Temporary files being written now: what removeTempFilesSync removes on an abrupt exit. */
const writing = new Set()

/**
 * Removes the temporary files of writes still under way, synchronously: for a process that must
 * exit now (a second Ctrl-C, an 'exit' handler), so that no hidden partial file is left behind.
 */
export function removeTempFilesSync() {
  for (const temp of writing) {
    try { unlinkSync(temp) } catch { /* gone already */ }
  }
  writing.clear()
}

/**
 * Removes the temporary files a killed write to `target` left beside it: only files named exactly
 * as writePlanned names that target's temporary files, whose process is gone.
 * @param {string} target
 */
async function removeStaleTemps(target) {
  const name = basename(target)
  const pattern = new RegExp(`^\\.${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\.(\\d+)\\.[0-9a-z]+\\.tmp$`)
  const names = await readdir(dirname(target)).catch(() => [])
  for (const n of names) {
    const m = pattern.exec(n)
    if (!m || isRunning(Number(m[1]))) continue
    const path = join(dirname(target), n)
    if (!(await lstat(path).catch(() => null))?.isFile()) continue
    await unlink(path).catch(() => {})
  }
}

/** Whether a process runs (this one included: another write or convert of it may be under way).
 * @param {number} pid */
export function isRunning(pid) {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return /** @type {NodeJS.ErrnoException} */ (error).code !== 'ESRCH'
  }
}

/**
 * Where writing `path` really goes: through a symbolic link (or a chain of them) to its target,
 * so that the link stays a link; with the mode the file there has now, kept by the new file.
 * @param {string} path
 * @returns {Promise<{ target: string, mode: number | null }>}
 */
async function destination(path) {
  let target = path
  try {
    target = await realpath(path)
  } catch (error) {
    // A loop of links has no file to write to: replacing the link would lose it.
    if (/** @type {NodeJS.ErrnoException} */ (error).code === 'ELOOP')
      throw new SafetensorsError('IoError', `cannot write ${path}: a loop of symbolic links (ELOOP), which leads to no file`, { cause: error })
    // Missing, or a link to a missing file: follow the links by hand to where the file will be.
    for (let hops = 0; hops < 40; hops++) {
      const link = await readlink(target).catch(() => null)
      if (link === null) break
      target = resolve(dirname(target), link)
    }
  }
  const mode = await stat(target).then((s) => s.mode & 0o7777, () => null)
  return { target, mode }
}

/**
 * A tensor of a planned file whose bytes are produced when it is its turn to be written, as
 * chunks (each written before the next is asked for, so a chunk may be reused scratch memory).
 * @typedef {{ name: string, byteLength: number, chunks: () => Iterable<Uint8Array> | AsyncIterable<Uint8Array> }} ChunkedEntry
 * @typedef {{ onProgress?: (p: { loaded: number, total: number }) => void, signal?: AbortSignal }} WritePlannedOptions
 */

/**
 * Writes a planned file (planFile's header, fileLength and order, the order's entries giving
 * their bytes as chunks) through a temporary file. Memory: the header plus whatever one
 * entry's chunks hold. Progress is reported after the header and after every chunk.
 * @param {string} path
 * @param {{ header: Uint8Array, fileLength: number, order: ChunkedEntry[] }} plan
 * @param {WritePlannedOptions} [options]
 */
export async function writePlanned(path, plan, options = {}) {
  const { signal, onProgress } = options
  throwIfAborted(signal)
  // File system failures become IoError; errors from the entries' chunks pass through as they are.
  /** @template T @param {Promise<T>} operation @returns {Promise<T>} */
  const io = (operation) => operation.catch((error) => {
    throw new SafetensorsError('IoError', `cannot write ${path}: ${error.message}`, { cause: error })
  })
  const { target, mode } = await destination(path)
  await removeStaleTemps(target)
  const temp = join(dirname(target), `.${basename(target)}.${process.pid}.${Date.now().toString(36)}.tmp`)
  const fh = await io(fsOpen(temp, 'wx'))
  writing.add(temp)
  let written = 0
  try {
    /** @param {Uint8Array} bytes */
    const put = async (bytes) => {
      let done = 0
      while (done < bytes.length) {
        const { bytesWritten } = await io(fh.write(bytes, done, bytes.length - done))
        done += bytesWritten
      }
      written += bytes.length
      onProgress?.({ loaded: written, total: plan.fileLength })
    }
    await put(plan.header)
    for (const e of plan.order) {
      let length = 0
      /** @param {number} n */
      const sizeError = (n) => new SafetensorsError('TensorInvalidInfo',
        `data of tensor ${JSON.stringify(e.name)} is ${n} bytes, was ${e.byteLength} when planned (detached?)`, { tensor: e.name })
      for await (const chunk of e.chunks()) {
        throwIfAborted(signal)
        if (length + chunk.byteLength > e.byteLength) throw sizeError(length + chunk.byteLength)
        length += chunk.byteLength
        await put(chunk)
      }
      if (length !== e.byteLength) throw sizeError(length)
    }
    throwIfAborted(signal)
    await io(fh.sync())
    await io(fh.close())
    if (mode !== null) await io(chmod(temp, mode))
    throwIfAborted(signal)  // an interrupt during the flush: the target stays as it was
    await io(rename(temp, target))
  } catch (error) {
    await fh.close().catch(() => {})
    await unlink(temp).catch(() => {})
    throw error
  } finally {
    writing.delete(temp)
  }
}

/**
 * writeFile for Node: the header and each tensor's own bytes, as they are (no copy).
 * @param {string} path
 * @param {import('../writer.js').TensorsInput} tensors
 * @param {import('../writer.js').WriteOptions & WritePlannedOptions} [options]
 */
export async function writeFile(path, tensors, options = {}) {
  const { header, order, fileLength } = await planFile(toEntries(tensors), options.metadata)
  // Heap tensors' views are taken at their turn (bytes() is called then), after any growth.
  const chunked = order.map((e) => ({ name: e.name, byteLength: e.byteLength, chunks: () => [e.bytes()] }))
  await writePlanned(path, { header, fileLength, order: chunked }, options)
}

/**
 * The `cache` option's backend in Node: a folder (`dir`, default `safetensors-wasm` under the
 * OS cache folder: $XDG_CACHE_HOME where set, else ~/.cache, ~/Library/Caches on macOS,
 * %LOCALAPPDATA% on Windows). One folder per entry, named by the SHA-256 of its kind and URL:
 *
 *   <sha-256>/meta.json              what cache.js stores beside the bytes (no request headers)
 *   <sha-256>/body-<ver>             the header's first bytes, or the index
 *   <sha-256>/range-<ver>-<start>-<length>
 *
 * Files are written under a temporary name and renamed, so a reader (another process too) sees
 * a whole file or none; bytes named by a version no reader asks for are deleted when an entry is
 * replaced. Only the user can read the folder (0700): headers of gated models are in it.
 */
import { createHash, randomBytes } from 'node:crypto'
import { mkdir, open as fsOpen, readdir, readFile, rename, rm, unlink, writeFile } from 'node:fs/promises'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { CACHE_NAME } from './cache.js'

const CHUNK = 1 << 20

/** The folder the cache uses when `dir` is not given. */
export function defaultCacheDir() {
  const env = process.env
  if (env.XDG_CACHE_HOME) return join(env.XDG_CACHE_HOME, CACHE_NAME)
  if (process.platform === 'win32' && env.LOCALAPPDATA) return join(env.LOCALAPPDATA, CACHE_NAME, 'Cache')
  if (process.platform === 'darwin') return join(homedir(), 'Library', 'Caches', CACHE_NAME)
  return join(homedir(), '.cache', CACHE_NAME)
}

/** @param {string} text */
const sha256 = (text) => createHash('sha256').update(text).digest('hex')

/**
 * @param {import('./cache.js').CacheOptions} options
 * @returns {import('./cache.js').CacheBackend}
 */
export function folderCache(options) {
  const root = options.dir ?? defaultCacheDir()
  /** @param {string} key */
  const folder = (key) => join(root, sha256(key))

  /** Writes `bytes` (text, or pieces in order) to `path` through a temporary file in the same
   * folder. @param {string} path @param {Uint8Array[] | string} bytes */
  async function put(path, bytes) {
    const temp = `${path}.${randomBytes(6).toString('hex')}.tmp`
    try {
      await writeFile(temp, bytes, { mode: 0o600 })
      await rename(temp, path)
    } catch (error) {
      await unlink(temp).catch(() => {})
      throw error
    }
  }

  /** @param {string} at the entry's folder */
  async function ensure(at) {
    await mkdir(root, { recursive: true, mode: 0o700 })
    await mkdir(at, { recursive: true, mode: 0o700 })
  }

  return {
    hash: async (text) => sha256(text),
    async read(key) {
      const at = folder(key)
      let meta
      try {
        meta = JSON.parse(await readFile(join(at, 'meta.json'), 'utf8'))
      } catch {
        return null
      }
      if (typeof meta?.ver !== 'string' || !/^[0-9a-f]+$/.test(meta.ver)) return null
      const bytes = await readFile(join(at, `body-${meta.ver}`)).catch(() => null)
      return bytes ? { meta, bytes: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length) } : null
    },
    async write(key, meta, pieces) {
      const at = folder(key)
      await ensure(at)
      await put(join(at, `body-${meta.ver}`), pieces)
      await put(join(at, 'meta.json'), JSON.stringify(meta))
      for (const name of await readdir(at)) {
        const ver = /^(?:body|range)-([0-9a-f]+)/.exec(name)?.[1]
        if (ver !== undefined && ver !== meta.ver) await rm(join(at, name), { force: true })
      }
    },
    async touch(key, meta) {
      await put(join(folder(key), 'meta.json'), JSON.stringify(meta))
    },
    async drop(key) {
      await rm(folder(key), { recursive: true, force: true })
    },
    async ranges(key, ver) {
      const names = await readdir(folder(key)).catch(() => [])
      /** @type {[number, number][]} */
      const found = []
      for (const name of names) {
        const m = /^range-([0-9a-f]+)-(\d+)-(\d+)$/.exec(name)
        if (m && m[1] === ver) found.push([Number(m[2]), Number(m[3])])
      }
      return found
    },
    async* readRange(key, ver, [start, length], from, to) {
      const handle = await fsOpen(join(folder(key), `range-${ver}-${start}-${length}`), 'r')
      try {
        for (let at = from; at < to;) {
          const piece = new Uint8Array(Math.min(CHUNK, to - at))
          const { bytesRead } = await handle.read(piece, 0, piece.length, at - start)
          if (bytesRead === 0) throw new Error(`the cached range ${start}+${length} is shorter than it says`)
          at += bytesRead
          yield piece.subarray(0, bytesRead)
        }
      } finally {
        await handle.close()
      }
    },
    async writeRange(key, ver, start, length) {
      const at = folder(key)
      await ensure(at)
      const path = join(at, `range-${ver}-${start}-${length}`)
      const temp = `${path}.${randomBytes(6).toString('hex')}.tmp`
      const handle = await fsOpen(temp, 'wx', 0o600)
      let n = 0
      let closed = false
      const discard = async () => {
        if (!closed) { closed = true; await handle.close().catch(() => {}) }
        await unlink(temp).catch(() => {})
      }
      return {
        async write(chunk) {
          for (let done = 0; done < chunk.length;) done += (await handle.write(chunk, done, chunk.length - done)).bytesWritten
          n += chunk.length
        },
        async close() {
          if (n !== length) {
            await discard()
            throw new Error(`${n} of ${length} bytes`)
          }
          closed = true
          await handle.close()
          await rename(temp, path).catch(async (error) => { await discard(); throw error })
        },
        abort() { discard() },
      }
    },
  }
}

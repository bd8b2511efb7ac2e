/**
 * The `cache` option's backend in Node: a folder (`dir`, default `safetensors-wasm` under the
 * OS cache folder: $XDG_CACHE_HOME where set, else ~/.cache, ~/Library/Caches on macOS,
 * %LOCALAPPDATA% on Windows). One folder per entry, named by the SHA-256 of its kind and URL:
 *
 *   <sha-256>/meta.json              what cache.js stores beside the bytes (no request headers)
 *   <sha-256>/body-<ver>             the header's first bytes, or the index
 *   <sha-256>/range-<ver>-<start>-<length>   the range's bytes, then 8 bytes of digest per MiB
 *
 * Files are written under a temporary name and renamed, so a reader (another process too) sees
 * a whole file or none; bytes named by a version no reader asks for are deleted when an entry is
 * replaced. Only the user can read the folder (0700, files 0600): headers of gated models are in
 * it. A folder that another user could change is not trusted: the cache folder given is refused
 * when it is a symbolic link, another user's, or writable by others; an entry's folder or file
 * that is one is not read (links are never followed) and is dropped like any bad entry.
 */
import { createHash, randomBytes } from 'node:crypto'
import { constants, lstatSync } from 'node:fs'
import { lstat, mkdir, open as fsOpen, readdir, rename, rm, unlink, writeFile } from 'node:fs/promises'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { SafetensorsError } from '../errors.js'
import { CACHE_NAME } from './cache.js'
import { BLOCK } from './digest.js'

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
/** Opening a file never follows a link (no such flag on Windows). */
const NOFOLLOW = constants.O_NOFOLLOW ?? 0
/** Who owns what the cache trusts: this process's user (no uid on Windows, nothing checked). */
const UID = process.getuid?.()

/**
 * Why a folder is not the user's own, or null: a link, not a folder, another user's, or
 * writable by others. @param {import('node:fs').Stats} stat
 */
function notPrivate(stat) {
  if (stat.isSymbolicLink()) return 'is a symbolic link'
  if (!stat.isDirectory()) return 'is not a folder'
  if (UID === undefined) return null
  if (stat.uid !== UID) return 'belongs to another user'
  return stat.mode & 0o022 ? 'is writable by other users' : null
}

/** Throws when the folder at `path` is there and not private. @param {string} path */
async function trusted(path) {
  const why = notPrivate(await lstat(path))
  if (why) throw new Error(`${path} ${why}`)
}

/**
 * A file opened for reading without following a link, and its stat; only a regular file of the
 * user's. @param {string} path
 */
async function readPrivate(path) {
  const handle = await fsOpen(path, constants.O_RDONLY | NOFOLLOW)
  try {
    const stat = await handle.stat()
    if (!stat.isFile() || (UID !== undefined && stat.uid !== UID)) throw new Error(`${path} is not a file of the user's`)
    return { handle, stat }
  } catch (error) {
    await handle.close()
    throw error
  }
}

/**
 * @param {import('./cache.js').CacheOptions} options
 * @returns {import('./cache.js').CacheBackend}
 */
export function folderCache(options) {
  const root = options.dir ?? defaultCacheDir()
  let why = null
  try { why = notPrivate(lstatSync(root)) } catch { /* not there yet: made private */ }
  if (why) throw new SafetensorsError('InvalidArgument', `options.cache: the cache folder ${root} ${why}; ` +
    'give as dir a folder of your own that only you can write to')
  /** @param {string} key */
  const folder = (key) => join(root, sha256(key))

  /** Writes `bytes` (text, or pieces in order) to `path` through a temporary file in the same
   * folder. @param {string} path @param {Uint8Array[] | string} bytes */
  async function put(path, bytes) {
    const temp = `${path}.${randomBytes(6).toString('hex')}.tmp`
    try {
      await writeFile(temp, bytes, { mode: 0o600, flag: 'wx' })
      await rename(temp, path)
    } catch (error) {
      await unlink(temp).catch(() => {})
      throw error
    }
  }

  /** @param {string} at the entry's folder */
  async function ensure(at) {
    await mkdir(root, { recursive: true, mode: 0o700 })
    await trusted(root)
    await mkdir(at, { recursive: true, mode: 0o700 })
    await trusted(at)
  }

  /** A file of an entry, whole. @param {string} path */
  async function readWhole(path) {
    const { handle } = await readPrivate(path)
    try { return await handle.readFile() } finally { await handle.close() }
  }

  return {
    async hash(text) { return sha256(text) },
    async read(key) {
      const at = folder(key)
      try {
        await trusted(root)  // made a link since the open: not read through
        await trusted(at)
      } catch (error) {
        if (/** @type {any} */ (error)?.code === 'ENOENT') return null
        throw error
      }
      const meta = JSON.parse((await readWhole(join(at, 'meta.json'))).toString('utf8'))
      if (typeof meta?.ver !== 'string' || !/^[0-9a-f]+$/.test(meta.ver)) throw new Error('not an entry')
      const bytes = await readWhole(join(at, `body-${meta.ver}`))
      return { meta, bytes: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length) }
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
      await trusted(root)
      await trusted(folder(key))
      await put(join(folder(key), 'meta.json'), JSON.stringify(meta))
    },
    async drop(key) {
      await trusted(root)  // never empties a folder elsewhere that the cache folder became a link to
      await rm(folder(key), { recursive: true, force: true })
    },
    async ranges(key, ver) {
      const names = await readdir(folder(key)).catch(() => [])
      /** @type {import('./cache.js').StoredRange[]} */
      const found = []
      for (const name of names) {
        const m = /^range-([0-9a-f]+)-(\d+)-(\d+)$/.exec(name)
        if (m && m[1] === ver) found.push([Number(m[2]), Number(m[3])])
      }
      return found
    },
    async openRange(key, ver, [start, length]) {
      const { handle, stat } = await readPrivate(join(folder(key), `range-${ver}-${start}-${length}`))
      return {
        size: stat.size,
        async* stream(at, end) {
          while (at < end) {
            const piece = new Uint8Array(Math.min(BLOCK, end - at))
            for (let done = 0; done < piece.length;) {
              const { bytesRead } = await handle.read(piece, done, piece.length - done, at + done)
              if (bytesRead === 0) throw new Error(`the cached range ${start}+${length} is shorter than it says`)
              done += bytesRead
            }
            at += piece.length
            yield piece
          }
        },
        close: () => handle.close(),
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
      /** @param {Uint8Array} bytes */
      const whole = async (bytes) => {
        for (let done = 0; done < bytes.length;) done += (await handle.write(bytes, done, bytes.length - done)).bytesWritten
      }
      const discard = async () => {
        if (!closed) { closed = true; await handle.close().catch(() => {}) }
        await unlink(temp).catch(() => {})
      }
      return {
        async write(chunk) {
          await whole(chunk)
          n += chunk.length
        },
        async close(digests) {
          if (n !== length) {
            await discard()
            throw new Error(`${n} of ${length} bytes`)
          }
          await whole(digests).catch(async (error) => { await discard(); throw error })
          closed = true
          await handle.close()
          await rename(temp, path).catch(async (error) => { await discard(); throw error })
        },
        abort() { discard() },
      }
    },
  }
}

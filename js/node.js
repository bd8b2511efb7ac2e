/**
 * safetensors-wasm, Node entry: everything in index.js, plus file paths for `open`.
 */
import { readFile } from 'node:fs/promises'
import { dirname, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { SafetensorsError } from './errors.js'
import { openSource } from './file.js'
import { httpUrl, resolveUrl } from './http.js'
import { nodeFileSource } from './node-file.js'
import { openAny } from './open.js'
import { ShardedFile, openIndexUrl, openIndexWith, parseIndex } from './sharded.js'

export * from './index.js'
export { nodeFileSource } from './node-file.js'

/** @type {import('./open.js').Resolver} */
async function resolvePath(src) {
  if (src instanceof URL) {
    if (src.protocol !== 'file:') return null
    return { source: await nodeFileSource(fileURLToPath(src)), close: true }
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(src)) return null
  return { source: await nodeFileSource(src), close: true }
}

/**
 * A sharded set on disk: shards are files relative to the index's folder, and must stay in it.
 * @param {string} path
 * @param {import('./open.js').OpenOptions} options
 */
async function openIndexPath(path, options) {
  let text
  try {
    text = await readFile(path)
  } catch (error) {
    const e = /** @type {NodeJS.ErrnoException} */ (error)
    throw new SafetensorsError(e.code === 'ENOENT' ? 'NotFound' : 'IoError', `cannot open ${path}: ${e.message}`, { cause: error })
  }
  const index = parseIndex(text, path)
  const folder = resolve(dirname(path))
  return new ShardedFile(index, async (shard, signal) => {
    const full = resolve(folder, shard)
    if (!full.startsWith(folder + sep))
      throw new SafetensorsError('UnsafeShardPath', `${path}: shard ${JSON.stringify(shard)} resolves outside the index's folder`)
    const source = await nodeFileSource(full)
    try {
      return await openSource(source, { signal, closeSource: true })
    } catch (error) {
      await source.close?.()
      throw error
    }
  }, options)
}

/**
 * Opens a safetensors file: a path, a URL, a Blob, bytes or a ByteSource. A path or URL ending in
 * `.index.json` opens a sharded set (ShardedFile), and so does an index's content given with
 * `options.shards` (shards may then be paths too).
 * @param {string | URL | Blob | ArrayBuffer | ArrayBufferView | import('./sources.js').ByteSource} src
 * @param {import('./open.js').OpenOptions} [options]
 * @returns {Promise<import('./file.js').SafetensorsFile | ShardedFile>}
 */
export function open(src, options = {}) {
  if (options.shards !== undefined) return openIndexWith(src, options, [resolveUrl, resolvePath])
  const url = httpUrl(src)
  if (url) return url.pathname.endsWith('.index.json') ? openIndexUrl(url, options) : openAny(url, options, [resolveUrl])
  const path = typeof src === 'string' ? src : src instanceof URL && src.protocol === 'file:' ? fileURLToPath(src) : null
  if (path?.endsWith('.index.json')) return openIndexPath(path, options)
  return openAny(src, options, [resolvePath])
}
export { writeFile } from './node-write.js'
export { writeAwkward } from './awkward-node.js'

/**
 * safetensors-wasm, Node entry: everything in index.js, plus file paths for `open`.
 */
import { dirname, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { SafetensorsError } from './errors.js'
import { openSource } from './file.js'
import { nodeFileSource, openRegularFile } from './io/node-file.js'
import { folderCache } from './io/node-cache.js'
import { openKind, route } from './open.js'
import { ShardedFile, readIndex, shardMissing } from './sharded.js'

export * from './index.js'
export { nodeFileSource } from './io/node-file.js'

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
  const { handle, size } = await openRegularFile(path)
  let index
  try {
    index = await readIndex({
      byteLength: size,
      async read(offset, length) {
        const out = new Uint8Array(length)
        for (let at = 0; at < length;) {
          const { bytesRead } = await handle.read(out, at, length - at, offset + at)
          if (bytesRead === 0) throw new SafetensorsError('ShortRead', `${path}: read ${offset + at} of ${size} bytes`, { offset: offset + at })
          at += bytesRead
        }
        return out
      },
    }, path, options)
  } finally {
    await handle.close()
  }
  const folder = resolve(dirname(path))
  return new ShardedFile(index, async (shard, signal) => {
    const full = resolve(folder, shard)
    if (!full.startsWith(folder + sep))
      throw new SafetensorsError('UnsafeShardPath', `${path}: shard ${JSON.stringify(shard)} resolves outside the index's folder`)
    const source = await nodeFileSource(full).catch((error) => { throw shardMissing(error, shard, path) })
    try {
      return await openSource(source, { signal, closeSource: true })
    } catch (error) {
      await source.close?.()
      throw error
    }
  }, options)
}

/** Node: file paths (an `*.index.json` path opens a sharded set), the HF_* environment, and a
 * folder for the `cache` option. */
const NODE = /** @type {import('./open.js').Platform} */ ({
  resolvers: [resolvePath],
  indexAt(src) {
    const path = typeof src === 'string' ? src : src instanceof URL && src.protocol === 'file:' ? fileURLToPath(src) : null
    return path?.endsWith('.index.json') ? path : null
  },
  openIndex: openIndexPath,
  hubDefaults: () => ({ endpoint: process.env.HF_ENDPOINT || undefined, token: process.env.HF_TOKEN || undefined }),
  cacheBackend: folderCache,
})

/**
 * Opens a safetensors file: a path, a URL, a Blob, bytes or a ByteSource. A path or URL ending in
 * `.index.json` opens a sharded set (ShardedFile), and so does an index's content given with
 * `options.shards` (shards may then be paths too). `hf://org/repo[@revision][/path]` opens a
 * file of the Hugging Face Hub; HF_TOKEN and HF_ENDPOINT from the environment stand in for the
 * `token` and `endpoint` options when they are not given.
 * @param {string | URL | Blob | ArrayBuffer | ArrayBufferView | import('./io/sources.js').ByteSource} src
 * @param {import('./open.js').OpenOptions} [options]
 * @returns {Promise<import('./file.js').SafetensorsFile | ShardedFile>}
 */
export function open(src, options = {}) {
  return route(src, options, NODE)
}

/**
 * Opens one safetensors file (a path, a URL, a Blob, bytes, a ByteSource, a Hub file); a sharded
 * set is refused with KindMismatch, before it is read when its name ends in `.index.json`.
 * @param {string | URL | Blob | ArrayBuffer | ArrayBufferView | import('./io/sources.js').ByteSource} src
 * @param {import('./open.js').OpenOptions} [options]
 * @returns {Promise<import('./file.js').SafetensorsFile>}
 */
export function openFile(src, options = {}) {
  return openKind('file', src, options, NODE)
}

/**
 * Opens a sharded set: an `*.index.json` path or URL, a Hub repo holding one, or an index's
 * content with `options.shards`; one file is refused with KindMismatch.
 * @param {string | URL | Blob | ArrayBuffer | ArrayBufferView | import('./io/sources.js').ByteSource} src
 * @param {import('./open.js').OpenOptions} [options]
 * @returns {Promise<ShardedFile>}
 */
export function openSharded(src, options = {}) {
  return openKind('sharded', src, options, NODE)
}
export { writeFile } from './io/node-write.js'
export { writeAwkward } from './awkward/node.js'

/**
 * safetensors-wasm, Node entry: everything in index.js, plus file paths for `open`.
 */
import { openAny } from './open.js'
import { nodeFileSource } from './node-file.js'

export * from './index.js'
export { nodeFileSource } from './node-file.js'

/** @type {import('./open.js').Resolver} */
async function resolvePath(src) {
  if (src instanceof URL) {
    if (src.protocol !== 'file:') return null
    const { fileURLToPath } = await import('node:url')
    return { source: await nodeFileSource(fileURLToPath(src)), close: true }
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(src)) return null
  return { source: await nodeFileSource(src), close: true }
}

/**
 * Opens a safetensors file: a path, a URL, a Blob, bytes or a ByteSource.
 * @param {string | URL | Blob | ArrayBuffer | ArrayBufferView | import('./sources.js').ByteSource} src
 * @param {import('./open.js').OpenOptions} [options]
 */
export function open(src, options = {}) {
  return openAny(src, options, [resolvePath])
}
export { writeFile } from './node-write.js'

/**
 * safetensors-wasm, browser (and any platform) entry. Node adds file paths: see node.js.
 */
import { resolveUrl } from './io/http.js'
import { openKind, route } from './open.js'

export { SafetensorsError } from './errors.js'
export { ERROR_CODES, ERROR_INFO } from './error-codes.js'
export { SafetensorsFile } from './file.js'
export { ShardedFile } from './sharded.js'
export { Tensor } from './tensor.js'
export { bytesSource, blobSource } from './io/sources.js'
export { urlSource } from './io/http.js'
export { DTYPES } from './dtypes.js'

/** A page or a Worker: relative URLs resolve against it; only URLs are fetched by address. */
const BROWSER = /** @type {import('./open.js').Platform} */ ({
  resolvers: [resolveUrl],
  base: () => /** @type {{ href?: string } | undefined} */ (/** @type {any} */ (globalThis).location)?.href,
})

/**
 * Opens a safetensors file and parses its header; tensors are read on demand. A URL ending in
 * `.index.json` opens a sharded set (ShardedFile), and so does an index's content given with
 * `options.shards` (see openIndexWith). `hf://org/repo[@revision][/path]` opens a file of the
 * Hugging Face Hub (see io/hf.js). In a page, relative URLs resolve against it.
 * @param {string | URL | Blob | ArrayBuffer | ArrayBufferView | import('./io/sources.js').ByteSource} src
 * @param {import('./open.js').OpenOptions} [options]
 * @returns {Promise<import('./file.js').SafetensorsFile | import('./sharded.js').ShardedFile>}
 */
export function open(src, options = {}) {
  return route(src, options, BROWSER)
}

/**
 * Opens one safetensors file (a URL, a Blob, bytes, a ByteSource, a Hub file); a sharded set is
 * refused with KindMismatch, before it is read when its name ends in `.index.json`.
 * @param {string | URL | Blob | ArrayBuffer | ArrayBufferView | import('./io/sources.js').ByteSource} src
 * @param {import('./open.js').OpenOptions} [options]
 * @returns {Promise<import('./file.js').SafetensorsFile>}
 */
export function openFile(src, options = {}) {
  return openKind('file', src, options, BROWSER)
}

/**
 * Opens a sharded set: an `*.index.json` URL, a Hub repo holding one, or an index's content with
 * `options.shards`; one file is refused with KindMismatch.
 * @param {string | URL | Blob | ArrayBuffer | ArrayBufferView | import('./io/sources.js').ByteSource} src
 * @param {import('./open.js').OpenOptions} [options]
 * @returns {Promise<import('./sharded.js').ShardedFile>}
 */
export function openSharded(src, options = {}) {
  return openKind('sharded', src, options, BROWSER)
}
export { serialize, serializeStream } from './writer.js'
export { castTensor } from './cast.js'
// Awkward arrays (ak.to_safetensors files): f.awkward() reads, these write.
export { AwkwardArray } from './awkward/array.js'
export { fromValues, serializeAwkward } from './awkward/write.js'

/**
 * safetensors-wasm, browser (and any platform) entry. Node adds file paths: see node.js.
 */
import { openAny } from './open.js'

export { SafetensorsError } from './errors.js'
export { SafetensorsFile } from './file.js'
export { Tensor } from './tensor.js'
export { bytesSource, blobSource } from './sources.js'
export { DTYPES } from './dtypes.js'

/**
 * Opens a safetensors file and parses its header; tensors are read on demand.
 * @param {string | URL | Blob | ArrayBuffer | ArrayBufferView | import('./sources.js').ByteSource} src
 * @param {import('./open.js').OpenOptions} [options]
 */
export function open(src, options = {}) {
  return openAny(src, options, [])
}
export { serialize, serializeStream } from './writer.js'

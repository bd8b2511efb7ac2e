/**
 * writeAwkward for Node: fromValues, then writeFile (temporary file, renamed when complete).
 */
import { fromValues } from './write.js'
import { writeFile } from '../io/node-write.js'

/**
 * Writes the awkward array of `values` to `path` as ak.to_safetensors would.
 * @param {string} path
 * @param {Iterable<unknown>} values
 * @param {{ onProgress?: (p: { loaded: number, total: number }) => void }} [options]
 */
export function writeAwkward(path, values, options = {}) {
  const { tensors, metadata } = fromValues(values)
  return writeFile(path, tensors, { ...options, metadata })
}

/**
 * f.digest(name?, options): SHA-256 (lowercase hex) of a tensor's bytes, or with no name of a
 * whole file (the header too: what the Hub lists as a file's LFS oid), computed in wasm
 * (./sha256.js) as the bytes arrive: each piece f.chunks() (or, for the whole file, the raw
 * byte stream) hands out is hashed in place in the heap while the next one is read. One pass, the
 * heap holding two pieces at most, whatever the file's size.
 */
import { heapAlloc, heapFree, heapView, isHeapView } from '../core/index.js'
import { SafetensorsError } from '../errors.js'
import { RAW_CHUNKS } from '../file.js'
import { loadKernels } from '../quant/kernels.js'
import { loadCore } from '../wasm.js'
import { Sha256 } from './sha256.js'

/**
 * @typedef {import('../io/stream.js').ChunkOptions} DigestOptions
 * @typedef {import('../io/stream.js').Chunk} Chunk
 */

/**
 * @param {any} file a SafetensorsFile or ShardedFile (only its public API, and a single file's
 *   RAW_CHUNKS, are used)
 * @param {string} [name] a tensor; none: the whole file (a SafetensorsFile only)
 * @param {DigestOptions} [options] chunkBytes, signal, onProgress ({ loaded, total } in bytes)
 * @returns {Promise<string>} 64 lowercase hex digits
 */
export async function digest(file, name, options = {}) {
  const { chunkBytes, signal, onProgress } = options ?? {}
  const streaming = { chunkBytes, signal, onProgress }
  /** @type {AsyncIterable<Chunk>} */
  let chunks
  if (name === undefined) {
    if (!(RAW_CHUNKS in file)) {
      throw new SafetensorsError('InvalidArgument', 'a sharded set has one SHA-256 per shard file: name a tensor ' +
        'for the digest of its bytes, or digest each shard: (await f.shard(path)).digest()')
    }
    chunks = file[RAW_CHUNKS](0, file.byteLength, streaming)
  } else if (typeof name !== 'string') {
    throw new SafetensorsError('InvalidArgument', `digest takes a tensor's name, or none for the whole file, got ${typeof name}`)
  } else {
    chunks = file.chunks(name, streaming)
  }
  const core = await loadCore()
  const hash = new Sha256(core, await loadKernels(core))
  // Pieces from outside this core's heap (a file on another build of the core) are copied in.
  let scratch = 0
  let scratchBytes = 0
  try {
    for await (const { data } of chunks) {
      if (isHeapView(core, data)) {
        hash.update(data.byteOffset, data.byteLength)
        continue
      }
      if (scratchBytes < data.byteLength) {
        if (scratch) heapFree(core, scratch)
        scratch = 0
        scratch = heapAlloc(core, data.byteLength)
        scratchBytes = data.byteLength
      }
      heapView(core, scratch, data.byteLength).set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength))
      hash.update(scratch, data.byteLength)
    }
    return hash.hex()
  } finally {
    hash.free()
    if (scratch) heapFree(core, scratch)
  }
}

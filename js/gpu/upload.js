/**
 * Tensors into WebGPU buffers, streamed: each tensor comes from its source through the heap
 * window of f.chunks() (two chunks) and goes, chunk by chunk, to device.queue.writeBuffer, which
 * copies the heap view it is given. No tensor is ever whole in the heap or in JS memory. Loaded
 * on first use by f.toGPU() (js/file.js, js/sharded.js), with the file's public API alone.
 *
 *   const buffers = await f.toGPU(device, ['model.embed_tokens.weight'], { dtype: 'F32' })
 *
 * - Default: the stored bytes. dtype 'F32' or 'F16': each chunk cast in the core on the way
 *   (js/cast.js castChunks: the same rounding as cast()); the source chunk is made smaller so that
 *   it and its cast stay within two chunks of heap.
 * - A weight f.quantized() lists (by its logical name): dequantized by pieces of rows
 *   (f.dequantize(name, { slice })), each piece about chunkBytes of float32, uploaded as F32 (or
 *   cast to F16).
 * - Buffers: padded to a multiple of 4 bytes (the padding is zero), at least 4 bytes; usage
 *   STORAGE | COPY_DST | COPY_SRC by default, COPY_DST always added (writeBuffer needs it).
 *   Every tensor's size is checked against the device's limits before a byte is read.
 * - On any failure or abort, every buffer made so far is destroyed.
 */
import { castChunks } from '../cast.js'
import { DTYPE_BITS, elementCount } from '../dtypes.js'
import { SafetensorsError, throwIfAborted } from '../errors.js'
import { loadCore } from '../wasm.js'

/** GPUBufferUsage's flags (the global exists only where WebGPU does). */
export const BUFFER_USAGE = Object.freeze({
  MAP_READ: 0x1, MAP_WRITE: 0x2, COPY_SRC: 0x4, COPY_DST: 0x8, INDEX: 0x10, VERTEX: 0x20, UNIFORM: 0x40,
  STORAGE: 0x80, INDIRECT: 0x100, QUERY_RESOLVE: 0x200,
})
export const DEFAULT_USAGE = BUFFER_USAGE.STORAGE | BUFFER_USAGE.COPY_DST | BUFFER_USAGE.COPY_SRC
const DEFAULT_CHUNK_BYTES = 4 << 20
/** The dtypes an upload converts to (WebGPU has f32 and, with shader-f16, f16; no bf16). */
const GPU_DTYPES = ['F32', 'F16']
/** The code of a tensor the device cannot hold in one buffer. */
const LIMIT_CODE = 'DeviceLimitExceeded'

/**
 * @typedef {{ dtype?: 'F32' | 'F16', usage?: number, chunkBytes?: number, signal?: AbortSignal,
 *   onProgress?: (p: { loaded: number, total: number, name: string }) => void }} ToGPUOptions
 *   onProgress: bytes written to the GPU (unpadded) over all the tensors, and the tensor in hand
 * @typedef {{ name: string, dtype: string, shape: any[] }} Info
 * @typedef {{ name: string, quantized: boolean, from: string, to: string, elements: number, byteLength: number,
 *   size: number, rank: number, inner: number, rows: number }} Plan
 * @typedef {{ names: string[], info: (name: string, options?: any) => Info | Promise<Info>,
 *   quantized: () => any[] | Promise<any[]>, chunks: (name: string, options?: any) => AsyncIterable<{ offset: number, data: any }>,
 *   dequantize: (name: string, options?: any) => Promise<any> }} FileLike
 */

/**
 * Uploads tensors to new GPUBuffers, each streamed through the heap. `names` undefined: every
 * quantized weight by its logical name and every tensor that is not a part of one.
 * @param {FileLike} file a SafetensorsFile or ShardedFile
 * @param {any} device a GPUDevice
 * @param {Iterable<string> | undefined} names
 * @param {ToGPUOptions} [options]
 * @returns {Promise<Map<string, any>>} name -> GPUBuffer, in the order of `names`
 */
export async function toGPU(file, device, names, options = {}) {
  const { signal, onProgress } = options
  if (typeof device?.createBuffer !== 'function' || typeof device?.queue?.writeBuffer !== 'function' || !device.limits)
    throw new SafetensorsError('InvalidArgument', 'toGPU needs a GPUDevice (from adapter.requestDevice())')
  if (options.dtype !== undefined && !GPU_DTYPES.includes(options.dtype))
    throw new SafetensorsError('InvalidArgument', `dtype is 'F32' or 'F16' (or omitted for the stored bytes), got ${JSON.stringify(options.dtype)}`)
  const usage = (options.usage ?? DEFAULT_USAGE) | BUFFER_USAGE.COPY_DST
  if (!Number.isInteger(options.usage ?? 0) || usage < 0 || usage > 0x3ff)
    throw new SafetensorsError('InvalidArgument', `usage is a GPUBufferUsage bit set, got ${options.usage}`)
  const chunkBytes = options.chunkBytes ?? DEFAULT_CHUNK_BYTES
  if (!Number.isInteger(chunkBytes) || chunkBytes < 16)
    throw new SafetensorsError('InvalidArgument', `chunkBytes must be an integer of at least 16, got ${options.chunkBytes}`)
  throwIfAborted(signal)
  const core = await loadCore()
  const weights = await file.quantized()
  const byLogical = new Map(weights.map((w) => [w.name, w]))
  const list = names === undefined ? defaultNames(file.names, weights) : [...new Set(names)]

  // Every tensor planned and checked before a byte is read.
  /** @type {Plan[]} */
  const plans = []
  for (const name of list) {
    if (typeof name !== 'string') throw new SafetensorsError('InvalidArgument', `names are strings, got ${String(name)}`)
    const weight = byLogical.get(name)
    const info = weight ? { dtype: 'F32', shape: weight.shape } : await file.info(name, { signal })
    const from = info.dtype
    const to = options.dtype ?? from
    const elements = elementCount(info.shape)
    if (from !== to) checkCast(core, from, to, name)
    const byteLength = Math.ceil((elements * DTYPE_BITS[to]) / 8)
    const size = Math.max(4, Math.ceil(byteLength / 4) * 4)
    checkLimits(device.limits, usage, size, name)
    const rows = info.shape.length === 0 ? 1 : Number(info.shape[0])
    plans.push({ name, quantized: weight !== undefined, from, to, elements, byteLength, size, rank: info.shape.length, rows, inner: rows === 0 ? 0 : elements / rows })
  }

  const total = plans.reduce((n, p) => n + p.byteLength, 0)
  let loaded = 0
  /** @type {Map<string, any>} */
  const buffers = new Map()
  try {
    for (const plan of plans) {
      throwIfAborted(signal)
      const buffer = device.createBuffer({ label: plan.name, size: plan.size, usage })
      buffers.set(plan.name, buffer)
      const out = writer(device.queue, buffer, (n) => {
        loaded += n
        onProgress?.({ loaded, total, name: plan.name })
      })
      if (plan.quantized) await uploadDequantized(core, file, plan, out, chunkBytes, signal)
      else await uploadStored(core, file, plan, out, chunkBytes, signal)
      out.end()
    }
  } catch (error) {
    for (const buffer of buffers.values()) buffer.destroy()
    throw error
  }
  return buffers
}

/**
 * The tensor's stored bytes, cast chunk by chunk when `to` differs. A cast's source chunks are
 * cut so that a source chunk, the float32 step (for a cast to F16 from another type) and the
 * output fit in two chunks together with the chunk being read meanwhile.
 * @param {any} core @param {FileLike} file @param {Plan} plan @param {Writer} out
 * @param {number} chunkBytes @param {AbortSignal | undefined} signal
 */
async function uploadStored(core, file, plan, out, chunkBytes, signal) {
  const { from, to } = plan
  if (from === to) {
    for await (const { data } of file.chunks(plan.name, { chunkBytes, signal })) out.write(data)
    return
  }
  const inBits = DTYPE_BITS[from]
  const outBits = DTYPE_BITS[to]
  const midBits = to === 'F16' && from !== 'F32' ? 32 : 0
  // Two source chunks of S bytes and S/inBits elements' worth of float32 and output: 2C in all.
  const source = Math.floor((2 * chunkBytes * inBits) / (2 * inBits + outBits + midBits))
  const sourceBytes = Math.max(8, source - (source % 8))
  for await (const { data } of file.chunks(plan.name, { chunkBytes: sourceBytes, signal })) {
    const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
    const n = (bytes.byteLength * 8) / inBits
    // castChunks allocates its scratch, which may grow the heap: it reads `bytes` by address.
    for (const piece of castChunks(core, bytes, from, to, n)) out.write(piece)
  }
}

/**
 * A quantized weight dequantized by pieces of leading rows (about chunkBytes of float32 each),
 * each piece uploaded (cast to F16 when asked) and disposed before the next.
 * @param {any} core @param {FileLike} file @param {Plan} plan @param {Writer} out
 * @param {number} chunkBytes @param {AbortSignal | undefined} signal
 */
async function uploadDequantized(core, file, plan, out, chunkBytes, signal) {
  const step = Math.max(1, Math.floor(chunkBytes / Math.max(4, plan.inner * 4)))
  for (let r0 = 0; r0 < plan.rows; r0 += step) {
    throwIfAborted(signal)
    const r1 = Math.min(plan.rows, r0 + step)
    // A rank-0 weight has no rows to slice: it is one value.
    const piece = await file.dequantize(plan.name, plan.rank === 0 ? { signal } : { signal, slice: [r0, r1] })
    try {
      if (plan.to === 'F32') out.write(piece.data)
      else for (const half of castChunks(core, piece.bytes, 'F32', plan.to, piece.elementCount)) out.write(half)
    } finally {
      piece.dispose()
    }
  }
}

/**
 * @typedef {{ write: (view: ArrayBufferView) => void, end: () => void }} Writer
 * Bytes appended to a GPU buffer in order, by writeBuffer straight from the view (WebGPU copies
 * it before returning). writeBuffer wants offsets and sizes in multiples of 4: a chunk whose
 * length is not leaves its last 1 to 3 bytes for the next (or, at the end, padded with zeros).
 * @param {any} queue @param {any} buffer @param {(bytes: number) => void} progress
 * @returns {Writer}
 */
function writer(queue, buffer, progress) {
  let at = 0
  const tail = new Uint8Array(4)
  let held = 0
  return {
    write(view) {
      const bytes = view instanceof Uint8Array ? view : new Uint8Array(view.buffer, view.byteOffset, view.byteLength)
      let start = 0
      if (held > 0) {
        start = Math.min(4 - held, bytes.byteLength)
        tail.set(bytes.subarray(0, start), held)
        held += start
        if (held === 4) {
          queue.writeBuffer(buffer, at, tail)
          at += 4
          held = 0
        }
      }
      const rest = bytes.byteLength - start
      const aligned = rest - (rest % 4)
      if (aligned > 0) queue.writeBuffer(buffer, at, bytes, start, aligned)
      at += aligned
      if (rest > aligned) {
        tail.set(bytes.subarray(start + aligned), 0)
        held = rest - aligned
      }
      progress(bytes.byteLength)
    },
    end() {
      if (held === 0) return
      tail.fill(0, held)
      queue.writeBuffer(buffer, at, tail)
      at += 4
      held = 0
    },
  }
}

/**
 * Refuses, before reading, a cast js/cast.js would refuse (C64, F6, 32/64-bit integers to F16...).
 * @param {any} core @param {string} from @param {string} to @param {string} name
 */
function checkCast(core, from, to, name) {
  try {
    castChunks(core, new Uint8Array(0), from, to, 0).next()
  } catch (error) {
    const e = /** @type {SafetensorsError} */ (error)
    throw new SafetensorsError(e.code ?? 'UnsupportedDtype', `${JSON.stringify(name)}: ${e.message}`, { tensor: name })
  }
}

/**
 * @param {Record<string, number>} limits GPUSupportedLimits @param {number} usage @param {number} size
 * @param {string} name
 */
function checkLimits(limits, usage, size, name) {
  const checks = [['maxBufferSize', true], ['maxStorageBufferBindingSize', (usage & BUFFER_USAGE.STORAGE) !== 0],
    ['maxUniformBufferBindingSize', (usage & BUFFER_USAGE.UNIFORM) !== 0]]
  for (const [limit, applies] of /** @type {[string, boolean][]} */ (checks)) {
    const max = limits[limit]
    if (!applies || !(size > max)) continue
    throw new SafetensorsError(LIMIT_CODE, `${JSON.stringify(name)} needs a ${size}-byte buffer, over the device's ${limit} ` +
      `(${max}): request a device with a higher limit (adapter.requestDevice({ requiredLimits: { ${limit}: ` +
      'adapter.limits.' + limit + ' } }) if the adapter allows more), or upload slices through f.chunks()', { tensor: name })
  }
}

/**
 * Every quantized weight by its logical name, in the order of the stored names, then the stored
 * tensors that are not parts of one.
 * @param {string[]} stored @param {{ name: string, parts: Record<string, string> }[]} weights
 */
function defaultNames(stored, weights) {
  const parts = new Map()
  for (const w of weights) for (const part of Object.values(w.parts)) if (part) parts.set(part, w.name)
  /** @type {Set<string>} */
  const names = new Set()
  for (const name of stored) names.add(parts.get(name) ?? name)
  for (const w of weights) names.add(w.name)
  return [...names]
}

/**
 * Writing safetensors files. The C++ core plans the layout and writes the header bytes (the
 * reference's exact bytes); tensor data never passes through the core: `serialize` copies each
 * tensor once into the exact-size output, `serializeStream` hands out the caller's own bytes.
 */
import { dtypeIndex } from './dtypes.js'
import { SafetensorsError, fromCoreError } from './errors.js'
import { Tensor } from './tensor.js'
import { heapAlloc, heapView, loadCore } from './wasm.js'

/**
 * @typedef {ArrayBufferView | ArrayBuffer} TensorData
 * @typedef {{ dtype: string, shape: ArrayLike<number | bigint>, data: TensorData }} TensorLike
 * @typedef {Record<string, TensorLike> | Map<string, TensorLike | Tensor> | Iterable<[string, TensorLike | Tensor]> | Iterable<Tensor>} TensorsInput
 * @typedef {{ metadata?: Record<string, string> | Map<string, string> | null }} WriteOptions
 * @typedef {{ name: string, dtype: string, shape: (number | bigint)[], byteLength: number }} PlanEntry
 * @typedef {PlanEntry & { bytes: () => Uint8Array }} Entry
 */

const encoder = /* @__PURE__ */ new TextEncoder()

/**
 * @param {string} name
 * @param {TensorLike | Tensor} value
 * @returns {Entry}
 */
function toEntry(name, value) {
  if (typeof name !== 'string') {
    throw new SafetensorsError('InvalidArgument', `a tensor name is ${typeof name === 'symbol' ? String(name) : typeof name}, ` +
      'not a string')
  }
  if (value instanceof Tensor) {
    return { name, dtype: value.dtype, shape: [...value.shape], byteLength: value.byteLength, bytes: () => value.bytes }
  }
  if (typeof value !== 'object' || value === null)
    throw new SafetensorsError('InvalidHeaderDeserialization', `tensor ${JSON.stringify(name)} is not { dtype, shape, data }`, { tensor: name })
  const { data, shape } = value
  if (shape === undefined || shape === null || typeof shape !== 'object' || typeof shape.length !== 'number') {
    throw new SafetensorsError('InvalidArgument', `tensor ${JSON.stringify(name)} has no shape (an array of ` +
      'dimensions; [] for a scalar)', { tensor: name })
  }
  /** @type {Uint8Array} */
  let bytes
  try {
    if (data instanceof ArrayBuffer) bytes = new Uint8Array(data)
    else if (ArrayBuffer.isView(data)) bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
    else throw new SafetensorsError('TensorInvalidInfo', `data of tensor ${JSON.stringify(name)} is not a TypedArray, DataView or ArrayBuffer`, { tensor: name })
  } catch (error) {
    if (error instanceof SafetensorsError) throw error
    // A detached buffer (transferred to a Worker, say) cannot be viewed.
    throw new SafetensorsError('InvalidArgument', `data of tensor ${JSON.stringify(name)} cannot be read: its buffer ` +
      'is detached (transferred with postMessage?)', { tensor: name, cause: error })
  }
  return { name, dtype: value.dtype, shape: Array.from(shape), byteLength: bytes.byteLength, bytes: () => bytes }
}

/**
 * @param {TensorsInput} tensors
 * @returns {Entry[]}
 */
export function toEntries(tensors) {
  /** @type {Entry[]} */
  const entries = []
  if (tensors === null || tensors === undefined) {
    throw new SafetensorsError('InvalidArgument', `tensors is ${tensors}: give an object, a Map or an iterable of tensors`)
  }
  if (tensors instanceof Map) {
    for (const [name, value] of tensors) entries.push(toEntry(name, value))
  } else if (typeof (/** @type {any} */ (tensors))[Symbol.iterator] === 'function') {
    for (const item of /** @type {Iterable<any>} */ (tensors)) {
      if (item instanceof Tensor) entries.push(toEntry(item.name, item))
      else if (Array.isArray(item) && item.length === 2) entries.push(toEntry(item[0], item[1]))
      else throw new SafetensorsError('InvalidArgument', 'an iterable of tensors holds Tensor objects or [name, tensor] pairs')
    }
  } else if (typeof tensors === 'object' && tensors !== null) {
    for (const [name, value] of Object.entries(tensors)) entries.push(toEntry(name, value))
  } else {
    throw new SafetensorsError('InvalidArgument', 'tensors must be an object, a Map or an iterable')
  }
  return entries
}

/**
 * Where `text` holds a lone UTF-16 surrogate (one with no UTF-8 form: TextEncoder would write
 * U+FFFD in its place, a different string from the one given), or null.
 * @param {string} text
 * @returns {{ index: number, unit: string } | null}
 */
export function loneSurrogate(text) {
  const lone = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.exec(text)
  return lone && { index: lone.index, unit: `U+${lone[0].charCodeAt(0).toString(16).toUpperCase()}` }
}

/**
 * UTF-8 of a name, key or value; a lone surrogate is refused rather than replaced.
 * @param {string} text
 * @param {string} what
 * @param {string} [tensor]
 */
function utf8(text, what, tensor) {
  const lone = loneSurrogate(text)
  if (lone) {
    throw new SafetensorsError('InvalidHeader',
      `${what} ${JSON.stringify(text)} is not valid Unicode: a lone surrogate ${lone.unit} at index ${lone.index} has no UTF-8 form`,
      tensor === undefined ? {} : { tensor })
  }
  return encoder.encode(text)
}

/**
 * A flat heap layout of the tensor table for st::WritePlanner (see writer.hpp FlatWriteInput).
 * @param {PlanEntry[]} entries
 * @param {Record<string, string> | null | undefined} metadata
 */
function flatten(entries, metadata) {
  const names = entries.map((e) => utf8(e.name, 'tensor name', e.name))
  const dtypes = entries.map((e) => {
    const i = dtypeIndex(e.dtype)
    if (i < 0) throw new SafetensorsError('InvalidHeaderDeserialization', `tensor ${JSON.stringify(e.name)} has unknown dtype ${JSON.stringify(e.dtype)}`, { tensor: e.name })
    return i
  })
  const dims = []
  for (const e of entries) {
    for (const d of e.shape) {
      const ok = typeof d === 'bigint' ? d >= 0n && d < 2n ** 64n : Number.isSafeInteger(d) && d >= 0
      if (!ok) throw new SafetensorsError('InvalidHeaderDeserialization', `tensor ${JSON.stringify(e.name)} has dimension ${String(d)}: dimensions are non-negative integers`, { tensor: e.name })
      dims.push(BigInt(d))
    }
  }
  /** @type {Uint8Array[]} */
  const metaStrings = []
  if (metadata) {
    for (const [k, v] of Object.entries(metadata)) {
      if (typeof v !== 'string') throw new SafetensorsError('InvalidHeaderDeserialization', `metadata value of ${JSON.stringify(k)} is ${typeof v}, not a string`)
      metaStrings.push(utf8(k, 'metadata key'), utf8(v, `metadata value of ${JSON.stringify(k)}`))
    }
  }
  return { names, dtypes, dims, metaStrings }
}

/**
 * Metadata as a plain object: a plain object as it is, a Map of strings to strings turned into
 * one; anything else (an array, a Set, a class instance, whose entries Object.entries would not
 * see) is refused rather than written as {}.
 * @param {unknown} metadata
 * @returns {Record<string, string> | null | undefined}
 */
function plainMetadata(metadata) {
  if (metadata === undefined || metadata === null) return metadata
  if (metadata instanceof Map) {
    for (const key of metadata.keys()) {
      if (typeof key !== 'string') {
        throw new SafetensorsError('InvalidHeaderDeserialization', `a metadata key is ${typeof key === 'symbol' ? String(key) : typeof key}, not a string`)
      }
    }
    return Object.fromEntries(metadata)
  }
  const proto = typeof metadata === 'object' ? Object.getPrototypeOf(metadata) : undefined
  if (proto !== Object.prototype && proto !== null) {
    throw new SafetensorsError('InvalidHeaderDeserialization', 'metadata must be an object or a Map of strings to strings, ' +
      `or null, not ${Array.isArray(metadata) ? 'an array' : typeof metadata === 'object' ? proto?.constructor?.name ?? 'an object' : typeof metadata}`)
  }
  return /** @type {Record<string, string>} */ (metadata)
}

/**
 * Plans the file: header bytes (a JS copy), the write order, and the file length. Only the
 * entries' names, dtypes, shapes and byte lengths are used: their bytes may come later.
 * @template {PlanEntry} E
 * @param {E[]} entries
 * @param {WriteOptions['metadata']} metadata
 * @returns {Promise<{ header: Uint8Array, order: E[], fileLength: number }>}
 */
export async function planFile(entries, metadata) {
  const plain = plainMetadata(metadata)
  const core = await loadCore()
  const { names, dtypes, dims, metaStrings } = flatten(entries, plain)
  const n = entries.length
  const nameBytes = names.reduce((s, b) => s + b.length, 0)
  const metaBytes = metaStrings.reduce((s, b) => s + b.length, 0)
  // One block: 8-byte arrays first so every array is aligned to its element size.
  const layout = { dims: 0, byteLengths: dims.length * 8 }
  const nameLengthsAt = layout.byteLengths + n * 8
  const ranksAt = nameLengthsAt + n * 4
  const metaLengthsAt = ranksAt + n * 4
  const dtypesAt = metaLengthsAt + metaStrings.length * 4
  const namesAt = dtypesAt + n
  const metaAt = namesAt + nameBytes
  const size = metaAt + metaBytes
  const block = heapAlloc(core, size)
  const planner = core.writePlannerNew()
  try {
    const buffer = core.HEAPU8.buffer
    const dimView = new BigUint64Array(buffer, block, dims.length)
    dims.forEach((d, i) => { dimView[i] = d })
    const lengths = new Float64Array(n)
    const lenView = new BigUint64Array(buffer, block + layout.byteLengths, n)
    entries.forEach((e, i) => { lenView[i] = BigInt(e.byteLength); lengths[i] = e.byteLength })
    new Uint32Array(buffer, block + nameLengthsAt, n).set(names.map((b) => b.length))
    new Uint32Array(buffer, block + ranksAt, n).set(entries.map((e) => e.shape.length))
    new Uint32Array(buffer, block + metaLengthsAt, metaStrings.length).set(metaStrings.map((b) => b.length))
    new Uint8Array(buffer, block + dtypesAt, n).set(dtypes)
    let at = block + namesAt
    for (const b of names) { new Uint8Array(buffer, at, b.length).set(b); at += b.length }
    at = block + metaAt
    for (const b of metaStrings) { new Uint8Array(buffer, at, b.length).set(b); at += b.length }
    const ok = core.writePlannerPlan(planner, n, block + namesAt, block + nameLengthsAt, block + dtypesAt, block + ranksAt,
      block, block + layout.byteLengths, plain !== undefined && plain !== null, metaStrings.length / 2,
      block + metaAt, block + metaLengthsAt)
    if (!ok) throw fromCoreError(core.writePlannerError(planner))
    const header = heapView(core, core.writePlannerHeader(planner), core.writePlannerHeaderLength(planner)).slice()
    const orderView = new Uint32Array(core.HEAPU8.buffer, core.writePlannerOrder(planner), n)
    const order = Array.from(orderView, (i) => entries[i])
    return { header, order, fileLength: core.writePlannerFileLength(planner) }
  } finally {
    core.writePlannerDelete(planner)
    core._free(block)
  }
}

/**
 * Serializes tensors to one Uint8Array of exactly the file's size; each tensor's bytes are
 * copied once, into it.
 * @param {TensorsInput} tensors
 * @param {WriteOptions} [options]
 * @returns {Promise<Uint8Array>}
 */
export async function serialize(tensors, options = {}) {
  const { header, order, fileLength } = await planFile(toEntries(tensors), options.metadata)
  const out = new Uint8Array(fileLength)
  out.set(header, 0)
  let at = header.length
  for (const e of order) {
    out.set(e.bytes(), at)
    at += e.byteLength
  }
  return out
}

/**
 * A stream of the file: the header, then each tensor's own bytes as they are (no copy).
 * Validation happens before the stream is returned: a bad input rejects here, not mid-stream.
 * The caller must keep the tensors' buffers unchanged until the stream is consumed.
 * @param {TensorsInput} tensors
 * @param {WriteOptions} [options]
 * @returns {Promise<ReadableStream<Uint8Array>>}
 */
export async function serializeStream(tensors, options = {}) {
  const { header, order } = await planFile(toEntries(tensors), options.metadata)
  let next = -1
  return new ReadableStream({
    pull(controller) {
      if (next === -1) {
        controller.enqueue(header)
        next = 0
        return
      }
      // Every pull must enqueue or close: a pull that does neither is never called again and
      // the stream stalls. Zero-size tensors add no bytes, so they are skipped here.
      while (next < order.length && order[next].byteLength === 0) next++
      if (next === order.length) {
        controller.close()
        return
      }
      const e = order[next++]
      // Heap tensors' views are taken here, at the moment they are handed out.
      const bytes = e.bytes()
      if (bytes.byteLength !== e.byteLength) {
        controller.error(new SafetensorsError('TensorInvalidInfo', `data of tensor ${JSON.stringify(e.name)} changed size (detached?) while streaming`, { tensor: e.name }))
        return
      }
      controller.enqueue(bytes)
    },
  }, { highWaterMark: 0 })
}

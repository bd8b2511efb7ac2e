/**
 * Writing safetensors files. The C++ core plans the layout and writes the header bytes (the
 * reference's exact bytes); tensor data never passes through the core: `serialize` copies each
 * tensor once into the exact-size output, `serializeStream` hands out the caller's own bytes.
 */
import { planWrite } from './core/index.js'
import { dtypeIndex } from './dtypes.js'
import { SafetensorsError } from './errors.js'
import { Tensor } from './tensor.js'
import { loadCore } from './wasm.js'

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
 * The plan's input for js/core/ planWrite: names, keys and values as UTF-8, dimensions as
 * BigInts, everything checked that JS checks (in this order: names, dtypes, dimensions,
 * metadata values).
 * @param {PlanEntry[]} entries
 * @param {Record<string, string> | null | undefined} metadata
 */
function flatten(entries, metadata) {
  const names = entries.map((e) => utf8(e.name, 'tensor name', e.name))
  for (const e of entries) {
    if (dtypeIndex(e.dtype) < 0)
      throw new SafetensorsError('InvalidHeaderDeserialization', `tensor ${JSON.stringify(e.name)} has unknown dtype ${JSON.stringify(e.dtype)}`, { tensor: e.name })
  }
  const shapes = entries.map((e) => Array.from(e.shape, (d) => {
    const ok = typeof d === 'bigint' ? d >= 0n && d < 2n ** 64n : Number.isSafeInteger(d) && d >= 0
    if (!ok) throw new SafetensorsError('InvalidHeaderDeserialization', `tensor ${JSON.stringify(e.name)} has dimension ${String(d)}: dimensions are non-negative integers`, { tensor: e.name })
    return BigInt(d)
  }))
  /** @type {Uint8Array[] | null} */
  let metaStrings = null
  if (metadata !== undefined && metadata !== null) {
    metaStrings = []
    for (const [k, v] of Object.entries(metadata)) {
      if (typeof v !== 'string') throw new SafetensorsError('InvalidHeaderDeserialization', `metadata value of ${JSON.stringify(k)} is ${typeof v}, not a string`)
      metaStrings.push(utf8(k, 'metadata key'), utf8(v, `metadata value of ${JSON.stringify(k)}`))
    }
  }
  const tensors = entries.map((e, i) => ({ name: names[i], dtype: e.dtype, shape: shapes[i], byteLength: e.byteLength }))
  return { tensors, metaStrings }
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
  const { tensors, metaStrings } = flatten(entries, plain)
  const { header, order, fileLength } = planWrite(core, tensors, metaStrings)
  return { header, order: order.map((i) => entries[i]), fileLength }
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

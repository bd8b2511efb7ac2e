/**
 * Reading entries of an awkward array stored by ak.to_safetensors: each node turns a range of
 * its entries into plain JS values, reading only the elements of its buffers that the range
 * needs (with SafetensorsFile.slice, which fetches only those bytes), and asking the C++ core
 * (st::AwkwardReader) to validate every offsets/starts/stops/index/tags element it reads
 * before using it as a position. Ranges of a content are derived from validated values, so no
 * read ever goes past a buffer.
 */
import { heapArray, heapView } from '../core/index.js'
import { DTYPE_BITS } from '../dtypes.js'
import { SafetensorsError } from '../errors.js'
import { limiter } from '../io/pool.js'

/**
 * @typedef {import('../file.js').SafetensorsFile} SafetensorsFile
 * @typedef {import('../core/awkward.js').AwkwardForm} AwkwardForm
 * @typedef {import('../core/index.js').Core} Core
 * @typedef {import('../io/reader.js').ReadOptions} ReadOptions
 * @typedef {{ class: string, form_key: string | null, parameters: Record<string, any>,
 *   primitive?: string, dtype?: string, inner_shape?: number[], size?: number,
 *   fields?: string[] | null, valid_when?: boolean, lsb_order?: boolean,
 *   buffers: Record<string, string>, contents: number[], capacity: number | null,
 *   [attribute: string]: any }} AkNode  one node of st::akFormTreeJson
 */

const utf8 = /* @__PURE__ */ new TextDecoder('utf-8')

// Reads in flight at once per array: a record of many fields must not open a request per field
// all at the same moment on a remote file.
const MAX_CONCURRENT_READS = 6

/** IEEE half to double, exactly. @param {number} h */
function halfToNumber(h) {
  const sign = h & 0x8000 ? -1 : 1
  const exponent = (h >> 10) & 0x1f
  const mantissa = h & 0x3ff
  if (exponent === 0) return sign * mantissa * 2 ** -24
  if (exponent === 31) return mantissa ? NaN : sign * Infinity
  return sign * (1 + mantissa / 1024) * 2 ** (exponent - 15)
}

/** int64/uint64 as ak.to_list would give them, in JS: a Number when exact, else a BigInt. @param {bigint} v */
function bigToValue(v) {
  return v >= -9007199254740991n && v <= 9007199254740991n ? Number(v) : v
}

/**
 * Plain values of `count` elements of `dtype` at heap address `ptr`.
 * @param {Core} core @param {string} dtype @param {number} ptr @param {number} count
 * @returns {any[]}
 */
function decode(core, dtype, ptr, count) {
  switch (dtype) {
    case 'BOOL': return Array.from(heapArray(core, Uint8Array, ptr, count), (v) => v !== 0)
    case 'I8': return Array.from(heapArray(core, Int8Array, ptr, count))
    case 'U8': return Array.from(heapArray(core, Uint8Array, ptr, count))
    case 'I16': return Array.from(heapArray(core, Int16Array, ptr, count))
    case 'U16': return Array.from(heapArray(core, Uint16Array, ptr, count))
    case 'I32': return Array.from(heapArray(core, Int32Array, ptr, count))
    case 'U32': return Array.from(heapArray(core, Uint32Array, ptr, count))
    case 'I64': return Array.from(heapArray(core, BigInt64Array, ptr, count), bigToValue)
    case 'U64': return Array.from(heapArray(core, BigUint64Array, ptr, count), bigToValue)
    case 'F16': return Array.from(heapArray(core, Uint16Array, ptr, count), halfToNumber)
    case 'F32': return Array.from(heapArray(core, Float32Array, ptr, count))
    case 'F64': return Array.from(heapArray(core, Float64Array, ptr, count))
    case 'C64': {
      const v = heapArray(core, Float32Array, ptr, count * 2)
      return Array.from({ length: count }, (_, i) => ({ re: v[2 * i], im: v[2 * i + 1] }))
    }
    default: throw new SafetensorsError('AwkwardUnsupportedType', `awkward: no values for dtype ${dtype}`)
  }
}

/**
 * Splits a flat list into `n` entries of the given inner shape (row-major).
 * @param {any[]} flat @param {number} n @param {number[]} shape
 * @returns {any[]}
 */
function reshape(flat, n, shape) {
  if (shape.length === 0) return flat
  const per = shape.reduce((a, b) => a * b, 1)
  const out = []
  for (let i = 0; i < n; i++) out.push(reshape(flat.slice(i * per, (i + 1) * per), shape[0], shape.slice(1)))
  return out
}

/**
 * An object with the given fields. `__proto__` is defined as an own property, not assigned:
 * assigning it would set the prototype.
 * @param {string[]} fields @param {any[][]} columns @param {number} i
 */
function recordAt(fields, columns, i) {
  /** @type {Record<string, any>} */
  const out = {}
  fields.forEach((f, k) => {
    if (f === '__proto__') Object.defineProperty(out, f, { value: columns[k][i], enumerable: true, writable: true, configurable: true })
    else out[f] = columns[k][i]
  })
  return out
}

export class AwkwardReadContext {
  #file
  #core
  #form
  /** @type {Map<string, import('../table.js').TensorInfo>} */
  #infos = new Map()
  /** Reads in flight at once, however many entries are asked for together. */
  #limited = limiter(MAX_CONCURRENT_READS)

  /**
   * @param {SafetensorsFile} file
   * @param {Core} core
   * @param {AwkwardForm} form the checked form, owned by this context (every view of the array
   *   holds the context: the form is freed once none is reachable, or on dispose)
   */
  constructor(file, core, form) {
    this.#file = file
    this.#core = core
    this.#form = form
    this.nodes = form.tree.nodes
    this.length = form.tree.length
  }

  get disposed() { return this.#form.disposed }

  dispose() { this.#form.dispose() }

  /** @param {string} name */
  #info(name) {
    let info = this.#infos.get(name)
    if (!info) this.#infos.set(name, info = this.#file.info(name))
    return info
  }

  /**
   * Reads elements [e0, e1) of a buffer (e0 < e1) into the heap. The buffer may have any shape:
   * whole rows covering the range are read. Returns the tensor (the caller disposes it) and the
   * heap address of element e0.
   * @param {string} name @param {number} e0 @param {number} e1 @param {ReadOptions} [options]
   */
  async #read(name, e0, e1, options) {
    this.#form.throwIfDisposed()
    const { shape, dtype } = this.#info(name)
    let spec = /** @type {any[]} */ ([[e0, e1]])
    let skip = 0
    if (shape.length === 0) spec = []
    else if (shape.length > 1) {
      const row = shape.slice(1).reduce((a, b) => a * Number(b), 1)
      const r0 = Math.floor(e0 / row)
      spec = [[r0, Math.ceil(e1 / row)]]
      skip = e0 - r0 * row
    }
    const tensor = await this.#limited(() => this.#file.slice(name, spec, options))
    return { tensor, ptr: tensor.bytes.byteOffset + skip * (DTYPE_BITS[dtype] / 8), dtype }
  }

  /**
   * Reads and decodes elements [e0, e1) of one of node n's buffers; `check` (given the heap
   * address) validates them in C++ first, throwing the core's verdict. An empty range reads
   * nothing.
   * @param {AkNode} n @param {string} attribute @param {number} e0 @param {number} e1
   * @param {ReadOptions} [options] @param {((ptr: number) => void) | null} [check]
   */
  async #elements(n, attribute, e0, e1, options, check = null) {
    if (e1 <= e0) return []
    const { tensor, ptr, dtype } = await this.#read(n.buffers[attribute], e0, e1, options)
    try {
      check?.(ptr)
      return decode(this.#core, dtype, ptr, e1 - e0)
    } finally {
      tensor.dispose()
    }
  }

  /**
   * Two buffers of one node read together and validated together (starts/stops, tags/index).
   * @param {AkNode} n @param {[string, string]} attributes @param {number} e0 @param {number} e1
   * @param {ReadOptions | undefined} options @param {(a: number, b: number) => void} check
   */
  async #pair(n, attributes, e0, e1, options, check) {
    const reads = await Promise.allSettled(attributes.map((a) => this.#read(n.buffers[a], e0, e1, options)))
    try {
      for (const r of reads) if (r.status === 'rejected') throw r.reason
      const [a, b] = reads.map((r) => /** @type {PromiseFulfilledResult<any>} */ (r).value)
      check(a.ptr, b.ptr)
      return [decode(this.#core, a.dtype, a.ptr, e1 - e0), decode(this.#core, b.dtype, b.ptr, e1 - e0)]
    } finally {
      for (const r of reads) if (r.status === 'fulfilled') r.value.tensor.dispose()
    }
  }

  /**
   * The raw bytes of entries [start, stop) of a uint8 NumpyArray (string contents).
   * @param {number} node @param {number} start @param {number} stop @param {ReadOptions} [options]
   */
  async #bytes(node, start, stop, options) {
    if (stop <= start) return new Uint8Array(0)
    const { tensor, ptr } = await this.#read(this.nodes[node].buffers.data, start, stop, options)
    try {
      return heapView(this.#core, ptr, stop - start).slice()
    } finally {
      tensor.dispose()
    }
  }

  /**
   * The strings (or, for bytestrings, Uint8Arrays) of lists [starts[i], stops[i]) of `content`.
   * @param {AkNode} n the list node @param {number[]} starts @param {number[]} stops
   * @param {ReadOptions} [options]
   */
  async #strings(n, starts, stops, options) {
    let lo = Infinity
    let hi = 0
    starts.forEach((s, i) => { if (stops[i] > s) { lo = Math.min(lo, s); hi = Math.max(hi, stops[i]) } })
    const bytes = lo < hi ? await this.#bytes(n.contents[0], lo, hi, options) : new Uint8Array(0)
    const text = n.parameters.__array__ === 'string'
    return starts.map((s, i) => {
      const piece = stops[i] > s ? bytes.subarray(s - lo, stops[i] - lo) : new Uint8Array(0)
      return text ? utf8.decode(piece) : piece.slice()
    })
  }

  /**
   * Entries picked by position from `content`: positions[i] < 0 gives null.
   * @param {number} content @param {number[]} positions @param {string[]} projection
   * @param {ReadOptions} [options]
   */
  async #gather(content, positions, projection, options) {
    let lo = Infinity
    let hi = 0
    for (const p of positions) if (p >= 0) { lo = Math.min(lo, p); hi = Math.max(hi, p + 1) }
    if (lo >= hi) return positions.map(() => null)
    const values = await this.values(content, lo, hi, projection, options)
    return positions.map((p) => (p < 0 ? null : values[p - lo]))
  }

  /**
   * Plain values of entries [start, stop) of node `index`, with `projection` (field names)
   * applied at the record levels met on the way down, as awkward's array[field] does.
   * @param {number} index @param {number} start @param {number} stop @param {string[]} projection
   * @param {ReadOptions} [options]
   * @returns {Promise<any[]>}
   */
  async values(index, start, stop, projection, options) {
    const n = this.nodes[index]
    const count = stop - start
    if (count <= 0) return []
    // The checks throw Disposed when the array was disposed while a read was in flight.
    const form = this.#form
    const isString = n.parameters.__array__ === 'string' || n.parameters.__array__ === 'bytestring'
    switch (n.class) {
      case 'NumpyArray': {
        const inner = /** @type {number[]} */ (n.inner_shape)
        const per = inner.reduce((a, b) => a * b, 1)
        const flat = await this.#elements(n, 'data', start * per, stop * per, options)
        return reshape(flat, count, inner)
      }
      case 'EmptyArray': return []
      case 'RegularArray': {
        const size = /** @type {number} */ (n.size)
        const starts = Array.from({ length: count }, (_, i) => (start + i) * size)
        if (isString) return this.#strings(n, starts, starts.map((s) => s + size), options)
        const inner = await this.values(n.contents[0], start * size, stop * size, projection, options)
        return starts.map((_, i) => inner.slice(i * size, (i + 1) * size))
      }
      case 'ListOffsetArray': {
        const offsets = await this.#elements(n, 'offsets', start, stop + 1, options,
          (ptr) => form.checkOffsets(index, ptr, start, count + 1))
        const starts = offsets.slice(0, count)
        const stops = offsets.slice(1)
        if (isString) return this.#strings(n, starts, stops, options)
        const inner = await this.values(n.contents[0], offsets[0], offsets[count], projection, options)
        return starts.map((s, i) => inner.slice(s - offsets[0], stops[i] - offsets[0]))
      }
      case 'ListArray': {
        const [starts, stops] = await this.#pair(n, ['starts', 'stops'], start, stop, options,
          (a, b) => form.checkLists(index, a, b, start, count))
        if (isString) return this.#strings(n, starts, stops, options)
        let lo = Infinity
        let hi = 0
        starts.forEach((s, i) => { if (stops[i] > s) { lo = Math.min(lo, s); hi = Math.max(hi, stops[i]) } })
        const inner = lo < hi ? await this.values(n.contents[0], lo, hi, projection, options) : []
        return starts.map((s, i) => (stops[i] > s ? inner.slice(s - lo, stops[i] - lo) : []))
      }
      case 'IndexedArray':
      case 'IndexedOptionArray': {
        const positions = await this.#elements(n, 'index', start, stop, options,
          (ptr) => form.checkIndex(index, ptr, start, count))
        return this.#gather(n.contents[0], positions, projection, options)
      }
      case 'ByteMaskedArray': {
        const [mask, inner] = await Promise.all([
          this.#elements(n, 'mask', start, stop, options),
          this.values(n.contents[0], start, stop, projection, options)])
        return inner.map((v, i) => ((mask[i] !== 0) === n.valid_when ? v : null))
      }
      case 'BitMaskedArray': {
        const b0 = Math.floor(start / 8)
        const [mask, inner] = await Promise.all([
          this.#elements(n, 'mask', b0, Math.ceil(stop / 8), options),
          this.values(n.contents[0], start, stop, projection, options)])
        return inner.map((v, i) => {
          const at = start + i
          const byte = mask[Math.floor(at / 8) - b0]
          const bit = n.lsb_order ? (byte >> (at % 8)) & 1 : (byte >> (7 - (at % 8))) & 1
          return (bit === 1) === n.valid_when ? v : null
        })
      }
      case 'UnmaskedArray': return this.values(n.contents[0], start, stop, projection, options)
      case 'RecordArray': {
        if (projection.length > 0) {
          const field = fieldIndex(n, projection[0])
          return this.values(n.contents[field], start, stop, projection.slice(1), options)
        }
        const columns = await Promise.all(n.contents.map((c) => this.values(c, start, stop, [], options)))
        return Array.from({ length: count }, (_, i) =>
          (n.fields ? recordAt(n.fields, columns, i) : columns.map((c) => c[i])))
      }
      case 'UnionArray': {
        const [tags, positions] = await this.#pair(n, ['tags', 'index'], start, stop, options,
          (a, b) => form.checkUnion(index, a, b, start, count))
        const picked = await Promise.all(n.contents.map((c, t) =>
          this.#gather(c, positions.map((p, i) => (tags[i] === t ? p : -1)), projection, options)))
        return tags.map((t, i) => picked[t][i])
      }
      default:
        throw new SafetensorsError('AwkwardInvalidForm', `awkward: unknown node class ${n.class}`)
    }
  }
}

/**
 * The content position of a field: a name for records, a decimal position for tuples (as
 * awkward accepts "0", "1", ...). -1 when there is none.
 * @param {AkNode} n @param {string} name
 */
export function findField(n, name) {
  if (n.fields) return n.fields.indexOf(name)
  return /^(0|[1-9][0-9]*)$/.test(name) && Number(name) < n.contents.length ? Number(name) : -1
}

/** @param {AkNode} n @param {string} name */
function fieldIndex(n, name) {
  const i = findField(n, name)
  if (i < 0) throw new SafetensorsError('AwkwardFieldNotFound', `awkward: no field ${JSON.stringify(name)} in ${n.form_key ?? 'a record'}`)
  return i
}

/**
 * Awkward arrays in safetensors files (awkward-array's ak.to_safetensors): `f.awkward()` checks
 * the form against the file's tensors in C++ and returns an AwkwardArray, a lazy view that
 * reads only the buffer elements an access needs. Values are plain JS values, as ak.to_list
 * gives them (see AwkwardArray).
 */
import { AwkwardReadContext, findField } from './read.js'
import { AwkwardForm } from '../core/awkward.js'
import { SafetensorsError } from '../errors.js'
import { elementCount } from '../dtypes.js'
import { DISPOSE } from '../dispose.js'
import { loadCore } from '../wasm.js'

/**
 * @typedef {import('./read.js').AkNode} AkNode
 * @typedef {import('../io/reader.js').ReadOptions} ReadOptions
 */

/**
 * Opens the awkward array of a file written by ak.to_safetensors (or fromValues): parses and
 * validates the form from metadata "form" and "length", and checks every buffer it names
 * against the file's tensors (presence, dtype, enough elements for the length). Reads no data.
 * @param {import('../file.js').SafetensorsFile} file
 * @returns {Promise<AwkwardArray>}
 */
export async function openAwkward(file) {
  const core = await loadCore()
  const metadata = file.metadata
  for (const key of ['form', 'length']) {
    if (typeof metadata?.[key] !== 'string')
      throw new SafetensorsError('AwkwardInvalidMetadata',
        `not an awkward file: __metadata__ has no "${key}" (ak.to_safetensors writes "form" and "length")`)
  }
  const { form, length } = /** @type {{ form: string, length: string }} */ (metadata)
  const names = new Set(file.names)
  const checked = new AwkwardForm(core, form, length, (name) => {
    if (!names.has(name)) return null
    const info = file.info(name)
    return { dtype: info.dtype, elements: elementCount(info.shape), byteOffset: info.byteOffset }
  })
  const context = new AwkwardReadContext(file, core, checked)
  return new AwkwardArray(context, 0, 0, context.length, [])
}

/**
 * An awkward array, or a slice or field of one. Reading is async: `at` and `toList` return
 * promises, and fetch only the buffer elements they need. Values are plain JS values:
 * lists -> arrays, records with named fields -> objects (fields in form order), tuples ->
 * arrays, strings -> strings (UTF-8, invalid bytes replaced), bytestrings -> Uint8Array,
 * missing -> null, booleans, numbers; int64/uint64 -> Number when within +-(2^53 - 1), else
 * BigInt; complex -> { re, im }. `slice` and `field` are synchronous and read nothing.
 */
export class AwkwardArray {
  #context
  #node
  #start
  #stop
  #projection

  /**
   * @param {AwkwardReadContext} context @param {number} node @param {number} start
   * @param {number} stop @param {string[]} projection
   */
  constructor(context, node, start, stop, projection) {
    this.#context = context
    this.#node = node
    this.#start = start
    this.#stop = stop
    this.#projection = projection
  }

  /** Number of entries. */
  get length() { return this.#stop - this.#start }

  /**
   * The parsed form as awkward writes it (Form.to_dict(verbose=True): class, its fields,
   * content/contents, parameters, form_key), of the whole stored array.
   */
  get form() { return formDict(this.#context.nodes, 0) }

  /**
   * The form's nodes in preorder (node i of the form keys awkward writes is nodes[i]): class,
   * form_key, parameters, the class's fields, contents (node indices), buffers (attribute ->
   * tensor name) and capacity (entries the buffers can hold; null when unbounded).
   * @returns {AkNode[]}
   */
  get nodes() { return structuredClone(this.#context.nodes) }

  /** The type in awkward's notation, e.g. "3 * var * {x: int64, y: ?string}". */
  get type() { return `${this.length} * ${typeString(this.#context.nodes, this.#node, this.#projection)}` }

  /** Field names of the first record level (after any projection), [] when there is none. */
  get fields() {
    const records = recordsOf(this.#context.nodes, projectNodes(this.#context.nodes, [this.#node], this.#projection))
    const n = records[0]
    if (!n) return []
    return n.fields ? n.fields.slice() : n.contents.map((_, i) => String(i))
  }

  /**
   * Entry i (negative counts from the end) as a plain value.
   * @param {number} i @param {ReadOptions} [options]
   */
  async at(i, options) {
    if (!Number.isInteger(i) || i < -this.length || i >= this.length)
      throw new SafetensorsError('AwkwardIndexOutOfRange', `awkward: index ${i} is outside an array of length ${this.length}`)
    const k = this.#start + (i < 0 ? i + this.length : i)
    const [value] = await this.#context.values(this.#node, k, k + 1, this.#projection, options)
    return value
  }

  /**
   * Entries [start, stop) as a lazy view, with Array.prototype.slice's rules (negative values
   * count from the end, out-of-range values are clamped), except that NaN and non-numbers are
   * InvalidArgument. Reads nothing.
   * @param {number} [start] @param {number} [stop]
   */
  slice(start = 0, stop = this.length) {
    /** @param {number} v @param {string} name */
    const clamp = (v, name) => {
      // Array's slice would take NaN (Number() of a missing setting) for 0 and '2' for 2.
      if (typeof v !== 'number' || Number.isNaN(v))
        throw new SafetensorsError('InvalidArgument', `awkward: slice's ${name} must be a number, got ${typeof v === 'string' ? JSON.stringify(v) : String(v)}`)
      const t = Math.trunc(v)
      return t < 0 ? Math.max(0, this.length + t) : Math.min(this.length, t)
    }
    const a = clamp(start, 'start')
    const b = Math.max(a, clamp(stop, 'stop'))
    return new AwkwardArray(this.#context, this.#node, this.#start + a, this.#start + b, this.#projection)
  }

  /**
   * The field `name` of the records in this array, as awkward's array[name] gives it: through
   * lists, options and unions. A tuple's fields are "0", "1", ... Reads nothing.
   * @param {string} name
   */
  field(name) {
    const nodes = this.#context.nodes
    const heads = projectNodes(nodes, [this.#node], this.#projection)
    if (!hasField(nodes, heads, name))
      throw new SafetensorsError('AwkwardFieldNotFound', `awkward: no field ${JSON.stringify(name)} in ${this.type}`)
    return new AwkwardArray(this.#context, this.#node, this.#start, this.#stop, [...this.#projection, name])
  }

  /**
   * Every entry as plain values (ak.to_list).
   * @param {ReadOptions} [options] @returns {Promise<any[]>}
   */
  toList(options) {
    return this.#context.values(this.#node, this.#start, this.#stop, this.#projection, options)
  }

  /** Frees the form's state in the wasm heap, for this array and every view of it. */
  dispose() { this.#context.dispose() }

  [DISPOSE]() { this.dispose() }
}

const LIST_LIKE = /* @__PURE__ */ new Set(['ListOffsetArray', 'ListArray', 'RegularArray'])
const PASS_THROUGH = /* @__PURE__ */ new Set(['IndexedArray', 'IndexedOptionArray', 'ByteMaskedArray', 'BitMaskedArray', 'UnmaskedArray'])

/** @param {AkNode} n */
const isString = (n) => n.parameters.__array__ === 'string' || n.parameters.__array__ === 'bytestring'

/**
 * The record nodes reached from `heads` through lists, options and unions.
 * @param {AkNode[]} nodes @param {number[]} heads @returns {AkNode[]}
 */
function recordsOf(nodes, heads) {
  /** @type {AkNode[]} */
  const out = []
  const visit = (/** @type {number} */ i) => {
    const n = nodes[i]
    if (n.class === 'RecordArray') out.push(n)
    else if ((LIST_LIKE.has(n.class) && !isString(n)) || PASS_THROUGH.has(n.class) || n.class === 'UnionArray')
      n.contents.forEach(visit)
  }
  heads.forEach(visit)
  return out
}

/**
 * Whether every path down from `heads` meets a record with the field before any leaf: what
 * awkward's array[name] requires (a union of a record and a number has no field).
 * @param {AkNode[]} nodes @param {number[]} heads @param {string} name
 */
function hasField(nodes, heads, name) {
  const at = (/** @type {number} */ i) => {
    const n = nodes[i]
    if (n.class === 'RecordArray') return findField(n, name) >= 0
    if ((LIST_LIKE.has(n.class) && !isString(n)) || PASS_THROUGH.has(n.class)) return at(n.contents[0])
    if (n.class === 'UnionArray') return n.contents.every(at)
    return false
  }
  return heads.length > 0 && heads.every(at)
}

/**
 * The nodes that the projection's last field leads to (its contents at each record met).
 * @param {AkNode[]} nodes @param {number[]} heads @param {string[]} projection
 */
function projectNodes(nodes, heads, projection) {
  let current = heads
  for (const name of projection) {
    current = recordsOf(nodes, current).map((r) => r.contents[findField(r, name)]).filter((c) => c !== undefined)
  }
  return current
}

/** A field name as awkward's type strings show it. @param {string} f */
const fieldName = (f) => (/^[A-Za-z_][A-Za-z0-9_]*$/.test(f) ? f : JSON.stringify(f))

/**
 * @param {AkNode[]} nodes @param {number} i @param {string[]} projection
 * @returns {string}
 */
function typeString(nodes, i, projection) {
  const n = nodes[i]
  const inner = () => typeString(nodes, n.contents[0], projection)
  switch (n.class) {
    case 'NumpyArray': {
      const p = n.parameters.__array__ === 'char' || n.parameters.__array__ === 'byte' ? n.parameters.__array__ : n.primitive
      return [.../** @type {number[]} */ (n.inner_shape), p].join(' * ')
    }
    case 'EmptyArray': return 'unknown'
    case 'RegularArray':
      if (isString(n)) return `${n.parameters.__array__ === 'string' ? 'string' : 'bytes'}[${n.size}]`
      return `${n.size} * ${inner()}`
    case 'ListOffsetArray':
    case 'ListArray':
      if (isString(n)) return n.parameters.__array__ === 'string' ? 'string' : 'bytes'
      return `var * ${inner()}`
    case 'IndexedArray': return inner()
    case 'IndexedOptionArray':
    case 'ByteMaskedArray':
    case 'BitMaskedArray':
    case 'UnmaskedArray': {
      // awkward writes ?T, except over a list dimension: option[var * T].
      const t = inner()
      return /^(var|\d+) \* /.test(t) ? `option[${t}]` : `?${t}`
    }
    case 'RecordArray': {
      if (projection.length > 0) return typeString(nodes, n.contents[findField(n, projection[0])], projection.slice(1))
      const parts = n.contents.map((c) => typeString(nodes, c, []))
      const name = typeof n.parameters.__record__ === 'string' ? n.parameters.__record__ : null
      if (n.fields) {
        const body = n.fields.map((f, k) => `${fieldName(f)}: ${parts[k]}`).join(', ')
        return name ? `${name}[${body}]` : `{${body}}`
      }
      return name ? `${name}[${parts.join(', ')}]` : `(${parts.join(', ')})`
    }
    case 'UnionArray': return `union[${n.contents.map((c) => typeString(nodes, c, projection)).join(', ')}]`
    default: return n.class
  }
}

/**
 * Node i as awkward's Form.to_dict(verbose=True) writes it.
 * @param {AkNode[]} nodes @param {number} i @returns {Record<string, any>}
 */
function formDict(nodes, i) {
  const n = nodes[i]
  /** @type {Record<string, any>} */
  const out = { class: n.class }
  const content = () => formDict(nodes, n.contents[0])
  switch (n.class) {
    case 'NumpyArray': Object.assign(out, { primitive: n.primitive, inner_shape: n.inner_shape }); break
    case 'RegularArray': Object.assign(out, { size: n.size, content: content() }); break
    case 'ListOffsetArray': Object.assign(out, { offsets: n.offsets, content: content() }); break
    case 'ListArray': Object.assign(out, { starts: n.starts, stops: n.stops, content: content() }); break
    case 'RecordArray': Object.assign(out, { fields: n.fields, contents: n.contents.map((c) => formDict(nodes, c)) }); break
    case 'IndexedArray':
    case 'IndexedOptionArray': Object.assign(out, { index: n.index, content: content() }); break
    case 'ByteMaskedArray': Object.assign(out, { mask: n.mask, valid_when: n.valid_when, content: content() }); break
    case 'BitMaskedArray':
      Object.assign(out, { mask: n.mask, valid_when: n.valid_when, lsb_order: n.lsb_order, content: content() })
      break
    case 'UnmaskedArray': out.content = content(); break
    case 'UnionArray':
      Object.assign(out, { tags: n.tags, index: n.index, contents: n.contents.map((c) => formDict(nodes, c)) })
      break
  }
  out.parameters = structuredClone(n.parameters)
  out.form_key = n.form_key
  return out
}

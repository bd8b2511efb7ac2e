/**
 * Plain JS values -> the buffers and metadata of an awkward array, as ak.from_iter followed
 * by ak.to_safetensors lays them out: numbers are int64 (float64 once any is not an integer),
 * booleans bool, strings ListOffsetArray(__array__ "string") over uint8 (__array__ "char"),
 * arrays ListOffsetArray with int64 offsets, objects RecordArray (a field missing from some
 * objects is null there), null/undefined an IndexedOptionArray (int64 index, content holding
 * only the present values), values of different kinds a UnionArray (int8 tags, int64 index,
 * contents in order of first appearance; with nulls, content 0 becomes an IndexedOptionArray
 * holding the nulls and the others UnmaskedArrays, as awkward's IndexedOptionArray.simplified
 * does, since options may not contain unions). Form keys node0, node1, ... in
 * preorder; buffers "{form_key}-{attribute}", 1-D; metadata { form, length } with the form
 * written as Python's json.dumps writes Form.to_dict(verbose=True).
 */
import { SafetensorsError } from '../errors.js'
import { loneSurrogate, serialize } from '../writer.js'

const encoder = /* @__PURE__ */ new TextEncoder()
const INT64_MIN = -(2n ** 63n)
const INT64_MAX = 2n ** 63n - 1n

/**
 * @typedef {{ kind: 'unknown', length: number }
 *   | { kind: 'option', index: number[], content: Builder }
 *   | { kind: 'unmasked', content: Builder }
 *   | { kind: 'bool', values: boolean[] }
 *   | { kind: 'number', values: (number | bigint)[], float: boolean }
 *   | { kind: 'string' | 'bytes', offsets: number[], chunks: Uint8Array[] }
 *   | { kind: 'list', offsets: number[], content: Builder }
 *   | { kind: 'record', fields: Map<string, Builder>, length: number }
 *   | { kind: 'union', tags: number[], index: number[], contents: Builder[] }} Builder
 * @typedef {Record<string, { dtype: string, shape: number[], data: ArrayBufferView }>} AwkwardTensors
 */

/** @param {Builder} b @returns {number} */
function lengthOf(b) {
  switch (b.kind) {
    case 'unknown':
    case 'record': return b.length
    case 'option': return b.index.length
    case 'unmasked': return lengthOf(b.content)
    case 'bool':
    case 'number': return b.values.length
    case 'union': return b.tags.length
    default: return b.offsets.length - 1
  }
}

/** @param {unknown} v @param {string} path @returns {Builder['kind']} */
function kindOf(v, path) {
  if (typeof v === 'boolean') return 'bool'
  if (typeof v === 'number' || typeof v === 'bigint') return 'number'
  if (typeof v === 'string') return 'string'
  if (v instanceof Uint8Array) return 'bytes'
  if (Array.isArray(v) || (ArrayBuffer.isView(v) && !(v instanceof DataView))) return 'list'
  const proto = typeof v === 'object' && v !== null ? Object.getPrototypeOf(v) : undefined
  if (proto === Object.prototype || proto === null) return 'record'
  throw new SafetensorsError('AwkwardUnsupportedType',
    `awkward: cannot store ${path}: ${typeof v === 'object' ? Object.prototype.toString.call(v) : typeof v} is not a number, boolean, string, array, plain object or null`)
}

/** @param {Builder['kind']} kind @returns {Builder} */
function fresh(kind) {
  switch (kind) {
    case 'bool': return { kind, values: [] }
    case 'number': return { kind, values: [], float: false }
    case 'string':
    case 'bytes': return { kind, offsets: [0], chunks: [] }
    case 'list': return { kind, offsets: [0], content: { kind: 'unknown', length: 0 } }
    case 'record': return { kind, fields: new Map(), length: 0 }
    default: throw new Error(`no fresh builder for ${kind}`)
  }
}

/**
 * Appends one value; returns the builder to use from now on (a builder becomes an option at
 * its first null, and a union at its first value of another kind).
 * @param {Builder} b @param {unknown} v @param {string} path @returns {Builder}
 */
function add(b, v, path) {
  if (v === null || v === undefined) {
    if (b.kind === 'unknown') { b.length++; return b }
    if (b.kind === 'option') { b.index.push(-1); return b }
    return { kind: 'option', index: [...Array(lengthOf(b)).keys(), -1], content: b }
  }
  if (b.kind === 'unknown') {
    const content = add(fresh(kindOf(v, path)), v, path)
    return b.length === 0 ? content : { kind: 'option', index: [...Array(b.length).fill(-1), 0], content }
  }
  if (b.kind === 'option') {
    b.index.push(lengthOf(b.content))
    b.content = add(b.content, v, path)
    return b
  }
  const kind = kindOf(v, path)
  if (b.kind === 'union') {
    let t = b.contents.findIndex((c) => c.kind === kind)
    if (t < 0) {
      if (b.contents.length === 128) throw new SafetensorsError('AwkwardUnsupportedType', `awkward: ${path} makes a union of more than 128 kinds`)
      t = b.contents.push(fresh(kind)) - 1
    }
    b.tags.push(t)
    b.index.push(lengthOf(b.contents[t]))
    b.contents[t] = add(b.contents[t], v, path)
    return b
  }
  if (b.kind !== kind) {
    const n = lengthOf(b)
    return add({ kind: 'union', tags: Array(n).fill(0), index: [...Array(n).keys()], contents: [b] }, v, path)
  }
  append(b, v, path)
  return b
}

/** @param {Builder} b a builder of v's kind @param {any} v @param {string} path */
function append(b, v, path) {
  switch (b.kind) {
    case 'bool': b.values.push(v); break
    case 'number':
      if (typeof v === 'bigint') {
        if (v < INT64_MIN || v > INT64_MAX) throw new SafetensorsError('AwkwardUnsupportedType', `awkward: ${path} = ${v} does not fit int64`)
      } else if (!(Number.isInteger(v) && Math.abs(v) < 2 ** 63)) {
        b.float = true
      }
      b.values.push(v)
      break
    case 'string':
    case 'bytes': {
      let bytes = v
      if (b.kind === 'string') {
        const lone = loneSurrogate(v)
        if (lone) throw new SafetensorsError('AwkwardUnsupportedType', `awkward: ${path} holds a lone surrogate ${lone.unit} at index ${lone.index}, which has no UTF-8 form`)
        bytes = encoder.encode(v)
      }
      b.chunks.push(bytes)
      b.offsets.push(b.offsets[b.offsets.length - 1] + bytes.length)
      break
    }
    case 'list': {
      let i = 0
      for (const item of v) b.content = add(b.content, item, `${path}[${i++}]`)
      b.offsets.push(lengthOf(b.content))
      break
    }
    case 'record': {
      for (const key of Object.keys(v)) {
        if (!b.fields.has(key)) b.fields.set(key, { kind: 'unknown', length: b.length })
      }
      for (const [key, field] of b.fields) {
        const value = Object.prototype.hasOwnProperty.call(v, key) ? v[key] : null
        b.fields.set(key, add(field, value, `${path}.${key}`))
      }
      b.length++
      break
    }
  }
}

/**
 * An option whose content is a union becomes a union of options (awkward forbids the first),
 * as awkward lays it out: missing values go to content 0, which becomes an IndexedOptionArray
 * (-1 for each of them), and the other contents become UnmaskedArrays.
 * @param {{ index: number[], content: Builder & { kind: 'union' } }} option
 * @returns {Builder}
 */
function unionOfOptions(option) {
  const u = option.content
  /** @type {number[]} */
  const first = []
  const tags = []
  const index = []
  for (const at of option.index) {
    const t = at < 0 ? 0 : u.tags[at]
    tags.push(t)
    if (t === 0) {
      index.push(first.length)
      first.push(at < 0 ? -1 : u.index[at])
    } else {
      index.push(u.index[at])
    }
  }
  const contents = u.contents.map((c, t) => /** @type {Builder} */ (t === 0 ? { kind: 'option', index: first, content: c } : { kind: 'unmasked', content: c }))
  return { kind: 'union', tags, index, contents }
}

/** @param {number[] | (number | bigint)[]} values */
const int64 = (values) => BigInt64Array.from(values, (v) => BigInt(v))

/**
 * Emits node `b` and its contents in preorder; returns its form dict.
 * @param {Builder} b @param {{ next: number, tensors: AwkwardTensors }} out
 * @returns {Record<string, any>}
 */
function emit(b, out) {
  if (b.kind === 'option' && b.content.kind === 'union') return emit(unionOfOptions(/** @type {any} */ (b)), out)
  const key = `node${out.next++}`
  /** @param {string} attribute @param {string} dtype @param {ArrayBufferView & { length: number }} data */
  const put = (attribute, dtype, data) => { out.tensors[`${key}-${attribute}`] = { dtype, shape: [data.length], data } }
  /** @param {Record<string, any>} body @param {Record<string, any>} [parameters] */
  const node = (body, parameters = {}) => ({ ...body, parameters, form_key: key })
  switch (b.kind) {
    case 'unknown':
      if (b.length === 0) return node({ class: 'EmptyArray' })
      put('index', 'I64', new BigInt64Array(b.length).fill(-1n))
      return node({ class: 'IndexedOptionArray', index: 'i64', content: emit({ kind: 'unknown', length: 0 }, out) })
    case 'option':
      put('index', 'I64', int64(b.index))
      return node({ class: 'IndexedOptionArray', index: 'i64', content: emit(b.content, out) })
    case 'unmasked':
      return node({ class: 'UnmaskedArray', content: emit(b.content, out) })
    case 'bool':
      put('data', 'BOOL', Uint8Array.from(b.values, (v) => (v ? 1 : 0)))
      return node({ class: 'NumpyArray', primitive: 'bool', inner_shape: [] })
    case 'number':
      if (b.float) put('data', 'F64', Float64Array.from(b.values, Number))
      else put('data', 'I64', int64(b.values))
      return node({ class: 'NumpyArray', primitive: b.float ? 'float64' : 'int64', inner_shape: [] })
    case 'string':
    case 'bytes': {
      const text = b.kind === 'string'
      put('offsets', 'I64', int64(b.offsets))
      const bytes = new Uint8Array(b.offsets[b.offsets.length - 1])
      let at = 0
      for (const c of b.chunks) { bytes.set(c, at); at += c.length }
      const contentKey = `node${out.next++}`
      out.tensors[`${contentKey}-data`] = { dtype: 'U8', shape: [bytes.length], data: bytes }
      const content = { class: 'NumpyArray', primitive: 'uint8', inner_shape: [], parameters: { __array__: text ? 'char' : 'byte' }, form_key: contentKey }
      return node({ class: 'ListOffsetArray', offsets: 'i64', content }, { __array__: text ? 'string' : 'bytestring' })
    }
    case 'list':
      put('offsets', 'I64', int64(b.offsets))
      return node({ class: 'ListOffsetArray', offsets: 'i64', content: emit(b.content, out) })
    case 'record': {
      const fields = [...b.fields.keys()]
      return node({ class: 'RecordArray', fields, contents: [...b.fields.values()].map((f) => emit(f, out)) })
    }
    case 'union':
      put('tags', 'I8', Int8Array.from(b.tags))
      put('index', 'I64', int64(b.index))
      return node({ class: 'UnionArray', tags: 'i8', index: 'i64', contents: b.contents.map((c) => emit(c, out)) })
  }
}

/** Python's json.dumps (ensure_ascii, ", " and ": " separators) of a form. @param {any} v @returns {string} */
export function pythonJson(v) {
  if (v === null) return 'null'
  if (typeof v === 'boolean' || typeof v === 'number') return String(v)
  if (typeof v === 'string') {
    return `"${v.replace(/[\\"]|[^ -~]/g, (c) => {
      const named = /** @type {Record<string, string>} */ ({ '\\': '\\\\', '"': '\\"', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\b': '\\b', '\f': '\\f' })[c]
      return named ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`
    })}"`
  }
  if (Array.isArray(v)) return `[${v.map(pythonJson).join(', ')}]`
  return `{${Object.entries(v).map(([k, x]) => `${pythonJson(k)}: ${pythonJson(x)}`).join(', ')}}`
}

/**
 * The tensors and metadata of an awkward array made from plain values (see the file comment),
 * ready for serialize/serializeStream/writeFile: `serialize(tensors, { metadata })`.
 * @param {Iterable<unknown>} values the array's entries
 * @returns {{ tensors: AwkwardTensors, metadata: { form: string, length: string } }}
 */
export function fromValues(values) {
  if (typeof values !== 'object' || values === null || typeof (/** @type {any} */ (values))[Symbol.iterator] !== 'function')
    throw new SafetensorsError('InvalidArgument', 'awkward: fromValues takes an array (or iterable) of entries')
  /** @type {Builder} */
  let root = { kind: 'unknown', length: 0 }
  let i = 0
  for (const v of values) root = add(root, v, `values[${i++}]`)
  const out = { next: 0, tensors: /** @type {AwkwardTensors} */ ({}) }
  const form = emit(root, out)
  return { tensors: out.tensors, metadata: { form: pythonJson(form), length: String(lengthOf(root)) } }
}

/**
 * A whole safetensors file holding the awkward array of `values` (what ak.from_safetensors reads).
 * @param {Iterable<unknown>} values
 * @returns {Promise<Uint8Array>}
 */
export function serializeAwkward(values) {
  const { tensors, metadata } = fromValues(values)
  return serialize(tensors, { metadata })
}

// Writing awkward arrays from plain values (fromValues, serializeAwkward, writeAwkward): the
// exact form and buffers awkward makes, random nested values read back unchanged (seeded),
// and reads that fetch only the bytes an entry needs, from memory and over HTTP.
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { bytesSource, fromValues, open, serialize, serializeAwkward, writeAwkward } from '../../js/node.js'
import { prng } from '../fixtures/make-sample.js'
import { startServer } from './http-server.js'

/** @param {unknown[]} values */
async function roundtrip(values) {
  return (await open(await serializeAwkward(values))).awkward()
}

/** @param {Record<string, { dtype: string, shape: number[], data: ArrayBufferView }>} tensors */
function plain(tensors) {
  return Object.fromEntries(Object.entries(tensors).map(([k, t]) =>
    [k, [t.dtype, Array.from(/** @type {any} */ (t.data), (v) => (typeof v === 'bigint' ? Number(v) : v))]]))
}

describe('fromValues: the layout awkward makes', () => {
  test('a jagged array: form text exactly as ak.to_safetensors writes it', () => {
    const { tensors, metadata } = fromValues([[1, 2, 3], [], [4, 5]])
    assert.deepEqual(metadata, {
      form: '{"class": "ListOffsetArray", "offsets": "i64", "content": {"class": "NumpyArray", "primitive": "int64", "inner_shape": [], "parameters": {}, "form_key": "node1"}, "parameters": {}, "form_key": "node0"}',
      length: '3',
    })
    assert.deepEqual(plain(tensors), { 'node0-offsets': ['I64', [0, 3, 3, 5]], 'node1-data': ['I64', [1, 2, 3, 4, 5]] })
    assert.deepEqual(tensors['node0-offsets'].shape, [4])
  })

  test('strings, floats, booleans, options', () => {
    const s = fromValues(['ab', 'é'])
    assert.equal(s.metadata.form, '{"class": "ListOffsetArray", "offsets": "i64", "content": {"class": "NumpyArray", "primitive": "uint8", "inner_shape": [], "parameters": {"__array__": "char"}, "form_key": "node1"}, "parameters": {"__array__": "string"}, "form_key": "node0"}')
    assert.deepEqual(plain(s.tensors), { 'node0-offsets': ['I64', [0, 2, 4]], 'node1-data': ['U8', [97, 98, 0xc3, 0xa9]] })
    assert.deepEqual(plain(fromValues([1, 2.5]).tensors), { 'node0-data': ['F64', [1, 2.5]] })
    assert.deepEqual(plain(fromValues([true, false]).tensors), { 'node0-data': ['BOOL', [1, 0]] })
    const o = fromValues([1, null, 2])
    assert.match(o.metadata.form, /^\{"class": "IndexedOptionArray", "index": "i64", "content": \{"class": "NumpyArray", "primitive": "int64"/)
    assert.deepEqual(plain(o.tensors), { 'node0-index': ['I64', [0, -1, 1]], 'node1-data': ['I64', [1, 2]] })
    const nulls = fromValues([null, null])
    assert.equal(JSON.parse(nulls.metadata.form).content.class, 'EmptyArray')
    assert.deepEqual(plain(nulls.tensors), { 'node0-index': ['I64', [-1, -1]] })
    assert.equal(JSON.parse(fromValues([]).metadata.form).class, 'EmptyArray')
  })

  test('records: fields in first-seen order, a missing field is null, names escaped as Python does', () => {
    const { tensors, metadata } = fromValues([{ x: 1, 'é': 'a' }, { y: true }])
    const form = JSON.parse(metadata.form)
    assert.deepEqual(form.fields, ['x', 'é', 'y'])
    assert.ok(metadata.form.includes('"fields": ["x", "\\u00e9", "y"]'))
    assert.deepEqual(form.contents.map((/** @type {any} */ c) => c.class), ['IndexedOptionArray', 'IndexedOptionArray', 'IndexedOptionArray'])
    assert.deepEqual(plain(tensors)['node1-index'], ['I64', [0, -1]])
    assert.deepEqual(plain(tensors)['node6-index'], ['I64', [-1, 0]])  // y: a null before its first value
  })

  test('mixed kinds: a union; with nulls, a union of options as awkward simplifies it', () => {
    const u = fromValues([1, 'a', 2])
    const form = JSON.parse(u.metadata.form)
    assert.equal(form.class, 'UnionArray')
    assert.deepEqual(plain(u.tensors)['node0-tags'], ['I8', [0, 1, 0]])
    assert.deepEqual(plain(u.tensors)['node0-index'], ['I64', [0, 0, 1]])
    const withNull = fromValues([1, null, 'a', 2, null])
    const n = JSON.parse(withNull.metadata.form)
    assert.equal(n.class, 'UnionArray')
    assert.deepEqual(n.contents.map((/** @type {any} */ c) => c.class), ['IndexedOptionArray', 'UnmaskedArray'])
    assert.deepEqual(plain(withNull.tensors), {
      'node0-tags': ['I8', [0, 0, 1, 0, 0]], 'node0-index': ['I64', [0, 1, 0, 2, 3]],
      'node1-index': ['I64', [0, -1, 1, -1]], 'node2-data': ['I64', [1, 2]],
      'node4-offsets': ['I64', [0, 1]], 'node5-data': ['U8', [97]],
    })
  })

  test('values it cannot store', () => {
    for (const bad of [[new Date()], [() => 1], [new Map()], [Symbol('s')], [2n ** 63n]])
      assert.throws(() => fromValues(bad), { code: 'AwkwardUnsupportedType' })
    assert.throws(() => fromValues(/** @type {any} */ (5)), { code: 'InvalidArgument' })
    assert.throws(() => fromValues([[1, new Set()]]), /values\[0\]\[1\]/)
    // A lone surrogate has no UTF-8 form; a pair is an ordinary character.
    assert.throws(() => fromValues([['ok', 'b\uDC00']]), {
      code: 'AwkwardUnsupportedType', message: 'awkward: values[0][1] holds a lone surrogate U+DC00 at index 1, which has no UTF-8 form',
    })
    assert.doesNotThrow(() => fromValues([['\uD83D\uDE00']]))
  })
})

/**
 * Random types and values of them. Union members are of distinct kinds (number, bool, string,
 * bytes, list, record): values of one kind share a column in awkward, so two record types in
 * one union would merge their fields.
 * @param {() => number} rand
 */
function generator(rand) {
  const pick = (/** @type {any[]} */ xs) => xs[Math.floor(rand() * xs.length)]
  const NAMES = ['a', 'b', 'x y', 'é', '0', '__proto__', '']
  const CHARS = ['a', 'é', '🙂', '\n', '"', '\\', 'z', '\u0000']
  const leaf = () => pick(['int', 'float', 'bool', 'string', 'bytes'])
  /** @param {any} t */
  const kindOf = (t) => (typeof t === 'string' ? (t === 'int' || t === 'float' ? 'number' : t)
    : t.list ? 'list' : t.fields ? 'record' : t.option ? kindOf(t.option) : 'union')
  /** @param {number} depth @returns {any} */
  const type = (depth) => {
    const r = rand()
    if (depth > 3 || r < 0.3) return leaf()
    if (r < 0.5) return { list: type(depth + 1) }
    if (r < 0.7) {
      const names = [...new Set(Array.from({ length: Math.floor(rand() * 4) }, () => pick(NAMES)))]
      return { fields: names.map((name) => [name, type(depth + 1)]) }
    }
    if (r < 0.85) {
      const inner = type(depth + 1)
      return inner.option ? inner : { option: inner }
    }
    const members = []
    const kinds = new Set()
    for (let i = 0; i < 3; i++) {
      const t = type(depth + 1)
      const k = kindOf(t)
      if (k !== 'union' && !kinds.has(k)) { kinds.add(k); members.push(t) }
    }
    return members.length >= 2 ? { union: members } : members[0] ?? leaf()
  }
  /** @param {any} t @returns {any} */
  const value = (t) => {
    switch (t) {
      case 'int': return rand() < 0.1 ? pick([1n, -1n]) * (2n ** 60n + BigInt(Math.floor(rand() * 1000))) : Math.floor((rand() - 0.5) * 2e6)
      case 'float': return pick([() => rand() * 100 - 50, () => NaN, () => Infinity, () => 1.5, () => 3])()
      case 'bool': return rand() < 0.5
      case 'string': return Array.from({ length: Math.floor(rand() * 5) }, () => pick(CHARS)).join('')
      case 'bytes': return Uint8Array.from({ length: Math.floor(rand() * 4) }, () => Math.floor(rand() * 256))
    }
    if (t.list) return Array.from({ length: Math.floor(rand() * 4) }, () => value(t.list))
    if (t.fields) {
      /** @type {Record<string, any>} */
      const out = {}
      for (const [name, ft] of t.fields) Object.defineProperty(out, name, { value: value(ft), enumerable: true, writable: true, configurable: true })
      return out
    }
    if (t.option) return rand() < 0.3 ? null : value(t.option)
    return value(pick(t.union))
  }
  return { type, value }
}

describe('roundtrip: values -> file -> toList', () => {
  test('random nested structures, 60 seeds', async () => {
    for (let seed = 1; seed <= 60; seed++) {
      const rand = prng(seed)
      const { type, value } = generator(rand)
      const t = type(0)
      const values = Array.from({ length: Math.floor(rand() * 25) }, () => value(t))
      const a = await roundtrip(values)
      assert.equal(a.length, values.length)
      assert.deepStrictEqual(await a.toList(), values, `seed ${seed}: ${JSON.stringify(t)}`)
      if (values.length > 0) {
        const i = Math.floor(rand() * values.length)
        assert.deepStrictEqual(await a.at(i), values[i], `seed ${seed} at(${i})`)
        const b = Math.floor(rand() * values.length)
        assert.deepStrictEqual(await a.slice(i, b).toList(), values.slice(i, b), `seed ${seed} slice(${i}, ${b})`)
      }
      a.dispose()
    }
  })

  test('writeAwkward: a file on disk', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'st-awkward-'))
    try {
      const values = [{ name: 'a', xs: [1.5, 2] }, { name: 'b', xs: [] }, null]
      await writeAwkward(join(dir, 'a.safetensors'), values)
      const f = await open(join(dir, 'a.safetensors'))
      assert.deepStrictEqual(await (await f.awkward()).toList(), values)
      await f.close()
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})

/**
 * A large jagged float64 array built directly (not by the writer): `lists` lists of 0..19
 * values, value j of list i being i + j / 100.
 * @param {number} lists
 */
async function bigJagged(lists) {
  const rand = prng(7)
  const offsets = new BigInt64Array(lists + 1)
  for (let i = 0; i < lists; i++) offsets[i + 1] = offsets[i] + BigInt(Math.floor(rand() * 20))
  const data = new Float64Array(Number(offsets[lists]))
  for (let i = 0; i < lists; i++) for (let k = Number(offsets[i]); k < Number(offsets[i + 1]); k++) data[k] = i + (k - Number(offsets[i])) / 100
  const form = '{"class": "ListOffsetArray", "offsets": "i64", "content": {"class": "NumpyArray", "primitive": "float64", "inner_shape": [], "parameters": {}, "form_key": "node1"}, "parameters": {}, "form_key": "node0"}'
  const bytes = await serialize({
    'node0-offsets': { dtype: 'I64', shape: [lists + 1], data: offsets },
    'node1-data': { dtype: 'F64', shape: [data.length], data },
  }, { metadata: { form, length: String(lists) } })
  /** @param {number} i */
  const expected = (i) => Array.from({ length: Number(offsets[i + 1] - offsets[i]) }, (_, j) => i + j / 100)
  return { bytes, offsets, expected }
}

describe('reads only what an access needs', () => {
  test('at(i) on a jagged array: offsets[i..i+1], then that list\'s values', async () => {
    const { bytes, offsets, expected } = await bigJagged(20000)
    const inner = bytesSource(bytes)
    /** @type {[number, number][]} */
    const reads = []
    const f = await open({ byteLength: bytes.length, read: (/** @type {number} */ o, /** @type {number} */ n, /** @type {any} */ opts) => { reads.push([o, n]); return inner.read(o, n, opts) } })
    const a = await f.awkward()
    reads.length = 0
    const i = 12345
    assert.deepStrictEqual(await a.at(i), expected(i))
    const off = f.info('node0-offsets').byteOffset
    const data = f.info('node1-data').byteOffset
    const n = Number(offsets[i + 1] - offsets[i])
    assert.deepEqual(reads, [[off + i * 8, 16], ...(n > 0 ? [[data + Number(offsets[i]) * 8, n * 8]] : [])])
  })

  test('over HTTP: one entry of a 10 MB ragged file costs two small range requests', async () => {
    const server = await startServer()
    try {
      const { bytes, offsets, expected } = await bigJagged(130000)
      assert.ok(bytes.length > 10e6)
      server.addFile('/ragged.safetensors', bytes)
      const f = await open(server.url('/ragged.safetensors'), { initialFetchSize: 1024 })
      const a = await f.awkward()
      server.resetStats()
      const i = 98765
      assert.deepStrictEqual(await a.at(i), expected(i))
      const n = Number(offsets[i + 1] - offsets[i])
      assert.ok(n > 0)
      const off = f.info('node0-offsets').byteOffset + i * 8
      const data = f.info('node1-data').byteOffset + Number(offsets[i]) * 8
      assert.deepEqual(server.stats.log.map((e) => e.range),
        [`bytes=${off}-${off + 15}`, `bytes=${data}-${data + n * 8 - 1}`])
      assert.equal(server.stats.bytes, 16 + n * 8)
      server.resetStats()
      const lists = [i, i + 1, i + 2].map(expected)
      assert.deepStrictEqual(await a.slice(i, i + 3).toList(), lists)
      assert.equal(server.stats.requests, 2)
      assert.equal(server.stats.bytes, 4 * 8 + lists.flat().length * 8)
      await f.close()
    } finally {
      await server.close()
    }
  })
})

// Reading awkward arrays (ak.to_safetensors files) from hand-built files: every node type with
// its form written as awkward's Form.to_dict gives it, nesting, strings, empty and length-0
// arrays, views (at, slice, field), and each corruption's specific error.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { SafetensorsError, open, serialize, serializeAwkward } from '../../js/node.js'
import { loadCore } from '../../js/wasm.js'

/**
 * A file holding an awkward array: `form` (an object, or the JSON text as awkward writes it),
 * `length`, and buffers { name: [dtype, data, shape?] } (1-D by default).
 * @param {object | string} form @param {number | string} length
 * @param {Record<string, [string, ArrayBufferView & { length: number }, number[]?]>} buffers
 */
async function akBytes(form, length, buffers) {
  /** @type {Record<string, any>} */
  const tensors = {}
  for (const [name, [dtype, data, shape]] of Object.entries(buffers)) tensors[name] = { dtype, shape: shape ?? [data.length], data }
  const metadata = { form: typeof form === 'string' ? form : JSON.stringify(form), length: String(length) }
  return serialize(tensors, { metadata })
}

/** @param {Parameters<typeof akBytes>} args */
async function ak(...args) {
  return (await open(await akBytes(...args))).awkward()
}

const i64 = (/** @type {number[]} */ v) => BigInt64Array.from(v, (x) => BigInt(x))
const u8 = (/** @type {number[]} */ v) => Uint8Array.from(v)
const utf8 = (/** @type {string} */ s) => new TextEncoder().encode(s)
const numpy = (/** @type {string} */ primitive, /** @type {string} */ key, extra = {}) =>
  ({ class: 'NumpyArray', primitive, inner_shape: [], parameters: {}, form_key: key, ...extra })
const chars = (/** @type {string} */ key) => numpy('uint8', key, { parameters: { __array__: 'char' } })
const string = (/** @type {string} */ key, /** @type {string} */ contentKey) =>
  ({ class: 'ListOffsetArray', offsets: 'i64', content: chars(contentKey), parameters: { __array__: 'string' }, form_key: key })

/** @param {Promise<unknown>} promise @param {string} code @param {string | null} [tensor] @param {RegExp} [message] */
async function rejects(promise, code, tensor, message) {
  await assert.rejects(promise, (/** @type {any} */ e) => {
    assert.ok(e instanceof SafetensorsError, String(e))
    assert.equal(e.code, code, e.message)
    if (tensor !== undefined) assert.equal(e.tensor, tensor)
    if (message) assert.match(e.message, message)
    return true
  })
}

describe('node types', () => {
  test('ListOffsetArray of NumpyArray, as in the ak.to_buffers docs', async () => {
    const form = '{"class": "ListOffsetArray", "offsets": "i64", "content": {"class": "NumpyArray", "primitive": "int64", "form_key": "node1"}, "form_key": "node0"}'
    const a = await ak(form, 3, { 'node0-offsets': ['I64', i64([0, 3, 3, 5])], 'node1-data': ['I64', i64([1, 2, 3, 4, 5])] })
    assert.equal(a.length, 3)
    assert.equal(a.type, '3 * var * int64')
    assert.deepEqual(await a.toList(), [[1, 2, 3], [], [4, 5]])
    assert.deepEqual(await a.at(-1), [4, 5])
    assert.deepEqual(await a.slice(1).toList(), [[], [4, 5]])
    assert.deepEqual(await a.slice(-2, -1).toList(), [[]])
    assert.equal(a.slice(5, 9).length, 0)
    await rejects(a.at(3), 'AwkwardIndexOutOfRange')
    assert.deepEqual(a.form, {
      class: 'ListOffsetArray', offsets: 'i64',
      content: { class: 'NumpyArray', primitive: 'int64', inner_shape: [], parameters: {}, form_key: 'node1' },
      parameters: {}, form_key: 'node0',
    })
    assert.deepEqual(a.nodes.map((n) => [n.form_key, n.buffers, n.capacity]),
      [['node0', { offsets: 'node0-offsets' }, 3], ['node1', { data: 'node1-data' }, 5]])
  })

  test('offsets that do not start at 0, of types i32 and u32', async () => {
    for (const [type, dtype, Ctor] of /** @type {const} */ ([['i32', 'I32', Int32Array], ['u32', 'U32', Uint32Array]])) {
      const a = await ak({ class: 'ListOffsetArray', offsets: type, content: numpy('int8', 'node1'), form_key: 'node0' }, 2,
        { 'node0-offsets': [dtype, Ctor.from([2, 4, 5])], 'node1-data': ['I8', Int8Array.from([9, 9, -1, -2, -3])] })
      assert.deepEqual(await a.toList(), [[-1, -2], [-3]])
    }
  })

  test('NumpyArray primitives and inner_shape', async () => {
    const cases = /** @type {[string, string, ArrayBufferView & { length: number }, unknown[]][]} */ ([
      ['bool', 'BOOL', u8([1, 0, 1]), [true, false, true]],
      ['int16', 'I16', Int16Array.from([-3, 0, 7]), [-3, 0, 7]],
      ['uint16', 'U16', Uint16Array.from([65535, 0, 1]), [65535, 0, 1]],
      ['uint32', 'U32', Uint32Array.from([4294967295, 0, 1]), [4294967295, 0, 1]],
      ['uint64', 'U64', BigUint64Array.from([2n ** 64n - 1n, 5n, 2n ** 53n - 1n]), [2n ** 64n - 1n, 5, 2 ** 53 - 1]],
      ['int64', 'I64', i64([-(2 ** 53) + 1, 0, 1]).map((v, i) => (i === 1 ? -(2n ** 63n) : v)), [-(2 ** 53) + 1, -(2n ** 63n), 1]],
      ['float16', 'F16', Uint16Array.from([0x3c00, 0xc000, 0x7c00]), [1, -2, Infinity]],
      ['float32', 'F32', Float32Array.from([0.5, -1.25, NaN]), [0.5, -1.25, NaN]],
      ['float64', 'F64', Float64Array.from([0.1, -0, 1e300]), [0.1, -0, 1e300]],
      ['complex64', 'C64', Float32Array.from([1, 2, -3, 0.5, 0, 0]), [{ re: 1, im: 2 }, { re: -3, im: 0.5 }, { re: 0, im: 0 }]],
    ])
    for (const [primitive, dtype, data, expected] of cases) {
      const shape = dtype === 'C64' ? [3] : undefined
      const a = await ak(numpy(primitive, 'node0'), 3, { 'node0-data': [dtype, data, shape] })
      assert.deepEqual(await a.toList(), expected, primitive)
      assert.equal(a.type, `3 * ${primitive}`)
    }
    // A data buffer stored with its full shape [length, ...inner_shape], as numpy saves it.
    const m = await ak({ ...numpy('int32', 'node0'), inner_shape: [2, 3] }, 2,
      { 'node0-data': ['I32', Int32Array.from({ length: 12 }, (_, i) => i), [2, 2, 3]] })
    assert.equal(m.type, '2 * 2 * 3 * int32')
    assert.deepEqual(await m.at(1), [[6, 7, 8], [9, 10, 11]])
    assert.deepEqual(await m.toList(), [[[0, 1, 2], [3, 4, 5]], [[6, 7, 8], [9, 10, 11]]])
  })

  test('EmptyArray, and lists of it', async () => {
    const e = await ak({ class: 'EmptyArray', parameters: {}, form_key: 'node0' }, 0, {})
    assert.deepEqual(await e.toList(), [])
    assert.equal(e.type, '0 * unknown')
    const l = await ak({ class: 'ListOffsetArray', offsets: 'i64', content: { class: 'EmptyArray', form_key: 'node1' }, form_key: 'node0' }, 2,
      { 'node0-offsets': ['I64', i64([0, 0, 0])] })
    assert.deepEqual(await l.toList(), [[], []])
  })

  test('RegularArray, of numbers, of size 0, of fixed-width strings', async () => {
    const r = await ak({ class: 'RegularArray', size: 2, content: numpy('float64', 'node1'), form_key: 'node0' }, 3,
      { 'node1-data': ['F64', Float64Array.from([1, 2, 3, 4, 5, 6, 7])] })
    assert.equal(r.type, '3 * 2 * float64')
    assert.deepEqual(await r.toList(), [[1, 2], [3, 4], [5, 6]])
    assert.deepEqual(await r.at(1), [3, 4])
    const zero = await ak({ class: 'RegularArray', size: 0, content: numpy('float64', 'node1'), form_key: 'node0' }, 4,
      { 'node1-data': ['F64', new Float64Array(0)] })
    assert.deepEqual(await zero.toList(), [[], [], [], []])
    const fixed = await ak({ class: 'RegularArray', size: 3, content: chars('node1'), parameters: { __array__: 'string' }, form_key: 'node0' }, 2,
      { 'node1-data': ['U8', utf8('abcxyz')] })
    assert.deepEqual(await fixed.toList(), ['abc', 'xyz'])
  })

  test('ListArray: gaps, overlaps, empty lists whose positions mean nothing', async () => {
    const a = await ak({ class: 'ListArray', starts: 'i64', stops: 'i64', content: numpy('int64', 'node1'), form_key: 'node0' }, 4, {
      'node0-starts': ['I64', i64([4, 0, 1000, 1])], 'node0-stops': ['I64', i64([6, 2, 1000, 3])],
      'node1-data': ['I64', i64([10, 11, 12, 13, 14, 15])],
    })
    assert.deepEqual(await a.toList(), [[14, 15], [10, 11], [], [11, 12]])
    assert.deepEqual(await a.at(2), [])
  })

  test('RecordArray: named fields, tuples, field(), old-style contents object', async () => {
    const form = {
      class: 'RecordArray', fields: ['x', 'y'], contents: [
        numpy('int64', 'node1'),
        { class: 'RecordArray', fields: null, contents: [numpy('bool', 'node3'), string('node4', 'node5')], form_key: 'node2' },
      ], parameters: {}, form_key: 'node0',
    }
    const a = await ak(form, 2, {
      'node1-data': ['I64', i64([1, 2])], 'node3-data': ['BOOL', u8([1, 0])],
      'node4-offsets': ['I64', i64([0, 2, 5])], 'node5-data': ['U8', utf8('hithere')],
    })
    assert.equal(a.type, '2 * {x: int64, y: (bool, string)}')
    assert.deepEqual(a.fields, ['x', 'y'])
    assert.deepEqual(await a.toList(), [{ x: 1, y: [true, 'hi'] }, { x: 2, y: [false, 'the'] }])
    assert.deepEqual(await a.field('x').toList(), [1, 2])
    assert.deepEqual(a.field('y').fields, ['0', '1'])
    assert.deepEqual(await a.field('y').field('1').toList(), ['hi', 'the'])
    assert.equal(a.field('y').field('1').type, '2 * string')
    assert.throws(() => a.field('z'), { code: 'AwkwardFieldNotFound' })
    assert.throws(() => a.field('x').field('x'), { code: 'AwkwardFieldNotFound' })
    const old = await ak('{"class": "RecordArray", "contents": {"b": {"class": "NumpyArray", "primitive": "int8", "form_key": "n1"}, "a": {"class": "NumpyArray", "primitive": "int8", "form_key": "n2"}}, "form_key": "n0"}',
      1, { 'n1-data': ['I8', Int8Array.from([1])], 'n2-data': ['I8', Int8Array.from([2])] })
    assert.deepEqual(old.fields, ['b', 'a'])
    assert.deepEqual(await old.toList(), [{ b: 1, a: 2 }])
    const empty = await ak({ class: 'RecordArray', fields: [], contents: [], form_key: 'node0' }, 3, {})
    assert.deepEqual(await empty.toList(), [{}, {}, {}])
  })

  test('IndexedArray and IndexedOptionArray', async () => {
    const indexed = await ak({ class: 'IndexedArray', index: 'i32', content: string('node1', 'node2'), form_key: 'node0' }, 4, {
      'node0-index': ['I32', Int32Array.from([2, 0, 2, 1])], 'node1-offsets': ['I64', i64([0, 1, 3, 6])], 'node2-data': ['U8', utf8('abbccc')],
    })
    assert.deepEqual(await indexed.toList(), ['ccc', 'a', 'ccc', 'bb'])
    const option = await ak({ class: 'IndexedOptionArray', index: 'i64', content: numpy('float32', 'node1'), form_key: 'node0' }, 4,
      { 'node0-index': ['I64', i64([1, -1, 0, -5])], 'node1-data': ['F32', Float32Array.from([0.5, 1.5])] })
    assert.equal(option.type, '4 * ?float32')
    assert.deepEqual(await option.toList(), [1.5, null, 0.5, null])
    assert.equal(await option.at(1), null)
  })

  test('ByteMaskedArray, both valid_when', async () => {
    for (const validWhen of [true, false]) {
      const mask = Int8Array.from([1, 0, 1].map((v) => (validWhen ? v : 1 - v)))
      const a = await ak({ class: 'ByteMaskedArray', mask: 'i8', valid_when: validWhen, content: numpy('int64', 'node1'), form_key: 'node0' }, 3,
        { 'node0-mask': ['I8', mask], 'node1-data': ['I64', i64([7, 999, 9])] })
      assert.deepEqual(await a.toList(), [7, null, 9])
    }
  })

  test('BitMaskedArray, both bit orders and both valid_when, length not a multiple of 8', async () => {
    const valid = [true, false, true, true, false, false, false, true, true, false, true]
    for (const lsb of [true, false]) {
      for (const validWhen of [true, false]) {
        // A bit equal to valid_when marks a valid entry.
        const mask = new Uint8Array(2)
        valid.forEach((v, i) => {
          if ((v ? 1 : 0) === (validWhen ? 1 : 0)) mask[i >> 3] |= lsb ? 1 << (i % 8) : 0x80 >> (i % 8)
        })
        const a = await ak({ class: 'BitMaskedArray', mask: 'u8', valid_when: validWhen, lsb_order: lsb, content: numpy('int64', 'node1'), form_key: 'node0' },
          valid.length, { 'node0-mask': ['U8', mask], 'node1-data': ['I64', i64(valid.map((_, i) => i))] })
        assert.deepEqual(await a.toList(), valid.map((v, i) => (v ? i : null)), `lsb ${lsb}, valid_when ${validWhen}`)
        assert.deepEqual(await a.slice(7, 10).toList(), [7, 8, null])
      }
    }
  })

  test('UnmaskedArray and UnionArray', async () => {
    const u = await ak({ class: 'UnmaskedArray', content: numpy('int64', 'node1'), form_key: 'node0' }, 2, { 'node1-data': ['I64', i64([3, 4])] })
    assert.equal(u.type, '2 * ?int64')
    assert.deepEqual(await u.toList(), [3, 4])
    const union = await ak({
      class: 'UnionArray', tags: 'i8', index: 'i32',
      contents: [numpy('int64', 'node1'), string('node2', 'node3'), { class: 'ListOffsetArray', offsets: 'i64', content: numpy('bool', 'node5'), form_key: 'node4' }],
      form_key: 'node0',
    }, 5, {
      'node0-tags': ['I8', Int8Array.from([1, 0, 2, 1, 0])], 'node0-index': ['I32', Int32Array.from([1, 0, 0, 0, 1])],
      'node1-data': ['I64', i64([10, 20])], 'node2-offsets': ['I64', i64([0, 1, 3])], 'node3-data': ['U8', utf8('abc')],
      'node4-offsets': ['I64', i64([0, 2])], 'node5-data': ['BOOL', u8([1, 0])],
    })
    assert.equal(union.type, '5 * union[int64, string, var * bool]')
    assert.deepEqual(await union.toList(), ['bc', 10, [true, false], 'a', 20])
    assert.throws(() => union.field('x'), { code: 'AwkwardFieldNotFound' })
  })

  test('strings and bytestrings', async () => {
    const s = await ak(string('node0', 'node1'), 4, { 'node0-offsets': ['I64', i64([0, 6, 6, 10, 12])], 'node1-data': ['U8', utf8('héllo🙂é')] })
    assert.equal(s.type, '4 * string')
    assert.deepEqual(await s.toList(), ['héllo', '', '🙂', 'é'])
    assert.equal(await s.at(2), '🙂')
    const b = await ak({ class: 'ListOffsetArray', offsets: 'i64', content: numpy('uint8', 'node1', { parameters: { __array__: 'byte' } }), parameters: { __array__: 'bytestring' }, form_key: 'node0' },
      2, { 'node0-offsets': ['I64', i64([0, 2, 3])], 'node1-data': ['U8', u8([0, 255, 7])] })
    assert.equal(b.type, '2 * bytes')
    assert.deepEqual(await b.toList(), [u8([0, 255]), u8([7])])
  })
})

describe('nesting', () => {
  // 3 * var * {name: string, hits: var * ?{e: float64, tags: var * string}}
  const form = {
    class: 'ListOffsetArray', offsets: 'i64', form_key: 'node0', content: {
      class: 'RecordArray', fields: ['name', 'hits'], form_key: 'node1', contents: [
        string('node2', 'node3'),
        { class: 'ListOffsetArray', offsets: 'i64', form_key: 'node4', content: {
          class: 'IndexedOptionArray', index: 'i64', form_key: 'node5', content: {
            class: 'RecordArray', fields: ['e', 'tags'], form_key: 'node6', contents: [
              numpy('float64', 'node7'),
              { class: 'ListOffsetArray', offsets: 'i64', content: string('node9', 'node10'), form_key: 'node8' },
            ],
          },
        } },
      ],
    },
  }
  const buffers = () => /** @type {Parameters<typeof ak>[2]} */ ({
    'node0-offsets': ['I64', i64([0, 2, 2, 3])],
    'node2-offsets': ['I64', i64([0, 1, 3, 6])], 'node3-data': ['U8', utf8('abbccc')],
    'node4-offsets': ['I64', i64([0, 2, 2, 5])],
    'node5-index': ['I64', i64([0, -1, 1, 2, -1])],
    'node7-data': ['F64', Float64Array.from([1.5, 2.5, 3.5])],
    'node8-offsets': ['I64', i64([0, 1, 1, 3])],
    'node9-offsets': ['I64', i64([0, 1, 3, 4])], 'node10-data': ['U8', utf8('xyyz')],
  })
  const expected = [
    [{ name: 'a', hits: [{ e: 1.5, tags: ['x'] }, null] }, { name: 'bb', hits: [] }],
    [],
    [{ name: 'ccc', hits: [{ e: 2.5, tags: [] }, { e: 3.5, tags: ['yy', 'z'] }, null] }],
  ]

  test('options inside records inside lists, four levels deep', async () => {
    const a = await ak(form, 3, buffers())
    assert.equal(a.type, '3 * var * {name: string, hits: var * ?{e: float64, tags: var * string}}')
    assert.deepEqual(await a.toList(), expected)
    assert.deepEqual(await a.at(2), expected[2])
    assert.deepEqual(await a.field('hits').field('tags').toList(), [[[['x'], null], []], [], [[[], ['yy', 'z'], null]]])
    assert.deepEqual(await a.field('name').slice(2).toList(), [['ccc']])
    assert.equal(a.field('hits').field('e').type, '3 * var * var * ?float64')
  })

  test('length 0 reads nothing, whatever the form', async () => {
    const bytes = await akBytes(form, 0, buffers())
    let reads = 0
    const source = { byteLength: bytes.length, read: async (/** @type {number} */ o, /** @type {number} */ n) => { reads++; return bytes.subarray(o, o + n) } }
    const a = await (await open(source)).awkward()
    const before = reads
    assert.deepEqual(await a.toList(), [])
    assert.deepEqual(await a.field('hits').toList(), [])
    assert.equal(reads, before)
  })
})

describe('corrupt files: specific errors', () => {
  const jagged = { class: 'ListOffsetArray', offsets: 'i64', content: numpy('int64', 'node1'), form_key: 'node0' }
  const good = () => /** @type {Parameters<typeof ak>[2]} */ ({ 'node0-offsets': ['I64', i64([0, 3, 3, 5])], 'node1-data': ['I64', i64([1, 2, 3, 4, 5])] })

  test('an offset past the content', async () => {
    const a = await ak(jagged, 3, { ...good(), 'node0-offsets': ['I64', i64([0, 3, 3, 6])] })
    assert.deepEqual(await a.at(0), [1, 2, 3])  // validation is lazy: entry 0 does not touch offsets[3]
    await rejects(a.toList(), 'AwkwardOutOfBounds', 'node0-offsets', /node0-offsets\[3\] = 6 is outside \[0, 5\]/)
    await rejects(a.at(2), 'AwkwardOutOfBounds', 'node0-offsets')
  })

  test('decreasing offsets', async () => {
    const a = await ak(jagged, 3, { ...good(), 'node0-offsets': ['I64', i64([0, 3, 2, 5])] })
    await rejects(a.at(1), 'AwkwardDecreasingOffsets', 'node0-offsets', /node0-offsets\[2\] = 2 is less than the offset before it, 3/)
  })

  test('stops before starts, index and tags out of range', async () => {
    const list = await ak({ class: 'ListArray', starts: 'i64', stops: 'i64', content: numpy('int64', 'node1'), form_key: 'node0' }, 1,
      { 'node0-starts': ['I64', i64([2])], 'node0-stops': ['I64', i64([1])], 'node1-data': ['I64', i64([1, 2])] })
    await rejects(list.toList(), 'AwkwardDecreasingOffsets', 'node0-stops')
    const option = await ak({ class: 'IndexedOptionArray', index: 'i64', content: numpy('int64', 'node1'), form_key: 'node0' }, 2,
      { 'node0-index': ['I64', i64([0, 2])], 'node1-data': ['I64', i64([1, 2])] })
    await rejects(option.at(1), 'AwkwardOutOfBounds', 'node0-index', /\[0, 2\)/)
    const union = await ak({ class: 'UnionArray', tags: 'i8', index: 'i64', contents: [numpy('int64', 'node1'), numpy('bool', 'node2')], form_key: 'node0' }, 2,
      { 'node0-tags': ['I8', Int8Array.from([0, 2])], 'node0-index': ['I64', i64([0, 0])], 'node1-data': ['I64', i64([1])], 'node2-data': ['BOOL', u8([1])] })
    assert.equal(await union.at(0), 1)
    await rejects(union.at(1), 'AwkwardOutOfBounds', 'node0-tags')
  })

  test('a missing buffer', async () => {
    const { 'node1-data': _, ...rest } = good()
    await rejects(ak(jagged, 3, rest), 'AwkwardMissingBuffer', 'node1-data', /node1 \(NumpyArray\): the file has no tensor "node1-data"/)
  })

  test('a wrong dtype', async () => {
    await rejects(ak(jagged, 3, { ...good(), 'node0-offsets': ['I32', Int32Array.from([0, 3, 3, 5])] }),
      'AwkwardDtypeMismatch', 'node0-offsets', /is I32, the form says I64/)
  })

  test('a length larger than the buffers', async () => {
    await rejects(ak(jagged, 4, good()), 'AwkwardBufferTooShort', 'node0-offsets',
      /length is 4 but node0-offsets has 4 elements, enough for 3 entries of node0/)
  })

  test('metadata and form errors', async () => {
    const plain = await serialize({ t: { dtype: 'U8', shape: [1], data: u8([1]) } })
    await rejects((await open(plain)).awkward(), 'AwkwardInvalidMetadata')
    await rejects(ak(jagged, '3.0', good()), 'AwkwardInvalidMetadata')
    await rejects(ak('{"class": "ListOffsetArray"', 3, good()), 'AwkwardInvalidForm', null, /not valid JSON/)
    await rejects(ak({ ...jagged, offsets: 'i16' }, 3, good()), 'AwkwardInvalidForm', null, /"offsets"/)
    await rejects(ak(numpy('complex128', 'node0'), 0, { 'node0-data': ['F64', new Float64Array(0)] }), 'AwkwardUnsupportedType')
    await rejects(ak(numpy('datetime64', 'node0'), 0, {}), 'AwkwardUnsupportedType')
  })

  test('a disposed array refuses to read', async () => {
    const a = await ak(jagged, 3, good())
    const view = a.slice(1)
    a.dispose()
    await rejects(view.toList(), 'Disposed')
  })
})

test('reads, failures and dispose leave no wasm heap behind', async () => {
  const core = await loadCore()
  const good = await serializeAwkward([[{ x: 1, s: 'a' }], [], [null, { x: 2, s: 'bc' }], [{ x: 3, s: '' }]])
  const bad = await akBytes({ class: 'ListOffsetArray', offsets: 'i64', content: numpy('int64', 'node1'), form_key: 'node0' }, 2,
    { 'node0-offsets': ['I64', i64([0, 2, 1])], 'node1-data': ['I64', i64([1, 2])] })
  const cycle = async () => {
    const a = await (await open(good)).awkward()
    await a.toList()
    await a.at(2)
    await a.slice(0, 1).field('x').toList()
    a.dispose()
    const b = await (await open(bad)).awkward()
    await assert.rejects(b.toList(), { code: 'AwkwardDecreasingOffsets' })
    b.dispose()
    await assert.rejects(ak({ class: 'Nope' }, 0, {}), { code: 'AwkwardInvalidForm' })
    await assert.rejects(ak({ class: 'ListOffsetArray', offsets: 'i64', content: numpy('int64', 'node1'), form_key: 'node0' }, 9,
      { 'node0-offsets': ['I64', i64([0])], 'node1-data': ['I64', i64([])] }), { code: 'AwkwardBufferTooShort' })
  }
  await cycle()
  const baseline = core.heapInUse()
  for (let i = 0; i < 50; i++) await cycle()
  assert.equal(core.heapInUse(), baseline)
})

// The core JS API on files made by the project's own writer: the table, reading tensors and
// slices, typed views, conversions and stats, tensor lifetimes and heap growth, the writers'
// round trips and failure behaviour, and how many bytes a read costs.
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtemp, readdir, readFile, rm, writeFile as fsWriteFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { bytesSource, nodeFileSource, open, serialize, serializeStream, writeFile } from '../../js/node.js'
import { loadCore } from '../../js/wasm.js'
import { FP8_LAYER, f32ToBf16, f32ToF16, f32ToF8E4M3, f8E4M3ToF32, prng, sampleModel } from '../fixtures/make-sample.js'

// docs/format.md's "Dtypes" table, written out here so the tests do not lean on js/dtypes.js.
const BITS = {
  BOOL: 8, F4: 4, F6_E2M3: 6, F6_E3M2: 6, U8: 8, I8: 8, F8_E5M2: 8, F8_E4M3: 8, F8_E8M0: 8,
  F8_E4M3FNUZ: 8, F8_E5M2FNUZ: 8, I16: 16, U16: 16, F16: 16, BF16: 16, I32: 32, U32: 32,
  F32: 32, C64: 64, F64: 64, I64: 64, U64: 64,
}
const DTYPE_NAMES = Object.keys(BITS)
// The writer's order: dtype descending in the table above, then name bytes ascending.
const DTYPE_RANK = new Map(DTYPE_NAMES.map((d, i) => [d, i]))

/** @param {ArrayBufferView} v */
const bytesOf = (v) => new Uint8Array(v.buffer, v.byteOffset, v.byteLength)
const F16Array = /** @type {any} */ (globalThis).Float16Array ?? Uint16Array

/** @param {number[]} values */
const f32 = (values) => new Float32Array(values)
/** @param {number} n */
const iota = (n) => Float32Array.from({ length: n }, (_, i) => i)

async function tempDir() {
  return mkdtemp(join(tmpdir(), 'st-api-'))
}

/**
 * A ByteSource over bytes (no readInto, no stream) that records every read.
 * @param {Uint8Array} bytes
 */
function countingSource(bytes) {
  const inner = bytesSource(bytes)
  /** @type {[number, number][]} */
  const reads = []
  return {
    reads,
    get bytesRead() { return reads.reduce((s, [, n]) => s + n, 0) },
    byteLength: inner.byteLength,
    /** @param {number} offset @param {number} length @param {{ signal?: AbortSignal }} [options] */
    read(offset, length, options) {
      reads.push([offset, length])
      return inner.read(offset, length, options)
    },
  }
}

// A file with a [3, 4] F32 matrix of 0..11, an I64 scalar, a zero-size F16, packed F4 values
// (low nibble first: 0.5 1 1.5 2 | 3 4 6 0) and a C64 vector.
const BASIC = {
  m: { dtype: 'F32', shape: [3, 4], data: iota(12) },
  s: { dtype: 'I64', shape: [], data: new BigInt64Array([-5n]) },
  z: { dtype: 'F16', shape: [0, 4], data: new Uint16Array(0) },
  q: { dtype: 'F4', shape: [2, 4], data: new Uint8Array([0x21, 0x43, 0x65, 0x07]) },
  c: { dtype: 'C64', shape: [2], data: f32([1, 2, 3, 4]) },
}

describe('the table', () => {
  test('names in file order, info, metadata, parameterCount', async () => {
    const bytes = await serialize(BASIC, { metadata: { format: 'pt', note: 'x' } })
    const f = await open(bytes)
    // The writer orders by dtype (I64, C64, F32, F16, F4), so that is the file order too.
    assert.deepEqual(f.names, ['s', 'c', 'm', 'z', 'q'])
    assert.equal(f.byteLength, bytes.length)
    assert.equal(f.headerLength % 8, 0)
    const data = 8 + f.headerLength
    assert.deepEqual(f.info('s'), { name: 's', dtype: 'I64', shape: [], byteOffset: data, byteLength: 8 })
    assert.deepEqual(f.info('c'), { name: 'c', dtype: 'C64', shape: [2], byteOffset: data + 8, byteLength: 16 })
    assert.deepEqual(f.info('m'), { name: 'm', dtype: 'F32', shape: [3, 4], byteOffset: data + 24, byteLength: 48 })
    assert.deepEqual(f.info('z'), { name: 'z', dtype: 'F16', shape: [0, 4], byteOffset: data + 72, byteLength: 0 })
    assert.deepEqual(f.info('q'), { name: 'q', dtype: 'F4', shape: [2, 4], byteOffset: data + 72, byteLength: 4 })
    assert.equal(data + 76, bytes.length)
    assert.deepEqual(f.metadata, { format: 'pt', note: 'x' })
    assert.deepEqual(f.parameterCount(), { total: 1 + 2 + 12 + 0 + 8, byDtype: { I64: 1, C64: 2, F32: 12, F16: 0, F4: 8 }, byScheme: {} })
    // names is a copy: changing it changes nothing
    f.names.pop()
    assert.equal(f.names.length, 5)
  })

  test('metadata: null when absent, {} when empty', async () => {
    const one = { a: { dtype: 'U8', shape: [1], data: new Uint8Array([7]) } }
    assert.equal((await open(await serialize(one))).metadata, null)
    assert.equal((await open(await serialize(one, { metadata: null }))).metadata, null)
    assert.deepEqual((await open(await serialize(one, { metadata: {} }))).metadata, {})
    // A key named __proto__ is an ordinary entry, not the object's prototype.
    const proto = JSON.parse('{"__proto__": "x", "k": "v"}')
    assert.deepEqual((await open(await serialize(one, { metadata: proto }))).metadata, proto)
    const empty = await open(await serialize({}))
    assert.deepEqual(empty.names, [])
    assert.deepEqual(empty.parameterCount(), { total: 0, byDtype: {}, byScheme: {} })
  })
})

describe('reading tensors and slices', () => {
  test('tensor and load give the written values; load takes each name once', async () => {
    const f = await open(await serialize(BASIC))
    const m = await f.tensor('m')
    assert.equal(m.name, 'm')
    assert.equal(m.dtype, 'F32')
    assert.deepEqual(m.shape, [3, 4])
    assert.equal(m.byteLength, 48)
    assert.equal(m.elementCount, 12)
    assert.deepEqual(m.data, iota(12))
    const map = await f.load(['c', 's', 'c', 'q'])
    assert.deepEqual([...map.keys()].sort(), ['c', 'q', 's'])
    assert.deepEqual(map.get('c')?.data, f32([1, 2, 3, 4]))
    assert.deepEqual(map.get('s')?.data, new BigInt64Array([-5n]))
    assert.deepEqual(map.get('q')?.bytes, new Uint8Array([0x21, 0x43, 0x65, 0x07]))
  })

  test('scalars and zero-size tensors', async () => {
    const f = await open(await serialize(BASIC))
    const s = await f.tensor('s')
    assert.deepEqual(s.shape, [])
    assert.equal(s.elementCount, 1)
    assert.deepEqual(s.data, new BigInt64Array([-5n]))
    const z = await f.tensor('z')
    assert.deepEqual(z.shape, [0, 4])
    assert.equal(z.elementCount, 0)
    assert.equal(z.byteLength, 0)
    assert.equal(z.data.length, 0)
    assert.deepEqual(z.toFloat32(), new Float32Array(0))
    const zs = await f.slice('z', '0:0, 1:3')
    assert.deepEqual(zs.shape, [0, 2])
    assert.equal(zs.byteLength, 0)
  })

  test('slices: string and array specs, negative indices, empty ranges', async () => {
    const f = await open(await serialize(BASIC))
    /** @type {[string | any[], number[], number[]][]} spec, shape, values of 0..11 as [3, 4] */
    const cases = [
      ['1', [4], [4, 5, 6, 7]],
      [[1], [4], [4, 5, 6, 7]],
      ['-1', [4], [8, 9, 10, 11]],
      [[-3], [4], [0, 1, 2, 3]],
      [':, 1:3', [3, 2], [1, 2, 5, 6, 9, 10]],
      [[null, [1, 3]], [3, 2], [1, 2, 5, 6, 9, 10]],
      [[null, [-2, null]], [3, 2], [2, 3, 6, 7, 10, 11]],
      [' 0:2 , -1 ', [2], [3, 7]],
      [[[0, 2], -1], [2], [3, 7]],
      ['2, 3', [], [11]],
      ['1:', [2, 4], [4, 5, 6, 7, 8, 9, 10, 11]],
      [[[null, -2]], [1, 4], [0, 1, 2, 3]],
      ['1:1', [0, 4], []],
      ['3:3, 4:4', [0, 0], []],
    ]
    for (const [spec, shape, values] of cases) {
      const t = await f.slice('m', spec)
      assert.deepEqual({ shape: t.shape, data: t.data }, { shape, data: f32(values) }, `slice ${JSON.stringify(spec)}`)
      assert.equal(t.byteLength, values.length * 4)
      assert.equal(t.dtype, 'F32')
      assert.equal(t.name, 'm')
      t.dispose()
    }
  })

  // A slice that takes every dimension whole is the whole tensor, its bytes as well as its shape
  // (src/api.cpp's SlicePlanner must give planSlice the tensor's byte length, not begin == end).
  test('slices that take the whole tensor', async () => {
    const f = await open(await serialize(BASIC))
    for (const spec of ['', ':', '0:3', ':, :', [], [null], [[0, 3], null]]) {
      const t = await f.slice('m', spec)
      assert.deepEqual({ shape: t.shape, data: t.data }, { shape: [3, 4], data: iota(12) }, `slice ${JSON.stringify(spec)}`)
    }
    assert.deepEqual((await f.slice('s', '')).data, new BigInt64Array([-5n]))
    assert.deepEqual((await f.slice('q', ':')).bytes, new Uint8Array([0x21, 0x43, 0x65, 0x07]))
  })

  test('F4: packed bytes, conversion, byte-aligned slices accepted and others refused', async () => {
    const f = await open(await serialize(BASIC))
    const q = await f.tensor('q')
    assert.ok(q.data instanceof Uint8Array)
    assert.deepEqual(q.data, new Uint8Array([0x21, 0x43, 0x65, 0x07]))
    assert.deepEqual(q.toFloat32(), f32([0.5, 1, 1.5, 2, 3, 4, 6, 0]))
    const row = await f.slice('q', '1')
    assert.deepEqual(row.shape, [4])
    assert.deepEqual(row.data, new Uint8Array([0x65, 0x07]))
    assert.deepEqual(row.toFloat32(), f32([3, 4, 6, 0]))
    const cols = await f.slice('q', ':, 2:4')
    assert.deepEqual(cols.shape, [2, 2])
    assert.deepEqual(cols.data, new Uint8Array([0x43, 0x07]))
    await assert.rejects(f.slice('q', ':, 1:3'), { code: 'MisalignedSlice' })
  })
})

describe('typed views, conversions and stats', () => {
  /** dtype -> [expected data class, typed-array elements per tensor element] */
  const VIEWS = {
    F32: [Float32Array, 1], F64: [Float64Array, 1], C64: [Float32Array, 2], F16: [F16Array, 1],
    BF16: [Uint16Array, 1], U16: [Uint16Array, 1], I16: [Int16Array, 1], I32: [Int32Array, 1],
    U32: [Uint32Array, 1], I64: [BigInt64Array, 1], U64: [BigUint64Array, 1], I8: [Int8Array, 1],
    U8: [Uint8Array, 1], BOOL: [Uint8Array, 1], F8_E5M2: [Uint8Array, 1], F8_E4M3: [Uint8Array, 1],
    F8_E8M0: [Uint8Array, 1], F8_E4M3FNUZ: [Uint8Array, 1], F8_E5M2FNUZ: [Uint8Array, 1],
    F4: [Uint8Array, 0.5], F6_E2M3: [Uint8Array, 0.75], F6_E3M2: [Uint8Array, 0.75],
  }

  test('t.data has the class of its dtype, the right length, and the file bytes', async () => {
    const random = prng(7)
    /** @type {Record<string, any>} */
    const tensors = {}
    for (const dtype of DTYPE_NAMES) {
      const bytes = Uint8Array.from({ length: (8 * BITS[dtype]) / 8 }, () => Math.floor(random() * 256))
      tensors[dtype] = { dtype, shape: [8], data: bytes }
    }
    const f = await open(await serialize(tensors))
    for (const dtype of DTYPE_NAMES) {
      const [ctor, perElement] = VIEWS[/** @type {keyof VIEWS} */ (dtype)]
      const t = await f.tensor(dtype)
      assert.equal(t.data.constructor, ctor, `${dtype} data class`)
      assert.equal(t.data.length, 8 * perElement, `${dtype} data length`)
      assert.deepEqual(bytesOf(t.data), tensors[dtype].data, `${dtype} bytes`)
      assert.deepEqual(t.bytes, tensors[dtype].data)
      t.dispose()
    }
  })

  test('toFloat32 decodes each dtype exactly', async () => {
    /** @type {[string, ArrayBufferView, number[]][]} dtype, data, expected floats */
    const cases = [
      ['BF16', new Uint16Array([0x3fc0, 0xc000, 0x7f80, 0x0001]), [1.5, -2, Infinity, 2 ** -133]],
      ['F16', new Uint16Array([0x3c00, 0xc000, 0x7c00, 0x0001, 0x7bff]), [1, -2, Infinity, 2 ** -24, 65504]],
      ['F8_E4M3', new Uint8Array([0x38, 0x7e, 0x80, 0x01, 0xb8]), [1, 448, -0, 2 ** -9, -1]],
      ['F8_E5M2', new Uint8Array([0x3c, 0x7c, 0x01, 0x7b]), [1, Infinity, 2 ** -16, 57344]],
      ['F8_E8M0', new Uint8Array([127, 0, 254]), [1, 2 ** -127, 2 ** 127]],
      ['F8_E4M3FNUZ', new Uint8Array([0x40, 0x00]), [1, 0]],
      ['F8_E5M2FNUZ', new Uint8Array([0x40, 0x00]), [1, 0]],
      ['F4', new Uint8Array([0xf8, 0x9a]), [-0, -6, -1, -0.5]],
      ['BOOL', new Uint8Array([0, 1, 2]), [0, 1, 1]],
      ['U8', new Uint8Array([0, 255]), [0, 255]],
      ['I8', new Int8Array([-128, 127]), [-128, 127]],
      ['I16', new Int16Array([-32768, 5]), [-32768, 5]],
      ['U16', new Uint16Array([65535]), [65535]],
      ['I32', new Int32Array([-7, 2 ** 24 + 1]), [-7, 2 ** 24]],
      ['U32', new Uint32Array([4294967295]), [4294967296]],
      ['I64', new BigInt64Array([-3n, 1n << 40n]), [-3, 2 ** 40]],
      ['U64', new BigUint64Array([18446744073709551615n]), [2 ** 64]],
      ['F64', new Float64Array([0.1, 1e300]), [Math.fround(0.1), Infinity]],
      ['F32', f32([-0, 3.5]), [-0, 3.5]],
      ['C64', f32([1, -2, 3, -4]), [1, -2, 3, -4]],
    ]
    /** @type {Record<string, any>} */
    const tensors = {}
    for (const [dtype, data] of cases)
      tensors[dtype] = { dtype, shape: [(data.byteLength * 8) / BITS[/** @type {keyof BITS} */ (dtype)]], data }
    const f = await open(await serialize(tensors))
    for (const [dtype, , expected] of cases) {
      const t = await f.tensor(dtype)
      assert.deepEqual(t.toFloat32(), f32(expected), dtype)
      t.dispose()
    }
    const nan = await open(await serialize({
      bf: { dtype: 'BF16', shape: [1], data: new Uint16Array([0x7fc0]) },
      e4: { dtype: 'F8_E4M3', shape: [2], data: new Uint8Array([0x7f, 0xff]) },
      fnuz: { dtype: 'F8_E4M3FNUZ', shape: [1], data: new Uint8Array([0x80]) },
    }))
    for (const name of nan.names) for (const v of (await nan.tensor(name)).toFloat32()) assert.ok(Number.isNaN(v), `${name} NaN`)
  })

  test('F6 has no float form: toFloat32 and stats refuse it, bytes are there', async () => {
    const f = await open(await serialize({ x: { dtype: 'F6_E2M3', shape: [4], data: new Uint8Array([1, 2, 3]) } }))
    const t = await f.tensor('x')
    assert.deepEqual(t.bytes, new Uint8Array([1, 2, 3]))
    assert.throws(() => t.toFloat32(), {
      name: 'SafetensorsError', code: 'UnsupportedDtype', tensor: 'x',
      message: 'F6_E2M3 has no float32 form (its bit packing is not fixed): use .bytes',
    })
    assert.throws(() => t.stats(), { code: 'UnsupportedDtype', message: 'F6_E2M3 values cannot be summarised' })
  })

  test('stats on known values', async () => {
    const f = await open(await serialize({
      v: { dtype: 'F32', shape: [8], data: f32([1, 2, 3, 4, NaN, Infinity, -Infinity, 0]) },
      b: { dtype: 'BF16', shape: [4], data: new Uint16Array([0x3f80, 0x4000, 0xbf80, 0x0000]) },
      i: { dtype: 'I64', shape: [2, 2], data: new BigInt64Array([-(2n ** 40n), 0n, 2n ** 40n, 6n]) },
    }))
    const v = await f.tensor('v')
    assert.deepEqual(v.stats({ bins: 4 }), {
      count: 8, finiteCount: 5, nanCount: 1, infCount: 2, zeroCount: 1,
      min: 0, max: 4, mean: 2, std: Math.SQRT2,
      histogram: { min: 0, max: 4, counts: [1, 1, 1, 2] },
    })
    assert.equal(v.stats().histogram.counts.length, 64)
    assert.deepEqual(v.stats({ bins: 0 }).histogram.counts, [])
    assert.throws(() => v.stats({ bins: -1 }), { code: 'InvalidArgument' })
    assert.throws(() => v.stats({ bins: 1.5 }), { code: 'InvalidArgument' })
    const b = (await f.tensor('b')).stats({ bins: 2 })
    assert.deepEqual([b.min, b.max, b.mean, b.zeroCount, b.histogram.counts], [-1, 2, 0.5, 1, [2, 2]])
    const i = (await f.tensor('i')).stats({ bins: 1 })
    assert.deepEqual([i.min, i.max, i.mean, i.zeroCount, i.histogram.counts], [-(2 ** 40), 2 ** 40, 1.5, 1, [4]])
  })
})

describe('lifetimes and heap growth', () => {
  test('copy() is independent of the tensor and of dispose', async () => {
    const f = await open(await serialize(BASIC))
    const t = await f.tensor('m')
    const copy = t.copy()
    assert.ok(copy instanceof Float32Array)
    const core = await loadCore()
    assert.notEqual(copy.buffer, core.HEAPU8.buffer)
    copy[0] = 99
    assert.equal(t.data[0], 0)
    t.dispose()
    assert.equal(copy.length, 12)
    assert.deepEqual([...copy.subarray(1)], [...iota(12).subarray(1)])
  })

  test('dispose: later use throws Disposed, a second dispose is harmless, Symbol.dispose works', async () => {
    const f = await open(await serialize(BASIC))
    const t = await f.tensor('m')
    assert.equal(t.disposed, false)
    t.dispose()
    assert.equal(t.disposed, true)
    assert.throws(() => t.data, { name: 'SafetensorsError', code: 'Disposed' })
    assert.doesNotThrow(() => t.dispose())
    assert.throws(() => t.bytes, { code: 'Disposed' })
    /** @type {any} */
    const u = await f.tensor('m')
    u[Symbol.dispose ?? Symbol.for('Symbol.dispose')]()
    assert.equal(u.disposed, true)
  })

  test('close(): tensors read before stay valid, reads after fail with Closed', async () => {
    const f = await open(await serialize(BASIC))
    const t = await f.tensor('m')
    await f.close()
    await f.close()
    assert.deepEqual(t.data, iota(12))
    await assert.rejects(f.tensor('m'), { name: 'SafetensorsError', code: 'Closed' })
    await assert.rejects(f.slice('m', '0'), { code: 'Closed' })
    assert.deepEqual(f.info('m').shape, [3, 4])
  })

  test('heap growth: data is right afterwards, a view kept from before is detached', async () => {
    const core = await loadCore()
    const f = await open(await serialize(BASIC))
    const t = await f.tensor('m')
    const s = await f.slice('m', '1')
    const kept = t.data
    const keptBytes = s.bytes
    assert.deepEqual(kept, iota(12))
    const before = core.HEAPU8.buffer
    // Growth by loading a tensor larger than the whole current heap...
    const bigLength = core.HEAPU8.length
    const big = new Uint8Array(bigLength)
    big[bigLength - 1] = 42
    const g = await open(await serialize({ big: { dtype: 'U8', shape: [bigLength], data: big } }))
    const bigTensor = await g.tensor('big')
    assert.notEqual(core.HEAPU8.buffer, before, 'the heap grew')
    assert.equal(kept.length, 0, 'a view from before growth is detached, not wrong')
    assert.equal(keptBytes.length, 0)
    assert.deepEqual(t.data, iota(12))
    assert.equal(t.data.length, 12)
    assert.deepEqual(s.data, f32([4, 5, 6, 7]))
    assert.equal(bigTensor.data[bigLength - 1], 42)
    bigTensor.dispose()
    // ...and by a raw allocation past the heap's size.
    const kept2 = t.data
    const grown = core.HEAPU8.buffer
    const ptr = core._malloc(core.HEAPU8.length)
    try {
      assert.notEqual(ptr, 0)
      assert.notEqual(core.HEAPU8.buffer, grown, 'the heap grew again')
      assert.equal(kept2.length, 0)
      assert.deepEqual(t.data, iota(12))
      assert.deepEqual(t.toFloat32(), iota(12))
      assert.equal(t.stats().mean, 5.5)
      assert.deepEqual(t.copy(), iota(12))
    } finally {
      core._free(ptr)
    }
  })
})

// --- Writing --------------------------------------------------------------------------------

const ODD_NAMES = ['', 'a"b', 'back\\slash', 'ünïcödé', '日本語', 'crab 🦀', 'ctrl\u0001\n\t\u001f',
  'nul\u0000x', '/slash', ' ', '0', '10', '__metadata', '__proto__', 'a.b.c', 'model.layers.0.weight']

/**
 * A random tensor set over every dtype, with odd names, scalars and zero-size tensors.
 * @param {() => number} random
 */
function randomSet(random) {
  const pick = (/** @type {number} */ n) => Math.floor(random() * n)
  /** @type {Map<string, { dtype: string, shape: number[], data: Uint8Array }>} */
  const tensors = new Map()
  const count = 1 + pick(12)
  for (let k = 0; k < count; k++) {
    const name = random() < 0.5 ? ODD_NAMES[pick(ODD_NAMES.length)] : `t${pick(1000)}.${'x'.repeat(pick(4))}`
    if (tensors.has(name)) continue
    const dtype = DTYPE_NAMES[pick(DTYPE_NAMES.length)]
    const rank = pick(4)
    const shape = Array.from({ length: rank }, () => (random() < 0.1 ? 0 : 1 + pick(5)))
    // Sub-byte dtypes need whole bytes: scale the last dimension (a scalar F4 or F6 is invalid).
    const unit = dtype === 'F4' ? 2 : dtype.startsWith('F6') ? 4 : 1
    if (unit > 1) {
      if (rank === 0) shape.push(unit)
      else shape[rank - 1] *= unit
    }
    const elements = shape.reduce((a, b) => a * b, 1)
    const data = Uint8Array.from({ length: (elements * BITS[/** @type {keyof BITS} */ (dtype)]) / 8 }, () => pick(256))
    tensors.set(name, { dtype, shape, data })
  }
  const metadata = random() < 0.3 ? null : random() < 0.2 ? {}
    : Object.fromEntries(Array.from({ length: 1 + pick(4) }, () => [ODD_NAMES[pick(ODD_NAMES.length)], ODD_NAMES[pick(ODD_NAMES.length)]]))
  return { tensors, metadata }
}

/** @param {string} a @param {string} b */
function byteCompare(a, b) {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'))
}

/**
 * @param {import('../../js/file.js').SafetensorsFile} f
 * @param {Map<string, { dtype: string, shape: number[], data: Uint8Array }>} tensors
 * @param {Record<string, string> | null} metadata
 */
async function checkRoundTrip(f, tensors, metadata) {
  assert.deepEqual(f.metadata, metadata)
  const expectedOrder = [...tensors.keys()].sort((a, b) => {
    const ta = /** @type {any} */ (tensors.get(a)), tb = /** @type {any} */ (tensors.get(b))
    return (DTYPE_RANK.get(tb.dtype) ?? 0) - (DTYPE_RANK.get(ta.dtype) ?? 0) || byteCompare(a, b)
  })
  assert.deepEqual(f.names, expectedOrder)
  const loaded = await f.load(f.names)
  for (const [name, { dtype, shape, data }] of tensors) {
    const t = /** @type {any} */ (loaded.get(name))
    assert.deepEqual({ dtype: t.dtype, shape: t.shape, bytes: t.bytes }, { dtype, shape, bytes: data }, JSON.stringify(name))
    t.dispose()
  }
}

/** @param {ReadableStream<Uint8Array>} stream */
async function drain(stream) {
  const chunks = []
  for await (const chunk of /** @type {any} */ (stream)) chunks.push(new Uint8Array(chunk))
  return new Uint8Array(Buffer.concat(chunks))
}

describe('writing', () => {
  test('serialize, serializeStream and writeFile round trips of random sets (seeded)', async () => {
    const seed = 12345
    const random = prng(seed)
    const dir = await tempDir()
    const seen = new Set()
    try {
      for (let trial = 0; trial < 60; trial++) {
        const { tensors, metadata } = randomSet(random)
        for (const [name, t] of tensors) {
          seen.add(t.dtype)
          if (t.shape.length === 0) seen.add('scalar')
          if (t.shape.includes(0)) seen.add('zero-size')
          if (ODD_NAMES.includes(name)) seen.add(`name ${JSON.stringify(name)}`)
        }
        seen.add(metadata === null ? 'no metadata' : Object.keys(metadata).length === 0 ? 'empty metadata' : 'metadata')
        const context = `seed ${seed}, trial ${trial}`
        const bytes = await serialize(tensors, { metadata })
        await checkRoundTrip(await open(bytes), tensors, metadata ?? null).catch((e) => { e.message += ` (${context})`; throw e })
        assert.deepEqual(await serialize(tensors, { metadata }), bytes, `serialize is deterministic (${context})`)
        assert.deepEqual(await drain(await serializeStream(tensors, { metadata })), bytes, `serializeStream (${context})`)
        if (trial % 6 === 0) {
          const path = join(dir, `t${trial}.safetensors`)
          await writeFile(path, tensors, { metadata })
          assert.deepEqual(new Uint8Array(await readFile(path)), bytes, `writeFile (${context})`)
          const f = await open(path)
          await checkRoundTrip(f, tensors, metadata ?? null)
          await f.close()
        }
      }
      assert.deepEqual(await readdir(dir), Array.from({ length: 10 }, (_, i) => `t${i * 6}.safetensors`).sort())
      // The seed must reach every case this test claims to cover.
      const wanted = [...DTYPE_NAMES, 'scalar', 'zero-size', 'no metadata', 'empty metadata', 'metadata',
        ...ODD_NAMES.map((n) => `name ${JSON.stringify(n)}`)]
      assert.deepEqual(wanted.filter((w) => !seen.has(w)), [])
    } finally {
      await rm(dir, { recursive: true })
    }
  })

  test('Tensor objects write back to the same file', async () => {
    const bytes = await serialize(BASIC, { metadata: { a: 'b' } })
    const f = await open(bytes)
    const map = await f.load(f.names)
    assert.deepEqual(await serialize(map, { metadata: f.metadata }), bytes)
    assert.deepEqual(await serialize(map.values(), { metadata: f.metadata }), bytes)
    assert.deepEqual(await drain(await serializeStream(map, { metadata: f.metadata })), bytes)
  })

  test('the writer refuses what the reader would refuse, before writing a byte', async () => {
    const u8 = { dtype: 'U8', shape: [1], data: new Uint8Array(1) }
    await assert.rejects(serialize({ __metadata__: u8 }), {
      code: 'InvalidHeaderDeserialization', tensor: '__metadata__',
      message: 'a tensor cannot be named "__metadata__": that key holds the metadata',
    })
    await assert.rejects(serialize({ a: { dtype: 'F32', shape: [2], data: new Float32Array(3) } }), {
      code: 'TensorInvalidInfo', tensor: 'a', message: 'tensor "a" F32 [2] needs 8 bytes but its data is 12',
    })
    await assert.rejects(serialize({ a: { dtype: 'F4', shape: [3], data: new Uint8Array(2) } }), { code: 'MisalignedSlice', tensor: 'a' })
    await assert.rejects(serialize({ a: { ...u8, dtype: 'U9' } }), { code: 'InvalidHeaderDeserialization', tensor: 'a' })
    await assert.rejects(serialize({ a: { ...u8, shape: [-1] } }), { code: 'InvalidHeaderDeserialization', tensor: 'a' })
    await assert.rejects(serialize({ a: u8 }, { metadata: /** @type {any} */ ({ k: 1 }) }), { code: 'InvalidHeaderDeserialization' })
    await assert.rejects(serializeStream({ __metadata__: u8 }), { code: 'InvalidHeaderDeserialization' })
    // A lone surrogate has no UTF-8 form (TextEncoder would write U+FFFD instead): refused.
    await assert.rejects(serialize({ ['a\uD800b']: u8 }), {
      code: 'InvalidHeader', tensor: 'a\uD800b',
      message: 'tensor name "a\\ud800b" is not valid Unicode: a lone surrogate U+D800 at index 1 has no UTF-8 form',
    })
    await assert.rejects(serialize({ a: u8 }, { metadata: { ['\uDC00k']: 'v' } }), { code: 'InvalidHeader', tensor: null })
    await assert.rejects(serialize({ a: u8 }, { metadata: { k: 'v\uD83D' } }), {
      code: 'InvalidHeader', message: 'metadata value of "k" "v\\ud83d" is not valid Unicode: a lone surrogate U+D83D at index 1 has no UTF-8 form',
    })
    const paired = await open(await serialize({ ['\uD83D\uDE00']: u8 }, { metadata: { k: '\uD83D\uDE00' } }))
    assert.deepEqual([paired.names, paired.metadata], [['\uD83D\uDE00'], { k: '\uD83D\uDE00' }])
    const dir = await tempDir()
    try {
      await assert.rejects(writeFile(join(dir, 'x.safetensors'), { __metadata__: u8 }), { code: 'InvalidHeaderDeserialization' })
      assert.deepEqual(await readdir(dir), [])
    } finally {
      await rm(dir, { recursive: true })
    }
  })

  test('writeFile failing midway leaves no file, an existing target untouched, no temp file', async () => {
    const dir = await tempDir()
    try {
      const target = join(dir, 'model.safetensors')
      const make = () => {
        const b = new Float32Array([5, 6, 7, 8])
        return { b, tensors: { a: { dtype: 'F32', shape: [2], data: f32([1, 2]) }, b: { dtype: 'F32', shape: [4], data: b } } }
      }
      // A tensor's buffer is detached after planning (the first progress report is the header).
      const detachAfterHeader = (/** @type {Float32Array} */ b) => {
        let done = false
        return () => {
          if (!done) structuredClone(b.buffer, { transfer: [b.buffer] })
          done = true
        }
      }
      let { b, tensors } = make()
      await assert.rejects(writeFile(target, tensors, { onProgress: detachAfterHeader(b) }), {
        name: 'SafetensorsError', code: 'TensorInvalidInfo', tensor: 'b',
        message: 'data of tensor "b" is 0 bytes, was 16 when planned (detached?)',
      })
      assert.deepEqual(await readdir(dir), [], 'no target, no temp file')

      const existing = new TextEncoder().encode('the old file')
      await fsWriteFile(target, existing)
      ;({ b, tensors } = make())
      await assert.rejects(writeFile(target, tensors, { onProgress: detachAfterHeader(b) }), { code: 'TensorInvalidInfo' })
      assert.deepEqual(await readdir(dir), ['model.safetensors'])
      assert.deepEqual(new Uint8Array(await readFile(target)), existing)

      // A list of heap tensors where a later one is disposed while writing.
      const f = await open(await serialize(BASIC))
      const list = [...(await f.load(['m', 'q'])).values()]
      let calls = 0
      await assert.rejects(writeFile(target, list, { onProgress: () => { if (calls++ === 1) list[1].dispose() } }), {
        code: 'Disposed', tensor: 'q',
      })
      assert.equal(calls, 2, 'the header and the first tensor were written')
      assert.deepEqual(await readdir(dir), ['model.safetensors'])
      assert.deepEqual(new Uint8Array(await readFile(target)), existing)

      // And a complete write replaces the target.
      ;({ tensors } = make())
      await writeFile(target, tensors)
      assert.deepEqual(await readdir(dir), ['model.safetensors'])
      assert.deepEqual(new Uint8Array(await readFile(target)), await serialize(make().tensors))
    } finally {
      await rm(dir, { recursive: true })
    }
  })

  test('serializeStream reports a buffer detached while streaming', async () => {
    const b = new Float32Array([5, 6, 7, 8])
    const stream = await serializeStream({ b: { dtype: 'F32', shape: [4], data: b } })
    const reader = stream.getReader()
    const header = await reader.read()
    assert.equal(header.done, false)
    structuredClone(b.buffer, { transfer: [b.buffer] })
    await assert.rejects(reader.read(), { code: 'TensorInvalidInfo', tensor: 'b' })
  })
})

// --- What a read costs ----------------------------------------------------------------------

describe('reading counts', () => {
  // a: 16 bytes, b: 16 bytes, c: 16 bytes, back to back (all F32, so in name order); m: [3, 4].
  const SET = {
    a: { dtype: 'F32', shape: [4], data: f32([1, 2, 3, 4]) },
    b: { dtype: 'F32', shape: [4], data: f32([5, 6, 7, 8]) },
    c: { dtype: 'F32', shape: [4], data: f32([9, 10, 11, 12]) },
    m: { dtype: 'F32', shape: [3, 4], data: iota(12) },
    z: { dtype: 'F32', shape: [0], data: f32([]) },
  }

  test('opening reads the 8-byte length and the N header bytes, nothing more', async () => {
    const bytes = await serialize(SET)
    const source = countingSource(bytes)
    const f = await open(source)
    assert.deepEqual(source.reads, [[0, 8], [8, f.headerLength]])
    assert.equal(source.bytesRead, 8 + f.headerLength)
  })

  test('a tensor read reads only its bytes; a zero-size tensor reads nothing', async () => {
    const source = countingSource(await serialize(SET))
    const f = await open(source)
    source.reads.length = 0
    const b = await f.tensor('b')
    assert.deepEqual(source.reads, [[f.info('b').byteOffset, 16]])
    assert.deepEqual(b.data, f32([5, 6, 7, 8]))
    source.reads.length = 0
    await f.tensor('z')
    assert.deepEqual(source.reads, [])
  })

  test('load: adjacent tensors are one read; a gap splits them unless mergeGap covers it', async () => {
    const source = countingSource(await serialize(SET))
    const f = await open(source)
    const a = f.info('a').byteOffset
    source.reads.length = 0
    const ab = await f.load(['b', 'a'])
    assert.deepEqual(source.reads, [[a, 32]])
    assert.deepEqual(ab.get('a')?.data, f32([1, 2, 3, 4]))
    assert.deepEqual(ab.get('b')?.data, f32([5, 6, 7, 8]))
    source.reads.length = 0
    const ac = await f.load(['a', 'c'])
    assert.deepEqual(source.reads, [[a, 16], [a + 32, 16]])
    assert.deepEqual(ac.get('c')?.data, f32([9, 10, 11, 12]))
    source.reads.length = 0
    const merged = await f.load(['a', 'c'], { mergeGap: 16 })
    assert.deepEqual(source.reads, [[a, 48]])
    assert.deepEqual(merged.get('a')?.data, f32([1, 2, 3, 4]))
    assert.deepEqual(merged.get('c')?.data, f32([9, 10, 11, 12]))
  })

  test('a slice reads only its ranges', async () => {
    const source = countingSource(await serialize(SET))
    const f = await open(source)
    const m = f.info('m').byteOffset
    source.reads.length = 0
    assert.deepEqual((await f.slice('m', '1')).data, f32([4, 5, 6, 7]))
    assert.deepEqual(source.reads, [[m + 16, 16]])
    source.reads.length = 0
    assert.deepEqual((await f.slice('m', ':, 1:3')).data, f32([1, 2, 5, 6, 9, 10]))
    assert.deepEqual(source.reads, [[m + 4, 8], [m + 20, 8], [m + 36, 8]])
    source.reads.length = 0
    await f.slice('m', ':, 1:3', { mergeGap: 8 })
    assert.deepEqual(source.reads, [[m + 4, 40]])
  })

  test('a Node file reads straight into the heap: one readInto per tensor, progress reported', async () => {
    const dir = await tempDir()
    try {
      const path = join(dir, 'x.safetensors')
      await writeFile(path, SET)
      const inner = await nodeFileSource(path)
      /** @type {[number, number][]} */
      const intos = []
      /** @type {[number, number][]} */
      const reads = []
      const source = {
        byteLength: inner.byteLength,
        /** @type {any} */ read: (o, n, opts) => { reads.push([o, n]); return inner.read(o, n, opts) },
        /** @type {any} */ readInto: (o, n, viewAt, opts) => { intos.push([o, n]); return /** @type {any} */ (inner).readInto(o, n, viewAt, opts) },
      }
      const f = await open(source)
      reads.length = 0
      intos.length = 0
      /** @type {{ loaded: number, total: number }[]} */
      const progress = []
      const t = await f.tensor('m', { onProgress: (p) => progress.push(p) })
      assert.deepEqual(t.data, iota(12))
      assert.deepEqual(intos, [[f.info('m').byteOffset, 48]])
      assert.deepEqual(reads, [])
      assert.deepEqual(progress, [{ loaded: 48, total: 48 }])
      await inner.close?.()
    } finally {
      await rm(dir, { recursive: true })
    }
  })
})

// --- The sample model (tests/fixtures/make-sample.js) ---------------------------------------

describe('the sample model', () => {
  test('its encoders agree with the core: BF16 and F16 bit for bit, F8_E4M3 round trips', async () => {
    const core = await loadCore()
    const random = prng(99)
    const values = [0, -0, 1, -1, 0.1, 65504, 65520, 1e-8, 2 ** -24, 2 ** -25, 3 * 2 ** -26, 2 ** -14, 1e38, 3.4e38, Infinity, -Infinity, NaN]
    for (let i = 0; i < 4000; i++) {
      const e = Math.floor(random() * 80) - 40
      values.push((random() - 0.5) * 2 ** e)
    }
    const n = values.length
    const src = core._malloc(n * 4)
    const dst = core._malloc(n * 2)
    try {
      new Float32Array(core.HEAPU8.buffer, src, n).set(values)
      for (const [toBf16, encode] of /** @type {const} */ ([[true, f32ToBf16], [false, f32ToF16]])) {
        core.float32ToHalf(toBf16, src, n, dst)
        const want = Array.from(new Uint16Array(core.HEAPU8.buffer, dst, n))
        assert.deepEqual(values.map(encode), want, toBf16 ? 'BF16' : 'F16')
      }
    } finally {
      core._free(src)
      core._free(dst)
    }
    // Every F8_E4M3 byte but NaN: the core decodes it to v, and v encodes back to the byte.
    const all = Uint8Array.from({ length: 256 }, (_, i) => i)
    const f = await open(await serialize({ e4: { dtype: 'F8_E4M3', shape: [256], data: all } }))
    const decoded = (await f.tensor('e4')).toFloat32()
    for (let byte = 0; byte < 256; byte++) {
      if ((byte & 0x7f) === 0x7f) {
        assert.ok(Number.isNaN(decoded[byte]))
        continue
      }
      assert.equal(decoded[byte], f8E4M3ToF32(byte), `decode 0x${byte.toString(16)}`)
      assert.equal(f32ToF8E4M3(decoded[byte]), byte, `encode 0x${byte.toString(16)}`)
    }
    assert.equal(f32ToF8E4M3(1e6), 0x7e)
    assert.equal(f32ToF8E4M3(-1e6), 0xfe)
    assert.equal(f32ToF8E4M3(1.0625), 0x38, 'a tie rounds to even')
    assert.equal(f32ToF8E4M3(1.1875), 0x3a, 'a tie rounds to even')
  })

  test('it is deterministic, llama-shaped, and its values are what they claim', async () => {
    const dir = await tempDir()
    try {
      const { makeSample } = await import('../fixtures/make-sample.js')
      const path = join(dir, 'sample.safetensors')
      await makeSample(path)
      const bytes = new Uint8Array(await readFile(path))
      assert.ok(bytes.length > 1e6 && bytes.length < 3e6, `size ${bytes.length}`)
      const { tensors, metadata, config, fp8Source } = sampleModel()
      assert.deepEqual(await serialize(tensors, { metadata }), bytes, 'same seed, same bytes')
      assert.notDeepEqual(await serialize(sampleModel({ seed: 1 }).tensors, { metadata }), bytes)

      const f = await open(path)
      assert.equal(f.metadata?.format, 'pt')
      assert.deepEqual(JSON.parse(f.metadata?.config ?? ''), config)
      const names = new Set(f.names)
      for (const name of ['model.embed_tokens.weight', 'model.norm.weight', 'lm_head.weight', 'model.position_ids'])
        assert.ok(names.has(name), name)
      for (let l = 0; l < config.num_hidden_layers; l++) {
        for (const p of ['q', 'k', 'v', 'o']) assert.ok(names.has(`model.layers.${l}.self_attn.${p}_proj.weight`))
        for (const p of ['gate', 'up', 'down']) assert.ok(names.has(`model.layers.${l}.mlp.${p}_proj.weight`))
        assert.ok(names.has(`model.layers.${l}.input_layernorm.weight`))
        assert.ok(names.has(`model.layers.${l}.post_attention_layernorm.weight`))
      }
      assert.deepEqual(new Set(Object.keys(f.parameterCount().byDtype)), new Set(['F32', 'F16', 'BF16', 'I64']))
      assert.deepEqual(f.parameterCount().byScheme, { fp8: config.hidden_size * config.intermediate_size })

      for (const [name, dtype] of [['model.embed_tokens.weight', 'BF16'], ['model.layers.1.mlp.up_proj.weight', 'F16'], ['lm_head.weight', 'F32']]) {
        const t = await f.tensor(name)
        assert.equal(t.dtype, dtype)
        const s = t.stats()
        assert.ok(Math.abs(s.mean) < 0.001, `${name} mean ${s.mean}`)
        assert.ok(Math.abs(s.std - 0.02) < 0.001, `${name} std ${s.std}`)
        t.dispose()
      }
      const norm = (await f.tensor('model.layers.2.input_layernorm.weight')).stats()
      assert.deepEqual([norm.min, norm.max, norm.count], [1, 1, config.hidden_size])
      const positions = await f.tensor('model.position_ids')
      assert.deepEqual(positions.shape, [1, config.max_position_embeddings])
      assert.deepEqual(positions.data, BigInt64Array.from({ length: config.max_position_embeddings }, (_, i) => BigInt(i)))

      // The F8 weight times its scale is the float weight, within F8_E4M3's precision.
      const p = `model.layers.${FP8_LAYER}.mlp.down_proj`
      const q = await f.tensor(`${p}.weight`)
      assert.equal(q.dtype, 'F8_E4M3')
      const scale = await f.tensor(`${p}.weight_scale`)
      assert.deepEqual(scale.shape, [])
      const [k] = scale.toFloat32()
      const w = q.toFloat32()
      let maxAbs = 0
      for (let i = 0; i < w.length; i++) {
        maxAbs = Math.max(maxAbs, Math.abs(w[i]))
        const err = Math.abs(w[i] * k - fp8Source[i])
        assert.ok(err <= Math.abs(fp8Source[i]) / 16 + k * 2 ** -10, `element ${i}: ${w[i] * k} vs ${fp8Source[i]}`)
      }
      assert.equal(maxAbs, 448, 'the largest weight maps to the F8 maximum')
      // As an fp8 weight (per-tensor scale, no config): dequantize gives e4m3 * scale, one float32 rounding.
      assert.deepEqual(f.quantized().map((e) => [e.name, e.scheme, e.details]), [[`${p}.weight`, 'fp8', { strategy: 'tensor' }]])
      const d = await f.dequantize(`${p}.weight`)
      assert.deepEqual(d.shape, q.shape)
      for (let i = 0; i < w.length; i++) if (d.data[i] !== Math.fround(w[i] * k) && !Number.isNaN(w[i])) assert.fail(`dequantized element ${i}: ${d.data[i]}, expected ${Math.fround(w[i] * k)}`)
      d.dispose()
      await f.close()
    } finally {
      await rm(dir, { recursive: true })
    }
  })
})

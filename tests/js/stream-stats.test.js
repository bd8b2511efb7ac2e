// f.stats(): Tensor.stats streamed through f.chunks(), bit for bit the same result for every
// dtype, at chunk sizes that cut the tensor into many pieces, of a slice, on a sharded set and for
// quantized weights (against dequantize().stats()); abort, progress and a bounded heap; and
// Tensor.toFloat32({ into }).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { SafetensorsError, open, serialize } from '../../js/node.js'
import { heapInUse } from '../../js/core/index.js'
import { DTYPE_BITS } from '../../js/dtypes.js'
import { loadCore } from '../../js/wasm.js'
import { fixtures, shardedFixture, toBytes } from './quant-fixtures.js'

/** Deterministic bytes. @param {number} n @param {number} seed */
function randomBytes(n, seed) {
  const out = new Uint8Array(n)
  let x = (seed * 0x9e3779b1) | 1
  for (let i = 0; i < n; i++) {
    x ^= x << 13; x ^= x >>> 17; x ^= x << 5
    out[i] = x >>> 24
  }
  return out
}

/**
 * Values a float type might hold: mostly of one scale, a few random bit patterns (NaN, infinity,
 * huge), some zeros.
 * @param {string} dtype @param {number} elements @param {number} seed
 */
function tensorBytes(dtype, elements, seed) {
  const bits = DTYPE_BITS[dtype]
  const bytes = randomBytes(Math.ceil((elements * bits) / 8), seed)
  if (dtype === 'F32' || dtype === 'C64' || dtype === 'F64') {
    const n = dtype === 'C64' ? 2 * elements : elements
    const view = dtype === 'F64' ? new Float64Array(bytes.buffer) : new Float32Array(bytes.buffer)
    for (let i = 0; i < n; i++) if (bytes[(i * 7) % bytes.length] > 8) view[i] = Math.sin(i * 0.37) * (1 + (i % 13)) * (i % 101 === 0 ? 0 : 1)
  }
  return bytes
}

const DTYPES = Object.keys(DTYPE_BITS).filter((d) => DTYPE_BITS[d] !== 6)
/** About 100 KB per tensor: a dozen pieces or more at 8 KiB; odd counts where they can be. */
const elementsOf = (/** @type {string} */ dtype) => Math.floor((100_000 * 8) / DTYPE_BITS[dtype]) + (DTYPE_BITS[dtype] === 4 ? 2 : DTYPE_BITS[dtype] === 8 ? 1 : 3)

async function plainFile() {
  /** @type {Record<string, any>} */
  const tensors = {}
  DTYPES.forEach((dtype, k) => {
    const n = elementsOf(dtype)
    tensors[dtype] = { dtype, shape: [n], data: tensorBytes(dtype, n, k + 1) }
  })
  tensors.matrix = { dtype: 'F32', shape: [300, 120], data: tensorBytes('F32', 300 * 120, 99) }
  tensors.bfmatrix = { dtype: 'BF16', shape: [300, 120], data: tensorBytes('BF16', 300 * 120, 98) }
  tensors.f6 = { dtype: 'F6_E2M3', shape: [8], data: new Uint8Array(6) }
  tensors.empty = { dtype: 'F32', shape: [0, 4], data: new Uint8Array(0) }
  tensors.nan = { dtype: 'F32', shape: [5000], data: new Uint8Array(new Float32Array(5000).fill(NaN).buffer) }
  tensors.same = { dtype: 'F64', shape: [5000], data: new Uint8Array(new Float64Array(5000).fill(-2.5).buffer) }
  return open(await serialize(tensors))
}

/** @param {Promise<unknown>} promise @param {string} code */
async function rejectsWith(promise, code) {
  await assert.rejects(promise, (/** @type {any} */ e) => {
    assert.ok(e instanceof SafetensorsError, String(e))
    assert.equal(e.code, code, e.message)
    return true
  })
}

test('every dtype: f.stats equals Tensor.stats bit for bit, whole and in many pieces', async () => {
  const f = await plainFile()
  for (const name of [...DTYPES, 'matrix', 'empty', 'nan', 'same']) {
    const t = await f.tensor(name)
    for (const bins of [64, 0, 7]) {
      const expected = t.stats({ bins })
      for (const chunkBytes of [1, 8192, 3 * 8192, undefined]) {
        let pieces = 0
        const got = await f.stats(name, { bins, chunkBytes, onProgress: () => { pieces++ } })
        assert.deepStrictEqual(got, expected, `${name}, ${bins} bins, chunkBytes ${chunkBytes}`)
        if (chunkBytes === 8192 && t.byteLength > 50_000) assert.ok(pieces >= 6, `${name}: ${pieces} pieces`)
      }
    }
    t.dispose()
  }
  await rejectsWith(f.stats('f6'), 'UnsupportedDtype')
  await rejectsWith(f.stats('F32', { bins: -1 }), 'InvalidArgument')
  await rejectsWith(f.stats('F32', { chunkBytes: 0 }), 'InvalidArgument')
  await rejectsWith(f.stats('nope'), 'TensorNotFound')
  await f.close()
})

test('a slice: f.stats(name, { slice }) equals f.slice(name, spec).stats()', async () => {
  const f = await plainFile()
  for (const name of ['matrix', 'bfmatrix']) {
    for (const slice of ['3:250, 5:117', '10:11', [[0, 300], [1, 2]], ':, 60:']) {
      const t = await f.slice(name, slice)
      const got = await f.stats(name, { slice, chunkBytes: 8192, bins: 33 })
      assert.deepStrictEqual(got, t.stats({ bins: 33 }), `${name} [${JSON.stringify(slice)}]`)
      t.dispose()
    }
  }
  await f.close()
})

test('a sharded set: each tensor streamed from its shard', async () => {
  /** @type {Record<string, Record<string, any>>} */
  const shards = {
    'model-00001-of-00002.safetensors': { a: { dtype: 'F32', shape: [70000], data: tensorBytes('F32', 70000, 5) } },
    'model-00002-of-00002.safetensors': { b: { dtype: 'BF16', shape: [90001], data: tensorBytes('BF16', 90001, 6) } },
  }
  /** @type {Record<string, Uint8Array>} */
  const bytes = {}
  /** @type {Record<string, string>} */
  const weightMap = {}
  for (const [path, tensors] of Object.entries(shards)) {
    bytes[path] = await serialize(tensors)
    for (const name of Object.keys(tensors)) weightMap[name] = path
  }
  const index = new TextEncoder().encode(JSON.stringify({ metadata: { total_size: 1 }, weight_map: weightMap }))
  const f = await open(index, { shards: bytes })
  for (const name of ['a', 'b']) {
    const t = await f.tensor(name)
    assert.deepStrictEqual(await f.stats(name, { chunkBytes: 16384 }), t.stats(), name)
    assert.deepStrictEqual(await f.stats(name, { slice: '100:900', bins: 5 }), (await f.slice(name, '100:900')).stats({ bins: 5 }), `${name} sliced`)
    t.dispose()
  }
  await f.close()
})

const QUANT = fixtures()
const CONFIGS = /** @type {Record<string, any>} */ ({ 'gptq-v2': true, 'fp8-b64': true })

test('quantized weights: f.stats of a logical name equals dequantize().stats(), in pieces of rows', async () => {
  let checked = 0
  for (const [file, fx] of Object.entries(QUANT)) {
    const f = await open(await toBytes(fx.tensors), CONFIGS[file] && 'config' in fx ? { quantization: fx.config } : {})
    for (const q of f.quantized()) {
      const t = await f.dequantize(q.name)
      for (const bins of [64, 0]) {
        const expected = t.stats({ bins })
        // 8 KiB of float32 a piece: many pieces for all but the smallest weights.
        assert.deepStrictEqual(await f.stats(q.name, { bins, chunkBytes: 8192 }), expected, `${file}: ${q.name}, ${bins} bins`)
        assert.deepStrictEqual(await f.stats(q.name, { bins }), expected, `${file}: ${q.name} in one piece`)
      }
      if (q.shape.length > 0 && q.shape[0] > 2) {
        const part = await f.dequantize(q.name, { slice: [1, -1] })
        assert.deepStrictEqual(await f.stats(q.name, { slice: [1, -1], chunkBytes: 8192 }), part.stats(), `${file}: ${q.name} rows 1:-1`)
        assert.deepStrictEqual(await f.stats(q.name, { slice: '1:-1', chunkBytes: 8192 }), part.stats(), `${file}: ${q.name} '1:-1'`)
        part.dispose()
      }
      t.dispose()
      checked++
    }
    // Plain tensors of the same file stream as tensors.
    for (const name of fx.plain) {
      const t = await f.tensor(name)
      assert.deepStrictEqual(await f.stats(name), t.stats(), `${file}: plain ${name}`)
      t.dispose()
    }
    await f.close()
  }
  assert.ok(checked >= 10, `${checked} quantized weights`)
})

test('quantized weights of a sharded set whose parts are in different shards', async () => {
  const set = shardedFixture()
  /** @type {Record<string, Uint8Array>} */
  const shards = {}
  for (const [path, tensors] of Object.entries(set.shards)) shards[path] = await toBytes(tensors)
  const index = new TextEncoder().encode(JSON.stringify({ metadata: { total_size: 1 }, weight_map: set.weightMap }))
  const f = await open(index, { shards })
  for (const w of set.weights) {
    const t = await f.dequantize(w.name)
    assert.deepStrictEqual(await f.stats(w.name, { chunkBytes: 8192 }), t.stats(), w.name)
    t.dispose()
  }
  for (const name of set.plain) {
    const t = await f.tensor(name)
    assert.deepStrictEqual(await f.stats(name), t.stats(), name)
    t.dispose()
  }
  await f.close()
})

test('progress counts both passes of a wide dtype and one of a 16-bit one; abort stops and frees the heap', async () => {
  const core = await loadCore()
  const f = await plainFile()
  for (const [name, passes] of /** @type {[string, number][]} */ ([['F32', 2], ['BF16', 1], ['U8', 1], ['F64', 2]])) {
    const bytes = f.info(name).byteLength
    /** @type {{ loaded: number, total: number }[]} */
    const seen = []
    await f.stats(name, { chunkBytes: 8192, onProgress: (p) => seen.push(p) })
    assert.ok(seen.every((p) => p.total === passes * bytes), `${name}: total ${seen[0].total} = ${passes} x ${bytes}`)
    assert.ok(seen.every((p, i) => i === 0 || p.loaded >= seen[i - 1].loaded), `${name}: loaded never goes back`)
    assert.equal(seen.at(-1)?.loaded, passes * bytes, `${name}: ends at the total`)
    // One chunk: read once, whatever the dtype.
    const once = /** @type {{ loaded: number, total: number }[]} */ ([])
    await f.stats(name, { onProgress: (p) => once.push(p) })
    assert.deepEqual(once.at(-1), { loaded: bytes, total: bytes }, `${name} in one chunk`)
  }
  const before = heapInUse(core)
  const aborted = new AbortController()
  aborted.abort()
  await rejectsWith(f.stats('F32', { signal: aborted.signal }), 'Aborted')
  for (const name of ['F32', 'BF16']) {
    const controller = new AbortController()
    let calls = 0
    await rejectsWith(f.stats(name, { chunkBytes: 8192, signal: controller.signal, onProgress: () => { if (++calls === 3) controller.abort() } }), 'Aborted')
    assert.equal(calls, 3, `${name}: no piece after the abort`)
  }
  const fx = QUANT['fp8']
  const g = await open(await toBytes(fx.tensors))
  const q = g.quantized()[0]
  const controller = new AbortController()
  await rejectsWith(g.stats(q.name, { chunkBytes: 8192, signal: controller.signal, onProgress: () => controller.abort() }), 'Aborted')
  await g.close()
  assert.equal(heapInUse(core), before, 'the heap is back where it was')
  await f.close()
})

test('the heap holds two chunks (and the 16-bit table) at most, whatever the tensor size', async () => {
  const core = await loadCore()
  const n = 1 << 21  // 8 MiB of F32, 4 MiB of BF16
  const f = await open(await serialize({
    big: { dtype: 'F32', shape: [n], data: tensorBytes('F32', n, 3) },
    half: { dtype: 'BF16', shape: [n], data: tensorBytes('BF16', n, 4) },
  }))
  for (const name of ['big', 'half']) {
    const before = heapInUse(core)
    let peak = 0
    const chunkBytes = 64 << 10
    await f.stats(name, { chunkBytes, onProgress: () => { peak = Math.max(peak, heapInUse(core) - before) } })
    assert.ok(peak <= 2 * chunkBytes + (512 << 10) + (16 << 10), `${name}: ${peak} bytes of heap at most`)
    assert.equal(heapInUse(core), before)
  }
  await f.close()
})

test('toFloat32({ into }) writes what toFloat32() returns into the caller\'s array, for every dtype', async () => {
  const f = await plainFile()
  for (const name of [...DTYPES, 'matrix', 'empty']) {
    const t = await f.tensor(name)
    const fresh = t.toFloat32()
    const into = new Float32Array(fresh.length).fill(12345)
    assert.equal(t.toFloat32({ into }), into, `${name}: returns into`)
    assert.deepEqual(new Uint8Array(into.buffer), new Uint8Array(fresh.buffer), `${name}: the same bits`)
    // A view inside a larger buffer: only its own elements written.
    const outer = new Float32Array(fresh.length + 2).fill(7)
    t.toFloat32({ into: outer.subarray(1, fresh.length + 1) })
    assert.equal(outer[0], 7)
    assert.equal(outer[fresh.length + 1], 7)
    assert.deepEqual(new Uint8Array(outer.buffer, 4, fresh.byteLength), new Uint8Array(fresh.buffer))
    assert.throws(() => t.toFloat32({ into: new Float32Array(fresh.length + 1) }), (/** @type {any} */ e) => e.code === 'InvalidArgument')
    assert.throws(() => t.toFloat32({ into: /** @type {any} */ (new Float64Array(fresh.length)) }), (/** @type {any} */ e) => e.code === 'InvalidArgument')
    t.dispose()
  }
  const t6 = await f.tensor('f6')
  assert.throws(() => t6.toFloat32({ into: new Float32Array(8) }), (/** @type {any} */ e) => e.code === 'UnsupportedDtype')
  t6.dispose()
  await f.close()
})

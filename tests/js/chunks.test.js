// f.chunks(): a tensor's bytes through two heap buffers, for files, slices and sharded sets, and
// a 6 GiB tensor from a virtual source (bytes generated, never stored) through a bounded heap.
// load() refuses what cannot be in the heap together before reading.
import { test } from 'node:test'
import { createHash } from 'node:crypto'
import assert from 'node:assert/strict'
import { open, serialize } from '../../js/node.js'
import { heapInUse } from '../../js/core/index.js'
import { loadCore } from '../../js/wasm.js'
import { fails } from './fails.js'
import { startServer } from './http-server.js'
import { fileStart, virtualFile } from './virtual-file.js'

/** @param {number} n @param {number} seed */
const bytes = (n, seed) => Uint8Array.from({ length: n }, (_, i) => (i * 131 + seed * 7 + (i >> 8)) & 255)

const TENSORS = {
  f32: { dtype: 'F32', shape: [37, 29], data: bytes(37 * 29 * 4, 1) },
  c64: { dtype: 'C64', shape: [11, 3], data: bytes(11 * 3 * 8, 2) },
  f4: { dtype: 'F4', shape: [9, 10], data: bytes(45, 3) },
  f6: { dtype: 'F6_E2M3', shape: [12], data: bytes(9, 4) },
  u8: { dtype: 'U8', shape: [1000], data: bytes(1000, 5) },
  bf16: { dtype: 'BF16', shape: [40, 25], data: bytes(2000, 6) },
  empty: { dtype: 'F32', shape: [0, 3], data: new Uint8Array(0) },
}

/** Concatenates the chunks, checking that their offsets follow one another. */
async function gather(/** @type {AsyncIterable<{ offset: number, data: ArrayBufferView }>} */ chunks, max = Infinity) {
  const parts = []
  let at = 0
  for await (const { offset, data } of chunks) {
    assert.equal(offset, at, 'offsets follow one another')
    assert.ok(data.byteLength > 0 && data.byteLength <= max, `a piece of ${data.byteLength} bytes (at most ${max})`)
    parts.push(new Uint8Array(data.buffer, data.byteOffset, data.byteLength).slice())
    at += data.byteLength
  }
  const out = new Uint8Array(at)
  let k = 0
  for (const p of parts) { out.set(p, k); k += p.length }
  return out
}

test('chunks: every tensor, whole elements per piece, the typed view t.data has, at many chunk sizes', async () => {
  const f = await open(await serialize(TENSORS))
  for (const name of f.names) {
    const t = await f.tensor(name)
    const unit = { F32: 4, C64: 8, F4: 1, F6_E2M3: 3, U8: 1, BF16: 2 }[t.dtype] ?? 1
    for (const chunkBytes of [1, 7, 64, 1000, 1 << 20]) {
      const seen = []
      for await (const { data } of f.chunks(name, { chunkBytes })) {
        assert.equal(data.constructor, t.data.constructor, `${name}: the class of t.data`)
        assert.equal(data.byteLength % unit, 0, `${name}: whole elements (${unit} bytes) at chunkBytes ${chunkBytes}`)
        seen.push(data.byteLength)
      }
      assert.ok(seen.every((n, i) => i === seen.length - 1 || n === seen[0]), 'pieces of one size but the last')
      assert.deepEqual(await gather(f.chunks(name, { chunkBytes })), t.bytes.slice(), `${name} at chunkBytes ${chunkBytes}`)
    }
    t.dispose()
  }
})

test('chunks of a slice are the slice\'s bytes; progress counts them; a sharded set streams from its shard', async () => {
  const f = await open(await serialize(TENSORS))
  for (const [name, spec] of [['f32', '3:20, 5:9'], ['bf16', ':, 1'], ['u8', '-10:'], ['c64', '2']]) {
    const s = await f.slice(name, spec)
    /** @type {{ loaded: number, total: number }[]} */
    const progress = []
    assert.deepEqual(await gather(f.chunks(name, { slice: spec, chunkBytes: 16, onProgress: (p) => progress.push(p) })), s.bytes.slice())
    assert.deepEqual(progress.at(-1), { loaded: s.byteLength, total: s.byteLength })
    s.dispose()
  }
  const a = await serialize({ a: TENSORS.f32 })
  const b = await serialize({ b: TENSORS.bf16 })
  const index = new TextEncoder().encode(JSON.stringify({ weight_map: { a: 'a.safetensors', b: 'b.safetensors' } }))
  const g = await open(index, { shards: { 'a.safetensors': a, 'b.safetensors': b } })
  assert.deepEqual(await gather(g.chunks('b', { chunkBytes: 100 })), TENSORS.bf16.data)
})

/**
 * Leaving the loop over 'big' (1 MiB pieces) at `breakAt`, and aborting it after the first
 * piece, frees both buffers: the heap is back at `before`.
 * @param {any} f @param {any} core @param {number} before @param {number} breakAt
 */
async function stopsEarly(f, core, before, breakAt) {
  for await (const { offset } of f.chunks('big', { chunkBytes: 1 << 20 })) if (offset >= breakAt) break
  assert.equal(heapInUse(core), before, 'both buffers freed on break')
  const controller = new AbortController()
  await fails(async () => {
    for await (const { offset } of f.chunks('big', { chunkBytes: 1 << 20, signal: controller.signal }))
      if (offset >= 1 << 20) controller.abort()
  }, 'Aborted')
  assert.equal(heapInUse(core), before, 'both buffers freed on abort')
}

test('chunks: two pieces in the heap at most; leaving the loop early frees them; abort rejects', async () => {
  const core = await loadCore()
  const f = await open(await serialize({ big: { dtype: 'U8', shape: [10 << 20], data: bytes(10 << 20, 9) } }))
  const before = heapInUse(core)
  let peak = 0
  for await (const { data } of f.chunks('big', { chunkBytes: 1 << 20 })) {
    assert.equal(data.byteLength, 1 << 20)
    peak = Math.max(peak, heapInUse(core) - before)
  }
  assert.ok(peak <= 2 * (1 << 20) + 4096, `heap above the file's: ${peak} bytes for 1 MiB pieces`)
  assert.equal(heapInUse(core), before, 'both buffers freed at the end')
  await stopsEarly(f, core, before, 2 << 20)
  await fails(async () => { for await (const _ of f.chunks('big', { chunkBytes: 0 })) void _ }, 'InvalidArgument')
  await fails(async () => { for await (const _ of f.chunks('nope')) void _ }, 'TensorNotFound')
})

/** The byte at `i` of the virtual tensor: cheap to make in bulk (one value per 4 KiB block). */
const virtualByte = (/** @type {number} */ i) => (Math.floor(i / 4096) * 29 + 11) & 255

/**
 * A ByteSource of a safetensors file with one U8 tensor of `size` bytes, generated on read.
 * @param {number} size
 */
function virtualU8(size) {
  return virtualFile({ huge: { dtype: 'U8', shape: [size], data_offsets: [0, size] } }, size, (out, offset) => {
    for (let at = 0; at < out.length;) {
      const d = offset + at
      const n = Math.min(out.length - at, 4096 - (d % 4096))
      out.fill(virtualByte(d), at, at + n)
      at += n
    }
  })
}

test('a 6 GiB tensor from a virtual source streams every byte once, in order, through a bounded heap', { timeout: 300_000 }, async () => {
  const core = await loadCore()
  const size = 6 * 2 ** 30
  const f = await open(virtualU8(size))
  assert.deepEqual(f.info('huge').shape, [size])
  const chunkBytes = 16 << 20
  const before = heapInUse(core)
  let at = 0
  let peak = 0
  for await (const { offset, data } of f.chunks('huge', { chunkBytes })) {
    assert.equal(offset, at)
    // Every 4 KiB block's first and last byte, where the generator changes value.
    for (let k = 0; k < data.length; k += 4096) {
      if (data[k] !== virtualByte(offset + k) || data[k + 4095] !== virtualByte(offset + k + 4095))
        assert.fail(`bytes at ${offset + k}: ${data[k]}, ${data[k + 4095]}`)
    }
    at += data.byteLength
    peak = Math.max(peak, heapInUse(core) - before)
  }
  assert.equal(at, size, 'every byte, once')
  assert.ok(peak <= 2 * chunkBytes + 4096, `heap above the file's: ${peak} bytes for ${chunkBytes}-byte pieces`)
  await fails(() => f.tensor('huge'), 'OutOfMemory')
  await fails(() => f.load(['huge']), 'OutOfMemory', /chunks\(\)/)

  // stats and digest of it against plain JS over the same generator: every 4 KiB block holds one value.
  const blocks = size / 4096
  const counts = new Array(256).fill(0)
  for (let b = 0; b < 256; b++) counts[virtualByte(b * 4096)] += Math.ceil((blocks - b) / 256) * 4096
  let sum = 0
  let squares = 0
  counts.forEach((n, v) => { sum += n * v; squares += n * v * v })
  const mean = sum / size
  const values = counts.flatMap((n, v) => (n > 0 ? [v] : []))
  const min = Math.min(...values)
  const max = Math.max(...values)
  const s = await f.stats('huge', { bins: 256, chunkBytes })
  assert.deepEqual([s.count, s.finiteCount, s.nanCount, s.infCount, s.zeroCount, s.min, s.max],
    [size, size, 0, 0, counts[0], min, max])
  assert.ok(Math.abs(s.mean - mean) <= 1e-12 * mean, `mean ${s.mean}, plain JS ${mean}`)
  assert.ok(Math.abs(s.std - Math.sqrt(squares / size - mean * mean)) <= 1e-9 * s.std, `std ${s.std}`)
  // 256 bins over [min, max]: value v in bin min(255, floor((v - min) * 256 / (max - min))).
  const bins = new Array(256).fill(0)
  counts.forEach((n, v) => { if (n > 0) bins[Math.min(255, Math.floor(((v - min) * 256) / (max - min)))] += n })
  assert.deepEqual(s.histogram.counts, bins)
  const hash = createHash('sha256')
  const block = new Uint8Array(16 << 20)
  const source = virtualU8(size)
  for (let at = 0; at < source.byteLength; at += block.length) {
    const n = Math.min(block.length, source.byteLength - at)
    await source.readInto(at, n, () => block.subarray(0, n))
    hash.update(block.subarray(0, n))
  }
  assert.equal(await f.digest(undefined, { chunkBytes }), hash.digest('hex'), 'the whole file\'s SHA-256, streamed')
})

test('load() refuses tensors that cannot be in the heap together, before reading any', async () => {
  const size = 3 * 2 ** 30
  const prefix = fileStart({
    a: { dtype: 'U8', shape: [size], data_offsets: [0, size] }, b: { dtype: 'U8', shape: [size], data_offsets: [size, 2 * size] },
  })
  let reads = 0
  const source = {
    byteLength: prefix.length + 2 * size,
    async read(/** @type {number} */ offset, /** @type {number} */ length) {
      if (offset >= prefix.length) reads++
      const out = new Uint8Array(length)
      if (offset < prefix.length) out.set(prefix.subarray(offset, offset + length))
      return out
    },
  }
  const f = await open(source)
  await fails(() => f.load(['a', 'b']), 'OutOfMemory', /2 tensors of 6442450944 bytes/)
  assert.equal(reads, 0, 'no tensor byte was read')
})

test('chunks over a URL: one request per tensor, poured into the two buffers as it arrives; break and abort stop it', async () => {
  const core = await loadCore()
  const server = await startServer()
  try {
    const big = bytes(5 << 20, 11)
    const file = await serialize({ big: { dtype: 'U8', shape: [big.length], data: big }, small: TENSORS.f32 })
    server.addFile('/m.safetensors', file)
    const f = await open(server.url('/m.safetensors'), { initialFetchSize: 1024 })
    const before = heapInUse(core)
    const requests = server.stats.requests
    let peak = 0
    const got = await gather((async function* () {
      for await (const piece of f.chunks('big', { chunkBytes: 1 << 20 })) {
        peak = Math.max(peak, heapInUse(core) - before)
        yield piece
      }
    })(), 1 << 20)
    assert.deepEqual(got, big)
    assert.equal(server.stats.requests - requests, 1, 'one ranged request for the whole tensor')
    assert.ok(peak <= 2 * (1 << 20) + 4096, `heap above the file's: ${peak} bytes for 1 MiB pieces`)
    assert.equal(heapInUse(core), before, 'both buffers freed at the end')
    assert.deepEqual(await gather(f.chunks('small', { chunkBytes: 100 })), TENSORS.f32.data)
    assert.deepEqual(await gather(f.chunks('big', { chunkBytes: 3000, slice: '100:7000' })), big.subarray(100, 7000))
    await stopsEarly(f, core, before, 1 << 20)
    // Leaving at the last piece (here the only one: the default 4 MiB holds the tensor) returns
    // at once, though the answer is still being read to its end.
    for await (const { data } of f.chunks('big', { chunkBytes: 8 << 20 })) if (data.length === big.length) break
    for await (const { offset } of f.chunks('big', { chunkBytes: 1 << 20 })) if (offset === 4 << 20) break
    assert.equal(heapInUse(core), before, 'both buffers freed on a break at the last piece')
    server.addFile('/m.safetensors', file.subarray(0, file.length - 1000))
    await fails(async () => { for await (const _ of f.chunks('big', { chunkBytes: 1 << 20 })) void _ }, 'SourceChanged')
    assert.equal(heapInUse(core), before, 'both buffers freed on a failed read')
    await f.close()
  } finally {
    await server.close()
  }
})

// A sharded set from files the caller holds (a dropped folder): open(index content, { shards }).
// The shards are made here with the project's own writer.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as browser from '../../js/index.js'
import { SafetensorsError, open, serialize } from '../../js/node.js'
/** @typedef {import('../../js/node.js').ShardedFile} ShardedFile */
import { overview } from '../../js/overview.js'

const f32 = (/** @type {number[]} */ v) => new Float32Array(v)
const SHARDS = {
  'model-00001-of-00002.safetensors': { a: f32([1, 2]), b: f32([3]) },
  'model-00002-of-00002.safetensors': { c: f32([4, 5, 6]) },
}

/** The shards' bytes by path, and the index as a File. */
async function sharded() {
  /** @type {Record<string, Uint8Array>} */
  const bytes = {}
  /** @type {Record<string, string>} */
  const weightMap = {}
  for (const [path, tensors] of Object.entries(SHARDS)) {
    const entries = Object.entries(tensors).map(([name, data]) => [name, { dtype: 'F32', shape: [data.length], data }])
    bytes[path] = await serialize(Object.fromEntries(entries))
    for (const name of Object.keys(tensors)) weightMap[name] = path
  }
  const index = new File([JSON.stringify({ metadata: { total_size: 24 }, weight_map: weightMap })], 'model.safetensors.index.json')
  return { bytes, index }
}

/** A ByteSource over bytes that counts its reads. @param {Uint8Array} bytes */
function counting(bytes) {
  const source = {
    reads: 0,
    byteLength: bytes.length,
    async read(/** @type {number} */ offset, /** @type {number} */ length) {
      source.reads++
      return bytes.subarray(offset, offset + length)
    },
  }
  return source
}

/** @param {() => unknown} fn @param {string} code @param {RegExp} message */
async function rejects(fn, code, message) {
  await assert.rejects(async () => fn(), (/** @type {any} */ e) => {
    assert.ok(e instanceof SafetensorsError, String(e))
    assert.equal(e.code, code)
    assert.match(e.message, message)
    return true
  })
}

test('an index File with its shards as Blobs opens as a ShardedFile; a shard is read on first use', async () => {
  const { bytes, index } = await sharded()
  const sources = Object.fromEntries(Object.entries(bytes).map(([path, b]) => [path, counting(b)]))
  const f = /** @type {ShardedFile} */ (await browser.open(index, { shards: sources }))
  assert.ok(f instanceof browser.ShardedFile)
  assert.deepEqual(f.names, ['a', 'b', 'c'])
  assert.deepEqual(f.metadata, { total_size: 24 })
  assert.deepEqual(Object.values(sources).map((s) => s.reads), [0, 0], 'no shard read at open')
  const c = await f.tensor('c')
  assert.deepEqual(Array.from(c.toFloat32()), [4, 5, 6])
  assert.equal(sources['model-00001-of-00002.safetensors'].reads, 0, 'the other shard still unread')
  const m = await f.load(['b', 'a'])
  assert.deepEqual(Array.from(/** @type {any} */ (m.get('a')).toFloat32()), [1, 2])
  assert.deepEqual(Array.from(/** @type {any} */ (m.get('b')).toFloat32()), [3])
  assert.equal((await f.info('b')).shard, 'model-00001-of-00002.safetensors')
  await f.close()

  // Blobs, a Map, and a function of the path: the same set.
  const blobs = new Map(Object.entries(bytes).map(([path, b]) => [path, new Blob([b])]))
  for (const shards of [blobs, (/** @type {string} */ path) => bytes[path]]) {
    const g = /** @type {ShardedFile} */ (await open(new Uint8Array(await index.arrayBuffer()), { shards }))
    assert.deepEqual(Array.from((await g.tensor('a')).toFloat32()), [1, 2])
    assert.deepEqual(await g.parameterCount(), { total: 6, byDtype: { F32: 6 }, byScheme: {} })
    await g.close()
  }
})

test('in Node, shards may be paths', async () => {
  const { bytes, index } = await sharded()
  const dir = await mkdtemp(join(tmpdir(), 'st-sharded-local-'))
  try {
    /** @type {Record<string, string>} */
    const paths = {}
    for (const [path, b] of Object.entries(bytes)) await writeFile((paths[path] = join(dir, `x-${path}`)), b)
    const f = /** @type {ShardedFile} */ (await open(index, { shards: paths }))
    assert.deepEqual(Array.from((await f.tensor('c')).toFloat32()), [4, 5, 6])
    await f.close()
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
})

test('a shard the index names but the caller lacks is refused before any shard is read', async () => {
  const { bytes, index } = await sharded()
  const only = counting(bytes['model-00001-of-00002.safetensors'])
  await rejects(() => open(index, { shards: { 'model-00001-of-00002.safetensors': only } }), 'ShardMissing',
    /^model\.safetensors\.index\.json names 2 shards, and options\.shards lacks 1 of them: "model-00002-of-00002\.safetensors"$/)
  assert.equal(only.reads, 0)
})

test('what open refuses with options.shards', async () => {
  const { bytes, index } = await sharded()
  await rejects(() => open('model.safetensors.index.json', { shards: bytes }), 'UnsupportedSource', /not its URL or path/)
  await rejects(() => open(index, { shards: /** @type {any} */ (42) }), 'InvalidArgument', /not an object, a Map or a function/)
  await rejects(() => open(new Blob(['{"weight_map": 1}']), { shards: bytes }), 'InvalidIndex', /^the index: "weight_map" is not an object/)
  // Longer than maxIndexBytes (64 MiB by default): refused by its size before anything is read.
  const huge = { byteLength: 65 * 1024 * 1024, read: () => assert.fail('read') }
  await rejects(() => open(huge, { shards: bytes }), 'InvalidIndex',
    /^the index is 68157440 bytes, more than an index may have here \(maxIndexBytes, 67108864\): is it a shard\?$/)
  await rejects(() => open(index, { shards: bytes, maxIndexBytes: 100 }), 'InvalidIndex', /more than an index may have here \(maxIndexBytes, 100\)/)
  // A shard given as the index: refused at its first bytes, the rest never read.
  const shard = bytes['model-00001-of-00002.safetensors']
  let reads = 0
  // (The shard's bytes, then zeros: a ByteSource gives exactly the bytes asked for.)
  const source = {
    byteLength: 64 << 20,
    read: async (/** @type {number} */ at, /** @type {number} */ n) => {
      reads++
      const out = new Uint8Array(n)
      if (at === 0) out.set(shard.subarray(0, n))
      return out
    },
  }
  await rejects(() => open(source, { shards: bytes }), 'InvalidIndex', /shard/)
  assert.equal(reads, 1, 'one piece read')
  // A shard that is not a safetensors file fails when used, with its own error.
  const bad = await open(index, { shards: { ...bytes, 'model-00002-of-00002.safetensors': new Uint8Array(4) } })
  await rejects(() => bad.tensor('c'), 'HeaderTooSmall', /./)
  assert.deepEqual(Array.from((await bad.tensor('a')).toFloat32()), [1, 2])
  await bad.close()
})

test('loadHeaders counts shards as they load; overview joins them as inspect and the inspector show them', async () => {
  const { bytes, index } = await sharded()
  const f = /** @type {import('../../js/node.js').ShardedFile} */ (await open(index, { shards: bytes }))
  /** @type {{ loaded: number, total: number }[]} */
  const seen = []
  await f.loadHeaders({ onProgress: (p) => seen.push(p) })
  assert.deepEqual(seen, [{ loaded: 0, total: 2 }, { loaded: 1, total: 2 }, { loaded: 2, total: 2 }])
  seen.length = 0
  await f.loadHeaders({ onProgress: (p) => seen.push(p) })
  assert.deepEqual(seen, [{ loaded: 2, total: 2 }], 'headers already in: nothing more to load')
  const o = await overview(f)
  assert.equal(o.kind, 'sharded')
  assert.deepEqual(o.shards?.map((s) => [s.path, s.tensors]), Object.keys(bytes).sort().map((path) => [path, Object.keys(SHARDS[path]).length]))
  assert.equal(o.byteLength, Object.values(bytes).reduce((n, b) => n + b.length, 0))
  assert.deepEqual(o.rows.map((r) => [r.name, r.shard, r.order]), f.names.map((name, order) => [name, f.shardOf(name), order]))
  assert.equal(o.parameters.total, o.rows.reduce((n, r) => n + r.elements, 0))
  await f.close()
})

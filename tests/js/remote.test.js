// Remote files: ranged HTTP reading of only the header and the requested tensors, against the
// test server in http-server.js. Request and byte counts are asserted exactly.
import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { SafetensorsError, ShardedFile, open, serialize, urlSource } from '../../js/node.js'
/** @typedef {import('../../js/node.js').SafetensorsFile} SafetensorsFile */
import { loadCore } from '../../js/wasm.js'
import { startServer } from './http-server.js'

const CORPUS = fileURLToPath(new URL('../../../shared/corpus/', import.meta.url))
const SHARD_PREFIX = 'FluxML__SafeTensors.jl__test_sharded_'
const fast = { retryDelay: 1 }

/** @type {Awaited<ReturnType<typeof startServer>>} */
let server
/** @type {any} */
let core
before(async () => {
  server = await startServer()
  core = await loadCore()
})
after(() => server.close())

/** A deterministic byte for every absolute file offset, also past 4 GiB. @param {number} o */
const byteAt = (o) => ((o % 65521) * 31 + Math.floor(o / 65521)) & 0xff

/**
 * A safetensors file whose data bytes are byteAt(offset): only the header is stored.
 * @param {{ name: string, dtype: string, shape: number[], bytes: number }[]} tensors in file order
 */
function virtualFile(tensors) {
  /** @type {Record<string, any>} */
  const header = {}
  /** @type {Record<string, [number, number]>} */
  const at = {}
  let offset = 0
  for (const t of tensors) {
    header[t.name] = { dtype: t.dtype, shape: t.shape, data_offsets: [offset, offset + t.bytes] }
    at[t.name] = [offset, offset + t.bytes]
    offset += t.bytes
  }
  let json = JSON.stringify(header)
  json += ' '.repeat((8 - (json.length % 8)) % 8)
  const prefix = new Uint8Array(8 + json.length)
  new DataView(prefix.buffer).setBigUint64(0, BigInt(json.length), true)
  prefix.set(new TextEncoder().encode(json), 8)
  const dataStart = prefix.length
  for (const name in at) at[name] = [at[name][0] + dataStart, at[name][1] + dataStart]
  const size = dataStart + offset
  return {
    size, dataStart, at,
    content: {
      size,
      /** @param {Uint8Array} out @param {number} o */
      fill(out, o) {
        let i = 0
        for (; i < out.length && o + i < dataStart; i++) out[i] = prefix[o + i]
        for (; i < out.length; i++) out[i] = byteAt(o + i)
      },
    },
  }
}

/** @param {number} start @param {number} length */
function expected(start, length) {
  const out = new Uint8Array(length)
  for (let i = 0; i < length; i++) out[i] = byteAt(start + i)
  return out
}

/** A real file made by the project's writer: a 64x64 F32, a 128x128 F32, 1000 I64, 3 U8. */
async function smallFile() {
  const a = new Float32Array(64 * 64).map((_, i) => i * 0.5)
  const b = new Float32Array(128 * 128).map((_, i) => -i)
  const c = new BigInt64Array(1000).map((_, i) => BigInt(i) * 1000000007n)
  return serialize({
    a: { dtype: 'F32', shape: [64, 64], data: a },
    b: { dtype: 'F32', shape: [128, 128], data: b },
    c: { dtype: 'I64', shape: [1000], data: c },
    d: { dtype: 'U8', shape: [3], data: new Uint8Array([1, 2, 3]) },
  }, { metadata: { made: 'by the test' } })
}

/** @param {Uint8Array} view */
const copy = (view) => Uint8Array.from(view)
/** open() for a single file. @param {string | URL} src @param {import('../../js/index.js').OpenOptions} [options] */
const openFile = async (src, options) => /** @type {SafetensorsFile} */ (/** @type {unknown} */ (await open(src, options)))
/** open() for an index. @param {string} src */
const openSharded = async (src) => /** @type {ShardedFile} */ (await open(src))
/** @param {{ range: string | null }} e @returns {[number, number]} [start, end) */
const rangeOf = (e) => {
  const m = /bytes=(\d+)-(\d+)/.exec(e.range ?? '')
  return m ? [Number(m[1]), Number(m[2]) + 1] : [0, Infinity]
}

/** Asserts that `run` rejects with `code`, returns nothing, and leaves the heap as it found it. */
async function failsCleanly(/** @type {() => Promise<unknown>} */ run, /** @type {string} */ code) {
  const before = core.heapInUse()
  let result
  const error = await run().then((r) => { result = r; return null }, (e) => e)
  assert.equal(result, undefined, 'no partial result')
  assert.ok(error instanceof SafetensorsError, `a SafetensorsError, got ${error}`)
  assert.equal(error.code, code, error.message)
  assert.equal(core.heapInUse(), before, 'heap back where it started')
  return error
}

test('header-only open: one request when the header fits in P', async () => {
  const bytes = await smallFile()
  server.addFile('/one.safetensors', bytes)
  server.resetStats()
  const f = await openFile(server.url('/one.safetensors'))
  assert.deepEqual(f.names, ['c', 'a', 'b', 'd'])  // the writer's order: by dtype, then name
  assert.deepEqual(f.metadata, { made: 'by the test' })
  assert.equal(f.byteLength, bytes.length)
  assert.equal(server.stats.requests, 1)
  assert.equal(server.stats.log[0].range, 'bytes=0-262143')
  assert.equal(server.stats.bytes, bytes.length)  // the whole file is under P
  const t = await f.tensor('b')
  assert.equal(server.stats.requests, 1, 'served from the first answer')
  assert.deepEqual(copy(t.bytes), bytes.subarray(f.info('b').byteOffset, f.info('b').byteOffset + t.byteLength))
  t.dispose()
})

test('a header larger than P: exactly one follow-up for the rest of it', async () => {
  const tensors = Array.from({ length: 200 }, (_, i) => ({ name: `layer.${i}.weight`, dtype: 'U8', shape: [10], bytes: 10 }))
  const v = virtualFile(tensors)
  server.addVirtual('/bighead.safetensors', v.content)
  server.resetStats()
  const f = await openFile(server.url('/bighead.safetensors'), { initialFetchSize: 1024 })
  assert.equal(f.names.length, 200)
  assert.deepEqual(server.stats.log.map((e) => e.range), ['bytes=0-1023', `bytes=1024-${v.dataStart - 1}`])
  assert.equal(server.stats.bytes, v.dataStart)
})

test('reading k tensors downloads exactly their bytes, nothing twice, merged where close', async () => {
  const tensors = Array.from({ length: 8 }, (_, i) => ({ name: `t${i}`, dtype: 'F32', shape: [256, 256], bytes: 256 * 1024 }))
  const v = virtualFile(tensors)
  server.addVirtual('/eight.safetensors', v.content)
  const P = 64 * 1024
  server.resetStats()
  const f = await openFile(server.url('/eight.safetensors'), { initialFetchSize: P, mergeGap: 0 })
  assert.equal(server.stats.requests, 1)
  const before = core.heapInUse()
  const m = await f.load(['t0', 't3', 't5'])
  for (const [name, t] of m) assert.deepEqual(copy(t.bytes), expected(v.at[name][0], v.at[name][1] - v.at[name][0]))
  const tensorBytes = 3 * 256 * 1024
  assert.equal(server.stats.bytes, P + tensorBytes - (P - v.dataStart), 'the prefix part of t0 is not fetched again')
  const ranges = server.stats.log.map(rangeOf).sort((x, y) => x[0] - y[0])
  for (let i = 1; i < ranges.length; i++) assert.ok(ranges[i][0] >= ranges[i - 1][1], 'no byte downloaded twice')
  assert.deepEqual(server.stats.log.slice(1).map((e) => e.range).sort(),
    [`bytes=${P}-${v.at.t0[1] - 1}`, `bytes=${v.at.t3[0]}-${v.at.t3[1] - 1}`, `bytes=${v.at.t5[0]}-${v.at.t5[1] - 1}`].sort())
  for (const t of m.values()) t.dispose()
  assert.equal(core.heapInUse(), before)

  // With the default mergeGap (512 KiB) t3 and t5, 256 KiB apart, are one request, gap included.
  const g = await openFile(server.url('/eight.safetensors'), { initialFetchSize: P })
  server.resetStats()
  const progress = /** @type {{ loaded: number, total: number }[]} */ ([])
  const m2 = await g.load(['t3', 't5'], { onProgress: (p) => progress.push(p) })
  assert.deepEqual(server.stats.log.map((e) => e.range), [`bytes=${v.at.t3[0]}-${v.at.t5[1] - 1}`])
  assert.equal(server.stats.bytes, 3 * 256 * 1024)
  assert.deepEqual(progress.at(-1), { loaded: 3 * 256 * 1024, total: 3 * 256 * 1024 })
  for (const t of m2.values()) t.dispose()
})

test('requests in flight stay within concurrency', async () => {
  const tensors = Array.from({ length: 16 }, (_, i) => ({ name: `t${i}`, dtype: 'U8', shape: [1000], bytes: 1000 }))
  const v = virtualFile(tensors)
  server.addVirtual('/sixteen.safetensors', v.content)
  const f = await openFile(server.url('/sixteen.safetensors'), { initialFetchSize: v.dataStart })
  server.setLatency(30)
  server.resetStats()
  try {
    const m = await f.load(tensors.filter((_, i) => i % 2 === 0).map((t) => t.name), { mergeGap: 0, concurrency: 3 })
    assert.equal(server.stats.requests, 8)
    assert.equal(server.stats.maxInFlight, 3)
    for (const t of m.values()) t.dispose()
  } finally {
    server.setLatency(0)
  }
})

test('by default every far-apart span of a read is in flight at once: one round trip after the header', async () => {
  // 40 tensors 600,000 bytes apart (past mergeGap), each read as its own request.
  const tensors = Array.from({ length: 80 }, (_, i) => ({ name: `t${i}`, dtype: 'U8', shape: [600_000], bytes: 600_000 }))
  const v = virtualFile(tensors)
  server.addVirtual('/forty.safetensors', v.content)
  let started = 0
  let startedBeforeFirstAnswer = -1
  /** @type {typeof fetch} */
  const counting = async (input, init) => {
    started++
    const response = await fetch(input, init)
    if (startedBeforeFirstAnswer < 0) startedBeforeFirstAnswer = started
    return response
  }
  const f = await openFile(server.url('/forty.safetensors'), { initialFetchSize: v.dataStart, fetch: counting })
  server.setLatency(200)
  started = 0
  startedBeforeFirstAnswer = -1
  try {
    const m = await f.load(tensors.filter((_, i) => i % 2 === 0).map((t) => t.name))
    assert.equal(started, 40)
    assert.equal(startedBeforeFirstAnswer, 40)  // none waited for another's answer
    for (const t of m.values()) t.dispose()
  } finally {
    server.setLatency(0)
  }
})

test('slice: a row block is one request, a column block many small ranges or one merged', async () => {
  const v = virtualFile([{ name: 'w', dtype: 'F32', shape: [64, 256], bytes: 64 * 256 * 4 }])
  server.addVirtual('/matrix.safetensors', v.content)
  const f = await openFile(server.url('/matrix.safetensors'), { initialFetchSize: 64 })
  const row = 256 * 4
  const start = v.at.w[0]
  server.resetStats()
  const rows = await f.slice('w', '10:20')
  assert.deepEqual(server.stats.log.map((e) => e.range), [`bytes=${start + 10 * row}-${start + 20 * row - 1}`])
  assert.deepEqual(copy(rows.bytes), expected(start + 10 * row, 10 * row))
  assert.deepEqual(rows.shape, [10, 256])
  rows.dispose()

  server.resetStats()
  const cols = await f.slice('w', [null, [4, 8]], { mergeGap: 0 })
  assert.equal(server.stats.requests, 64)
  assert.equal(server.stats.bytes, 64 * 16)
  const want = new Uint8Array(64 * 16)
  for (let r = 0; r < 64; r++) want.set(expected(start + r * row + 16, 16), r * 16)
  assert.deepEqual(copy(cols.bytes), want)
  cols.dispose()

  server.resetStats()
  const merged = await f.slice('w', [null, [4, 8]])
  assert.equal(server.stats.requests, 1, 'gaps under mergeGap are cheaper than 64 round trips')
  assert.equal(server.stats.bytes, 63 * row + 16)
  assert.deepEqual(copy(merged.bytes), want)
  merged.dispose()
})

test('a virtual 6 GiB file: tensors past 4 GiB read correctly', async () => {
  const GiB = 2 ** 30
  const v = virtualFile([
    { name: 'low', dtype: 'U8', shape: [16], bytes: 16 },
    { name: 'pad', dtype: 'U8', shape: [4 * GiB - 2048 - 16], bytes: 4 * GiB - 2048 - 16 },
    { name: 'across', dtype: 'U8', shape: [4096], bytes: 4096 },
    { name: 'pad2', dtype: 'U8', shape: [2 * GiB - 8192], bytes: 2 * GiB - 8192 },
    { name: 'high', dtype: 'F32', shape: [16, 64], bytes: 4096 },
  ])
  assert.ok(v.size > 6 * GiB - 4096)
  server.addVirtual('/huge.safetensors', v.content)
  server.resetStats()
  const f = await openFile(server.url('/huge.safetensors'), { mergeGap: 0 })
  assert.equal(f.byteLength, v.size)
  assert.equal(f.info('high').byteOffset, v.at.high[0])
  assert.ok(f.info('high').byteOffset > 6 * GiB - 8192)
  const m = await f.load(['across', 'high'])
  assert.deepEqual(copy(/** @type {any} */ (m.get('across')).bytes), expected(v.at.across[0], 4096))
  assert.deepEqual(copy(/** @type {any} */ (m.get('high')).bytes), expected(v.at.high[0], 4096))
  const s = await f.slice('high', '15')
  assert.deepEqual(copy(s.bytes), expected(v.at.high[0] + 15 * 256, 256))
  assert.equal(server.stats.requests, 4)
  assert.equal(server.stats.bytes, 256 * 1024 + 4096 + 4096 + 256)
  for (const t of [...m.values(), s]) t.dispose()
  await failsCleanly(() => f.tensor('pad'), 'OutOfMemory')
})

test('every corpus file over HTTP reads back byte-identical to the local read, whole and sliced', async (t) => {
  if (!existsSync(CORPUS)) return t.skip(`no corpus at ${CORPUS}`)
  const names = readdirSync(CORPUS).filter((n) => n.endsWith('.safetensors'))
  assert.ok(names.length > 20)
  for (const name of names) {
    const bytes = readFileSync(join(CORPUS, name))
    server.addFile(`/corpus/${name}`, bytes)
    /** @type {any} */
    const local = await open(join(CORPUS, name)).catch((e) => e)
    for (const options of [{}, { initialFetchSize: 64, mergeGap: 0 }]) {
      server.resetStats()
      /** @type {any} */
      const remote = await open(server.url(`/corpus/${name}`), options).catch((e) => e)
      if (local instanceof SafetensorsError) {
        assert.equal(remote.code, local.code, `${name}: same verdict`)
        continue
      }
      assert.ok(!(remote instanceof Error), `${name}: ${remote}`)
      assert.deepEqual(remote.names, local.names)
      assert.deepEqual(remote.metadata, local.metadata)
      for (const n of local.names) assert.deepEqual(remote.info(n), local.info(n))
      const before = core.heapInUse()
      const all = await remote.load(remote.names)
      assert.equal(server.stats.bytes, bytes.length, `${name}: every byte once`)
      for (const [n, tensor] of /** @type {Map<string, import('../../js/tensor.js').Tensor>} */ (all)) {
        const mine = await local.tensor(n)
        assert.deepEqual(copy(tensor.bytes), copy(mine.bytes), `${name}: ${n}`)
        mine.dispose()
        tensor.dispose()
        const { shape } = local.info(n)
        if (shape.length === 0 || Number(shape[0]) === 0) continue
        const spec = `${Math.floor(Number(shape[0]) / 2)}:${shape[0]}`
        const a = await remote.slice(n, spec).catch((/** @type {any} */ e) => e)
        const b = await local.slice(n, spec).catch((/** @type {any} */ e) => e)
        if (b instanceof SafetensorsError) assert.equal(a.code, b.code)
        else {
          assert.deepEqual(copy(a.bytes), copy(b.bytes), `${name}: ${n}[${spec}]`)
          a.dispose()
          b.dispose()
        }
      }
      assert.equal(core.heapInUse(), before, `${name}: heap`)
      await remote.close()
    }
    if (!(local instanceof SafetensorsError)) await local.close()
  }
})

/** Serves the corpus's sharded set under its weight_map names; returns the index URL. */
function serveShardedCorpus(/** @type {string} */ folder) {
  const indexName = `${SHARD_PREFIX}model.safetensors.index.json`
  const index = readFileSync(join(CORPUS, indexName))
  server.addFile(`${folder}/model.safetensors.index.json`, index)
  for (const shard of new Set(Object.values(JSON.parse(index.toString()).weight_map)))
    server.addFile(`${folder}/${shard}`, readFileSync(join(CORPUS, SHARD_PREFIX + shard)))
  return { url: server.url(`${folder}/model.safetensors.index.json`), index: JSON.parse(index.toString()) }
}

/** Checks a ShardedFile opened on the corpus's sharded set against the shards read locally. */
async function checkShardedCorpus(/** @type {ShardedFile} */ f, /** @type {any} */ index) {
  assert.ok(f instanceof ShardedFile)
  assert.deepEqual(f.metadata, { total_size: 4305 })
  assert.deepEqual(new Set(f.names), new Set(Object.keys(index.weight_map)))
  assert.equal(f.shards.length, 6)
  assert.equal(f.byteLength, null, 'not known before the shard headers')
  const info = await f.info('float32_357')
  assert.equal(info.shard, 'model-00002-of-00006.safetensors')
  const before = core.heapInUse()
  /** @type {{ loaded: number, total: number }[]} */
  const progress = []
  const all = await f.load(f.names, { onProgress: (p) => progress.push(p) })
  assert.equal(progress.at(-1)?.loaded, 4305, 'every tensor byte of the six shards')
  assert.equal(progress.at(-1)?.total, 4305)
  for (const [name, t] of all) {
    const shard = /** @type {any} */ (await open(join(CORPUS, SHARD_PREFIX + index.weight_map[name])))
    const mine = await shard.tensor(name)
    assert.deepEqual(copy(t.bytes), copy(mine.bytes), name)
    mine.dispose()
    t.dispose()
    await shard.close()
  }
  assert.equal(core.heapInUse(), before)
  assert.equal(f.byteLength, 2048 + 532 + 1129 + 1152 + 1464 + 692)
  const count = await f.parameterCount()
  assert.ok(count.total > 0)
  const s = await f.slice('float32_357', '1:3')
  assert.deepEqual(s.shape.slice(0, 1), [2])
  s.dispose()
  await f.close()
}

test('the sharded corpus set through its index, over HTTP and from a Node path', async (t) => {
  if (!existsSync(CORPUS)) return t.skip(`no corpus at ${CORPUS}`)
  const { url, index } = serveShardedCorpus('/sharded')
  server.resetStats()
  const f = await openSharded(url)
  assert.equal(server.stats.requests, 1, 'the index only')
  await checkShardedCorpus(f, index)
  assert.equal(new Set(server.stats.log.map((e) => e.path)).size, 7)

  const dir = mkdtempSync(join(tmpdir(), 'st-sharded-'))
  try {
    writeFileSync(join(dir, 'model.safetensors.index.json'), JSON.stringify(index))
    for (const shard of f.shards) writeFileSync(join(dir, shard), readFileSync(join(CORPUS, SHARD_PREFIX + shard)))
    await checkShardedCorpus(await openSharded(join(dir, 'model.safetensors.index.json')), index)
  } finally {
    rmSync(dir, { recursive: true })
  }
})

/** Virtual shards for an index: each tensor an F32 [2]. @param {string} folder @param {any} index */
function serveVirtualShards(folder, index) {
  /** @type {Map<string, string[]>} */
  const byShard = new Map()
  for (const [name, shard] of Object.entries(index.weight_map)) {
    if (!byShard.has(shard)) byShard.set(shard, [])
    byShard.get(shard)?.push(name)
  }
  let total = 0
  for (const [shard, names] of byShard) {
    const v = virtualFile(names.map((name) => ({ name, dtype: 'F32', shape: [2], bytes: 8 })))
    server.addVirtual(`${folder}/${shard}`, v.content)
    total += v.size
  }
  return total
}

test('the two big corpus indexes list names without fetching a shard; headers with bounded concurrency', async (t) => {
  if (!existsSync(CORPUS)) return t.skip(`no corpus at ${CORPUS}`)
  /** @type {[string, number, number, number][]} */
  const cases = [
    ['root-hypercube__qwen3-mlx__Qwen3-14B-MLX-4bit_model.safetensors.index.json', 1007, 2, 8307783680],
    ['tbressers__WizardLM-2-8x22B__model.safetensors.index.json', 1739, 59, 281241268224],
  ]
  for (const [file, count, shards, totalSize] of cases) {
    const text = readFileSync(join(CORPUS, String(file)))
    const folder = `/big${shards}`
    server.addFile(`${folder}/model.safetensors.index.json`, text)
    server.resetStats()
    const f = await openSharded(server.url(`${folder}/model.safetensors.index.json`))
    assert.equal(f.names.length, count)
    assert.equal(f.shards.length, shards)
    assert.equal(/** @type {any} */ (f.metadata).total_size, totalSize)
    assert.equal(server.stats.requests, 1)
    const index = JSON.parse(text.toString())
    const sum = serveVirtualShards(folder, index)
    const name = f.names[f.names.length - 1]
    assert.equal((await f.info(name)).shard, index.weight_map[name])
    assert.equal(server.stats.requests, 2, 'one shard header')
    server.setLatency(10)
    server.resetStats()
    await f.loadHeaders({ concurrency: 4 })
    server.setLatency(0)
    assert.equal(server.stats.requests, shards - 1)
    assert.ok(server.stats.maxInFlight <= 4)
    assert.equal(f.byteLength, sum)
    assert.deepEqual(await f.parameterCount(), { total: 2 * count, byDtype: { F32: 2 * count }, byScheme: {} })
    await f.close()
  }
})

test('a sharded load that fails or is aborted in one shard disposes what the others read', async () => {
  const index = {
    weight_map: Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`t${i}`, `s-${i % 4}.safetensors`])),
  }
  serveVirtualShards('/shardfail', index)
  await failsCleanly(() => open(server.url('/shardfail/model.safetensors.index.json'), fast), 'NotFound')
  server.addFile('/shardfail/model.safetensors.index.json', new TextEncoder().encode(JSON.stringify(index)))
  // A 16-byte first request: the shards' data is not in the prefix, each tensor is a request.
  const g = /** @type {ShardedFile} */ (await open(server.url('/shardfail/model.safetensors.index.json'), { ...fast, retries: 0, initialFetchSize: 16 }))
  await g.info('t3')  // shard 3's header is in; its data request will fail
  server.fault('/shardfail/s-3.safetensors', { status: 500 })
  server.setLatency(20)
  try {
    await failsCleanly(() => g.load(g.names), 'HttpError')
    server.clearFaults()
    server.setLatency(200)
    const controller = new AbortController()
    setTimeout(() => controller.abort(), 50)
    await failsCleanly(() => g.load(g.names, { signal: controller.signal }), 'Aborted')
  } finally {
    server.setLatency(0)
    server.clearFaults()
  }
  const m = await g.load(g.names)
  assert.equal(m.size, 12)
  for (const t of m.values()) t.dispose()
  await g.close()
  await failsCleanly(() => g.tensor('t0'), 'Closed')
})

test('an index of tens of MB with thousands of shards', async () => {
  const shards = 2000
  const perShard = 100
  const shardName = (/** @type {number} */ s) => `model-${String(s + 1).padStart(5, '0')}-of-0${shards}.safetensors`
  const tensorName = (/** @type {number} */ s, /** @type {number} */ i) => `model.layers.${s}.block_sparse_moe.experts.${i}.w1.weight.with_a_long_name_${i}`
  const lines = []
  for (let s = 0; s < shards; s++)
    for (let i = 0; i < perShard; i++) lines.push(`    "${tensorName(s, i)}": "${shardName(s)}"`)
  const text = `{\n  "metadata": {"total_size": ${2 ** 40}},\n  "weight_map": {\n${lines.join(',\n')}\n  }\n}\n`
  assert.ok(text.length > 20e6, `${text.length} bytes`)
  server.addFile('/many/model.safetensors.index.json', new TextEncoder().encode(text))
  server.resetStats()
  const f = await openSharded(server.url('/many/model.safetensors.index.json'))
  assert.equal(f.names.length, shards * perShard)
  assert.equal(f.shards.length, shards)
  assert.equal(server.stats.requests, 1)
  const name = tensorName(1234, 56)
  assert.equal(f.shardOf(name), shardName(1234))
  const weightMap = /** @type {Record<string, string>} */ ({})
  for (let i = 0; i < perShard; i++) weightMap[tensorName(1234, i)] = shardName(1234)
  serveVirtualShards('/many', { weight_map: weightMap })
  assert.deepEqual((await f.info(name)).shape, [2])
  assert.equal(server.stats.requests, 2)
  await f.close()
})

test('shard paths that leave the index folder are refused before any shard request', async () => {
  for (const bad of ['../x.safetensors', 'a/../../x.safetensors', 'https://elsewhere.example/x.safetensors',
    '/abs.safetensors', 'a/%2e%2e/%2E%2E/x.safetensors', 'a\\..\\x.safetensors', 'a//b.safetensors', 'x.safetensors?sig=1']) {
    const index = JSON.stringify({ weight_map: { ok: 'model.safetensors', evil: bad } })
    server.addFile('/unsafe/model.safetensors.index.json', new TextEncoder().encode(index))
    server.resetStats()
    await failsCleanly(() => open(server.url('/unsafe/model.safetensors.index.json')), 'UnsafeShardPath')
    assert.equal(server.stats.requests, 1)
  }
  server.addFile('/unsafe/bad.index.json', new TextEncoder().encode('{"weight_map": []}'))
  await failsCleanly(() => open(server.url('/unsafe/bad.index.json')), 'InvalidIndex')
})

test('a server that ignores Range: a small file is kept whole, a large one refused or read as far as needed', async () => {
  const bytes = await smallFile()
  server.addFile('/norange-small.safetensors', bytes)
  server.fault('/norange-small.safetensors', { ignoreRange: true })
  server.resetStats()
  const f = /** @type {any} */ (await open(server.url('/norange-small.safetensors'), { initialFetchSize: 64 }))
  const m = await f.load(f.names)
  assert.equal(server.stats.requests, 1)
  assert.deepEqual(copy(m.get('c').bytes), bytes.subarray(f.info('c').byteOffset, f.info('c').byteOffset + 8000))
  for (const t of m.values()) t.dispose()

  const v = virtualFile([{ name: 'x', dtype: 'U8', shape: [4096], bytes: 4096 }, { name: 'y', dtype: 'U8', shape: [200 << 20], bytes: 200 << 20 }])
  server.addVirtual('/norange-big.safetensors', v.content)
  server.fault('/norange-big.safetensors', { ignoreRange: true })
  server.resetStats()
  const error = await failsCleanly(() => open(server.url('/norange-big.safetensors')), 'RangeNotSupported')
  assert.match(error.message, /allowFullDownload/)
  await new Promise((r) => setTimeout(r, 50))
  assert.ok(server.stats.bytes < 16 << 20, `the response was cancelled after ${server.stats.bytes} bytes`)

  server.fault('/norange-big.safetensors', { ignoreRange: true })
  const g = /** @type {any} */ (await open(server.url('/norange-big.safetensors'), { allowFullDownload: true, initialFetchSize: 64 }))
  assert.equal(g.byteLength, v.size)
  server.resetStats()
  const x = await g.tensor('x')
  assert.deepEqual(copy(x.bytes), expected(v.at.x[0], 4096))
  x.dispose()
  await new Promise((r) => setTimeout(r, 50))
  assert.ok(server.stats.bytes < 16 << 20, `read as far as needed: ${server.stats.bytes} bytes`)
  server.clearFaults()
})

test('fault cases: each a specific code, no partial result, heap back where it started', async (t) => {
  const bytes = await smallFile()
  const path = '/faulty.safetensors'
  server.addFile(path, bytes)
  const url = server.url(path)
  const opened = async (/** @type {any} */ options = {}) => /** @type {any} */ (await open(url, { initialFetchSize: 1024, ...fast, ...options }))
  /** @param {import('./http-server.js').Fault} fault @param {string} code @param {Record<string, unknown>} [options] */
  const after = async (fault, code, options = {}, names = ['a', 'b', 'c']) => {
    const f = await opened(options)
    server.fault(path, fault)
    server.resetStats()
    const error = await failsCleanly(() => f.load(names), code)
    server.clearFaults()
    return error
  }
  await t.test('416 on a tensor read, and on the first request', async () => {
    await after({ status416: true }, 'RangeNotSatisfiable')
    server.fault(path, { status416: true, times: 1 })
    await failsCleanly(() => opened(), 'RangeNotSatisfiable')
  })
  await t.test('Content-Range that does not match the request', async () => {
    await after({ shiftRange: 1 }, 'InvalidContentRange')
    server.fault(path, { shiftRange: 1, times: 1 })
    await failsCleanly(() => opened(), 'InvalidContentRange')
  })
  await t.test('a 206 without a readable Content-Range: the error names the CORS header', async () => {
    const error = await after({ dropHeaders: ['content-range'] }, 'InvalidContentRange')
    assert.match(error.message, /Access-Control-Expose-Headers: Content-Range/)
  })
  await t.test('a total that changes', async () => { await after({ wrongTotal: bytes.length + 1 }, 'SourceChanged') })
  await t.test('a body shorter than promised, every time: ShortRead after the retries', async () => {
    await after({ short: 100 }, 'ShortRead', { retries: 2 })
    const [first] = rangeOf(server.stats.log[0])
    assert.deepEqual(server.stats.log.map((e) => rangeOf(e)[0]), [first, first + 100, first + 200], 'each retry resumes')
    await after({ cut: 100 }, 'ShortRead', { retries: 1 })
  })
  await t.test('a connection reset before any answer, every time: NetworkError', async () => {
    await after({ reset: true }, 'NetworkError', { retries: 2 })
    assert.equal(server.stats.requests, 3, 'one try and two retries')
  })
  await t.test('5xx every time: HttpError; 404 at open: NotFound; 401 without credentials', async () => {
    await after({ status: 503 }, 'HttpError', { retries: 2 })
    assert.equal(server.stats.requests, 3)
    await failsCleanly(() => open(server.url('/nothing-here.safetensors'), fast), 'NotFound')
    server.setAuth('Bearer sesame')
    try {
      const error = await failsCleanly(() => opened(), 'HttpError')
      assert.match(error.message, /401/)
      server.resetStats()
      const f = await opened({ headers: { Authorization: 'Bearer sesame' } })
      const m = await f.load(['a', 'c'])
      assert.ok(server.stats.log.every((e) => e.auth === 'Bearer sesame'))
      for (const x of m.values()) x.dispose()
    } finally {
      server.setAuth(null)
    }
  })
  await t.test('the file changes between requests: SourceChanged (If-Range, ETag, Last-Modified)', async () => {
    for (const options of [{}, { ifRange: false }]) {
      server.addFile(path, bytes)
      const f = await opened(options)
      server.changeAfter(path, 0)
      await failsCleanly(() => f.load(['a', 'b']), 'SourceChanged')
    }
    server.addFile(path, bytes)
    server.fault(path, { dropHeaders: ['etag'], times: 2 })
    const f = await opened()
    server.changeAfter(path, 0)
    await failsCleanly(() => f.load(['b']), 'SourceChanged')
    assert.equal(server.stats.log.at(-1)?.ifRange, null, 'no strong ETag, no If-Range')
    server.addFile(path, bytes)
  })
  await t.test('a 200 to a later Range request: RangeNotSupported', async () => {
    await after({ ignoreRange: true, times: 1 }, 'RangeNotSupported', { ifRange: false })
  })
})

test('transient failures are retried with backoff, resuming after the bytes received', async (t) => {
  const v = virtualFile([{ name: 'h', dtype: 'U8', shape: [8], bytes: 8 }, { name: 'big', dtype: 'U8', shape: [300000], bytes: 300000 }])
  const path = '/flaky.safetensors'
  server.addVirtual(path, v.content)
  const f = /** @type {any} */ (await open(server.url(path), { initialFetchSize: v.dataStart, ...fast }))
  const [start, end] = v.at.big
  const read = async () => {
    const tensor = await f.tensor('big')
    assert.deepEqual(copy(tensor.bytes), expected(start, end - start))
    tensor.dispose()
  }
  for (const fault of [{ cut: 100000, times: 1 }, { short: 100000, times: 1 }]) {
    await t.test(JSON.stringify(fault), async () => {
      server.fault(path, fault)
      server.resetStats()
      await read()
      assert.deepEqual(server.stats.log.map((e) => e.range), [`bytes=${start}-${end - 1}`, `bytes=${start + 100000}-${end - 1}`])
      assert.equal(server.stats.bytes, end - start, 'nothing downloaded twice')
    })
  }
  await t.test('reset, 503 and 500 before an answer', async () => {
    server.fault(path, { reset: true, times: 1 })
    server.fault(path, { status: 503, times: 1 })
    server.fault(path, { status: 500, times: 1 })
    server.resetStats()
    await read()
    assert.equal(server.stats.requests, 4)
  })
  await t.test('429 honours Retry-After', async () => {
    server.fault(path, { status: 429, retryAfter: '1', times: 1 })
    const t0 = Date.now()
    await read()
    assert.ok(Date.now() - t0 >= 950, `waited ${Date.now() - t0} ms`)
  })
})

test('abort reaches fetch: in flight, while opening, during a backoff; the heap is freed', async () => {
  const v = virtualFile([{ name: 'big', dtype: 'U8', shape: [64 << 20], bytes: 64 << 20 }, { name: 'z', dtype: 'U8', shape: [1], bytes: 1 }])
  server.addVirtual('/abort.safetensors', v.content)
  const f = /** @type {any} */ (await open(server.url('/abort.safetensors'), fast))
  const controller = new AbortController()
  server.resetStats()
  await failsCleanly(() => f.load(['big', 'z'], { signal: controller.signal, onProgress: () => controller.abort(), mergeGap: 0 }), 'Aborted')
  await new Promise((r) => setTimeout(r, 100))
  assert.equal(server.stats.inFlight, 0, 'the connections were closed')
  assert.ok(server.stats.bytes < 64 << 20, `${server.stats.bytes} bytes sent`)

  server.setLatency(500)
  try {
    const c2 = new AbortController()
    setTimeout(() => c2.abort(), 30)
    const t0 = Date.now()
    await failsCleanly(() => open(server.url('/abort.safetensors'), { signal: c2.signal }), 'Aborted')
    assert.ok(Date.now() - t0 < 400)
  } finally {
    server.setLatency(0)
  }
  server.fault('/abort.safetensors', { status: 503, retryAfter: '30' })
  const c3 = new AbortController()
  setTimeout(() => c3.abort(), 50)
  const t0 = Date.now()
  await failsCleanly(() => f.tensor('z', { signal: c3.signal }), 'Aborted')
  assert.ok(Date.now() - t0 < 1000)
  server.clearFaults()
})

test('edge cases: an empty file, a URL object, urlSource, an injected fetch', async () => {
  server.addFile('/empty.safetensors', new Uint8Array(0))
  await failsCleanly(() => open(server.url('/empty.safetensors')), 'HeaderTooSmall')
  const bytes = await smallFile()
  server.addFile('/plain.safetensors', bytes)
  let calls = 0
  /** @type {typeof fetch} */
  const counting = (input, init) => { calls++; return fetch(input, init) }
  const source = await urlSource(new URL(server.url('/plain.safetensors')), { fetch: counting, initialFetchSize: 16 })
  assert.equal(source.byteLength, bytes.length)
  assert.equal(source.cachedBytes, 16)
  assert.deepEqual(await source.read(10, 100), bytes.subarray(10, 110))
  assert.equal(calls, 2)
  const f = /** @type {any} */ (await open(source))
  assert.deepEqual(f.names, ['c', 'a', 'b', 'd'])
  server.fault('/plain.safetensors', { gzipWhole: true, times: 1 })
  const g = /** @type {any} */ (await open(new URL(server.url('/plain.safetensors'))))
  assert.deepEqual(g.names, ['c', 'a', 'b', 'd'])
})

// The package in headless Chromium exactly as an app uses it: a plain page on one origin imports
// the browser entry (/js/index.js, unbundled) and opens files on another origin with default
// options (no injected fetch, no test hooks); a module worker does the same and transfers what it
// read; an esbuild bundle of a small app does the same from one bundle. Every tensor's dtype,
// shape and SHA-256 must equal what the Node entry reads from the same bytes, and Chromium must
// not see a request fail (a ranged body cancelled after it arrived whole shows as net::ERR_ABORTED).
// Quantized checkpoints too, in each of the three: quantized() and dequantize() (whole and by
// slice) of a file of every scheme must give what the Node entry gives, and the kernels module
// (dist/safetensors_quant.mjs, a chunk of its own in the bundle) must load on the first
// dequantize() and not before. And the streaming entries, in each of the three: f.chunks() of a
// tensor over the default chunk and of a slice (the pieces copied out and hashed), f.stats(),
// f.digest() of the whole file and of a tensor, and t.toFloat32({ into }) must give what the Node
// entry gives (node:crypto over the same bytes, Tensor.stats, toFloat32()).
//
// Why: tests that pass their own fetch never see the default path, and it can fail in browsers
// alone (fetch called as a method of anything but the global object throws "Failed to execute
// 'fetch' on 'Window': Illegal invocation"). Origin A (web-demo/serve.js) serves the page, js/,
// dist/ and the bundle; origin B (tests/js/http-server.js) serves the data with CORS and Range.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'
import { DTYPES, open, serialize } from '../../js/node.js'
import { DTYPE_BITS } from '../../js/dtypes.js'
import { sampleModel } from '../fixtures/make-sample.js'
import { INDEX_NAME, shardSample } from '../../web-demo/make-sharded-sample.js'
import { startServer as startAppServer } from '../servers/static-server.js'
import { startServer as startDataServer } from '../js/http-server.js'
import { fixtures as quantFixtures, toBytes } from '../js/quant-fixtures.js'
import { PATHS, QUANT, SLICES, STREAM, namesByShard } from './app/checks.js'
import { launchChromium, skip } from './chromium.js'


const APP_DIR = fileURLToPath(new URL('./app/', import.meta.url))
/** Where origin A serves tests/browser/app/: the repository's own layout, so that the pages'
 * relative imports (../../../js/index.js) are the browser entry at /js/index.js. */
const APP_URL = '/tests/browser/app/'
const BUNDLE_URL = '/bundle/'
/** The tensor the worker also sends as float32 (worker.js). */
const FLOAT32_TENSOR = 'model.embed_tokens.weight'
/** A large file made on demand, for the control: a body cancelled long before its end. */
const LARGE = '/large/zeros.bin'
const TIMEOUT = 30_000
/** The kernels' modules, as js/quant/kernels.js imports them (Chromium has wasm SIMD: the first). */
const KERNELS = 'dist/safetensors_quant.mjs'
const KERNELS_NOSIMD = 'dist/safetensors_quant_nosimd.mjs'
/** What a page loads on its first dequantize(), unbundled (and nothing before it). */
const LAZY_QUANT = /\/(js\/quant\/(dequantize|kernels)\.js|dist\/safetensors_quant(_nosimd)?\.mjs)$/

/**
 * @typedef {import('./app/checks.js').TensorDigest} TensorDigest
 * @typedef {import('./app/checks.js').FileDigest} FileDigest
 * @typedef {import('./app/checks.js').ErrorReport} ErrorReport
 * @typedef {import('../../js/index.js').Tensor} Tensor
 * @typedef {import('../../js/index.js').SafetensorsFile} SafetensorsFile
 * @typedef {import('./app/checks.js').QuantRead<TensorDigest>} QuantDigest
 * @typedef {{ files: Record<string, QuantDigest>, scripts: { beforeDequantize: string[], after: string[] } }} QuantResults
 * @typedef {import('./app/checks.js').StreamRead} StreamRead
 */

/** @type {Awaited<ReturnType<typeof startAppServer>>} origin A: the app */
let app
/** @type {Awaited<ReturnType<typeof startDataServer>>} origin B: the data */
let data
/** @type {import('playwright-core').Browser} */
let browser
/** @type {string} */
let bundleDir
/** The bundle's chunks (file names under BUNDLE_URL): the kernels (SIMD and not), dequantize's, the core's (SIMD). */
const chunks = { kernels: '', kernelsNosimd: '', dequantize: '', core: '' }
/** What the Node entry reads from the same bytes. */
const expected = /** @type {{ single: FileDigest, dtypes: FileDigest, sharded: FileDigest, slices: TensorDigest[],
  float32: TensorDigest, singleSize: number, quant: Record<string, QuantDigest>, stream: StreamRead }} */ ({})
/** @type {Map<string, number>} the data origin's files and their lengths */
const sizes = new Map()

/** @param {Uint8Array} bytes */
const sha256 = (bytes) => createHash('sha256').update(bytes).digest('hex')

/** @param {Tensor} t @param {Uint8Array} bytes @returns {TensorDigest} */
const digestOf = (t, bytes) => ({ name: t.name, dtype: t.dtype, shape: t.shape.map(Number), byteLength: bytes.byteLength, sha256: sha256(bytes) })

/** The tensor names in a safetensors file's header, read here with JSON.parse. @param {Uint8Array} bytes */
function headerNames(bytes) {
  const n = Number(new DataView(bytes.buffer, bytes.byteOffset, 8).getBigUint64(0, true))
  return Object.keys(JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n)))).filter((k) => k !== '__metadata__')
}

/**
 * Every tensor of a file (or sharded set) through the Node entry, hashed with node:crypto, and
 * its parameter count.
 * @param {Parameters<typeof open>[0]} src @param {Parameters<typeof open>[1]} [options] @returns {Promise<FileDigest>}
 */
async function readEvery(src, options) {
  const f = await open(src, options)
  try {
    const names = f.names
    const loaded = await f.load(names)
    const tensors = names.map((name) => {
      const t = /** @type {Tensor} */ (loaded.get(name))
      const d = digestOf(t, t.bytes)
      t.dispose()
      return d
    })
    return { names, tensors, parameters: await f.parameterCount(), byShard: namesByShard(/** @type {any} */ (f)) }
  } finally {
    await f.close()
  }
}

/**
 * What the Node entry gives for each of QUANT: quantized() as JSON, then each weight's
 * dequantize() and the slice's, hashed; each checked bit for bit against the plain-JS reference
 * of tests/js/quant-reference.js first (so that the browsers' equality with Node means exact).
 * @returns {Promise<Map<string, { bytes: Uint8Array, digest: QuantDigest }>>} by fixture name
 */
async function readQuantFixtures() {
  const all = /** @type {Record<string, import('../js/quant-fixtures.js').Fixture>} */ (quantFixtures())
  const out = new Map()
  for (const [fixture, { slice: [sliced, rows] }] of Object.entries(QUANT)) {
    const fx = all[fixture]
    assert.ok(fx, `QUANT names a fixture of tests/js/quant-fixtures.js: ${fixture}`)
    const bytes = await toBytes(fx.tensors)
    const f = await open(bytes)
    try {
      const list = /** @type {import('../../js/index.js').QuantizedWeight[]} */ (f.quantized())
      assert.deepEqual(list.map((w) => w.name).sort(), fx.weights.map((w) => w.name).sort(), `${fixture}: every weight is listed`)
      /** @param {Float32Array} got @param {Float32Array} want @param {string} what */
      const sameBits = (got, want, what) => assert.ok(Buffer.from(got.buffer, got.byteOffset, got.byteLength)
        .equals(Buffer.from(want.buffer, want.byteOffset, want.byteLength)), `${fixture} ${what}: Node's dequantize() is the reference's`)
      /** @type {TensorDigest[]} */
      const weights = []
      for (const { name } of list) {
        const t = await f.dequantize(name)
        const w = /** @type {import('../js/quant-fixtures.js').Weight} */ (fx.weights.find((x) => x.name === name))
        sameBits(/** @type {Float32Array} */ (t.data), w.expected(), name)
        weights.push(digestOf(t, t.bytes))
        t.dispose()
      }
      const w = /** @type {import('../js/quant-fixtures.js').Weight} */ (fx.weights.find((x) => x.name === sliced))
      /** @param {number | null} v @param {number} fallback */
      const row = (v, fallback) => (v === null ? fallback : v < 0 ? v + w.shape[0] : v)
      const [start, stop] = [row(rows[0], 0), row(rows[1], w.shape[0])]
      const rowLength = w.shape.slice(1).reduce((a, b) => a * b, 1)
      const t = await f.dequantize(sliced, { slice: [rows[0], rows[1]] })
      assert.deepEqual(t.shape.map(Number), [stop - start, ...w.shape.slice(1)], `${fixture} ${sliced} ${JSON.stringify(rows)}: shape`)
      sameBits(/** @type {Float32Array} */ (t.data), w.expected().subarray(start * rowLength, stop * rowLength), `${sliced} ${JSON.stringify(rows)}`)
      const slice = digestOf(t, t.bytes)
      t.dispose()
      out.set(fixture, { bytes, digest: { quantized: JSON.parse(JSON.stringify(list)), parameters: f.parameterCount(), weights, slice } })
    } finally {
      await f.close()
    }
  }
  return out
}

/** The default piece of f.chunks() (js/io/stream.js), which the pieces of the browsers' reads must be. */
const DEFAULT_CHUNK_BYTES = 4 << 20

/**
 * STREAM's file: an F32 tensor over two default chunks (NaN, infinities and zeros among its
 * values), and a BF16 and an F16 tensor of one element count (toFloat32 into one array).
 */
function streamFile() {
  const f32 = Float32Array.from({ length: 1100 * 2100 }, (_, i) => Math.sin(i * 0.37) * (1 + (i % 977)))
  f32.set([Number.NaN, Infinity, -Infinity, 0, -0], 1_500_000)
  f32[3] = Number.NaN
  const bf16 = new Uint16Array(1024 * 1536).map((_, i) => 0x3f80 + (i % 0x7f) - ((i & 1) << 15))
  const f16 = new Uint16Array(1536 * 1024).map((_, i) => 0x3c00 + (i % 0x3ff) + (i % 3 === 0 ? 0x8000 : 0))
  return serialize({
    'w.f32': { dtype: 'F32', shape: [1100, 2100], data: f32 },
    'w.bf16': { dtype: 'BF16', shape: [1024, 1536], data: bf16 },
    'w.f16': { dtype: 'F16', shape: [1536, 1024], data: f16 },
  }, { metadata: { note: 'made by tests/browser/default-path.test.js for the streaming entries' } })
}

/**
 * What the Node entry gives for STREAM's file, by its plain reads: each tensor's and the slice's
 * bytes hashed with node:crypto, Tensor.stats, the file's SHA-256, toFloat32(). The pieces are
 * Node's own f.chunks() (default options): their layout, which the browsers' must equal.
 * @param {Uint8Array} bytes @returns {Promise<StreamRead>}
 */
async function readStreamExpected(bytes) {
  const f = /** @type {SafetensorsFile} */ (await open(bytes))
  try {
    /** @param {string} name @param {{ slice?: string }} options @param {Uint8Array} whole */
    const chunksOf = async (name, options, whole) => {
      /** @type {[number, number][]} */
      const pieces = []
      /** @type {string[]} */
      const types = []
      for await (const { offset, data } of f.chunks(name, options)) {
        pieces.push([offset, data.byteLength])
        types.push(data.constructor.name)
      }
      return { pieces, types, byteLength: whole.byteLength, sha256: sha256(whole) }
    }
    const t = await f.tensor(STREAM.chunked)
    const chunks = await chunksOf(STREAM.chunked, {}, t.bytes.slice())
    t.dispose()
    const s = await f.slice(STREAM.slice[0], STREAM.slice[1])
    const slice = await chunksOf(STREAM.slice[0], { slice: STREAM.slice[1] }, s.bytes.slice())
    s.dispose()
    /** @type {StreamRead['stats']} */
    const stats = {}
    for (const name of STREAM.stats) {
      const u = await f.tensor(name)
      stats[name] = u.stats()
      u.dispose()
    }
    const d = await f.tensor(STREAM.digest)
    const tensorDigest = sha256(d.bytes)
    d.dispose()
    const into = []
    for (const name of STREAM.into) {
      const u = await f.tensor(name)
      const values = u.toFloat32()
      into.push({ name, same: true, length: values.length, sha256: sha256(new Uint8Array(values.buffer, values.byteOffset, values.byteLength)) })
      u.dispose()
    }
    assert.equal(new Set(into.map((i) => i.length)).size, 1, 'STREAM.into: one element count')
    return { chunks, slice, stats, fileDigest: sha256(bytes), tensorDigest, into }
  } finally {
    await f.close()
  }
}

/**
 * What a realm's streaming reads gave equals the Node entry's; the pieces of f.chunks() are in
 * order, end to end, of the default size but the last, and more than one.
 * @param {StreamRead} got @param {string} what
 */
function assertStream(got, what) {
  const want = expected.stream
  for (const key of /** @type {const} */ (['chunks', 'slice'])) {
    const { pieces } = got[key]
    assert.ok(pieces.length > 1, `${what}: f.chunks() ${key} came in several pieces: ${JSON.stringify(pieces)}`)
    pieces.forEach(([offset, length], i) => {
      assert.equal(offset, i * DEFAULT_CHUNK_BYTES, `${what}: ${key} piece ${i} starts where the one before ended`)
      if (i < pieces.length - 1) assert.equal(length, DEFAULT_CHUNK_BYTES, `${what}: ${key} piece ${i} is a default chunk`)
    })
  }
  assert.deepEqual(got.chunks, want.chunks, `${what}: f.chunks(${STREAM.chunked}): pieces, their views' class, the bytes`)
  assert.deepEqual(got.slice, want.slice, `${what}: f.chunks(${STREAM.slice[0]}, { slice: '${STREAM.slice[1]}' })`)
  assert.deepEqual(Object.keys(got.stats), [...STREAM.stats])
  for (const name of STREAM.stats) assert.deepEqual(got.stats[name], want.stats[name], `${what}: f.stats(${name}) is Tensor.stats`)
  assert.equal(got.fileDigest, want.fileDigest, `${what}: f.digest() is the file's SHA-256`)
  assert.equal(got.tensorDigest, want.tensorDigest, `${what}: f.digest(${STREAM.digest}) is the tensor's bytes' SHA-256`)
  assert.deepEqual(got.into, want.into, `${what}: t.toFloat32({ into }) returned into, holding toFloat32()'s values, for each of ${STREAM.into}`)
}

/** A [4, 8] tensor of every dtype, made of arbitrary bytes (NaN and Inf patterns included). */
function allDtypesFile() {
  /** @type {Record<string, { dtype: any, shape: number[], data: Uint8Array }>} */
  const tensors = {}
  for (const dtype of DTYPES) {
    const bits = DTYPE_BITS[dtype]
    tensors[dtype.toLowerCase()] = { dtype, shape: [4, 8], data: new Uint8Array((32 * bits) / 8).map((_, i) => (i * 37 + 11) & (dtype === 'BOOL' ? 1 : 255)) }
  }
  return serialize(tensors, { metadata: { note: 'made by tests/browser/default-path.test.js' } })
}

before(async () => {
  if (skip) return
  const sample = sampleModel()
  const single = await serialize(/** @type {Parameters<typeof serialize>[0]} */ (sample.tensors), { metadata: sample.metadata })
  const dtypes = await allDtypesFile()
  const f = /** @type {SafetensorsFile} */ (await open(single))
  const shards = await shardSample(f)
  expected.slices = []
  for (const [name, spec] of SLICES) {
    const t = await f.slice(name, spec)
    expected.slices.push(digestOf(t, t.bytes))
    t.dispose()
  }
  const t = await f.tensor(FLOAT32_TENSOR)
  const float32 = t.toFloat32()
  expected.float32 = digestOf(t, new Uint8Array(float32.buffer, float32.byteOffset, float32.byteLength))
  t.dispose()
  await f.close()
  expected.single = await readEvery(single)
  expected.singleSize = single.length
  expected.dtypes = await readEvery(dtypes)
  const index = /** @type {Uint8Array} */ (shards.get(INDEX_NAME))
  expected.sharded = await readEvery(index, { shards: new Map([...shards].filter(([name]) => name !== INDEX_NAME)) })
  assert.deepEqual([...expected.sharded.names].sort(), [...expected.single.names].sort(), 'the shards hold the sample')
  assert.ok(expected.single.parameters.total > 0)
  assert.deepEqual(expected.sharded.parameters, expected.single.parameters, 'the set counts as the file it was split from')
  // namesIn: each shard's names, in the set's order, the shards' runs making up `names`
  const byShard = /** @type {string[][]} */ (expected.sharded.byShard)
  assert.ok(byShard.length > 1 && byShard.every((names) => names.length > 0))
  assert.deepEqual(byShard.flat(), expected.sharded.names)
  const split = new Map([...shards].filter(([name]) => name !== INDEX_NAME).map(([path, bytes]) => [path, headerNames(bytes)]))
  assert.deepEqual(byShard.map((names) => [...names].sort()), [...split.keys()].sort().map((path) => [...(split.get(path) ?? [])].sort()),
    'each shard\'s names are those of its own header')
  assert.equal(expected.single.byShard, null)
  assert.ok(expected.slices.every((s) => s.byteLength > 0))
  const quant = await readQuantFixtures()
  expected.quant = Object.fromEntries([...quant].map(([fixture, q]) => [fixture, q.digest]))
  for (const [fixture, q] of Object.entries(expected.quant)) assert.ok(Object.keys(q.parameters.byScheme).length > 0, `${fixture}: counted by scheme`)
  const streamBytes = await streamFile()
  expected.stream = await readStreamExpected(streamBytes)

  data = await startDataServer({ lifetime: 300_000 })
  /** @param {string} path @param {Uint8Array} bytes */
  const serve = (path, bytes) => {
    data.addFile(path, bytes)
    sizes.set(path, bytes.length)
  }
  for (const path of [PATHS.single, PATHS.slices, PATHS.blob]) serve(path, single)
  serve(PATHS.dtypes, dtypes)
  const folder = PATHS.index.slice(0, -INDEX_NAME.length)
  for (const [name, bytes] of shards) serve(folder + name, bytes)
  for (const [fixture, q] of quant) serve(QUANT[fixture].path, q.bytes)
  serve(STREAM.path, streamBytes)
  serve(STREAM.digestPath, streamBytes)
  data.addVirtual(LARGE, { size: 256 * 1024 * 1024, fill: (out) => out.fill(0) })

  app = await startAppServer()
  for (const name of await readdir(APP_DIR)) app.addFile(APP_URL + name, await readFile(join(APP_DIR, name)))
  // The bundled app: esbuild resolves 'safetensors-wasm' through package.json's exports, as in
  // an app's build (platform 'browser': the "default" condition, js/index.js).
  bundleDir = await mkdtemp(join(tmpdir(), 'st-bundle-'))
  const result = await build({
    entryPoints: [join(APP_DIR, 'bundle-entry.js')], bundle: true, format: 'esm', platform: 'browser',
    splitting: true, outdir: bundleDir, entryNames: '[name]', metafile: true, logLevel: 'silent',
  })
  assert.deepEqual(result.errors, [])
  const inputs = Object.keys(result.metafile.inputs)
  assert.ok(inputs.includes('js/index.js') && !inputs.includes('js/node.js'), `the browser entry is bundled: ${inputs.join(', ')}`)
  // The kernels (each build) and dequantize.js are chunks of their own, none of them reached by
  // the entry's static imports: a page that never dequantizes never downloads them.
  const outputs = Object.entries(result.metafile.outputs)
  /** @param {string} entryPoint @returns {string} the output file of the chunk split at this dynamic import */
  const chunkOf = (entryPoint) => {
    const found = outputs.filter(([, o]) => o.entryPoint === entryPoint)
    assert.equal(found.length, 1, `one chunk for ${entryPoint}: ${outputs.map(([p, o]) => `${p} <- ${Object.keys(o.inputs)}`).join('; ')}`)
    return found[0][0]
  }
  const kernelsOut = chunkOf(KERNELS)
  const nosimdOut = chunkOf(KERNELS_NOSIMD)
  const dequantizeOut = chunkOf('js/quant/dequantize.js')
  assert.deepEqual(Object.keys(result.metafile.outputs[kernelsOut].inputs), [KERNELS], 'the SIMD kernels chunk holds the kernels alone')
  assert.deepEqual(Object.keys(result.metafile.outputs[nosimdOut].inputs), [KERNELS_NOSIMD], 'the other kernels chunk holds them alone')
  const entryOut = /** @type {string} */ (outputs.find(([, o]) => o.entryPoint === 'tests/browser/app/bundle-entry.js')?.[0])
  /** @type {Set<string>} */
  const eager = new Set()
  for (const queue = [entryOut]; queue.length > 0;) {
    const path = /** @type {string} */ (queue.pop())
    if (eager.has(path)) continue
    eager.add(path)
    for (const i of result.metafile.outputs[path].imports) if (i.kind === 'import-statement') queue.push(i.path)
  }
  for (const lazy of [kernelsOut, nosimdOut, dequantizeOut]) assert.ok(!eager.has(lazy), `${lazy} is not loaded with the entry: ${[...eager].join(', ')}`)
  for (const path of eager) {
    const inputs = Object.keys(result.metafile.outputs[path].inputs)
    assert.ok(!inputs.some((i) => i.startsWith('dist/safetensors_quant') || i.startsWith('js/quant/kernels') || i.startsWith('js/quant/dequantize')),
      `${path}, loaded with the entry, holds none of the kernels: ${inputs.join(', ')}`)
  }
  Object.assign(chunks, { kernels: basename(kernelsOut), kernelsNosimd: basename(nosimdOut), dequantize: basename(dequantizeOut),
    core: basename(chunkOf('dist/safetensors_core.mjs')) })
  for (const name of await readdir(bundleDir)) app.addFile(BUNDLE_URL + name, await readFile(join(bundleDir, name)))

  browser = await launchChromium()
})

after(async () => {
  await browser?.close()
  await app?.close()
  await data?.close()
  if (bundleDir) await rm(bundleDir, { recursive: true })
})

/**
 * Opens `path` on origin A with ?data= naming origin B (and `query`), waits for the page's
 * `results`, then for every request to settle. Returns the results, script errors and every
 * request Chromium reports as failed.
 * @param {string} path @param {Record<string, string>} [query]
 */
async function runPage(path, query = {}) {
  const context = await browser.newContext()
  const page = await context.newPage()
  /** @type {string[]} */
  const errors = []
  /** @type {string[]} */
  const failed = []
  /** @type {Set<import('playwright-core').Request>} */
  const pending = new Set()
  /** @type {string[]} */
  const requested = []
  page.on('pageerror', (e) => errors.push(e.message))
  page.on('console', (m) => { if (m.type() === 'error' && !/Failed to load resource/.test(m.text())) errors.push(m.text()) })
  page.on('request', (r) => { pending.add(r); requested.push(r.url()) })
  page.on('requestfinished', (r) => pending.delete(r))
  page.on('requestfailed', (r) => {
    pending.delete(r)
    failed.push(`${r.method()} ${r.url()} ${r.headers().range ?? '(no Range)'}: ${r.failure()?.errorText}`)
  })
  try {
    app.resetStats()
    data.resetStats()
    const url = new URL(app.url(path))
    url.search = new URLSearchParams({ data: data.base, ...query }).toString()
    await page.goto(url.href)
    await page.waitForFunction(() => /** @type {any} */ (globalThis).results !== undefined, undefined, { timeout: TIMEOUT })
    const results = /** @type {any} */ (await page.evaluate(() => /** @type {any} */ (globalThis).results))
    // A cancelled body is reported when the network stack notices: wait for every request to end.
    for (const deadline = Date.now() + 5000; pending.size > 0 && Date.now() < deadline;) await new Promise((r) => setTimeout(r, 50))
    return { results, errors, failed, requested, unsettled: [...pending].map((r) => r.url()) }
  } finally {
    await context.close()
  }
}

/** Fails with the page's error (name, code, message, stack) when it reports one.
 * @param {{ ok: boolean, error?: ErrorReport }} results */
function assertOk(results) {
  if (!results.ok) {
    const e = /** @type {ErrorReport} */ (results.error)
    assert.fail(`the page failed: ${e.name}${e.code ? ` [${e.code}]` : ''}: ${e.message}\n${e.stack}`)
  }
}

/**
 * The data server's log for `path`: at least `min` requests by the library, each a single Range
 * request answered 206 with the whole range sent (the server stops writing when the client goes
 * away), the first one the initial bytes=0-262143; and `plain` requests without Range (the app's
 * own fetch), answered 200 with the whole file.
 * @param {string} path @param {number} [min] 2: the header, then the tensors @param {number} [plain]
 */
function assertRanged(path, min = 2, plain = 0) {
  const size = /** @type {number} */ (sizes.get(path))
  const all = data.stats.log.filter((e) => e.path === path)
  const whole = all.filter((e) => e.range === null)
  assert.deepEqual(whole.map((e) => [e.status, e.bytes]), Array(plain).fill([200, size]), `${path}: requests without Range ${JSON.stringify(all)}`)
  const log = all.filter((e) => e.range !== null)
  assert.ok(log.length >= min, `${path}: at least ${min} Range requests: ${JSON.stringify(log)}`)
  if (log.length > 0) assert.equal(log[0].range, 'bytes=0-262143', `${path}: the first request asks for the initial bytes`)
  for (const e of log) {
    const m = /^bytes=(\d+)-(\d+)$/.exec(e.range ?? '')
    assert.ok(m, `${path}: a single range, not ${e.range}`)
    assert.equal(e.status, 206, `${path} ${e.range}: HTTP ${e.status}`)
    assert.equal(e.bytes, Math.min(Number(m[2]) + 1, size) - Number(m[1]), `${path} ${e.range}: the whole range was sent`)
  }
}

/**
 * The scripts a realm loaded before its first dequantize() include `eager` and none of `lazy`;
 * those after include `loaded` (paths on origin A). `eager` is the core's module, a dynamic
 * import as the kernels' are: seeing it shows that Resource Timing records those in this realm
 * (a worker's own module graph, loaded before it runs, is not in its timeline).
 * @param {QuantResults['scripts']} scripts @param {{ eager: string, lazy: (url: string) => boolean, loaded: string[] }} expect
 * @param {string} what
 */
function assertLazyKernels(scripts, expect, what) {
  const eager = `${app.origin}${expect.eager}`
  assert.ok(scripts.beforeDequantize.includes(eager), `${what}: Resource Timing saw ${eager} (${scripts.beforeDequantize.join(', ')})`)
  assert.deepEqual(scripts.beforeDequantize.filter(expect.lazy), [], `${what}: nothing of dequantization loaded before the first dequantize()`)
  for (const path of expect.loaded) {
    assert.ok(scripts.after.includes(`${app.origin}${path}`), `${what}: ${path} loaded on the first dequantize(): ${scripts.after.filter(expect.lazy).join(', ')}`)
  }
}

/**
 * Each of QUANT: read by Range from origin B (one request: the files fit in the first read).
 */
function assertQuantRanged() {
  for (const { path } of Object.values(QUANT)) assertRanged(path, 1)
}

/**
 * STREAM's file at both its paths, read by Range; at digestPath, every byte of the file reached
 * the server (the whole file's digest read it over the network, not from Chromium's cache).
 */
function assertStreamRanged() {
  assertRanged(STREAM.path)
  assertRanged(STREAM.digestPath)
  const size = /** @type {number} */ (sizes.get(STREAM.digestPath))
  const ranges = data.stats.log.filter((e) => e.path === STREAM.digestPath)
    .map((e) => /** @type {RegExpExecArray} */ (/^bytes=(\d+)-(\d+)$/.exec(e.range ?? '')).slice(1).map(Number)).sort((a, b) => a[0] - b[0])
  let covered = 0
  for (const [start, end] of ranges) if (start <= covered) covered = Math.max(covered, end + 1)
  assert.equal(covered, size, `${STREAM.digestPath}: f.digest() read the whole file over the network: ${JSON.stringify(ranges)}`)
}

/** @param {{ failed: string[], unsettled: string[], errors: string[] }} run @param {string} what */
function assertCleanNetwork(run, what) {
  assert.deepEqual(run.failed, [], `${what}: Chromium reports no failed request (a ranged body cancelled after it arrived ` +
    'whole shows as net::ERR_ABORTED; js/io/http.js must read each ranged body to its end)')
  assert.deepEqual(run.unsettled, [], `${what}: every request ended`)
  assert.deepEqual(run.errors, [], `${what}: no script errors`)
}

test('a page reads a URL on another origin with default options: every tensor, slices, a sharded set, a Blob, quantized weights, streamed', { skip, timeout: 60_000 }, async () => {
  const run = await runPage(`${APP_URL}page.html`, { run: 'main' })
  assertOk(run.results)
  const r = run.results
  assert.deepEqual(r.single, expected.single, 'one file by URL: names, dtypes, shapes, bytes')
  assert.deepEqual(r.dtypes, expected.dtypes, 'every dtype by URL')
  assert.deepEqual(r.slices, expected.slices, 'slices by URL')
  assert.deepEqual(r.sharded, expected.sharded, 'a sharded set by its index URL')
  assert.equal(r.blobSize, expected.singleSize)
  assert.deepEqual(r.blob, expected.single, 'a Blob')
  assert.deepEqual(r.blobSlices, expected.slices, 'slices of a Blob')
  // The data came from origin B, by Range, and nothing fetched the library from there.
  assertRanged(PATHS.single)
  assertRanged(PATHS.slices)
  assertRanged(PATHS.dtypes, 1)  // a small file: one request
  assertRanged(PATHS.blob, 0, 1)  // the app's own fetch of the whole file, for its Blob
  const shardPaths = new Set(data.stats.log.filter((e) => e.path.startsWith('/sharded/') && e.path !== PATHS.index).map((e) => e.path))
  assert.equal(shardPaths.size, 3, 'every shard was read')
  for (const path of shardPaths) assertRanged(path)
  assert.ok(run.requested.some((u) => u.startsWith(`${app.origin}/js/index.js`)), 'the page loaded the unbundled browser entry')
  // Quantized files: the same list, and the same float32 bytes, as the Node entry.
  const quant = /** @type {QuantResults} */ (r.quant)
  assert.deepEqual(Object.keys(quant.files), Object.keys(QUANT), 'every quantized file was read')
  for (const [fixture, want] of Object.entries(expected.quant)) assert.deepEqual(quant.files[fixture], want, `${fixture}: quantized(), parameterCount(), dequantize() and a slice`)
  assertQuantRanged()
  assert.ok(run.requested.includes(`${app.origin}/${KERNELS}`), 'the page loaded the kernels (SIMD build)')
  assert.ok(!run.requested.includes(`${app.origin}/${KERNELS_NOSIMD}`), 'and not the build without SIMD')
  assertLazyKernels(quant.scripts, { eager: '/dist/safetensors_core.mjs', lazy: (u) => LAZY_QUANT.test(u), loaded: [`/${KERNELS}`, '/js/quant/dequantize.js', '/js/quant/kernels.js'] }, 'the page')
  // The streaming entries: chunks, stats, digest, toFloat32 into an array.
  assertStream(r.stream, 'the page')
  assertStreamRanged()
  assertCleanNetwork(run, 'reads on the page')
})

test('a module worker reads (a sharded set too), dequantizes and streams with default options and transfers copies to the page', { skip, timeout: 60_000 }, async () => {
  const run = await runPage(`${APP_URL}page.html`, { run: 'worker' })
  assertOk(run.results)
  const r = run.results
  /** @param {{ type: string, sentType: string }[]} list */
  const strip = (list) => list.map(({ type, sentType, ...digest }) => {
    assert.equal(type, sentType, `${/** @type {any} */ (digest).name}: the array arrives as the ${sentType} that was sent`)
    return digest
  })
  assert.deepEqual(r.names, expected.single.names)
  assert.deepEqual(strip(r.tensors), expected.single.tensors, 'every tensor, read in the worker')
  assert.deepEqual(strip(r.slices), expected.slices, 'slices, read in the worker')
  assert.deepEqual(strip([r.float32]), [expected.float32], 'toFloat32 in the worker')
  assert.equal(r.float32.type, 'Float32Array')
  assert.deepEqual(r.sharded, expected.sharded, 'a sharded set by its index URL, read in the worker')
  assert.ok(run.requested.includes(`${app.origin}/dist/safetensors_index.mjs`), 'the worker loaded the index parser\'s module')
  assert.ok(r.sentByteLengths.length === expected.single.tensors.length + expected.slices.length + 1 &&
    r.sentByteLengths.every((/** @type {number} */ n) => n === 0), `postMessage detached every copy in the worker: ${r.sentByteLengths}`)
  assert.match(r.dataTransfer, /^refused: /, 't.data (a view of wasm memory) cannot be transferred')
  // Quantized files, dequantized in the worker; the page hashes the float32 copies it was sent.
  const quant = /** @type {QuantResults} */ (r.quant)
  assert.deepEqual(Object.keys(quant.files), Object.keys(QUANT), 'every quantized file was read in the worker')
  for (const [fixture, want] of Object.entries(expected.quant)) {
    const got = quant.files[fixture]
    const sent = { quantized: got.quantized, parameters: got.parameters, weights: strip(/** @type {any} */ (got.weights)), slice: strip([/** @type {any} */ (got.slice)])[0] }
    assert.deepEqual(sent, want, `${fixture}: quantized(), parameterCount(), dequantize() and a slice, in the worker`)
    assert.ok([...got.weights, got.slice].every((d) => /** @type {any} */ (d).type === 'Float32Array'), `${fixture}: Float32Arrays`)
  }
  const expectedQuantSent = Object.values(expected.quant).reduce((n, q) => n + q.weights.length + 1, 0)
  assert.ok(r.quantSentByteLengths.length === expectedQuantSent && r.quantSentByteLengths.every((/** @type {number} */ n) => n === 0),
    `postMessage detached every dequantized copy in the worker: ${r.quantSentByteLengths}`)
  assertQuantRanged()
  assert.ok(run.requested.includes(`${app.origin}/${KERNELS}`), 'the worker loaded the kernels (SIMD build)')
  assert.ok(!run.requested.includes(`${app.origin}/${KERNELS_NOSIMD}`), 'and not the build without SIMD')
  assertLazyKernels(quant.scripts, { eager: '/dist/safetensors_core.mjs', lazy: (u) => LAZY_QUANT.test(u), loaded: [`/${KERNELS}`, '/js/quant/dequantize.js', '/js/quant/kernels.js'] }, 'the worker')
  assertRanged(PATHS.single)
  assertRanged(PATHS.slices)
  // The streaming entries, in the worker.
  assertStream(r.stream, 'the worker')
  assertStreamRanged()
  assert.ok(run.requested.some((u) => u.startsWith(`${app.origin}${APP_URL}worker.js`)), 'the worker script was loaded')
  // Chromium reports a dedicated worker's requests as the page's: the failed-request check sees
  // them (more than reach the server: the HTTP cache answers the re-read of FLOAT32_TENSOR).
  const seen = run.requested.filter((u) => u.startsWith(data.base)).length
  assert.ok(seen > 0 && seen >= data.stats.requests, `the page saw the worker's ${data.stats.requests} data requests (${seen})`)
  assertCleanNetwork(run, 'reads in the worker')
})

test('an esbuild bundle of an app reads every tensor, slices and quantized weights, and streams, loading nothing but the bundle', { skip, timeout: 60_000 }, async () => {
  const run = await runPage(`${APP_URL}bundled.html`)
  assertOk(run.results)
  assert.deepEqual(run.results.single, expected.single, 'one file by URL, bundled')
  assert.deepEqual(run.results.slices, expected.slices, 'slices, bundled')
  const quant = /** @type {QuantResults} */ (run.results.quant)
  assert.deepEqual(Object.keys(quant.files), Object.keys(QUANT), 'every quantized file was read, bundled')
  for (const [fixture, want] of Object.entries(expected.quant)) assert.deepEqual(quant.files[fixture], want, `${fixture}: quantized(), dequantize() and a slice, bundled`)
  const served = app.stats.log.map((e) => e.path).filter((p) => p !== '/favicon.ico')
  assert.ok(served.length > 0 && served.every((p) => p === `${APP_URL}bundled.html` || p.startsWith(BUNDLE_URL)),
    `origin A served only the page and the bundle: ${served.join(', ')}`)
  // The kernels came as the bundle's chunk (SIMD), on the first dequantize() and not before.
  assert.ok(served.includes(`${BUNDLE_URL}${chunks.kernels}`), `the kernels' chunk ${chunks.kernels} was served: ${served.join(', ')}`)
  assert.ok(served.includes(`${BUNDLE_URL}${chunks.dequantize}`), `dequantize's chunk ${chunks.dequantize} was served`)
  assert.ok(!served.includes(`${BUNDLE_URL}${chunks.kernelsNosimd}`), 'the chunk without SIMD was not')
  const lazy = new Set([chunks.kernels, chunks.kernelsNosimd, chunks.dequantize].map((c) => `${app.origin}${BUNDLE_URL}${c}`))
  assertLazyKernels(quant.scripts, { eager: `${BUNDLE_URL}${chunks.core}`, lazy: (u) => lazy.has(u),
    loaded: [`${BUNDLE_URL}${chunks.kernels}`, `${BUNDLE_URL}${chunks.dequantize}`] }, 'the bundle')
  assertRanged(PATHS.single)
  assertRanged(PATHS.slices)
  assertQuantRanged()
  assertStream(run.results.stream, 'the bundle')
  assertStreamRanged()
  assertCleanNetwork(run, 'reads by the bundle')
})

test('control: the failed-request check sees a ranged body cancelled before its end', { skip, timeout: 60_000 }, async () => {
  const run = await runPage(`${APP_URL}cancel-probe.html`, { path: LARGE })
  assertOk(run.results)
  assert.equal(run.results.status, 206)
  assert.ok(run.results.firstChunk > 0)
  assert.deepEqual(run.failed, [`GET ${data.base}${LARGE} bytes=0-: net::ERR_ABORTED`], 'what the check reports')
  assert.deepEqual(run.errors, [])
})

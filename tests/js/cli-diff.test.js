// `safetensors-wasm diff A B` as a user runs it (`node js/cli/main.js diff ...` in a child process)
// on generated pairs whose differences are known: a fine-tune (a few values changed, NaN on one
// side and on both), a tensor added and one removed, a dtype change, a shape change, identical
// files, a sharded set against the single file, files over HTTP and on the Hub, a large tensor
// read in small pieces; and diffFiles in this process on two 96 MiB virtual sources, the wasm
// heap bounded by the pieces. The expected numbers are worked out here from the values written.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile as fsWriteFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { open, serialize, writeFile } from '../../js/node.js'
import { heapInUse } from '../../js/core/index.js'
import { loadCore } from '../../js/wasm.js'
import { diffFiles } from '../../js/cli/diff.js'
import { startServer } from './http-server.js'
import { HUB_TOKEN, startHub } from './hub-server.js'
import { virtualFile } from './virtual-file.js'
import { expectedChange } from './diff-reference.js'

const CLI = fileURLToPath(new URL('../../js/cli/main.js', import.meta.url))

/**
 * @param {...string} args
 * @returns {Promise<{ code: number, stdout: string, stderr: string }>}
 */
function run(...args) {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 120_000, maxBuffer: 64 << 20 }, (error, stdout, stderr) => {
      resolve({ code: error ? Number(/** @type {any} */ (error).code ?? 1) : 0, stdout, stderr })
    })
  })
}

/** Float32 bits as a float (NaN payloads kept in the bytes). @param {number[]} bits */
const fromBits = (bits) => new Float32Array(Uint32Array.from(bits).buffer)
/** BF16 codes of float32 values exact in BF16. @param {Float32Array} values */
const bf16 = (values) => Uint16Array.from(new Uint32Array(values.buffer.slice(0)), (b) => b >>> 16)
/** The values of BF16 codes. @param {Uint16Array} codes */
const bf16Values = (codes) => new Float32Array(Uint32Array.from(codes, (c) => c << 16).buffer)

const N = 64 * 96
const WEIGHT = Float32Array.from({ length: N }, (_, i) => Math.sin(i * 0.37) / 10)
WEIGHT[200] = fromBits([0x7fc00000])[0]  // NaN in both
const TUNED = WEIGHT.slice()
TUNED[5] += 0.01
TUNED[700] -= 0.02
TUNED[4000] += 0.5
TUNED[100] = NaN  // NaN in B only: a non-finite change
const EMBED = Float32Array.from({ length: 50 * 16 }, (_, i) => ((i % 23) - 11) / 8)  // exact in BF16
const EMBED_TUNED = EMBED.slice()
EMBED_TUNED[0] = 3
EMBED_TUNED[17] = -0.25
EMBED_TUNED[799] = 0

/** What both files hold as they are. */
const SHARED = {
  'layers.0.bias': { dtype: 'F32', shape: [96], data: Float32Array.from({ length: 96 }, (_, i) => i - 48) },
  step: { dtype: 'I64', shape: [1], data: new BigInt64Array([1000n]) },
}
const BASE = {
  ...SHARED,
  'layers.0.weight': { dtype: 'F32', shape: [64, 96], data: WEIGHT },
  embed: { dtype: 'BF16', shape: [50, 16], data: bf16(EMBED) },
  norm: { dtype: 'F32', shape: [16], data: new Float32Array(16).fill(1) },
  proj: { dtype: 'F32', shape: [4, 6], data: Float32Array.from({ length: 24 }, (_, i) => i) },
  'nan.payload': { dtype: 'F32', shape: [2], data: fromBits([0x7fc00000, 0x3f800000]) },
  'old.head': { dtype: 'F32', shape: [3], data: new Float32Array([1, 2, 3]) },
}
const TUNED_FILE = {
  ...SHARED,
  'layers.0.weight': { dtype: 'F32', shape: [64, 96], data: TUNED },
  embed: { dtype: 'BF16', shape: [50, 16], data: bf16(EMBED_TUNED) },
  norm: { dtype: 'BF16', shape: [16], data: new Uint16Array(16).fill(0x3f80) },
  proj: { dtype: 'F32', shape: [6, 4], data: Float32Array.from({ length: 24 }, (_, i) => i) },
  'nan.payload': { dtype: 'F32', shape: [2], data: fromBits([0x7fc00001, 0x3f800000]) },
  'lora.extra': { dtype: 'F32', shape: [2], data: new Float32Array([0.5, 0.5]) },
}

/** @param {number} actual @param {number} expected @param {string} what */
function near(actual, expected, what) {
  assert.ok(Math.abs(actual - expected) <= 1e-12 * Math.abs(expected), `${what}: ${actual}, expected ${expected}`)
}

/** @type {string} */
let dir
/** @type {Record<string, string>} */
const files = {}
/** @type {Record<string, Uint8Array>} */
const bytes = {}
/** @type {Awaited<ReturnType<typeof startServer>>} */
let server

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'st-cli-diff-'))
  for (const [key, tensors] of /** @type {[string, any][]} */ ([['base', BASE], ['tuned', TUNED_FILE]])) {
    bytes[key] = await serialize(tensors, { metadata: { format: 'pt' } })
    files[key] = join(dir, `${key}.safetensors`)
    await fsWriteFile(files[key], bytes[key])
  }
  files.copy = join(dir, 'copy.safetensors')
  await copyFile(files.base, files.copy)
  // The base's tensors in two shards and an index.
  const shards = join(dir, 'sharded')
  await mkdir(shards)
  const names = Object.keys(BASE)
  /** @type {Record<string, string>} */
  const weightMap = {}
  for (const [i, part] of [names.slice(0, 3), names.slice(3)].entries()) {
    const shard = `model-0000${i + 1}-of-00002.safetensors`
    await writeFile(join(shards, shard), Object.fromEntries(part.map((n) => [n, /** @type {any} */ (BASE)[n]])))
    for (const n of part) weightMap[n] = shard
  }
  files.index = join(shards, 'model.safetensors.index.json')
  await fsWriteFile(files.index, JSON.stringify({ metadata: {}, weight_map: weightMap }))
  server = await startServer()
})

after(async () => {
  await server?.close()
  if (dir) await rm(dir, { recursive: true })
})

/** The numbers of the base/tuned pair, from the values written. */
function expectedPair() {
  const weight = expectedChange(WEIGHT, TUNED)
  const embed = expectedChange(bf16Values(bf16(EMBED)), bf16Values(bf16(EMBED_TUNED)))
  return { weight, embed }
}

test('a fine-tune: only in A, only in B, dtype, shape, values with their exact numbers; exit 1', async () => {
  const r = await run('diff', files.base, files.tuned, '--json')
  assert.equal(r.stderr, '')
  assert.equal(r.code, 1)
  const doc = JSON.parse(r.stdout)
  assert.deepEqual(Object.keys(doc), ['onlyInA', 'onlyInB', 'changed', 'identical'])
  assert.deepEqual(doc.onlyInA, ['old.head'])
  assert.deepEqual(doc.onlyInB, ['lora.extra'])
  assert.equal(doc.identical, 2, 'the bias and the step')
  const byName = Object.fromEntries(doc.changed.map((/** @type {any} */ c) => [c.name, c]))
  assert.deepEqual(Object.keys(byName).sort(), ['embed', 'layers.0.weight', 'nan.payload', 'norm', 'proj'])
  const base = await open(files.base)
  assert.deepEqual(doc.changed.map((/** @type {any} */ c) => c.name), base.names.filter((n) => n in byName), 'in A\'s order')
  await base.close()
  const blank = { maxAbsDiff: null, meanAbsDiff: null, relativeChange: null, changedValues: null, nonFiniteChanges: null }
  assert.deepEqual(byName.norm, { name: 'norm', kind: 'dtype', ...blank, a: { dtype: 'F32', shape: [16] }, b: { dtype: 'BF16', shape: [16] }, values: 16 })
  assert.deepEqual(byName.proj, { name: 'proj', kind: 'shape', ...blank, a: { dtype: 'F32', shape: [4, 6] }, b: { dtype: 'F32', shape: [6, 4] }, values: 24 })
  assert.deepEqual(Object.keys(byName.norm), ['name', 'kind', 'maxAbsDiff', 'meanAbsDiff', 'relativeChange', 'a', 'b', 'values', 'changedValues', 'nonFiniteChanges'])
  // Bytes that differ only by a NaN's payload: changed, no value differs.
  assert.deepEqual(byName['nan.payload'], { name: 'nan.payload', kind: 'values', maxAbsDiff: 0, meanAbsDiff: 0, relativeChange: 0,
    a: { dtype: 'F32', shape: [2] }, b: { dtype: 'F32', shape: [2] }, values: 2, changedValues: 0, nonFiniteChanges: 0 })

  const { weight, embed } = expectedPair()
  assert.deepEqual([weight.changedValues, weight.nonFiniteChanges], [4, 1], 'three changed values and one NaN in B (the test\'s own count)')
  assert.equal(weight.maxAbsDiff, Math.fround(WEIGHT[4000] + 0.5) - WEIGHT[4000])
  for (const [name, want] of /** @type {const} */ ([['layers.0.weight', weight], ['embed', embed]])) {
    const c = byName[name]
    assert.equal(c.kind, 'values')
    assert.equal(c.maxAbsDiff, want.maxAbsDiff, `${name}: max`)
    near(c.meanAbsDiff, want.meanAbsDiff, `${name}: mean`)
    near(c.relativeChange, want.relativeChange, `${name}: relative`)
    assert.deepEqual([c.changedValues, c.nonFiniteChanges], [want.changedValues, want.nonFiniteChanges], name)
  }
  assert.equal(byName.embed.maxAbsDiff, 3 - EMBED[0])
  assert.equal(byName.embed.values, 800)
})

test('the text: a line per difference and a summary line', async () => {
  const r = await run('diff', files.base, files.tuned)
  assert.equal(r.code, 1)
  assert.equal(r.stderr, '', 'no progress bar when stderr is not a terminal')
  const lines = r.stdout.trimEnd().split('\n')
  assert.match(lines[0], /^only in A {2}old\.head$/)
  assert.match(lines[1], /^only in B {2}lora\.extra$/)
  assert.ok(lines.some((l) => /^dtype +norm +F32 \[16\] -> BF16 \[16\]$/.test(l)), r.stdout)
  assert.ok(lines.some((l) => /^shape +proj +F32 \[4, 6\] -> F32 \[6, 4\]$/.test(l)), r.stdout)
  assert.ok(lines.some((l) => /^values +layers\.0\.weight +max \|B-A\| 0\.5 {2}mean [\d.e-]+ {2}relative [\d.e-]+ {2}\(4 of 6,144 values changed, 1 NaN or Inf on one side\)$/.test(l)), r.stdout)
  assert.ok(lines.some((l) => /^values +nan\.payload +\(no value differs: NaN payloads or the sign of zero\)$/.test(l)), r.stdout)
  assert.equal(lines.at(-1), `A ${files.base} and B ${files.tuned} differ: 2 identical, 5 changed (1 dtype, 1 shape, 3 values), 1 only in A, 1 only in B`)
})

test('identical files: exit 0, nothing changed, the summary says so', async () => {
  const json = await run('diff', files.base, files.copy, '--json')
  assert.equal(json.code, 0, json.stderr)
  assert.deepEqual(JSON.parse(json.stdout), { onlyInA: [], onlyInB: [], changed: [], identical: Object.keys(BASE).length })
  const text = await run('diff', files.base, files.copy)
  assert.equal(text.code, 0)
  assert.equal(text.stdout, `A ${files.base} and B ${files.copy} hold the same ${Object.keys(BASE).length} tensors, byte for byte\n`)
})

test('a sharded set against the single file with the same tensors: exit 0; against the fine-tune, the same differences', async () => {
  const same = await run('diff', files.index, files.base, '--json')
  assert.equal(same.code, 0, same.stderr)
  assert.deepEqual(JSON.parse(same.stdout), { onlyInA: [], onlyInB: [], changed: [], identical: Object.keys(BASE).length })
  const single = JSON.parse((await run('diff', files.base, files.tuned, '--json')).stdout)
  const sharded = await run('diff', files.index, files.tuned, '--json')
  assert.equal(sharded.code, 1)
  const doc = JSON.parse(sharded.stdout)
  const sorted = (/** @type {any} */ d) => ({ ...d, changed: [...d.changed].sort((x, y) => (x.name < y.name ? -1 : 1)) })
  assert.deepEqual(sorted(doc), sorted(single))
})

test('--only compares the tensors it names; --chunk-bytes gives the same numbers from small pieces', async () => {
  const r = await run('diff', files.base, files.tuned, '--only', 'layers.*', '--json')
  assert.equal(r.code, 1)
  const doc = JSON.parse(r.stdout)
  assert.deepEqual([doc.onlyInA, doc.onlyInB, doc.changed.map((/** @type {any} */ c) => c.name), doc.identical], [[], [], ['layers.0.weight'], 1])
  const none = await run('diff', files.base, files.tuned, '--only', '/bias$/')
  assert.equal(none.code, 0, 'the bias is the same')
  const small = JSON.parse((await run('diff', files.base, files.tuned, '--chunk-bytes', '64', '--json')).stdout)
  const whole = JSON.parse((await run('diff', files.base, files.tuned, '--json')).stdout)
  for (const [i, c] of whole.changed.entries()) {
    const s = small.changed[i]
    assert.deepEqual({ ...s, meanAbsDiff: 0, relativeChange: 0 }, { ...c, meanAbsDiff: 0, relativeChange: 0 })
    if (c.meanAbsDiff !== null) {
      near(s.meanAbsDiff, c.meanAbsDiff, `${c.name} in 64-byte pieces: mean`)
      near(s.relativeChange, c.relativeChange, `${c.name} in 64-byte pieces: relative`)
    }
  }
})

test('a large tensor in 4 KiB pieces: every piece compared, the numbers of the whole', async () => {
  const rows = 512
  const cols = 1024
  const a = Float32Array.from({ length: rows * cols }, (_, i) => Math.cos(i / 1000))
  const b = a.slice()
  for (let i = 17; i < b.length; i += 9973) b[i] *= 1.5
  b[b.length - 1] = -b[b.length - 1]
  const pa = join(dir, 'large-a.safetensors')
  const pb = join(dir, 'large-b.safetensors')
  await writeFile(pa, { big: { dtype: 'F32', shape: [rows, cols], data: a }, same: { dtype: 'F32', shape: [rows, cols], data: a } })
  await writeFile(pb, { big: { dtype: 'F32', shape: [rows, cols], data: b }, same: { dtype: 'F32', shape: [rows, cols], data: a } })
  const r = await run('diff', pa, pb, '--chunk-bytes', '4k', '--json')
  assert.equal(r.code, 1, r.stderr)
  const doc = JSON.parse(r.stdout)
  assert.equal(doc.identical, 1)
  const [c] = doc.changed
  const want = expectedChange(a, b)
  assert.equal(c.maxAbsDiff, want.maxAbsDiff)
  near(c.meanAbsDiff, want.meanAbsDiff, 'mean')
  near(c.relativeChange, want.relativeChange, 'relative')
  assert.equal(c.changedValues, want.changedValues)
  await rm(pa)
  await rm(pb)
})

test('other dtypes: I64 differences taken exactly, C64 by modulus, F4 and F8 decoded, F6 by bytes alone', async () => {
  const big = 2n ** 53n + 1n
  const f4 = (/** @type {number[]} */ nibbles) => Uint8Array.from({ length: Math.ceil(nibbles.length / 2) }, (_, i) => (nibbles[2 * i] ?? 0) | ((nibbles[2 * i + 1] ?? 0) << 4))
  const A = {
    ids: { dtype: 'I64', shape: [3], data: new BigInt64Array([1n, 2n, big]) },
    complex: { dtype: 'C64', shape: [2], data: new Float32Array([1, 2, 3, 4]) },
    f4: { dtype: 'F4', shape: [6], data: f4([1, 2, 3, 4, 5, 6]) },
    f8: { dtype: 'F8_E4M3', shape: [4], data: new Uint8Array([0x38, 0x40, 0x7f, 0x00]) },
    f6: { dtype: 'F6_E2M3', shape: [4], data: new Uint8Array([1, 2, 3]) },
  }
  const B = {
    ids: { dtype: 'I64', shape: [3], data: new BigInt64Array([1n, 5n, big + 2n]) },
    complex: { dtype: 'C64', shape: [2], data: new Float32Array([1, 2, 0, 0]) },
    f4: { dtype: 'F4', shape: [6], data: f4([1, 2, 3, 4, 7, 6]) },
    f8: { dtype: 'F8_E4M3', shape: [4], data: new Uint8Array([0x38, 0x44, 0x7f, 0x38]) },
    f6: { dtype: 'F6_E2M3', shape: [4], data: new Uint8Array([1, 2, 4]) },
  }
  const pa = join(dir, 'dtypes-a.safetensors')
  const pb = join(dir, 'dtypes-b.safetensors')
  await writeFile(pa, A)
  await writeFile(pb, B)
  const r = await run('diff', pa, pb, '--json', '--chunk-bytes', '1')
  assert.equal(r.code, 1, r.stderr)
  const byName = Object.fromEntries(JSON.parse(r.stdout).changed.map((/** @type {any} */ c) => [c.name, c]))
  // I64: 3 and 2 exactly (as float64, 2^53 + 1 and 2^53 + 3 are one value).
  assert.deepEqual([byName.ids.maxAbsDiff, byName.ids.changedValues], [3, 2])
  near(byName.ids.meanAbsDiff, 5 / 3, 'I64 mean')
  near(byName.ids.relativeChange, Math.sqrt(13) / Math.sqrt(1 + 4 + Number(big) ** 2), 'I64 relative')
  // C64: (3, 4) -> (0, 0) is a change of modulus 5.
  assert.deepEqual([byName.complex.maxAbsDiff, byName.complex.meanAbsDiff, byName.complex.changedValues], [5, 2.5, 1])
  near(byName.complex.relativeChange, 5 / Math.sqrt(30), 'C64 relative')
  // F4 and F8 (E4M3 0x7F is NaN, in both): against the library's own decoding of each tensor.
  const [fa, fb] = [await open(pa), await open(pb)]
  for (const name of ['f4', 'f8']) {
    const [ta, tb] = [await fa.tensor(name), await fb.tensor(name)]
    const want = expectedChange(ta.toFloat32(), tb.toFloat32())
    ta.dispose()
    tb.dispose()
    const c = byName[name]
    assert.deepEqual([c.maxAbsDiff, c.changedValues, c.nonFiniteChanges], [want.maxAbsDiff, want.changedValues, want.nonFiniteChanges], name)
    near(c.meanAbsDiff, want.meanAbsDiff, `${name} mean`)
    near(c.relativeChange, want.relativeChange, `${name} relative`)
    assert.ok(want.changedValues > 0, name)
  }
  assert.equal(byName.f8.changedValues, 2)
  await fa.close()
  await fb.close()
  assert.deepEqual(byName.f6, { name: 'f6', kind: 'values', maxAbsDiff: null, meanAbsDiff: null, relativeChange: null,
    a: { dtype: 'F6_E2M3', shape: [4] }, b: { dtype: 'F6_E2M3', shape: [4] }, values: 4, changedValues: null, nonFiniteChanges: null })
  const text = await run('diff', pa, pb)
  assert.match(text.stdout, /^values +f6 +F6_E2M3 \[4\]: the bytes differ \(F6_E2M3 has no values to compare\)$/m)
})

/**
 * A ByteSource of a file with one BF16 tensor of `n` elements, made on read: every element 1.0
 * (0x3F80), except, when `every` is given, each element whose index is a multiple of it, 2.0.
 * @param {number} n @param {number} [every]
 */
function virtualBf16(n, every) {
  const pattern = new Uint8Array(1 << 16)
  for (let i = 0; i < pattern.length; i += 2) pattern.set([0x80, 0x3f], i)
  return virtualFile({ w: { dtype: 'BF16', shape: [n], data_offsets: [0, 2 * n] } }, 2 * n, (out, offset) => {
    for (let at = 0; at < out.length;) {
      const d = offset + at
      const n2 = Math.min(out.length - at, pattern.length - (d % 2))
      out.set(pattern.subarray(d % 2, d % 2 + n2), at)
      at += n2
    }
    if (!every) return
    const last = offset + out.length
    for (let e = Math.ceil(offset / 2 / every) * every; 2 * e < last; e += every) {
      const byte = 2 * e - offset
      if (byte >= 0 && byte < out.length) out[byte] = 0x00
      if (byte + 1 >= 0 && byte + 1 < out.length) out[byte + 1] = 0x40
    }
  })
}

test('diffFiles: two 96 MiB tensors compare through a heap of four pieces and the decoding scratch', { timeout: 300_000 }, async () => {
  const core = await loadCore()
  const n = 48 << 20
  const every = 1_000_003
  const a = await open(virtualBf16(n))
  const b = await open(virtualBf16(n, every))
  const chunkBytes = 1 << 20
  const before = heapInUse(core)
  let peak = 0
  let last = { loaded: 0, total: 0 }
  const result = await diffFiles(a, b, {
    chunkBytes,
    onProgress: (p) => {
      peak = Math.max(peak, heapInUse(core) - before)
      last = p
    },
  })
  assert.equal(heapInUse(core), before, 'every piece and the scratch freed')
  // Two pieces a side in the heap, and 256 KiB of float32 scratch a side for decoding BF16.
  const bound = 4 * chunkBytes + 2 * (256 << 10) + 64 * 1024
  assert.ok(peak <= bound, `heap above the files': ${peak} bytes, the bound ${bound}`)
  assert.deepEqual(last, { loaded: 4 * n, total: 4 * n }, 'both sides read once')
  const changed = Math.ceil(n / every)
  assert.equal(result.identical, 0)
  const [c] = result.changed
  assert.deepEqual([c.name, c.kind, c.values, c.changedValues, c.nonFiniteChanges, c.maxAbsDiff], ['w', 'values', n, changed, 0, 1])
  near(/** @type {number} */ (c.meanAbsDiff), changed / n, 'mean')
  near(/** @type {number} */ (c.relativeChange), Math.sqrt(changed / n), 'relative')
  // The same source on both sides: identical.
  const again = await diffFiles(a, await open(virtualBf16(n)), { chunkBytes })
  assert.deepEqual(again, { onlyInA: [], onlyInB: [], changed: [], identical: 1 })
  await a.close()
  await b.close()
})

test('over HTTP: identical files read each byte once; a changed dtype\'s bytes are not read', async () => {
  server.addFile('/a/base.safetensors', bytes.base)
  server.addFile('/b/base.safetensors', bytes.base)
  server.resetStats()
  const r = await run('diff', server.url('/a/base.safetensors'), server.url('/b/base.safetensors'), '--json')
  assert.equal(r.code, 0, r.stderr)
  assert.equal(JSON.parse(r.stdout).identical, Object.keys(BASE).length)
  for (const path of ['/a/base.safetensors', '/b/base.safetensors']) {
    const served = server.stats.log.filter((e) => e.path === path && e.method === 'GET')
    /** @type {[number, number][]} */
    const ranges = served.map((e) => {
      const m = /^bytes=(\d+)-(\d+)$/.exec(e.range ?? '')
      assert.ok(m, `a range request: ${e.range}`)
      return [Number(m[1]), Number(m[2]) + 1]
    }).sort((x, y) => x[0] - y[0])
    for (let i = 1; i < ranges.length; i++) assert.ok(ranges[i][0] >= ranges[i - 1][1], `${path}: no byte read twice`)
    assert.equal(served.reduce((k, e) => k + e.bytes, 0), bytes.base.length, `${path}: each byte once`)
  }
  // A 4 MB tensor whose dtype changed and a small one that did not.
  const big = new Float32Array(1 << 20).fill(0.5)
  server.addFile('/c/a.safetensors', await serialize({ small: { dtype: 'F32', shape: [4], data: new Float32Array([1, 2, 3, 4]) }, big: { dtype: 'F32', shape: [1 << 20], data: big } }))
  server.addFile('/c/b.safetensors', await serialize({ small: { dtype: 'F32', shape: [4], data: new Float32Array([1, 2, 3, 5]) }, big: { dtype: 'BF16', shape: [1 << 20], data: bf16(big) } }))
  server.resetStats()
  const d = await run('diff', server.url('/c/a.safetensors'), server.url('/c/b.safetensors'), '--json')
  assert.equal(d.code, 1, d.stderr)
  const doc = JSON.parse(d.stdout)
  assert.deepEqual(doc.changed.map((/** @type {any} */ c) => [c.name, c.kind, c.maxAbsDiff]).sort(), [['big', 'dtype', null], ['small', 'values', 1]])
  const served = server.stats.log.filter((e) => e.path === '/c/a.safetensors').reduce((k, e) => k + e.bytes, 0)
  assert.ok(served < 300_000, `${served} bytes of a 4 MB file: the header's first window, not the big tensor`)
})

test('hf:// against a local file: --token goes to the Hub source alone', async () => {
  const hub = await startHub()
  try {
    hub.addFile('org/base', 'model.safetensors', bytes.base)
    const r = await run('diff', 'hf://org/base', files.copy, '--endpoint', hub.base, '--token', HUB_TOKEN, '--json')
    assert.equal(r.code, 0, r.stderr)
    // The token is sent to the Hub: a wrong one is refused there.
    const wrong = await run('diff', 'hf://org/base', files.copy, '--endpoint', hub.base, '--token', 'hf_wrong')
    assert.equal(wrong.code, 2)
    assert.match(wrong.stderr, /^error: HttpError: .*401/)
    assert.equal(JSON.parse(r.stdout).identical, Object.keys(BASE).length)
    const tuned = await run('diff', files.tuned, 'hf://org/base', '--endpoint', hub.base, '--json')
    assert.equal(tuned.code, 1, tuned.stderr)
    assert.deepEqual(JSON.parse(tuned.stdout).onlyInA, ['lora.extra'])
  } finally {
    await hub.close()
  }
})

test('errors exit 2: a missing or corrupt source, usage mistakes', async () => {
  const missing = await run('diff', files.base, join(dir, 'nope.safetensors'))
  assert.equal(missing.code, 2)
  assert.equal(missing.stdout, '')
  assert.match(missing.stderr, /^error: NotFound: /)
  const corrupt = join(dir, 'corrupt.safetensors')
  await fsWriteFile(corrupt, bytes.base.subarray(0, bytes.base.length - 3))
  const bad = await run('diff', corrupt, files.base)
  assert.equal(bad.code, 2)
  assert.match(bad.stderr, /^error: MetadataIncompleteBuffer /)
  server.addFile('/gone/ok.safetensors', bytes.base)
  const http = await run('diff', server.url('/gone/ok.safetensors'), server.url('/gone/missing.safetensors'))
  assert.equal(http.code, 2)
  assert.match(http.stderr, /^error: NotFound: /)
  for (const args of [[files.base], [files.base, files.tuned, files.copy], [files.base, files.tuned, '--chunk-bytes', '0'],
    [files.base, files.tuned, '--chunk-bytes', 'lots'], [files.base, files.tuned, '--fast'], [files.base, files.tuned, '--token', 't'],
    [files.base, files.tuned, '--only', '/(/']]) {
    const r = await run('diff', ...args)
    assert.equal(r.code, 2, args.join(' '))
    assert.match(r.stderr, /^error: /, args.join(' '))
    assert.equal(r.stdout, '')
  }
  assert.deepEqual(new Uint8Array(await readFile(files.base)), bytes.base, 'the sources are only read')
})

// f.digest(): SHA-256 of a tensor's bytes or of a whole file, streamed through the core, equal to
// node:crypto's over the same bytes for every source (bytes, a Node path, a Blob, a URL, a sharded
// set) and at chunk sizes that split elements oddly; abort, progress and a bounded heap. And the
// CLI's `verify --sha256`.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { open, serialize } from '../../js/node.js'
import { heapInUse } from '../../js/core/index.js'
import { digest } from '../../js/stream/digest.js'
import { loadCore } from '../../js/wasm.js'
import { fails } from './fails.js'
import { startServer } from './http-server.js'

const CLI = fileURLToPath(new URL('../../js/cli/main.js', import.meta.url))

/** @param {ArrayBufferView} bytes */
const sha256 = (bytes) => createHash('sha256').update(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength)).digest('hex')

/** @param {number} n @param {number} seed */
const bytes = (n, seed) => Uint8Array.from({ length: n }, (_, i) => (i * 151 + seed * 13 + (i >> 7)) & 255)

const TENSORS = {
  f32: { dtype: 'F32', shape: [37, 29], data: bytes(37 * 29 * 4, 1) },
  c64: { dtype: 'C64', shape: [11, 3], data: bytes(11 * 3 * 8, 2) },
  f4: { dtype: 'F4', shape: [9, 10], data: bytes(45, 3) },
  f6: { dtype: 'F6_E2M3', shape: [12], data: bytes(9, 4) },
  bf16: { dtype: 'BF16', shape: [40, 25], data: bytes(2000, 6) },
  i64: { dtype: 'I64', shape: [33], data: bytes(33 * 8, 7) },
  empty: { dtype: 'F32', shape: [0, 3], data: new Uint8Array(0) },
}
const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'

/** @type {Uint8Array} */
let fileBytes
/** @type {string} */
let dir
/** @type {Awaited<ReturnType<typeof startServer>>} */
let server

before(async () => {
  fileBytes = await serialize(TENSORS, { metadata: { format: 'pt' } })
  dir = await mkdtemp(join(tmpdir(), 'st-digest-'))
  await writeFile(join(dir, 'model.safetensors'), fileBytes)
  server = await startServer()
  server.addFile('/model.safetensors', fileBytes)
})

after(async () => {
  await rm(dir, { recursive: true })
  await server.close()
})

/** Chunk sizes that split elements oddly (and the default); a read per piece, so fewer over HTTP. */
const ODD_CHUNKS = [undefined, 1, 7, 13, 100, 4099]
const FEWER_CHUNKS = [undefined, 7, 4099]

/**
 * The whole file's digest and every tensor's, at chunk sizes that split elements oddly.
 * @param {any} f @param {string} label @param {(number | undefined)[]} sizes
 */
async function checkAll(f, label, sizes = ODD_CHUNKS) {
  const whole = sha256(fileBytes)
  for (const chunkBytes of sizes) {
    assert.equal(await f.digest(undefined, { chunkBytes }), whole, `${label}: the whole file at chunkBytes ${chunkBytes}`)
    for (const [name, t] of Object.entries(TENSORS))
      assert.equal(await f.digest(name, { chunkBytes }), sha256(t.data), `${label}: ${name} at chunkBytes ${chunkBytes}`)
  }
  assert.equal(await f.digest('empty'), EMPTY_SHA256)
}

test('digest of a file opened from bytes: the whole file and each tensor, as node:crypto computes them', async () => {
  const f = await open(fileBytes)
  await checkAll(f, 'bytes')
  assert.equal(await f.digest(), sha256(fileBytes), 'no options')
})

test('digest of a Node path, a Blob and a URL', async () => {
  const byPath = await open(join(dir, 'model.safetensors'))
  try {
    await checkAll(byPath, 'path', FEWER_CHUNKS)
  } finally {
    await byPath.close()
  }
  await checkAll(await open(new Blob([fileBytes])), 'Blob')
  const byUrl = await open(server.url('/model.safetensors'))
  try {
    await checkAll(byUrl, 'URL', FEWER_CHUNKS)
  } finally {
    await byUrl.close()
  }
})

test('digest of a sharded set: a tensor from its shard; the whole set is refused, each shard has its own', async () => {
  const a = await serialize({ a: TENSORS.f32, c: TENSORS.c64 })
  const b = await serialize({ b: TENSORS.bf16 })
  const index = new TextEncoder().encode(JSON.stringify({ weight_map: { a: 'a.safetensors', c: 'a.safetensors', b: 'b.safetensors' } }))
  const g = await open(index, { shards: { 'a.safetensors': a, 'b.safetensors': b } })
  for (const chunkBytes of [undefined, 3, 1000]) {
    assert.equal(await g.digest('a', { chunkBytes }), sha256(TENSORS.f32.data))
    assert.equal(await g.digest('b', { chunkBytes }), sha256(TENSORS.bf16.data))
    assert.equal(await g.digest('c', { chunkBytes }), sha256(TENSORS.c64.data))
  }
  await fails(() => g.digest(), 'InvalidArgument', /\(await f\.shard\(path\)\)\.digest\(\)/)
  assert.equal(await (await g.shard('a.safetensors')).digest(), sha256(a))
  assert.equal(await (await g.shard('b.safetensors')).digest(), sha256(b))
  await fails(() => g.digest('nope'), 'TensorNotFound')
})

test('digest: progress ends at the total; a signal aborts; the heap holds two pieces at most and is freed', async () => {
  const core = await loadCore()
  const big = bytes(10 << 20, 9)
  const raw = await serialize({ big: { dtype: 'U8', shape: [big.length], data: big } })
  const f = await open(raw)
  const before = heapInUse(core)
  /** @type {{ loaded: number, total: number }[]} */
  let progress = []
  let peak = 0
  const onProgress = (/** @type {{ loaded: number, total: number }} */ p) => {
    progress.push(p)
    peak = Math.max(peak, heapInUse(core) - before)
  }
  assert.equal(await f.digest('big', { chunkBytes: 1 << 20, onProgress }), sha256(big))
  assert.deepEqual(progress.at(-1), { loaded: big.length, total: big.length })
  assert.equal(progress.length, 10)
  assert.ok(progress.every((p, i) => i === 0 || p.loaded > progress[i - 1].loaded), 'loaded grows')
  assert.ok(peak <= 2 * (1 << 20) + 4096, `heap above the file's: ${peak} bytes for 1 MiB pieces`)
  assert.equal(heapInUse(core), before, 'freed')

  progress = []
  assert.equal(await f.digest(undefined, { chunkBytes: 3 << 20, onProgress }), sha256(raw))
  assert.deepEqual(progress.at(-1), { loaded: raw.length, total: raw.length }, 'the whole file: its byte length')

  const controller = new AbortController()
  await fails(() => f.digest('big', { chunkBytes: 1 << 20, signal: controller.signal,
    onProgress: ({ loaded }) => { if (loaded >= 3 << 20) controller.abort() } }), 'Aborted')
  assert.equal(heapInUse(core), before, 'freed on abort')
  const aborted = new AbortController()
  aborted.abort()
  await fails(() => f.digest(undefined, { signal: aborted.signal }), 'Aborted')
  await fails(() => f.digest('big', { signal: aborted.signal }), 'Aborted')
  assert.equal(heapInUse(core), before, 'freed after refusing')
})

test('digest: bad arguments; pieces from outside the heap are hashed too', async () => {
  const f = await open(fileBytes)
  await fails(() => f.digest('nope'), 'TensorNotFound')
  await fails(() => f.digest(/** @type {any} */ (3)), 'InvalidArgument')
  await fails(() => f.digest('f32', { chunkBytes: 0 }), 'InvalidArgument')
  await f.close()
  await fails(() => f.digest(), 'Closed')
  // A file object whose pieces are plain arrays (not views of this core's heap): copied in.
  const data = bytes(100_003, 5)
  const fake = {
    async* chunks(/** @type {string} */ name, /** @type {{ chunkBytes?: number }} */ options) {
      assert.equal(name, 'x')
      const step = options.chunkBytes ?? 4096
      for (let at = 0; at < data.length; at += step) yield { offset: at, data: data.slice(at, at + step) }
    },
  }
  const core = await loadCore()
  const before = heapInUse(core)
  assert.equal(await digest(fake, 'x', { chunkBytes: 4097 }), sha256(data))
  assert.equal(heapInUse(core), before)
})

// ---- verify --sha256 ----

/** @param {string[]} args @returns {Promise<{ code: number | null, stdout: string, stderr: string }>} */
function run(...args) {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? /** @type {any} */ (error).code ?? 1 : 0, stdout, stderr })
    })
  })
}

test('verify --sha256: the right hash passes, shown in --json; a wrong one fails naming both', async () => {
  const path = join(dir, 'model.safetensors')
  const hash = sha256(fileBytes)
  const ok = await run('verify', path, '--sha256', hash)
  assert.equal(ok.code, 0, ok.stderr)
  assert.match(ok.stdout, new RegExp(`^ok\\s+sha256\\s+the file's SHA-256 is ${hash}, as expected$`, 'm'))
  assert.equal(ok.stderr, '')
  // Upper case and an LFS pointer's `sha256:` prefix are taken.
  const json = await run('verify', path, '--sha256', `sha256:${hash.toUpperCase()}`, '--json', '--full')
  assert.equal(json.code, 0, json.stderr)
  const report = JSON.parse(json.stdout)
  assert.equal(report.ok, true)
  assert.deepEqual(report.checks.find((/** @type {any} */ c) => c.name === 'sha256'),
    { name: 'sha256', status: 'ok', detail: `the file's SHA-256 is ${hash}, as expected`, expected: hash, actual: hash })
  assert.ok(report.checks.some((/** @type {any} */ c) => c.name === 'data'), '--full still reads the tensors')

  const wrong = EMPTY_SHA256
  const bad = await run('verify', path, '--sha256', wrong)
  assert.equal(bad.code, 1)
  assert.match(bad.stdout, /^FAIL\s+sha256\s/m)
  assert.match(bad.stdout, /^verify failed:/m)
  assert.ok(bad.stdout.includes(`SHA-256 is ${hash}, not the expected ${wrong}`), bad.stdout)
  assert.equal(bad.stderr, '', 'the problem is reported once, on stdout')
  const badJson = JSON.parse((await run('verify', path, '--sha256', wrong, '--json')).stdout)
  assert.equal(badJson.ok, false)
  const check = badJson.checks.find((/** @type {any} */ c) => c.name === 'sha256')
  assert.deepEqual([check.status, check.expected, check.actual, check.error.code], ['fail', wrong, hash, 'DigestMismatch'])

  // Over HTTP too.
  const remote = await run('verify', server.url('/model.safetensors'), '--sha256', hash)
  assert.equal(remote.code, 0, remote.stderr)
})

test('verify --sha256: a malformed hash, or a sharded set, is a usage error (exit 2)', async () => {
  const path = join(dir, 'model.safetensors')
  for (const hex of ['abc', sha256(fileBytes).slice(1), `${sha256(fileBytes)}0`, 'g'.repeat(64), '']) {
    const r = await run('verify', path, '--sha256', hex)
    assert.equal(r.code, 2, `--sha256 ${JSON.stringify(hex)}: ${r.stderr}`)
    assert.match(r.stderr, /--sha256 takes the file's SHA-256 as 64 hex digits/)
    assert.equal(r.stdout, '')
  }
  const missing = await run('verify', path, '--sha256')
  assert.equal(missing.code, 2)
  await writeFile(join(dir, 'a.safetensors'), await serialize({ a: TENSORS.f32 }))
  await writeFile(join(dir, 'model.safetensors.index.json'), JSON.stringify({ weight_map: { a: 'a.safetensors' } }))
  const sharded = await run('verify', join(dir, 'model.safetensors.index.json'), '--sha256', sha256(fileBytes))
  assert.equal(sharded.code, 2, sharded.stderr)
  assert.match(sharded.stderr, /the hash is per file/)
})

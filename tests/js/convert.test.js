// `safetensors-wasm convert`: every value of every float tensor is castTensor's, the other
// tensors are byte for byte the input's, the file is what serialize makes of that, --only keeps
// what it matches, failures exit 1 or 2 leaving nothing behind, a URL converts, an interrupt
// cleans up, and a ~200 MB file converts with the wasm heap bounded by its largest tensor.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile, spawn, spawnSync } from 'node:child_process'
import { truncateSync } from 'node:fs'
import { chmod, lstat, mkdtemp, readdir, readFile, rm, symlink, writeFile as fsWriteFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import { castTensor, open, serialize } from '../../js/node.js'
import { convertFile, namePattern } from '../../js/cli/convert.js'
import { writePlanned } from '../../js/io/node-write.js'
import { planFile } from '../../js/writer.js'
import { prng } from '../fixtures/make-sample.js'
import { startServer } from './http-server.js'

const CLI = fileURLToPath(new URL('../../js/cli/main.js', import.meta.url))
const FLOATS = new Set(['F64', 'F32', 'F16', 'BF16'])

/** @param {string[]} args */
function run(...args) {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 60_000 })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

/** A CLI run that leaves this process's event loop free (for the in-process HTTP server). */
const runAsync = async (/** @type {string[]} */ ...args) => {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 60_000 })
    return { code: 0, stdout, stderr }
  } catch (error) {
    const e = /** @type {any} */ (error)
    return { code: e.code, stdout: e.stdout, stderr: e.stderr }
  }
}

/**
 * Every dtype, float tensors full of awkward values: all 2^16 F16 patterns, BF16 patterns with
 * NaNs, F32 ties and overflows, F64 values that double rounding gets wrong; a scalar, a
 * zero-size tensor, a name with glob and regex characters.
 */
function fixture() {
  const random = prng(4)
  const f32 = [0, -0, 1, -1, 65504, 65519.99, 65520, 1e-8, 2 ** -24, 2 ** -25, 3.4e38, Infinity, -Infinity, NaN,
    1 + 2 ** -8, 1 + 3 * 2 ** -8, 1 + 2 ** -11, 1 + 3 * 2 ** -11, 2 ** -133, 2 ** -149]
  for (let i = 0; i < 4000; i++) f32.push((random() - 0.5) * 2 ** Math.floor(random() * 60 - 30))
  const f64 = [1 + 2 ** -11 + 2 ** -40, 1 + 2 ** -8 + 2 ** -40, -(1 + 2 ** -11 + 2 ** -40), 1e300, 5e-324, NaN, 0.1]
  for (let i = 0; i < 1000; i++) f64.push((random() - 0.5) * 2 ** Math.floor(random() * 80 - 40))
  const bytes = (/** @type {number} */ n) => Uint8Array.from({ length: n }, () => Math.floor(random() * 256))
  /** @type {Record<string, { dtype: any, shape: number[], data: ArrayBufferView }>} */
  const tensors = {
    'model.embed.weight': { dtype: 'F32', shape: [f32.length / 4, 4], data: new Float32Array(f32) },
    'model.layers.0.mlp.up.weight': { dtype: 'BF16', shape: [64, 64], data: new Uint16Array(bytes(8192).buffer) },
    'model.layers.0.mlp.down.weight': { dtype: 'F16', shape: [256, 256], data: Uint16Array.from({ length: 65536 }, (_, i) => i) },
    'model.layers.1.attn.q.weight': { dtype: 'F64', shape: [f64.length], data: new Float64Array(f64) },
    'model.layers.1.attn.q.scale': { dtype: 'F32', shape: [], data: new Float32Array([0.125]) },
    'model.norm.weight': { dtype: 'BF16', shape: [0, 8], data: new Uint16Array(0) },
    'weird[0]+(x)': { dtype: 'F16', shape: [2], data: new Uint16Array([0x3c00, 0x7e01]) },
    ids: { dtype: 'I64', shape: [5], data: new BigInt64Array([0n, -1n, 2n ** 62n, 3n, 4n]) },
    i32: { dtype: 'I32', shape: [3], data: new Int32Array([-7, 2 ** 30, 5]) },
    u16: { dtype: 'U16', shape: [2], data: new Uint16Array([65535, 1]) },
    i8: { dtype: 'I8', shape: [2], data: new Int8Array([-128, 127]) },
    u8: { dtype: 'U8', shape: [16], data: bytes(16) },
    mask: { dtype: 'BOOL', shape: [4], data: new Uint8Array([0, 1, 1, 0]) },
    q8: { dtype: 'F8_E4M3', shape: [32], data: bytes(32) },
    q5: { dtype: 'F8_E5M2', shape: [32], data: bytes(32) },
    q4: { dtype: 'F4', shape: [4, 8], data: bytes(16) },
    q6: { dtype: 'F6_E2M3', shape: [8], data: bytes(6) },
    c: { dtype: 'C64', shape: [3], data: new Float32Array([1, 2, 3, 4, 5, 6]) },
    u64: { dtype: 'U64', shape: [1], data: new BigUint64Array([2n ** 64n - 1n]) },
  }
  return { tensors, metadata: { format: 'pt', note: 'convert "test" ✓' } }
}

/**
 * What convert should write: float tensors cast with castTensor, the others as they are.
 * @param {string} dtype
 * @param {(name: string) => boolean} [keep]
 */
async function expected(dtype, keep = () => true) {
  const { tensors, metadata } = fixture()
  /** @type {Map<string, any>} */
  const out = new Map()
  for (const [name, t] of Object.entries(tensors)) {
    if (!keep(name)) continue
    out.set(name, FLOATS.has(t.dtype) ? await castTensor(t, /** @type {any} */ (dtype)) : t)
  }
  return serialize(out, { metadata })
}

/** @type {string} */
let dir
/** @type {string} */
let input
/** @type {Uint8Array} */
let inputBytes

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'st-convert-'))
  input = join(dir, 'in.safetensors')
  const { tensors, metadata } = fixture()
  inputBytes = await serialize(tensors, { metadata })
  await fsWriteFile(input, inputBytes)
})

after(async () => {
  await rm(dir, { recursive: true })
})

/** Files in the test folder besides the input (a temp file left behind would show here). */
async function leftovers() {
  return (await readdir(dir)).filter((n) => n !== 'in.safetensors').sort()
}

describe('converting', () => {
  for (const dtype of ['bf16', 'f16', 'f32']) {
    test(`--dtype ${dtype}: cast floats, copied others, the file serialize would make`, async () => {
      const DTYPE = dtype.toUpperCase()
      const out = join(dir, `out-${dtype}.safetensors`)
      const r = run('convert', input, out, '--dtype', dtype)
      assert.equal(r.stderr, '')
      assert.equal(r.code, 0)
      const fx = fixture().tensors
      const floatCount = Object.values(fx).filter((t) => FLOATS.has(t.dtype)).length
      const cast = Object.values(fx).filter((t) => FLOATS.has(t.dtype) && t.dtype !== DTYPE).length
      const total = Object.keys(fx).length
      const bytes = new Uint8Array(await readFile(out))
      assert.equal(r.stdout, `${out}: ${total} tensors (${cast} cast to ${DTYPE}, ${total - cast} copied), ${bytes.length} bytes\n`)
      assert.ok(floatCount > cast && cast > 0)

      const [src, dst] = [await open(input), await open(out)]
      assert.deepEqual(dst.metadata, src.metadata)
      assert.deepEqual(new Set(dst.names), new Set(src.names))
      for (const name of src.names) {
        const [a, b] = [await src.tensor(name), await dst.tensor(name)]
        assert.deepEqual(b.shape, a.shape, name)
        if (FLOATS.has(a.dtype)) {
          assert.equal(b.dtype, DTYPE, name)
          const want = await castTensor(a, /** @type {any} */ (DTYPE))
          assert.deepEqual(b.bytes, new Uint8Array(want.data.buffer), `${name}: every value is the cast's`)
        } else {
          assert.equal(b.dtype, a.dtype, name)
          assert.deepEqual(b.bytes, a.bytes, `${name}: byte for byte`)
        }
        a.dispose()
        b.dispose()
      }
      await src.close()
      await dst.close()
      assert.deepEqual(bytes, await expected(DTYPE), 'the whole file, header included')
      await rm(out)
      assert.deepEqual(await leftovers(), [])
    })
  }

  test('--only: globs and /regexes/, repeated, = forms; the rest is left out', async () => {
    const out = join(dir, 'only.safetensors')
    /** @type {[string[], string[]][]} */
    const cases = [
      [['--only', 'model.layers.*.mlp.*'], ['model.layers.0.mlp.down.weight', 'model.layers.0.mlp.up.weight']],
      [['--only', '/^q\\d$/'], ['q4', 'q5', 'q6', 'q8']],
      [['--only=/WEIGHT$/i', '--only', 'i??'], ['i32', 'ids', 'model.embed.weight', 'model.layers.0.mlp.down.weight',
        'model.layers.0.mlp.up.weight', 'model.layers.1.attn.q.weight', 'model.norm.weight']],
      [['--only', 'weird[0]+(x)'], ['weird[0]+(x)']],
      [['--only', 'model.*.scale', '--only', 'mask'], ['mask', 'model.layers.1.attn.q.scale']],
      [['--only', '/layers\\.1/'], ['model.layers.1.attn.q.scale', 'model.layers.1.attn.q.weight']],
    ]
    for (const [flags, names] of cases) {
      // Each case replaces the last one's output: --force.
      const r = run('convert', input, out, '--dtype=bf16', '--force', ...flags)
      assert.equal(r.code, 0, r.stderr)
      const total = Object.keys(fixture().tensors).length
      assert.match(r.stdout, new RegExp(`: ${names.length} tensors \\(.*, ${total - names.length} left out\\)`))
      const f = await open(out)
      assert.deepEqual([...f.names].sort(), names, flags.join(' '))
      await f.close()
      const keep = new Set(names)
      assert.deepEqual(new Uint8Array(await readFile(out)), await expected('BF16', (n) => keep.has(n)), flags.join(' '))
    }
    await rm(out)
  })

  test('namePattern: a glob matches whole names, * crosses dots, a /regex/ searches', () => {
    const glob = namePattern('a.*.b?')
    assert.deepEqual(['a.x.bc', 'a.x.y.bz', 'a..bc', 'xa.x.bc', 'a.x.bcd', 'a.x.b'].map(glob), [true, true, true, false, false, false])
    assert.equal(namePattern('a+b')('aab'), false)
    assert.equal(namePattern('a+b')('a+b'), true)
    assert.equal(namePattern('/a+b/')('xaab'), true)
    assert.equal(namePattern('/^A$/i')('a'), true)
    assert.equal(namePattern('/a/g')('a') && namePattern('/a/g')('a'), true, 'no lastIndex state')
    assert.equal(namePattern('日本*')('日本語'), true)
  })

  test('in place is refused: the input is never overwritten', async () => {
    const path = join(dir, 'inplace.safetensors')
    await fsWriteFile(path, inputBytes)
    const r = run('convert', path, path, '--dtype', 'f16')
    assert.equal(r.code, 1)
    assert.match(r.stderr, /^error: InvalidArgument: .*inplace\.safetensors is the input file/)
    assert.deepEqual(new Uint8Array(await readFile(path)), inputBytes)
    await rm(path)
    assert.deepEqual(await leftovers(), [])
  })
})

describe('failures', () => {
  test('usage errors exit 2 and name the problem', () => {
    const out = join(dir, 'x.safetensors')
    /** @type {[string[], RegExp][]} */
    const cases = [
      [[], /^error: convert takes an input and an output/],
      [[input], /^error: convert takes an input and an output/],
      [[input, out, 'extra', '--dtype', 'f16'], /^error: convert takes an input and an output/],
      [[input, out], /^error: convert needs --dtype bf16, f16 or f32/],
      [[input, out, '--dtype', 'f8'], /^error: --dtype f8: use bf16, f16 or f32/],
      [[input, out, '--dtype'], /^error: Option '--dtype <value>' argument missing/],
      [[input, out, '--dtype', 'f16', '--fast'], /^error: Unknown option '--fast'/],
      [[input, out, '--dtype', 'f16', '--only', '/(/'], /^error: --only \/\(\/: Invalid regular expression/],
    ]
    for (const [args, message] of cases) {
      const r = run('convert', ...args)
      assert.equal(r.code, 2, args.join(' '))
      assert.match(r.stderr, message)
      assert.match(r.stderr, /usage: safetensors-wasm/)
      assert.equal(r.stdout, '')
    }
    const help = run('--help')
    assert.match(help.stdout, /^ {2}convert <in> <out> --dtype bf16\|f16\|f32 \[--only PATTERN\]\.\.\. \[--dequantize \[--config FILE\]\] \[--force\] {3}/m)
  })

  test('failures exit 1, write nothing, leave an existing output untouched', async () => {
    const out = join(dir, 'out.safetensors')
    const missing = run('convert', join(dir, 'nope.safetensors'), out, '--dtype', 'bf16')
    assert.equal(missing.code, 1)
    assert.match(missing.stderr, /^error: NotFound: /)

    const corrupt = join(dir, 'corrupt.safetensors')
    await fsWriteFile(corrupt, inputBytes.subarray(0, inputBytes.length - 1))
    const bad = run('convert', corrupt, out, '--dtype', 'bf16')
    assert.equal(bad.code, 1)
    assert.match(bad.stderr, /^error: MetadataIncompleteBuffer /)
    await rm(corrupt)

    const none = run('convert', input, out, '--dtype', 'bf16', '--only', 'nothing.*')
    assert.equal(none.code, 1)
    assert.equal(none.stderr, `error: InvalidArgument: --only keeps none of the 19 tensors of ${input}\n`)

    const noDir = run('convert', input, join(dir, 'no', 'such', 'dir.safetensors'), '--dtype', 'bf16')
    assert.equal(noDir.code, 1)
    assert.match(noDir.stderr, /^error: IoError: cannot write .*dir\.safetensors: ENOENT/)
    assert.deepEqual(await leftovers(), [])

    // A tensor that fails to read midway (the file shrinks under it): the old output stays.
    await fsWriteFile(out, 'the old file')
    const shrinking = join(dir, 'shrinking.safetensors')
    await fsWriteFile(shrinking, inputBytes)
    let first = true
    await assert.rejects(convertFile(shrinking, out, {
      dtype: 'F16',
      onProgress: () => { if (first) truncateSync(shrinking, 2000); first = false },
    }), { name: 'SafetensorsError' })
    assert.equal(await readFile(out, 'utf8'), 'the old file')
    await rm(shrinking)
    await rm(out)
    assert.deepEqual(await leftovers(), [])
  })
})

describe('sources', () => {
  /** @type {Awaited<ReturnType<typeof startServer>>} */
  let server
  before(async () => { server = await startServer() })
  after(async () => { await server.close() })

  test('a URL converts, with the CLI and with convertFile', async () => {
    server.addFile('/m.safetensors', inputBytes)
    const out = join(dir, 'url.safetensors')
    const r = await runAsync('convert', server.url('/m.safetensors'), out, '--dtype', 'f16')
    assert.equal(r.code, 0, r.stderr)
    assert.deepEqual(new Uint8Array(await readFile(out)), await expected('F16'))
    const summary = await convertFile(server.url('/m.safetensors'), out, { dtype: 'BF16', only: (n) => n.startsWith('q') })
    assert.deepEqual(summary, { tensors: 4, cast: 0, copied: 4, dropped: 15, byteLength: (await readFile(out)).length })
    await rm(out)
  })

  test('an interrupt (SIGINT) stops a slow conversion: exit 130, no output, no temp file', async () => {
    // 32 tensors of 128 KiB past the first request's 512 KiB: one slow request per tensor.
    /** @type {Record<string, any>} */
    const tensors = {}
    for (let i = 0; i < 32; i++) tensors[`t${String(i).padStart(2, '0')}`] = { dtype: 'F32', shape: [32768], data: new Float32Array(32768).fill(i) }
    server.addFile('/slow.safetensors', await serialize(tensors))
    server.setLatency(300)
    const out = join(dir, 'slow.safetensors')
    const child = spawn(process.execPath, [CLI, 'convert', server.url('/slow.safetensors'), out, '--dtype', 'bf16'], { stdio: ['ignore', 'pipe', 'pipe'] })
    let stderr = ''
    child.stderr.on('data', (d) => { stderr += d })
    const exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)))
    const deadline = Date.now() + 20_000
    while ((await leftovers()).length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
    assert.match((await leftovers())[0] ?? '', /^\.slow\.safetensors\.\d+\..*\.tmp$/, 'the temp file exists while writing')
    child.kill('SIGINT')
    assert.equal(await exited, 130)
    assert.equal(stderr, `interrupted: ${out} was not written\n`)
    assert.deepEqual(await leftovers(), [])
    server.setLatency(0)
  })

  test('a second interrupt right after the first: exit 130 with the message, no temp file', async () => {
    server.setLatency(300)
    const out = join(dir, 'slow2.safetensors')
    const child = spawn(process.execPath, [CLI, 'convert', server.url('/slow.safetensors'), out, '--dtype', 'bf16'], { stdio: ['ignore', 'pipe', 'pipe'] })
    let stderr = ''
    child.stderr.on('data', (d) => { stderr += d })
    const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal)))
    const deadline = Date.now() + 20_000
    while ((await leftovers()).length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
    assert.equal((await leftovers()).length, 1, 'the temp file exists while writing')
    child.kill('SIGINT')
    child.kill('SIGINT')
    assert.equal(await exited, 130)
    assert.equal(stderr, `interrupted: ${out} was not written\n`)
    assert.deepEqual(await leftovers(), [])
    server.setLatency(0)
  })
})

describe('where the output goes', () => {
  test('through a symbolic link: the link stays, its target gets the file and keeps its mode', async () => {
    const target = join(dir, 'real-target.safetensors')
    const link = join(dir, 'link.safetensors')
    await fsWriteFile(target, 'old contents')
    await chmod(target, 0o640)
    await symlink('real-target.safetensors', link)
    // The target exists: replaced only with --force.
    const r = await runAsync('convert', input, link, '--dtype', 'f16', '--force')
    assert.equal(r.code, 0, r.stderr)
    assert.ok((await lstat(link)).isSymbolicLink(), 'the link is still a link')
    assert.deepEqual(new Uint8Array(await readFile(target)), await expected('F16'))
    assert.equal((await lstat(target)).mode & 0o777, 0o640)
    // A link whose target does not exist yet: the file is made there.
    await rm(target)
    assert.equal((await runAsync('convert', input, link, '--dtype', 'bf16')).code, 0)
    assert.ok((await lstat(link)).isSymbolicLink())
    assert.deepEqual(new Uint8Array(await readFile(target)), await expected('BF16'))
    await rm(link)
    await rm(target)
    assert.deepEqual(await leftovers(), [])
  })

  test('never over its own input, by the same path or through a link', async () => {
    const link = join(dir, 'input-link.safetensors')
    await symlink(input, link)
    for (const out of [input, link]) {
      const r = await runAsync('convert', input, out, '--dtype', 'f16')
      assert.equal(r.code, 1)
      assert.match(r.stderr, /InvalidArgument: .* is the input file/)
    }
    assert.deepEqual(new Uint8Array(await readFile(input)), inputBytes)
    await rm(link)
  })
})

describe('memory', () => {
  const MIB = 1024 * 1024
  const LARGEST = 32 * MIB

  test("a ~200 MB file converts with the wasm heap under its largest tensor plus scratch", async (t) => {
    const big = join(dir, 'big.safetensors')
    const out = join(dir, 'big-bf16.safetensors')
    // Written lazily, 4 MiB at a time, so making it costs no memory either.
    const specs = [
      ...Array.from({ length: 6 }, (_, i) => ({ name: `w${i}`, dtype: 'F32', shape: [2048, 4096], byteLength: LARGEST })),
      { name: 'half', dtype: 'F16', shape: [1024, 4096], byteLength: 8 * MIB },
      { name: 'ids', dtype: 'I64', shape: [1 << 20], byteLength: 8 * MIB },
    ]
    const scales = Float32Array.from({ length: 32 }, (_, i) => 2 ** (i - 16))
    const entries = specs.map((s, k) => ({
      ...s,
      *chunks() {
        let x = 0x9e3779b9 ^ k  // xorshift32: cheap enough for 50M values
        for (let at = 0; at < s.byteLength; at += 4 * MIB) {
          const words = new Uint32Array(MIB)
          const floats = new Float32Array(words.buffer)
          for (let i = 0; i < words.length; i++) {
            x ^= x << 13
            x ^= x >>> 17
            x ^= x << 5
            if (s.dtype === 'F32') floats[i] = ((x >>> 0) / 2 ** 32 - 0.5) * scales[i & 31]
            else words[i] = s.dtype === 'F16' ? x & 0x7bff7bff : x  // F16: finite values
          }
          yield new Uint8Array(words.buffer)
        }
      },
    }))
    const plan = await planFile(entries, { note: 'big' })
    await writePlanned(big, plan)
    assert.ok(plan.fileLength > 200e6, `${plan.fileLength} bytes`)

    // The conversion runs in a fresh process, so its heap and RSS are its own.
    const script = join(dir, 'measure.mjs')
    await fsWriteFile(script, `
      import { convertFile } from ${JSON.stringify(pathToFileURL(fileURLToPath(new URL('../../js/cli/convert.js', import.meta.url))).href)}
      import { loadCore } from ${JSON.stringify(pathToFileURL(fileURLToPath(new URL('../../js/wasm.js', import.meta.url))).href)}
      const core = await loadCore()
      const start = { heapSize: core.HEAPU8.length, inUse: core.heapInUse(), rss: process.memoryUsage().rss }
      let peakInUse = 0, peakRss = 0, reports = 0
      const summary = await convertFile(process.argv[2], process.argv[3], { dtype: 'BF16', onProgress: () => {
        reports++
        peakInUse = Math.max(peakInUse, core.heapInUse())
        peakRss = Math.max(peakRss, process.memoryUsage().rss)
      } })
      process.stdout.write(JSON.stringify({ start, peakInUse, peakRss, reports, heapSize: core.HEAPU8.length, summary }))
    `)
    const child = spawnSync(process.execPath, [script, big, out], { encoding: 'utf8', timeout: 120_000 })
    assert.equal(child.status, 0, child.stderr)
    const m = JSON.parse(child.stdout)
    const extra = (/** @type {number} */ n) => `${(n / MIB).toFixed(1)} MiB`
    const context = `heap in use +${extra(m.peakInUse - m.start.inUse)}, heap size +${extra(m.heapSize - m.start.heapSize)}, RSS +${extra(m.peakRss - m.start.rss)}`
    t.diagnostic(context)
    assert.ok(m.reports > 50, 'progress after every chunk')
    // The largest tensor in the heap, plus one chunk of scratch (4 MiB of floats, 2 MiB out).
    assert.ok(m.peakInUse - m.start.inUse <= LARGEST + 8 * MIB, context)
    assert.ok(m.heapSize - m.start.heapSize <= LARGEST + 16 * MIB, context)
    assert.ok(m.peakRss - m.start.rss <= 3 * LARGEST, context)
    assert.deepEqual(m.summary, { tensors: 8, cast: 7, copied: 1, dropped: 0, byteLength: m.summary.byteLength })

    const [src, dst] = [await open(big), await open(out)]
    assert.equal(dst.byteLength, m.summary.byteLength)
    assert.deepEqual(dst.metadata, { note: 'big' })
    for (const name of src.names) {
      const [a, b] = [await src.tensor(name), await dst.tensor(name)]
      const want = a.dtype === 'I64' ? a.bytes.slice() : new Uint8Array((await castTensor(a, 'BF16')).data.buffer)
      assert.equal(b.dtype, a.dtype === 'I64' ? 'I64' : 'BF16')
      assert.ok(Buffer.from(b.bytes).equals(want), name)
      a.dispose()
      b.dispose()
    }
    await src.close()
    await dst.close()
    await rm(big)
    await rm(out)
    await rm(script)
  })
})

// The CLI's commands (stats, verify, inspect --tree/--json/--quiet) as a user runs them: `node
// js/cli/main.js ...` in a child process, on files written with the project's writeFile, on sharded
// sets (paths and URLs), and on ../shared/corpus. Exit codes: 0 done, 1 failure, 2 usage.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { copyFile, mkdir, mkdtemp, readFile, readdir, rm, writeFile as fsWriteFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { open, serialize, writeFile } from '../../js/node.js'
import { renderProgress } from '../../js/cli/common.js'
import { pieceSpecs } from '../../js/cli/verify.js'
import { startServer } from '../servers/static-server.js'

const CLI = fileURLToPath(new URL('../../js/cli/main.js', import.meta.url))
const CORPUS = fileURLToPath(new URL('../../../shared/corpus/', import.meta.url))

/**
 * Runs the CLI (asynchronously: the test's own HTTP server must keep answering).
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

/** @type {string} */
let dir
/** Paths of the generated files. */
const files = /** @type {Record<string, string>} */ ({})
/** @type {Awaited<ReturnType<typeof startServer>>} */
let server

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'st-cli-commands-'))
  files.small = join(dir, 'small.safetensors')
  await writeFile(files.small, {
    'w': { dtype: 'F32', shape: [2, 3], data: new Float32Array([1, 2, 3, 4, 5, 6]) },
    'odd': { dtype: 'F32', shape: [4], data: new Float32Array([NaN, Infinity, 0, -1]) },
    'ids': { dtype: 'I64', shape: [3], data: new BigInt64Array([7n, 8n, 9n]) },
    'model.layers.0.mlp.weight': { dtype: 'BF16', shape: [2, 2], data: new Uint16Array([0x3f80, 0x4000, 0x4040, 0x4080]) },
    'model.layers.1.mlp.weight': { dtype: 'BF16', shape: [2, 2], data: new Uint16Array(4) },
    'model.layers.10.mlp.weight': { dtype: 'BF16', shape: [2, 2], data: new Uint16Array(4) },
    'model.norm.weight': { dtype: 'F16', shape: [4], data: new Uint16Array(4).fill(0x3c00) },
  }, { metadata: { format: 'pt', config: '{"hidden": 4}' } })
  files.clean = join(dir, 'clean.safetensors')
  await writeFile(files.clean, { a: { dtype: 'F32', shape: [8], data: new Float32Array(8).fill(0.25) } })

  const bytes = await readFile(files.small)
  files.trailing = join(dir, 'trailing.safetensors')
  await fsWriteFile(files.trailing, Buffer.concat([bytes, Buffer.from([0])]))
  files.truncated = join(dir, 'truncated.safetensors')
  await fsWriteFile(files.truncated, bytes.subarray(0, 30))

  // A sharded set: two shards and its index, as Hugging Face writes them.
  const shards = join(dir, 'sharded')
  await mkdir(shards)
  await writeFile(join(shards, 'model-00001-of-00002.safetensors'), {
    'embed.weight': { dtype: 'F32', shape: [4, 2], data: new Float32Array([1, 2, 3, 4, 5, 6, 7, 8]) },
  }, { metadata: { format: 'pt' } })
  await writeFile(join(shards, 'model-00002-of-00002.safetensors'), {
    'head.weight': { dtype: 'F32', shape: [2, 2], data: new Float32Array([-1, -2, -3, -4]) },
    'head.bias': { dtype: 'F32', shape: [2], data: new Float32Array([0, 1]) },
  }, { metadata: { format: 'pt' } })
  const index = { metadata: { total_size: 56 }, weight_map: {
    'embed.weight': 'model-00001-of-00002.safetensors',
    'head.weight': 'model-00002-of-00002.safetensors',
    'head.bias': 'model-00002-of-00002.safetensors',
  } }
  files.index = join(shards, 'model.safetensors.index.json')
  await fsWriteFile(files.index, JSON.stringify(index))
  // The same shards with an index that names a tensor no shard holds and forgets one that is there.
  files.badIndex = join(shards, 'bad.safetensors.index.json')
  await fsWriteFile(files.badIndex, JSON.stringify({ weight_map: { 'embed.weight': 'model-00001-of-00002.safetensors', 'ghost.weight': 'model-00002-of-00002.safetensors', 'head.bias': 'model-00002-of-00002.safetensors' } }))

  server = await startServer()
  server.addFile('/m/small.safetensors', new Uint8Array(bytes))
  for (const name of await readdir(shards)) server.addFile(`/m/sharded/${name}`, new Uint8Array(await readFile(join(shards, name))))
  server.addFile('/private/small.safetensors', new Uint8Array(bytes))
  server.addQuirks('/private/', { auth: 'Bearer t0ken' })
  server.addFile('/slow/small.safetensors', await serialize({ big: { dtype: 'F32', shape: [512, 1024], data: new Float32Array(512 * 1024) } }))
})

after(async () => {
  await server?.close()
  if (dir) await rm(dir, { recursive: true })
})

test('stats --json: exact statistics and histogram of each tensor', async () => {
  const r = await run('stats', files.small, 'w', 'odd', '--bins', '3', '--json')
  assert.equal(r.stderr, '')
  assert.equal(r.code, 0)
  const { tensors } = JSON.parse(r.stdout)
  assert.deepEqual(tensors.map((/** @type {any} */ t) => t.name), ['w', 'odd'])
  const [w, odd] = tensors
  assert.deepEqual({ ...w, std: undefined }, {
    name: 'w', dtype: 'F32', shape: [2, 3], byteLength: 24, count: 6, finiteCount: 6, nanCount: 0, infCount: 0,
    zeroCount: 0, min: 1, max: 6, mean: 3.5, std: undefined, histogram: { min: 1, max: 6, counts: [2, 2, 2] },
  })
  assert.ok(Math.abs(w.std - Math.sqrt(17.5 / 6)) < 1e-12)
  assert.deepEqual([odd.count, odd.finiteCount, odd.nanCount, odd.infCount, odd.zeroCount, odd.min, odd.max], [4, 2, 1, 1, 1, -1, 0])
})

test('stats prints a text histogram; patterns and --slice pick what is read', async () => {
  const r = await run('stats', files.small, 'w', '--bins', '2')
  assert.equal(r.code, 0)
  assert.equal(r.stderr, '', 'no progress bar when stderr is not a terminal')
  assert.equal(r.stdout, [
    'w  F32 [2, 3]  6 values, 24 B',
    '  min 1   max 6   mean 3.5   std 1.708',
    '  NaN 0   Inf 0   zeros 0',
    '  histogram: 2 bins of 2.5',
    `  [1, 3.5)  ${'█'.repeat(40)}  3`,
    `  [3.5, 6]  ${'█'.repeat(40)}  3`,
    '',
  ].join('\n'))
  const glob = await run('stats', files.small, 'model.layers.*.weight', '--json')
  assert.equal(glob.code, 0, glob.stderr)
  assert.deepEqual(JSON.parse(glob.stdout).tensors.map((/** @type {any} */ t) => t.name),
    ['model.layers.0.mlp.weight', 'model.layers.1.mlp.weight', 'model.layers.10.mlp.weight'])
  const bf16 = JSON.parse(glob.stdout).tensors[0]
  assert.deepEqual([bf16.min, bf16.max, bf16.mean], [1, 4, 2.5])
  const row = await run('stats', files.small, 'w', '--slice', '1', '--json')
  const t = JSON.parse(row.stdout).tensors[0]
  assert.deepEqual([t.slice, t.shape, t.min, t.max, t.count], ['1', [3], 4, 6, 3])
  const constant = await run('stats', files.small, 'model.norm.weight')
  assert.match(constant.stdout, /histogram: every finite value is 1\n$/)
})

test('stats: failures exit 1, usage mistakes exit 2', async () => {
  const missing = await run('stats', files.small, 'nope')
  assert.equal(missing.code, 1)
  assert.equal(missing.stdout, '')
  assert.match(missing.stderr, /^error: TensorNotFound \(tensor "nope"\): no tensor is named or matches "nope"/)
  const slice = await run('stats', files.small, 'w', '--slice', '5')
  assert.equal(slice.code, 1)
  assert.match(slice.stderr, /^error: SliceOutOfRange/)
  for (const args of [['stats', files.small], ['stats', files.small, 'w', '--bins', '0'], ['stats', files.small, 'w', '--bins'], ['stats', files.small, 'w', '--frobnicate']]) {
    const r = await run(...args)
    assert.equal(r.code, 2, args.join(' '))
    assert.match(r.stderr, /^error: /)
    assert.match(r.stderr, /usage: safetensors-wasm/)
  }
  const help = await run('stats', '--help')
  assert.equal(help.code, 0)
  assert.match(help.stdout, /^usage: safetensors-wasm stats <file/)
})

test('verify: every check passes on a good file; --quiet prints nothing; --json for scripts', async () => {
  const r = await run('verify', files.small)
  assert.equal(r.code, 0, r.stderr)
  assert.equal(r.stderr, '')
  assert.match(r.stdout, /^ok {4}header {2}\d+ bytes of JSON: 7 tensors, 2 metadata entries\n/)
  assert.match(r.stdout, /^ok {4}layout {2}7 tensors tile the [\d,]+-byte data buffer exactly, to the end of the file$/m)
  assert.match(r.stdout, /^verified .*small\.safetensors: 2 checks passed\n$/m)
  const quiet = await run('verify', files.small, '--quiet')
  assert.deepEqual(quiet, { code: 0, stdout: '', stderr: '' })
  const json = await run('verify', files.clean, '--full', '--json')
  assert.equal(json.code, 0)
  const doc = JSON.parse(json.stdout)
  assert.equal(doc.ok, true)
  assert.deepEqual(doc.checks.map((/** @type {any} */ c) => [c.name, c.status]), [['header', 'ok'], ['layout', 'ok'], ['data', 'ok'], ['values', 'ok']])
  assert.match(doc.checks[2].detail, /^read all 32 bytes/)
})

test('verify --full reads every byte; NaN and Inf warn, or fail with --finite', async () => {
  const r = await run('verify', files.small, '--full')
  assert.equal(r.code, 0, r.stderr)
  assert.match(r.stdout, /^ok {4}data {4}read all [\d,]+ bytes .* of 7 tensors$/m)
  assert.match(r.stdout, /^warn {2}values {2}1 tensor holds NaN or Inf: odd \(1 NaN, 1 Inf\)$/m)
  assert.match(r.stdout, /: 3 checks passed, 1 warning\n$/)
  const strict = await run('verify', files.small, '--full', '--finite')
  assert.equal(strict.code, 1)
  assert.match(strict.stdout, /^FAIL {2}values {2}NonFinite: 1 tensor holds NaN or Inf: odd \(1 NaN, 1 Inf\)$/m)
  assert.equal(strict.stderr, '', 'the problem is reported once, on stdout')
})

test('verify: a broken file fails with its error code, once, on stdout', async () => {
  const r = await run('verify', files.trailing)
  assert.equal(r.code, 1)
  assert.match(r.stdout, /^FAIL {2}layout {2}MetadataIncompleteBuffer \(byte \d+\): tensors end at file byte \d+ but the file is \d+ bytes$/m)
  assert.match(r.stdout, /^verify failed: /m)
  assert.equal(r.stderr, '')
  const json = await run('verify', files.truncated, '--json')
  assert.equal(json.code, 1)
  const doc = JSON.parse(json.stdout)
  assert.equal(doc.ok, false)
  assert.equal(doc.checks[0].name, 'header')
  assert.equal(doc.checks[0].error.code, 'InvalidHeaderLength')
  const missing = await run('verify', join(dir, 'nope.safetensors'), '--quiet')
  assert.equal(missing.code, 1)
  assert.match(missing.stdout, /^FAIL {2}open {2}NotFound: [^\n]*\n$/, '--quiet: the failed check alone')
  assert.equal(missing.stderr, '')
  assert.equal((await run('verify')).code, 2)
})

test('verify --full reads a tensor larger than a piece in pieces', async () => {
  const big = join(dir, 'big.safetensors')
  const rows = 17_000
  const cols = 1024  // 69.6 MB: more than one 64 MiB piece
  const data = new Float32Array(rows * cols)
  data[data.length - 1] = NaN
  await writeFile(big, { big: { dtype: 'F32', shape: [rows, cols], data } })
  const r = await run('verify', big, '--full', '--json')
  assert.equal(r.code, 0, r.stderr)
  const doc = JSON.parse(r.stdout)
  assert.match(doc.checks[2].detail, /^read all 69,632,000 bytes/)
  assert.equal(doc.checks[3].detail, '1 tensor holds NaN or Inf: big (1 NaN)')
  await rm(big)
})

test('pieces of a tensor cover it exactly, in order, within the limit', () => {
  /** @param {number[]} shape @param {number} bytes @param {number} limit */
  const cover = (shape, bytes, limit) => {
    const strides = shape.map((_, d) => shape.slice(d + 1).reduce((a, b) => a * b, 1))
    const seen = []
    for (const spec of pieceSpecs(shape, bytes, limit)) {
      let start = 0
      let count = 1
      spec.forEach((s, d) => {
        if (Array.isArray(s)) {
          start += s[0] * strides[d]
          count = (s[1] - s[0]) * strides[d]
        } else start += s * strides[d]
      })
      if (spec.length === 0) count = shape.reduce((a, b) => a * b, 1)
      assert.ok(count * bytes <= limit || spec.length === shape.length, `piece ${JSON.stringify(spec)} fits`)
      seen.push([start, count])
    }
    let next = 0
    for (const [start, count] of seen) {
      assert.equal(start, next)
      next += count
    }
    return { pieces: seen.length, elements: next }
  }
  assert.deepEqual(cover([10, 4], 4, 40), { pieces: 5, elements: 40 })
  assert.deepEqual(cover([3, 100], 4, 100), { pieces: 12, elements: 300 })
  assert.deepEqual(cover([2, 3, 5, 7], 2, 30), { pieces: 18, elements: 210 })  // [i, j, 2-row steps of 5]
  assert.deepEqual(cover([1000], 8, 800), { pieces: 10, elements: 1000 })
  assert.deepEqual([...pieceSpecs([4, 0], 4, 8)], [[]])
})

test('inspect --tree groups names by prefix with sizes; --depth folds; --tree --json', async () => {
  const r = await run('inspect', files.small, '--tree')
  assert.equal(r.code, 0, r.stderr)
  const lines = r.stdout.trimEnd().split('\n')
  assert.match(lines[0], /small\.safetensors +7 tensors, 29 parameters, \d+ B$/)
  assert.deepEqual(lines.slice(1).map((l) => l.replace(/ {2,}[A-Z0-9].*$/, '')), [
    '├─ ids', '├─ model', '│  ├─ layers', '│  │  ├─ 0.mlp.weight', '│  │  ├─ 1.mlp.weight', '│  │  └─ 10.mlp.weight',
    '│  └─ norm.weight', '├─ odd', '└─ w',
  ])
  assert.match(lines[2], /├─ model +4 tensors, 16 parameters, 32 B$/)
  assert.match(lines[4], /0\.mlp\.weight +BF16 \[2, 2\] +8 B$/)
  const folded = await run('inspect', files.small, '--tree', '--depth', '1')
  assert.match(folded.stdout, /├─ model\.\* +4 tensors/)
  assert.doesNotMatch(folded.stdout, /layers/)
  const json = await run('inspect', files.small, '--tree', '--json')
  const tree = JSON.parse(json.stdout)
  assert.deepEqual([tree.tensors, tree.parameters], [7, 29])
  const model = tree.children.find((/** @type {any} */ c) => c.name === 'model')
  assert.deepEqual(model.children.map((/** @type {any} */ c) => c.name), ['layers', 'norm.weight'])
  assert.deepEqual(model.children[0].children[2], { name: '10.mlp.weight', path: 'model.layers.10.mlp.weight', dtype: 'BF16', shape: [2, 2], parameters: 4, byteLength: 8 })
  assert.equal((await run('inspect', files.small, '--tree', '--depth', '0')).code, 2)
})

test('inspect --quiet and --json keep stdout to the output alone', async () => {
  const plain = await run('inspect', files.small)
  const quiet = await run('inspect', files.small, '-q')
  assert.deepEqual(quiet, plain)
  const json = await run('inspect', files.small, '--json', '--quiet')
  assert.equal(json.stderr, '')
  assert.equal(JSON.parse(json.stdout).tensors.length, 7)
})

test('a sharded set from its index: inspect, stats and verify', async () => {
  const r = await run('inspect', files.index, '--json')
  assert.equal(r.code, 0, r.stderr)
  const doc = JSON.parse(r.stdout)
  assert.deepEqual(doc.metadata, { total_size: 56 })
  assert.deepEqual(doc.shards.map((/** @type {any} */ s) => [s.path, s.metadata]), [
    ['model-00001-of-00002.safetensors', { format: 'pt' }], ['model-00002-of-00002.safetensors', { format: 'pt' }]])
  assert.deepEqual(doc.tensors.map((/** @type {any} */ t) => [t.name, t.shard]), [
    ['embed.weight', 'model-00001-of-00002.safetensors'], ['head.weight', 'model-00002-of-00002.safetensors'],
    ['head.bias', 'model-00002-of-00002.safetensors']])
  assert.equal(doc.byteLength, doc.shards.reduce((/** @type {number} */ n, /** @type {any} */ s) => n + s.byteLength, 0))
  const text = await run('inspect', files.index)
  assert.match(text.stdout, /^file {8}.*model\.safetensors\.index\.json \(sharded: 2 shards\)$/m)
  assert.match(text.stdout, /^model-00002-of-00002\.safetensors +\d+ B +\d+ B +2$/m)
  const stats = await run('stats', files.index, 'head.weight', '--json')
  assert.deepEqual(JSON.parse(stats.stdout).tensors[0].histogram.min, -4)
  const verify = await run('verify', files.index, '--full')
  assert.equal(verify.code, 0, verify.stdout + verify.stderr)
  assert.match(verify.stdout, /^ok {4}index {3}the index and the shard headers name the same tensors$/m)
  assert.match(verify.stdout, /^ok {4}data {4}read all 56 bytes/m)
  const bad = await run('verify', files.badIndex)
  assert.equal(bad.code, 1)
  assert.match(bad.stdout, /^FAIL {2}index {3}IndexMismatch: the index names 1 tensor its shard does not hold: ghost\.weight \(in model-00002-of-00002\.safetensors\)$/m)
  assert.match(bad.stdout, /^FAIL {2}index {3}IndexMismatch: 1 tensor is in a shard the index does not map it to: head\.weight/m)
  assert.equal(bad.stderr, '')
  const inspectBad = await run('inspect', files.badIndex)
  assert.equal(inspectBad.code, 1)
  assert.match(inspectBad.stderr, /^error: TensorNotFound \(tensor "ghost\.weight"\)/)
})

test('URL sources: a file and a sharded index over HTTP, with -H for a token', async () => {
  const local = await run('inspect', files.small, '--json')
  const remote = await run('inspect', server.url('/m/small.safetensors'), '--json')
  assert.equal(remote.code, 0, remote.stderr)
  assert.deepEqual(JSON.parse(remote.stdout), JSON.parse(local.stdout))
  const stats = await run('stats', server.url('/m/small.safetensors'), 'w', '--json')
  assert.equal(JSON.parse(stats.stdout).tensors[0].mean, 3.5)
  const verify = await run('verify', server.url('/m/sharded/model.safetensors.index.json'), '--full', '--json')
  assert.equal(verify.code, 0, verify.stderr)
  assert.equal(JSON.parse(verify.stdout).ok, true)
  const tree = await run('inspect', server.url('/m/sharded/model.safetensors.index.json'), '--tree')
  assert.match(tree.stdout, /└─ head +2 tensors, 6 parameters, 24 B/)
  const denied = await run('inspect', server.url('/private/small.safetensors'))
  assert.equal(denied.code, 1)
  assert.match(denied.stderr, /^error: HttpError: .*HTTP 401/)
  const allowed = await run('inspect', server.url('/private/small.safetensors'), '-H', 'Authorization: Bearer t0ken', '--json')
  assert.equal(allowed.code, 0, allowed.stderr)
  assert.equal((await run('inspect', server.url('/private/small.safetensors'), '-H', 'no colon')).code, 2)
  const notFound = await run('verify', server.url('/m/missing.safetensors'))
  assert.equal(notFound.code, 1)
  assert.match(notFound.stdout, /^FAIL {2}open {2}NotFound: /m)
})

test('a progress bar on stderr when it is a terminal, and not with --quiet', { skip: existsSync('/usr/bin/script') ? false : 'needs script(1) from util-linux to give the CLI a terminal' }, async () => {
  server.addQuirks('/slow/', { bytesPerSecond: 1_000_000 })
  const url = server.url('/slow/small.safetensors')
  /** @param {string} extra */
  const inTerminal = (extra) => new Promise((resolve) => {
    execFile('/usr/bin/script', ['-qefc', `${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)} stats ${url} big ${extra} >/dev/null`, '/dev/null'],
      { encoding: 'utf8', timeout: 60_000 }, (error, stdout) => resolve({ code: error ? 1 : 0, out: stdout }))
  })
  const shown = /** @type {{ code: number, out: string }} */ (await inTerminal(''))
  assert.equal(shown.code, 0)
  // The terminal's own codes: ESC [K erases the line.
  const ESC = '\x1b'
  assert.match(shown.out, new RegExp(`\\r${ESC}\\[Kreading \\[#*-*\\] +\\d+% {2}[\\d.]+ [kM]B / 2\\.10 MB`))
  assert.match(shown.out, new RegExp(`\\r${ESC}\\[K$`), 'the bar is erased at the end')
  const quiet = /** @type {{ code: number, out: string }} */ (await inTerminal('--quiet'))
  assert.equal(quiet.code, 0)
  assert.doesNotMatch(quiet.out, /reading \[/)
})

test('renderProgress fits the terminal width', () => {
  assert.equal(renderProgress('reading', 50, 100, 80, 'count'), `reading [${'#'.repeat(20)}${'-'.repeat(20)}]  50%  50 / 100`)
  const narrow = renderProgress('reading', 1_000_000, 4_000_000, 40)
  assert.ok(narrow.length <= 39, narrow)
  assert.match(narrow, /^reading \[/)
})

test('the corpus: every file verifies with --full, with the tensor count of its header', async (t) => {
  if (!existsSync(CORPUS)) return t.skip('../shared/corpus not found: corpus tests skipped')
  const names = [
    ...(await readdir(CORPUS)).filter((n) => n.endsWith('.safetensors')).map((n) => join(CORPUS, n)),
    ...(existsSync(join(CORPUS, 'reference')) ? (await readdir(join(CORPUS, 'reference'))).filter((n) => n.endsWith('.safetensors')).map((n) => join(CORPUS, 'reference', n)) : []),
  ]
  assert.ok(names.length > 10)
  let next = 0
  const worker = async () => {
    while (next < names.length) {
      const path = names[next++]
      const verify = await run('verify', path, '--full', '--json')
      assert.equal(verify.code, 0, `${path}: ${verify.stdout}${verify.stderr}`)
      const doc = JSON.parse(verify.stdout)
      assert.equal(doc.ok, true)
      const bytes = await readFile(path)
      const n = Number(bytes.readBigUInt64LE(0))
      const header = JSON.parse(bytes.subarray(8, 8 + n).toString('utf8'))
      const count = Object.keys(header).filter((k) => k !== '__metadata__').length
      assert.match(doc.checks[0].detail, new RegExp(`^${n.toLocaleString('en-US')} bytes of JSON: ${count.toLocaleString('en-US')} tensors`), path)
      assert.deepEqual(doc.checks.map((/** @type {any} */ c) => c.name), ['header', 'layout', 'data', 'values'])
    }
  }
  await Promise.all([worker(), worker(), worker(), worker()])
})

test('the corpus\'s sharded set: inspect and verify from its index', async (t) => {
  const prefix = 'FluxML__SafeTensors.jl__test_sharded_'
  const indexPath = join(CORPUS, `${prefix}model.safetensors.index.json`)
  if (!existsSync(indexPath)) return t.skip('../shared/corpus not found: corpus tests skipped')
  // The corpus flattens paths: put the shards back beside the index under their own names.
  const folder = join(dir, 'fluxml')
  await mkdir(folder)
  for (const name of await readdir(CORPUS)) {
    if (name.startsWith(prefix)) await copyFile(join(CORPUS, name), join(folder, name.slice(prefix.length)))
  }
  const index = JSON.parse(await readFile(indexPath, 'utf8'))
  const verify = await run('verify', join(folder, 'model.safetensors.index.json'), '--full')
  assert.equal(verify.code, 0, verify.stdout + verify.stderr)
  const r = await run('inspect', join(folder, 'model.safetensors.index.json'), '--json')
  const doc = JSON.parse(r.stdout)
  assert.equal(doc.tensors.length, Object.keys(index.weight_map).length)
  assert.deepEqual(new Set(doc.shards.map((/** @type {any} */ s) => s.path)), new Set(Object.values(index.weight_map)))
  const f = await open(join(folder, 'model.safetensors.index.json'))
  assert.equal(doc.byteLength, (await /** @type {any} */ (f).loadHeaders(), /** @type {any} */ (f).byteLength))
  await f.close()
})

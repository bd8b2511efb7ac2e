// The CLI's rough edges (issue 18), as a user meets them in a terminal: --version; each command's
// --help lists every option it takes, a line each; a usage mistake shows that command's usage;
// convert never writes over its input and replaces an existing output only with --force (through
// a temporary file renamed); verify reports each problem once, on stdout; inspect --sort; the
// progress bar's rate and time left. Run as `node js/cli/main.js ...` in a child process.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { link, mkdir, mkdtemp, readFile, readdir, rm, stat, symlink, writeFile as fsWriteFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { serialize, writeFile } from '../../js/node.js'
import * as inspect from '../../js/cli/inspect.js'
import * as stats from '../../js/cli/stats.js'
import * as verify from '../../js/cli/verify.js'
import * as convert from '../../js/cli/convert.js'
import * as diff from '../../js/cli/diff.js'
import { COMMON_OPTIONS, formatDuration, renderProgress } from '../../js/cli/common.js'
import { fixtures, toBytes } from './quant-fixtures.js'
import { startServer } from '../servers/static-server.js'

const CLI = fileURLToPath(new URL('../../js/cli/main.js', import.meta.url))
const PACKAGE = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'))
const MODULES = { inspect, stats, verify, convert, diff }

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

/** @type {string} */
let dir
/** @type {string} */
let model
/** @type {Uint8Array} */
let modelBytes

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'st-cli-polish-'))
  model = join(dir, 'model.safetensors')
  // Sizes, names and file places that sort three different ways.
  modelBytes = await serialize({
    'layers.10.w': { dtype: 'F32', shape: [4], data: new Float32Array(4) },
    'layers.2.w': { dtype: 'F32', shape: [64], data: new Float32Array(64) },
    'layers.1.w': { dtype: 'F32', shape: [16], data: new Float32Array(16) },
    embed: { dtype: 'F32', shape: [8], data: new Float32Array(8) },
  })
  await fsWriteFile(model, modelBytes)
})

after(async () => {
  if (dir) await rm(dir, { recursive: true })
})

test('--version prints the package\'s version', async () => {
  for (const flag of ['--version', '-V']) {
    const r = await run(flag)
    assert.deepEqual(r, { code: 0, stdout: `${PACKAGE.version}\n`, stderr: '' }, flag)
  }
  assert.match((await run('--help')).stdout, /safetensors-wasm --version/)
})

/** The `options:` section of a command's --help, a line each. @param {string} text */
function optionSection(text) {
  const start = text.indexOf('\noptions:\n')
  assert.ok(start >= 0, text)
  const rest = text.slice(start + '\noptions:\n'.length)
  return rest.slice(0, rest.indexOf('\n\n') < 0 ? rest.length : rest.indexOf('\n\n')).trimEnd().split('\n')
}

test('each command\'s --help lists every option it takes, a line each', async () => {
  for (const [name, module] of Object.entries(MODULES)) {
    const r = await run(name, '--help')
    assert.equal(r.code, 0, name)
    assert.ok(r.stdout.startsWith(`usage: safetensors-wasm ${name} `), name)
    const lines = optionSection(r.stdout)
    // Every line is one option: the flag, then what it does, within 100 columns.
    for (const line of lines) {
      assert.match(line, /^ {2}-\S.* {2,}\S/, `${name}: ${line}`)
      assert.ok(line.length <= 100, `${name}: ${line.length} columns: ${line}`)
    }
    const flags = lines.map((l) => l.trim().split(/ {2,}/)[0])
    const accepted = { ...module.options, ...COMMON_OPTIONS, help: { type: 'boolean', short: 'h' } }
    for (const [option, spec] of Object.entries(accepted)) {
      const found = flags.filter((f) => f.split(/,? /).includes(`--${option}`))
      assert.equal(found.length, 1, `${name} --help: a line for --${option}`)
      const short = /** @type {{ short?: string }} */ (spec).short
      if (short) assert.ok(found[0].split(/,? /).includes(`-${short}`), `${name} --help: -${short} on the line of --${option}`)
    }
    assert.equal(lines.length, Object.keys(accepted).length, `${name}: no line but the options'`)
  }
})

test('a usage mistake shows that command\'s usage and options, not the list of commands', async () => {
  /** @type {[string, string[], RegExp][]} */
  const cases = [
    ['inspect', ['--depth', '0', model], /^error: --depth takes a whole number from 1\n/],
    ['stats', [model], /^error: stats takes a source and at least one tensor name\n/],
    ['verify', [], /^error: verify takes one file, URL or index\n/],
    ['convert', [model, join(dir, 'out.safetensors')], /^error: convert needs --dtype bf16, f16 or f32\n/],
    ['diff', [model], /^error: diff takes two files, URLs or indexes: A and B\n/],
    ['diff', [model, model, '--frobnicate'], /^error: Unknown option '--frobnicate'/],
  ]
  for (const [name, args, message] of cases) {
    const r = await run(name, ...args)
    assert.equal(r.code, 2, `${name} ${args.join(' ')}`)
    assert.equal(r.stdout, '')
    assert.match(r.stderr, message)
    assert.match(r.stderr, new RegExp(`\\n\\nusage: safetensors-wasm ${name} `))
    assert.deepEqual(optionSection(r.stderr), optionSection((await run(name, '--help')).stdout), `${name}: its options`)
    assert.doesNotMatch(r.stderr, /^commands:/m, 'not the global help')
  }
  const unknown = await run('frobnicate')
  assert.equal(unknown.code, 2)
  assert.match(unknown.stderr, /^error: unknown command "frobnicate"\n\nusage: safetensors-wasm <command> \[options\]/)
  assert.match(unknown.stderr, /^commands:$/m, 'an unknown command: the list of commands')
})

/** Files in `folder` whose names say they are temporary (a write not renamed). @param {string} folder */
async function tempFiles(folder) {
  return (await readdir(folder)).filter((n) => n.endsWith('.tmp'))
}

test('convert never writes over its input: same path, a link, a path through a linked folder, a hard link; not even with --force', async () => {
  const folder = join(dir, 'inplace')
  await mkdir(folder)
  const input = join(folder, 'in.safetensors')
  await fsWriteFile(input, modelBytes)
  await symlink(input, join(folder, 'link.safetensors'))
  await symlink(folder, join(dir, 'linked-folder'))
  await link(input, join(folder, 'hard.safetensors'))
  for (const out of [input, join(folder, 'link.safetensors'), join(dir, 'linked-folder', 'in.safetensors'),
    join(folder, '..', 'inplace', 'in.safetensors'), join(folder, 'hard.safetensors')]) {
    for (const force of [[], ['--force']]) {
      const r = await run('convert', input, out, '--dtype', 'bf16', ...force)
      assert.equal(r.code, 1, `${out} ${force}`)
      assert.match(r.stderr, /^error: InvalidArgument: .* is the input file: convert writes a new file/, out)
    }
  }
  assert.deepEqual(new Uint8Array(await readFile(input)), modelBytes, 'the input is untouched')
  assert.deepEqual(await tempFiles(folder), [])
})

test('convert refuses an existing output unless --force, which replaces it through a temporary file', async () => {
  const folder = join(dir, 'outputs')
  await mkdir(folder)
  const out = join(folder, 'out.safetensors')
  await fsWriteFile(out, 'an older file')
  const refused = await run('convert', model, out, '--dtype', 'bf16')
  assert.equal(refused.code, 1)
  assert.equal(refused.stdout, '')
  assert.match(refused.stderr, /^error: InvalidArgument: .*out\.safetensors exists: convert does not replace a file unless --force/)
  assert.equal(await readFile(out, 'utf8'), 'an older file')
  // With --force: replaced, by a new file renamed over it (a new inode), not rewritten in place.
  const before = await stat(out)
  const forced = await run('convert', model, out, '--dtype', 'bf16', '--force')
  assert.equal(forced.code, 0, forced.stderr)
  const after = await stat(out)
  assert.notEqual(after.ino, before.ino, 'a temporary file renamed over the old one')
  assert.match(await readFile(out, 'latin1'), /"dtype":"BF16"/)
  assert.deepEqual(await tempFiles(folder), [])
  // A new output needs no --force; a link to nothing is written through.
  const fresh = join(folder, 'fresh.safetensors')
  assert.equal((await run('convert', model, fresh, '--dtype', 'f16')).code, 0)
  await symlink(join(folder, 'target.safetensors'), join(folder, 'dangling.safetensors'))
  assert.equal((await run('convert', model, join(folder, 'dangling.safetensors'), '--dtype', 'f16')).code, 0)
  assert.ok(existsSync(join(folder, 'target.safetensors')))
})

test('convert --dequantize of a sharded set: an existing index or shard in the output folder is replaced only with --force', async () => {
  const shards = join(dir, 'set')
  await mkdir(shards)
  await writeFile(join(shards, 'model-00001-of-00002.safetensors'), { a: { dtype: 'F32', shape: [2], data: new Float32Array([1, 2]) } })
  await writeFile(join(shards, 'model-00002-of-00002.safetensors'), { b: { dtype: 'F32', shape: [2], data: new Float32Array([3, 4]) } })
  const index = join(shards, 'model.safetensors.index.json')
  await fsWriteFile(index, JSON.stringify({ weight_map: { a: 'model-00001-of-00002.safetensors', b: 'model-00002-of-00002.safetensors' } }))
  const out = join(dir, 'set-out')
  const first = await run('convert', index, out, '--dequantize', '--dtype', 'bf16', '--json')
  assert.equal(first.code, 0, first.stderr)
  const written = JSON.parse(first.stdout)
  const again = await run('convert', index, out, '--dequantize', '--dtype', 'bf16')
  assert.equal(again.code, 1)
  assert.match(again.stderr, /^error: InvalidArgument: .*model\.safetensors\.index\.json exists: .*--force/)
  // An index gone but a shard there: still refused, naming the shard.
  await rm(written.index)
  const shard = await run('convert', index, out, '--dequantize', '--dtype', 'bf16')
  assert.equal(shard.code, 1)
  assert.match(shard.stderr, new RegExp(`${written.shards[0].replace(/[.]/g, '\\.')} exists`))
  const forced = await run('convert', index, out, '--dequantize', '--dtype', 'bf16', '--force')
  assert.equal(forced.code, 0, forced.stderr)
  assert.ok(existsSync(written.index))
})

test('verify reports each problem once, on stdout; stderr stays empty; --quiet prints the failures alone', async () => {
  const trailing = join(dir, 'trailing.safetensors')
  await fsWriteFile(trailing, Buffer.concat([modelBytes, Buffer.from([0])]))
  const r = await run('verify', trailing)
  assert.equal(r.code, 1)
  assert.equal(r.stderr, '')
  const failures = r.stdout.split('\n').filter((l) => l.startsWith('FAIL'))
  assert.deepEqual(failures.map((l) => l.split(/ {2,}/).slice(0, 2)), [['FAIL', 'layout']])
  assert.equal(r.stdout.split('MetadataIncompleteBuffer').length - 1, 1, 'the error once')
  const quiet = await run('verify', trailing, '--quiet')
  assert.deepEqual(quiet, { code: 1, stdout: `${failures[0]}\n`, stderr: '' })
  const json = await run('verify', trailing, '--json')
  assert.equal(json.stderr, '')
  assert.equal(JSON.parse(json.stdout).checks.filter((/** @type {any} */ c) => c.status === 'fail').length, 1)
  // A sharded set missing two shards: each named once.
  const folder = join(dir, 'holes')
  await mkdir(folder)
  await writeFile(join(folder, 'model-00001-of-00003.safetensors'), { a: { dtype: 'F32', shape: [1], data: new Float32Array(1) } })
  await fsWriteFile(join(folder, 'model.safetensors.index.json'), JSON.stringify({ weight_map: {
    a: 'model-00001-of-00003.safetensors', b: 'model-00002-of-00003.safetensors', c: 'model-00003-of-00003.safetensors' } }))
  const sharded = await run('verify', join(folder, 'model.safetensors.index.json'))
  assert.equal(sharded.code, 1)
  assert.equal(sharded.stderr, '')
  for (const missing of ['model-00002-of-00003.safetensors', 'model-00003-of-00003.safetensors'])
    assert.equal(sharded.stdout.split('\n').filter((l) => l.startsWith('FAIL') && l.includes(missing)).length, 1, missing)
  // A usage mistake is the command's own failure: on stderr.
  const usage = await run('verify', trailing, '--sha256', 'abc')
  assert.equal(usage.code, 2)
  assert.equal(usage.stdout, '')
  assert.match(usage.stderr, /^error: --sha256 takes/)
})

test('inspect --sort size|name|offset orders the table and --json; a quantized weight\'s parts stay under it', async () => {
  /** @param {string} text */
  const tableNames = (text) => text.trimEnd().split('\n').slice(text.split('\n').findIndex((l) => l.startsWith('name ')) + 1).map((l) => l.split(/ +/)[0])
  const offsets = (await run('inspect', model, '--json')).stdout
  const byOffset = JSON.parse(offsets).tensors
  assert.deepEqual(byOffset.map((/** @type {any} */ t) => t.byteOffset), [...byOffset.map((/** @type {any} */ t) => t.byteOffset)].sort((a, b) => a - b))
  /** @type {Record<string, string[]>} */
  const want = {
    size: ['layers.2.w', 'layers.1.w', 'embed', 'layers.10.w'],
    name: ['embed', 'layers.1.w', 'layers.2.w', 'layers.10.w'],
    offset: byOffset.map((/** @type {any} */ t) => t.name),
  }
  for (const [sort, names] of Object.entries(want)) {
    const text = await run('inspect', model, '--sort', sort)
    assert.equal(text.code, 0, text.stderr)
    assert.deepEqual(tableNames(text.stdout), names, `--sort ${sort}: the table`)
    const json = JSON.parse((await run('inspect', model, '--sort', sort, '--json')).stdout)
    assert.deepEqual(json.tensors.map((/** @type {any} */ t) => t.name), names, `--sort ${sort}: --json`)
  }
  assert.deepEqual(tableNames((await run('inspect', model)).stdout), want.offset, 'the default: the file\'s order')

  // A quantized checkpoint: each weight (its parts' bytes together) placed as one, parts under it.
  const fixture = fixtures()['nvfp4-modelopt']
  const quantized = join(dir, 'nvfp4.safetensors')
  await fsWriteFile(quantized, await toBytes(fixture.tensors))
  const doc = JSON.parse((await run('inspect', quantized, '--sort', 'size', '--json')).stdout)
  const names = doc.tensors.map((/** @type {any} */ t) => t.name)
  /** @type {{ name: string, size: number }[]} */
  const units = []
  for (const t of doc.tensors) {
    const weight = fixture.weights.find((w) => Object.values(w.parts).includes(t.name))
    const key = weight ? weight.name : t.name
    if (units.at(-1)?.name === key) /** @type {any} */ (units.at(-1)).size += t.byteLength
    else units.push({ name: key, size: t.byteLength })
  }
  assert.equal(new Set(units.map((u) => u.name)).size, units.length, 'each weight\'s parts together')
  assert.deepEqual(units.map((u) => u.size), [...units.map((u) => u.size)].sort((a, b) => b - a), 'largest first')
  const text = (await run('inspect', quantized, '--sort', 'size')).stdout
  const first = fixture.weights.map((w) => w.name).sort((a, b) => units.findIndex((u) => u.name === a) - units.findIndex((u) => u.name === b))[0]
  assert.match(text, new RegExp(`^${first.replace(/\./g, '\\.')} +nvfp4`, 'm'))
  assert.ok(names.length === Object.keys(fixture.tensors).length)

  for (const args of [['--sort', 'bytes'], ['--sort', 'size', '--tree'], ['--sort']]) {
    const r = await run('inspect', model, ...args)
    assert.equal(r.code, 2, args.join(' '))
  }
})

test('the progress line shows the rate and the time left, and leaves them out when the terminal is narrow', () => {
  assert.equal(renderProgress('reading', 1_000_000, 4_000_000, 100, 'bytes', 2000),
    `reading [${'#'.repeat(10)}${'-'.repeat(30)}]  25%  1.00 MB / 4.00 MB  500 kB/s  6s left`)
  assert.equal(renderProgress('shard headers', 30, 282, 100, 'count', 1500), `shard headers [${'#'.repeat(4)}${'-'.repeat(36)}]  10%  30 / 282  20/s  13s left`)
  assert.match(renderProgress('reading', 4_000_000, 4_000_000, 100, 'bytes', 2000), /100% {2}4\.00 MB \/ 4\.00 MB {2}2\.00 MB\/s$/, 'done: no time left')
  const narrow = renderProgress('reading', 1_000_000, 4_000_000, 50, 'bytes', 2000)
  assert.ok(narrow.length <= 49, narrow)
  assert.match(narrow, /1\.00 MB \/ 4\.00 MB$/, 'the rate goes first when narrow')
  assert.equal(renderProgress('reading', 50, 100, 80, 'count'), `reading [${'#'.repeat(20)}${'-'.repeat(20)}]  50%  50 / 100`, 'no rate before any time')
  assert.deepEqual([0.2, 45, 60, 185, 3600, 7620].map(formatDuration), ['1s', '45s', '1m 00s', '3m 05s', '1h 00m', '2h 07m'])
})

test('in a terminal, stats and diff draw the rate and time left', { skip: existsSync('/usr/bin/script') ? false : 'needs script(1) from util-linux to give the CLI a terminal' }, async () => {
  const server = await startServer()
  try {
    // 8 MB: two of stats' 4 MiB pieces, the first drawn while the second is on its way.
    const big = await serialize({ big: { dtype: 'F32', shape: [2048, 1024], data: new Float32Array(2048 * 1024) } })
    server.addFile('/slow/big.safetensors', big)
    server.addQuirks('/slow/', { bytesPerSecond: 8_000_000 })
    const bytes = await serialize({ w: { dtype: 'F32', shape: [512, 1024], data: new Float32Array(512 * 1024) } })
    server.addFile('/slower/a.safetensors', bytes)
    server.addFile('/slower/b.safetensors', bytes)
    server.addQuirks('/slower/', { bytesPerSecond: 2_000_000 })
    /** @param {string} command */
    const inTerminal = (command) => new Promise((resolve) => {
      execFile('/usr/bin/script', ['-qefc', `${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)} ${command} >/dev/null`, '/dev/null'],
        { encoding: 'utf8', timeout: 60_000 }, (error, stdout) => resolve({ code: error ? 1 : 0, out: stdout }))
    })
    const ESC = '\x1b'
    const s = /** @type {{ code: number, out: string }} */ (await inTerminal(`stats ${server.url('/slow/big.safetensors')} big`))
    assert.equal(s.code, 0)
    assert.match(s.out, new RegExp(`\\r${ESC}\\[Kreading \\[#*-*\\] +\\d+% {2}[\\d.]+ [kM]B / 16\\.8 MB {2}[\\d.]+ [kM]B/s {2}\\d+s left`))
    const d = /** @type {{ code: number, out: string }} */ (await inTerminal(`diff ${server.url('/slower/a.safetensors')} ${server.url('/slower/b.safetensors')} --chunk-bytes 256k`))
    assert.equal(d.code, 0)
    assert.match(d.out, new RegExp(`\\r${ESC}\\[Kcomparing \\[#*-*\\] +\\d+% {2}[\\d.]+ [kM]B / 4\\.19 MB {2}[\\d.]+ [kM]B/s {2}\\d+s left`))
    assert.match(d.out, new RegExp(`\\r${ESC}\\[K$`), 'the bar is erased at the end')
  } finally {
    await server.close()
  }
})

// A sharded convert replaces an older set whole (issue 35, item 4): killed (SIGKILL) at any
// moment, the output folder opens as the old model or the new one, tensor for tensor, or does
// not open (a coded error), never a mix; a failed one (ENOSPC) leaves no shard behind. What a
// killed convert leaves (a staging folder, a single file's temporary file) the next one removes.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync, spawn, spawnSync } from 'node:child_process'
import { copyFile, lstat, mkdir, mkdtemp, readFile, readdir, rm, stat, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { SafetensorsError, open, serialize } from '../../js/node.js'
import { prng } from '../fixtures/make-sample.js'

const CLI = fileURLToPath(new URL('../../js/cli/main.js', import.meta.url))
const INDEX = 'model.safetensors.index.json'
const SHARDS = 4
/** Floats a tensor, two tensors a shard: 8 MiB input shards; out, 2 MiB bf16 tensors in two 8 MiB shards. */
const FLOATS = 1 << 20

/** @type {string} */
let dir

/** @param {string[]} args */
function run(...args) {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 60_000 })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

/** A sharded F32 set in `folder`, the same names and shapes whatever the seed, other values. @param {string} folder @param {number} seed */
async function writeInput(folder, seed) {
  const random = prng(seed)
  await mkdir(folder)
  /** @type {Record<string, string>} */
  const weightMap = {}
  for (let s = 0; s < SHARDS; s++) {
    const shard = `model-0000${s + 1}-of-0000${SHARDS}.safetensors`
    /** @type {Record<string, any>} */
    const tensors = {}
    for (const part of ['a', 'b']) {
      const name = `layers.${s}.${part}`
      tensors[name] = { dtype: 'F32', shape: [FLOATS], data: Float32Array.from({ length: FLOATS }, () => random() - 0.5) }
      weightMap[name] = shard
    }
    await writeFile(join(folder, shard), await serialize(tensors))
  }
  await writeFile(join(folder, INDEX), JSON.stringify({ metadata: {}, weight_map: weightMap }))
  return join(folder, INDEX)
}

/** Every tensor's bytes of the set at `index`. @param {string} index */
async function tensorsOf(index) {
  const f = await open(index)
  try {
    /** @type {Map<string, Buffer>} */
    const bytes = new Map()
    for (const name of f.names) {
      const t = await f.tensor(name)
      bytes.set(name, Buffer.from(t.bytes))
      t.dispose()
    }
    return bytes
  } finally {
    await f.close()
  }
}

/** @type {{ newIndex: string, oldSet: string, newTensors: Map<string, Buffer>, oldTensors: Map<string, Buffer> }} */
let sets

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'st-convert-commit-'))
  const newIndex = await writeInput(join(dir, 'new-in'), 1)
  const oldIndex = await writeInput(join(dir, 'old-in'), 2)
  for (const [index, out] of [[newIndex, 'new-ref'], [oldIndex, 'old-ref']]) {
    const r = run('convert', index, join(dir, out), '--dtype', 'bf16')
    assert.equal(r.code, 0, r.stderr)
  }
  sets = {
    newIndex, oldSet: join(dir, 'old-ref'),
    newTensors: await tensorsOf(join(dir, 'new-ref', INDEX)), oldTensors: await tensorsOf(join(dir, 'old-ref', INDEX)),
  }
})

after(async () => {
  await rm(dir, { recursive: true, force: true })
})

/** Every file under `folder` with its size and time: what changes while convert writes. @param {string} folder */
async function snapshot(folder) {
  const lines = []
  for (const name of await readdir(folder, { recursive: true }).catch(() => [])) {
    const s = await stat(join(folder, name)).catch(() => null)
    if (s?.isFile()) lines.push(`${name} ${s.size} ${s.mtimeMs}`)
  }
  return lines.sort().join('\n')
}

/** What `out` opens as: 'old', 'new', or 'none' (a coded error); a mix fails the test. @param {string} out */
async function outcome(out) {
  let got
  try {
    got = await tensorsOf(join(out, INDEX))
  } catch (error) {
    assert.ok(error instanceof SafetensorsError, `not a coded error: ${error}`)
    return 'none'
  }
  const from = [...got].map(([name, bytes]) => (bytes.equals(/** @type {Buffer} */ (sets.newTensors.get(name))) ? 'new'
    : bytes.equals(/** @type {Buffer} */ (sets.oldTensors.get(name))) ? 'old' : `neither (${name})`))
  assert.equal(got.size, sets.newTensors.size)
  assert.equal(new Set(from).size, 1, `a mix of two models: ${from.join(', ')}`)
  return from[0]
}

/**
 * Converts the new input over the old set in `out` with the CLI, killed (SIGKILL) `delay` ms
 * after the files under out/ first change, or left to finish (null). Returns the signal or exit
 * code, and the time from that first change to the exit.
 * @param {string} out @param {number | null} delay
 */
async function convertOver(out, delay) {
  for (const name of await readdir(sets.oldSet)) await copyFile(join(sets.oldSet, name), join(out, name))
  assert.equal(await outcome(out), 'old')
  const child = spawn(process.execPath, [CLI, 'convert', sets.newIndex, out, '--dtype', 'bf16', '--force'], { stdio: 'ignore' })
  /** @type {Promise<string | number | null>} */
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve(signal ?? code)))
  let done = false
  void exited.then(() => { done = true })
  const before = await snapshot(out)
  while (!done && await snapshot(out) === before) await new Promise((resolve) => setTimeout(resolve, 1))
  const changed = Date.now()
  if (delay !== null) {
    await new Promise((resolve) => setTimeout(resolve, delay))
    child.kill('SIGKILL')
  }
  return { how: await exited, took: Date.now() - changed }
}

test('a sharded convert over an older set, killed at any moment: the old model, the new one, or nothing that opens', async () => {
  const out = join(dir, 'out')
  await mkdir(out)
  // How long the writing takes (from the first change under out/ to the exit), cut in 16 kill points.
  const first = await convertOver(out, null)
  assert.equal(first.how, 0)
  const seen = []
  for (let i = 0; i <= 16; i++) {
    const { how } = await convertOver(out, Math.round((first.took * i) / 16))
    seen.push(`${how}:${await outcome(out)}`)
  }
  assert.ok(seen.some((s) => s.startsWith('SIGKILL')), `some converts were killed: ${seen.join(' ')}`)
  // The last convert finishes, and removes the staging folders the killed ones left.
  assert.equal((await convertOver(out, null)).how, 0)
  assert.equal(await outcome(out), 'new')
  assert.deepEqual((await readdir(out)).sort(), (await readdir(join(dir, 'new-ref'))).sort())
})

test('a sharded convert that runs out of space (ENOSPC) leaves no shard behind, and the old set as it was', async (t) => {
  const mount = join(dir, 'small')
  await mkdir(mount)
  try {
    // 12 MiB: room for the first of the two 8 MiB shards, not the second.
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=12m', 'tmpfs', mount], { stdio: 'ignore' })
  } catch {
    t.skip('needs a tmpfs mount (root) to run out of space')
    return
  }
  try {
    const out = join(mount, 'out')
    const r = run('convert', sets.newIndex, out, '--dtype', 'bf16')
    assert.equal(r.code, 1)
    assert.match(r.stderr, /^error: IoError: cannot write .*ENOSPC/)
    assert.deepEqual(await readdir(out).catch(() => []), [])
    // A small old set there: still whole after the failure.
    const small = join(out, 'model-00001-of-00001.safetensors')
    await writeFile(small, await serialize({ x: { dtype: 'F32', shape: [1], data: new Float32Array([7]) } }))
    await writeFile(join(out, INDEX), JSON.stringify({ metadata: {}, weight_map: { x: 'model-00001-of-00001.safetensors' } }))
    const again = run('convert', sets.newIndex, out, '--dtype', 'bf16', '--force')
    assert.equal(again.code, 1)
    assert.deepEqual((await readdir(out)).sort(), ['model-00001-of-00001.safetensors', INDEX])
    assert.deepEqual([...(await tensorsOf(join(out, INDEX))).keys()], ['x'])
  } finally {
    execFileSync('umount', [mount])
  }
})

test('a staging folder a killed convert left is removed by the next one; one that is not convert\'s, or whose process runs, is kept', async () => {
  const out = join(dir, 'stale')
  await mkdir(out)
  const MARK = 'a sharded set being written by safetensors-wasm convert\n'
  // A process id no process has (above Linux's pid_max), and this test's own, which runs.
  /** @type {[string, Record<string, string>, boolean][]} */
  const folders = [
    ['.safetensors-convert-99999999-aaaaaa', { STAGING: MARK, 'model-00001-of-00002.safetensors': 'half a shard' }, false],
    ['.safetensors-convert-99999999-bbbbbb', {}, false],
    ['.safetensors-convert-99999999-cccccc', { STAGING: MARK, 'notes.txt': 'the user\'s' }, true],
    ['.safetensors-convert-99999999-dddddd', { 'model-00001-of-00002.safetensors': 'not marked' }, true],
    [`.safetensors-convert-${process.pid}-eeeeee`, { STAGING: MARK, 'model-00001-of-00002.safetensors': 'being written' }, true],
  ]
  for (const [name, files] of folders) {
    await mkdir(join(out, name))
    for (const [file, text] of Object.entries(files)) await writeFile(join(out, name, file), text)
  }
  const r = run('convert', sets.newIndex, out, '--dtype', 'bf16')
  assert.equal(r.code, 0, r.stderr)
  const left = await readdir(out)
  for (const [name, files, kept] of folders) {
    assert.equal(left.includes(name), kept, name)
    if (kept) assert.deepEqual((await readdir(join(out, name))).sort(), Object.keys(files).sort(), name)
  }
})

test('a single-file convert killed while writing leaves its temporary file; the next one to that output removes it, not a running process\'s', async () => {
  const out = join(dir, 'single')
  await mkdir(out)
  const input = join(dir, 'new-in', 'model-00001-of-00004.safetensors')
  const target = join(out, 'out.safetensors')
  const ref = join(out, 'ref.safetensors')
  assert.equal(run('convert', input, ref, '--dtype', 'bf16').code, 0)
  const isTemp = (/** @type {string} */ name) => /^\.out\.safetensors\.\d+\.[0-9a-z]+\.tmp$/.test(name)
  // Killed as soon as its temporary file shows (tried again if it finished first).
  let stale = []
  for (let attempt = 0; attempt < 20 && stale.length === 0; attempt++) {
    const child = spawn(process.execPath, [CLI, 'convert', input, target, '--dtype', 'bf16', '--force'], { stdio: 'ignore' })
    /** @type {Promise<string | number | null>} */
    const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve(signal ?? code)))
    let done = false
    void exited.then(() => { done = true })
    while (!done && !(await readdir(out)).some(isTemp)) await new Promise((resolve) => setTimeout(resolve, 1))
    child.kill('SIGKILL')
    if (await exited === 'SIGKILL') stale = (await readdir(out)).filter(isTemp)
  }
  assert.equal(stale.length, 1, 'a killed convert left its temporary file')
  // A temporary file of this output by a process that runs (this one), and files of other names: kept.
  const live = `.out.safetensors.${process.pid}.abc123.tmp`
  const others = [live, '.other.safetensors.99999999.abc123.tmp', '.out.safetensors.99999999.abc123.tmp.keep', 'notes.txt']
  for (const name of others) await writeFile(join(out, name), 'the user\'s')
  const r = run('convert', input, target, '--dtype', 'bf16', '--force')
  assert.equal(r.code, 0, r.stderr)
  assert.deepEqual((await readdir(out)).sort(), [...others, 'out.safetensors', 'ref.safetensors'].sort())
  assert.ok((await readFile(target)).equals(await readFile(ref)))
  for (const name of others) assert.equal(await readFile(join(out, name), 'utf8'), 'the user\'s')
})

test('a sharded convert --force over an older set of more shards removes the old shards the new set does not replace, and nothing else', async () => {
  const out = join(dir, 'fewer')
  await mkdir(out)
  // The old set: 4 shards (-of-00004); the new one has 2 (-of-00002).
  const oldIn = join(dir, 'old-in')
  for (const name of await readdir(oldIn)) await copyFile(join(oldIn, name), join(out, name))
  // Its last shard a link to a file elsewhere, and a name outside the folder: both left alone.
  const elsewhere = join(dir, 'elsewhere.safetensors')
  await copyFile(join(oldIn, 'model-00004-of-00004.safetensors'), elsewhere)
  await rm(join(out, 'model-00004-of-00004.safetensors'))
  await symlink(elsewhere, join(out, 'model-00004-of-00004.safetensors'))
  const outside = join(dir, 'outside.safetensors')
  await writeFile(outside, 'not the set\'s')
  const doc = JSON.parse(await readFile(join(out, INDEX), 'utf8'))
  doc.weight_map.stray = '../outside.safetensors'
  await writeFile(join(out, INDEX), JSON.stringify(doc))
  // Files the old index does not name: kept.
  const users = ['notes.txt', 'model-00009-of-00009.safetensors']
  for (const name of users) await writeFile(join(out, name), 'the user\'s')
  const r = run('convert', sets.newIndex, out, '--dtype', 'bf16', '--force')
  assert.equal(r.code, 0, r.stderr)
  assert.equal(await outcome(out), 'new')
  assert.deepEqual((await readdir(out)).sort(),
    [...await readdir(join(dir, 'new-ref')), ...users, 'model-00004-of-00004.safetensors'].sort())
  assert.ok((await lstat(join(out, 'model-00004-of-00004.safetensors'))).isSymbolicLink())
  assert.equal((await stat(elsewhere)).size, (await stat(join(oldIn, 'model-00004-of-00004.safetensors'))).size)
  assert.equal(await readFile(outside, 'utf8'), 'not the set\'s')
  for (const name of users) assert.equal(await readFile(join(out, name), 'utf8'), 'the user\'s')
})

test('the old set\'s shards that another index in the folder names, or that are the input\'s, are kept', async () => {
  const out = join(dir, 'shared')
  await mkdir(out)
  const oldIn = join(dir, 'old-in')
  for (const name of await readdir(oldIn)) await copyFile(join(oldIn, name), join(out, name))
  // Another set in the folder sharing the old set's third shard.
  await writeFile(join(out, 'other.safetensors.index.json'),
    JSON.stringify({ metadata: {}, weight_map: { 'layers.2.a': 'model-00003-of-00004.safetensors' } }))
  // The input set in the same folder, under another index name: the old index names its shards.
  const input = join(out, 'input.safetensors.index.json')
  await writeFile(input, JSON.stringify({ metadata: {}, weight_map: { 'layers.3.a': 'model-00004-of-00004.safetensors', 'layers.3.b': 'model-00004-of-00004.safetensors' } }))
  const r = run('convert', input, out, '--dtype', 'bf16', '--force')
  assert.equal(r.code, 0, r.stderr)
  const left = (await readdir(out)).sort()
  assert.ok(!left.includes('model-00001-of-00004.safetensors') && !left.includes('model-00002-of-00004.safetensors'), left.join(' '))
  assert.ok(left.includes('model-00003-of-00004.safetensors') && left.includes('model-00004-of-00004.safetensors'), left.join(' '))
  await (await open(input)).close()
})

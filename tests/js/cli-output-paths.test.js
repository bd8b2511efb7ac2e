// What convert and verify print of a path, and where convert writes through a link (issue 35,
// item 9): a path with a newline is printed escaped, a line each, so it cannot forge a line of
// output; an output that is a loop of links, or a sharded set's file that is a link, is refused
// (exit 1, a coded error) and the link stays as it was.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { lstat, mkdir, mkdtemp, readdir, readlink, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { serialize } from '../../js/node.js'

const CLI = fileURLToPath(new URL('../../js/cli/main.js', import.meta.url))
/** A file name that, printed raw, would add a line claiming success. */
const FORGING = 'x\nverified everything: 9 checks passed\n.safetensors'

/** @type {string} */
let dir
/** @type {string} */
let input
/** @type {string} */
let index

/** @param {string[]} args */
function run(...args) {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 60_000 })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'st-output-paths-'))
  input = join(dir, 'in.safetensors')
  await writeFile(input, await serialize({ w: { dtype: 'F32', shape: [4], data: new Float32Array([1, 2, 3, 4]) } }))
  await mkdir(join(dir, 'set'))
  await writeFile(join(dir, 'set', 'model-00001-of-00001.safetensors'), await serialize({ w: { dtype: 'F32', shape: [2], data: new Float32Array([5, 6]) } }))
  index = join(dir, 'set', 'model.safetensors.index.json')
  await writeFile(index, JSON.stringify({ weight_map: { w: 'model-00001-of-00001.safetensors' } }))
})

after(async () => {
  await rm(dir, { recursive: true, force: true })
})

test('convert prints a path with a newline escaped, on its one line, in its summary and its errors', async () => {
  const out = join(dir, FORGING)
  const r = run('convert', input, out, '--dtype', 'bf16')
  assert.equal(r.code, 0, r.stderr)
  assert.equal(r.stdout.split('\n').length, 2, r.stdout)
  assert.ok(r.stdout.startsWith(`${join(dir, 'x\\u{000A}verified everything: 9 checks passed\\u{000A}.safetensors')}: 1 tensors`), r.stdout)
  const missing = run('convert', join(dir, `no ${FORGING}`), join(dir, 'y.safetensors'), '--dtype', 'bf16')
  assert.equal(missing.code, 1)
  assert.match(missing.stderr, /^error: NotFound: .*\\u\{000A\}verified everything/)
  assert.equal(missing.stderr.split('\n').length, 2, missing.stderr)
})

test('verify prints a path with a newline escaped: a check a line, the verdict a line', () => {
  const r = run('verify', join(dir, `no ${FORGING}`))
  assert.equal(r.code, 1)
  const lines = r.stdout.split('\n')
  assert.equal(lines.length, 3, r.stdout)
  assert.match(lines[0], /^FAIL {2}\S+ +NotFound: .*\\u\{000A\}verified everything/)
  assert.match(lines[1], /^verify failed: .*\\u\{000A\}/)
})

test('convert refuses an output that is a loop of links: exit 1, IoError, the link left as it was', async () => {
  const loop = join(dir, 'loop.safetensors')
  await symlink('loop.safetensors', loop)
  for (const force of [[], ['--force']]) {
    const r = run('convert', input, loop, '--dtype', 'bf16', ...force)
    assert.equal(r.code, 1, `${force}: ${r.stdout}`)
    assert.match(r.stderr, /^error: IoError: cannot write .*loop\.safetensors: a loop of symbolic links \(ELOOP\)/)
    assert.ok((await lstat(loop)).isSymbolicLink(), 'still a link')
    assert.equal(await readlink(loop), 'loop.safetensors')
  }
  assert.deepEqual((await readdir(dir)).filter((n) => n.includes('loop')), ['loop.safetensors'])
})

test('a sharded convert refuses a shard or index of its output that is a link: exit 1, InvalidArgument, the links kept', async () => {
  for (const [i, [file, target]] of [['model-00001-of-00001.safetensors', 'elsewhere.safetensors'], ['model.safetensors.index.json', 'gone.json']].entries()) {
    const out = join(dir, `linked-${i}`)
    await mkdir(out)
    await symlink(target, join(out, file))
    const r = run('convert', index, out, '--dtype', 'bf16', '--force')
    assert.equal(r.code, 1, r.stdout)
    assert.match(r.stderr, /^error: InvalidArgument: .* is a symbolic link: convert moves a sharded set into its folder whole/)
    assert.equal(await readlink(join(out, file)), target)
    assert.deepEqual(await readdir(out), [file])
  }
})

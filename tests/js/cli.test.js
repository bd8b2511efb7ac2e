// The command line, run as a user runs it: `node js/cli/main.js ...` in a child process.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile as fsWriteFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { serialize } from '../../js/node.js'
import { FP8_LAYER } from '../fixtures/make-sample.js'

const CLI = fileURLToPath(new URL('../../js/cli/main.js', import.meta.url))
const MAKE_SAMPLE = fileURLToPath(new URL('../fixtures/make-sample.js', import.meta.url))

/** @param {string[]} args */
function run(...args) {
  const r = spawnSync(process.execPath, args, { encoding: 'utf8', timeout: 60_000 })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

/**
 * The inspect --json document for a file, worked out from a plain JSON.parse of its header
 * (docs/architecture.md, "Command line": { byteLength, headerLength, metadata, tensors:
 * [{ name, dtype, shape, byteOffset, byteLength }] }, tensors in file order).
 * @param {Uint8Array} bytes
 */
function expectedJson(bytes) {
  const n = Number(Buffer.from(bytes.buffer, bytes.byteOffset, 8).readBigUInt64LE(0))
  const header = JSON.parse(Buffer.from(bytes.subarray(8, 8 + n)).toString('utf8'))
  const tensors = Object.entries(header).filter(([name]) => name !== '__metadata__')
    .map(([name, e]) => ({ name, dtype: e.dtype, shape: e.shape, byteOffset: 8 + n + e.data_offsets[0], byteLength: e.data_offsets[1] - e.data_offsets[0] }))
    .sort((a, b) => a.byteOffset - b.byteOffset || a.byteLength - b.byteLength)
  return { byteLength: bytes.length, headerLength: n, metadata: header.__metadata__ ?? null, tensors }
}

/** @type {string} */
let dir
/** @type {string} */
let small
/** @type {Uint8Array} */
let smallBytes

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'st-cli-'))
  small = join(dir, 'small.safetensors')
  smallBytes = await serialize({
    'encoder.weight': { dtype: 'BF16', shape: [2, 3], data: new Uint16Array(6) },
    'encoder.bias': { dtype: 'F32', shape: [3], data: new Float32Array([1, 2, 3]) },
    step: { dtype: 'I64', shape: [], data: new BigInt64Array([7n]) },
    empty: { dtype: 'U8', shape: [0], data: new Uint8Array(0) },
  }, { metadata: { format: 'pt', config: '{"hidden": 3}' } })
  await fsWriteFile(small, smallBytes)
})

after(async () => {
  await rm(dir, { recursive: true })
})

test('inspect --json prints exactly the document docs/architecture.md describes (Command line)', () => {
  const r = run(CLI, 'inspect', small, '--json')
  assert.equal(r.stderr, '')
  assert.equal(r.code, 0)
  assert.deepEqual(JSON.parse(r.stdout), expectedJson(smallBytes))
  assert.deepEqual(JSON.parse(r.stdout).tensors.map((/** @type {any} */ t) => t.name), ['step', 'encoder.bias', 'encoder.weight', 'empty'])
})

test('inspect prints a summary naming every tensor with its dtype and shape', () => {
  const r = run(CLI, 'inspect', small)
  assert.equal(r.code, 0)
  assert.equal(r.stderr, '')
  assert.match(r.stdout, /^tensors\s+4$/m)
  assert.match(r.stdout, /^parameters\s+10 \(/m)
  assert.match(r.stdout, /^metadata\s+2 entries$/m)
  for (const [name, dtype, shape] of [['encoder.weight', 'BF16', '[2, 3]'], ['encoder.bias', 'F32', '[3]'], ['step', 'I64', '[]'], ['empty', 'U8', '[0]']])
    assert.match(r.stdout, new RegExp(`^${name.replace('.', '\\.')}\\s+${dtype}\\s+${shape.replace(/[[\]]/g, '\\$&')}\\s`, 'm'))
})

test('inspect --json on the sample model made by tests/fixtures/make-sample.js', async () => {
  const path = join(dir, 'sample.safetensors')
  const made = run(MAKE_SAMPLE, path)
  assert.equal(made.code, 0, made.stderr)
  const bytes = new Uint8Array(await readFile(path))
  const r = run(CLI, 'inspect', path, '--json')
  assert.equal(r.code, 0, r.stderr)
  const { quantized, parameters, ...doc } = JSON.parse(r.stdout)
  assert.deepEqual(doc, expectedJson(bytes))
  assert.equal(doc.metadata.format, 'pt')
  assert.ok(doc.tensors.some((/** @type {any} */ t) => t.dtype === 'F8_E4M3'))
  // Its F8_E4M3 layer with a per-tensor weight_scale is an fp8 weight, found without a config.
  const p = `model.layers.${FP8_LAYER}.mlp.down_proj`
  const stored = doc.tensors.find((/** @type {any} */ t) => t.name === `${p}.weight`)
  assert.deepEqual(quantized, [{ name: `${p}.weight`, scheme: 'fp8', shape: stored.shape,
    parts: { weight: `${p}.weight`, scale: `${p}.weight_scale` }, details: { strategy: 'tensor' } }])
  assert.deepEqual(parameters.byScheme, { fp8: stored.shape[0] * stored.shape[1] })
  assert.equal(parameters.byDtype.F8_E4M3, undefined)
  assert.equal(run(MAKE_SAMPLE).code, 2, 'make-sample without a path is a usage error')
})

test('a corrupt file: exit code 1 and stderr names the error code', async () => {
  const corrupt = join(dir, 'corrupt.safetensors')
  await fsWriteFile(corrupt, Buffer.concat([smallBytes, Buffer.from([0])]))
  const r = run(CLI, 'inspect', corrupt, '--json')
  assert.equal(r.code, 1)
  assert.equal(r.stdout, '')
  const end = smallBytes.length
  assert.equal(r.stderr, `error: MetadataIncompleteBuffer (byte ${end}): tensors end at file byte ${end} but the file is ${end + 1} bytes\n`)

  const truncated = join(dir, 'truncated.safetensors')
  await fsWriteFile(truncated, smallBytes.subarray(0, 20))
  const t = run(CLI, 'inspect', truncated)
  assert.equal(t.code, 1)
  assert.match(t.stderr, /^error: InvalidHeaderLength \(byte 0\): /)

  const missing = run(CLI, 'inspect', join(dir, 'nope.safetensors'))
  assert.equal(missing.code, 1)
  assert.match(missing.stderr, /^error: NotFound: /)
})

test('usage errors: exit code 2', () => {
  const unknown = run(CLI, 'frobnicate', small)
  assert.equal(unknown.code, 2)
  assert.match(unknown.stderr, /^error: unknown command "frobnicate"/)
  assert.match(unknown.stderr, /usage: safetensors-wasm/)
  assert.equal(run(CLI, 'inspect').code, 2)
  const help = run(CLI, '--help')
  assert.equal(help.code, 0)
  assert.match(help.stdout, /^usage: safetensors-wasm/)
})

test('a reader that closes the pipe early (`inspect big | head`): no stack trace, the command\'s own exit code', async () => {
  // 4,000 tensors: the listing is far past a pipe's 64 KiB buffer, so writes meet the closed pipe.
  const many = join(dir, 'many.safetensors')
  /** @type {Record<string, { dtype: 'F32', shape: number[], data: Float32Array }>} */
  const tensors = {}
  for (let i = 0; i < 4000; i++) tensors[`model.layers.${i}.self_attn.q_proj.weight`] = { dtype: 'F32', shape: [1], data: new Float32Array([i]) }
  await fsWriteFile(many, await serialize(tensors))
  const child = spawn(process.execPath, [CLI, 'inspect', many], { stdio: ['ignore', 'pipe', 'pipe'] })
  let stderr = ''
  child.stderr.setEncoding('utf8').on('data', (/** @type {string} */ s) => { stderr += s })
  const first = await new Promise((resolve) => child.stdout.once('data', resolve))
  child.stdout.destroy()  // as `head` exits after its lines
  const code = await new Promise((resolve) => child.on('close', resolve))
  assert.match(String(first), /^file {8}/)
  assert.equal(stderr, '')
  assert.equal(code, 0)
})

// The CLI on Hub addresses: `node js/cli/main.js inspect hf://org/repo --json` in a child process
// against the Hub emulation (hub-server.js), with the endpoint and token from HF_ENDPOINT and
// HF_TOKEN or from --endpoint and --token. The JSON must be what the same file gives locally.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { serialize } from '../../js/node.js'
import { startHub } from './hub-server.js'

const CLI = fileURLToPath(new URL('../../js/cli/main.js', import.meta.url))

/** @type {Awaited<ReturnType<typeof startHub>>} */
let hub
/** @type {string} */
let dir
/** @type {string} the model's file on disk, for the local run to compare with */
let localPath

/**
 * Runs the CLI in a child process (asynchronously: the hub must keep answering) with `env`
 * over an environment without HF_* variables.
 * @param {string[]} args @param {Record<string, string>} [env]
 * @returns {Promise<{ code: number, stdout: string, stderr: string }>}
 */
function run(args, env = {}) {
  const base = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('HF_')))
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 60_000, env: { ...base, ...env } },
      (error, stdout, stderr) => resolve({ code: error ? Number(/** @type {any} */ (error).code ?? 1) : 0, stdout, stderr }))
  })
}

before(async () => {
  hub = await startHub()
  const bytes = await serialize({
    'model.embed.weight': { dtype: 'BF16', shape: [8, 4], data: new Uint16Array(32).fill(0x3f80) },
    'model.norm.weight': { dtype: 'F32', shape: [4], data: new Float32Array([1, 2, 3, 4]) },
    'lm_head.weight': { dtype: 'F16', shape: [4, 8], data: new Uint16Array(32) },
  }, { metadata: { format: 'pt', source: 'cli-hf test' } })
  dir = await mkdtemp(join(tmpdir(), 'st-cli-hf-'))
  localPath = join(dir, 'model.safetensors')
  await writeFile(localPath, bytes)
  hub.addFile('org/model', 'model.safetensors', bytes)
  hub.addFile('org/gated', 'model.safetensors', bytes, { gated: true })
  hub.addFile('datasets/org/data', 'sub/dir/model.safetensors', bytes, { revision: 'v2' })
  const shard1 = await serialize({ 'a.weight': { dtype: 'F32', shape: [2], data: new Float32Array([1, 2]) } })
  const shard2 = await serialize({ 'b.weight': { dtype: 'I64', shape: [1], data: new BigInt64Array([5n]) } })
  const index = { metadata: { total_size: 16 }, weight_map: { 'a.weight': 'model-00001-of-00002.safetensors', 'b.weight': 'model-00002-of-00002.safetensors' } }
  hub.addFile('org/sharded', 'model.safetensors.index.json', new TextEncoder().encode(JSON.stringify(index)))
  hub.addFile('org/sharded', 'model-00001-of-00002.safetensors', shard1)
  hub.addFile('org/sharded', 'model-00002-of-00002.safetensors', shard2)
})

after(async () => {
  await hub?.close()
  if (dir) await rm(dir, { recursive: true })
})

test('inspect hf://org/repo --json with HF_ENDPOINT: the local file\'s JSON, one resolve', async () => {
  const local = await run(['inspect', localPath, '--json'])
  assert.equal(local.code, 0, local.stderr)
  hub.resetStats()
  const r = await run(['inspect', 'hf://org/model', '--json'], { HF_ENDPOINT: hub.base })
  assert.equal(r.code, 0, r.stderr)
  assert.equal(r.stderr, '')
  const json = JSON.parse(r.stdout)
  assert.deepEqual(json, JSON.parse(local.stdout))
  assert.deepEqual(json.metadata, { format: 'pt', source: 'cli-hf test' })
  assert.deepEqual(json.tensors.map((/** @type {any} */ t) => [t.name, t.dtype, t.shape]).sort(),
    [['lm_head.weight', 'F16', [4, 8]], ['model.embed.weight', 'BF16', [8, 4]], ['model.norm.weight', 'F32', [4]]])
  assert.deepEqual(hub.stats.hubLog.map((e) => [e.repo, e.file, e.status]), [['org/model', 'model.safetensors', 302]])
})

test('--endpoint wins over HF_ENDPOINT; datasets, revisions and paths', async () => {
  hub.resetStats()
  const r = await run(['inspect', 'hf://org/model/model.safetensors', '--json', '--endpoint', hub.base],
    { HF_ENDPOINT: 'http://127.0.0.1:1' })
  assert.equal(r.code, 0, r.stderr)
  assert.equal(JSON.parse(r.stdout).tensors.length, 3)
  assert.equal(hub.resolves('model.safetensors', 'org/model'), 1)
  const d = await run(['inspect', 'hf://datasets/org/data@v2/sub/dir/model.safetensors', '--json', `--endpoint=${hub.base}`])
  assert.equal(d.code, 0, d.stderr)
  assert.equal(JSON.parse(d.stdout).tensors.length, 3)
  assert.deepEqual(hub.stats.hubLog.slice(-1).map((e) => [e.repo, e.revision, e.file]), [['datasets/org/data', 'v2', 'sub/dir/model.safetensors']])
})

test('a gated repo: exit 1 without a token; HF_TOKEN or --token open it, and the CDN never sees it', async () => {
  const denied = await run(['inspect', 'hf://org/gated', '--json'], { HF_ENDPOINT: hub.base })
  assert.equal(denied.code, 1)
  assert.equal(denied.stdout, '')
  assert.match(denied.stderr, /^error: HttpError: .*HTTP 401.*restricted.*token/m)
  hub.resetStats()
  const byEnv = await run(['inspect', 'hf://org/gated', '--json'], { HF_ENDPOINT: hub.base, HF_TOKEN: hub.token })
  assert.equal(byEnv.code, 0, byEnv.stderr)
  assert.equal(JSON.parse(byEnv.stdout).tensors.length, 3)
  const byFlag = await run(['inspect', 'hf://org/gated', '--token', hub.token, '--endpoint', hub.base, '--json'],
    { HF_TOKEN: 'hf_not_a_valid_token' })
  assert.equal(byFlag.code, 0, byFlag.stderr)
  assert.deepEqual(byFlag.stdout, byEnv.stdout)
  assert.deepEqual(hub.stats.hubLog.map((e) => e.authorization), [`Bearer ${hub.token}`, `Bearer ${hub.token}`])
  assert.ok(hub.stats.cdnLog.length >= 2)
  assert.ok(hub.stats.cdnLog.every((e) => e.authorization === null))
})

test('a sharded repo by id: inspect lists every shard; verify, stats and convert take hf:// too', async () => {
  const r = await run(['inspect', 'hf://org/sharded', '--json', '--endpoint', hub.base])
  assert.equal(r.code, 0, r.stderr)
  const json = JSON.parse(r.stdout)
  assert.deepEqual(json.shards.map((/** @type {any} */ s) => s.path), ['model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors'])
  assert.deepEqual(json.tensors.map((/** @type {any} */ t) => [t.name, t.shard]),
    [['a.weight', 'model-00001-of-00002.safetensors'], ['b.weight', 'model-00002-of-00002.safetensors']])
  const verify = await run(['verify', 'hf://org/sharded', '--full', '--json', '--endpoint', hub.base])
  assert.equal(verify.code, 0, verify.stderr)
  assert.equal(JSON.parse(verify.stdout).ok, true)
  const stats = await run(['stats', 'hf://org/model', 'model.norm.weight', '--json'], { HF_ENDPOINT: hub.base })
  assert.equal(stats.code, 0, stats.stderr)
  assert.match(stats.stdout, /"mean": 2\.5/)
  const out = join(dir, 'converted.safetensors')
  const convert = await run(['convert', 'hf://org/model', out, '--dtype', 'f32', '--token', hub.token, '--endpoint', hub.base, '--json'])
  assert.equal(convert.code, 0, convert.stderr)
  assert.equal(JSON.parse(convert.stdout).cast, 2)
  const converted = await run(['inspect', out, '--json'])
  assert.deepEqual(JSON.parse(converted.stdout).tensors.map((/** @type {any} */ t) => t.dtype), ['F32', 'F32', 'F32'])
})

test('usage: --token and --endpoint only with hf:// sources, --endpoint a URL; NotFound exits 1', async () => {
  const local = await run(['inspect', localPath, '--token', 'x'])
  assert.equal(local.code, 2)
  assert.match(local.stderr, /--token and --endpoint are for hf:\/\/ addresses/)
  const badEndpoint = await run(['inspect', 'hf://org/model', '--endpoint', 'huggingface.co'])
  assert.equal(badEndpoint.code, 2)
  assert.match(badEndpoint.stderr, /--endpoint takes/)
  const badAddress = await run(['inspect', 'hf://onlyorg', '--endpoint', hub.base])
  assert.equal(badAddress.code, 1)
  assert.match(badAddress.stderr, /^error: InvalidArgument: /m)
  const missing = await run(['inspect', 'hf://org/model/nope.safetensors', '--endpoint', hub.base])
  assert.equal(missing.code, 1)
  assert.match(missing.stderr, /^error: NotFound: .*Entry not found/m)
  const help = await run(['--help'])
  assert.match(help.stdout, /--token TOKEN/)
  assert.match(help.stdout, /hf:\/\/org\/repo/)
})

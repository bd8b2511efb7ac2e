// Secrets in URLs (a password in the userinfo, query values such as ?token=) never reach an
// error (message, stack, body, causes) nor what the CLI prints about a source.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { inspect } from 'node:util'
import { promisify } from 'node:util'
import { open, serialize } from '../../js/node.js'
import { redactUrl } from '../../js/redact.js'
import { startServer } from './http-server.js'

const CLI = fileURLToPath(new URL('../../js/cli/main.js', import.meta.url))
const SECRETS = /secret|hf_abc/

/** @param {string[]} args @returns {Promise<{ code: number, out: string }>} stdout and stderr together */
async function cli(...args) {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 60_000 })
    return { code: 0, out: stdout + stderr }
  } catch (error) {
    const e = /** @type {any} */ (error)
    return { code: e.code, out: `${e.stdout}${e.stderr}` }
  }
}

/** Everything an error shows: its message, stack, own fields, causes (util.inspect prints them all). @param {unknown} error */
const shown = (error) => `${inspect(error, { depth: 8 })}\n${JSON.stringify(error)}`

describe('redactUrl', () => {
  test('masks passwords and every query and fragment value, and nothing else', () => {
    assert.equal(redactUrl('GET http://user:secret@h:8/p@q?token=hf_abc&X-Amz-Signature=a==&flag#k=v: failed.'),
      'GET http://user:***@h:8/p@q?token=***&X-Amz-Signature=***&***#k=***: failed.')
    assert.equal(redactUrl('https://hf_abc@h/x and https://h/y?'), 'https://***@h/x and https://h/y?')
    assert.equal(redactUrl('hf://org/repo@main/model.safetensors'), 'hf://org/repo@main/model.safetensors')
    assert.equal(redactUrl('"http://h/a?sig=hf_abc" (HTTP 403)'), '"http://h/a?sig=***" (HTTP 403)')
  })
})

describe('secrets in a URL', () => {
  /** @type {Awaited<ReturnType<typeof startServer>>} */
  let server
  /** @type {string} */
  let origin
  before(async () => {
    server = await startServer()
    origin = new URL(server.url('/')).host
    server.addFile('/ok.safetensors', await serialize({ t: { dtype: 'F32', shape: [1], data: new Float32Array([1]) } }))
    server.addFile('/fails.safetensors', new Uint8Array(16))
    server.fault('/fails.safetensors', { status: 500, body: `no such key in http://${origin}/fails.safetensors?token=hf_abc` })
  })
  after(() => server.close())

  test('are not in the errors of open()', async () => {
    for (const url of [`http://user:secret@${origin}/missing?token=hf_abc`, `http://${origin}/missing?token=hf_abc&sig=secret`,
      `http://${origin}/fails.safetensors?token=hf_abc`]) {
      const error = await open(url).then(() => null, (e) => e)
      assert.ok(error, `${url} fails`)
      assert.doesNotMatch(shown(error), SECRETS, url)
      assert.match(error.message, new RegExp(`http://(user:\\*\\*\\*@)?${origin}/\\w+(\\.safetensors)?\\?token=\\*\\*\\*`), 'the URL is still named')
    }
  })

  test('are not in what the CLI prints (inspect, verify, a usage mistake)', async () => {
    const url = `http://user:secret@${origin}/ok.safetensors?token=hf_abc`
    const plain = `http://${origin}/ok.safetensors?token=hf_abc`
    for (const args of [['inspect', url], ['verify', url], ['inspect', plain], ['inspect', plain, '--tree'], ['verify', plain],
      ['verify', plain, '--json'], ['diff', plain, plain], ['inspect', plain, '--token', 'x']]) {
      const { code, out } = await cli(...args)
      assert.doesNotMatch(out, SECRETS, `${args.join(' ')} (exit ${code}): ${out}`)
      assert.match(out, /\?token=\*\*\*/, `${args.join(' ')} names the source`)
    }
  })
})

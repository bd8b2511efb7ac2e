// A server that stops answering: no byte for `idleTimeout` ms ends the request, which is retried
// like any transient failure, so the call fails in seconds here, and in about two minutes with
// the defaults (it took Node's 300 s headers timeout four times, twenty minutes, before).
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { open, serialize } from '../../js/node.js'
import { IDLE_TIMEOUT, RETRIES, RETRY_DELAY } from '../../js/io/http.js'
import { startServer } from './http-server.js'

/** 400 KB of data past a 256 KiB first request: a read after opening fetches a range. */
const values = Float32Array.from({ length: 100_000 }, (_, i) => i)
const idleTimeout = 200

/** @type {Awaited<ReturnType<typeof startServer>>} */
let server
before(async () => {
  server = await startServer()
  server.addFile('/m.safetensors', await serialize({ w: { dtype: 'F32', shape: [values.length], data: values } }))
})
after(() => server.close())

/** @param {string} code @param {RegExp} message */
const failsWith = (code, message) => (/** @type {any} */ e) => {
  assert.equal(e.code, code)
  assert.match(e.message, message)
  return true
}

test('no answer at all: NetworkError after the retries, each request ended by the idle timeout', async () => {
  server.resetStats()
  server.fault('/m.safetensors', { hang: true, times: RETRIES + 1 })
  const started = performance.now()
  await assert.rejects(open(server.url('/m.safetensors'), { idleTimeout }), failsWith('NetworkError', /no byte arrived for 200 ms \(idleTimeout\)/))
  assert.equal(server.stats.requests, RETRIES + 1, 'the first request and every retry')
  assert.ok(performance.now() - started < 10_000)
  server.clearFaults()
})

test('a body that stalls midway: ShortRead after the retries; one that answers again reads on', async () => {
  const f = await open(server.url('/m.safetensors'), { idleTimeout })
  try {
    server.resetStats()
    server.fault('/m.safetensors', { stallAfter: 1000, times: RETRIES + 1 })
    await assert.rejects(f.tensor('w'), failsWith('ShortRead', /no byte arrived for 200 ms/))
    assert.equal(server.stats.requests, RETRIES + 1)
    server.fault('/m.safetensors', { stallAfter: 1000, times: 1 })
    const t = await f.tensor('w')
    assert.deepEqual(t.data, values, 'resumed after the bytes that arrived')
    t.dispose()
  } finally {
    f.close()
  }
})

test('the default is finite: four stalled attempts and their backoffs end well within 150 s', () => {
  let worst = (RETRIES + 1) * IDLE_TIMEOUT
  for (let i = 0; i < RETRIES; i++) worst += RETRY_DELAY * 2 ** i
  assert.ok(worst < 150_000, `${worst} ms`)
})

test('idleTimeout is checked: a number of ms over 0, Infinity for none', async () => {
  for (const bad of [0, -1, NaN, '5']) {
    await assert.rejects(open(server.url('/m.safetensors'), { idleTimeout: /** @type {any} */ (bad) }),
      failsWith('InvalidArgument', /idleTimeout/))
  }
  const f = await open(server.url('/m.safetensors'), { idleTimeout: Infinity })
  f.close()
})

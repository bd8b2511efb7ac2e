// A CDN whose signed URLs serve one byte range only, as the Hub's Xet bridges have been seen to
// do (403 "Auth failed: invalid range" for any other): reading goes on through the /resolve/
// URL, one redirect per read, and says so once. `open` as an app calls it: default options
// but the Hub emulation's endpoint.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { open, serialize } from '../../js/node.js'
import { startHub } from './hub-server.js'

/** @type {Awaited<ReturnType<typeof startHub>>} */
let hub
/** Two tensors past the first request's 256 KiB, 1 MiB apart: two reads of their own. */
const a = Float32Array.from({ length: 100_000 }, (_, i) => i)
const b = Float32Array.from({ length: 300_000 }, (_, i) => -i)
before(async () => {
  hub = await startHub({ signRange: true })
  hub.addFile('org/xet', 'model.safetensors', await serialize({
    a: { dtype: 'F32', shape: [a.length], data: a }, b: { dtype: 'F32', shape: [b.length], data: b },
  }))
})
after(() => hub.close())

test('a CDN URL signed for one range: reads go on through the original URL, said once', async (t) => {
  const warn = t.mock.method(console, 'warn', () => {})
  const f = await open('hf://org/xet/model.safetensors', { endpoint: hub.base })
  try {
    hub.resetStats()
    for (const [name, values] of /** @type {const} */ ([['a', a], ['b', b], ['a', a]])) {
      const tensor = await f.tensor(name)
      assert.deepEqual(tensor.data, values, name)
      tensor.dispose()
    }
  } finally {
    f.close()
  }
  assert.equal(warn.mock.callCount(), 1, 'said once')
  assert.match(String(warn.mock.calls[0].arguments[0]), /refuses byte ranges other than the one it was signed for/)
  // The first read: refused, renewed (bytes 0-0), refused again, then through /resolve/; every
  // later read: one resolve and its CDN answer.
  const refused = hub.stats.cdnLog.filter((e) => e.status === 403).length
  assert.equal(refused, 2)
  assert.equal(hub.stats.hub, 2 + 2)
})

test('onWarning takes the message instead of the console', async (t) => {
  const warn = t.mock.method(console, 'warn', () => {})
  /** @type {string[]} */
  const said = []
  const f = await open('hf://org/xet/model.safetensors', { endpoint: hub.base, onWarning: (message) => said.push(message) })
  try {
    const tensor = await f.tensor('b')
    assert.deepEqual(tensor.data, b)
    tensor.dispose()
  } finally {
    f.close()
  }
  assert.equal(said.length, 1)
  assert.match(said[0], /^http:\/\/127\.0\.0\.1:\d+\/org\/xet\/resolve\/main\/model\.safetensors: /)
  assert.doesNotMatch(said[0], /Signature=/, 'the signed URL\'s query stays out of the message')
  assert.equal(warn.mock.callCount(), 0)
})

test('onWarning that is not a function is InvalidArgument, before any request', async () => {
  const before = hub.allRequests().length
  for (const bad of ['log', 1, NaN, null]) {
    await assert.rejects(open('hf://org/xet/model.safetensors', { endpoint: hub.base, onWarning: /** @type {any} */ (bad) }),
      (/** @type {any} */ e) => e.code === 'InvalidArgument' && /onWarning/.test(e.message))
  }
  assert.equal(hub.allRequests().length, before)
})

// The caller's headers go only to the origin of the URL they were given for: a redirect to
// another origin (a CDN, here another port) gets none of them, whatever their name, while the
// reads still work. Two real servers; `open(url)` with its defaults, as users call it.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { open, serialize } from '../../js/node.js'
import { startServer } from './http-server.js'

const SECRETS = {
  'X-Api-Key': 'key-1', 'PRIVATE-TOKEN': 'glpat-2', 'X-Amz-Security-Token': 'sts-3',
  Authorization: 'Bearer hf_4', Cookie: 'session=5',
}
const NAMES = Object.keys(SECRETS).map((name) => name.toLowerCase())
/** 400 KB of data past a 256 KiB first request: reads go to where the redirect led. */
const values = Float32Array.from({ length: 100_000 }, (_, i) => i * 0.5)

/** @type {Awaited<ReturnType<typeof startServer>>} */
let origin
/** @type {Awaited<ReturnType<typeof startServer>>} */
let cdn
let bytes = new Uint8Array(0)
before(async () => {
  [origin, cdn] = await Promise.all([startServer(), startServer()])
  bytes = await serialize({ w: { dtype: 'F32', shape: [values.length], data: values } })
})
after(() => Promise.all([origin.close(), cdn.close()]))

/** @param {import('./http-server.js').LogEntry[]} log @returns {string[]} the secrets that arrived */
const secretsIn = (log) => NAMES.filter((name) => log.some((entry) => entry.headers[name] !== undefined))

/** @param {string} url */
async function readThrough(url) {
  const f = await open(url, { headers: SECRETS })
  try {
    const t = await f.tensor('w')
    assert.deepEqual(t.data, values)
    t.dispose()
  } finally {
    f.close()
  }
}

test('a redirect to another origin: the caller\'s headers reach the origin given, none the CDN', async () => {
  cdn.addFile('/cdn/m.safetensors', bytes)
  origin.fault('/m.safetensors', { redirect: cdn.url('/cdn/m.safetensors') })
  origin.resetStats()
  cdn.resetStats()
  await readThrough(origin.url('/m.safetensors'))
  assert.equal(origin.stats.requests, 1, 'resolved once')
  assert.deepEqual(secretsIn(origin.stats.log), NAMES, 'every header reaches the origin given')
  assert.ok(cdn.stats.requests >= 2, 'the first request and the reads went to the CDN')
  assert.deepEqual(secretsIn(cdn.stats.log), [], 'no header of the caller reaches the CDN')
  origin.clearFaults()
})

test('a relative redirect on the same origin keeps the headers; a hop back from the CDN gets them again', async () => {
  // origin /a -> /b (relative, same origin) -> CDN /c -> origin /d, which serves the file.
  origin.addFile('/d.safetensors', bytes)
  origin.fault('/a.safetensors', { redirect: '/b.safetensors' })
  origin.fault('/b.safetensors', { redirect: cdn.url('/c.safetensors') })
  cdn.fault('/c.safetensors', { redirect: origin.url('/d.safetensors') })
  origin.resetStats()
  cdn.resetStats()
  await readThrough(origin.url('/a.safetensors'))
  assert.deepEqual(cdn.stats.log.map((e) => e.path), ['/c.safetensors'])
  assert.deepEqual(secretsIn(cdn.stats.log), [])
  assert.deepEqual(origin.stats.log.map((e) => e.path).slice(0, 3), ['/a.safetensors', '/b.safetensors', '/d.safetensors'])
  for (const entry of origin.stats.log) assert.equal(entry.headers['x-api-key'], 'key-1', `${entry.path} got the headers`)
  origin.clearFaults()
  cdn.clearFaults()
})

test('a redirect loop fails with HttpError, not a hang', async () => {
  origin.fault('/loop.safetensors', { redirect: '/loop.safetensors' })
  await assert.rejects(open(origin.url('/loop.safetensors')), (e) => {
    assert.equal(/** @type {any} */ (e).code, 'HttpError')
    assert.match(String(/** @type {any} */ (e).message), /more than 20 redirects/)
    return true
  })
  origin.clearFaults()
})

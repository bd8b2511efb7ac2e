// In a page, a redirect's target is hidden from the script (`redirect: 'manual'` answers an
// opaque 'opaqueredirect'), and the browser follows a redirect to another origin with every
// custom header the target's preflight allows (Authorization alone it drops). So a request that
// carries such headers and is redirected is asked again without them: the CDN on another port
// gets none of the caller's headers, even one its CORS rules allow, and the file still reads.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { serialize } from '../../js/node.js'
import { startServer as startAppServer } from '../servers/static-server.js'
import { startServer as startDataServer } from '../js/http-server.js'
import { launchChromium, newPage, skip } from './chromium.js'

/** @type {Awaited<ReturnType<typeof startAppServer>>} */
let app
/** @type {Awaited<ReturnType<typeof startDataServer>>} */
let origin
/** @type {Awaited<ReturnType<typeof startDataServer>>} the CDN: allows the headers, as `*` would */
let cdn
/** @type {import('playwright-core').Browser} */
let browser
const values = [1.5, -2, 3.25]

before(async () => {
  if (skip) return
  app = await startAppServer({ quiet: true })
  app.addFile('/blank.html', new TextEncoder().encode('<!doctype html><title>blank</title>'))
  const allowHeaders = ['X-Api-Key', 'PRIVATE-TOKEN']
  ;[origin, cdn] = await Promise.all([startDataServer({ allowHeaders }), startDataServer({ allowHeaders })])
  cdn.addFile('/cdn/m.safetensors', await serialize({ w: { dtype: 'F32', shape: [3], data: new Float32Array(values) } }))
  origin.fault('/m.safetensors', { redirect: cdn.url('/cdn/m.safetensors') })
  browser = await launchChromium()
})

after(async () => {
  await browser?.close()
  await app?.close()
  await origin?.close()
  await cdn?.close()
})

test('a redirect to another origin: the caller\'s headers reach the origin given, none the CDN', { skip, timeout: 60_000 }, async () => {
  const { page, done } = await newPage(browser)
  await page.goto(app.url('/blank.html'))
  const got = await page.evaluate(async (src) => {
    const { open } = await import('/js/index.js')
    const f = await open(src, { headers: { 'X-Api-Key': 'key-1', 'PRIVATE-TOKEN': 'glpat-2', Authorization: 'Bearer hf_3' } })
    const t = await f.tensor('w')
    return { values: Array.from(/** @type {Float32Array} */ (t.data)) }
  }, origin.url('/m.safetensors'))
  await done()
  assert.deepEqual(got.values, values)
  const names = ['x-api-key', 'private-token', 'authorization']
  const arrived = (/** @type {import('../js/http-server.js').LogEntry[]} */ log) =>
    names.filter((name) => log.some((entry) => entry.headers[name] !== undefined))
  assert.deepEqual(arrived(origin.stats.log), names, 'the origin given gets every header')
  assert.ok(cdn.stats.requests >= 1)
  assert.deepEqual(arrived(cdn.stats.log), [], 'the CDN gets none')
})

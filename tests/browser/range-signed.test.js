// In a page, a CDN URL signed for one range only (403 "Auth failed: invalid range" for any
// other) is given up for the original URL, whose redirect the browser follows per read; the
// page's console is told once.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { serialize } from '../../js/node.js'
import { startServer as startAppServer } from '../servers/static-server.js'
import { startHub } from '../js/hub-server.js'
import { launchChromium, newPage, skip } from './chromium.js'

/** @type {Awaited<ReturnType<typeof startAppServer>>} */
let app
/** @type {Awaited<ReturnType<typeof startHub>>} */
let hub
/** @type {import('playwright-core').Browser} */
let browser

before(async () => {
  if (skip) return
  app = await startAppServer({ quiet: true })
  app.addFile('/blank.html', new TextEncoder().encode('<!doctype html><title>blank</title>'))
  hub = await startHub({ signRange: true })
  const w = Float32Array.from({ length: 100_000 }, (_, i) => i)
  hub.addFile('org/xet', 'model.safetensors', await serialize({ w: { dtype: 'F32', shape: [w.length], data: w } }))
  browser = await launchChromium()
})

after(async () => {
  await browser?.close()
  await app?.close()
  await hub?.close()
})

test('reads go on through the /resolve/ URL, said once in the console', { skip, timeout: 60_000 }, async () => {
  const { page, done } = await newPage(browser)
  /** @type {string[]} */
  const warnings = []
  page.on('console', (m) => { if (m.type() === 'warning') warnings.push(m.text()) })
  await page.goto(app.url('/blank.html'))
  const sums = await page.evaluate(async (src) => {
    const { open } = await import('/js/index.js')
    const f = await open(src)
    const out = []
    for (let i = 0; i < 2; i++) {
      const t = await f.tensor('w')
      out.push(/** @type {Float32Array} */ (t.data).reduce((a, b) => a + b, 0))
      t.dispose()
    }
    return out
  }, `${hub.base}/org/xet/resolve/main/model.safetensors`)
  await done()
  const expected = (100_000 * 99_999) / 2
  assert.deepEqual(sums, [expected, expected])
  assert.equal(warnings.length, 1)
  assert.match(warnings[0], /refuses byte ranges other than the one it was signed for/)
})

// In a page too, a server that stops answering (no headers, or a body that stalls) ends each
// request after `idleTimeout` ms, and the retries after it: NetworkError or ShortRead in seconds.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { serialize } from '../../js/node.js'
import { startServer as startAppServer } from '../servers/static-server.js'
import { startServer as startDataServer } from '../js/http-server.js'
import { launchChromium, newPage, skip } from './chromium.js'

/** @type {Awaited<ReturnType<typeof startAppServer>>} */
let app
/** @type {Awaited<ReturnType<typeof startDataServer>>} */
let data
/** @type {import('playwright-core').Browser} */
let browser

before(async () => {
  if (skip) return
  app = await startAppServer({ quiet: true })
  app.addFile('/blank.html', new TextEncoder().encode('<!doctype html><title>blank</title>'))
  data = await startDataServer()
  const values = Float32Array.from({ length: 100_000 }, (_, i) => i)
  data.addFile('/m.safetensors', await serialize({ w: { dtype: 'F32', shape: [values.length], data: values } }))
  browser = await launchChromium()
})

after(async () => {
  await browser?.close()
  await app?.close()
  await data?.close()
})

test('no answer, then a body that stalls: each ended by idleTimeout, after the retries', { skip, timeout: 60_000 }, async () => {
  const { page, done } = await newPage(browser)
  await page.goto(app.url('/blank.html'))
  const run = (/** @type {string} */ what) => page.evaluate(async ([src, step]) => {
    const { open } = await import('/js/index.js')
    try {
      const f = await open(src, { idleTimeout: 200, retryDelay: 1 })
      if (step === 'read') await f.tensor('w')
      return null
    } catch (error) {
      return { code: /** @type {any} */ (error).code, message: /** @type {any} */ (error).message }
    }
  }, [data.url('/m.safetensors'), what])
  data.fault('/m.safetensors', { hang: true, times: 4 })
  data.resetStats()
  const silent = await run('open')
  assert.equal(silent?.code, 'NetworkError')
  assert.match(silent?.message ?? '', /no byte arrived for 200 ms \(idleTimeout\)/)
  assert.equal(data.stats.requests, 4, 'the first request and three retries')
  data.fault('/m.safetensors', { stallAfter: 1000, times: 1 })  // the first request: its bytes kept
  data.fault('/m.safetensors', { stallAfter: 1000, times: 4 })
  const stalled = await run('read')
  assert.equal(stalled?.code, 'ShortRead')
  assert.match(stalled?.message ?? '', /no byte arrived for 200 ms/)
  await done()
})

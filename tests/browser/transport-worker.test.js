// The transport's promises in a module Worker, as an app's worker calls the browser entry: a
// redirect to another origin carries none of the caller's headers there, and a server that stops
// answering ends in NetworkError after the retries (idleTimeout). The same code as in a page
// (redirect-headers, idle-timeout), run where `location` is a WorkerLocation.
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
  const file = await serialize({ w: { dtype: 'F32', shape: [3], data: new Float32Array(values) } })
  cdn.addFile('/cdn/m.safetensors', file)
  origin.fault('/m.safetensors', { redirect: cdn.url('/cdn/m.safetensors') })
  origin.addFile('/silent.safetensors', file)
  browser = await launchChromium()
})

after(async () => {
  await browser?.close()
  await app?.close()
  await origin?.close()
  await cdn?.close()
})

/**
 * Runs `code` (which imports the package from the app's origin and sets `result`) in a module
 * worker started by a page of that origin; gives back `result`.
 * @param {string} code
 */
async function inWorker(code) {
  const { page, done } = await newPage(browser)
  try {
    await page.goto(app.url('/blank.html'))
    return await page.evaluate(async (source) => {
      const worker = new Worker(URL.createObjectURL(new Blob([`${source}; postMessage(result)`], { type: 'text/javascript' })), { type: 'module' })
      return new Promise((resolve, reject) => {
        worker.onmessage = (e) => resolve(e.data)
        worker.onerror = (e) => reject(new Error(e.message))
      })
    }, code)
  } finally {
    await done()
  }
}

test('in a module worker, a redirect to another origin: the caller\'s headers reach the origin given, none the CDN', { skip, timeout: 60_000 }, async () => {
  const got = await inWorker(`const { open } = await import(${JSON.stringify(app.url('/js/index.js'))})
    const f = await open(${JSON.stringify(origin.url('/m.safetensors'))}, { headers: { 'X-Api-Key': 'key-1', 'PRIVATE-TOKEN': 'glpat-2', Authorization: 'Bearer hf_3' } })
    const t = await f.tensor('w')
    const result = Array.from(t.data)`)
  assert.deepEqual(got, values)
  const names = ['x-api-key', 'private-token', 'authorization']
  const arrived = (/** @type {import('../js/http-server.js').LogEntry[]} */ log) =>
    names.filter((name) => log.some((entry) => entry.headers[name] !== undefined))
  assert.deepEqual(arrived(origin.stats.log), names, 'the origin given gets every header')
  assert.ok(cdn.stats.requests >= 1)
  assert.deepEqual(arrived(cdn.stats.log), [], 'the CDN gets none')
})

test('in a module worker, a server that never answers: NetworkError after the retries, each ended by idleTimeout', { skip, timeout: 60_000 }, async () => {
  origin.fault('/silent.safetensors', { hang: true, times: 4 })
  origin.resetStats()
  const got = await inWorker(`const { open } = await import(${JSON.stringify(app.url('/js/index.js'))})
    let result = null
    try { await open(${JSON.stringify(origin.url('/silent.safetensors'))}, { idleTimeout: 200, retryDelay: 1 }) } catch (error) { result = { code: error.code, message: error.message } }`)
  assert.equal(got?.code, 'NetworkError')
  assert.match(got?.message ?? '', /no byte arrived for 200 ms \(idleTimeout\)/)
  assert.equal(origin.stats.requests, 4, 'the first request and three retries')
})

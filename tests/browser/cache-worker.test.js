// The `cache` option in a module Worker of headless Chromium, as an app's worker uses it: a
// worker on one origin (tests/browser/app/cache-worker.js) imports the browser entry (/js/index.js,
// unbundled) and opens a file of another origin with `{ cache: true }` and default options
// otherwise (the Cache API, from the worker). Each open is a new worker, so what carries over is
// the Cache API alone. Checked on the data server's side: a reopen is answered 304 with no body
// (the header is never sent again), a file changed on the server (new ETag) is read anew and its
// entry replaced, and the values read are right each time.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { serialize } from '../../js/node.js'
import { startServer as startAppServer } from '../servers/static-server.js'
import { startServer as startDataServer } from '../js/http-server.js'
import { launchChromium, skip } from './chromium.js'

/** Where origin A serves the worker: the repository's own layout, so that its relative imports
 * (../../../js/index.js) are the browser entry at /js/index.js. */
const APP_URL = '/tests/browser/app/'
const WORKER = 'cache-worker.js'
const PATH = '/cached/model.safetensors'

/** @type {Awaited<ReturnType<typeof startAppServer>>} origin A: the page and the worker */
let app
/** @type {Awaited<ReturnType<typeof startDataServer>>} origin B: the data */
let data
/** @type {import('playwright-core').Browser} */
let browser

/** @param {string} prefix @param {number} scale */
const model = (prefix, scale) => serialize({
  [`${prefix}.a`]: { dtype: 'F32', shape: [4], data: Float32Array.from([1, 2, 3, 4], (v) => v * scale) },
  [`${prefix}.b`]: { dtype: 'F32', shape: [2], data: Float32Array.from([5, 6], (v) => v * scale) },
})

/** Where a file's header ends (8 bytes of length, then the JSON). @param {Uint8Array} bytes */
const headerEnd = (bytes) => 8 + Number(new DataView(bytes.buffer, bytes.byteOffset, 8).getBigUint64(0, true))

before(async () => {
  if (skip) return
  app = await startAppServer({ quiet: true })
  app.addFile(`${APP_URL}blank.html`, new TextEncoder().encode('<!doctype html><title>blank</title>'))
  for (const name of [WORKER, 'checks.js']) app.addFile(APP_URL + name, await readFile(new URL(`./app/${name}`, import.meta.url)))
  data = await startDataServer()
  browser = await launchChromium()
})

after(async () => {
  await browser?.close()
  await app?.close()
  await data?.close()
})

/**
 * Starts a new module worker in the page, has it open `url` with `cache: true`, and ends it.
 * @param {import('playwright-core').Page} page @param {string} url
 * @returns {Promise<Extract<import('./app/cache-worker.js').CacheWorkerMessage, { kind: 'result' }>>}
 */
function openInWorker(page, url) {
  return page.evaluate(([script, src]) => new Promise((resolve, reject) => {
    const worker = new Worker(script, { type: 'module' })
    const end = (/** @type {() => void} */ settle) => { clearTimeout(timer); worker.terminate(); settle() }
    const timer = setTimeout(() => end(() => reject(new Error('no answer from the worker in 20 s'))), 20_000)
    worker.onmessage = (event) => {
      const m = /** @type {import('./app/cache-worker.js').CacheWorkerMessage} */ (event.data)
      end(() => (m.kind === 'result' ? resolve(m) : reject(Object.assign(new Error(m.error.message), m.error))))
    }
    worker.onerror = (event) => {
      event.preventDefault()
      end(() => reject(new Error(`the worker failed: ${event.message || 'an error event without a message (a module that did not load?)'}`)))
    }
    worker.postMessage({ url: src })
  }), /** @type {const} */ ([APP_URL + WORKER, url]))
}

/** What the data server was asked for the file (no preflights): status, If-None-Match, range, body bytes. */
const asked = () => data.stats.log.filter((e) => e.method === 'GET' && e.path === PATH)
  .map((e) => ({ status: e.status, ifNoneMatch: e.ifNoneMatch, range: e.range, bytes: e.bytes }))

/**
 * Checks a reopen's requests: the first a validation with `etag`, answered 304 without a body;
 * after it at most the tensors' bytes (Chromium's HTTP cache may answer them), never the header.
 * @param {string} etag @param {number} end where the header ends @param {string} what
 */
function assertRevalidated(etag, end, what) {
  const [validation, ...rest] = asked()
  assert.deepEqual([validation?.status, validation?.ifNoneMatch, validation?.bytes], [304, etag, 0], `${what}: one validation, answered 304 with no body`)
  for (const r of rest) {
    const from = Number(/^bytes=(\d+)-/.exec(r.range ?? '')?.[1] ?? 0)
    assert.ok(r.status === 206 && from >= end, `${what}: after the 304, the tensors' bytes alone: ${JSON.stringify(r)} (the header ends at ${end})`)
  }
}

test('cache: true in a module worker: a reopen is answered 304 with no body; a changed file is read anew', { skip, timeout: 60_000 }, async () => {
  const first = await model('first', 1)
  data.addFile(PATH, first)
  const page = await browser.newPage()
  try {
    await page.goto(app.url(`${APP_URL}blank.html`))
    const url = data.url(PATH)
    const firstValues = { 'first.a': [1, 2, 3, 4], 'first.b': [5, 6] }
    const etag = `"v1-${first.length}"`

    data.resetStats()
    const opened = await openInWorker(page, url)
    assert.deepEqual([opened.names, opened.values], [['first.a', 'first.b'], firstValues])
    assert.deepEqual(asked().map((r) => [r.status, r.ifNoneMatch]), [[206, null]], 'the first open: the usual request, the file whole in it')
    assert.deepEqual(opened.stored.filter((s) => s.part === 'meta').map((s) => s.etag), [etag], 'the worker stored the header')

    data.resetStats()
    const again = await openInWorker(page, url)
    assert.deepEqual([again.names, again.values], [opened.names, firstValues], 'the same values, from a new worker')
    assertRevalidated(etag, headerEnd(first), 'the reopen')

    // The file changes (same length, another ETag): the server XORs what it sends with the
    // version after the first, so the new content is XORed beforehand.
    const second = await model('other', 10)
    assert.equal(second.length, first.length)
    data.addVirtual(PATH, { size: second.length, fill: (out, o) => { for (let i = 0; i < out.length; i++) out[i] = second[o + i] ^ 2 } })
    data.changeAfter(PATH, 0)
    const newEtag = `"v2-${second.length}"`
    data.resetStats()
    const changed = await openInWorker(page, url)
    assert.deepEqual([changed.names, changed.values], [['other.a', 'other.b'], { 'other.a': [10, 20, 30, 40], 'other.b': [50, 60] }],
      'the new file, not the entry')
    assert.deepEqual(asked().map((r) => [r.status, r.ifNoneMatch]), [[206, etag]], 'the validation was answered with the new file')
    const metas = changed.stored.filter((s) => s.part === 'meta')
    assert.deepEqual(metas.map((m) => m.etag), [newEtag], 'one entry, the new version')
    assert.deepEqual(changed.stored.filter((s) => s.part === 'body').map((b) => b.v), [metas[0].ver], 'the old version\'s bytes are gone')

  } finally {
    await page.close()
  }
})

// Chromium's HTTP cache keeps the tensor range the reopen before the change fetched (the data
// server sends no Cache-Control, so it is fresh by heuristic). The reopen after the change
// validates the header (304, the new ETag); its range request is answered from the HTTP cache
// with the old version's bytes and ETag, which the library asks again from the server (cache
// mode reload) before calling it a change. Without that the last open fails with SourceChanged.
test('cache: true in a module worker: the reopen after a change reads the new file\'s tensors', {
  skip, timeout: 60_000,
}, async () => {
  const path = '/changing/model.safetensors'
  const first = await model('first', 1)
  data.addFile(path, first)
  const page = await browser.newPage()
  try {
    await page.goto(app.url(`${APP_URL}blank.html`))
    const url = data.url(path)
    await openInWorker(page, url)
    await openInWorker(page, url)  // restored from the entry: the tensors' range is fetched on its own
    const second = await model('other', 10)
    data.addVirtual(path, { size: second.length, fill: (out, o) => { for (let i = 0; i < out.length; i++) out[i] = second[o + i] ^ 2 } })
    data.changeAfter(path, 0)
    const changed = await openInWorker(page, url)
    assert.deepEqual(changed.values, { 'other.a': [10, 20, 30, 40], 'other.b': [50, 60] })
    data.resetStats()
    const last = await openInWorker(page, url)
    assert.deepEqual(last.values, changed.values)
    const gets = data.stats.log.filter((e) => e.method === 'GET' && e.path === path)
    assert.deepEqual([gets[0]?.status, gets[0]?.ifNoneMatch], [304, `"v2-${second.length}"`], 'one validation of the new entry')
    assert.ok(gets.slice(1).some((g) => g.status === 206 && g.range !== null && g.range !== `bytes=0-${headerEnd(second) - 1}`),
      'the tensors\' range came from the server')
  } finally {
    await page.close()
  }
})

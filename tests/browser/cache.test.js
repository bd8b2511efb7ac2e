// The `cache` option in headless Chromium, as a page uses it: the browser entry (/js/index.js,
// unbundled) on one origin opens files of another with `cache: true` (the Cache API). Reopening
// costs one request, answered 304 (counted on the data server); a file changed on the server is
// read anew and its entry replaced, never served; and a server that does not allow If-None-Match
// in CORS preflights (web-demo/serve.js) still costs one request per reopen, answered by the
// usual 206 whose ETag says the entry holds. An entry altered in the Cache API (its header or a
// range) is not served: its digest no longer matches, and the file is read from the server.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { serialize } from '../../js/node.js'
import { startServer as startAppServer } from '../servers/static-server.js'
import { startServer as startDataServer } from '../js/http-server.js'
import { launchChromium, skip } from './chromium.js'

/** @type {Awaited<ReturnType<typeof startAppServer>>} origin A: the page */
let app
/** @type {Awaited<ReturnType<typeof startAppServer>>} origin C: a page of its own, reading origin A's files */
let other
/** @type {Awaited<ReturnType<typeof startDataServer>>} origin B: the data */
let data
/** @type {import('playwright-core').Browser} */
let browser

const BLANK = new TextEncoder().encode('<!doctype html><title>blank</title>')

/** @param {string} prefix @param {number} scale */
const model = (prefix, scale) => serialize({
  [`${prefix}.a`]: { dtype: 'F32', shape: [4], data: Float32Array.from([1, 2, 3, 4], (v) => v * scale) },
  [`${prefix}.b`]: { dtype: 'F32', shape: [2], data: Float32Array.from([5, 6], (v) => v * scale) },
})

before(async () => {
  if (skip) return
  app = await startAppServer({ quiet: true })
  app.addFile('/blank.html', BLANK)
  other = await startAppServer({ quiet: true })
  other.addFile('/blank.html', BLANK)
  data = await startDataServer()
  browser = await launchChromium()
})

after(async () => {
  await browser?.close()
  await app?.close()
  await other?.close()
  await data?.close()
})

/**
 * In the page: opens `url` with `cache` (default true), reads its first tensor, and lists the
 * Cache API's entries.
 * @param {import('playwright-core').Page} page @param {string} url @param {any} [options] open's
 */
function openInPage(page, url, options = { cache: true }) {
  return page.evaluate(async ([src, opts]) => {
    const { open } = await import('/js/index.js')
    const f = /** @type {import('../../js/index.js').SafetensorsFile} */ (await open(src, opts))
    const t = await f.tensor(f.names[0])
    const values = Array.from(t.toFloat32())
    t.dispose()
    await f.close()
    const cache = await caches.open('safetensors-wasm')
    const stored = []
    for (const request of await cache.keys()) {
      const url = new URL(request.url)
      const part = url.pathname.split('/').pop()
      const meta = part === 'meta' ? await (await cache.match(request))?.json() : null
      stored.push({ part, v: url.searchParams.get('v'), etag: meta?.etag ?? null, ver: meta?.ver ?? null })
    }
    return { names: f.names, values, stored }
  }, /** @type {const} */ ([url, options]))
}

/** What the data server was asked (no preflights): [status, If-None-Match]. */
const asked = () => data.stats.log.filter((e) => e.method === 'GET').map((e) => [e.status, e.ifNoneMatch])

test('cache: true in a page: a reopen costs one request, a 304, and a changed file is read anew, never served', { skip, timeout: 60_000 }, async () => {
  const path = '/cached/model.safetensors'
  const first = await model('first', 1)
  data.addFile(path, first)
  const page = await browser.newPage()
  try {
    await page.goto(app.url('/blank.html'))
    data.resetStats()
    const opened = await openInPage(page, data.url(path))
    assert.deepEqual([opened.names, opened.values], [['first.a', 'first.b'], [1, 2, 3, 4]])
    const etag = `"v1-${first.length}"`
    assert.deepEqual(asked().slice(0, 1), [[206, null]], 'the first open: the usual request')
    const meta = opened.stored.find((s) => s.part === 'meta')
    assert.equal(meta?.etag, etag)

    data.resetStats()
    const again = await openInPage(page, data.url(path))
    assert.deepEqual([again.names, again.values], [opened.names, opened.values])
    // The tensor read may be answered by Chromium's own HTTP cache: what the server sees after
    // the validation is at most that read.
    assert.deepEqual(asked()[0], [304, etag], 'one validation, answered 304')
    assert.deepEqual(asked().slice(1), asked().length > 1 ? [[206, null]] : [], 'then at most the tensor read')

    // The file changes (same length, another ETag): the server XORs what it sends with the
    // version after the first, so the new content is XORed beforehand.
    const second = await model('other', 10)
    assert.equal(second.length, first.length)
    data.addVirtual(path, { size: second.length, fill: (out, o) => { for (let i = 0; i < out.length; i++) out[i] = second[o + i] ^ 2 } })
    data.changeAfter(path, 0)
    data.resetStats()
    const changed = await openInPage(page, data.url(path))
    assert.deepEqual([changed.names, changed.values], [['other.a', 'other.b'], [10, 20, 30, 40]], 'the new file, not the entry')
    assert.deepEqual(asked().slice(0, 1), [[206, etag]], 'the validation was answered with the new file')
    const metas = changed.stored.filter((s) => s.part === 'meta')
    assert.deepEqual(metas.map((m) => m.etag), [`"v2-${second.length}"`], 'one entry, the new version')
    const bodies = changed.stored.filter((s) => s.part === 'body')
    assert.deepEqual(bodies.map((b) => b.v), [metas[0].ver], 'the old version\'s bytes are gone')
  } finally {
    await page.close()
  }
})

test('a server that does not allow If-None-Match cross-origin: one request per reopen all the same, the ETag compared', { skip, timeout: 60_000 }, async () => {
  // web-demo/serve.js allows Range, If-Range and Authorization in preflights, not If-None-Match.
  const bytes = await model('strict', 2)
  app.addFile('/strict/model.safetensors', bytes)
  const page = await browser.newPage()
  try {
    await page.goto(other.url('/blank.html'))
    const url = app.url('/strict/model.safetensors')
    const gets = () => app.stats.log.filter((e) => e.method === 'GET' && e.path === '/strict/model.safetensors').map((e) => e.status)
    app.resetStats()
    const opened = await openInPage(page, url)
    assert.deepEqual(opened.values, [2, 4, 6, 8])
    assert.deepEqual(gets(), [206])
    /** What the page asked for the file: each request's If-None-Match, and whether it failed. */
    let seen = new Map()
    page.on('request', (r) => { if (r.url() === url) seen.set(r, { inm: r.headers()['if-none-match'] ?? null, failed: false }) })
    page.on('requestfailed', (r) => { const s = seen.get(r); if (s) s.failed = r.failure()?.errorText ?? true })
    for (let i = 0; i < 2; i++) {
      app.resetStats()
      seen = new Map()
      const again = await openInPage(page, url)
      assert.deepEqual([again.names, again.values], [opened.names, opened.values])
      assert.equal(gets()[0], 206, 'the first request, whose ETag matched the entry')
      const conditional = [...seen.values()].filter((s) => s.inm !== null)
      if (i === 0) {
        assert.ok(conditional.length > 0 && conditional.every((s) => s.failed),
          `If-None-Match tried and refused by the preflight: ${JSON.stringify([...seen.values()])}`)
      } else {
        assert.deepEqual(conditional, [], 'the origin is not asked with If-None-Match again')
      }
    }
  } finally {
    await page.close()
  }
})

test('ranges: true in a page: tensor bytes kept in the Cache API, a reopen reads them without a request', { skip, timeout: 60_000 }, async () => {
  // A first tensor past the first answer (256 KiB); Chromium's HTTP cache is kept out of it
  // (no-store), so that what the server does not see came from the Cache API.
  const big = Float32Array.from({ length: 100_000 }, (_, i) => i % 977)
  const bytes = await serialize({ 'a.big': { dtype: 'F32', shape: [100_000], data: big } })
  data.addFile('/ranges/model.safetensors', bytes)
  const options = { cache: { ranges: true }, requestInit: { cache: 'no-store' } }
  const page = await browser.newPage()
  try {
    await page.goto(app.url('/blank.html'))
    data.resetStats()
    const opened = await openInPage(page, data.url('/ranges/model.safetensors'), options)
    assert.deepEqual(opened.values, Array.from(big))
    assert.deepEqual(asked().map((a) => a[0]), [206, 206], 'the first answer and the rest of the tensor')
    const ver = opened.stored.find((s) => s.part === 'meta')?.ver
    assert.deepEqual(opened.stored.filter((s) => s.part === 'range').map((s) => s.v), [ver, ver], 'two ranges of this version')
    data.resetStats()
    const again = await openInPage(page, data.url('/ranges/model.safetensors'), options)
    assert.deepEqual(again.values, Array.from(big))
    assert.deepEqual(asked().map((a) => a[0]), [304], 'the validation alone')
  } finally {
    await page.close()
  }
})

test('an entry altered in the Cache API (another body under the same key) is not served: it is read from the server', { skip, timeout: 60_000 }, async () => {
  const big = Float32Array.from({ length: 100_000 }, (_, i) => i % 977)
  const bytes = await serialize({
    'ok.a': { dtype: 'F32', shape: [4], data: Float32Array.from([1, 2, 3, 4]) },
    'ok.big': { dtype: 'F32', shape: [100_000], data: big },
  })
  const page = await browser.newPage()
  try {
    await page.goto(app.url('/blank.html'))
    // Within maxAge (no request) and validated (a 304): the header's entry, then its ranges.
    for (const [part, maxAge] of /** @type {const} */ ([['body', 60], ['body', 0], ['range', 60], ['range', 0]])) {
      const path = `/altered-${part}-${maxAge}/model.safetensors`
      data.addFile(path, bytes)
      const options = { cache: { ranges: true, maxAge }, requestInit: { cache: 'no-store' } }
      await openInPage(page, data.url(path), options)
      const altered = await page.evaluate(async ([src, which]) => {
        // The entry's made-up URLs start with the SHA-256 of its key (cache.js).
        const key = new TextEncoder().encode(`header ${src}`)
        const hex = Array.from(new Uint8Array(await crypto.subtle.digest('SHA-256', key)), (b) => b.toString(16).padStart(2, '0')).join('')
        const cache = await caches.open('safetensors-wasm')
        let n = 0
        for (const request of await cache.keys()) {
          if (!request.url.includes(`/${hex}/${which}?`)) continue
          const body = new Uint8Array(await /** @type {Response} */ (await cache.match(request)).arrayBuffer())
          body[10] ^= 1  // a byte of the header's JSON, or of a tensor
          await cache.put(request, new Response(body))
          n++
        }
        return n
      }, /** @type {const} */ ([data.url(path), part]))
      assert.ok(altered > 0, `${part}: altered`)
      data.resetStats()
      const again = await page.evaluate(async ([src, opts]) => {
        const { open } = await import('/js/index.js')
        const f = /** @type {import('../../js/index.js').SafetensorsFile} */ (await open(src, opts))
        const values = []
        for (const name of f.names) {
          const t = await f.tensor(name)
          values.push(Array.from(t.toFloat32()))
          t.dispose()
        }
        await f.close()
        return { names: f.names, values }
      }, /** @type {const} */ ([data.url(path), options]))
      assert.deepEqual(again, { names: ['ok.a', 'ok.big'], values: [[1, 2, 3, 4], Array.from(big)] }, `${part}, maxAge ${maxAge}`)
      assert.ok(asked().some(([status]) => status === 206), `${part}, maxAge ${maxAge}: read from the server again`)
    }
  } finally {
    await page.close()
  }
})

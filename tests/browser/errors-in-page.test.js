// What a page sees when a read fails, with the browser entry and default options: a server on
// another origin that sends no CORS headers (the browser says only "Failed to fetch"; the error
// must say CORS is the likely cause and which headers to send), a page served in place of the
// file (NotSafetensors), an S3-style 403 (HttpError with its status and body), a NaN option
// and a ByteSource that gives more bytes than asked.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import { serialize } from '../../js/node.js'
import { startServer as startAppServer } from '../servers/static-server.js'
import { startServer as startDataServer } from '../js/http-server.js'
import { launchChromium, skip } from './chromium.js'


/** @type {Awaited<ReturnType<typeof startAppServer>>} */
let app
/** @type {Awaited<ReturnType<typeof startDataServer>>} */
let data
/** @type {import('node:http').Server} a server that knows nothing of CORS */
let plain
/** @type {string} */
let plainOrigin
/** @type {import('playwright-core').Browser} */
let browser

const S3 = '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code><Message>Request has expired</Message></Error>'

before(async () => {
  if (skip) return
  app = await startAppServer({ quiet: true })
  app.addFile('/blank.html', new TextEncoder().encode('<!doctype html><title>blank</title>'))
  data = await startDataServer()
  const file = await serialize({ w: { dtype: 'F32', shape: [2], data: new Float32Array([1, 2]) } })
  data.addFile('/m/model.safetensors', file)
  data.addFile('/org/repo/blob/main/model.safetensors', file)
  data.fault('/org/repo/blob/main/model.safetensors', {
    replace: new TextEncoder().encode('<!DOCTYPE html><html><head><title>org/repo</title></head><body>a page</body></html>'),
    headers: { 'Content-Type': 'text/html; charset=utf-8' },
  })
  data.addFile('/expired/model.safetensors', file)
  data.fault('/expired/model.safetensors', { status: 403, body: S3, headers: { 'Content-Type': 'application/xml' } })
  plain = createServer((_, res) => {
    res.writeHead(206, { 'Content-Range': `bytes 0-7/${file.length}`, 'Content-Length': 8 })
    res.end(file.subarray(0, 8))
  })
  await new Promise((resolve) => plain.listen(0, '127.0.0.1', () => resolve(undefined)))
  plainOrigin = `http://127.0.0.1:${/** @type {import('node:net').AddressInfo} */ (plain.address()).port}`
  browser = await launchChromium()
})

after(async () => {
  await browser?.close()
  await app?.close()
  await data?.close()
  plain?.close()
})

/**
 * Opens `url` in a page with the browser entry and default options; the error as plain data.
 * @param {string} url
 */
async function openInPage(url) {
  const page = await browser.newPage()
  try {
    await page.goto(app.url('/blank.html'))
    return await page.evaluate(async (src) => {
      const { open } = await import('/js/index.js')
      try {
        await open(src)
        return null
      } catch (error) {
        const e = /** @type {any} */ (error)
        return { name: e.name, code: e.code, status: e.status, body: e.body, message: e.message }
      }
    }, url)
  } finally {
    await page.close()
  }
}

test('a server on another origin without CORS headers: NetworkError saying CORS is the likely cause', { skip, timeout: 60_000 }, async () => {
  const error = await openInPage(`${plainOrigin}/model.safetensors`)
  assert.ok(error)
  assert.equal(error.name, 'SafetensorsError')
  assert.equal(error.code, 'NetworkError')
  assert.match(error.message, new RegExp(`This page is on ${app.origin} and the file on ${plainOrigin}; the likely cause is CORS`))
  assert.match(error.message, new RegExp(`"Access-Control-Allow-Origin: ${app.origin}" \\(or \\*\\)`))
  assert.match(error.message, /Access-Control-Expose-Headers: Content-Range/)
})

test('a page served in place of the file: NotSafetensors with the /resolve/ URL to use', { skip, timeout: 60_000 }, async () => {
  const url = data.url('/org/repo/blob/main/model.safetensors')
  const error = await openInPage(url)
  assert.ok(error)
  assert.equal(error.code, 'NotSafetensors')
  assert.equal(error.status, 200)
  assert.ok(error.message.includes(`the file itself is at ${url.replace('/blob/', '/resolve/')}`), error.message)
})

test('an S3-style 403 on another origin: HttpError with its status and body', { skip, timeout: 60_000 }, async () => {
  const error = await openInPage(data.url('/expired/model.safetensors'))
  assert.ok(error)
  assert.equal(error.code, 'HttpError')
  assert.equal(error.status, 403)
  assert.equal(error.body, S3)
  assert.match(error.message, /HTTP 403 Forbidden: AccessDenied: Request has expired/)
})

test('a NaN option in a page (as Number() of a missing setting gives): InvalidArgument naming it, no request', { skip, timeout: 60_000 }, async () => {
  const page = await browser.newPage()
  try {
    await page.goto(app.url('/blank.html'))
    data.resetStats()
    const codes = await page.evaluate(async (src) => {
      const { open } = await import('/js/index.js')
      const codeOf = (/** @type {Promise<unknown>} */ p) => p.then(() => 'resolved', (e) => `${e.code}: ${e.message}`)
      const f = await open(src)
      return [await codeOf(open(src, { retries: Number(undefined) })), await codeOf(f.tensor('w', { concurrency: Number(undefined) }))]
    }, data.url('/m/model.safetensors'))
    assert.match(codes[0], /^InvalidArgument: retries must be an integer from 0 to 100, got NaN/)
    assert.match(codes[1], /^InvalidArgument: concurrency must be an integer from 1 to 65536, got NaN/)
    assert.equal(data.stats.requests, 1, 'only the first open\'s request')
  } finally {
    await page.close()
  }
})

test('a ByteSource in a page that gives more bytes than asked: InvalidSource, not a write past a heap block', { skip, timeout: 60_000 }, async () => {
  const page = await browser.newPage()
  try {
    await page.goto(app.url('/blank.html'))
    const said = await page.evaluate(async () => {
      const { open, serialize } = await import('/js/index.js')
      const bytes = await serialize({ w: { dtype: 'F32', shape: [2], data: new Float32Array([1, 2]) } })
      const source = { byteLength: bytes.length, read: async (/** @type {number} */ offset, /** @type {number} */ length) => bytes.slice(offset, offset + length + 8) }
      return open(source).then(() => 'opened', (e) => `${e.code}: ${e.message}`)
    })
    assert.match(said, /^InvalidSource: the source gave 16 bytes at offset 0 where 8 were asked for/)
  } finally {
    await page.close()
  }
})

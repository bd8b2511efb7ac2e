// The inspector's server (web-demo/serve.js) as a browser meets it: the page's own files come
// with a Content-Security-Policy that allows no inline script and no framing, nosniff, and no
// CORS; data (the samples) comes with CORS so other pages may read it. That the inspector works
// under the policy is shown by its browser tests, which fail on any console error.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { after, before, test } from 'node:test'
import { CONTENT_SECURITY_POLICY } from '../../web-demo/serve.js'
import { startServer } from '../servers/static-server.js'

/** @type {Awaited<ReturnType<typeof startServer>>} */
let server
before(async () => {
  server = await startServer({ quiet: true })
  server.addFile('/sample/tiny.safetensors', new Uint8Array(16))
})
after(() => server.close())

test("the page's own files: a CSP without inline script or framing, nosniff, no CORS", async () => {
  for (const path of ['/web-demo/', '/web-demo/app.js', '/js/index.js']) {
    const response = await fetch(server.url(path))
    await response.arrayBuffer()
    assert.equal(response.status, 200, path)
    const csp = response.headers.get('content-security-policy') ?? ''
    assert.equal(csp, CONTENT_SECURITY_POLICY)
    const directives = new Map(csp.split(';').map((d) => d.trim().split(/\s+/)).map(([name, ...values]) => [name, values]))
    assert.deepEqual(directives.get('frame-ancestors'), ["'none'"])
    assert.deepEqual(directives.get('script-src'), ["'self'", "'wasm-unsafe-eval'"])
    assert.deepEqual(directives.get('connect-src'), ['*'])
    assert.equal(response.headers.get('x-content-type-options'), 'nosniff')
    assert.equal(response.headers.get('x-frame-options'), 'DENY')
    assert.equal(response.headers.get('access-control-allow-origin'), null, `${path} must not be readable by other origins`)
  }
  // The policy allows no inline script: the page has none.
  const html = readFileSync(new URL('../../web-demo/index.html', import.meta.url), 'utf8')
  for (const tag of html.match(/<script\b[^>]*>/g) ?? []) assert.match(tag, /\bsrc=/, `an inline script: ${tag}`)
  assert.doesNotMatch(html, /\son[a-z]+=/i, 'an inline event handler')
})

test('data: CORS for any origin, with the headers a ranged reader needs exposed, and nosniff', async () => {
  const response = await fetch(server.url('/sample/tiny.safetensors'), { headers: { Range: 'bytes=0-7' } })
  await response.arrayBuffer()
  assert.equal(response.status, 206)
  assert.equal(response.headers.get('access-control-allow-origin'), '*')
  assert.match(response.headers.get('access-control-expose-headers') ?? '', /Content-Range/)
  assert.equal(response.headers.get('x-content-type-options'), 'nosniff')
})

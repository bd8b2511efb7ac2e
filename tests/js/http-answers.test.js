// What servers answer and what the reader makes of it: files that are not safetensors, compressed
// ranges, error bodies, failures that name their cause, progress while opening. Against the
// test server in http-server.js and, for TLS, a self-signed HTTPS server made here; default
// options unless a case is about an option.
import assert from 'node:assert/strict'
import { execFileSync, spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer as createHttpsServer } from 'node:https'
import { createServer as createNetServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { ERROR_CODES, ERROR_INFO, ShardedFile, open, serialize } from '../../js/node.js'
/** @typedef {import('../../js/node.js').SafetensorsError} SafetensorsError */
import { startServer } from './http-server.js'
import { fails } from './fails.js'

const fast = { retryDelay: 1 }
const CLI = new URL('../../js/cli/main.js', import.meta.url).pathname
const text = (/** @type {string} */ s) => new TextEncoder().encode(s)

/** @type {Awaited<ReturnType<typeof startServer>>} */
let server
/** @type {Uint8Array} */
let file
before(async () => {
  server = await startServer()
  file = await serialize({
    a: { dtype: 'F32', shape: [64, 64], data: new Float32Array(4096).map((_, i) => i) },
    b: { dtype: 'U8', shape: [3], data: new Uint8Array([7, 8, 9]) },
  }, { metadata: { format: 'pt' } })
})
after(() => server.close())

const HTML = '<!DOCTYPE html>\n<html><head><title>model.safetensors · org/repo at main</title></head><body>' +
  'x'.repeat(3000) + '</body></html>'
const LFS = 'version https://git-lfs.github.com/spec/v1\noid sha256:' + 'ab'.repeat(32) + '\nsize 4294967296\n'
const S3 = '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code><Message>Request has expired</Message>' +
  '<Expires>2026-01-01T00:00:00Z</Expires></Error>'

test('not a safetensors file: an HTML page, a Git LFS pointer, XML, JSON; served with 200 or read from disk', async () => {
  // The Hub's /blob/ page: 200, text/html, whatever the Range.
  server.addFile('/org/repo/blob/main/model.safetensors', file)
  server.fault('/org/repo/blob/main/model.safetensors', { replace: text(HTML), headers: { 'Content-Type': 'text/html; charset=utf-8' } })
  let e = await fails(open(server.url('/org/repo/blob/main/model.safetensors')), 'NotSafetensors')
  assert.match(e.message, /\(HTTP 200, Content-Type text\/html; charset=utf-8\) is an HTML page \("model\.safetensors · org\/repo at main"\)/)
  assert.ok(e.message.includes(`the file itself is at ${server.url('/org/repo/resolve/main/model.safetensors')}`), e.message)
  assert.equal(e.status, 200)
  assert.equal(/** @type {SafetensorsError} */ (e.cause).code, 'HeaderTooLarge')

  // A login page served in place of the file, with its own Content-Type.
  server.clearFaults()
  server.addFile('/login.safetensors', file)
  server.fault('/login.safetensors', { times: 1, replace: text('<html><body>Sign in</body></html>'), headers: { 'Content-Type': 'text/html' } })
  e = await fails(open(server.url('/login.safetensors')), 'NotSafetensors', /\(HTTP 200, Content-Type text\/html\) is an HTML page, .*open the URL of the file itself/)

  // Served with 206 as bytes of a file, it is still a page.
  server.addFile('/plain/model.safetensors', text(HTML))
  await fails(open(server.url('/plain/model.safetensors')), 'NotSafetensors', /\(HTTP 206, Content-Type application\/octet-stream\) is an HTML page/)

  server.addFile('/lfs/model.safetensors', text(LFS))
  e = await fails(open(server.url('/lfs/model.safetensors')), 'NotSafetensors')
  assert.match(e.message, /is a Git LFS pointer \(sha256:abab[a-f0-9]+, 4294967296 bytes\), not the file: .*git lfs pull/)

  server.addFile('/s3/model.safetensors', text(S3))
  await fails(open(server.url('/s3/model.safetensors')), 'NotSafetensors', /an XML document, .*: AccessDenied: Request has expired$/)

  server.addFile('/json/model.safetensors', text('{"error":"Repository not found"}'))
  await fails(open(server.url('/json/model.safetensors')), 'NotSafetensors', /a JSON document, not a safetensors file: \{"error":"Repository not found"\}/)

  const index = JSON.stringify({ metadata: {}, weight_map: { a: 'model-00001-of-00001.safetensors' } })
  server.addFile('/idx/model.safetensors', text(index))
  await fails(open(server.url('/idx/model.safetensors')), 'NotSafetensors', /a sharded index .*ending in \.index\.json/)

  const dir = mkdtempSync(join(tmpdir(), 'st-sniff-'))
  try {
    writeFileSync(join(dir, 'model.safetensors'), LFS)
    e = await fails(open(join(dir, 'model.safetensors')), 'NotSafetensors', /model\.safetensors is a Git LFS pointer/)
    assert.equal(e.status, null)
    assert.ok(!e.message.includes('HTTP'), e.message)
    // The CLI says the same, as its error line.
    const cli = spawnSync(process.execPath, [CLI, 'inspect', join(dir, 'model.safetensors')], { encoding: 'utf8' })
    assert.equal(cli.status, 1)
    assert.match(cli.stderr, /^error: NotSafetensors: .*model\.safetensors is a Git LFS pointer .*git lfs pull/)
  } finally {
    rmSync(dir, { recursive: true })
  }
  // Bytes, and a Blob: the same verdicts.
  await fails(open(text(HTML)), 'NotSafetensors', /^bytes in memory is an HTML page/)
  await fails(open(new Blob([LFS])), 'NotSafetensors', /^blob is a Git LFS pointer/)
})

test('bytes that are none of those keep the reference verdict', async () => {
  const junk = new Uint8Array(64).map((_, i) => (i * 97 + 200) & 0xff)
  await fails(open(junk), 'HeaderTooLarge')
  await fails(open(text('plain words, not a file of any kind we know')), 'HeaderTooLarge')
  await fails(open(new Uint8Array([60, 104])), 'HeaderTooSmall')  // "<h": too short to say more
  // A real file whose header length is wrong stays InvalidHeaderLength, whatever follows it.
  const truncated = file.slice(0, 40)
  await fails(open(truncated), 'InvalidHeaderLength')
})

test('a compressed byte range is ContentEncoded, on the first answer as on later ones', async () => {
  server.addFile('/gz/first.safetensors', file)
  server.fault('/gz/first.safetensors', { times: 1, encoded: 'gzip' })
  await fails(open(server.url('/gz/first.safetensors'), fast), 'ContentEncoded', /Content-Encoding: gzip.*Turn compression off for \.safetensors files/)

  server.addFile('/gz/later.safetensors', file)
  const f = await open(server.url('/gz/later.safetensors'), { ...fast, initialFetchSize: 64 })
  server.fault('/gz/later.safetensors', { encoded: 'br' })
  const e = await fails(f.tensor('a'), 'ContentEncoded', /Content-Encoding: br/)
  assert.equal(e.status, 206)
  server.clearFaults()
  await f.close()
})

test('Node asks for identity encoding on every ranged request', async () => {
  server.addFile('/ae/model.safetensors', file)
  server.resetStats()
  const f = await open(server.url('/ae/model.safetensors'), { initialFetchSize: 64 })
  const t = await f.tensor('a')
  t.dispose()
  const log = server.stats.log.filter((e) => e.path === '/ae/model.safetensors')
  assert.ok(log.length >= 2)
  // undici adds its own `identity` to a ranged request (as the Fetch standard says); either way
  // nothing but identity is accepted.
  for (const entry of log) assert.match(entry.acceptEncoding ?? '', /^identity(, identity)*$/)
})

test('a whole-body 200 without a length: refused past the threshold, read through with allowFullDownload', async () => {
  server.addFile('/nolength/model.safetensors', file)
  server.fault('/nolength/model.safetensors', { gzipWhole: true })
  await fails(open(server.url('/nolength/model.safetensors'), { ...fast, wholeFileThreshold: 1000 }), 'RangeNotSupported',
    /no length given, over 1000.*allowFullDownload: true/)
  const f = /** @type {import('../../js/node.js').SafetensorsFile} */ (
    await open(server.url('/nolength/model.safetensors'), { ...fast, wholeFileThreshold: 1000, allowFullDownload: true }))
  assert.equal(f.byteLength, file.length)
  const local = /** @type {import('../../js/node.js').SafetensorsFile} */ (await open(file))
  for (const name of f.names) {
    const [t, u] = [await f.tensor(name), await local.tensor(name)]
    assert.deepEqual(t.copy(), u.copy())
    t.dispose()
    u.dispose()
  }
  server.clearFaults()
  await f.close()
})

test('a 416 whose Content-Range gives another length is SourceChanged; with the same length RangeNotSatisfiable', async () => {
  server.addFile('/416/model.safetensors', file)
  const f = await open(server.url('/416/model.safetensors'), { ...fast, initialFetchSize: 64 })
  server.fault('/416/model.safetensors', { times: 1, total416: 100 })
  await fails(f.tensor('a'), 'SourceChanged', new RegExp(`the file was ${file.length} bytes, now 100`))
  server.fault('/416/model.safetensors', { times: 1, total416: file.length })
  await fails(f.tensor('a'), 'RangeNotSatisfiable')
  await f.close()
})

test('a range answered once with another version (a stale cache on the way) is asked again and read, with default options', async () => {
  // Past the first request's window (256 KiB), so that the tensor is a range of its own.
  const big = await serialize({ a: { dtype: 'F32', shape: [1024, 512], data: new Float32Array(1024 * 512).map((_, i) => i) } })
  server.addFile('/stale-once/model.safetensors', big)
  const f = /** @type {import('../../js/node.js').SafetensorsFile} */ (await open(server.url('/stale-once/model.safetensors')))
  try {
    const ranges = () => server.stats.log.filter((e) => e.path === '/stale-once/model.safetensors' && e.range !== null && !e.range.startsWith('bytes=0-'))
    const before = ranges().length
    server.fault('/stale-once/model.safetensors', { times: 1, staleEtag: '"v0-old"' })
    const t = await f.tensor('a')
    assert.equal(t.data[1024 * 512 - 1], 1024 * 512 - 1)
    t.dispose()
    const asked = ranges().slice(before)
    assert.equal(asked.length, 2, 'the range, then once more')
    assert.equal(asked[0].range, asked[1].range)
    server.fault('/stale-once/model.safetensors', { staleEtag: '"v0-old"' })
    await fails(f.tensor('a'), 'SourceChanged', /"v0-old"/)
    server.clearFaults()
  } finally {
    await f.close()
  }
})

// A browser's HTTP cache may answer a range with a copy of the version before (it knows nothing
// of a version validated since; tests/browser/cache-worker.test.js has Chromium do it). Here a
// fetch stands in for such a cache: it answers ranges past the header with another ETag and other
// bytes: not when asked to reload ('once'), or even then (a copy the cache will not let go of).
test('a range of another version is asked again once from the server (cache mode reload); a second is SourceChanged', async () => {
  server.addFile('/stale/model.safetensors', file)
  /** @type {{ cache: string | undefined, stale: boolean }[]} */
  const calls = []
  /** @type {'off' | 'once' | 'always'} */
  let mode = 'off'
  /** @type {typeof fetch} */
  const staleCache = async (input, init) => {
    const range = /** @type {string} */ (new Headers(init?.headers).get('range'))
    const [from, to] = range.slice(6).split('-').map(Number)
    const copy = from > 0 && (mode === 'always' || (mode === 'once' && init?.cache !== 'reload'))
    calls.push({ cache: init?.cache, stale: copy })
    if (!copy) return fetch(input, init)
    return new Response(new Uint8Array(to - from + 1).fill(0xee), { status: 206, headers: {
      ETag: '"v0-old"', 'Content-Range': `bytes ${from}-${to}/${file.length}`, 'Content-Length': String(to - from + 1) } })
  }
  const f = /** @type {import('../../js/node.js').SafetensorsFile} */ (
    await open(server.url('/stale/model.safetensors'), { ...fast, fetch: staleCache, initialFetchSize: 64 }))
  try {
    calls.length = 0
    mode = 'once'
    const t = await f.tensor('a')
    assert.deepEqual(Array.from(t.data.subarray(0, 4)), [0, 1, 2, 3])
    assert.equal(t.data[4095], 4095)
    t.dispose()
    assert.deepEqual(calls, [{ cache: undefined, stale: true }, { cache: 'reload', stale: false }])
    calls.length = 0
    mode = 'always'
    await fails(f.tensor('a'), 'SourceChanged', /"v0-old"/)
    assert.deepEqual(calls, [{ cache: undefined, stale: true }, { cache: 'reload', stale: true }])
  } finally {
    await f.close()
  }
})

test('HttpError carries the status and what the server said; the credentials hint only without credentials', async () => {
  server.addFile('/denied/model.safetensors', file)
  server.fault('/denied/model.safetensors', { times: 1, status: 403, body: S3, headers: { 'Content-Type': 'application/xml' } })
  let e = await fails(open(server.url('/denied/model.safetensors'), fast), 'HttpError')
  assert.equal(e.status, 403)
  assert.equal(e.body, S3.slice(0, 200))
  assert.match(e.message, /HTTP 403 Forbidden: AccessDenied: Request has expired \(if the file needs permission, pass credentials/)

  server.fault('/denied/model.safetensors', { times: 1, status: 401, headers: { 'X-Error-Message': 'Access to model org/repo is restricted.' } })
  e = await fails(open(server.url('/denied/model.safetensors'), { ...fast, headers: { Authorization: 'Bearer hf_x' } }), 'HttpError')
  assert.equal(e.status, 401)
  assert.match(e.message, /HTTP 401 Unauthorized: Access to model org\/repo is restricted\.$/)

  e = await fails(open(server.url('/nothing/here.safetensors'), fast), 'NotFound', /HTTP 404 Not Found: not found$/)
  assert.equal(e.status, 404)
  assert.equal(e.body, 'not found')

  server.fault('/denied/model.safetensors', { times: 4, status: 503, body: 'x'.repeat(5000), headers: { 'Content-Type': 'text/plain' } })
  e = await fails(open(server.url('/denied/model.safetensors'), fast), 'HttpError')
  assert.equal(e.status, 503)
  assert.equal(e.body, 'x'.repeat(200))
  server.clearFaults()
})

/** A loopback port nothing listens on. */
async function closedPort() {
  const probe = createNetServer()
  await new Promise((resolve) => probe.listen(0, '127.0.0.1', () => resolve(undefined)))
  const { port } = /** @type {import('node:net').AddressInfo} */ (probe.address())
  await new Promise((resolve) => probe.close(() => resolve(undefined)))
  return port
}

test('a refused connection names ECONNREFUSED and is not retried', async () => {
  const url = `http://127.0.0.1:${await closedPort()}/model.safetensors`
  const e = await fails(open(url), 'NetworkError', /could not request the first 262144 bytes: ECONNREFUSED/)
  assert.ok(!e.message.includes('fetch failed'), e.message)
  let calls = 0
  await fails(open(url, { fetch: (input, init) => { calls++; return fetch(input, init) }, retryDelay: 1 }), 'NetworkError')
  assert.equal(calls, 1)
})

test('a port fetch blocks (6000, as browsers do) is named as such and not retried', async () => {
  const url = 'http://127.0.0.1:6000/model.safetensors'
  await fails(open(url), 'NetworkError', /: fetch refuses to connect to port 6000, one of the ports the Fetch standard blocks.*another port$/)
  let calls = 0
  await fails(open(url, { fetch: (input, init) => { calls++; return fetch(input, init) }, retryDelay: 1 }), 'NetworkError', /port 6000/)
  assert.equal(calls, 1)
  // Another failure without a code keeps the reason undici gives under "fetch failed".
  const odd = async () => { throw new TypeError('fetch failed', { cause: new Error('something odd') }) }
  await fails(open('https://models.example/model.safetensors', { fetch: odd, retryDelay: 1 }), 'NetworkError', /: fetch failed \(something odd\)$/)
})

test('a name that does not resolve is not retried either (the error as undici gives it)', async () => {
  let calls = 0
  const dns = Object.assign(new Error('getaddrinfo ENOTFOUND models.example'), { code: 'ENOTFOUND' })
  const fetchFn = async () => { calls++; throw new TypeError('fetch failed', { cause: dns }) }
  await fails(open('https://models.example/model.safetensors', { fetch: fetchFn, retryDelay: 1 }), 'NetworkError',
    /ENOTFOUND \(getaddrinfo ENOTFOUND models\.example\)$/)
  assert.equal(calls, 1)
  // A reset connection is worth another try: retried `retries` times.
  calls = 0
  const reset = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' })
  const flaky = async () => { calls++; throw new TypeError('fetch failed', { cause: reset }) }
  await fails(open('https://models.example/model.safetensors', { fetch: flaky, retryDelay: 1 }), 'NetworkError', /ECONNRESET/)
  assert.equal(calls, 4)
})

test('a self-signed certificate names the TLS error and is not retried', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'st-tls-'))
  try {
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1',
      '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')], { stdio: 'ignore' })
  } catch {
    t.skip('openssl is not installed: cannot make a certificate')
    return
  }
  let connections = 0
  const tls = createHttpsServer({ key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) },
    (_, res) => res.end())
  tls.on('connection', () => connections++)
  await new Promise((resolve) => tls.listen(0, '127.0.0.1', () => resolve(undefined)))
  try {
    const { port } = /** @type {import('node:net').AddressInfo} */ (tls.address())
    await fails(open(`https://127.0.0.1:${port}/model.safetensors`), 'NetworkError', /DEPTH_ZERO_SELF_SIGNED_CERT/)
    assert.equal(connections, 1)
  } finally {
    tls.close()
    rmSync(dir, { recursive: true })
  }
})

test("open's onProgress: the first request, then the rest of a long header; an index as it arrives", async () => {
  server.addFile('/progress/model.safetensors', file)
  /** @type {{ loaded: number, total: number }[]} */
  let seen = []
  const f = await open(server.url('/progress/model.safetensors'), { onProgress: (p) => seen.push(p) })
  assert.ok(seen.length >= 1)
  assert.deepEqual(seen.at(-1), { loaded: file.length, total: file.length })  // a small file: all in one request
  await f.close()

  // A 32-byte first request: the header's remaining bytes follow, counted from the file's start.
  seen = []
  const g = /** @type {import('../../js/node.js').SafetensorsFile} */ (
    await open(server.url('/progress/model.safetensors'), { initialFetchSize: 32, onProgress: (p) => seen.push(p) }))
  const headerEnd = 8 + g.headerLength
  assert.deepEqual(seen[0], { loaded: 32, total: 32 })
  assert.deepEqual(seen.at(-1), { loaded: headerEnd, total: headerEnd })
  for (let i = 1; i < seen.length; i++) assert.ok(seen[i].loaded >= seen[i - 1].loaded)
  // Reads do not call open's onProgress.
  const before = seen.length
  ;(await g.tensor('b')).dispose()
  assert.equal(seen.length, before)
  await g.close()

  const index = text(JSON.stringify({ metadata: {}, weight_map: { a: 'model.safetensors', b: 'model.safetensors' } }))
  server.addFile('/progress/model.safetensors.index.json', index)
  seen = []
  const s = await open(server.url('/progress/model.safetensors.index.json'), { onProgress: (p) => seen.push(p) })
  assert.ok(s instanceof ShardedFile)
  assert.deepEqual(seen.at(-1), { loaded: index.length, total: index.length })
  ;(await s.tensor('a')).dispose()  // opening a shard does not report to open's onProgress
  assert.equal(seen.length, 1)
  await s.close()
})

test('an index over HTTP is refused past its size cap, declared or not', async () => {
  const big = new Uint8Array(64 * 1024 * 1024 + 1).fill(32)
  server.addFile('/bigindex/model.safetensors.index.json', big)
  server.resetStats()
  const capped = { ...fast, maxIndexBytes: 64 * 1024 * 1024 }
  await fails(open(server.url('/bigindex/model.safetensors.index.json'), capped), 'InvalidIndex', /67108865 bytes or more, over the 67108864/)
  server.fault('/bigindex/model.safetensors.index.json', { gzipWhole: true })
  await fails(open(server.url('/bigindex/model.safetensors.index.json'), capped), 'InvalidIndex', /over (the )?67108864/)
  server.clearFaults()
  // Under a larger cap the same bytes are read through, and are no index.
  await fails(open(server.url('/bigindex/model.safetensors.index.json'), { ...fast, maxIndexBytes: 128 * 1024 * 1024 }), 'InvalidIndex',
    /67108865 bytes and no JSON/)
  server.clearFaults()
})

test('ERROR_CODES: frozen, and every code the sources throw is in it', () => {
  assert.ok(Object.isFrozen(ERROR_CODES) && Object.isFrozen(ERROR_INFO) && Object.isFrozen(ERROR_INFO.HttpError))
  assert.deepEqual([...ERROR_CODES], Object.keys(ERROR_INFO))
  assert.equal(new Set(ERROR_CODES).size, ERROR_CODES.length)
  const root = new URL('../../', import.meta.url)
  const thrown = new Set()
  const files = execFileSync('git', ['ls-files', 'js', 'web-demo', 'src/error.cpp'], { cwd: root, encoding: 'utf8' }).split('\n')
  for (const path of files.filter((p) => /\.(js|cpp)$/.test(p))) {
    const source = readFileSync(new URL(path, root), 'utf8')
    for (const m of source.matchAll(/SafetensorsError\(\s*'(\w+)'|SafetensorsError\([^,\n]*\? '(\w+)' : '(\w+)'|return "(\w+)";/g))
      for (const code of m.slice(1)) if (code && code !== 'Ok' && code !== 'Unknown') thrown.add(code)
  }
  assert.ok(thrown.size > 40, `only ${thrown.size} codes found: the scan broke`)
  for (const code of thrown) assert.ok(ERROR_CODES.includes(code), `${code} is thrown but not in ERROR_CODES`)
  // The README's table and the d.ts union list exactly these codes.
  const readme = readFileSync(new URL('README.md', root), 'utf8')
  const table = [...readme.matchAll(/^\| `(\w+)` \|/gm)].map((m) => m[1])
  assert.deepEqual(table, [...ERROR_CODES])
  const dts = readFileSync(new URL('js/index.d.ts', root), 'utf8')
  const union = /export type ErrorCode =([^]*?)\n\n/.exec(dts)?.[1] ?? ''
  assert.deepEqual([...union.matchAll(/'(\w+)'/g)].map((m) => m[1]), [...ERROR_CODES])
})

// The `cache` option of open() in Node (js/io/cache.js, js/io/node-cache.js): against the test
// server (http-server.js) and the Hub emulation (hub-server.js), every request counted and the
// cache folder read back. Each test has a folder of its own.
import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { open, serialize } from '../../js/node.js'
import { fails } from './fails.js'
import { startServer } from './http-server.js'
import { startHub } from './hub-server.js'
import { httpCache } from '../../js/io/cache.js'
import { folderCache } from '../../js/io/node-cache.js'
import { CACHE, urlSource } from '../../js/io/http.js'
import { fetchBytes } from '../../js/io/http-whole.js'

/** @typedef {import('../../js/node.js').SafetensorsFile} SafetensorsFile */
/** @typedef {import('../../js/node.js').ShardedFile} ShardedFile */
/** @typedef {import('../../js/io/cache.js').EntryMeta} EntryMeta */

/** @type {Awaited<ReturnType<typeof startServer>>} */
let server
/** @type {string} */
let root
before(async () => {
  server = await startServer()
  root = mkdtempSync(join(tmpdir(), 'st-cache-'))
})
after(async () => {
  await server.close()
  rmSync(root, { recursive: true, force: true })
})

let folders = 0
/** A cache folder of the test's own. */
const newDir = () => join(root, `cache-${++folders}`)

/**
 * The entries of a cache folder: each one's meta.json and the names of its files.
 * @param {string} dir @returns {{ meta: EntryMeta, files: string[], path: string }[]}
 */
function entries(dir) {
  let names
  try { names = readdirSync(dir) } catch { return [] }
  return names.map((name) => {
    const path = join(dir, name)
    return { path, meta: JSON.parse(readFileSync(join(path, 'meta.json'), 'utf8')), files: readdirSync(path).sort() }
  })
}

/** Every file under `dir`, whole, as text. @param {string} dir */
function everything(dir) {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((name) => statSync(join(dir, name)).isFile())
    .map((name) => readFileSync(join(dir, name), 'latin1')).join('\n')
}

/** What the server was asked since `resetStats`: [path, status, range, If-None-Match]. */
const asked = () => server.stats.log.map((e) => [e.path, e.status, e.range, e.ifNoneMatch])

/** A small model whose tensors are named with `prefix`. @param {string} prefix @param {number} [scale] */
function model(prefix, scale = 1) {
  return serialize({
    [`${prefix}.a`]: { dtype: 'F32', shape: [4], data: Float32Array.from([1, 2, 3, 4], (v) => v * scale) },
    [`${prefix}.b`]: { dtype: 'F32', shape: [2, 2], data: Float32Array.from([5, 6, 7, 8], (v) => v * scale) },
  })
}

/** The header's length from a file's first 8 bytes, plus 8. @param {Uint8Array} bytes */
const headerEnd = (bytes) => 8 + Number(new DataView(bytes.buffer, bytes.byteOffset, 8).getBigUint64(0, true))

/**
 * The file at `path` becomes `bytes` (as long as the old one) under a new ETag: the server XORs
 * each byte with the version after the first, so the content served here is XORed beforehand.
 * @param {string} path @param {Uint8Array} bytes
 */
function replaceSameLength(path, bytes) {
  const version = 2
  server.addVirtual(path, { size: bytes.length, fill: (out, o) => { for (let i = 0; i < out.length; i++) out[i] = bytes[o + i] ^ version } })
  server.changeAfter(path, 0)
}

/** @param {SafetensorsFile | ShardedFile} f @param {string} name */
async function values(f, name) {
  const t = await f.tensor(name)
  try { return Array.from(t.toFloat32()) } finally { t.dispose() }
}

/** @param {string} url @param {Record<string, any>} options */
async function opened(url, options) {
  return /** @type {SafetensorsFile} */ (/** @type {unknown} */ (await open(url, options)))
}

test('a reopened file costs one request, a 304 to If-None-Match, and is served the header the first open kept', async () => {
  const dir = newDir()
  const bytes = await model('one')
  server.addFile('/one/model.safetensors', bytes)
  const url = server.url('/one/model.safetensors')
  const etag = `"v1-${bytes.length}"`

  server.resetStats()
  const f = await opened(url, { cache: { dir } })
  assert.deepEqual(asked(), [['/one/model.safetensors', 206, 'bytes=0-262143', null]])
  await f.close()
  const [entry] = entries(dir)
  assert.equal(entries(dir).length, 1)
  assert.deepEqual([entry.meta.kind, entry.meta.url, entry.meta.etag, entry.meta.length, entry.meta.private],
    ['header', url, etag, bytes.length, false])
  assert.deepEqual(entry.files, [`body-${entry.meta.ver}`, 'meta.json'])
  assert.deepEqual(new Uint8Array(readFileSync(join(entry.path, `body-${entry.meta.ver}`))), bytes.subarray(0, headerEnd(bytes)),
    'the header is kept, up to its end: not the rest of the first answer')

  server.resetStats()
  const g = await opened(url, { cache: { dir } })
  assert.deepEqual(asked(), [['/one/model.safetensors', 304, 'bytes=0-262143', etag]])
  assert.deepEqual([g.names, g.byteLength, g.info('one.b')], [f.names, bytes.length, f.info('one.b')])
  server.resetStats()
  assert.deepEqual(await values(g, 'one.a'), [1, 2, 3, 4])
  assert.deepEqual(asked(), [], 'reopened at once, its tensors come from the first answer of the same version, as the first open read them')
  await g.close()

  // Another file kept since: the reopened one has its header alone, and its reads check the version.
  server.addFile('/one/other.safetensors', await model('other'))
  await (await opened(server.url('/one/other.safetensors'), { cache: { dir } })).close()
  const h = await opened(url, { cache: { dir } })
  server.resetStats()
  assert.deepEqual(await values(h, 'one.a'), [1, 2, 3, 4])
  assert.deepEqual(server.stats.log.map((e) => [e.status, e.ifRange]), [[206, etag]], 'reads still check the version, with If-Range')
  await h.close()
})

test('within maxAge a reopen makes no request; past it, one validation', async () => {
  const dir = newDir()
  server.addFile('/fresh/model.safetensors', await model('fresh'))
  const url = server.url('/fresh/model.safetensors')
  const options = { cache: { dir, maxAge: 0.4 } }
  await (await opened(url, options)).close()

  server.resetStats()
  const f = await opened(url, options)
  assert.deepEqual(asked(), [], 'no request within maxAge')
  assert.deepEqual(await values(f, 'fresh.b'), [5, 6, 7, 8])
  assert.equal(server.stats.log.length, 1, 'the read alone')
  await f.close()

  await new Promise((resolve) => setTimeout(resolve, 500))
  server.resetStats()
  await (await opened(url, options)).close()
  assert.deepEqual(asked().map((a) => a[1]), [304], 'past maxAge: validated')
  server.resetStats()
  await (await opened(url, options)).close()
  assert.deepEqual(asked(), [], 'the 304 started a new window')
})

test('a file changed on the server (another ETag) is read anew; its old entry is dropped, never served', async () => {
  const dir = newDir()
  const path = '/changed/model.safetensors'
  const before = await model('old')
  server.addFile(path, before)
  const url = server.url(path)
  const f = await opened(url, { cache: { dir, ranges: true } })
  assert.deepEqual(await values(f, 'old.a'), [1, 2, 3, 4])
  await f.close()
  const [old] = entries(dir)
  assert.ok(old.files.some((name) => name.startsWith('range-')), 'a range was kept')

  const now = await model('new', 10)
  assert.equal(now.length, before.length)
  replaceSameLength(path, now)
  server.resetStats()
  const g = await opened(url, { cache: { dir, ranges: true } })
  assert.deepEqual(asked(), [[path, 206, 'bytes=0-262143', `"v1-${before.length}"`]], 'the validation answered with the new file')
  assert.deepEqual(g.names, ['new.a', 'new.b'])
  assert.deepEqual(await values(g, 'new.a'), [10, 20, 30, 40])
  await g.close()
  const all = entries(dir)
  assert.equal(all.length, 1)
  const [entry] = all
  assert.equal(entry.meta.etag, `"v2-${now.length}"`)
  assert.notEqual(entry.meta.ver, old.meta.ver)
  assert.ok(entry.files.every((name) => name === 'meta.json' || name.includes(entry.meta.ver)),
    `only the new version's files are left: ${entry.files}`)
  assert.deepEqual(new Uint8Array(readFileSync(join(entry.path, `body-${entry.meta.ver}`))), now.subarray(0, headerEnd(now)))
})

test('without a strong ETag nothing is cached: no ETag, or a weak one', async () => {
  const dir = newDir()
  server.addFile('/plain/model.safetensors', await model('plain'))
  server.fault('/plain/model.safetensors', { dropHeaders: ['ETag'] })
  const url = server.url('/plain/model.safetensors')
  for (let i = 0; i < 2; i++) {
    server.resetStats()
    await (await opened(url, { cache: { dir, maxAge: 60 } })).close()
    assert.deepEqual(asked(), [['/plain/model.safetensors', 206, 'bytes=0-262143', null]])
  }
  assert.deepEqual(entries(dir), [])

  // A weak ETag: the same meaning, not necessarily the same bytes.
  server.addFile('/weak/model.safetensors', await model('weak'))
  /** @type {(input: string, init: RequestInit) => Promise<Response>} */
  const weaken = async (input, init) => {
    const response = await fetch(input, init)
    const headers = new Headers(response.headers)
    const etag = headers.get('etag')
    if (etag) headers.set('ETag', `W/${etag}`)
    return new Response(response.body, { status: response.status, headers })
  }
  for (let i = 0; i < 2; i++) {
    server.resetStats()
    await (await opened(server.url('/weak/model.safetensors'), { cache: { dir, maxAge: 60 }, fetch: weaken })).close()
    assert.deepEqual(asked(), [['/weak/model.safetensors', 206, 'bytes=0-262143', null]])
  }
  assert.deepEqual(entries(dir), [])
})

test('a server that ignores Range is not cached: the whole file each time', async () => {
  const dir = newDir()
  server.addFile('/whole/model.safetensors', await model('whole'))
  server.fault('/whole/model.safetensors', { ignoreRange: true })
  for (let i = 0; i < 2; i++) {
    server.resetStats()
    const f = await opened(server.url('/whole/model.safetensors'), { cache: { dir } })
    assert.deepEqual(await values(f, 'whole.b'), [5, 6, 7, 8])
    await f.close()
    assert.deepEqual(asked(), [['/whole/model.safetensors', 200, 'bytes=0-262143', null]])
  }
  assert.deepEqual(entries(dir), [])
})

test('an entry served within maxAge that turns out stale is dropped at the first read that sees the change', async () => {
  const dir = newDir()
  const path = '/stale/model.safetensors'
  const before = await model('was')
  server.addFile(path, before)
  const url = server.url(path)
  const options = { cache: { dir, maxAge: 60 }, retryDelay: 1 }
  await (await opened(url, options)).close()
  replaceSameLength(path, await model('now', 3))

  const f = await opened(url, options)
  assert.deepEqual(f.names, ['was.a', 'was.b'], 'within maxAge, without a request: the entry as it was')
  await fails(f.tensor('was.a'), 'SourceChanged')
  await f.close()
  assert.deepEqual(entries(dir), [], 'the change seen, the entry is gone')
  server.resetStats()
  const g = await opened(url, options)
  assert.deepEqual(asked(), [[path, 206, 'bytes=0-262143', null]])
  assert.deepEqual(await values(g, 'now.b'), [15, 18, 21, 24])
  await g.close()
})

test('a header longer than the first answer is kept whole, and its second request is not made again', async () => {
  const dir = newDir()
  /** @type {Record<string, any>} */
  const tensors = {}
  for (let i = 0; i < 60; i++) tensors[`model.layers.${i}.mlp.down_proj.weight`] = { dtype: 'F32', shape: [2], data: Float32Array.from([i, -i]) }
  const bytes = await serialize(tensors)
  const end = headerEnd(bytes)
  assert.ok(end > 2048)
  server.addFile('/long/model.safetensors', bytes)
  const url = server.url('/long/model.safetensors')
  const options = { cache: { dir }, initialFetchSize: 1024 }
  server.resetStats()
  const f = await opened(url, options)
  assert.deepEqual(asked(), [
    ['/long/model.safetensors', 206, 'bytes=0-1023', null],
    ['/long/model.safetensors', 206, `bytes=1024-${end - 1}`, null],
  ])
  await f.close()
  const [entry] = entries(dir)
  assert.equal(statSync(join(entry.path, `body-${entry.meta.ver}`)).size, end)
  server.resetStats()
  const g = await opened(url, options)
  assert.deepEqual(asked().map((a) => a[1]), [304])
  assert.deepEqual(g.names, f.names)
  assert.deepEqual(await values(g, 'model.layers.7.mlp.down_proj.weight'), [7, -7])
  await g.close()
})

/** @param {string} base a folder on the server @param {number} count shards */
async function shardedSet(base, count) {
  /** @type {Record<string, string>} */
  const weightMap = {}
  for (let s = 0; s < count; s++) {
    const file = `model-${String(s + 1).padStart(5, '0')}-of-${String(count).padStart(5, '0')}.safetensors`
    const name = `model.layers.${s}.weight`
    weightMap[name] = file
    server.addFile(`${base}/${file}`, await serialize({ [name]: { dtype: 'F32', shape: [2], data: Float32Array.from([s, s + 0.5]) } }))
  }
  server.addFile(`${base}/model.safetensors.index.json`, new TextEncoder().encode(JSON.stringify({ metadata: {}, weight_map: weightMap })))
  return server.url(`${base}/model.safetensors.index.json`)
}

test('a sharded set reopened costs one request per file: the index and each shard, each a 304', async () => {
  const dir = newDir()
  const url = await shardedSet('/sharded', 3)
  /** @param {Record<string, any>} cache */
  const openAll = async (cache) => {
    const f = /** @type {ShardedFile} */ (/** @type {unknown} */ (await open(url, { cache })))
    await f.loadHeaders()
    return f
  }
  server.resetStats()
  const f = await openAll({ dir })
  assert.equal(server.stats.log.length, 4)
  assert.deepEqual(server.stats.log.map((e) => e.status).sort(), [200, 206, 206, 206])
  const infos = await Promise.all(f.names.map((name) => f.info(name)))
  await f.close()
  assert.deepEqual(entries(dir).map((e) => e.meta.kind).sort(), ['header', 'header', 'header', 'index'])

  server.resetStats()
  const g = await openAll({ dir })
  assert.deepEqual(server.stats.log.map((e) => [e.status, e.ifNoneMatch !== null]), new Array(4).fill([304, true]))
  assert.deepEqual(await Promise.all(g.names.map((name) => g.info(name))), infos)
  assert.deepEqual(await values(g, 'model.layers.2.weight'), [2, 2.5])
  await g.close()

  server.resetStats()
  const h = await openAll({ dir, maxAge: 60 })
  assert.deepEqual(asked(), [], 'within maxAge: no request for the index or any shard')
  assert.deepEqual(await Promise.all(h.names.map((name) => h.info(name))), infos)
  await h.close()
})

test('reading does not wait for the cache to be written; a reopen and close() do', async () => {
  const dir = newDir()
  const bytes = await model('gated')
  server.addFile('/gated/model.safetensors', bytes)
  server.addFile('/gated/index.json', new TextEncoder().encode('{"weight_map":{}}'))
  // The folder backend, its writes held until `release()`.
  /** @type {() => void} */
  let release = () => {}
  const gate = new Promise((resolve) => { release = () => resolve(undefined) })
  let writes = 0
  const cache = httpCache({ dir }, (o) => {
    const folder = /** @type {import('../../js/io/cache.js').CacheBackend} */ (folderCache(o))
    return { ...folder, write: async (key, meta, body) => { writes++; await gate; return folder.write(key, meta, body) } }
  })
  const options = { [CACHE]: cache }
  server.resetStats()
  const source = await urlSource(server.url('/gated/model.safetensors'), options)
  const index = await fetchBytes(server.url('/gated/index.json'), options)
  assert.equal(new TextDecoder().decode(index), '{"weight_map":{}}')
  await new Promise((resolve) => setTimeout(resolve, 20))
  assert.equal(writes, 2, 'both writes begun')
  assert.deepEqual(entries(dir), [], 'and none ended: the reads did not wait for them')

  let reopened = false
  const again = urlSource(server.url('/gated/model.safetensors'), options).then((s) => { reopened = true; return s })
  let closed = false
  const closing = Promise.resolve(source.close()).then(() => { closed = true })
  await new Promise((resolve) => setTimeout(resolve, 20))
  assert.equal(reopened, false, 'a reopen waits for the entry being written')
  assert.equal(closed, false, 'close() waits for the writes')
  release()
  await closing
  assert.deepEqual(entries(dir).map((e) => e.meta.kind).sort(), ['header', 'index'])
  await (await again).close()
  assert.deepEqual(server.stats.log.map((e) => e.status), [206, 200, 304], 'the reopen found the entry')
})

test('credentials are never written, and an entry stored with them is validated on every open', async () => {
  const token = 'Bearer hf_secret_token_never_stored'
  const guarded = await startServer({ auth: token })
  try {
    const dir = newDir()
    guarded.addFile('/gated/model.safetensors', await model('gated'))
    const url = `${guarded.url('/gated/model.safetensors')}?access=query-secret-never-stored`
    const options = { cache: { dir, maxAge: 3600 }, headers: { Authorization: token } }
    await (await opened(url, options)).close()
    const [entry] = entries(dir)
    assert.equal(entry.meta.private, true)
    const stored = everything(dir)
    for (const secret of ['hf_secret_token_never_stored', 'query-secret-never-stored', 'Authorization', 'authorization'])
      assert.ok(!stored.includes(secret), `${secret} is not in the cache folder`)

    guarded.resetStats()
    await (await opened(url, options)).close()
    assert.deepEqual(guarded.stats.log.map((e) => [e.status, e.auth]), [[304, token]], 'validated despite maxAge, with the token')
    const error = await fails(opened(url, { cache: { dir, maxAge: 3600 } }), 'HttpError')
    assert.equal(error.status, 401, 'without the token the server says no, and the entry is not served')
  } finally {
    await guarded.close()
  }
})

test('ranges: true keeps the tensor ranges read: a reopened file reads them without a request', async () => {
  const dir = newDir()
  // A tensor past the first answer (256 KiB): read in two parts, the first answer's and a request.
  const big = Float32Array.from({ length: 100_000 }, (_, i) => i % 1000)
  const bytes = await serialize({
    'ranged.a': { dtype: 'F32', shape: [4], data: Float32Array.from([1, 2, 3, 4]) },
    'ranged.big': { dtype: 'F32', shape: [100, 1000], data: big },
  })
  server.addFile('/ranged/model.safetensors', bytes)
  const url = server.url('/ranged/model.safetensors')
  const options = { cache: { dir, ranges: true } }
  server.resetStats()
  const f = await opened(url, options)
  assert.deepEqual(await values(f, 'ranged.big'), Array.from(big))
  assert.deepEqual(asked().map((a) => a[2]), ['bytes=0-262143', `bytes=262144-${bytes.length - 1}`])
  await f.close()
  const [entry] = entries(dir)
  const end = headerEnd(bytes)
  assert.deepEqual(entry.files, [`body-${entry.meta.ver}`, 'meta.json',
    `range-${entry.meta.ver}-${end}-${262144 - end}`, `range-${entry.meta.ver}-262144-${bytes.length - 262144}`],
  'the first answer past the header, and the range read')
  const size = (/** @type {number} */ n) => n + Math.ceil(n / (1 << 20)) * 8
  assert.deepEqual(entry.files.slice(2).map((name) => statSync(join(entry.path, name)).size),
    [size(262144 - end), size(bytes.length - 262144)], 'each range\'s bytes, then 8 bytes of digest per MiB')

  server.resetStats()
  const g = await opened(url, options)
  assert.deepEqual(await values(g, 'ranged.big'), Array.from(big), 'read across the two kept ranges')
  assert.deepEqual(await values(g, 'ranged.a'), [1, 2, 3, 4])
  const slice = await g.slice('ranged.big', [[99, 100], [998, 1000]])
  assert.deepEqual(Array.from(slice.toFloat32()), [998, 999], 'a slice inside a kept range')
  slice.dispose()
  await g.close()
  assert.deepEqual(asked().map((a) => a[1]), [304], 'the validation alone')

  // Ranges of another version are never served: the entry and its ranges go with the change.
  const other = new Uint8Array(bytes)
  other.set(new Uint8Array(Float32Array.from([-1, -2, -3, -4]).buffer), end)
  replaceSameLength('/ranged/model.safetensors', other)
  server.resetStats()
  const h = await opened(url, options)
  assert.deepEqual(await values(h, 'ranged.a'), [-1, -2, -3, -4])
  await h.close()
  assert.deepEqual(asked().map((a) => a[1]), [206], 'the new file, its first answer kept as a range')
  const [replaced] = entries(dir)
  assert.ok(replaced.files.every((name) => name === 'meta.json' || name.includes(replaced.meta.ver)), replaced.files.join())
})

test('cache: true, as an app writes it, uses the OS cache folder ($XDG_CACHE_HOME here)', async () => {
  const home = mkdtempSync(join(root, 'xdg-'))
  const saved = process.env.XDG_CACHE_HOME
  process.env.XDG_CACHE_HOME = home
  try {
    const bytes = await model('app')
    server.addFile('/default/model.safetensors', bytes)
    const url = server.url('/default/model.safetensors')
    await (await opened(url, { cache: true })).close()
    const dir = join(home, 'safetensors-wasm')
    assert.deepEqual(entries(dir).map((e) => e.meta.url), [url])
    assert.equal(statSync(dir).mode & 0o777, 0o700, 'only the user reads the folder')
    server.resetStats()
    const f = await opened(url, { cache: true })
    assert.deepEqual(asked(), [['/default/model.safetensors', 304, 'bytes=0-262143', `"v1-${bytes.length}"`]])
    assert.deepEqual(await values(f, 'app.a'), [1, 2, 3, 4])
    await f.close()
    server.resetStats()
    await (await opened(url, {})).close()
    assert.deepEqual(asked().map((a) => a[3]), [null], 'off by default')
  } finally {
    if (saved === undefined) delete process.env.XDG_CACHE_HOME
    else process.env.XDG_CACHE_HOME = saved
  }
})

test('Hub files are keyed by the /resolve/ URL with its revision, validated through the redirect', async () => {
  const hub = await startHub()
  try {
    const dir = newDir()
    const bytes = await model('hub')
    hub.addFile('org/model', 'model.safetensors', bytes)
    hub.addFile('org/gated', 'model.safetensors', bytes, { gated: true })
    const options = { endpoint: hub.base, cache: { dir } }
    await (await opened('hf://org/model/model.safetensors', options)).close()
    const [entry] = entries(dir)
    assert.equal(entry.meta.url, `${hub.base}/org/model/resolve/main/model.safetensors`, 'the URL as given, not the signed CDN URL')
    assert.equal(entry.meta.etag, `"${hub.sha256('org/model', 'model.safetensors')}"`)

    // Another file kept since (elsewhere): this one's reopen has its header alone, and reads.
    server.addFile('/hub-aside/model.safetensors', await model('aside'))
    await (await opened(server.url('/hub-aside/model.safetensors'), { cache: { dir: newDir() } })).close()
    hub.resetStats()
    const f = await opened('hf://org/model/model.safetensors', options)
    assert.deepEqual([hub.stats.hubLog.map((e) => e.status), hub.stats.cdnLog.map((e) => e.status)], [[302], [304]])
    assert.deepEqual(await values(f, 'hub.b'), [5, 6, 7, 8])
    assert.deepEqual(hub.stats.cdnLog.map((e) => e.status), [304, 206], 'reads go to the CDN URL the validation ended at')
    await f.close()

    hub.replaceFile('org/model', 'model.safetensors', await model('hub2', 2))
    const g = await opened('hf://org/model/model.safetensors', options)
    assert.deepEqual(g.names, ['hub2.a', 'hub2.b'])
    await g.close()
    assert.deepEqual(entries(dir).map((e) => e.meta.etag), [`"${hub.sha256('org/model', 'model.safetensors')}"`])

    await (await opened('hf://org/gated/model.safetensors', { ...options, token: hub.token })).close()
    assert.equal(entries(dir).length, 2)
    assert.ok(!everything(dir).includes(hub.token), 'the token is not in the cache folder')
  } finally {
    await hub.close()
  }
})

test('a Hub address pinned to a commit is served from the cache without a request; a branch is validated', async () => {
  const hub = await startHub()
  try {
    const dir = newDir()
    const commit = 'c0ffee'.padEnd(40, '0')
    hub.addFile('org/pinned', 'model.safetensors', await model('pinned'), { revision: commit })
    hub.addFile('org/pinned', 'model.safetensors', await model('branch'))
    const options = { endpoint: hub.base, cache: { dir } }
    for (const src of [`hf://org/pinned@${commit}/model.safetensors`, 'hf://org/pinned/model.safetensors']) await (await opened(src, options)).close()
    hub.resetStats()
    const f = await opened(`hf://org/pinned@${commit}/model.safetensors`, options)
    assert.deepEqual([f.names, hub.allRequests().length], [['pinned.a', 'pinned.b'], 0], 'a commit never changes: no request')
    assert.deepEqual(await values(f, 'pinned.a'), [1, 2, 3, 4])
    await f.close()
    hub.resetStats()
    const g = await opened('hf://org/pinned@main/model.safetensors', options)
    assert.deepEqual([g.names, hub.stats.cdnLog.map((e) => e.status)], [['branch.a', 'branch.b'], [304]], 'a branch moves: validated')
    await g.close()
  } finally {
    await hub.close()
  }
})

test('a cache option that is not one is refused', async () => {
  const url = server.url('/one/model.safetensors')
  for (const cache of ['yes', 1, [], { maxAge: -1 }, { maxAge: '60' }, { dirr: '/tmp' }, { ranges: 'yes' }, { dir: '' }]) {
    await fails(open(url, /** @type {any} */ ({ cache })), 'InvalidArgument', /options\.cache/)
  }
})

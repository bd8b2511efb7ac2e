// Hugging Face Hub addresses (hf://...) against the Hub emulation in hub-server.js: a hub that
// redirects LFS files to signed CDN URLs on another origin, which expire. `open` is called as an
// app calls it, with `endpoint: hub.base` and otherwise default options. Request counts are
// asserted exactly: one resolve per open, one more per expiry, however many reads run at once.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { SafetensorsError, SafetensorsFile, ShardedFile, open, serialize } from '../../js/node.js'
import { OTHER_USER_TOKEN, startHub } from './hub-server.js'

/** @type {Awaited<ReturnType<typeof startHub>>} */
let hub
/** @type {string} */
let endpoint

before(async () => {
  hub = await startHub()
  endpoint = hub.base
})
after(() => hub.close())

/** The tensors the tests read: each after a 1 MiB pad (past the first request's 256 KiB, and
 * twice MERGE_GAP from the one before), so that each read is a CDN request of its own. The
 * writer orders tensors by name: layerK.a_pad comes just before layerK.weight. */
const names = [0, 1, 2, 3].map((k) => `layer${k}.weight`)

/**
 * A file of four small tensors separated by 1 MiB pads; `seed` changes every value (the length
 * stays the same).
 * @param {number} [seed]
 */
function farApartFile(seed = 0) {
  /** @type {Record<string, { dtype: any, shape: number[], data: Float32Array }>} */
  const tensors = {}
  names.forEach((name, k) => {
    tensors[`layer${k}.a_pad`] = { dtype: 'F32', shape: [512, 512], data: new Float32Array(512 * 512).fill(seed + k) }
    tensors[name] = { dtype: 'F32', shape: [16, 32], data: new Float32Array(512).map((_, i) => seed + k * 1000 + i * 0.25) }
  })
  return serialize(tensors, { metadata: { seed: String(seed) } })
}

/** @param {unknown} f @returns {SafetensorsFile} */
function single(f) {
  assert.ok(f instanceof SafetensorsFile, 'a single file')
  return f
}

/** The tensor's bytes, copied out of the heap, and the tensor freed. @param {Promise<import('../../js/node.js').Tensor>} pending */
async function bytesOf(pending) {
  const t = await pending
  const out = Uint8Array.from(t.bytes)
  t.dispose()
  return out
}

/** The bytes `name` has in `bytes` (read locally). @param {Uint8Array} bytes @param {string} name */
async function localBytes(bytes, name) {
  const f = single(await open(bytes))
  try { return await bytesOf(f.tensor(name)) } finally { await f.close() }
}

/** @param {Promise<unknown>} pending @param {string} code @returns {Promise<SafetensorsError>} */
async function rejects(pending, code) {
  const error = await pending.then(() => null, (e) => e)
  assert.ok(error instanceof SafetensorsError, `a SafetensorsError, got ${error}`)
  assert.equal(error.code, code, error.message)
  return error
}

test('open + reading tensors and a slice: exactly one resolve, bytes as local, CDN ranges only', async () => {
  const bytes = await farApartFile()
  hub.addFile('org/one', 'model.safetensors', bytes)
  hub.resetStats()
  const f = single(await open('hf://org/one/model.safetensors', { endpoint }))
  try {
    assert.equal(f.byteLength, bytes.length)
    for (const name of names) assert.deepEqual(await bytesOf(f.tensor(name)), await localBytes(bytes, name), name)
    const loaded = await f.load(names)
    for (const [name, t] of loaded) {
      assert.deepEqual(Uint8Array.from(t.bytes), await localBytes(bytes, name))
      t.dispose()
    }
    const rows = await f.slice(names[2], '3:5')
    assert.deepEqual(Array.from(rows.toFloat32()), Array.from({ length: 64 }, (_, i) => 2000 + (96 + i) * 0.25))
    rows.dispose()
    assert.equal(hub.resolves(), 1, 'one hub request in all: the first ranged GET')
    assert.equal(hub.stats.hubLog[0].range, 'bytes=0-262143')
    assert.equal(hub.stats.hubLog[0].status, 302)
    const sha = hub.sha256('org/one', 'model.safetensors')
    assert.ok(hub.stats.cdnLog.length >= 1 + names.length)
    for (const e of hub.stats.cdnLog) {
      assert.equal(e.file, sha)
      assert.equal(e.status, 206)
      assert.match(e.range ?? '', /^bytes=\d+-\d+$/)
    }
  } finally {
    await f.close()
  }
})

test('the token goes to the hub only: the CDN never sees Authorization nor Cookie', async () => {
  const bytes = await farApartFile(1)
  hub.addFile('org/private-ish', 'model.safetensors', bytes)
  hub.resetStats()
  const f = single(await open('hf://org/private-ish/model.safetensors', {
    endpoint, token: hub.token, headers: { Cookie: 'session=secret' },
  }))
  try {
    await bytesOf(f.tensor(names[3]))
    hub.expireAll()
    await bytesOf(f.tensor(names[0]))  // the renewal goes through the hub again, with the token
  } finally {
    await f.close()
  }
  assert.equal(hub.resolves(), 2)
  for (const e of hub.stats.hubLog) {
    assert.equal(e.authorization, `Bearer ${hub.token}`)
    assert.equal(e.cookie, 'session=secret')
  }
  assert.ok(hub.stats.cdnLog.length >= 3)
  for (const e of hub.stats.cdnLog) assert.deepEqual([e.authorization, e.cookie], [null, null], `${e.range} to the CDN`)
})

test('after expiry a read renews the URL with exactly one more resolve, also for concurrent reads', async () => {
  const bytes = await farApartFile(2)
  hub.addFile('org/expiring', 'model.safetensors', bytes)
  hub.resetStats()
  const f = single(await open('hf://org/expiring/model.safetensors', { endpoint }))
  try {
    assert.deepEqual(await bytesOf(f.tensor(names[0])), await localBytes(bytes, names[0]))
    assert.equal(hub.resolves(), 1)

    hub.expireAll()
    assert.deepEqual(await bytesOf(f.tensor(names[1])), await localBytes(bytes, names[1]))
    assert.equal(hub.resolves(), 2, 'one more resolve')
    assert.deepEqual(hub.stats.hubLog[1].range, 'bytes=0-0', 'the renewal asks for one byte')
    assert.deepEqual(hub.stats.cdnLog.slice(-3).map((e) => e.status), [403, 206, 206],
      'expired, the renewal\'s byte, the read again')

    // Every far-apart tensor in flight at once, each answered 403 (latency: all are sent
    // before the first answer comes back): one renewal shared by all.
    hub.expireAll()
    hub.setLatency(40)
    const cdnBefore = hub.stats.cdnLog.length
    const loaded = await f.load(names)
    hub.setLatency(0)
    for (const [name, t] of loaded) {
      assert.deepEqual(Uint8Array.from(t.bytes), await localBytes(bytes, name), name)
      t.dispose()
    }
    const during = hub.stats.cdnLog.slice(cdnBefore)
    assert.equal(during.filter((e) => e.status === 403).length, names.length, 'every read saw the expiry')
    assert.equal(hub.resolves(), 3, 'exactly one more resolve for all of them')
    assert.equal(during.filter((e) => e.status === 206).length, names.length + 1, 'the renewal\'s byte and each read once')
  } finally {
    hub.setLatency(0)
    await f.close()
  }
})

test('a file replaced behind the Hub: SourceChanged at the next renewal, never other bytes', async () => {
  const bytes = await farApartFile(3)
  hub.addFile('org/replaced', 'model.safetensors', bytes)
  const f = single(await open('hf://org/replaced/model.safetensors', { endpoint }))
  try {
    const replacement = await farApartFile(4)
    assert.equal(replacement.length, bytes.length, 'same length: only the ETag tells them apart')
    hub.replaceFile('org/replaced', 'model.safetensors', replacement)
    // The signed URL still names the old object (content-addressed), which the CDN keeps.
    assert.deepEqual(await bytesOf(f.tensor(names[1])), await localBytes(bytes, names[1]))
    hub.expireAll()
    const before = hub.resolves()
    const error = await rejects(f.tensor(names[2]), 'SourceChanged')
    assert.match(error.message, new RegExp(hub.sha256('org/replaced', 'model.safetensors')))
    assert.equal(hub.resolves(), before + 1)
  } finally {
    await f.close()
  }
  // A replacement of another length: also SourceChanged.
  hub.addFile('org/replaced2', 'model.safetensors', bytes)
  const g = single(await open('hf://org/replaced2/model.safetensors', { endpoint }))
  try {
    hub.replaceFile('org/replaced2', 'model.safetensors', await serialize({ x: { dtype: 'U8', shape: [3], data: new Uint8Array(3) } }))
    hub.expireAll()
    await rejects(g.load(names), 'SourceChanged')
  } finally {
    await g.close()
  }
})

test('a gated repo: 401 without a token (the message says to pass one), 403 for another user, works with the token', async () => {
  const bytes = await farApartFile(6)
  hub.addFile('org/gated', 'model.safetensors', bytes, { gated: true })
  hub.resetStats()
  const anonymous = await rejects(open('hf://org/gated/model.safetensors', { endpoint }), 'HttpError')
  assert.equal(anonymous.status, 401)
  assert.match(anonymous.message, /token/)
  assert.match(anonymous.message, /restricted/, 'the Hub\'s X-Error-Message')
  // Also hf://org/repo alone: a 401 is not "no model.safetensors here".
  assert.equal((await rejects(open('hf://org/gated', { endpoint }), 'HttpError')).status, 401)

  hub.resetStats()
  const other = await rejects(open('hf://org/gated/model.safetensors', { endpoint, token: OTHER_USER_TOKEN }), 'HttpError')
  assert.equal(other.status, 403)
  assert.match(other.message, /not in the authorized list/)
  assert.match(other.body ?? '', /not in the authorized list/)
  assert.equal(hub.resolves(), 1, 'a 403 from the original URL is not an expired signature: no second try')
  assert.equal(hub.stats.cdn, 0)

  hub.resetStats()
  const f = single(await open('hf://org/gated/model.safetensors', { endpoint, token: hub.token }))
  try {
    assert.deepEqual(await bytesOf(f.tensor(names[2])), await localBytes(bytes, names[2]))
  } finally {
    await f.close()
  }
  assert.equal(hub.resolves(), 1)
  assert.ok(hub.stats.cdnLog.every((e) => e.authorization === null))
})

test('when the renewal fails too: HttpError 403 with what the hub or the CDN said', async () => {
  const bytes = await farApartFile(7)
  hub.addFile('org/revoked', 'model.safetensors', bytes)
  const f = single(await open('hf://org/revoked/model.safetensors', { endpoint }))
  try {
    await bytesOf(f.tensor(names[0]))
    // The hub refuses the renewal (access revoked meanwhile).
    hub.expireAll()
    hub.deny('org/revoked', 403, 'Access to org/revoked has been revoked')
    const before = hub.resolves()
    const denied = await rejects(f.tensor(names[1]), 'HttpError')
    assert.equal(denied.status, 403)
    assert.match(denied.message, /Access to org\/revoked has been revoked/)
    assert.equal(denied.body, 'Access to org/revoked has been revoked')
    assert.equal(hub.resolves(), before + 1, 'one renewal, not retried')
    hub.allow('org/revoked')

    // The hub hands out URLs that are already expired: the CDN's S3-style XML is reported.
    hub.setTtl(-1000)
    hub.expireAll()
    const expired = await rejects(f.tensor(names[2]), 'HttpError')
    assert.equal(expired.status, 403)
    assert.match(expired.body ?? '', /<Code>AccessDenied<\/Code><Message>Request has expired<\/Message>/)
    assert.match(expired.message, /AccessDenied: Request has expired/)
    assert.doesNotMatch(expired.message, /Signature=/, 'the signed query stays out of the message')
    assert.equal(hub.resolves(), before + 2)

    // And once the hub signs properly again, the same file reads on.
    hub.setTtl(3_600_000)
    assert.deepEqual(await bytesOf(f.tensor(names[3])), await localBytes(bytes, names[3]))

    // The 403 came from the CDN, where credentials are never sent: the message names it and
    // does not suggest passing a token.
    assert.match(expired.message, new RegExp(`\\(at ${hub.cdnBase}/repos/[0-9a-f]{64}/model\\.safetensors\\)`))
    assert.doesNotMatch(expired.message, /pass credentials/)
  } finally {
    hub.setTtl(3_600_000)
    hub.allow('org/revoked')
    await f.close()
  }
})

test('hf://org/repo alone: model.safetensors, else the sharded index, else NotFound naming both', async () => {
  const bytes = await farApartFile(8)
  hub.addFile('org/plain', 'model.safetensors', bytes)
  hub.addFile('org/plain', 'model.safetensors.index.json', new TextEncoder().encode('{"weight_map": {}}'))
  hub.resetStats()
  const f = single(await open('hf://org/plain', { endpoint }))
  try {
    assert.deepEqual(f.names.sort(), (await open(bytes)).names.sort())
  } finally {
    await f.close()
  }
  assert.deepEqual(hub.stats.hubLog.map((e) => e.file), ['model.safetensors'], 'the single file first, nothing else')

  // A sharded repo: no model.safetensors, an index and two shards.
  const shard1 = await serialize({ 'a.weight': { dtype: 'F32', shape: [2, 2], data: new Float32Array([1, 2, 3, 4]) } })
  const shard2 = await serialize({ 'b.weight': { dtype: 'I32', shape: [3], data: new Int32Array([7, -8, 9]) } })
  const index = { metadata: { total_size: 28 }, weight_map: { 'a.weight': 'model-00001-of-00002.safetensors', 'b.weight': 'model-00002-of-00002.safetensors' } }
  hub.addFile('org/sharded', 'model.safetensors.index.json', new TextEncoder().encode(JSON.stringify(index)))
  hub.addFile('org/sharded', 'model-00001-of-00002.safetensors', shard1)
  hub.addFile('org/sharded', 'model-00002-of-00002.safetensors', shard2)
  hub.resetStats()
  const s = await open('hf://org/sharded', { endpoint, token: hub.token })
  try {
    assert.ok(s instanceof ShardedFile, 'a ShardedFile')
    assert.deepEqual(s.names, ['a.weight', 'b.weight'])
    const t = await s.tensor('b.weight')
    assert.deepEqual(Array.from(/** @type {Int32Array} */ (t.data)), [7, -8, 9])
    t.dispose()
  } finally {
    await s.close()
  }
  assert.deepEqual(hub.stats.hubLog.map((e) => [e.file, e.status]), [
    ['model.safetensors', 404], ['model.safetensors.index.json', 200], ['model-00002-of-00002.safetensors', 302],
  ])
  assert.ok(hub.allRequests().filter((e) => e.server === 'hub').every((e) => e.authorization === `Bearer ${hub.token}`))
  assert.ok(hub.stats.cdnLog.every((e) => e.authorization === null))

  // Neither file.
  hub.addFile('org/empty', 'config.json', new TextEncoder().encode('{}'))
  const error = await rejects(open('hf://org/empty', { endpoint }), 'NotFound')
  assert.match(error.message, /model\.safetensors\b(?!\.index)/)
  assert.match(error.message, /model\.safetensors\.index\.json/)
  assert.match(error.message, /org\/empty/)
  assert.equal(error.status, 404)
})

test('revisions: @v1.0 and an encoded refs%2Fpr%2F1 resolve against that revision; an unknown one is NotFound', async () => {
  const main = await serialize({ main: { dtype: 'U8', shape: [1], data: new Uint8Array([1]) } })
  const v1 = await serialize({ tag: { dtype: 'U8', shape: [1], data: new Uint8Array([2]) } })
  const pr = await serialize({ pr: { dtype: 'U8', shape: [1], data: new Uint8Array([3]) } })
  hub.addFile('org/revs', 'model.safetensors', main)
  hub.addFile('org/revs', 'model.safetensors', v1, { revision: 'v1.0' })
  hub.addFile('org/revs', 'weights/model.safetensors', pr, { revision: 'refs/pr/1' })
  hub.resetStats()
  /** @param {string} src */
  const namesAt = async (src) => {
    const f = single(await open(src, { endpoint }))
    try { return f.names } finally { await f.close() }
  }
  assert.deepEqual(await namesAt('hf://org/revs/model.safetensors'), ['main'])
  assert.deepEqual(await namesAt('hf://org/revs@v1.0/model.safetensors'), ['tag'])
  assert.deepEqual(await namesAt('hf://org/revs@v1.0'), ['tag'])
  assert.deepEqual(await namesAt('hf://org/revs@refs%2Fpr%2F1/weights/model.safetensors'), ['pr'])
  assert.deepEqual(hub.stats.hubLog.map((e) => [e.revision, e.file]), [
    ['main', 'model.safetensors'], ['v1.0', 'model.safetensors'], ['v1.0', 'model.safetensors'],
    ['refs/pr/1', 'weights/model.safetensors'],
  ])
  const error = await rejects(open('hf://org/revs@v9/model.safetensors', { endpoint }), 'NotFound')
  assert.match(error.message, /Invalid rev id: v9/)
  // Without a file: the Hub's own words still say it is the revision that is unknown.
  const bare = await rejects(open('hf://org/revs@v9', { endpoint }), 'NotFound')
  assert.match(bare.message, /neither model\.safetensors nor model\.safetensors\.index\.json at revision v9 \(the Hub said: .*Invalid rev id: v9/)
})

test('hf://datasets/org/repo/... opens a dataset\'s file', async () => {
  const bytes = await farApartFile(9)
  hub.addFile('datasets/org/data', 'data/train.safetensors', bytes)
  hub.resetStats()
  const f = single(await open('hf://datasets/org/data/data/train.safetensors', { endpoint }))
  try {
    assert.deepEqual(await bytesOf(f.tensor(names[1])), await localBytes(bytes, names[1]))
  } finally {
    await f.close()
  }
  assert.equal(hub.stats.hubLog[0].path, '/datasets/org/data/resolve/main/data/train.safetensors')
  assert.equal(hub.resolves(), 1)
  // Not the model repo of the same name.
  await rejects(open('hf://org/data/data/train.safetensors', { endpoint }), 'HttpError')
})

test('HF_ENDPOINT and HF_TOKEN from the environment when the options are absent; options win', async () => {
  const bytes = await farApartFile(10)
  hub.addFile('org/env-gated', 'model.safetensors', bytes, { gated: true })
  const saved = { HF_ENDPOINT: process.env.HF_ENDPOINT, HF_TOKEN: process.env.HF_TOKEN }
  try {
    process.env.HF_ENDPOINT = hub.base
    process.env.HF_TOKEN = hub.token
    hub.resetStats()
    const f = single(await open('hf://org/env-gated/model.safetensors'))
    try {
      assert.deepEqual(await bytesOf(f.tensor(names[0])), await localBytes(bytes, names[0]))
    } finally {
      await f.close()
    }
    assert.equal(hub.stats.hubLog[0].authorization, `Bearer ${hub.token}`)
    assert.ok(hub.stats.cdnLog.every((e) => e.authorization === null))
    // The token option wins over HF_TOKEN; the endpoint option over HF_ENDPOINT.
    const denied = await rejects(open('hf://org/env-gated/model.safetensors', { token: OTHER_USER_TOKEN }), 'HttpError')
    assert.equal(denied.status, 403)
    process.env.HF_ENDPOINT = 'http://127.0.0.1:1'
    const g = single(await open('hf://org/env-gated/model.safetensors', { endpoint }))
    await g.close()
  } finally {
    for (const [key, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[key]
      else process.env[key] = value
    }
  }
})

test('bad hf addresses are InvalidArgument, before any request', async () => {
  hub.resetStats()
  for (const src of ['hf://', 'hf://onlyorg', 'hf://org/repo/../x', 'hf://org/repo/./x', 'hf://org/repo/a//b.safetensors', 'hf://org/', 'hf:///repo',
    'hf://org/repo@', 'hf://org/re po', 'hf://datasets/onlyorg']) {
    const error = await rejects(open(src, { endpoint }), 'InvalidArgument')
    assert.match(error.message, /hf:\/\/org\/repo/, 'the message shows the forms that work')
  }
  await rejects(open('hf://org/repo', { endpoint: 'not a url' }), 'InvalidArgument')
  assert.equal(hub.stats.hub + hub.stats.cdn, 0)
})

test('hf:// addresses that would leave the repo\'s path (.. in org, repo, revision or path, encoded too) are InvalidArgument', async () => {
  hub.addFile('org/repo', 'model.safetensors', await serialize({ t: { dtype: 'U8', shape: [1], data: new Uint8Array([1]) } }))
  hub.resetStats()
  for (const src of ['hf://../x', 'hf://../../org/repo', 'hf://org/..', 'hf://./x', 'hf://datasets/../x', 'hf://org/..repo',
    'hf://org/repo/../../x', 'hf://org/repo@..', 'hf://org/repo@.', 'hf://org/repo@../../x', 'hf://org/repo@%2e%2e/model.safetensors',
    'hf://org/repo@%2E%2E', 'hf://org/repo@refs%2F..%2F..%2Fx', 'hf://org/repo/%2e%2e/x.safetensors', 'hf://org/repo/a/.%2E/b']) {
    const error = await rejects(open(src, { endpoint }), 'InvalidArgument')
    assert.match(error.message, /is not a Hub address/, src)
  }
  assert.equal(hub.stats.hub + hub.stats.cdn, 0, 'no request left for another path')
})

// The remote reading path against a real server: Debian's nginx (tests/servers/nginx.js), on its
// own loopback ports. Files are opened exactly as an app opens them, `open(url)` with default
// options; nginx's access log says what the client asked (Range, If-Range, Accept-Encoding) and
// what nginx answered, and the request counts are the README's ("Remote files and sharded
// checkpoints"): opening costs one request when the header fits in the first 256 KiB, bytes
// that arrived are kept, and ranges closer than 512 KiB are one request.
import assert from 'node:assert/strict'
import { mkdir, rename, utimes, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { after, before, test } from 'node:test'
import { SafetensorsError, SafetensorsFile, ShardedFile, open, serialize } from '../../js/node.js'
import { DTYPE_BITS } from '../../js/dtypes.js'
import { sampleModel } from '../fixtures/make-sample.js'
import { INDEX_NAME, shardSample } from '../../web-demo/make-sharded-sample.js'
import { findNginx, startNginx } from '../servers/nginx.js'

const skip = findNginx() ? false
  : process.env.NGINX_PATH ? `NGINX_PATH=${process.env.NGINX_PATH} is not an executable`
    : "no nginx at /usr/sbin/nginx or on PATH (bash .ci/bootstrap.sh installs Debian's; NGINX_PATH points elsewhere)"

/** README: the first request asks for bytes 0 to this - 1, and what arrives is kept. */
const INITIAL = 256 * 1024
/** README: ranges closer than this are fetched as one request. */
const MERGE_GAP = 512 * 1024
/** Every served file gets this mtime (s): nginx's ETag is "<mtime hex>-<size hex>". */
const MTIME = 1_700_000_000

/**
 * @typedef {import('../servers/nginx.js').LogEntry} LogEntry
 * @typedef {import('../../js/index.js').Dtype} Dtype
 * @typedef {import('../../js/index.js').Tensor} Tensor
 * @typedef {Record<string, { dtype: Dtype, shape: number[], data: Uint8Array }>} Tensors
 * @typedef {[start: number, end: number]} Range  absolute file bytes [start, end)
 */

/** @type {import('../servers/nginx.js').Nginx} */
let server

/** The main file of the range tests: several dtypes, a 3 MiB tensor, far-apart small ones. */
const MODEL = '/model.safetensors'
/** @type {[string, Dtype, number[]][]} written in dtype order (I64, F64, F32, BF16, F16, I8, U8, BOOL) */
const MODEL_SPECS = [
  ['ids', 'I64', [2, 8]],
  ['scale', 'F64', [16, 8]],
  ['norm', 'F32', [4, 4]],
  ['embed', 'BF16', [1024, 1536]],   // 3 MiB: from the first 256 KiB to far past them
  ['a.proj', 'F16', [64, 64]],
  ['b.proj', 'F16', [512, 1024]],    // 1 MiB between a.proj and c.proj
  ['c.proj', 'F16', [64, 64]],
  ['q', 'I8', [3, 5]],
  ['codes', 'U8', [100, 7]],
  ['mask', 'BOOL', [13]],
]
/** @type {Uint8Array} */
let modelBytes
/** The sharded sample (web-demo/make-sharded-sample.js) in a folder whose name needs escaping. */
const SHARDED_DIR = '/sharded set/'
/** @type {Uint8Array} the sample model unsharded */
let sampleBytes
/** @type {Map<string, Uint8Array>} shard or index file name -> bytes */
let shardFiles

before(async () => {
  if (skip) return
  server = await startNginx()
  modelBytes = await serialize(tensorsOf(MODEL_SPECS, 1), { metadata: { format: 'pt' } })
  await put(MODEL, modelBytes)
  const { tensors, metadata } = sampleModel()
  // sampleModel types its dtypes as plain strings; they are Dtype names.
  sampleBytes = await serialize(/** @type {Map<string, import('../../js/index.js').TensorLike>} */ (tensors), { metadata })
  const f = await open(sampleBytes)
  try {
    shardFiles = await shardSample(f)
  } finally {
    await f.close()
  }
  for (const [name, bytes] of shardFiles) await put(SHARDED_DIR + name, bytes)
})

after(async () => {
  await server?.stop()
})

// --- Helpers ---------------------------------------------------------------------------------

/** @param {number} n @param {number} seed @returns {Uint8Array} deterministic bytes (xorshift32) */
function pattern(n, seed) {
  const out = new Uint8Array(n)
  let x = (Math.imul(seed + 1, 2654435761) >>> 0) || 1
  for (let i = 0; i < n; i++) {
    x ^= x << 13
    x ^= x >>> 17
    x ^= x << 5
    out[i] = x & 0xff
  }
  return out
}

/** @param {[string, Dtype, number[]][]} specs @param {number} seed @returns {Tensors} */
function tensorsOf(specs, seed) {
  /** @type {Tensors} */
  const out = {}
  specs.forEach(([name, dtype, shape], i) => {
    const data = pattern((shape.reduce((a, d) => a * d, 1) * DTYPE_BITS[dtype]) / 8, seed * 1000 + i)
    if (dtype === 'BOOL') data.forEach((v, k) => { data[k] = v & 1 })
    out[name] = { dtype, shape, data }
  })
  return out
}

/** Writes a file under nginx's root with mtime MTIME (or `mtime`). @param {string} path URL path, decoded
 * @param {Uint8Array} bytes @param {number} [mtime] */
async function put(path, bytes, mtime = MTIME) {
  const full = join(server.root, path)
  await mkdir(dirname(full), { recursive: true })
  await writeFile(full, bytes)
  await utimes(full, mtime, mtime)
}

/** nginx's ETag for a static file. @param {number} mtime s @param {number} size */
const nginxEtag = (mtime, size) => `"${mtime.toString(16)}-${size.toString(16)}"`

/** @param {import('../../js/index.js').SafetensorsFile | ShardedFile} f */
function asFile(f) {
  assert.ok(f instanceof SafetensorsFile, 'a single file')
  return f
}

/** Each tensor's bytes as `open(bytes)` reads them. @param {Uint8Array} bytes */
async function localTensors(bytes) {
  const f = asFile(await open(bytes))
  try {
    const tensors = await f.load(f.names)
    /** @type {Map<string, Uint8Array>} */
    const out = new Map()
    for (const [name, t] of tensors) {
      out.set(name, t.bytes.slice())
      t.dispose()
    }
    return out
  } finally {
    await f.close()
  }
}

/** A slice's bytes as `open(bytes)` reads them. @param {Uint8Array} bytes @param {string} name @param {string} spec */
async function localSlice(bytes, name, spec) {
  const f = asFile(await open(bytes))
  try {
    const t = await f.slice(name, spec)
    const out = { shape: t.shape, bytes: t.bytes.slice() }
    t.dispose()
    return out
  } finally {
    await f.close()
  }
}

/** @param {Uint8Array} actual @param {Uint8Array | undefined} expected @param {string} what */
function sameBytes(actual, expected, what) {
  assert.ok(expected, `${what}: nothing to compare with`)
  assert.equal(actual.length, expected.length, `${what}: length`)
  if (!Buffer.from(actual.buffer, actual.byteOffset, actual.length).equals(expected))
    assert.fail(`${what}: bytes differ, first at ${actual.findIndex((v, i) => v !== expected[i])}`)
}

/** Reads a tensor, checks its bytes, disposes it. @param {Promise<Tensor>} reading
 * @param {Uint8Array | undefined} expected @param {string} what */
async function checkTensor(reading, expected, what) {
  const t = await reading
  try {
    sameBytes(t.bytes, expected, what)
  } finally {
    t.dispose()
  }
}

/** Reads tensors, checks each one's bytes, disposes them.
 * @param {Promise<Map<string, Tensor>>} reading @param {Map<string, Uint8Array>} expected */
async function checkLoad(reading, expected) {
  const tensors = await reading
  try {
    for (const [name, t] of tensors) sameBytes(t.bytes, expected.get(name), name)
  } finally {
    for (const t of tensors.values()) t.dispose()
  }
}

/**
 * The Range headers a read of `wanted` costs by the README's rules: ranges closer than 512 KiB
 * merged, the bytes under 256 KiB already held from the first request.
 * @param {Range[]} wanted @returns {string[]} sorted
 */
function plannedRanges(wanted) {
  /** @type {Range[]} */
  const spans = []
  for (const [start, end] of [...wanted].filter(([s, e]) => e > s).sort((a, b) => a[0] - b[0])) {
    const last = spans.at(-1)
    if (last && start - last[1] <= MERGE_GAP) last[1] = Math.max(last[1], end)
    else spans.push([start, end])
  }
  return spans.map(([s, e]) => /** @type {Range} */ ([Math.max(s, INITIAL), e])).filter(([s, e]) => e > s)
    .map(([s, e]) => `bytes=${s}-${e - 1}`).sort()
}

/**
 * Checks that `log` is exactly one ranged GET of `uri` for each of `ranges` (any order), each
 * answered 206 with exactly those bytes (clipped to the file), not encoded, with the file's
 * strong ETag, which every request after the first sends back as If-Range; the only coding the
 * client accepts is `identity` (see codings).
 * @param {LogEntry[]} log @param {string} uri decoded @param {string[]} ranges
 * @param {{ size: number, etag: string }} file
 */
function assertRanged(log, uri, ranges, file) {
  assert.deepEqual(log.map((e) => e.range).sort(), [...ranges].sort(), `${uri}: the Range of each request`)
  for (const e of log) {
    const [start, end] = e.range.slice('bytes='.length).split('-').map(Number)
    const last = Math.min(end, file.size - 1)
    assert.deepEqual(
      { method: e.method, uri: e.uri, status: e.status, contentRange: e.contentRange, bytes: e.bytes, etag: e.etag,
        ifRange: e.ifRange, acceptEncoding: codings(e.acceptEncoding), contentEncoding: e.contentEncoding },
      { method: 'GET', uri, status: 206, contentRange: `bytes ${start}-${last}/${file.size}`, bytes: last - start + 1,
        etag: file.etag, ifRange: start === 0 ? '' : file.etag, acceptEncoding: ['identity'], contentEncoding: '' },
      `${uri} ${e.range}`)
  }
}

/**
 * The distinct codings of an Accept-Encoding value. fetch appends `identity` to a request with a
 * Range (the Fetch standard), also when the caller set it already: then nginx logs
 * "identity, identity", a valid list that says the same.
 * @param {string} value @returns {string[]}
 */
const codings = (value) => [...new Set(value.split(',').map((s) => s.trim()).filter(Boolean))]

/** Drops what earlier tests left in the log (a test that failed midway, say). */
async function freshLog() {
  await server.takeLog()
}

/** @param {Promise<unknown>} promise @param {string} code @returns {Promise<SafetensorsError>} */
async function rejectsWith(promise, code) {
  const error = await promise.then(() => null, (e) => e)
  assert.ok(error instanceof SafetensorsError, `expected a SafetensorsError ${code}, got ${error}`)
  assert.equal(error.code, code, error.message)
  return error
}

// --- Tests -----------------------------------------------------------------------------------

test('range reads: every tensor and slices byte-exact, each a 206, as many requests as the README says', { skip }, async () => {
  await freshLog()
  const file = { size: modelBytes.length, etag: nginxEtag(MTIME, modelBytes.length) }
  const local = await localTensors(modelBytes)
  const f = asFile(await open(server.url(MODEL)))
  try {
    // Opening: one request for the first 256 KiB, which hold the header.
    assert.ok(8 + f.headerLength < INITIAL && file.size > 3 * 1024 * 1024)
    assertRanged(await server.takeLog(1), MODEL, [`bytes=0-${INITIAL - 1}`], file)
    assert.deepEqual(f.names, MODEL_SPECS.map(([name]) => name))
    /** @param {string} name @returns {Range} */
    const at = (name) => [f.info(name).byteOffset, f.info(name).byteOffset + f.info(name).byteLength]

    // Every tensor alone: the three in the first 256 KiB cost nothing, the others one each
    // (embed only its bytes from 256 KiB on).
    let requests = 0
    for (const name of f.names) {
      const ranges = plannedRanges([at(name)])
      await checkTensor(f.tensor(name), local.get(name), name)
      assertRanged(await server.takeLog(ranges.length), MODEL, ranges, file)
      requests += ranges.length
    }
    assert.equal(requests, 7)
    assert.deepEqual(plannedRanges([at('embed')]), [`bytes=${INITIAL}-${at('embed')[1] - 1}`])

    // Far apart (1 MiB between them): one request each, both at once.
    assert.ok(at('c.proj')[0] - at('a.proj')[1] > MERGE_GAP)
    let ranges = plannedRanges([at('a.proj'), at('c.proj')])
    assert.deepEqual(ranges, [at('a.proj'), at('c.proj')].map(([s, e]) => `bytes=${s}-${e - 1}`).sort())
    await checkLoad(f.load(['c.proj', 'a.proj']), local)
    assertRanged(await server.takeLog(2), MODEL, ranges, file)

    // Within 512 KiB (q and codes lie between them): one request, the gap included.
    ranges = plannedRanges([at('c.proj'), at('mask')])
    assert.deepEqual(ranges, [`bytes=${at('c.proj')[0]}-${at('mask')[1] - 1}`])
    await checkLoad(f.load(['c.proj', 'mask']), local)
    assertRanged(await server.takeLog(1), MODEL, ranges, file)

    // Everything at once: one request for all that was not in the first answer.
    await checkLoad(f.load(f.names), local)
    assertRanged(await server.takeLog(1), MODEL, [`bytes=${INITIAL}-${file.size - 1}`], file)

    // Slices '1:3': rows 1 and 2 only. embed's are in the first answer; b.proj's cost one request
    // of exactly two rows (1024 F16 values each).
    for (const [name, row, ranges] of /** @type {[string, number, string[]][]} */ ([
      ['embed', 1536 * 2, []],
      ['b.proj', 1024 * 2, [`bytes=${at('b.proj')[0] + 2048}-${at('b.proj')[0] + 3 * 2048 - 1}`]],
    ])) {
      assert.deepEqual(plannedRanges([[at(name)[0] + row, at(name)[0] + 3 * row]]), ranges)
      const expected = await localSlice(modelBytes, name, '1:3')
      const t = await f.slice(name, '1:3')
      assert.deepEqual(t.shape, expected.shape)
      assert.deepEqual(t.shape, [2, name === 'embed' ? 1536 : 1024])
      sameBytes(t.bytes, expected.bytes, `${name}[1:3]`)
      t.dispose()
      assertRanged(await server.takeLog(ranges.length), MODEL, ranges, file)
    }
  } finally {
    await f.close()
  }
})

test('a header larger than 256 KiB costs exactly one more request', { skip }, async () => {
  await freshLog()
  const path = '/big-header.safetensors'
  const bytes = await serialize(tensorsOf([['w', 'F32', [64, 64]], ['b', 'F32', [64]]], 2),
    { metadata: { note: 'x'.repeat(300_000) } })
  await put(path, bytes)
  const file = { size: bytes.length, etag: nginxEtag(MTIME, bytes.length) }
  const f = asFile(await open(server.url(path)))
  try {
    assert.ok(8 + f.headerLength > INITIAL)
    assertRanged(await server.takeLog(2), path, [`bytes=0-${INITIAL - 1}`, `bytes=${INITIAL}-${8 + f.headerLength - 1}`], file)
    assert.equal(f.metadata?.note.length, 300_000)
    const local = await localTensors(bytes)
    await checkLoad(f.load(f.names), local)
    assertRanged(await server.takeLog(1), path, [`bytes=${8 + f.headerLength}-${file.size - 1}`], file)
  } finally {
    await f.close()
  }
})

test('a sharded set through its index: every tensor byte-exact against the unsharded file', { skip }, async () => {
  await freshLog()
  const indexUrl = server.url(`${encodeURI(SHARDED_DIR)}${INDEX_NAME}`)
  assert.match(indexUrl, /\/sharded%20set\//)
  const f = await open(indexUrl)
  assert.ok(f instanceof ShardedFile)
  try {
    // The index: one plain GET (no Range), read whole.
    const index = /** @type {Uint8Array} */ (shardFiles.get(INDEX_NAME))
    assert.deepEqual((await server.takeLog(1)).map((e) => [e.method, e.uri, e.status, e.range, e.bytes]),
      [['GET', SHARDED_DIR + INDEX_NAME, 200, '', index.length]])
    const local = await localTensors(sampleBytes)
    assert.deepEqual([...f.names].sort(), [...local.keys()].sort())
    assert.equal(f.shards.length, 3)

    // Everything: per shard, its first 256 KiB (the header) and, for a larger shard, one more
    // request for the rest (its tensors are contiguous).
    await checkLoad(f.load(f.names), local)
    /** @type {Map<string, string[]>} */
    const expected = new Map(f.shards.map((shard) => {
      const size = /** @type {Uint8Array} */ (shardFiles.get(shard)).length
      return [shard, [`bytes=0-${INITIAL - 1}`, ...(size > INITIAL ? [`bytes=${INITIAL}-${size - 1}`] : [])]]
    }))
    const log = await server.takeLog([...expected.values()].flat().length)
    assert.equal(log.length, 6, 'the sample: three shards, each over 256 KiB')
    for (const [shard, ranges] of expected) {
      const size = /** @type {Uint8Array} */ (shardFiles.get(shard)).length
      assertRanged(log.filter((e) => e.uri === SHARDED_DIR + shard), SHARDED_DIR + shard, ranges,
        { size, etag: nginxEtag(MTIME, size) })
    }

    // A slice from the shard holding lm_head: only its bytes (headers are already known).
    const name = 'lm_head.weight'
    const info = await f.info(name)
    const row = Number(info.shape[1]) * 4
    const shardSize = /** @type {Uint8Array} */ (shardFiles.get(info.shard)).length
    const ranges = plannedRanges([[info.byteOffset + row, info.byteOffset + 3 * row]])
    const expectedSlice = await localSlice(sampleBytes, name, '1:3')
    const t = await f.slice(name, '1:3')
    sameBytes(t.bytes, expectedSlice.bytes, `${name}[1:3]`)
    t.dispose()
    assertRanged(await server.takeLog(ranges.length), SHARDED_DIR + info.shard, ranges,
      { size: shardSize, etag: nginxEtag(MTIME, shardSize) })
  } finally {
    await f.close()
  }
})

test('a file replaced between reads: SourceChanged, never the new bytes as the old file\'s', { skip }, async () => {
  await freshLog()
  const path = '/changing.safetensors'
  /** @type {[string, Dtype, number[]][]} */
  const specs = [['a', 'U8', [300_000]], ['b', 'U8', [4096]], ['c', 'U8', [4096]]]
  const oldBytes = await serialize(tensorsOf(specs, 3))
  const newBytes = await serialize(tensorsOf(specs, 4))
  assert.equal(newBytes.length, oldBytes.length)
  await put(path, oldBytes)
  const size = oldBytes.length
  const oldEtag = nginxEtag(MTIME, size)
  const newEtag = nginxEtag(MTIME + 60, size)
  const f = asFile(await open(server.url(path)))
  try {
    assertRanged(await server.takeLog(1), path, [`bytes=0-${INITIAL - 1}`], { size, etag: oldEtag })
    const at = (/** @type {string} */ name) => f.info(name).byteOffset
    assert.ok(at('b') >= INITIAL, 'b and c are not in the first answer')
    await checkTensor(f.tensor('b'), (await localTensors(oldBytes)).get('b'), 'b before the change')
    assertRanged(await server.takeLog(1), path, [`bytes=${at('b')}-${at('b') + 4095}`], { size, etag: oldEtag })

    // Replaced as a careful writer does: a temporary name in the same folder, renamed over. The
    // mtime is a minute later, so nginx's ETag changes although the size does not.
    const tmp = join(server.root, '.changing.safetensors.tmp')
    await writeFile(tmp, newBytes)
    await utimes(tmp, MTIME + 60, MTIME + 60)
    await rename(tmp, join(server.root, path))

    const error = await rejectsWith(f.tensor('c'), 'SourceChanged')
    assert.ok(error.message.includes(oldEtag) && error.message.includes(newEtag), error.message)
    // The old ETag went as If-Range; nginx answered with the whole new file (200), which the
    // client refused and cancelled.
    const [entry, ...more] = await server.takeLog(1)
    assert.deepEqual(more, [])
    assert.deepEqual([entry.range, entry.ifRange, entry.status, entry.etag, entry.contentRange],
      [`bytes=${at('c')}-${at('c') + 4095}`, oldEtag, 200, newEtag, ''])
  } finally {
    await f.close()
  }
  // Opened anew, the file reads as its new self.
  const g = asFile(await open(server.url(path)))
  try {
    await checkTensor(g.tensor('c'), (await localTensors(newBytes)).get('c'), 'c after the change')
    assert.equal((await server.takeLog(2)).length, 2)
  } finally {
    await g.close()
  }
})

test('gzip on for every type: ranges still come back 206 and unencoded, bytes exact', { skip }, async () => {
  await freshLog()
  // The server block does compress these files: a plain GET of the model comes back gzipped.
  const whole = await fetch(server.gzipUrl(MODEL))
  assert.equal(whole.headers.get('content-encoding'), 'gzip')
  await whole.body?.cancel()
  await server.takeLog(1)

  // A Range goes with `Accept-Encoding: identity` (README; fetch adds it too, as the Fetch
  // standard says), so nginx answers ranges as usual: 206, strong ETag, no Content-Encoding.
  const file = { size: modelBytes.length, etag: nginxEtag(MTIME, modelBytes.length) }
  const local = await localTensors(modelBytes)
  const f = asFile(await open(server.gzipUrl(MODEL)))
  try {
    await checkLoad(f.load(f.names), local)
    const expectedSlice = await localSlice(modelBytes, 'b.proj', '1:3')
    const t = await f.slice('b.proj', '1:3')
    sameBytes(t.bytes, expectedSlice.bytes, 'b.proj[1:3]')
    t.dispose()
    const start = f.info('b.proj').byteOffset
    assertRanged(await server.takeLog(3), MODEL,
      [`bytes=0-${INITIAL - 1}`, `bytes=${INITIAL}-${file.size - 1}`, `bytes=${start + 2048}-${start + 3 * 2048 - 1}`], file)
  } finally {
    await f.close()
  }

  // A sharded set: the index has no Range, so it comes gzipped (and fetch decodes it); the
  // shards' ranges do not.
  const s = await open(server.gzipUrl(`${encodeURI(SHARDED_DIR)}${INDEX_NAME}`))
  assert.ok(s instanceof ShardedFile)
  try {
    const [entry, ...more] = await server.takeLog(1)
    assert.deepEqual(more, [])
    const index = /** @type {Uint8Array} */ (shardFiles.get(INDEX_NAME))
    assert.deepEqual([entry.uri, entry.status, entry.range, entry.contentEncoding], [SHARDED_DIR + INDEX_NAME, 200, '', 'gzip'])
    assert.match(entry.acceptEncoding, /\bgzip\b/)
    assert.ok(entry.bytes < index.length / 2, `the index went compressed: ${entry.bytes} of ${index.length} bytes`)
    const sample = await localTensors(sampleBytes)
    await checkLoad(s.load(s.names), sample)
    const log = await server.takeLog(6)
    assert.equal(log.length, 6)
    for (const e of log) {
      assert.deepEqual([e.status, codings(e.acceptEncoding), e.contentEncoding], [206, ['identity'], ''], `${e.uri} ${e.range}`)
      assert.match(e.etag, /^"[0-9a-f]+-[0-9a-f]+"$/, 'a strong ETag: nginx did not touch the body')
    }
  } finally {
    await s.close()
  }
})

test('what else a real server shows: 404s, a first request past the end, an empty and a cut file, a redirect', { skip }, async (t) => {
  await t.test('a missing file: NotFound from the one GET (no HEAD, no retry)', async () => {
    await freshLog()
    await rejectsWith(open(server.url('/missing.safetensors')), 'NotFound')
    assert.deepEqual((await server.takeLog(1)).map((e) => [e.method, e.uri, e.status, e.range]),
      [['GET', '/missing.safetensors', 404, `bytes=0-${INITIAL - 1}`]])
    await rejectsWith(open(server.url('/missing.safetensors.index.json')), 'NotFound')
    assert.deepEqual((await server.takeLog(1)).map((e) => [e.method, e.uri, e.status, e.range]),
      [['GET', '/missing.safetensors.index.json', 404, '']])
  })

  await t.test('an index naming a shard the server lacks: ShardMissing when a tensor of it is read', async () => {
    await freshLog()
    const index = { metadata: {}, weight_map: { x: 'model-00001-of-00001.safetensors' } }
    await put('/broken set/model.safetensors.index.json', new TextEncoder().encode(JSON.stringify(index)))
    const f = await open(server.url('/broken%20set/model.safetensors.index.json'))
    try {
      assert.deepEqual(f.names, ['x'])
      // README: NotFound is kept for the URL opened; a shard that is not there is ShardMissing.
      const error = await rejectsWith(f.tensor('x'), 'ShardMissing')
      assert.match(error.message, /model-00001-of-00001\.safetensors.*404/)
    } finally {
      await f.close()
    }
    assert.deepEqual((await server.takeLog(2)).map((e) => [e.uri, e.status]),
      [['/broken set/model.safetensors.index.json', 200], ['/broken set/model-00001-of-00001.safetensors', 404]])
  })

  await t.test('a file under 256 KiB: the first request asks past its end, nginx sends all of it, nothing more is fetched', async () => {
    await freshLog()
    const path = '/small.safetensors'
    const bytes = await serialize(tensorsOf([['w', 'F32', [32, 32]], ['n', 'I32', [7]]], 5))
    await put(path, bytes)
    const local = await localTensors(bytes)
    const f = asFile(await open(server.url(path)))
    try {
      await checkLoad(f.load(f.names), local)
      assertRanged(await server.takeLog(1), path, [`bytes=0-${INITIAL - 1}`], { size: bytes.length, etag: nginxEtag(MTIME, bytes.length) })
    } finally {
      await f.close()
    }
  })

  await t.test('an empty file: nginx ignores the Range (200, no body); the reader says the file is too small', async () => {
    await freshLog()
    await put('/empty.safetensors', new Uint8Array(0))
    await rejectsWith(open(server.url('/empty.safetensors')), 'HeaderTooSmall')
    assert.deepEqual((await server.takeLog(1)).map((e) => [e.uri, e.status, e.range, e.contentRange, e.bytes]),
      [['/empty.safetensors', 200, `bytes=0-${INITIAL - 1}`, '', 0]])
  })

  await t.test('a file cut short: the header promises bytes past the end; refused after one request', async () => {
    await freshLog()
    const bytes = modelBytes.subarray(0, modelBytes.length - 100)
    await put('/cut.safetensors', bytes)
    await rejectsWith(open(server.url('/cut.safetensors')), 'MetadataIncompleteBuffer')
    assertRanged(await server.takeLog(1), '/cut.safetensors', [`bytes=0-${INITIAL - 1}`],
      { size: bytes.length, etag: nginxEtag(MTIME, bytes.length) })
  })

  await t.test('a redirect (302, as the Hub sends clients to its CDN): followed once, later reads go to its target', async () => {
    await freshLog()
    const file = { size: modelBytes.length, etag: nginxEtag(MTIME, modelBytes.length) }
    const from = `/redirect${MODEL}`
    const f = asFile(await open(server.url(from)))
    try {
      await checkTensor(f.tensor('b.proj'), (await localTensors(modelBytes)).get('b.proj'), 'b.proj')
      const { byteOffset, byteLength } = f.info('b.proj')
      const read = `bytes=${byteOffset}-${byteOffset + byteLength - 1}`
      // README: opening and any number of reads cost one resolve; the Range went along.
      const log = await server.takeLog(3)
      assert.deepEqual(log.map((e) => [e.uri, e.status, e.range]),
        [[from, 302, `bytes=0-${INITIAL - 1}`], [MODEL, 206, `bytes=0-${INITIAL - 1}`], [MODEL, 206, read]])
      assertRanged(log.slice(1), MODEL, [`bytes=0-${INITIAL - 1}`, read], file)
    } finally {
      await f.close()
    }
  })
})

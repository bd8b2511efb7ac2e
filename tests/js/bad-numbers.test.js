// Numbers that must not get in (issue 35, item 1): a numeric option that is NaN (as
// `Number(process.env.UNSET)` gives), infinite, negative, zero where it cannot be, or a string
// is InvalidArgument naming it, before anything is read; a read never hands out bytes it did not
// fill; a Retry-After that is not a wait does not remove the backoff.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { open, serialize, serializeAwkward, urlSource } from '../../js/node.js'
import { fails } from './fails.js'
import { startServer } from './http-server.js'

/** @type {Awaited<ReturnType<typeof startServer>>} */
let server
before(async () => { server = await startServer() })
after(() => server.close())

const DATA = Uint8Array.from({ length: 4096 }, (_, i) => (i * 31 + 7) & 0xff)
const file = () => serialize({ a: { dtype: 'U8', shape: [DATA.length], data: DATA }, b: { dtype: 'U8', shape: [3], data: new Uint8Array([1, 2, 3]) } })

/** Values no numeric option takes; 0 is added for the options that cannot be 0. */
const BAD = [NaN, Infinity, -Infinity, -1, 1.5, '4', null]

test('every numeric option of open is checked before a request', async () => {
  server.addFile('/o.safetensors', await file())
  const options = {
    concurrency: [...BAD, 0], mergeGap: BAD, initialFetchSize: [...BAD, 0], retries: BAD,
    retryDelay: [NaN, Infinity, -1, '4', null], wholeFileThreshold: BAD, maxIndexBytes: [...BAD, 0],
  }
  server.resetStats()
  for (const [name, values] of Object.entries(options)) {
    for (const value of values) {
      const message = new RegExp(`^${name} must be .* got ${typeof value === 'string' ? `"${value}"` : String(value)}`)
      await fails(open(server.url('/o.safetensors'), { [name]: value }), 'InvalidArgument', message)
      await fails(open(await file(), { [name]: value }), 'InvalidArgument', message)
    }
  }
  await fails(urlSource(server.url('/o.safetensors'), { retries: NaN }), 'InvalidArgument', /^retries must be/)
  assert.equal(server.stats.requests, 0)
  // In range, they open.
  const f = await open(server.url('/o.safetensors'), { concurrency: 1, mergeGap: 0, retries: 0, retryDelay: 0.5, initialFetchSize: 1 })
  assert.deepEqual((await f.tensor('b')).bytes, new Uint8Array([1, 2, 3]))
})

test('a read with a bad concurrency or mergeGap is refused, never filled with what the heap held', async () => {
  // Another tensor's bytes freed first: a read that wrote nothing would hand them out.
  const other = await open(new Uint8Array(await serialize({ x: { dtype: 'U8', shape: [DATA.length], data: new Uint8Array(DATA.length).fill(0xee) } })))
  ;(await other.tensor('x')).dispose()
  server.addFile('/r.safetensors', await file())
  for (const f of [await open(await file()), await open(server.url('/r.safetensors'))]) {
    for (const value of [...BAD, 0]) {
      await fails(f.tensor('a', { concurrency: /** @type {any} */ (value) }), 'InvalidArgument', /^concurrency must be/)
      await fails(f.load(['a', 'b'], { concurrency: /** @type {any} */ (value) }), 'InvalidArgument', /^concurrency must be/)
    }
    await fails(f.tensor('a', { mergeGap: NaN }), 'InvalidArgument', /^mergeGap must be/)
    assert.deepEqual((await f.tensor('a', { concurrency: 1 })).bytes, DATA)
  }
})

test('a sharded set checks its concurrency: at open, for loadHeaders and for a read', async () => {
  const a = await serialize({ a: { dtype: 'U8', shape: [DATA.length], data: DATA } })
  const b = await serialize({ b: { dtype: 'U8', shape: [3], data: new Uint8Array([1, 2, 3]) } })
  const index = new TextEncoder().encode(JSON.stringify({ weight_map: { a: 'a.safetensors', b: 'b.safetensors' } }))
  const shards = { 'a.safetensors': a, 'b.safetensors': b }
  await fails(open(index, { shards, concurrency: NaN }), 'InvalidArgument', /^concurrency must be .* got NaN/)
  const f = /** @type {import('../../js/node.js').ShardedFile} */ (await open(index, { shards }))
  await fails(f.loadHeaders({ concurrency: NaN }), 'InvalidArgument', /^concurrency must be/)
  await fails(f.load(['a', 'b'], { concurrency: Infinity }), 'InvalidArgument', /^concurrency must be/)
  await fails(f.tensor('a', { concurrency: '4' }), 'InvalidArgument', /^concurrency must be/)
  assert.deepEqual((await f.tensor('a')).bytes, DATA)
})

test('Retry-After: -5 or 0 keeps the backoff: no burst of requests', async () => {
  server.addFile('/ra.safetensors', await file())
  const f = await open(server.url('/ra.safetensors'), { initialFetchSize: 1024 })  // 'a' is past it
  for (const retryAfter of ['-5', '0']) {
    server.fault('/ra.safetensors', { status: 503, retryAfter })
    server.resetStats()
    const t0 = Date.now()
    await fails(f.tensor('a'), 'HttpError', /503/)
    // 3 retries after 250, 500 and 1000 ms, each jittered down to half at most.
    assert.equal(server.stats.requests, 4)
    assert.ok(Date.now() - t0 >= 850, `${retryAfter}: 4 requests in ${Date.now() - t0} ms`)
    server.clearFaults()
  }
})

test('an awkward array\'s slice refuses NaN and strings rather than making an array of length NaN', async () => {
  const a = await (await open(await serializeAwkward([1, 2, 3, 4]))).awkward()
  await fails(() => a.slice(NaN), 'InvalidArgument', /^awkward: slice's start must be a number, got NaN/)
  await fails(() => a.slice(0, /** @type {any} */ ('2')), 'InvalidArgument', /^awkward: slice's stop must be a number, got "2"/)
  assert.deepEqual(await a.slice(1, Infinity).toList(), [2, 3, 4])
  assert.deepEqual(await a.slice(-2).toList(), [3, 4])
})

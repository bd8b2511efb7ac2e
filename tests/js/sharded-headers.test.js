// ShardedFile.loadHeaders as an app calls it, with default options, over HTTP: how many shard
// headers it fetches at once (256 in Node by default: the 282 shards of the largest sets in two
// rounds), that an explicit concurrency bounds it, and progress counts every shard once; and the
// test server's shared link that bench/sharded-headers.js limits bandwidth with.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { open } from '../../js/node.js'
import { startServer } from './http-server.js'
import { fails } from './fails.js'
import { glm282, makeShardedSet, serveSet, writeSet } from './sharded-fixtures.js'

const set = glm282({ tensors: 2820 })

test('loadHeaders with default options: 256 shard headers at once in Node, one request per shard, progress to the end', async () => {
  const server = await startServer({ latency: 300 })
  try {
    const url = serveSet(server, set)
    const f = await open(url)
    server.resetStats()
    /** @type {number[]} */
    const seen = []
    await f.loadHeaders({ onProgress: ({ loaded, total }) => { assert.equal(total, 282); seen.push(loaded) } })
    assert.equal(server.stats.requests, 282, 'one request per shard: each 100,000-byte header fits the first window')
    // 256 at once by default; how many the server sees together depends on how fast they start.
    assert.ok(server.stats.maxInFlight > 64 && server.stats.maxInFlight <= 256, `${server.stats.maxInFlight} in flight`)
    assert.deepEqual(seen, Array.from({ length: 283 }, (_, i) => i))
    assert.equal((await f.parameterCount()).total, set.parameters)
    assert.equal(server.stats.requests, 282, 'parameterCount reads no header again')
    await f.close()
  } finally {
    await server.close()
  }
})

test('shards whose headers outgrow the default first window: each read in one request sized from the index, unless initialFetchSize is given', async () => {
  // 4 shards of 4,000 names: headers of about 370 kB, past the default 256 KiB window.
  const big = makeShardedSet({ tensors: 16_000, shards: 4 })
  const small = makeShardedSet({ tensors: 400, shards: 4 })
  const server = await startServer()
  try {
    const bigUrl = serveSet(server, big, { folder: '/big' })
    const smallUrl = serveSet(server, small, { folder: '/small' })
    const headerEnd = (/** @type {typeof big} */ s, /** @type {number} */ i) =>
      8 + Number(new DataView(s.shardBytes(i).buffer, s.shardBytes(i).byteOffset).getBigUint64(0, true))
    assert.ok(headerEnd(big, 0) > 256 * 1024, `${headerEnd(big, 0)}-byte headers`)

    const f = await open(bigUrl)
    server.resetStats()
    assert.equal((await f.parameterCount()).total, big.parameters)
    assert.equal(server.stats.requests, 4, 'one request per shard')
    for (const entry of server.stats.log) {
      const i = big.shardPaths.indexOf(/** @type {string} */ (entry.path.split('/').pop()))
      const end = headerEnd(big, i)
      assert.ok(entry.bytes >= end && entry.bytes <= end * 1.25 + 65536, `${entry.path}: ${entry.bytes} bytes for a ${end}-byte header`)
    }
    await f.close()

    const g = await open(bigUrl, { initialFetchSize: 64 * 1024 })
    server.resetStats()
    await g.loadHeaders()
    assert.equal(server.stats.requests, 8, 'the given window, then the rest of each header')
    await g.close()

    const h = await open(smallUrl)
    server.resetStats()
    await h.loadHeaders()
    assert.equal(server.stats.requests, 4)
    assert.ok(server.stats.log.every((e) => e.bytes <= 256 * 1024), 'small headers: the default window')
    await h.close()
  } finally {
    await server.close()
  }
})

test('loadHeaders({ concurrency }) and open(url, { concurrency }) bound the headers in flight', async () => {
  const server = await startServer({ latency: 5 })
  try {
    const url = serveSet(server, set)
    const f = await open(url)
    server.resetStats()
    await f.loadHeaders({ concurrency: 7 })
    assert.ok(server.stats.maxInFlight <= 7, `${server.stats.maxInFlight} in flight`)
    await f.close()
    const g = await open(url, { concurrency: 12 })
    server.resetStats()
    await g.parameterCount()
    assert.ok(server.stats.maxInFlight <= 12 && server.stats.maxInFlight > 7, `${server.stats.maxInFlight} in flight`)
    await g.close()
  } finally {
    await server.close()
  }
})

test('parameterCount counts each shard\'s names in its own header, and says which name a shard lacks', async () => {
  const plain = makeShardedSet({ tensors: 400, shards: 5, plant: { unusedShards: [2] } })
  const lacking = makeShardedSet({ tensors: 400, shards: 5, plant: { notInShard: ['model.layers.0.self_attn.o_proj.weight'] } })
  const fp8 = makeShardedSet({ tensors: 400, shards: 5, dtype: 'F8_E4M3' })
  for (const [set, expect] of /** @type {const} */ ([[plain, 'count'], [fp8, 'count'], [lacking, 'TensorNotFound']])) {
    const w = await writeSet(set)
    try {
      const f = /** @type {import('../../js/node.js').ShardedFile} */ (/** @type {unknown} */ (await open(w.indexPath)))
      if (expect === 'count') {
        const counted = await f.parameterCount()
        assert.equal(counted.total, set.parameters)
        assert.equal(Object.values(counted.byDtype).reduce((a, b) => a + b, 0) + Object.values(counted.byScheme).reduce((a, b) => a + b, 0), set.parameters)
      } else {
        const error = await fails(f.parameterCount(), 'TensorNotFound')
        assert.equal(error.tensor, 'model.layers.0.self_attn.o_proj.weight')
      }
      await f.close()
    } finally {
      await w.remove()
    }
  }
})

test('over the test server\'s link (the bench\'s --bandwidth), the shard headers cross it together and no faster than its rate', async () => {
  const RATE = 1e6  // bytes a second
  const small = makeShardedSet({ tensors: 400, shards: 8 })
  const server = await startServer({ bandwidth: RATE })
  try {
    const f = await open(serveSet(server, small))
    server.resetStats()
    const t0 = performance.now()
    await f.loadHeaders()
    const ms = performance.now() - t0
    const carried = (server.stats.bytes / RATE) * 1000
    assert.ok(carried > 20, `${server.stats.bytes} bytes: enough to time`)
    // Less the 4 ms an idle link lends its first piece (the server's LINK_SLACK), and a rounding.
    assert.ok(ms >= carried - 5, `${ms.toFixed(1)} ms for ${server.stats.bytes} bytes at ${RATE} B/s (${carried.toFixed(1)} ms)`)
    assert.ok(server.stats.maxInFlight > 1, 'the shards share the link')
    await f.close()
  } finally {
    await server.close()
  }
})

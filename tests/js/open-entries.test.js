// openFile and openSharded, called as apps call them: one kind each, so that TypeScript gives a
// SafetensorsFile or a ShardedFile (not a union) for any string. The other kind is refused with
// KindMismatch naming the function that opens it, before anything is read when the name says
// which it is (an `*.index.json`, a Hub file), after opening when only the bytes can (a bare Hub
// repo, looked up for the kind asked first). Files made with the project's writer; URLs from the
// test server (http-server.js) and the Hub emulation (hub-server.js).
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtemp, rm, writeFile as writeBytes } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import * as browser from '../../js/index.js'
import { SafetensorsFile, ShardedFile, openFile, openSharded, serialize } from '../../js/node.js'
import { fails } from './fails.js'
import { startServer } from './http-server.js'
import { startHub } from './hub-server.js'

const INDEX = 'model.safetensors.index.json'
/** @type {Record<string, Record<string, import('../../js/index.js').TensorLike>>} */
const SHARDS = {
  'model-00001-of-00002.safetensors': { a: { dtype: 'F32', shape: [2], data: new Float32Array([1, 2]) } },
  'model-00002-of-00002.safetensors': { b: { dtype: 'I32', shape: [3], data: new Int32Array([3, 4, 5]) } },
}

/** @type {string} */
let dir
/** @type {Uint8Array} */
let single
/** @type {Uint8Array} */
let index
/** @type {Record<string, Uint8Array>} */
const shardBytes = {}
/** @type {Awaited<ReturnType<typeof startServer>>} */
let server
/** @type {Awaited<ReturnType<typeof startHub>>} */
let hub

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'open-entries-'))
  single = await serialize({ w: { dtype: 'BF16', shape: [2, 2], data: new Uint16Array([1, 2, 3, 4]) } })
  await writeBytes(join(dir, 'model.safetensors'), single)
  /** @type {Record<string, string>} */
  const weightMap = {}
  for (const [path, tensors] of Object.entries(SHARDS)) {
    shardBytes[path] = await serialize(tensors)
    await writeBytes(join(dir, path), shardBytes[path])
    for (const name of Object.keys(tensors)) weightMap[name] = path
  }
  index = new TextEncoder().encode(JSON.stringify({ metadata: {}, weight_map: weightMap }))
  await writeBytes(join(dir, INDEX), index)

  server = await startServer()
  server.addFile('/one/model.safetensors', single)
  server.addFile(`/set/${INDEX}`, index)
  for (const [path, bytes] of Object.entries(shardBytes)) server.addFile(`/set/${path}`, bytes)
  hub = await startHub()
  hub.addFile('org/single', 'model.safetensors', single)
  hub.addFile('org/sharded', INDEX, index)
  for (const [path, bytes] of Object.entries(shardBytes)) hub.addFile('org/sharded', path, bytes)
})

after(async () => {
  await server?.close()
  await hub?.close()
  if (dir) await rm(dir, { recursive: true, force: true })
})

/** The server's request log since the last call. */
function requests() {
  const log = server.stats.log.map((e) => e.path)
  server.stats.log.length = 0
  return log
}

test('openFile opens one file from a path, a file: URL, an http URL, bytes and a Blob', async () => {
  for (const src of [join(dir, 'model.safetensors'), pathToFileURL(join(dir, 'model.safetensors')),
    server.url('/one/model.safetensors'), single, new Blob([single])]) {
    const f = await openFile(src)
    try {
      assert.ok(f instanceof SafetensorsFile, String(src))
      assert.deepEqual(f.info('w').shape, [2, 2])
      assert.equal(f.info('w').dtype, 'BF16')
      const t = await f.tensor('w')
      assert.deepEqual([...t.data], [1, 2, 3, 4])
      t.dispose()
    } finally {
      await f.close()
    }
  }
  assert.deepEqual(requests().filter((p) => p === '/one/model.safetensors').length > 0, true, 'the URL was read over HTTP')
})

test('openSharded opens a set from an index path, an index URL, and index bytes with shards', async () => {
  const sets = [
    await openSharded(join(dir, INDEX)),
    await openSharded(pathToFileURL(join(dir, INDEX))),
    await openSharded(server.url(`/set/${INDEX}`)),
    await openSharded(index, { shards: shardBytes }),
  ]
  try {
    for (const s of sets) {
      assert.ok(s instanceof ShardedFile)
      assert.deepEqual(s.shards, Object.keys(SHARDS))
      assert.deepEqual((await s.info('b')).shard, 'model-00002-of-00002.safetensors')
      const t = await s.tensor('b')
      assert.deepEqual([...t.data], [3, 4, 5])
      t.dispose()
    }
  } finally {
    await Promise.all(sets.map((s) => s.close()))
  }
  assert.ok(requests().includes(`/set/${INDEX}`))
})

test('openFile refuses a sharded set by its name, with KindMismatch naming openSharded, before reading it', async () => {
  requests()
  for (const src of [join(dir, INDEX), pathToFileURL(join(dir, INDEX)), server.url(`/set/${INDEX}`), new URL(server.url(`/set/${INDEX}`))]) {
    const e = await fails(openFile(src), 'KindMismatch', /openFile opens one safetensors file.*is a sharded set.*openSharded/)
    assert.match(e.message, /model\.safetensors\.index\.json/, 'the message names the source')
  }
  // An index's content given with its shards is a sharded set too.
  await fails(openFile(index, /** @type {any} */ ({ shards: shardBytes })), 'KindMismatch', /the source given is a sharded set.*openSharded/)
  assert.deepEqual(requests(), [], 'nothing was fetched')
})

test('openSharded refuses one file, with KindMismatch naming openFile, before reading it', async () => {
  requests()
  for (const src of [join(dir, 'model.safetensors'), server.url('/one/model.safetensors'), single, new Blob([single])]) {
    await fails(openSharded(/** @type {any} */ (src)), 'KindMismatch', /openSharded opens a sharded set.*is one safetensors file: open it with openFile/)
  }
  assert.deepEqual(requests(), [], 'nothing was fetched')
})

test('the browser entry has the same two: URLs and bytes', async () => {
  const f = await browser.openFile(server.url('/one/model.safetensors'))
  const s = await browser.openSharded(server.url(`/set/${INDEX}`))
  try {
    assert.ok(f instanceof SafetensorsFile && s instanceof ShardedFile)
    assert.deepEqual(s.names, ['a', 'b'])
    await fails(browser.openFile(server.url(`/set/${INDEX}`)), 'KindMismatch', /openSharded/)
    await fails(browser.openSharded(/** @type {any} */ (single)), 'KindMismatch', /openFile/)
  } finally {
    await Promise.all([f.close(), s.close()])
  }
})

test('Hub: a file is refused by its name; a bare repo is looked up for the kind asked first and refused when it holds the other', async () => {
  const endpoint = hub.base
  const hubRequests = () => hub.allRequests().filter((e) => e.server === 'hub').map((e) => e.file)
  const f = await openFile('hf://org/single', { endpoint })
  const s = await openSharded('hf://org/sharded', { endpoint })
  try {
    assert.ok(f instanceof SafetensorsFile && s instanceof ShardedFile)
    assert.deepEqual(s.names, ['a', 'b'])
  } finally {
    await Promise.all([f.close(), s.close()])
  }
  // openSharded asked for the index first: one lookup, no model.safetensors request.
  assert.deepEqual(hubRequests(), ['model.safetensors', INDEX])

  const before = hub.allRequests().length
  await fails(openFile(`hf://org/sharded/${INDEX}`, { endpoint }), 'KindMismatch', /openSharded/)
  await fails(openSharded('hf://org/single/model.safetensors', { endpoint }), 'KindMismatch', /openFile/)
  assert.equal(hub.allRequests().length, before, 'refused by the name: no request')

  // A bare repo holds whatever it holds: opened, found the other kind, closed and refused.
  const e = await fails(openFile('hf://org/sharded', { endpoint }), 'KindMismatch', /hf:\/\/org\/sharded is a sharded set.*openSharded/)
  assert.equal(e.tensor, null)
  await fails(openSharded('hf://org/single', { endpoint }), 'KindMismatch', /hf:\/\/org\/single is one safetensors file.*openFile/)
  // A repo with neither is NotFound, as with open.
  hub.addRepo('org/empty')
  await fails(openSharded('hf://org/empty', { endpoint }), 'NotFound', /neither model\.safetensors nor/)
})

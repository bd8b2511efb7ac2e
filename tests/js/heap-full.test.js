// The core on a full heap (issue 35, item 7): stats and the header's parse allocate inside C++,
// where a failed allocation used to abort the whole module (Emscripten's abort(), a
// RuntimeError, every later call on a broken heap). Each call is OutOfMemory or a right answer,
// whatever room is left, and leaves no memory behind. The heap is filled to its 4 GiB edge:
// this file runs in a process of its own. Each test has a timeout: a core whose allocator state
// was overwritten may hang rather than fail, and a hang must fail fast.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { SafetensorsError, open, serialize, serializeAwkward } from '../../js/node.js'
import { loadCore } from '../../js/wasm.js'
import { loadIndexModule, openIndexParser, parseIndexCore } from '../../js/core/index-map.js'

/**
 * Fills the heap but for one block of `most` bytes, then for each amount of room from 0 to
 * `most` by `step` leaves that much free and runs `calls`, each to succeed or fail with
 * OutOfMemory. Returns how many did which; the heap is emptied again.
 * @param {number} most @param {number} step @param {(() => Promise<unknown>)[]} calls
 * @param {any} [module] the wasm module whose heap is filled: the core unless given
 */
async function withRoom(most, step, calls, module) {
  const core = module ?? await loadCore()
  let aside = core._malloc(most) >>> 0
  const held = []
  for (let size = 1 << 30; size >= 16; size >>= 1) {
    for (let p; (p = core._malloc(size) >>> 0) !== 0;) held.push(p)
  }
  const outcomes = { ok: 0, OutOfMemory: 0 }
  try {
    for (let room = 0; room < most; room += step) {
      core._free(aside)
      const filler = core._malloc(most - room) >>> 0
      assert.notEqual(filler, 0)
      for (const call of calls) {
        try {
          await call()
          outcomes.ok++
        } catch (error) {
          assert.ok(error instanceof SafetensorsError && error.code === 'OutOfMemory', String(error))
          outcomes.OutOfMemory++
        }
      }
      core._free(filler)
      aside = core._malloc(most) >>> 0
      assert.notEqual(aside, 0, `room ${room}: a failed call left memory behind`)
    }
  } finally {
    for (const p of held) core._free(p)
    core._free(aside)
  }
  assert.ok(outcomes.ok > 0 && outcomes.OutOfMemory > 0, JSON.stringify(outcomes))
}

test('stats with 0 to 1.4 MiB left in the heap: a right answer or OutOfMemory, never an abort', async () => {
  const n = 1 << 17
  const f = await open(await serialize({
    h: { dtype: 'F16', shape: [n], data: new Uint16Array(n).fill(0x3c00) },   // 1.0: a one-pass code table
    w: { dtype: 'F32', shape: [n], data: new Float32Array(n).map((_, i) => i) }, // two passes
  }))
  const [h, w] = [await f.tensor('h'), await f.tensor('w')]
  const counted = (/** @type {() => Promise<{ count: number }> | { count: number }} */ stats) => async () => assert.equal((await stats()).count, n)
  await withRoom(1400 * 1024, 20 * 1024 + 296, [counted(() => h.stats({ bins: 1000 })), counted(() => w.stats()),
    counted(() => f.stats('h')), counted(() => f.stats('w', { bins: 4096 }))])
  const s = h.stats()
  assert.deepEqual([s.count, s.min, s.max], [n, 1, 1])
})

test('opening a 2 MB header with 0 to 24 MB left in the heap: opened or OutOfMemory, never an abort', async () => {
  /** @type {Record<string, { dtype: 'U8', shape: number[], data: Uint8Array }>} */
  const tensors = {}
  for (let i = 0; i < 20_000; i++) tensors[`model.layers.${i}.mlp.experts.weight`] = { dtype: 'U8', shape: [1], data: new Uint8Array([i & 0xff]) }
  const bytes = await serialize(tensors)
  await withRoom(24 << 20, (1 << 20) + 4104, [async () => {
    const f = await open(bytes)
    assert.equal(f.names.length, 20_000)
    await f.close()
  }])
})

test('a slice of 4096 ranges and a 5000-name serialize with 0 to 2 MB left: done or OutOfMemory, never an abort', async () => {
  const rows = 4096
  const data = Float32Array.from({ length: rows * 4 }, (_, i) => i)
  const f = await open(await serialize({ a: { dtype: 'F32', shape: [rows, 4], data } }))
  /** @type {Record<string, { dtype: 'U8', shape: number[], data: Uint8Array }>} */
  const tensors = {}
  for (let i = 0; i < 5000; i++) tensors[`tensor.name.${i}`] = { dtype: 'U8', shape: [1], data: new Uint8Array(1) }
  await withRoom(2 << 20, (64 << 10) + 296, [
    async () => {
      const t = await f.slice('a', ':, 1')  // one 4-byte range per row
      assert.equal(t.data[rows - 1], (rows - 1) * 4 + 1)
      t.dispose()
    },
    async () => { for await (const chunk of f.chunks('a', { slice: ':, 2' })) assert.equal(chunk.data[0], 2) },
    async () => assert.ok((await serialize(tensors)).length > 5000 * 8),
  ])
})

test('awkward arrays with 0 to 3 MB left in the heap: read or OutOfMemory, never an abort or a hang', { timeout: 120_000 }, async () => {
  // A form of 8 KB (40 fields), longer than the low memory a string copied to a null pointer
  // used to overwrite; and strings and lists, read one buffer at a time.
  const records = await open(await serializeAwkward(Array.from({ length: 4 }, (_, i) =>
    Object.fromEntries(Array.from({ length: 40 }, (_, k) => [`field_number_${k}`, k % 2 ? i : `s${i}`])))))
  const lists = await open(await serializeAwkward(Array.from({ length: 3000 }, (_, i) => `string number ${i}`)))
  assert.ok(String(records.metadata?.form).length > 4096)
  await withRoom(3 << 20, (40 << 10) + 296, [
    async () => {
      const a = await records.awkward()
      try { assert.equal(a.length, 4) } finally { a.dispose() }
    },
    async () => {
      const a = await lists.awkward()
      try { assert.equal((await a.toList()).at(-1), 'string number 2999') } finally { a.dispose() }
    },
  ])
})

test('a slice of 9 million ranges with 0 to 272 MiB left: OutOfMemory, never an abort', { timeout: 120_000 }, async () => {
  // One 1-byte range per row: 144 MB in the planner and 144 MB more for JS, more than any room
  // left here; the JS reservation, which used to stop at 256 MiB, no longer stands for them.
  const rows = 9_000_000
  const f = await open(await serialize({ a: { dtype: 'U8', shape: [rows, 2], data: new Uint8Array(rows * 2).fill(7) } }))
  /** @type {any} */
  let last = null
  await withRoom(273 << 20, (34 << 20) + 296, [
    async () => {
      try {
        (await f.slice('a', ':, 1')).dispose()
      } catch (error) {
        throw (last = error)
      }
      assert.fail('9 million ranges fitted')
    },
    async () => {
      const t = await f.slice('a', '0:2, 1')
      assert.deepEqual([...t.data], [7, 7])
      t.dispose()
    },
  ])
  // With 272 MiB left the core itself refuses, with the numbers.
  assert.match(last.message, /9000000 byte ranges(,| need) 144000000 bytes/)
})

test('a 1 MB sharded index parsed with 0 to 16 MiB left in its module: parsed or OutOfMemory, never an abort', { timeout: 120_000 }, async () => {
  // A parser kept open holds the module: otherwise, once its heap has grown, the next index
  // is read in a fresh module (js/core/index-map.js release()) and the filled one is let go.
  const keeper = await openIndexParser('keeper')
  const weightMap = Object.fromEntries(Array.from({ length: 20_000 }, (_, i) =>
    [`model.layers.${i}.mlp.weight`, `model-0000${(i % 3) + 1}-of-00003.safetensors`]))
  const bytes = new TextEncoder().encode(JSON.stringify({ metadata: { total_size: 1 }, weight_map: weightMap }))
  try {
    await withRoom(16 << 20, (256 << 10) + 296, [async () => {
      const index = await parseIndexCore(bytes, 'model.safetensors.index.json')
      try { assert.equal(index.shardOf('model.layers.19999.mlp.weight'), 1) } finally { index.dispose() }
    }], await loadIndexModule())
  } finally {
    keeper.dispose()
  }
})

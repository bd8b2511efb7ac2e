// Statistics on a full heap (issue 35, item 7): the core's stats allocate inside C++, where a
// failed allocation used to abort the whole module (Emscripten's abort(), a RuntimeError, every
// later call on a broken heap). Each call is OutOfMemory or a right answer, whatever room is
// left. The heap is filled to its 4 GiB edge: this file runs in a process of its own.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { SafetensorsError, open, serialize } from '../../js/node.js'
import { loadCore } from '../../js/wasm.js'

const n = 1 << 17
const f = await open(await serialize({
  h: { dtype: 'F16', shape: [n], data: new Uint16Array(n).fill(0x3c00) },   // 1.0: a one-pass code table
  w: { dtype: 'F32', shape: [n], data: new Float32Array(n).map((_, i) => i) }, // two passes
}))
const [h, w] = [await f.tensor('h'), await f.tensor('w')]

test('stats with 0 to 1.4 MiB left in the heap: a right answer or OutOfMemory, never an abort', async () => {
  const core = await loadCore()
  // One 2 MiB block kept aside, then everything else taken; each round frees it and takes it
  // back but for `room` bytes.
  const ROOM = 2 << 20
  let aside = core._malloc(ROOM) >>> 0
  const held = []
  for (let size = 1 << 30; size >= 16; size >>= 1) {
    for (let p; (p = core._malloc(size) >>> 0) !== 0;) held.push(p)
  }
  const outcomes = { ok: 0, OutOfMemory: 0 }
  try {
    for (let room = 0; room <= 1400 * 1024; room += 20 * 1024 + 296) {
      core._free(aside)
      const filler = core._malloc(ROOM - room) >>> 0
      assert.notEqual(filler, 0)
      const calls = [() => h.stats({ bins: 1000 }), () => w.stats(), () => f.stats('h'), () => f.stats('w', { bins: 4096 })]
      for (const call of calls) {
        try {
          const s = await call()
          assert.equal(s.count, n)
          outcomes.ok++
        } catch (error) {
          assert.ok(error instanceof SafetensorsError && error.code === 'OutOfMemory', String(error))
          outcomes.OutOfMemory++
        }
      }
      core._free(filler)
      aside = core._malloc(ROOM) >>> 0
      assert.notEqual(aside, 0, `room ${room}: a failed call left memory behind`)
    }
  } finally {
    for (const p of held) core._free(p)
    core._free(aside)
  }
  assert.ok(outcomes.ok > 0 && outcomes.OutOfMemory > 0, JSON.stringify(outcomes))
  const s = h.stats()
  assert.deepEqual([s.count, s.min, s.max], [n, 1, 1])
})

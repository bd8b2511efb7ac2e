// js/cli/read-ahead.js: tensors read ahead of a writer in batches, within its bounds, handed out in order.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readAhead } from '../../js/cli/read-ahead.js'

/** A reader whose loads finish when let through, counting what it holds. */
function slowReader() {
  const state = { inFlight: 0, most: 0, loads: /** @type {string[][]} */ ([]), disposed: /** @type {string[]} */ ([]) }
  /** @type {((fail?: boolean) => void)[]} */
  let gates = []
  return {
    state,
    /** Lets every load started so far finish (or fail). @param {boolean} [fail] */
    release(fail = false) {
      const now = gates
      gates = []
      for (const open of now) open(fail)
    },
    /** @param {string[]} names */
    load(names) {
      state.loads.push(names)
      state.inFlight++
      state.most = Math.max(state.most, state.inFlight)
      return new Promise((resolve, reject) => {
        gates.push((fail) => {
          state.inFlight--
          if (fail) reject(new Error(`${names.join()} failed`))
          else resolve(new Map(names.map((name) => [name, /** @type {any} */ ({ name, dispose: () => state.disposed.push(name) })])))
        })
      })
    },
  }
}

test('reads ahead in batches of neighbours, within `batches` and `bytes`; hands the tensors out in order', async () => {
  const r = slowReader()
  const order = Array.from({ length: 40 }, (_, i) => ({ name: `t${i}`, byteLength: 10 }))
  const ahead = readAhead(r, order, { bytes: 100, batches: 3, batchBytes: 30 })
  const first = ahead.take('t0')
  // Three batches of three (30 bytes each): 90 of the 100 bytes; a fourth batch waits for room.
  assert.deepEqual(r.state.loads, [['t0', 't1', 't2'], ['t3', 't4', 't5'], ['t6', 't7', 't8']])
  r.release()
  assert.equal((/** @type {any} */ (await first)).name, 't0')
  for (let i = 1; i < 40; i++) {
    const t = ahead.take(`t${i}`)
    r.release()
    assert.equal((/** @type {any} */ (await t)).name, `t${i}`)
  }
  assert.deepEqual(r.state.loads.flat(), order.map((w) => w.name), 'each read once, in order')
  assert.ok(r.state.most <= 3)
  assert.ok(r.state.loads.every((names) => names.length <= 3))
  ahead.dispose()
})

test('a tensor over `bytes` is left to the writer (null), and reading goes on past it', async () => {
  const r = slowReader()
  const ahead = readAhead(r, [{ name: 'a', byteLength: 10 }, { name: 'big', byteLength: 1000 }, { name: 'c', byteLength: 10 }], { bytes: 100 })
  const a = ahead.take('a')
  r.release()
  await a
  assert.deepEqual(r.state.loads, [['a']])
  assert.equal(await ahead.take('big'), null)
  assert.deepEqual(r.state.loads, [['a'], ['c']], 'the one after the large tensor is read meanwhile')
  const c = ahead.take('c')
  r.release()
  assert.equal((/** @type {any} */ (await c)).name, 'c')
  ahead.dispose()
})

test('a failed read fails its take; dispose frees what was read ahead and not taken', async () => {
  const r = slowReader()
  const ahead = readAhead(r, ['a', 'b', 'c', 'd'].map((name) => ({ name, byteLength: 1 })), { batchBytes: 1 })
  const a = ahead.take('a')
  assert.equal(r.state.loads.length, 4, 'one batch each')
  r.release(true)
  await assert.rejects(a, /a failed/)
  const r2 = slowReader()
  const ahead2 = readAhead(r2, ['a', 'b', 'c', 'd'].map((name) => ({ name, byteLength: 1 })), { batchBytes: 2 })
  const taken = ahead2.take('a')
  r2.release()
  ;(/** @type {any} */ (await taken)).dispose()
  ahead2.dispose()
  await new Promise((resolve) => setTimeout(resolve, 0))
  assert.deepEqual(r2.state.disposed.sort(), ['a', 'b', 'c', 'd'], 'a by its taker, the rest by dispose')
  ahead.dispose()
})

// js/cli/read-ahead.js: tensors read ahead of a writer, within its bounds, handed out in order.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readAhead } from '../../js/cli/read-ahead.js'

/** A reader whose reads finish when let through, counting what it holds. */
function slowReader() {
  const state = { inFlight: 0, most: 0, started: /** @type {string[]} */ ([]), disposed: /** @type {string[]} */ ([]) }
  /** @type {Map<string, (fail?: boolean) => void>} */
  const gates = new Map()
  return {
    state,
    /** Lets every read started so far finish. */
    release() {
      for (const [name, open] of gates) {
        gates.delete(name)
        open()
      }
    },
    /** @param {string} name */
    fail(name) { gates.get(name)?.(true); gates.delete(name) },
    /** @param {string} name */
    tensor(name) {
      state.started.push(name)
      state.inFlight++
      state.most = Math.max(state.most, state.inFlight)
      return new Promise((resolve, reject) => {
        gates.set(name, (fail) => {
          state.inFlight--
          if (fail) reject(new Error(`${name} failed`))
          else resolve(/** @type {any} */ ({ name, dispose: () => state.disposed.push(name) }))
        })
      })
    },
  }
}

test('reads ahead at most `tensors` at once and `bytes` in all; hands them out in order', async () => {
  const r = slowReader()
  const order = Array.from({ length: 20 }, (_, i) => ({ name: `t${i}`, byteLength: 10 }))
  const ahead = readAhead(r, order, { tensors: 4, bytes: 35 })
  const first = ahead.take('t0')
  // t0 is the writer's once taken; the reads ahead of it hold 30 bytes of the 35.
  assert.deepEqual(r.state.started, ['t0', 't1', 't2', 't3'])
  r.release()
  assert.equal((/** @type {any} */ (await first)).name, 't0')
  for (let i = 1; i < 20; i++) {
    const t = ahead.take(`t${i}`)
    r.release()
    assert.equal((/** @type {any} */ (await t)).name, `t${i}`)
  }
  assert.equal(r.state.started.length, 20)
  assert.ok(r.state.most <= 4)
  ahead.dispose()
})

test('a tensor over `bytes` is left to the writer (null), and reading goes on past it', async () => {
  const r = slowReader()
  const ahead = readAhead(r, [{ name: 'a', byteLength: 10 }, { name: 'big', byteLength: 1000 }, { name: 'c', byteLength: 10 }], { bytes: 100 })
  const a = ahead.take('a')
  r.release()
  await a
  assert.deepEqual(r.state.started, ['a'])
  assert.equal(await ahead.take('big'), null)
  assert.deepEqual(r.state.started, ['a', 'c'], 'the one after the large tensor is read meanwhile')
  const c = ahead.take('c')
  r.release()
  assert.equal((/** @type {any} */ (await c)).name, 'c')
  ahead.dispose()
})

test('a failed read fails its take; dispose frees what was read ahead and not taken', async () => {
  const r = slowReader()
  const ahead = readAhead(r, ['a', 'b', 'c', 'd'].map((name) => ({ name, byteLength: 1 })), { tensors: 4 })
  const a = ahead.take('a')
  r.fail('a')
  await assert.rejects(a, /a failed/)
  ahead.dispose()
  r.release()
  await new Promise((resolve) => setTimeout(resolve, 0))
  assert.deepEqual(r.state.disposed.sort(), ['b', 'c', 'd'])
})

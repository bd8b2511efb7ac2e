// The package's bounded concurrency (js/io/pool.js): pool() over a list, limiter() for calls that
// come one by one. Both keep to their bound, and pool() gives results in the order of its items.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { limiter, pool } from '../../js/io/pool.js'

/** A task that records how many run at once, finishing after `ms`. */
function gauge() {
  const state = { active: 0, most: 0 }
  /** @template T @param {T} value @param {number} ms @returns {Promise<T>} */
  const task = async (value, ms) => {
    state.active++
    state.most = Math.max(state.most, state.active)
    await new Promise((resolve) => setTimeout(resolve, ms))
    state.active--
    return value
  }
  return { state, task }
}

test('pool runs at most `limit` at once and returns the results in item order', async () => {
  const { state, task } = gauge()
  const results = await pool([5, 1, 4, 2, 3, 0], 3, undefined, (n) => task(n * 10, n * 3))
  assert.deepEqual(results, [50, 10, 40, 20, 30, 0])
  assert.equal(state.most, 3)
})

test('limiter keeps calls that come one by one within its bound, and every call completes', async () => {
  const { state, task } = gauge()
  const limited = limiter(2)
  const results = await Promise.all([1, 2, 3, 4, 5].map((n) => limited(() => task(n, 5))))
  assert.deepEqual(results, [1, 2, 3, 4, 5])
  assert.equal(state.most, 2)
  // A call that fails frees its slot too.
  await assert.rejects(limited(async () => { throw new Error('boom') }), /boom/)
  assert.deepEqual(await Promise.all([limited(() => task('a', 1)), limited(() => task('b', 1))]), ['a', 'b'])
})

test('pool gives each running task a signal of its own: 256 at once listening on theirs raise no MaxListenersExceededWarning, and all abort together', async () => {
  /** @type {string[]} */
  const warnings = []
  const onWarning = (/** @type {Error} */ w) => warnings.push(w.name)
  process.on('warning', onWarning)
  try {
    const user = new AbortController()
    /** @type {AbortSignal[]} */
    const signals = []
    const run = pool(Array.from({ length: 300 }, (_, i) => i), 256, user.signal, (i, signal) => new Promise((resolve, reject) => {
      signals.push(signal)
      // As fetch does: a listener on the signal it is given.
      signal.addEventListener('abort', () => reject(signal.reason))
      if (i === 0) setTimeout(() => user.abort(new Error('stop')), 20)
    }))
    await assert.rejects(run, /stop|abort/i)
    assert.equal(signals.length, 256, 'the 256 first tasks ran; none started after the abort')
    assert.equal(new Set(signals).size, 256, 'a signal each')
    assert.ok(signals.every((s) => s.aborted), 'every running task aborted')
    await new Promise((resolve) => setImmediate(resolve))
    assert.deepEqual(warnings.filter((w) => w === 'MaxListenersExceededWarning'), [])
  } finally {
    process.off('warning', onWarning)
  }
})

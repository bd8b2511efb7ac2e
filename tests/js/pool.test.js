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

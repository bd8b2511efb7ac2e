/**
 * Bounded concurrency with clean failure: the first error cancels the rest (their signal
 * aborts) and waits for them before it is thrown, so a caller that frees memory on failure
 * knows nothing is still writing into it.
 */
import { abortError, throwIfAborted } from '../errors.js'
import { checkConcurrency } from '../options.js'

/**
 * Runs `task` over `items`, `limit` at a time; the results in the order of `items`. The one
 * bounded-concurrency helper of the package: reads, shard headers, the CLI and the inspector.
 * @template T, R
 * @param {T[]} items
 * @param {number} limit
 * @param {AbortSignal | undefined} signal
 * @param {(item: T, signal: AbortSignal) => Promise<R>} task
 * @returns {Promise<R[]>}
 */
export async function pool(items, limit, signal, task) {
  // A limit of NaN would start no worker and resolve with nothing done.
  checkConcurrency(limit, 1)
  throwIfAborted(signal)
  const controller = new AbortController()
  const onAbort = () => controller.abort(signal?.reason)
  signal?.addEventListener('abort', onAbort)
  // Each task has a signal of its own, all aborted by one listener: fetch listens on the signal
  // it is given, and Node warns once one signal has more than 10 listeners (256 shard headers).
  /** @type {Set<AbortController>} */
  const running = new Set()
  controller.signal.addEventListener('abort', () => { for (const own of running) own.abort(controller.signal.reason) })
  /** @type {unknown} */
  let failure = null
  let next = 0
  /** @type {R[]} */
  const results = new Array(items.length)
  const worker = async () => {
    while (failure === null && !controller.signal.aborted && next < items.length) {
      const i = next++
      const own = new AbortController()
      running.add(own)
      try {
        results[i] = await task(items[i], own.signal)
      } catch (error) {
        failure ??= error
        controller.abort(error)
      } finally {
        running.delete(own)
      }
    }
  }
  try {
    await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker))
  } finally {
    signal?.removeEventListener('abort', onAbort)
  }
  if (signal?.aborted) throw abortError(signal)
  if (failure !== null) throw failure
  return results
}

/**
 * The same bound for calls that come one by one rather than as a list (reads an awkward array
 * makes as its entries are asked for): `limited(run)` runs `run` once fewer than `limit` others
 * are running; a finished call hands its slot straight to the next one waiting.
 * @param {number} limit
 * @returns {<T>(run: () => Promise<T>) => Promise<T>}
 */
export function limiter(limit) {
  checkConcurrency(limit, 1)
  let active = 0
  /** @type {(() => void)[]} */
  const waiting = []
  return async (run) => {
    if (active >= limit) await new Promise((resolve) => waiting.push(() => resolve(undefined)))
    else active++
    try {
      return await run()
    } finally {
      const next = waiting.shift()
      if (next) next()
      else active--
    }
  }
}

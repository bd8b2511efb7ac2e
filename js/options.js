/**
 * Numeric options, checked where they enter: a NaN (`Number(process.env.UNSET)`), an infinity,
 * a negative or a string must not reach arithmetic that turns it into zero readers, endless
 * retries or no backoff. A bad value is InvalidArgument naming the option.
 */
import { SafetensorsError } from './errors.js'

/** Requests or tasks at once: more than any server or disk serves usefully. */
const MAX_CONCURRENCY = 65536

/**
 * `value`, or `fallback` when it is undefined; InvalidArgument unless it is a number (an integer
 * unless `integer` is false) from `min` to `max`.
 * @param {string} name the option, as the user spells it
 * @param {unknown} value
 * @param {number} fallback
 * @param {{ min?: number, max?: number, integer?: boolean }} [range]
 * @returns {number}
 */
export function checkNumber(name, value, fallback, range = {}) {
  if (value === undefined) return fallback
  const { min = 0, max = Number.MAX_SAFE_INTEGER, integer = true } = range
  const ok = typeof value === 'number' && (integer ? Number.isSafeInteger(value) : Number.isFinite(value))
  if (!ok || /** @type {number} */ (value) < min || /** @type {number} */ (value) > max) {
    const shown = typeof value === 'string' ? JSON.stringify(value) : String(value)
    throw new SafetensorsError('InvalidArgument', `${name} must be ${integer ? 'an integer' : 'a number'} from ` +
      `${min} to ${max}, got ${shown}${typeof value === 'string' ? ' (a string: pass a number)' : ''}`)
  }
  return /** @type {number} */ (value)
}

/** @param {unknown} value @param {number} fallback @param {string} [name] */
export function checkConcurrency(value, fallback, name = 'concurrency') {
  return checkNumber(name, value, fallback, { min: 1, max: MAX_CONCURRENCY })
}

/**
 * The numeric options of `open` and `urlSource` (index.d.ts: HttpOptions, OpenOptions), all
 * checked before any request, whatever kind of source they end up with.
 * @param {Record<string, unknown>} options
 */
export function checkOpenOptions(options) {
  checkConcurrency(options.concurrency, 1)
  checkNumber('mergeGap', options.mergeGap, 0)
  checkNumber('initialFetchSize', options.initialFetchSize, 8, { min: 1, max: 2 ** 31 })
  checkNumber('retries', options.retries, 0, { max: 100 })
  checkNumber('retryDelay', options.retryDelay, 0, { max: 60_000, integer: false })
  checkNumber('wholeFileThreshold', options.wholeFileThreshold, 0)
  checkNumber('maxIndexBytes', options.maxIndexBytes, 1, { min: 1 })
  checkIdleTimeout(options.idleTimeout)
}

/** ms over 0, or Infinity for none. @param {unknown} value @param {number} [fallback] */
export function checkIdleTimeout(value, fallback = Infinity) {
  if (value === Infinity) return value
  return checkNumber('idleTimeout (ms; Infinity for none)', value, fallback, { min: 1, integer: false })
}

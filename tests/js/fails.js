/**
 * The tests' check of a failure: `action` rejects (or throws) a SafetensorsError with `code`, its
 * message matching `message` when given; the error is returned for more checks.
 */
import assert from 'node:assert/strict'
import { SafetensorsError } from '../../js/node.js'

/**
 * @param {Promise<unknown> | (() => unknown)} action
 * @param {string} code @param {RegExp} [message]
 * @returns {Promise<SafetensorsError>}
 */
export async function fails(action, code, message) {
  try {
    await (typeof action === 'function' ? action() : action)
  } catch (error) {
    assert.ok(error instanceof SafetensorsError, `not a SafetensorsError: ${error}`)
    assert.equal(error.code, code, error.message)
    if (message) assert.match(error.message, message)
    return error
  }
  assert.fail(`expected ${code}, it succeeded`)
}

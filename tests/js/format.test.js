// js/format.js's shape text, as the CLI's tables and the inspector show shapes.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { formatShape } from '../../js/format.js'

test('formatShape: brackets, comma and space; bigints past 2^53 exact; scalars []; any array-like', () => {
  assert.equal(formatShape([]), '[]')
  assert.equal(formatShape([0]), '[0]')
  assert.equal(formatShape([4096, 7168]), '[4096, 7168]')
  assert.equal(formatShape([2n ** 64n - 1n, 3n]), '[18446744073709551615, 3]')
  assert.equal(formatShape(new Uint32Array([1, 2, 3])), '[1, 2, 3]')
  assert.equal(formatShape({ length: 2, 0: 5, 1: 6 }), '[5, 6]')
})

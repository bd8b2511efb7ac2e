// The cache's digests (js/io/digest.js): XXH64 as published (its reference vectors), and block
// digests that do not depend on how the bytes were cut into pieces, nor match another label's.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { BLOCK, BlockDigests, DIGEST, blockDigest, digestOf, hex, xxh64 } from '../../js/io/digest.js'

const text = (/** @type {string} */ s) => new TextEncoder().encode(s)
/** The digest as the usual hex of the 64-bit number (the bytes are little-endian). @param {Uint8Array} d */
const number = (d) => hex(d.slice().reverse())

test('XXH64 gives the reference values, with and without a seed', () => {
  assert.equal(number(xxh64(text(''))), 'ef46db3751d8e999')
  assert.equal(number(xxh64(text('a'))), 'd24ec4f1a98c6e5b')
  assert.equal(number(xxh64(text('abc'))), '44bc2cf5ad770999')
  assert.equal(number(xxh64(text('Nobody inspects the spammish repetition'))), 'fbcea83c8a378bf1')
  const seed = new Uint8Array(8)
  seed[0] = 1
  assert.notEqual(number(xxh64(text('abc'), seed)), '44bc2cf5ad770999')
})

test('block digests: the same for any cut of the bytes, one per block, bound to their label and block', () => {
  const bytes = Uint8Array.from({ length: 2 * BLOCK + 12345 }, (_, i) => (i * 2654435761) >>> 24)
  const whole = new BlockDigests('L')
  whole.update(bytes)
  const sums = whole.finish()
  assert.equal(sums.length, 3 * DIGEST)
  const cut = new BlockDigests('L')
  for (let at = 0; at < bytes.length; at += 77_777) cut.update(bytes.subarray(at, at + 77_777))
  assert.deepEqual(cut.finish(), sums)
  assert.deepEqual(sums.subarray(DIGEST, 2 * DIGEST), blockDigest('L', 1, bytes.subarray(BLOCK, 2 * BLOCK)))
  assert.notDeepEqual(blockDigest('L', 0, bytes.subarray(BLOCK, 2 * BLOCK)), sums.subarray(DIGEST, 2 * DIGEST), 'a block moved')
  const other = new BlockDigests('M')
  other.update(bytes)
  assert.notDeepEqual(other.finish(), sums, 'another label')
  assert.equal(digestOf('L', [bytes.subarray(0, 5), bytes.subarray(5)]), digestOf('L', [bytes]))
})

// Prefix (js/io/prefix.js): a URL's first answer kept as its pieces. What the reads of a file's
// first window see: the same bytes as one joined array, views where a piece holds a span, and
// nothing past the length kept (a body cut to what was asked).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Prefix } from '../../js/io/prefix.js'

const whole = Uint8Array.from({ length: 100 }, (_, i) => i)
const pieces = [whole.slice(0, 30), whole.slice(30, 31), whole.slice(31, 80), whole.slice(80)]

test('spans, slice and bytes give the joined bytes, within the length kept', () => {
  const p = new Prefix(pieces.map((x) => x.slice()), 90)
  for (const [from, to] of [[0, 90], [0, 30], [29, 31], [30, 31], [10, 85], [80, 90], [45, 45]]) {
    assert.deepEqual(p.slice(from, to), whole.subarray(from, to), `slice(${from}, ${to})`)
    const joined = [...p.spans(from, to)].flatMap((s) => [...s])
    assert.deepEqual(joined, [...whole.subarray(from, to)], `spans(${from}, ${to})`)
  }
  assert.equal(p.slice(35, 70).buffer, p.pieces[2].buffer, 'a span inside one piece is a view of it')
  assert.deepEqual(p.bytes(), whole.subarray(0, 90))
  assert.equal(p.pieces.length, 1, 'joined once')
  assert.deepEqual(p.slice(10, 85), whole.subarray(10, 85), 'the same bytes after joining')
})

test('Prefix.of one array: views, no copy', () => {
  const p = Prefix.of(whole)
  assert.equal(p.length, 100)
  assert.equal(p.slice(5, 50).buffer, whole.buffer)
  assert.equal(p.bytes().buffer, whole.buffer)
  assert.deepEqual([...Prefix.of(new Uint8Array(0)).spans(0, 0)], [])
})

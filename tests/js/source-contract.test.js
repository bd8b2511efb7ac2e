// A user's ByteSource held to its contract (issue 35, item 7): what it gives crosses into the
// wasm heap, so more bytes than asked, something other than a Uint8Array, a view outside the
// read or bytes never written are coded errors, never a write past a heap block or a tensor
// of whatever the heap held.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { open, serialize } from '../../js/node.js'
import { fails } from './fails.js'

const DATA = Uint8Array.from({ length: 4096 }, (_, i) => (i * 13 + 5) & 0xff)
const bytes = await serialize({ a: { dtype: 'U8', shape: [DATA.length], data: DATA } })

/**
 * A ByteSource over `bytes` whose read(offset, length) gives `give(offset, length, exact)`.
 * @param {(offset: number, length: number, exact: Uint8Array) => unknown} give
 */
const readSource = (give) => ({
  byteLength: bytes.length,
  /** @param {number} offset @param {number} length */
  async read(offset, length) { return give(offset, length, bytes.slice(offset, offset + length)) },
})

test('read() giving more bytes than asked is InvalidSource: the header\'s length, the header, a tensor', async () => {
  const more = (/** @type {number} */ at) => readSource((offset, length, exact) => {
    if (offset !== at) return exact
    const out = new Uint8Array(length + 8)
    out.set(exact)
    return out
  })
  await fails(open(more(0)), 'InvalidSource', /gave 16 bytes at offset 0 where 8 were asked for/)
  await fails(open(more(8)), 'InvalidSource', /at offset 8 where/)
  const f = await open(more(bytes.length - DATA.length))
  await fails(f.tensor('a'), 'InvalidSource', /gave 4104 bytes .* where 4096 were asked for/)
})

test('read() giving fewer bytes is ShortRead; not a Uint8Array is InvalidSource', async () => {
  await fails(open(readSource((offset, length, exact) => exact.subarray(0, offset === 0 ? 4 : length))), 'ShortRead',
    /asked for 8 bytes at offset 0, the source gave 4/)
  for (const wrong of [(/** @type {Uint8Array} */ b) => Array.from(b), (/** @type {Uint8Array} */ b) => b.buffer, () => 'bytes', () => undefined]) {
    await fails(open(readSource((offset, length, exact) => wrong(exact))), 'InvalidSource', /not a Uint8Array/)
  }
})

test('readInto: a view outside the read is InvalidSource, bytes left unwritten ShortRead', async () => {
  const dataStart = bytes.length - DATA.length
  /** @param {(offset: number, length: number, viewAt: (at: number, n: number) => Uint8Array) => void} into */
  const intoSource = (into) => ({
    ...readSource((offset, length, exact) => exact),
    /** @param {number} offset @param {number} length @param {(at: number, n: number) => Uint8Array} viewAt */
    async readInto(offset, length, viewAt) {
      if (offset < dataStart) viewAt(0, length).set(bytes.subarray(offset, offset + length))
      else into(offset, length, viewAt)
    },
  })
  const past = await open(intoSource((offset, length, viewAt) => viewAt(0, length + 64).fill(0xff)))
  await fails(past.tensor('a'), 'InvalidSource', /a view of bytes 0 to 4160 of a 4096-byte read/)
  const before = await open(intoSource((offset, length, viewAt) => viewAt(-64, 64).fill(0xff)))
  await fails(before.tensor('a'), 'InvalidSource', /a view of bytes -64 to 0/)
  // A readInto that writes nothing: the tensor would hold what the heap held before.
  const lazy = await open(intoSource(() => {}))
  await fails(lazy.tensor('a'), 'ShortRead', /asked for 4096 bytes at offset \d+, the source's readInto wrote only the first 0/)
  const half = await open(intoSource((offset, length, viewAt) => viewAt(0, length / 2).set(bytes.subarray(offset, offset + length / 2))))
  await fails(half.tensor('a'), 'ShortRead', /wrote only the first 2048/)
  // The first half twice covers only the first half; views out of order that cover it all do.
  const twice = await open(intoSource((offset, length, viewAt) => {
    for (let i = 0; i < 2; i++) viewAt(0, length / 2).set(bytes.subarray(offset, offset + length / 2))
  }))
  await fails(twice.tensor('a'), 'ShortRead', /wrote only the first 2048/)
  const backwards = await open(intoSource((offset, length, viewAt) => {
    for (let at = length - 1024; at >= 0; at -= 1024) viewAt(at, 1024).set(bytes.subarray(offset + at, offset + at + 1024))
  }))
  assert.deepEqual((await backwards.tensor('a')).bytes, DATA)
  const good = await open(intoSource((offset, length, viewAt) => viewAt(0, length).set(bytes.subarray(offset, offset + length))))
  assert.deepEqual((await good.tensor('a')).bytes, DATA)
})

test('stream() running past the range asked, or giving strings, is InvalidSource', async () => {
  /** @param {(offset: number, length: number) => Iterable<unknown>} pieces */
  const streamSource = (pieces) => ({
    ...readSource((offset, length, exact) => exact),
    /** @param {number} offset @param {number} length */
    async* stream(offset, length) { yield* pieces(offset, length) },
  })
  const dataStart = bytes.length - DATA.length
  const long = await open(streamSource((offset, length) =>
    [bytes.slice(offset, offset + length), ...offset === dataStart ? [new Uint8Array(8)] : []]))
  await fails(long.tensor('a'), 'InvalidSource', /gave 8 bytes at offset \d+ where 0 were asked for/)
  await fails(open(streamSource(() => ['{}'])), 'InvalidSource', /gave {} for bytes at offset 8, not a Uint8Array/)
})

test('a byteLength that is not a length is InvalidSource', async () => {
  for (const byteLength of [NaN, -1, 1.5, Infinity]) {
    await fails(open({ byteLength, read: async () => new Uint8Array(0) }), 'InvalidSource',
      new RegExp(`byteLength must be an integer .* got ${byteLength}`))
  }
})

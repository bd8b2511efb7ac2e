// Nothing the API does may leave wasm heap behind: after a warm-up (Embind and the allocator
// settle on first use), repeated cycles of opening, reading, converting and failing must bring
// core.heapInUse() back to where it started.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { open, serialize, serializeStream, SafetensorsError } from '../../js/index.js'
import { loadCore } from '../../js/wasm.js'

const core = await loadCore()
const encoder = new TextEncoder()

/**
 * Runs `cycle` once to warm up, then `times` more, and checks the heap in use is unchanged.
 * @param {number} times
 * @param {() => Promise<void>} cycle
 */
async function assertNoLeak(times, cycle) {
  await cycle()
  const baseline = core.heapInUse()
  for (let i = 0; i < times; i++) await cycle()
  assert.equal(core.heapInUse(), baseline, `heap in use after ${times} cycles`)
}

/** @param {string} header @param {number} dataLength */
function rawFile(header, dataLength) {
  const h = encoder.encode(header)
  const out = new Uint8Array(8 + h.length + dataLength)
  new DataView(out.buffer).setBigUint64(0, BigInt(h.length), true)
  out.set(h, 8)
  return out
}

const FILE = await serialize({
  w: { dtype: 'BF16', shape: [16, 32], data: Uint16Array.from({ length: 512 }, (_, i) => 0x3f80 + (i % 64)) },
  b: { dtype: 'F32', shape: [32], data: Float32Array.from({ length: 32 }, (_, i) => i / 7) },
  q: { dtype: 'F4', shape: [4, 8], data: new Uint8Array(16).fill(0x21) },
  s: { dtype: 'I64', shape: [], data: new BigInt64Array([3n]) },
}, { metadata: { format: 'pt', note: 'leak test' } })

test('1,000 open / read / slice / convert / dispose / close cycles leak nothing', async () => {
  await assertNoLeak(1000, async () => {
    const f = await open(FILE)
    const tensors = await f.load(['w', 'b'])
    const w = /** @type {import('../../js/tensor.js').Tensor} */ (tensors.get('w'))
    const slice = await f.slice('w', [[2, 5], [-8, null]])
    assert.equal(slice.toFloat32().length, 24)
    assert.equal(w.stats({ bins: 16 }).count, 512)
    assert.equal(tensors.get('b')?.toFloat32()[7], 1)
    const q = await f.slice('q', '1:3')
    q.copy()
    for (const t of [...tensors.values(), slice, q]) t.dispose()
    await f.close()
  })
})

test('failing opens (every corrupt-file error) leak nothing', async () => {
  const corrupt = [
    new Uint8Array(5),                                                            // HeaderTooSmall
    new Uint8Array([0x01, 0xe1, 0xf5, 0x05, 0, 0, 0, 0]),                         // HeaderTooLarge
    new Uint8Array([100, 0, 0, 0, 0, 0, 0, 0, 0x7b, 0x7d]),                       // InvalidHeaderLength
    rawFile('{"\u00ff":1}', 0).map((b, i) => (i === 10 ? 0xff : b)),              // InvalidHeader
    rawFile('{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]', 4),          // not JSON
    rawFile('{"a":{"dtype":"F33","shape":[1],"data_offsets":[0,4]}}', 4),        // unknown dtype
    rawFile('{"__metadata__":{"k":"v","k":"w"}}', 0),                             // duplicate key
    rawFile(`${'['.repeat(200)}${']'.repeat(200)}`, 0),                           // nesting
    rawFile('{"a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}}', 2),         // InvalidOffset
    rawFile('{"a":{"dtype":"U8","shape":[4294967296,4294967296],"data_offsets":[0,0]}}', 0), // overflow
    rawFile('{"a":{"dtype":"F4","shape":[3],"data_offsets":[0,1]}}', 1),         // MisalignedSlice
    rawFile('{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}}', 4),        // TensorInvalidInfo
    rawFile('{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}}', 3),         // MetadataIncompleteBuffer
  ]
  const codes = new Set()
  await assertNoLeak(100, async () => {
    for (const bytes of corrupt) {
      await assert.rejects(open(bytes), (e) => {
        codes.add(/** @type {SafetensorsError} */ (e).code)
        return e instanceof SafetensorsError
      })
    }
  })
  assert.equal(codes.size, 10, [...codes].join(', '))
  // Every prefix of a valid file fails cleanly, and leaks nothing either.
  await assertNoLeak(3, async () => {
    for (let n = 0; n < FILE.length; n++) await assert.rejects(open(FILE.subarray(0, n)), SafetensorsError)
  })
})

test('failing reads, slices and writes leak nothing', async () => {
  let failAfter = Infinity
  const inner = FILE
  const source = {
    byteLength: inner.length,
    /** @param {number} offset @param {number} length */
    async read(offset, length) {
      if (failAfter-- <= 0) throw new SafetensorsError('HttpError', 'the network went away')
      return inner.subarray(offset, offset + length)
    },
  }
  await assertNoLeak(300, async () => {
    failAfter = Infinity
    const f = await open(source)
    failAfter = 0
    await assert.rejects(f.load(['w', 'b', 's']), { code: 'HttpError' })
    await assert.rejects(f.tensor('b'), { code: 'HttpError' })
    await assert.rejects(f.slice('w', '0'), { code: 'HttpError' })
    await assert.rejects(f.load(['w', 'nope']), { code: 'TensorNotFound' })
    await assert.rejects(f.slice('w', '0, 0, 0'), { code: 'TooManySlices' })
    await assert.rejects(f.slice('w', '99'), { code: 'SliceOutOfRange' })
    await assert.rejects(f.slice('w', '0::2'), { code: 'InvalidSlice' })
    await assert.rejects(f.slice('q', ':, 1:2'), { code: 'MisalignedSlice' })
    const aborted = AbortSignal.abort()
    failAfter = Infinity
    await assert.rejects(f.tensor('w', { signal: aborted }), { code: 'Aborted' })
    await assert.rejects(serialize({ a: { dtype: 'F32', shape: [2], data: new Float32Array(3) } }), { code: 'TensorInvalidInfo' })
    await assert.rejects(serializeStream({ __metadata__: { dtype: 'U8', shape: [1], data: new Uint8Array(1) } }),
      { code: 'InvalidHeaderDeserialization' })
    await f.close()
  })
})

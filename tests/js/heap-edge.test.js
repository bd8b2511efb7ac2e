// The wasm heap at its 4 GiB edge: a request it cannot hold fails with OutOfMemory, never hands
// out memory past the end of wasm memory (which would overwrite tensors already read), and leaves
// the heap usable. Files are virtual (bytes made on demand), so gigabytes cost no disk; every
// 4 KiB page of a file holds one byte value made from its offset, so a page that lands in the
// wrong place shows. This file runs in a process of its own: the first test sees a fresh heap.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { SafetensorsError, open } from '../../js/node.js'
import { loadCore } from '../../js/wasm.js'

const MiB = 1024 * 1024
const GiB = 1024 * MiB
const PAGE = 4096

/** The byte every position of the page at absolute offset `o` holds. @param {number} o */
const pageByte = (o) => (Math.floor(o / PAGE) * 7 + 1) & 0xff

/**
 * A safetensors file of U8 tensors of the given sizes, as a ByteSource that makes its bytes.
 * @param {Record<string, number>} sizes name -> bytes, in file order
 */
function virtualFile(sizes) {
  /** @type {Record<string, { dtype: string, shape: number[], data_offsets: [number, number] }>} */
  const header = {}
  let end = 0
  for (const [name, bytes] of Object.entries(sizes)) {
    header[name] = { dtype: 'U8', shape: [bytes], data_offsets: [end, end + bytes] }
    end += bytes
  }
  let json = JSON.stringify(header)
  json += ' '.repeat((8 - (json.length % 8)) % 8)
  const prefix = new Uint8Array(8 + json.length)
  new DataView(prefix.buffer).setBigUint64(0, BigInt(json.length), true)
  prefix.set(new TextEncoder().encode(json), 8)
  const byteLength = prefix.length + end
  /** @param {Uint8Array} out @param {number} offset absolute offset of out[0] */
  const fill = (out, offset) => {
    let i = 0
    for (; i < out.length && offset + i < prefix.length; i++) out[i] = prefix[offset + i]
    while (i < out.length) {
      const o = offset + i
      const stop = Math.min(out.length, i + PAGE - (o % PAGE))
      out.fill(pageByte(o), i, stop)
      i = stop
    }
  }
  return {
    byteLength,
    dataStart: prefix.length,
    /** @param {number} offset @param {number} length */
    async read(offset, length) {
      const out = new Uint8Array(length)
      fill(out, offset)
      return out
    },
    /** @param {number} offset @param {number} length @param {(at: number, n: number) => Uint8Array} viewAt */
    async readInto(offset, length, viewAt) {
      for (let at = 0; at < length; at += 64 * MiB) {
        const n = Math.min(64 * MiB, length - at)
        fill(viewAt(at, n), offset + at)
        await new Promise((resolve) => setImmediate(resolve))  // let concurrent reads interleave
      }
    },
  }
}

/**
 * Checks every page of a tensor's bytes (first, middle and last byte of each).
 * @param {import('../../js/node.js').Tensor} t @param {number} start the tensor's absolute offset
 */
function checkPages(t, start) {
  const bytes = t.bytes
  assert.equal(bytes.length, t.byteLength)
  let wrong = 0
  for (let i = 0; i < bytes.length; i = i - ((start + i) % PAGE) + PAGE) {
    const last = Math.min(bytes.length, i - ((start + i) % PAGE) + PAGE) - 1
    const want = pageByte(start + i)
    if (bytes[i] !== want || bytes[last] !== want || bytes[Math.floor((i + last) / 2)] !== want) wrong++
  }
  assert.equal(wrong, 0, `${t.name}: ${wrong} pages hold the wrong bytes`)
}

/** @param {Promise<unknown>} promise @param {RegExp} message */
async function outOfMemory(promise, message) {
  await assert.rejects(promise, (error) => {
    assert.ok(error instanceof SafetensorsError, String(error))
    assert.equal(error.code, 'OutOfMemory')
    assert.match(error.message, message)
    return true
  })
}

const sizes = { big3g: 3 * GiB, a2g: 2 * GiB, b2g: 2 * GiB, c256m: 256 * MiB, d1g: GiB }

test('a single 3 GiB tensor loads on a fresh heap, right to its last page', async () => {
  const core = await loadCore()
  const f = /** @type {import('../../js/node.js').SafetensorsFile} */ (await open(virtualFile(sizes)))
  const start = core.heapInUse()
  const t = await f.tensor('big3g')
  checkPages(t, f.info('big3g').byteOffset)
  t.dispose()
  assert.equal(core.heapInUse(), start)
})

test('one request past what wasm32 can address is OutOfMemory naming the bytes and what the heap holds', async () => {
  const core = await loadCore()
  const f = /** @type {import('../../js/node.js').SafetensorsFile} */ (await open(virtualFile({ huge: 0xffb00000 })))
  const start = core.heapInUse()
  await outOfMemory(f.tensor('huge'), new RegExp(`cannot allocate ${0xffb00000} bytes in the wasm heap, which holds ${start} bytes now`))
  assert.equal(core.heapInUse(), start)
})

test('tensors summing past 4 GiB, kept in every order: the one that does not fit fails, the others keep their bytes', async () => {
  const core = await loadCore()
  const f = /** @type {import('../../js/node.js').SafetensorsFile} */ (await open(virtualFile(sizes)))
  const start = core.heapInUse()
  const names = ['a2g', 'b2g', 'c256m']
  const orders = [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]]
  for (const order of orders) {
    /** @type {import('../../js/node.js').Tensor[]} */
    const held = []
    let refused = 0
    for (const i of order) {
      try {
        held.push(await f.tensor(names[i]))
      } catch (error) {
        assert.equal(/** @type {SafetensorsError} */ (error).code, 'OutOfMemory', String(error))
        refused++
      }
    }
    assert.equal(refused, 1, `order ${order}: 2 + 2 GiB + 256 MiB cannot all fit, two of them can`)
    for (const t of held) checkPages(t, f.info(t.name).byteOffset)
    for (const t of held) t.dispose()
    assert.equal(core.heapInUse(), start, `order ${order}: heap back to its start`)
  }
})

test('concurrent reads where one cannot fit: the one that fits has every page right; later reads succeed', async () => {
  const core = await loadCore()
  const f = /** @type {import('../../js/node.js').SafetensorsFile} */ (await open(virtualFile(sizes)))
  const start = core.heapInUse()
  const held = await f.tensor('a2g')
  const [big, small] = await Promise.allSettled([f.tensor('b2g'), f.tensor('c256m')])
  assert.equal(big.status, 'rejected')
  assert.equal(/** @type {SafetensorsError} */ (/** @type {PromiseRejectedResult} */ (big).reason).code, 'OutOfMemory')
  assert.equal(small.status, 'fulfilled')
  const t = /** @type {PromiseFulfilledResult<import('../../js/node.js').Tensor>} */ (small).value
  checkPages(t, f.info('c256m').byteOffset)
  checkPages(held, f.info('a2g').byteOffset)
  // load() of both at once fails whole and frees what it had allocated.
  const before = core.heapInUse()
  await outOfMemory(f.load(['d1g', 'b2g']), /cannot allocate/)
  assert.equal(core.heapInUse(), before)
  // The heap still works: more reads, right bytes (2.25 GiB held, 3 GiB claimed before: the 1 GiB
  // fits only by joining the rest of the heap to the hole at its top).
  const d = await f.tensor('d1g')
  checkPages(d, f.info('d1g').byteOffset)
  for (const x of [held, t, d]) x.dispose()
  assert.equal(core.heapInUse(), start)
  const again = await f.load(['a2g', 'c256m'])
  for (const [name, x] of again) {
    checkPages(x, f.info(name).byteOffset)
    x.dispose()
  }
  assert.equal(core.heapInUse(), start)
})

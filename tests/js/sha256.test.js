// js/stream/sha256.js: the buffering between pieces and the padding around the kernels module's
// compression, against node:crypto, with both builds of the kernels. (f.digest's tests, in
// digest.test.js, hash files through it as apps do.)
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { heapAlloc, heapFree, heapView } from '../../js/core/index.js'
import { loadKernels } from '../../js/quant/kernels.js'
import { Sha256 } from '../../js/stream/sha256.js'
import { loadCore } from '../../js/wasm.js'

const sha = (/** @type {Uint8Array} */ b) => createHash('sha256').update(b).digest('hex')

for (const variant of /** @type {const} */ (['simd', 'nosimd'])) {
  test(`Sha256 (${variant} kernels): every length to 200 bytes, every split into two and three pieces`, async () => {
    const core = await loadCore()
    const hash = new Sha256(core, await loadKernels(core, { variant }))
    const n = 200
    const at = heapAlloc(core, n)
    try {
      const m = heapView(core, at, n)
      m.forEach((_, i) => { m[i] = (37 * i + 11) & 255 })
      const message = m.slice()
      // Each length: each padding case (a block of its own from 56 bytes mod 64 on).
      for (let len = 0; len <= n; len++) {
        hash.update(at, len)
        assert.equal(hash.hex(), sha(message.subarray(0, len)), `length ${len}`)
      }
      const whole = sha(message)
      for (let i = 0; i <= n; i++) {
        hash.update(at, i)
        hash.update(at + i, n - i)
        assert.equal(hash.hex(), whole, `split at ${i}`)
      }
      for (let i = 0; i <= n; i += 7) {
        for (let j = i; j <= n; j += 3) {
          hash.update(at, i)
          hash.update(at + i, j - i)
          hash.update(at + j, n - j)
          assert.equal(hash.hex(), whole, `splits at ${i} and ${j}`)
        }
      }
      // A byte at a time, with empty updates between.
      for (let i = 0; i < n; i++) {
        hash.update(at + i, 1)
        hash.update(at, 0)
      }
      assert.equal(hash.hex(), whole)
    } finally {
      hash.free()
      heapFree(core, at)
    }
  })
}

test('Sha256: a million bytes in uneven pieces, as node:crypto, and its heap block given back', async () => {
  const core = await loadCore()
  const before = core.heapInUse()
  const hash = new Sha256(core, await loadKernels(core))
  const n = 1_000_000
  const at = heapAlloc(core, n)
  const m = heapView(core, at, n)
  m.fill(0x61)
  let done = 0
  for (let step = 1; done < n; step = (step * 3) % 1021 + 1) {
    const k = Math.min(step, n - done)
    hash.update(at + done, k)
    done += k
  }
  assert.equal(hash.hex(), 'cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0')
  hash.free()
  heapFree(core, at)
  assert.equal(core.heapInUse(), before)
})

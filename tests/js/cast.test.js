// castTensor: F16 and BF16 exhaustively (every pattern decodes to its value and casts back to
// itself), F32 -> BF16 / F16 on every rounding boundary of both formats plus 1M random bit
// patterns, F64 -> BF16 / F16 including values that a double rounding gets wrong, the other
// dtypes, and the API's contract (inputs on and off the wasm heap, refusals, no leaks).
// The expected values come from an arithmetic formula in this file (scale, round half to even
// on a double, rescale), not from bit tricks like the core's or the fixtures' encoders.
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { castTensor, open, serialize } from '../../js/node.js'
import { loadCore } from '../../js/wasm.js'
import { prng } from '../fixtures/make-sample.js'

const core = await loadCore()

/** @typedef {{ name: string, manBits: number, bias: number }} HalfFormat */
/** @type {HalfFormat} */
const F16 = { name: 'F16', manBits: 10, bias: 15 }
/** @type {HalfFormat} */
const BF16 = { name: 'BF16', manBits: 7, bias: 127 }

const f32 = new Float32Array(1)
const u32 = new Uint32Array(f32.buffer)
/** @param {number} bits @returns {number} the float32 with these bits */
const fromBits = (bits) => { u32[0] = bits; return f32[0] }
/** @param {number} x @returns {number} the bits of fround(x) */
const bitsOf = (x) => { f32[0] = x; return u32[0] }

/** floor(log2(a)) for a finite a > 0, exactly. @param {number} a */
function exponentOf(a) {
  let e = Math.floor(Math.log2(a))
  while (2 ** e > a) e--
  while (2 ** (e + 1) <= a) e++
  return e
}

/** @param {number} r @returns {number} r rounded to an integer, ties to even */
function roundHalfEven(r) {
  const floor = Math.floor(r)
  const rest = r - floor
  return rest > 0.5 || (rest === 0.5 && floor % 2 === 1) ? floor + 1 : floor
}

/**
 * The value of a half-format bit pattern (NaN for NaNs).
 * @param {HalfFormat} fmt @param {number} h
 */
function halfValue(fmt, h) {
  const sign = h >> (fmt.manBits + (fmt === F16 ? 5 : 8)) ? -1 : 1
  const expBits = fmt === F16 ? 5 : 8
  const e = (h >> fmt.manBits) & ((1 << expBits) - 1)
  const m = h & ((1 << fmt.manBits) - 1)
  if (e === (1 << expBits) - 1) return m ? NaN : sign * Infinity
  if (e === 0) return sign * m * 2 ** (1 - fmt.bias - fmt.manBits)
  return sign * (1 + m / 2 ** fmt.manBits) * 2 ** (e - fmt.bias)
}

/**
 * The correctly rounded half-format pattern of a non-NaN number (any double).
 * @param {HalfFormat} fmt @param {number} x
 */
function toHalfBits(fmt, x) {
  const expBits = fmt === F16 ? 5 : 8
  const signBit = x < 0 || Object.is(x, -0) ? 1 << (fmt.manBits + expBits) : 0
  const infinity = signBit | (((1 << expBits) - 1) << fmt.manBits)
  const a = Math.abs(x)
  if (a === 0) return signBit
  if (a === Infinity) return infinity
  const emin = 1 - fmt.bias
  const quantum = 2 ** (Math.max(exponentOf(a), emin) - fmt.manBits)
  const v = roundHalfEven(a / quantum) * quantum
  if (v >= 2 ** (fmt.bias + 1)) return infinity
  if (v < 2 ** emin) return signBit | (v / 2 ** (emin - fmt.manBits))
  const e = exponentOf(v)
  return signBit | ((e + fmt.bias) << fmt.manBits) | ((v / 2 ** e - 1) * 2 ** fmt.manBits)
}

/**
 * What the core documents for a float32 NaN: same sign, top payload bits, quiet bit set.
 * @param {HalfFormat} fmt @param {number} bits
 */
function nanToHalf(fmt, bits) {
  if (fmt === BF16) return (bits >>> 16) | 0x40
  return ((bits >>> 16) & 0x8000) | 0x7e00 | ((bits >>> 13) & 0x3ff)
}

/** @param {number} bits */
const isF32Nan = (bits) => (bits & 0x7fffffff) > 0x7f800000

/**
 * The first differences of two equal-length arrays, as hex, for a readable failure.
 * @param {ArrayLike<number>} got @param {ArrayLike<number>} want @param {(i: number) => string} input
 */
function mismatches(got, want, input) {
  assert.equal(got.length, want.length)
  const out = []
  for (let i = 0; i < got.length && out.length < 8; i++)
    if (got[i] !== want[i]) out.push(`${input(i)}: got 0x${got[i].toString(16)}, want 0x${want[i].toString(16)}`)
  return out
}

/** @param {number} n */
const hex = (n) => `0x${(n >>> 0).toString(16)}`

/**
 * Casts float32 bit patterns to fmt and checks each against the formula.
 * @param {HalfFormat} fmt @param {Uint32Array} bits
 */
async function checkF32ToHalf(fmt, bits) {
  const { data } = await castTensor({ dtype: 'F32', shape: [bits.length], data: bits }, /** @type {'F16' | 'BF16'} */ (fmt.name))
  const want = new Uint16Array(bits.length)
  for (let i = 0; i < bits.length; i++)
    want[i] = isF32Nan(bits[i]) ? nanToHalf(fmt, bits[i]) : toHalfBits(fmt, fromBits(bits[i]))
  assert.deepEqual(mismatches(new Uint16Array(data.buffer), want, (i) => `F32 ${hex(bits[i])} -> ${fmt.name}`), [])
}

describe('F16 and BF16: every one of the 2^16 patterns', () => {
  for (const fmt of [F16, BF16]) {
    test(`${fmt.name} -> F32 is the pattern's value, and F32 -> ${fmt.name} gives the pattern back`, async () => {
      const all = Uint16Array.from({ length: 65536 }, (_, i) => i)
      const dtype = /** @type {'F16' | 'BF16'} */ (fmt.name)
      const wide = await castTensor({ dtype, shape: [256, 256], data: all }, 'F32')
      assert.deepEqual(wide.shape, [256, 256])
      assert.ok(wide.data instanceof Float32Array)
      const wrong = []
      for (let h = 0; h < 65536 && wrong.length < 8; h++) {
        const want = halfValue(fmt, h)
        if (Number.isNaN(want) ? !Number.isNaN(wide.data[h]) : !Object.is(wide.data[h], want)) wrong.push(`${hex(h)}: ${wide.data[h]} vs ${want}`)
      }
      assert.deepEqual(wrong, [])
      const back = await castTensor(wide, dtype)
      assert.deepEqual(back.shape, [256, 256])
      // A NaN comes back a NaN with its sign and payload; a signalling NaN comes back quiet.
      const quiet = fmt === F16 ? 0x200 : 0x40
      const want = all.map((h) => (Number.isNaN(halfValue(fmt, h)) ? h | quiet : h))
      assert.deepEqual(mismatches(new Uint16Array(back.data.buffer), want, (i) => `${fmt.name} ${hex(i)} round trip`), [])
      // Tensors on the wasm heap take the same path without a copy in, and give the same.
      const f = await open(await serialize({ x: { dtype, shape: [65536], data: all } }))
      const t = await f.tensor('x')
      assert.deepEqual((await castTensor(t, 'F32')).data, wide.data)
      t.dispose()
    })
  }
})

describe('F32 -> BF16 and F16', () => {
  /**
   * Every rounding boundary of fmt: for each finite pattern, its value and the midpoint to the
   * next pattern up, each with its float32 neighbours, in both signs; NaNs and infinities.
   * @param {HalfFormat} fmt
   */
  function boundaries(fmt) {
    const out = []
    const top = fmt === F16 ? 0x7c00 : 0x7f80
    for (let h = 0; h < top; h++) {
      const v = halfValue(fmt, h)
      const next = h + 1 === top ? 2 ** (fmt.bias + 1) : halfValue(fmt, h + 1)
      for (const b of [bitsOf(v), bitsOf((v + next) / 2)]) {
        assert.ok(!Number.isNaN(fromBits(b)))
        for (const d of [-1, 0, 1]) {
          if (b + d < 0) continue
          out.push(b + d, (b + d) | 0x80000000)
        }
      }
    }
    out.push(0x7f800000, 0xff800000, 0x7f800001, 0xff800001, 0x7fc00000, 0xffc00000, 0x7fbfffff,
      0x7fffffff, 0xffffffff, 0x7fa00000, 0x7f802000, 0x7f801fff, 0x7f7fffff, 0xff7fffff, 1, 0x807fffff)
    return Uint32Array.from(out)
  }

  for (const fmt of [F16, BF16]) {
    test(`${fmt.name}: every rounding boundary, ties to even, overflow, subnormals, NaN`, async () => {
      await checkF32ToHalf(fmt, boundaries(fmt))
    })

    test(`${fmt.name}: 1.2M random bit patterns (more than one chunk of the cast)`, async () => {
      const random = prng(fmt === F16 ? 2024 : 2025)
      const bits = Uint32Array.from({ length: 1_200_003 }, () => Math.floor(random() * 2 ** 32))
      await checkF32ToHalf(fmt, bits)
    })
  }

  test('known values', async () => {
    const cases = /** @type {const} */ ([
      ['F16', [1, 65504, 65519.99, 65520, 2 ** -24, 2 ** -25, 1.5 * 2 ** -25, 1.5 * 2 ** -24, 2.5 * 2 ** -24, 2 ** -14, 1 + 2 ** -11, 1 + 3 * 2 ** -11, -0, NaN, -Infinity, 1e10],
        [0x3c00, 0x7bff, 0x7bff, 0x7c00, 0x0001, 0x0000, 0x0001, 0x0002, 0x0002, 0x0400, 0x3c00, 0x3c02, 0x8000, 0x7e00, 0xfc00, 0x7c00]],
      ['BF16', [1, 1 + 2 ** -8, 1 + 3 * 2 ** -8, 3.4028234663852886e38, 3.3895313892515355e38, 2 ** -133, 2 ** -134, -0, NaN],
        [0x3f80, 0x3f80, 0x3f82, 0x7f80, 0x7f7f, 0x0001, 0x0000, 0x8000, 0x7fc0]],
    ])
    for (const [dtype, values, want] of cases) {
      const { data } = await castTensor({ dtype: 'F32', shape: [values.length], data: new Float32Array(values) }, dtype)
      assert.deepEqual(Array.from(new Uint16Array(data.buffer)), want, dtype)
    }
  })
})

describe('F64 -> BF16 and F16: rounded once', () => {
  for (const fmt of [F16, BF16]) {
    test(`${fmt.name}: midpoints nudged by less than a float32 ulp, and random doubles`, async () => {
      const random = prng(fmt === F16 ? 64 : 65)
      const values = []
      const top = fmt === F16 ? 0x7c00 : 0x7f80
      for (let k = 0; k < 100_000; k++) {
        const h = Math.floor(random() * top)
        const v = halfValue(fmt, h)
        const mid = (v + (h + 1 === top ? 2 ** (fmt.bias + 1) : halfValue(fmt, h + 1))) / 2
        // Float32 would round these onto the midpoint itself, then the tie would go to even.
        const nudge = Math.max(mid, 2 ** -140) * 2 ** -35
        values.push(mid + nudge, -(mid - nudge), mid, v)
      }
      for (let k = 0; k < 100_000; k++) values.push((random() - 0.5) * 2 ** Math.floor(random() * 300 - 150))
      values.push(0, -0, Infinity, -Infinity, NaN, 1e300, -1e300, 5e-324, 65519.999999999, 65520.000000001)
      const data = new Float64Array(values)
      const { data: got } = await castTensor({ dtype: 'F64', shape: [data.length], data }, /** @type {'F16' | 'BF16'} */ (fmt.name))
      const want = Uint16Array.from(values, (x) => (Number.isNaN(x) ? (fmt === F16 ? 0x7e00 : 0x7fc0) : toHalfBits(fmt, x)))
      assert.deepEqual(mismatches(new Uint16Array(got.buffer), want, (i) => `F64 ${values[i]} -> ${fmt.name}`), [])
      // The trap is real: through F32 with a plain nearest-even step, some of these come out wrong.
      const twice = await castTensor(await castTensor({ dtype: 'F64', shape: [data.length], data }, 'F32'), /** @type {'F16' | 'BF16'} */ (fmt.name))
      assert.notDeepEqual(twice.data, got)
    })
  }

  test('F64 -> F32 is nearest even, like Math.fround', async () => {
    const random = prng(32)
    const values = Float64Array.from({ length: 50_000 }, () => (random() - 0.5) * 2 ** Math.floor(random() * 320 - 160))
    const { data } = await castTensor({ dtype: 'F64', shape: [values.length], data: values }, 'F32')
    assert.deepEqual(data, Float32Array.from(values, Math.fround))
  })
})

describe('other dtypes', () => {
  test('integers, BOOL and F8 to F32; the exact ones to F16 and BF16', async () => {
    const random = prng(8)
    const i32 = Int32Array.from({ length: 10_000 }, () => Math.floor((random() - 0.5) * 2 ** 32))
    assert.deepEqual((await castTensor({ dtype: 'I32', shape: [10_000], data: i32 }, 'F32')).data, Float32Array.from(i32, Math.fround))
    const u32a = Uint32Array.from({ length: 10_000 }, () => Math.floor(random() * 2 ** 32))
    assert.deepEqual((await castTensor({ dtype: 'U32', shape: [100, 100], data: u32a }, 'F32')).data, Float32Array.from(u32a, Math.fround))
    const i16 = Int16Array.from({ length: 65536 }, (_, i) => i - 32768)
    const h16 = await castTensor({ dtype: 'I16', shape: [65536], data: i16 }, 'F16')
    assert.deepEqual(mismatches(new Uint16Array(h16.data.buffer), Uint16Array.from(i16, (x) => toHalfBits(F16, x)), (i) => `I16 ${i16[i]}`), [])
    const b16 = await castTensor({ dtype: 'I16', shape: [65536], data: i16 }, 'BF16')
    assert.deepEqual(mismatches(b16.data, Uint16Array.from(i16, (x) => toHalfBits(BF16, x)), (i) => `I16 ${i16[i]}`), [])
    const bool = await castTensor({ dtype: 'BOOL', shape: [3], data: new Uint8Array([0, 1, 7]) }, 'BF16')
    assert.deepEqual(bool.data, new Uint16Array([0, 0x3f80, 0x3f80]))
    // Every F8_E4M3 value is exact in F16: decoding through F16 gives the F32 decode.
    const e4 = Uint8Array.from({ length: 256 }, (_, i) => i)
    const direct = (await castTensor({ dtype: 'F8_E4M3', shape: [256], data: e4 }, 'F32')).data
    const viaF16 = (await castTensor(await castTensor({ dtype: 'F8_E4M3', shape: [256], data: e4 }, 'F16'), 'F32')).data
    assert.deepEqual(viaF16, direct)
    assert.equal(direct[0x38], 1)
    // F4 packs two per byte, low nibble first.
    const f4 = await castTensor({ dtype: 'F4', shape: [2, 2], data: new Uint8Array([0x21, 0xf8]) }, 'F32')
    assert.deepEqual(f4.data, new Float32Array([0.5, 1, -0, -6]))
    assert.deepEqual(f4.shape, [2, 2])
  })

  test('refusals name the dtypes and the reason', async () => {
    const u8 = new Uint8Array(8)
    await assert.rejects(castTensor({ dtype: 'C64', shape: [1], data: u8 }, 'F32'),
      { name: 'SafetensorsError', code: 'UnsupportedDtype', message: 'cannot cast the tensor from C64 to F32: C64 is complex: it has no real value to cast' })
    await assert.rejects(castTensor({ dtype: 'F6_E3M2', shape: [4], data: new Uint8Array(3) }, 'F32'), { code: 'UnsupportedDtype' })
    await assert.rejects(castTensor({ dtype: 'I64', shape: [1], data: u8 }, 'BF16'), {
      code: 'UnsupportedDtype', message: 'cannot cast the tensor from I64 to BF16: I64 values are not all exact in float32, so BF16 would round them twice: cast to F32',
    })
    await assert.rejects(castTensor({ dtype: 'F32', shape: [2], data: u8 }, /** @type {any} */ ('F8_E4M3')), {
      code: 'InvalidArgument', message: 'cannot cast to "F8_E4M3": the targets are F32, BF16, F16',
    })
    await assert.rejects(castTensor({ dtype: /** @type {any} */ ('F12'), shape: [2], data: u8 }, 'F32'), { code: 'InvalidArgument' })
    await assert.rejects(castTensor({ dtype: 'F32', shape: [3], data: u8 }, 'F16'), {
      code: 'TensorInvalidInfo', message: 'the tensor F32 [3] needs 12 bytes but its data is 8',
    })
    await assert.rejects(castTensor({ dtype: 'F32', shape: [-1], data: u8 }, 'F16'), { code: 'InvalidArgument' })
    await assert.rejects(castTensor({ dtype: 'F4', shape: [3], data: new Uint8Array(2) }, 'F16'), { code: 'TensorInvalidInfo' })
    await assert.rejects(castTensor(/** @type {any} */ (null), 'F16'), { code: 'InvalidArgument' })
    const f = await open(await serialize({ c: { dtype: 'C64', shape: [1], data: u8 }, w: { dtype: 'F32', shape: [2], data: u8 } }))
    const c = await f.tensor('c')
    await assert.rejects(castTensor(c, 'F16'), { code: 'UnsupportedDtype', tensor: 'c', message: /^cannot cast tensor "c" from C64 to F16/ })
    const w = await f.tensor('w')
    w.dispose()
    await assert.rejects(castTensor(w, 'BF16'), { code: 'Disposed', tensor: 'w' })
  })
})

describe('the API', () => {
  test('results live in JS memory, survive dispose, and serialize as the cast dtype', async () => {
    const values = new Float32Array([1, -2.5, 3.140625, 1e-3])
    const f = await open(await serialize({ w: { dtype: 'F32', shape: [2, 2], data: values }, n: { dtype: 'I64', shape: [], data: new BigInt64Array([4n]) } }))
    const w = await f.tensor('w')
    const bf = await castTensor(w, 'BF16')
    const same = await castTensor(w, 'F32')
    w.dispose()
    assert.notEqual(bf.data.buffer, core.HEAPU8.buffer)
    assert.deepEqual(bf, { dtype: 'BF16', shape: [2, 2], data: new Uint16Array([0x3f80, 0xc020, 0x4049, 0x3a83]) })
    assert.deepEqual(same, { dtype: 'F32', shape: [2, 2], data: values }, 'the own dtype is a copy')
    const g = await open(await serialize({ w: bf, n: await castTensor(await f.tensor('n'), 'F32') }))
    assert.deepEqual(g.names, ['n', 'w'])
    assert.equal(g.info('w').dtype, 'BF16')
    assert.deepEqual((await g.tensor('w')).toFloat32(), new Float32Array([1, -2.5, 3.140625, 0.00099945068359375]))
    assert.deepEqual((await g.tensor('n')).data, new Float32Array([4]))
  })

  test('inputs: ArrayBuffer, DataView, a misaligned view of the heap, zero-size, BigInt dims', async () => {
    const values = Float32Array.from({ length: 9 }, (_, i) => i / 3)
    const want = (await castTensor({ dtype: 'F32', shape: [9], data: values }, 'F16')).data
    assert.deepEqual((await castTensor({ dtype: 'F32', shape: [9], data: values.slice().buffer }, 'F16')).data, want)
    assert.deepEqual((await castTensor({ dtype: 'F32', shape: [3, 3], data: new DataView(values.buffer) }, 'F16')).data, want)
    const at = core._malloc(64)
    try {
      const misaligned = new Uint8Array(core.HEAPU8.buffer, at + 1, 36)
      misaligned.set(new Uint8Array(values.buffer))
      assert.deepEqual((await castTensor({ dtype: 'F32', shape: [9], data: misaligned }, 'F16')).data, want)
    } finally {
      core._free(at)
    }
    const empty = await castTensor({ dtype: 'BF16', shape: [0, 2n ** 60n], data: new Uint16Array(0) }, 'F32')
    assert.deepEqual(empty, { dtype: 'F32', shape: [0, 2n ** 60n], data: new Float32Array(0) })
    assert.deepEqual(await castTensor({ dtype: 'F16', shape: [], data: new Uint16Array([0x3c00]) }, 'F32'),
      { dtype: 'F32', shape: [], data: new Float32Array([1]) })
  })

  test('casting leaks no wasm heap, whether it succeeds or fails', async () => {
    const big = { dtype: 'F64', shape: [3_000_000], data: new Float64Array(3_000_000).fill(1 / 3) }
    const cycle = async () => {
      await castTensor(big, 'BF16')
      await castTensor({ dtype: 'F32', shape: [2], data: new Float32Array(2) }, 'F16')
      await castTensor({ dtype: 'I32', shape: [2], data: new Int32Array(2) }, 'F16').catch(() => {})
    }
    await cycle()
    const before = core.heapInUse()
    for (let i = 0; i < 3; i++) await cycle()
    assert.equal(core.heapInUse(), before)
  })
})

test('castTensor({ into }): the values written into the caller\'s array, which is returned; a wrong array refused', async () => {
  const values = Float32Array.from({ length: 3000 }, (_, i) => Math.sin(i) * 1000)
  const f = await open(await serialize({ w: { dtype: 'F32', shape: [30, 100], data: values } }))
  const t = await f.tensor('w')
  for (const dtype of /** @type {const} */ (['BF16', 'F16', 'F32'])) {
    const fresh = await castTensor(t, dtype)
    const into = dtype === 'F32' ? new Float32Array(3000) : new Uint16Array(3000)
    const reused = await castTensor(t, dtype, { into })
    assert.equal(reused.data, into, `${dtype}: the caller's array is the result's data`)
    assert.deepEqual(new Uint8Array(into.buffer), new Uint8Array(fresh.data.buffer, fresh.data.byteOffset, fresh.data.byteLength))
  }
  const within = new Float32Array(3100)
  await castTensor(t, 'F32', { into: within.subarray(50, 3050) })
  assert.deepEqual(within.subarray(50, 3050), values, 'into a subarray: at its offset')
  for (const wrong of [new Float32Array(2999), new Float64Array(3000), new Uint16Array(3000), [1, 2]]) {
    await assert.rejects(castTensor(t, 'F32', { into: /** @type {any} */ (wrong) }),
      (/** @type {any} */ e) => e.code === 'InvalidArgument' && /options.into/.test(e.message))
  }
  t.dispose()
})

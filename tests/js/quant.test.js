// Quantized checkpoints (issue 15), through the public API exactly as an app uses it: the files
// of tests/js/quant-fixtures.js (every scheme, odd shapes, planted extremes) opened with default
// options; quantized() lists exactly the quantized weights; dequantize() equals the independent
// reference of tests/js/quant-reference.js bit for bit (Uint32 views: NaN payloads and -0 count),
// whole and sliced, a slice reading only the stored rows it needs; parameterCount(); the
// quantization option; every error code; a sharded set with parts in different shards; signal
// and onProgress. The first block checks the reference against the fixtures' encoders.
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { bytesSource, open } from '../../js/node.js'
import { fails } from './fails.js'
import * as ref from './quant-reference.js'
import {
  E4M3_EXTREMES, NF4_MAP, encodeAwq, encodeCtPack, encodeFp8Block, encodeFp8Scaled, encodeGptq, encodeInt8, encodeMxfp4, encodeNf4, encodeNvfp4,
  errorFixtures, fixtures, shardedFixture, toBytes,
} from './quant-fixtures.js'
import { f32ToF8E4M3, prng } from '../fixtures/make-sample.js'

/** @typedef {import('./quant-fixtures.js').Weight} Weight */

const F = Math.fround
const FIXTURES = fixtures()
/** @type {Record<string, Uint8Array>} */
const BYTES = {}
for (const [name, f] of Object.entries(FIXTURES)) BYTES[name] = await toBytes(f.tensors)

/** @param {number[]} shape */
const count = (shape) => shape.reduce((a, b) => a * b, 1)
/** @param {number} bits */
const hex = (bits) => `0x${(bits >>> 0).toString(16).padStart(8, '0')}`

/**
 * Asserts `got` has exactly the bits of `want`; on a difference, names the first few elements
 * (their coordinates in `shape`), the bits expected and got, and how many differ.
 * @param {Float32Array} got @param {Float32Array} want @param {string} what @param {number[]} shape
 */
function sameBits(got, want, what, shape) {
  assert.equal(got.length, want.length, `${what}: ${got.length} elements, expected ${want.length}`)
  const g = new Uint32Array(got.buffer, got.byteOffset, got.length)
  const w = new Uint32Array(want.buffer, want.byteOffset, want.length)
  const bad = []
  for (let k = 0; k < w.length; k++) if (g[k] !== w[k]) bad.push(k)
  if (bad.length === 0) return
  const at = (/** @type {number} */ k) => {
    const idx = []
    for (let d = shape.length - 1; d >= 0; d--) {
      idx.unshift(k % shape[d])
      k = Math.floor(k / shape[d])
    }
    return `[${idx.join(', ')}]`
  }
  const lines = bad.slice(0, 6).map((k) => `  ${at(k)}: expected ${hex(w[k])} (${want[k]}), got ${hex(g[k])} (${got[k]})`)
  assert.fail(`${what}: ${bad.length} of ${w.length} elements differ\n${lines.join('\n')}`)
}

/**
 * A ByteSource over bytes (read only) that records every read.
 * @param {Uint8Array} bytes
 */
function countingSource(bytes) {
  const inner = bytesSource(bytes)
  /** @type {[number, number][]} */
  const reads = []
  return {
    reads,
    byteLength: inner.byteLength,
    /** @param {number} offset @param {number} length @param {{ signal?: AbortSignal }} [options] */
    read(offset, length, options) {
      reads.push([offset, length])
      return inner.read(offset, length, options)
    },
  }
}

/** The part of `details` that the tests can know from the tensors alone. @param {Weight} w */
function knownDetails(w) {
  const d = w.details
  switch (w.scheme) {
    case 'gptq': return { bits: d.bits, group: d.group }
    default: return d
  }
}

/**
 * @param {any} entry an element of quantized() @param {Weight} w @param {string} what
 */
function sameEntry(entry, w, what) {
  assert.equal(entry.scheme, w.scheme, `${what}: scheme`)
  assert.deepEqual(entry.shape, w.shape, `${what}: shape`)
  assert.deepEqual(entry.parts, w.parts, `${what}: parts`)
  const details = /** @type {Record<string, any>} */ (entry.details ?? {})
  for (const [key, value] of Object.entries(knownDetails(w))) assert.deepEqual(details[key], value, `${what}: details.${key}`)
}

/**
 * quantized() of a file against the fixture's weights: exactly those, none of the plain tensors.
 * @param {any[]} list @param {Weight[]} weights @param {string[]} plain
 */
function sameList(list, weights, plain) {
  assert.ok(Array.isArray(list), 'quantized() returns an array')
  assert.deepEqual(list.map((e) => e.name).sort(), weights.map((w) => w.name).sort(), 'the quantized weights')
  for (const w of weights) sameEntry(list.find((e) => e.name === w.name), w, w.name)
  for (const p of plain) assert.ok(!list.some((e) => e.name === p), `${p} (plain) is not listed`)
}

/** Slices over the leading dimension to try, as given and as [start, stop). @param {Weight} w */
function slicesOf(w) {
  const rows = w.shape[0]
  /** @type {[number, number][]} */
  const specs = [[0, 1], [1, Math.min(rows, 3)], [rows - 1, rows], [-2, rows], [-Math.min(rows, 5), -1]]
  if (w.scheme === 'fp8-block') {
    const [bo] = w.details.block
    if (rows > bo) specs.push([bo - 1, bo + 1], [bo, rows])
  }
  if (rows > 40) specs.push([17, rows - 13])
  return specs.map(([a, b]) => ({ spec: [a, b], start: a < 0 ? a + rows : a, stop: b < 0 ? b + rows : b }))
}

/**
 * The byte ranges a slice of `w` may read: the stored rows (and scale rows) it needs and the small
 * parts that every element needs. null for schemes whose layout does not allow it.
 * @param {any} f an open file @param {Weight} w @param {number} a @param {number} b
 * @returns {[number, number][] | null}
 */
function neededRanges(f, w, a, b) {
  const info = (/** @type {string} */ role) => f.info(w.parts[role])
  /** @type {[number, number][]} */
  const ranges = []
  /** rows [r0, r1) of a part whose rows are `rowBytes` long @param {string} role @param {number} r0 @param {number} r1 @param {number} rowBytes */
  const rows = (role, r0, r1, rowBytes) => ranges.push([info(role).byteOffset + r0 * rowBytes, info(role).byteOffset + r1 * rowBytes])
  const whole = (/** @type {string} */ role) => ranges.push([info(role).byteOffset, info(role).byteOffset + info(role).byteLength])
  const cols = count(w.shape.slice(1))
  switch (w.scheme) {
    case 'fp8-block': {
      const [bo] = w.details.block
      rows('weight', a, b, cols)
      const sc = info('scaleInv').shape[1]
      rows('scaleInv', Math.floor(a / bo), Math.floor((b - 1) / bo) + 1, sc * 4)
      break
    }
    case 'fp8':
    case 'int8': {
      rows('weight', a, b, cols)
      const perRow = (/** @type {string} */ role) => info(role).byteLength / w.shape[0]
      if (w.details.strategy === 'tensor') {
        whole('scale')
        if (w.parts.zeroPoint) whole('zeroPoint')
      } else {
        rows('scale', a, b, perRow('scale'))
        if (w.parts.zeroPoint) rows('zeroPoint', a, b, perRow('zeroPoint'))
      }
      break
    }
    case 'mxfp4':
      rows('blocks', a, b, info('blocks').byteLength / w.shape[0])
      rows('scales', a, b, info('scales').byteLength / w.shape[0])
      break
    case 'nvfp4':
      rows('packed', a, b, cols / 2)
      rows('scale', a, b, info('scale').shape[1])
      whole(w.details.format === 'modelopt' ? 'scale2' : 'globalScale')
      break
    case 'bnb-nf4': {
      const bs = w.details.blocksize
      const first = a * cols
      const end = b * cols
      ranges.push([info('weight').byteOffset + Math.floor(first / 2), info('weight').byteOffset + Math.ceil(end / 2)])
      rows('absmax', Math.floor(first / bs), Math.floor((end - 1) / bs) + 1, info('absmax').dtype === 'U8' ? 1 : 4)
      for (const role of ['quantMap', 'quantState', 'nestedAbsmax', 'nestedQuantMap']) if (w.parts[role]) whole(role)
      break
    }
    case 'ct-pack':
      rows('packed', a, b, info('packed').shape[1] * 4)
      rows('scale', a, b, info('scale').byteLength / w.shape[0])
      for (const role of ['zeroPoint', 'shape']) if (w.parts[role]) whole(role)
      break
    default:
      return null
  }
  // adjacent or overlapping ranges as one
  ranges.sort((x, y) => x[0] - y[0])
  /** @type {[number, number][]} */
  const merged = []
  for (const [a0, b0] of ranges) {
    const last = merged[merged.length - 1]
    if (last && a0 <= last[1]) last[1] = Math.max(last[1], b0)
    else merged.push([a0, b0])
  }
  return merged
}

describe('the reference decoders against the fixtures\' encoders (no library)', () => {
  test('E4M3 conversion: every byte, NaN bits as c10 converts them', () => {
    for (let b = 0; b < 256; b++) {
      const bits = ref.e4m3Bits(b)
      if ((b & 0x7f) === 0x7f) {
        assert.equal(bits, b & 0x80 ? 0xfff00000 : 0x7ff00000)
        continue
      }
      // the sample writer's encoder inverts it (its -0 and +0 included)
      assert.equal(f32ToF8E4M3(ref.fromBits(bits)), b, `byte ${b}`)
    }
    assert.equal(ref.e4m3Value(0x7e), 448)
    assert.equal(ref.e4m3Value(0x01), 2 ** -9)
    assert.ok(Object.is(ref.e4m3Value(0x80), -0))
  })

  test('fp8-block: exactly representable blocks round-trip, partial blocks included', () => {
    const random = prng(1)
    const rows = 130
    const cols = 150
    const block = /** @type {[number, number]} */ ([64, 64])
    const x = new Float32Array(rows * cols)
    for (let r = 0; r < rows; r++) {
      for (let c = 0; c < cols; c++) {
        const s = 2 ** -(10 + Math.floor(r / 64) * 3 + Math.floor(c / 64))
        let byte = Math.floor(random() * 256)
        if ((byte & 0x7f) === 0x7f) byte = 0x80
        if (r % 64 === 0 && c % 64 === 0) byte = 0xfe  // the block's amax, -448
        x[r * cols + c] = ref.e4m3Value(byte) * s
      }
    }
    const { weight, scales, scaleShape } = encodeFp8Block(x, rows, cols, block)
    assert.deepEqual(scaleShape, [3, 3])
    const y = ref.fp8Block({ weight, rows, cols, scales: ref.scaleBits('F32', scales), scaleCols: 3, block })
    sameBits(y, x, 'fp8 round trip', [rows, cols])
    // NaN keeps its bits (quieted) through the multiply
    const nan = ref.fp8Block({ weight: new Uint8Array([0x7f, 0xff]), rows: 1, cols: 2, scales: new Uint32Array([ref.bitsOf(0.5)]), scaleCols: 1, block })
    assert.deepEqual([...new Uint32Array(nan.buffer)], [0x7ff00000, 0xfff00000])
  })

  test('mxfp4: values FP4 * 2^e round-trip; the scale extremes decode as ldexp does', () => {
    const random = prng(2)
    const groups = 40
    const x = new Float32Array(groups * 32)
    for (let g = 0; g < groups; g++) {
      const e = -120 + 6 * g
      for (let k = 0; k < 32; k++) x[g * 32 + k] = F(ref.FP4[Math.floor(random() * 16)] * 2 ** e)
      x[g * 32 + (g % 32)] = (g % 2 ? -6 : 4) * 2 ** e  // the group's amax
    }
    const { blocks, scales } = encodeMxfp4(x)
    sameBits(ref.mxfp4({ blocks, scales }), x, 'mxfp4 round trip', [groups, 32])
    // low nibble first; scale 255 and 0.5 give 2^127, 254 and 6 overflow, 0 gives subnormals
    const b = new Uint8Array(16)
    b[0] = 0x71  // element 0: nibble 1 (0.5), element 1: nibble 7 (6)
    b[1] = 0x08  // element 2: -0, element 3: +0
    const at = (/** @type {number} */ s) => ref.mxfp4({ blocks: b, scales: new Uint8Array([s]) })
    assert.deepEqual([...at(255).subarray(0, 4)], [2 ** 127, Infinity, -0, 0])
    assert.deepEqual([...at(254).subarray(0, 2)], [2 ** 126, Infinity])
    assert.deepEqual([...at(0).subarray(0, 2)], [2 ** -128, 6 * 2 ** -127])
    assert.ok(Object.is(at(127)[2], -0))
  })

  for (const format of /** @type {const} */ (['compressed-tensors', 'modelopt'])) {
    test(`nvfp4 ${format}: FP4 times E4M3 block scales round-trip (global scale 1)`, () => {
      const random = prng(3)
      const rows = 6
      const cols = 64
      const x = new Float32Array(rows * cols)
      const scaleBytes = [0x38, 0x30, 0x41, 0x22, 0x08, 0x5d, 0x66, 0x12]
      for (let r = 0; r < rows; r++) {
        for (let g = 0; g < 4; g++) {
          // the tensor's amax 6 * 448 = 2688 (row 0, group 0) makes the global scale 1
          const sv = ref.e4m3Value(r === 0 && g === 0 ? 0x7e : scaleBytes[(r * 4 + g) % 8])
          for (let c = g * 16; c < (g + 1) * 16; c++) x[r * cols + c] = F(ref.FP4[1 + Math.floor(random() * 7)] * (random() < 0.5 ? -1 : 1) * sv)
          x[r * cols + g * 16] = 6 * sv
        }
      }
      const { packed, scales, global } = encodeNvfp4(x, rows, cols, format)
      assert.equal(global, 1)
      sameBits(ref.nvfp4({ packed, rows, cols, scales, scaleCols: 4, group: 16, global, format }), x, `nvfp4 ${format} round trip`, [rows, cols])
      // nibble 8: -0 for compressed-tensors, +0 in ModelOpt's table
      const zero = ref.nvfp4({ packed: new Uint8Array([0x08]), rows: 1, cols: 2, scales: new Uint8Array([0x38]), scaleCols: 1, group: 16, global: 1, format })
      assert.ok(Object.is(zero[0], format === 'modelopt' && ref.MODELOPT_NIBBLE8_POSITIVE_ZERO ? 0 : -0))
    })
  }

  for (const [bits, actOrder, v2] of /** @type {[number, boolean, boolean][]} */ ([[4, true, false], [3, true, false], [8, false, false], [2, false, false], [4, false, true], [3, false, true]])) {
    test(`gptq ${bits}-bit${actOrder ? ' act-order' : ''}${v2 ? ' v2' : ''}: packed codes decode as scale * (q - zero)`, () => {
      const outF = 64
      const inF = 128
      const group = 32
      const random = prng(bits * 10 + (v2 ? 1 : 0))
      const gIdx = Int32Array.from({ length: inF }, (_, i) => Math.floor(i / group))
      if (actOrder) for (let i = inF - 1; i > 0; i--) { const j = Math.floor(random() * (i + 1)); [gIdx[i], gIdx[j]] = [gIdx[j], gIdx[i]] }
      const x = Float32Array.from({ length: outF * inF }, () => (random() - 0.5) * 0.1)
      const e = encodeGptq(x, outF, inF, bits, group, gIdx, 5, v2)
      const y = ref.gptq({ qweight: e.qweight, qzeros: e.qzeros, scales: ref.scaleBits('F16', e.scales), gIdx, inF, outF, bits, group, v2 })
      const want = new Float32Array(outF * inF)
      for (let o = 0; o < outF; o++) {
        for (let i = 0; i < inF; i++) {
          const g = gIdx[i]
          let z = e.zeros[g * outF + o]
          // v1 stores zero - 1 masked: a zero of 0 comes back as 2^bits (AutoGPTQ's v1 quirk)
          if (!v2 && z === 0) z = 2 ** bits
          want[o * inF + i] = F(ref.f16Value(e.scales[g * outF + o]) * (e.codes[o * inF + i] - z))
        }
      }
      sameBits(y, want, 'gptq unpacking', [outF, inF])
      // and the quantizer is a quantizer: within a scale of x where the zero survived
      for (let o = 0; o < outF; o++) {
        for (let i = 0; i < inF; i++) {
          const g = gIdx[i]
          if (!v2 && e.zeros[g * outF + o] === 0) continue
          assert.ok(Math.abs(y[o * inF + i] - x[o * inF + i]) <= ref.f16Value(e.scales[g * outF + o]) * 2, `gptq [${o}, ${i}]`)
        }
      }
    })
  }

  test('awq: the [0,2,4,6,1,3,5,7] order decodes back to the columns', () => {
    const outF = 48
    const inF = 192
    const group = 64
    const random = prng(6)
    const x = Float32Array.from({ length: outF * inF }, () => (random() - 0.5) * 0.1)
    const e = encodeAwq(x, outF, inF, group)
    const y = ref.awq({ qweight: e.qweight, qzeros: e.qzeros, scales: ref.scaleBits('F16', e.scales), inF, outF, group })
    const want = new Float32Array(outF * inF)
    for (let o = 0; o < outF; o++) {
      for (let i = 0; i < inF; i++) {
        const g = Math.floor(i / group)
        want[o * inF + i] = F((e.codes[o * inF + i] - e.zeros[g * outF + o]) * ref.f16Value(e.scales[g * outF + o]))
        assert.ok(Math.abs(want[o * inF + i] - x[o * inF + i]) <= ref.f16Value(e.scales[g * outF + o]))
      }
    }
    sameBits(y, want, 'awq unpacking', [outF, inF])
  })

  for (const nested of [false, true]) {
    test(`bnb-nf4${nested ? ' nested' : ''}: high nibble first, partial last block${nested ? ', partial nested block' : ''}`, () => {
      const random = prng(7)
      const n = nested ? 300 * 70 : 97 * 71
      const x = Float32Array.from({ length: n }, () => (random() - 0.5) * 0.1)
      const e = encodeNf4(x, 64, nested)
      const want = new Float32Array(n)
      for (let k = 0; k < n; k++) want[k] = F(NF4_MAP[e.nibbles[k]] * e.absmax[Math.floor(k / 64)])
      if (!nested) {
        sameBits(ref.nf4({ packed: e.packed, n, blocksize: 64, quantMap: NF4_MAP, absmax: e.absmax }), want, 'nf4 unpacking', [n])
        return
      }
      assert.equal(/** @type {Float32Array} */ (e.nestedAbsmax).length, 2)
      const y = ref.nf4({ packed: e.packed, n, blocksize: 64, quantMap: NF4_MAP, codes: /** @type {Uint8Array} */ (e.codes),
        nestedMap: /** @type {Float32Array} */ (e.nestedMap), nestedAbsmax: /** @type {Float32Array} */ (e.nestedAbsmax),
        offset: /** @type {number} */ (e.offset), nestedBlocksize: 256 })
      // the nested absmax is itself quantized: close to the true one, the nibbles exact
      for (let k = 0; k < n; k++) {
        const a = e.absmax[Math.floor(k / 64)]
        assert.ok(Math.abs(y[k] - want[k]) <= Math.abs(NF4_MAP[e.nibbles[k]]) * a * 0.05 + 1e-9, `nf4 nested element ${k}`)
      }
    })
  }

  for (const [bits, group, symmetric, inF, outF] of [[4, 28, false, 196, 44], [8, 203, false, 203, 36], [4, 32, true, 96, 40], [2, 13, false, 39, 20]]) {
    test(`ct-pack ${bits}-bit group ${group}${symmetric ? ' symmetric' : ''}, in ${inF}, out ${outF}`, () => {
      const random = prng(8 + bits)
      const x = Float32Array.from({ length: outF * inF }, () => (random() - 0.5) * 0.1)
      const e = encodeCtPack(x, outF, inF, /** @type {number} */ (bits), /** @type {number} */ (group), /** @type {boolean} */ (symmetric))
      const y = ref.ctPack({ packed: e.packed, scales: ref.scaleBits('BF16', e.scales), zeroPoints: e.zeroPoints, outF, inF, bits, group })
      const want = new Float32Array(outF * inF)
      for (let r = 0; r < outF; r++) {
        for (let i = 0; i < inF; i++) {
          const g = Math.floor(i / group)
          const s = ref.bf16Value(e.scales[r * e.groups + g])
          want[r * inF + i] = F((e.codes[r * inF + i] - e.zp[r * e.groups + g]) * s)
          assert.ok(Math.abs(want[r * inF + i] - x[r * inF + i]) <= 2 * s, `ct-pack [${r}, ${i}]`)
        }
      }
      sameBits(y, want, 'ct-pack unpacking', [outF, inF])
    })
  }

  for (const [strategy, scaleDtype] of /** @type {const} */ ([['tensor', 'F32'], ['channel', 'BF16'], ['group', 'BF16']])) {
    test(`fp8 per ${strategy}, ${scaleDtype} scales: E4M3 values times their scale round-trip`, () => {
      const random = prng(9)
      const rows = 12
      const cols = 80
      const group = 32
      const groups = Math.ceil(cols / group)
      const unit = (/** @type {number} */ r, /** @type {number} */ c) => (strategy === 'tensor' ? 0 : strategy === 'channel' ? r : r * groups + Math.floor(c / group))
      const n = strategy === 'tensor' ? 1 : strategy === 'channel' ? rows : rows * groups
      const powers = Array.from({ length: n }, (_, k) => 2 ** -(8 + (k % 5)))
      const x = new Float32Array(rows * cols)
      const seen = new Set()
      for (let r = 0; r < rows; r++) {
        for (let c = 0; c < cols; c++) {
          let byte = Math.floor(random() * 256)
          if ((byte & 0x7f) === 0x7f) byte = 0x01
          if (!seen.has(unit(r, c))) byte = 0xfe  // the unit's amax, -448
          seen.add(unit(r, c))
          x[r * cols + c] = ref.e4m3Value(byte) * powers[unit(r, c)]
        }
      }
      const e = encodeFp8Scaled(x, rows, cols, strategy, group, scaleDtype)
      const y = ref.scaled({ weight: e.weight, rows, cols, scales: ref.scaleBits(scaleDtype, e.scales), strategy, group })
      sameBits(y, x, `fp8 ${strategy} round trip`, [rows, cols])
    })
  }

  for (const [strategy, symmetric] of /** @type {const} */ ([['tensor', false], ['channel', true], ['group', false]])) {
    test(`int8 per ${strategy}${symmetric ? ' symmetric' : ', zero points'}: (q - zp) * scale, within a scale of x`, () => {
      const random = prng(10)
      const rows = 10
      const cols = 96
      const group = 32
      const x = Float32Array.from({ length: rows * cols }, () => (random() - 0.3) * 0.1)
      const e = encodeInt8(x, rows, cols, strategy, group, 'BF16', symmetric)
      const y = ref.scaled({ weight: e.weight, rows, cols, scales: ref.scaleBits('BF16', e.scales), strategy, group, zeroPoints: e.zeroPoints })
      const groups = Math.ceil(cols / group)
      for (let r = 0; r < rows; r++) {
        for (let c = 0; c < cols; c++) {
          const k = strategy === 'tensor' ? 0 : strategy === 'channel' ? r : r * groups + Math.floor(c / group)
          const s = ref.bf16Value(/** @type {number} */ (e.scales[k]))
          const zp = e.zeroPoints ? e.zeroPoints[k] : 0
          assert.equal(y[r * cols + c], F((e.weight[r * cols + c] - zp) * s))
          assert.ok(Math.abs(y[r * cols + c] - x[r * cols + c]) <= s, `int8 [${r}, ${c}]`)
        }
      }
    })
  }

  test('the fixtures plant what the issue asks for', () => {
    const channel = /** @type {Uint8Array} */ (FIXTURES['fp8-channel'].tensors['model.layers.0.mlp.down_proj.weight'].data)
    for (const b of E4M3_EXTREMES) assert.ok(channel.includes(b), `fp8 E4M3 byte ${b}`)
    const bf16 = /** @type {Uint16Array} */ (FIXTURES['fp8-channel'].tensors['model.layers.0.mlp.down_proj.weight_scale'].data)
    assert.ok(bf16.includes(0) && bf16.includes(1), 'fp8 BF16 scales: zero and a subnormal')
    assert.equal(FIXTURES['fp8-tensor'].tensors['model.layers.0.self_attn.k_proj.weight_scale'].data[0], 2 ** -140)
    assert.deepEqual(FIXTURES['fp8-tensor'].tensors['model.layers.0.mlp.down_proj.weight_scale'].shape, [])
    assert.deepEqual(FIXTURES['fp8-tensor'].tensors['model.layers.0.self_attn.q_proj.weight_scale'].shape, [1])
    const i8 = /** @type {Int8Array} */ (FIXTURES['int8-group'].tensors['model.layers.0.mlp.up_proj.weight'].data)
    const zp = /** @type {Int8Array} */ (FIXTURES['int8-group'].tensors['model.layers.0.mlp.up_proj.weight_zero_point'].data)
    assert.ok(i8.includes(-128) && i8.includes(127) && zp.includes(-128) && zp.includes(127), 'int8 and zero point extremes')
    const down = FIXTURES.fp8.tensors['model.layers.0.mlp.down_proj.weight'].data
    for (const b of E4M3_EXTREMES) assert.ok(/** @type {Uint8Array} */ (down).includes(b), `E4M3 byte ${b}`)
    const scales = /** @type {Uint8Array} */ (FIXTURES.mxfp4.tensors['model.layers.0.mlp.experts.gate_up_proj_scales'].data)
    for (const s of [0, 1, 127, 254, 255]) assert.ok(scales.includes(s), `mxfp4 scale ${s}`)
    const gidx = /** @type {Int32Array} */ (FIXTURES.gptq4.tensors['model.layers.0.self_attn.q_proj.g_idx'].data)
    assert.ok(gidx.some((g, i) => i > 0 && g < gidx[i - 1]), 'act-order g_idx is shuffled')
    const state = new TextDecoder().decode(/** @type {Uint8Array} */ (FIXTURES['bnb-nf4-nested'].tensors['model.layers.0.mlp.up_proj.weight.quant_state.bitsandbytes__nf4'].data))
    assert.match(state, /^\{"quant_type": "nf4", "blocksize": 64, "dtype": "bfloat16", "shape": \[300, 70\], "nested_blocksize": 256, "nested_dtype": "float32", "nested_offset": 0\.\d+\}$/)
  })
})

/**
 * Open options per fixture: none (an app's default), except where the tensors cannot tell: gptq_v2
 * from v1, and fp8 blocks of 64 (the default is 128).
 */
const OPTIONS = /** @type {Record<string, any>} */ ({
  'gptq-v2': { quantization: FIXTURES['gptq-v2'].config },
  'fp8-b64': { quantization: FIXTURES['fp8-b64'].config },
})

for (const [file, fx] of Object.entries(FIXTURES)) {
  describe(`${file}${OPTIONS[file] ? ' (with its config)' : ''}`, () => {
    test('quantized() lists exactly the quantized weights, synchronously', async () => {
      const f = await open(BYTES[file], OPTIONS[file])
      const list = f.quantized()
      assert.ok(!(list instanceof Promise), 'a single file answers at once')
      sameList(list, fx.weights, fx.plain)
      await f.close()
    })

    test('parameterCount(): logical elements once, under byScheme; parts count zero', async () => {
      const f = await open(BYTES[file], OPTIONS[file])
      /** @type {Record<string, number>} */
      const byDtype = {}
      /** @type {Record<string, number>} */
      const byScheme = {}
      for (const p of fx.plain) byDtype[fx.tensors[p].dtype] = (byDtype[fx.tensors[p].dtype] ?? 0) + count(fx.tensors[p].shape)
      for (const w of fx.weights) byScheme[w.scheme] = (byScheme[w.scheme] ?? 0) + count(w.shape)
      const total = [...Object.values(byDtype), ...Object.values(byScheme)].reduce((a, b) => a + b, 0)
      const got = f.parameterCount()
      assert.equal(got.total, total, 'total')
      assert.deepEqual(got.byScheme, byScheme, 'byScheme')
      const nonzero = Object.fromEntries(Object.entries(got.byDtype).filter(([, n]) => n !== 0))
      assert.deepEqual(nonzero, byDtype, 'byDtype: the plain tensors only')
      await f.close()
    })

    for (const w of fx.weights) {
      test(`dequantize ${w.name} (${w.scheme}) equals the reference, whole and sliced`, async () => {
        const f = await open(BYTES[file], OPTIONS[file])
        const want = w.expected()
        const t = await f.dequantize(w.name)
        assert.equal(t.dtype, 'F32')
        assert.deepEqual(t.shape, w.shape)
        sameBits(t.data, want, w.name, w.shape)
        t.dispose()
        const rowLength = count(w.shape.slice(1))
        for (const { spec, start, stop } of slicesOf(w)) {
          const s = await f.dequantize(w.name, { slice: spec })
          assert.deepEqual(s.shape, [stop - start, ...w.shape.slice(1)], `slice ${JSON.stringify(spec)}: shape`)
          sameBits(s.data, want.subarray(start * rowLength, stop * rowLength), `${w.name} slice ${JSON.stringify(spec)}`, s.shape)
          s.dispose()
        }
        await f.close()
      })

      if (['fp8-block', 'mxfp4', 'nvfp4', 'bnb-nf4', 'ct-pack', 'fp8', 'int8'].includes(w.scheme)) {
        test(`a slice of ${w.name} reads only the stored rows and scale rows it needs`, async () => {
          const source = countingSource(BYTES[file])
          const f = await open(source, OPTIONS[file])
          f.quantized()
          for (const { spec, start, stop } of slicesOf(w)) {
            source.reads.length = 0
            const s = await f.dequantize(w.name, { slice: spec })
            s.dispose()
            const allowed = /** @type {[number, number][]} */ (neededRanges(f, w, start, stop))
            const allowedBytes = allowed.reduce((n, [a, b]) => n + b - a, 0)
            let read = 0
            for (const [offset, length] of source.reads) {
              read += length
              assert.ok(allowed.some(([a, b]) => offset >= a && offset + length <= b),
                `slice ${JSON.stringify(spec)} read bytes [${offset}, ${offset + length}), outside what it needs: ${JSON.stringify(allowed)}`)
            }
            assert.ok(read <= allowedBytes, `slice ${JSON.stringify(spec)} read ${read} bytes, needs at most ${allowedBytes}`)
          }
          await f.close()
        })
      }
    }

    test('dequantize of a plain tensor or of a part: NotQuantized, naming it', async () => {
      const f = await open(BYTES[file], OPTIONS[file])
      const names = [...fx.plain.slice(0, 1), Object.values(fx.weights[0].parts).find((p) => p !== fx.weights[0].name)]
      for (const name of names) {
        if (name === undefined) continue
        const e = await fails(f.dequantize(name), 'NotQuantized')
        assert.equal(e.tensor, name)
      }
      await f.close()
    })
  })
}

describe('the quantization option', () => {
  for (const [file, fx] of Object.entries(FIXTURES)) {
    if (!fx.config) continue
    test(`${file}: a config that agrees (alone, or inside config.json) gives the same weights and values`, async () => {
      for (const quantization of [fx.config, { architectures: ['X'], model_type: 'x', quantization_config: fx.config }]) {
        const f = await open(BYTES[file], { quantization })
        sameList(f.quantized(), fx.weights, fx.plain)
        const w = fx.weights[0]
        const t = await f.dequantize(w.name)
        sameBits(t.data, w.expected(), `${w.name} with its config`, w.shape)
        t.dispose()
        await f.close()
      }
    })
  }

  test('gptq_v2 needs its config: without it the zeros are read as v1 (stored zero - 1)', async () => {
    const fx = FIXTURES['gptq-v2']
    const w = fx.weights[0]
    const f = await open(BYTES['gptq-v2'])
    assert.equal(f.quantized()[0].details.format, 'gptq')
    const t = await f.dequantize(w.name)
    sameBits(t.data, /** @type {any} */ (fx).asV1(), `${w.name} as v1`, w.shape)
    t.dispose()
    const g = await open(BYTES['gptq-v2'], { quantization: fx.config })
    assert.equal(g.quantized()[0].details.format, 'gptq_v2')
  })

  /** @type {[string, Record<string, any>, string][]} file, config changes, what disagrees */
  const mismatches = [
    ['fp8', { weight_block_size: [64, 64] }, 'block size'],
    ['fp8-b64', { weight_block_size: [128, 128] }, 'block size'],
    ['gptq4', { bits: 8 }, 'bits'],
    ['gptq4', { group_size: 128 }, 'group size'],
    ['gptq3', { bits: 4 }, 'bits'],
    ['awq', { group_size: 64 }, 'group size'],
    ['fp8-channel', { quant_method: 'gptq' }, 'quant_method'],
    ['fp8-channel', { format: 'int-quantized' }, 'format'],
    ['fp8-channel', { config_groups: { group_0: { targets: ['Linear'], weights: { num_bits: 8, type: 'int', strategy: 'channel' } } } }, 'weight type'],
    ['fp8-channel', { config_groups: { group_0: { targets: ['Linear'], weights: { num_bits: 8, type: 'float', strategy: 'tensor' } } } }, 'strategy'],
    ['fp8-tensor', { quant_algo: 'NVFP4' }, 'quant_algo'],
    ['fp8-fbgemm', { quant_method: 'fp8', weight_block_size: [128, 128] }, 'block size'],
    ['fp8-group', { config_groups: { group_0: { targets: ['Linear'], weights: { num_bits: 8, type: 'float', strategy: 'group', group_size: 64 } } } }, 'group size'],
    ['int8-channel', { quant_method: 'fbgemm_fp8' }, 'quant_method'],
    ['int8-group', { format: 'float-quantized' }, 'format'],
    ['int8-tensor', { config_groups: { group_0: { targets: ['Linear'], weights: { num_bits: 4, type: 'int', strategy: 'tensor' } } } }, 'bits'],
    ['nvfp4-ct', { config_groups: { group_0: { targets: ['Linear'], weights: { num_bits: 4, type: 'float', strategy: 'tensor_group', group_size: 32, symmetric: true } } } }, 'group size'],
  ]
  for (const [file, change, what] of mismatches) {
    test(`${file}: a config whose ${what} disagrees is QuantConfigMismatch, naming a weight`, async () => {
      const fx = FIXTURES[/** @type {keyof typeof FIXTURES} */ (file)]
      const quantization = { ...fx.config, ...change }
      const e = await fails(async () => {
        const f = await open(BYTES[file], { quantization })
        try {
          return f.quantized()
        } finally {
          await f.close()
        }
      }, 'QuantConfigMismatch')
      assert.ok(fx.weights.some((w) => w.name === e.tensor), `tensor ${e.tensor} is one of the weights`)
      const f = await open(BYTES[file], { quantization }).catch(() => null)
      if (f) {
        await fails(f.dequantize(fx.weights[0].name), 'QuantConfigMismatch')
        assert.doesNotThrow(() => f.parameterCount())
      }
    })
  }
})

describe('error codes', () => {
  for (const [file, fx] of Object.entries(errorFixtures())) {
    test(`${file}: ${fx.code} naming ${fx.weight}`, async () => {
      const f = await open(await toBytes(fx.tensors))
      assert.doesNotThrow(() => f.parameterCount(), 'parameterCount() never throws for quantization problems')
      if (fx.inQuantized) {
        assert.ok(f.quantized().some((/** @type {any} */ e) => e.name === fx.weight))
      } else {
        const e = await fails(() => f.quantized(), fx.code)
        assert.equal(e.tensor, fx.weight)
      }
      const e = await fails(f.dequantize(fx.weight), fx.code)
      assert.equal(e.tensor, fx.weight)
      if (fx.part) assert.ok(e.message.includes(fx.part), `the message names ${fx.part}: ${e.message}`)
      await f.close()
    })
  }
})

test('fp8: an all-zero zero point (compressed-tensors saved them for symmetric FP8) decodes as without it', async () => {
  const fx = FIXTURES['fp8-channel']
  const w = fx.weights[1]
  const zp = `${w.name}_zero_point`
  const f = await open(await toBytes({ ...fx.tensors, [zp]: { dtype: 'F8_E4M3', shape: [w.shape[0], 1], data: new Uint8Array(w.shape[0]).fill(0x80).fill(0, 3) } }))
  const entry = f.quantized().find((/** @type {any} */ e) => e.name === w.name)
  assert.equal(entry.parts.zeroPoint, zp)
  assert.equal(f.parameterCount().byScheme.fp8, count(fx.weights[0].shape) + count(w.shape))
  const t = await f.dequantize(w.name)
  sameBits(t.data, w.expected(), w.name, w.shape)
  t.dispose()
  await f.close()
})

test('fp8 and int8 next to the schemes that also have a weight_scale: nvfp4 (ModelOpt, compressed-tensors) and ct-pack', async () => {
  const fp8 = FIXTURES['fp8-tensor']
  /** @param {string} prefix */
  const only = (prefix) => Object.fromEntries(Object.entries(fp8.tensors).filter(([n]) => n.startsWith(prefix)))
  const k = only('model.layers.0.self_attn.k_proj.')
  const v = only('model.layers.0.self_attn.v_proj.')
  const q = only('model.layers.0.self_attn.q_proj.')
  for (const [files, tensors] of /** @type {[string[], Record<string, any>][]} */ ([
    [['nvfp4-ct', 'nvfp4-modelopt'], { ...k, ...v, ...q }],
    [['ct-pack', 'int8-tensor'], { ...v, ...q }],
  ])) {
    const weights = [...files.flatMap((file) => FIXTURES[file].weights), ...fp8.weights.filter((w) => tensors[w.name])]
    const all = { ...tensors }
    for (const file of files) Object.assign(all, FIXTURES[file].tensors)
    const f = await open(await toBytes(all))
    sameList(f.quantized(), weights, [])
    for (const w of weights) {
      const t = await f.dequantize(w.name)
      sameBits(t.data, w.expected(), `${files} ${w.name}`, w.shape)
      t.dispose()
    }
    await f.close()
  }
})

describe('a sharded set, parts in different shards', () => {
  const set = shardedFixture()
  const openSet = async () => {
    /** @type {Record<string, Uint8Array>} */
    const shards = {}
    for (const [path, tensors] of Object.entries(set.shards)) shards[path] = await toBytes(tensors)
    const index = new TextEncoder().encode(JSON.stringify({ metadata: { total_size: 1 }, weight_map: set.weightMap }))
    return open(index, { shards })
  }

  test('the parts really are split', () => {
    for (const w of set.weights) {
      const where = new Set(Object.values(w.parts).map((p) => set.weightMap[p]))
      assert.equal(where.size, 2, `${w.name} spans both shards`)
    }
  })

  test('await quantized() lists them; dequantize() equals the reference; parameterCount()', async () => {
    const f = /** @type {any} */ (await openSet())
    sameList(await f.quantized(), set.weights, set.plain)
    for (const w of set.weights) {
      const t = await f.dequantize(w.name)
      assert.deepEqual(t.shape, w.shape)
      sameBits(t.data, w.expected(), `sharded ${w.name}`, w.shape)
      t.dispose()
      const [a, b] = [1, Math.min(w.shape[0], 4)]
      const s = await f.dequantize(w.name, { slice: [a, b] })
      const rowLength = count(w.shape.slice(1))
      sameBits(s.data, w.expected().subarray(a * rowLength, b * rowLength), `sharded ${w.name} slice`, s.shape)
      s.dispose()
    }
    const count_ = await f.parameterCount()
    /** @type {Record<string, number>} */
    const byScheme = {}
    for (const w of set.weights) byScheme[w.scheme] = (byScheme[w.scheme] ?? 0) + count(w.shape)
    assert.deepEqual(count_.byScheme, byScheme)
    const plain = count(set.shards['model-00002-of-00002.safetensors']['model.norm.weight'].shape) +
      count(set.shards['model-00001-of-00002.safetensors']['model.embed_tokens.weight'].shape)
    assert.equal(count_.total, plain + Object.values(byScheme).reduce((x, y) => x + y, 0))
    await f.close()
  })
})

describe('quantized() lists copies', () => {
  /** Changes every field of every entry, nested arrays and objects too. @param {any[]} list */
  const scribble = (list) => {
    for (const e of list) {
      e.name = 'x'
      e.shape[0] = -1
      for (const role of Object.keys(e.parts)) e.parts[role] = 'x'
      for (const [key, value] of Object.entries(e.details)) {
        if (Array.isArray(value)) value[0] = -1
        else e.details[key] = 'x'
      }
      e.details.added = 1
    }
  }
  test('of a file and of a sharded set: changing what one call gave changes nothing the next gives', async () => {
    for (const which of ['fp8', 'gptq4', 'bnb-nf4-nested', 'ct-pack', 'nvfp4-ct', 'mxfp4']) {
      const f = await open(BYTES[which])
      const before = structuredClone(f.quantized())
      scribble(f.quantized())
      assert.deepEqual(f.quantized(), before, which)
      await f.close()
    }
    const set = shardedFixture()
    /** @type {Record<string, Uint8Array>} */
    const shards = {}
    for (const [path, tensors] of Object.entries(set.shards)) shards[path] = await toBytes(tensors)
    const index = new TextEncoder().encode(JSON.stringify({ weight_map: set.weightMap }))
    const f = /** @type {any} */ (await open(index, { shards }))
    const before = structuredClone(await f.quantized())
    assert.equal(before.length, set.weights.length)
    scribble(await f.quantized())
    assert.deepEqual(await f.quantized(), before)
    await f.close()
  })
})

describe('signal and onProgress', () => {
  const fx = FIXTURES.fp8
  const w = fx.weights[0]

  test('an aborted signal rejects with Aborted', async () => {
    const f = await open(BYTES.fp8)
    const controller = new AbortController()
    controller.abort()
    await fails(f.dequantize(w.name, { signal: controller.signal }), 'Aborted')
    await fails(f.dequantize(w.name, { signal: controller.signal, slice: [0, 10] }), 'Aborted')
    // and the file still works
    const t = await f.dequantize(w.name)
    sameBits(t.data, w.expected(), w.name, w.shape)
    t.dispose()
  })

  test('onProgress reports the bytes read up to their total', async () => {
    for (const [file, index] of /** @type {[keyof typeof FIXTURES, number][]} */ ([['fp8', 0], ['bnb-nf4-nested', 0], ['gptq4', 0]])) {
      const f = await open(BYTES[file])
      const name = FIXTURES[file].weights[index].name
      /** @type {{ loaded: number, total: number }[]} */
      const seen = []
      const t = await f.dequantize(name, { onProgress: (p) => seen.push({ ...p }) })
      t.dispose()
      assert.ok(seen.length > 0, `${file}: onProgress called`)
      const last = seen[seen.length - 1]
      assert.ok(last.total > 0 && last.loaded === last.total, `${file}: ends at its total (${JSON.stringify(last)})`)
      for (let k = 1; k < seen.length; k++) assert.ok(seen[k].loaded >= seen[k - 1].loaded, `${file}: loaded never goes back`)
    }
  })
})

#!/usr/bin/env node
/**
 * Quantized checkpoints for the tests of issue 15, made here with the project's own writer: for
 * every scheme, deterministic values quantized and packed the way the producer packs them (an
 * encoder per scheme below), with odd shapes and planted extremes, plus plain tensors that must
 * not be listed, the files each error code needs, and a sharded set whose weights' parts sit in
 * different shards.
 *
 *   node tests/js/quant-fixtures.js <out dir>     writes every file (and the sharded set's index)
 *
 * Each fixture file comes with what the tests expect of it: its quantized weights (name, scheme,
 * logical shape, parts, details) and their values as decoded by tests/js/quant-reference.js from
 * the stored bytes.
 */
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { serialize } from '../../js/node.js'
import { f32ToBf16, f32ToF16, f32ToF8E4M3, prng } from '../fixtures/make-sample.js'
import * as ref from './quant-reference.js'

const F = Math.fround

/**
 * @typedef {{ dtype: string, shape: number[], data: ArrayBufferView }} Stored
 * @typedef {{ name: string, scheme: string, shape: number[], parts: Record<string, string>,
 *   details: Record<string, any>, expected: () => Float32Array }} Weight
 * @typedef {{ tensors: Record<string, Stored>, weights: Weight[], plain: string[],
 *   config?: Record<string, any> }} Fixture
 */

// --- deterministic values --------------------------------------------------------------------

/** @param {number} seed */
function values(seed) {
  const random = prng(seed)
  return {
    random,
    /** normal(0, std) values @param {number} n @param {number} std */
    normal(n, std) {
      const out = new Float32Array(n)
      for (let i = 0; i < n; i++) {
        const u = 1 - random()
        out[i] = std * Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random())
      }
      return out
    },
    /** an integer in [lo, hi] @param {number} lo @param {number} hi */
    int(lo, hi) { return lo + Math.floor(random() * (hi - lo + 1)) },
  }
}

/** @param {number} n @param {() => number} f */
const bf16s = (n, f) => Uint16Array.from({ length: n }, () => f32ToBf16(f()))

/** A plain BF16 tensor. @param {number[]} shape @param {number} seed */
function plainBf16(shape, seed) {
  const v = values(seed)
  const n = shape.reduce((a, b) => a * b, 1)
  return { dtype: 'BF16', shape, data: bf16s(n, () => v.normal(1, 0.02)[0]) }
}

/** @param {number[]} shape */
const count = (shape) => shape.reduce((a, b) => a * b, 1)

// --- fp8-block (DeepSeek-V3) ------------------------------------------------------------------

/**
 * DeepSeek's weight_quant: per [bo, bi] block s = amax / 448, y = e4m3(x / s); s is stored as
 * weight_scale_inv (float32), and dequantizing multiplies by it.
 * @param {Float32Array} x @param {number} rows @param {number} cols @param {[number, number]} block
 */
export function encodeFp8Block(x, rows, cols, [bo, bi]) {
  const sr = Math.ceil(rows / bo)
  const sc = Math.ceil(cols / bi)
  const scales = new Float32Array(sr * sc)
  const weight = new Uint8Array(rows * cols)
  for (let br = 0; br < sr; br++) {
    for (let bc = 0; bc < sc; bc++) {
      let amax = 0
      for (let r = br * bo; r < Math.min(rows, (br + 1) * bo); r++)
        for (let c = bc * bi; c < Math.min(cols, (bc + 1) * bi); c++) amax = Math.max(amax, Math.abs(x[r * cols + c]))
      const s = F(amax / 448) || 1
      scales[br * sc + bc] = s
      for (let r = br * bo; r < Math.min(rows, (br + 1) * bo); r++)
        for (let c = bc * bi; c < Math.min(cols, (bc + 1) * bi); c++) weight[r * cols + c] = f32ToF8E4M3(F(x[r * cols + c] / s))
    }
  }
  return { weight, scales, scaleShape: [sr, sc] }
}

/**
 * @param {string} prefix module name @param {number} rows @param {number} cols
 * @param {[number, number]} block @param {number} seed
 * @param {(weight: Uint8Array) => void} [plant] changes the stored bytes
 */
function fp8Weight(prefix, rows, cols, block, seed, plant) {
  const x = values(seed).normal(rows * cols, 0.02)
  const { weight, scales, scaleShape } = encodeFp8Block(x, rows, cols, block)
  plant?.(weight)
  const name = `${prefix}.weight`
  /** @type {Record<string, Stored>} */
  const tensors = {
    [name]: { dtype: 'F8_E4M3', shape: [rows, cols], data: weight },
    [`${name}_scale_inv`]: { dtype: 'F32', shape: scaleShape, data: scales },
  }
  /** @type {Weight} */
  const w = {
    name, scheme: 'fp8-block', shape: [rows, cols],
    parts: { weight: name, scaleInv: `${name}_scale_inv` }, details: { block },
    expected: () => ref.fp8Block({ weight, rows, cols, scales: ref.scaleBits('F32', scales), scaleCols: scaleShape[1], block }),
  }
  return { tensors, weight: w }
}

/** The E4M3 extremes: 448, -448, the smallest subnormal both signs, -0, +0, NaN both signs. */
export const E4M3_EXTREMES = [0x7e, 0xfe, 0x01, 0x81, 0x80, 0x00, 0x7f, 0xff, 0x08, 0x07]

// --- mxfp4 (gpt-oss) ---------------------------------------------------------------------------

/** FP4 E2M1 magnitudes, by nibble 0..7. */
const FP4_MAG = [0, 0.5, 1, 1.5, 2, 3, 4, 6]

/** The nibble of the FP4 value nearest x (ties to the even nibble), sign in bit 3. @param {number} x */
function fp4Nibble(x) {
  const a = Math.abs(x)
  let best = 0
  for (let i = 1; i < 8; i++) {
    const d = Math.abs(FP4_MAG[i] - a)
    const bd = Math.abs(FP4_MAG[best] - a)
    if (d < bd || (d === bd && i % 2 === 0)) best = i
  }
  return (x < 0 || Object.is(x, -0) ? 8 : 0) | best
}

/**
 * OCP MX quantization of groups of 32: the shared exponent e = floor(log2(amax)) - 2 (so amax /
 * 2^e lands in [4, 8)), stored e + 127; element nibbles low first.
 * @param {Float32Array} x length a multiple of 32
 */
export function encodeMxfp4(x) {
  const groups = x.length / 32
  const blocks = new Uint8Array(groups * 16)
  const scales = new Uint8Array(groups)
  for (let g = 0; g < groups; g++) {
    let amax = 0
    for (let k = 0; k < 32; k++) amax = Math.max(amax, Math.abs(x[g * 32 + k]))
    const e = amax === 0 ? -127 : Math.max(-127, Math.min(127, Math.floor(Math.log2(amax)) - 2))
    scales[g] = e + 127
    for (let k = 0; k < 16; k++) {
      const lo = fp4Nibble(x[g * 32 + 2 * k] / 2 ** e)
      const hi = fp4Nibble(x[g * 32 + 2 * k + 1] / 2 ** e)
      blocks[g * 16 + k] = lo | (hi << 4)
    }
  }
  return { blocks, scales }
}

/**
 * @param {string} name logical (stored without _blocks) @param {number[]} lead [..., rows]
 * @param {number} groups G @param {number} seed @param {(blocks: Uint8Array, scales: Uint8Array) => void} [plant]
 */
function mxfp4Weight(name, lead, groups, seed, plant) {
  const n = count(lead) * groups * 32
  const { blocks, scales } = encodeMxfp4(values(seed).normal(n, 0.02))
  plant?.(blocks, scales)
  /** @type {Weight} */
  const w = {
    name, scheme: 'mxfp4', shape: [...lead, groups * 32],
    parts: { blocks: `${name}_blocks`, scales: `${name}_scales` }, details: { group: 32 },
    expected: () => ref.mxfp4({ blocks, scales }),
  }
  return {
    tensors: {
      [`${name}_blocks`]: { dtype: 'U8', shape: [...lead, groups, 16], data: blocks },
      [`${name}_scales`]: { dtype: 'U8', shape: [...lead, groups], data: scales },
    },
    weight: w,
  }
}

// --- nvfp4 (compressed-tensors and ModelOpt) -------------------------------------------------

/**
 * Per group of 16: block scale = amax / 6 in E4M3, on top of a per-tensor scale (compressed-tensors
 * stores global = 448 * 6 / amax and divides by it; ModelOpt stores scale_2 = amax / (6 * 448)
 * and multiplies); values to the nearest FP4, two per byte, low nibble first.
 * @param {Float32Array} x @param {number} rows @param {number} cols
 * @param {'compressed-tensors' | 'modelopt'} format
 */
export function encodeNvfp4(x, rows, cols, format, group = 16) {
  let amax = 0
  for (const v of x) amax = Math.max(amax, Math.abs(v))
  const global = format === 'modelopt' ? F(amax / (6 * 448)) : F((448 * 6) / amax)
  const scaleCols = cols / group
  const scales = new Uint8Array(rows * scaleCols)
  const packed = new Uint8Array((rows * cols) / 2)
  for (let r = 0; r < rows; r++) {
    for (let g = 0; g < scaleCols; g++) {
      let gmax = 0
      for (let c = g * group; c < (g + 1) * group; c++) gmax = Math.max(gmax, Math.abs(x[r * cols + c]))
      const s = format === 'modelopt' ? F(gmax / (6 * global)) : F((gmax / 6) * global)
      const byte = f32ToF8E4M3(s)
      scales[r * scaleCols + g] = byte
      const sv = ref.e4m3Value(byte)
      const eff = format === 'modelopt' ? F(sv * global) : F(sv / global)
      for (let c = g * group; c < (g + 1) * group; c++) {
        const nib = fp4Nibble(eff === 0 ? 0 : x[r * cols + c] / eff)
        packed[(r * cols + c) >> 1] |= c & 1 ? nib << 4 : nib
      }
    }
  }
  return { packed, scales, global }
}

/**
 * @param {string} prefix @param {number} rows @param {number} cols @param {'compressed-tensors' | 'modelopt'} format
 * @param {number} seed @param {(packed: Uint8Array, scales: Uint8Array) => void} [plant]
 */
function nvfp4Weight(prefix, rows, cols, format, seed, plant) {
  const { packed, scales, global } = encodeNvfp4(values(seed).normal(rows * cols, 0.02), rows, cols, format)
  plant?.(packed, scales)
  const name = `${prefix}.weight`
  const scaleCols = cols / 16
  const ct = format === 'compressed-tensors'
  const parts = ct
    ? { packed: `${name}_packed`, scale: `${name}_scale`, globalScale: `${name}_global_scale`, inputGlobalScale: `${prefix}.input_global_scale` }
    : { packed: name, scale: `${name}_scale`, scale2: `${name}_scale_2`, inputScale: `${prefix}.input_scale` }
  /** @type {Record<string, Stored>} */
  const tensors = {
    [parts.packed]: { dtype: 'U8', shape: [rows, cols / 2], data: packed },
    [parts.scale]: { dtype: 'F8_E4M3', shape: [rows, scaleCols], data: scales },
  }
  if (ct) {
    tensors[`${name}_global_scale`] = { dtype: 'F32', shape: [1], data: new Float32Array([global]) }
    tensors[`${prefix}.input_global_scale`] = { dtype: 'F32', shape: [1], data: new Float32Array([F(1234.5)]) }
  } else {
    tensors[`${name}_scale_2`] = { dtype: 'F32', shape: [], data: new Float32Array([global]) }
    tensors[`${prefix}.input_scale`] = { dtype: 'F32', shape: [], data: new Float32Array([F(0.0123)]) }
  }
  /** @type {Weight} */
  const w = {
    name, scheme: 'nvfp4', shape: [rows, cols], parts, details: { format, group: 16 },
    expected: () => ref.nvfp4({ packed, rows, cols, scales, scaleCols, group: 16, global, format }),
  }
  return { tensors, weight: w }
}

// --- gptq (AutoGPTQ) -------------------------------------------------------------------------

/**
 * Writes `bits` bits of `value` at bit position `bit` of a little-endian stream of 32-bit words
 * (word w at words[w * stride + column]); values cross words (3 bits) as AutoGPTQ's pack does.
 * @param {Uint32Array} words @param {number} stride @param {number} column @param {number} bit
 * @param {number} bits @param {number} value
 */
function putBits(words, stride, column, bit, bits, value) {
  for (let b = 0; b < bits; b++) {
    if (!((value >> b) & 1)) continue
    const at = bit + b
    words[Math.floor(at / 32) * stride + column] |= 1 << (at % 32)
  }
}

/**
 * AutoGPTQ pack(): per (group, out) an F16 scale and an integer zero in [0, 2^bits - 1]; q =
 * clamp(round(x / scale) + zero); qweight [in * bits / 32, out] (a column's values a bit stream
 * down the rows), qzeros [G, out * bits / 32] holding zero - 1 (v1) or zero (v2) as a bit stream
 * along each row, masked to `bits` bits.
 * @param {Float32Array} x [out, in] @param {number} outF @param {number} inF @param {number} bits
 * @param {number} group @param {Int32Array} gIdx @param {number} seed @param {boolean} v2
 */
export function encodeGptq(x, outF, inF, bits, group, gIdx, seed, v2) {
  const v = values(seed)
  const maxq = 2 ** bits - 1
  const groups = Math.ceil(inF / group)
  const scales = new Uint16Array(groups * outF)
  const zeros = new Int32Array(groups * outF)
  for (let g = 0; g < groups; g++) {
    for (let o = 0; o < outF; o++) {
      let lo = 0
      let hi = 0
      for (let i = 0; i < inF; i++) {
        if (gIdx[i] !== g) continue
        lo = Math.min(lo, x[o * inF + i])
        hi = Math.max(hi, x[o * inF + i])
      }
      const s = f32ToF16((hi - lo) / maxq || 1e-3)
      scales[g * outF + o] = s
      zeros[g * outF + o] = Math.max(0, Math.min(maxq, Math.round(-lo / ref.f16Value(s)) + v.int(-1, 1)))
    }
  }
  const qweight = new Uint32Array(((inF * bits) / 32) * outF)
  const codes = new Int32Array(outF * inF)
  for (let i = 0; i < inF; i++) {
    const g = gIdx[i]
    for (let o = 0; o < outF; o++) {
      const q = Math.max(0, Math.min(maxq, Math.round(x[o * inF + i] / ref.f16Value(scales[g * outF + o])) + zeros[g * outF + o]))
      codes[o * inF + i] = q
      putBits(qweight, outF, o, i * bits, bits, q)
    }
  }
  const zeroWords = (outF * bits) / 32
  const qzeros = new Uint32Array(groups * zeroWords)
  for (let g = 0; g < groups; g++) {
    for (let o = 0; o < outF; o++) {
      const stored = (zeros[g * outF + o] - (v2 ? 0 : 1)) & maxq
      putBits(qzeros, 1, g * zeroWords, o * bits, bits, stored)
    }
  }
  return { qweight: new Int32Array(qweight.buffer), qzeros: new Int32Array(qzeros.buffer), scales, groups, codes, zeros }
}

/**
 * @param {string} prefix @param {{ outF: number, inF: number, bits: number, group: number,
 *   actOrder?: boolean, v2?: boolean, seed: number, plant?: (p: { qzeros: Int32Array, gIdx: Int32Array }) => void,
 *   drop?: string[] }} o
 */
function gptqWeight(prefix, { outF, inF, bits, group, actOrder = false, v2 = false, seed, plant, drop = [] }) {
  const v = values(seed)
  const groups = Math.ceil(inF / group)
  const gIdx = new Int32Array(inF)
  if (actOrder) {
    // desc_act: the columns were quantized in a permuted order, group k holding the k-th run of
    // `group` columns of that order.
    const perm = Array.from({ length: inF }, (_, i) => i)
    for (let i = inF - 1; i > 0; i--) {
      const j = v.int(0, i)
      ;[perm[i], perm[j]] = [perm[j], perm[i]]
    }
    perm.forEach((col, k) => { gIdx[col] = Math.floor(k / group) })
  } else {
    for (let i = 0; i < inF; i++) gIdx[i] = Math.floor(i / group)
  }
  const x = v.normal(outF * inF, 0.02)
  const { qweight, qzeros, scales } = encodeGptq(x, outF, inF, bits, group, gIdx, seed + 1, v2)
  plant?.({ qzeros, gIdx })
  const parts = { qweight: `${prefix}.qweight`, qzeros: `${prefix}.qzeros`, scales: `${prefix}.scales`, gIdx: `${prefix}.g_idx` }
  /** @type {Record<string, Stored>} */
  const tensors = {
    [parts.qweight]: { dtype: 'I32', shape: [(inF * bits) / 32, outF], data: qweight },
    [parts.qzeros]: { dtype: 'I32', shape: [groups, (outF * bits) / 32], data: qzeros },
    [parts.scales]: { dtype: 'F16', shape: [groups, outF], data: scales },
    [parts.gIdx]: { dtype: 'I32', shape: [inF], data: gIdx },
  }
  for (const role of drop) delete tensors[/** @type {any} */ (parts)[role]]
  /** @type {Weight} */
  const w = {
    name: `${prefix}.weight`, scheme: 'gptq', shape: [outF, inF], parts,
    details: { bits, group, actOrder, format: v2 ? 'gptq_v2' : 'gptq' },
    expected: () => ref.gptq({ qweight, qzeros, scales: ref.scaleBits('F16', scales), gIdx, inF, outF, bits, group, v2 }),
  }
  return { tensors, weight: w, decode: (/** @type {boolean} */ asV2) =>
    ref.gptq({ qweight, qzeros, scales: ref.scaleBits('F16', scales), gIdx, inF, outF, bits, group, v2: asV2 }) }
}

// --- awq (AutoAWQ GEMM) ------------------------------------------------------------------------

/** AutoAWQ's packing order: nibble i of a word holds column 8c + AWQ_ORDER[i]. */
const AWQ_ORDER = [0, 2, 4, 6, 1, 3, 5, 7]

/**
 * AutoAWQ WQLinear_GEMM.from_linear: per (group, out) an F16 scale and a zero in [0, 15];
 * qweight [in, out / 8], qzeros [in / group, out / 8], both packed in AWQ_ORDER.
 * @param {Float32Array} x [out, in] @param {number} outF @param {number} inF @param {number} group
 */
export function encodeAwq(x, outF, inF, group) {
  const groups = inF / group
  const scales = new Uint16Array(groups * outF)
  const zeros = new Uint8Array(groups * outF)
  for (let g = 0; g < groups; g++) {
    for (let o = 0; o < outF; o++) {
      let lo = 0
      let hi = 0
      for (let i = g * group; i < (g + 1) * group; i++) {
        lo = Math.min(lo, x[o * inF + i])
        hi = Math.max(hi, x[o * inF + i])
      }
      const s = f32ToF16((hi - lo) / 15 || 1e-3)
      scales[g * outF + o] = s
      zeros[g * outF + o] = Math.max(0, Math.min(15, Math.round(-lo / ref.f16Value(s))))
    }
  }
  const words = outF / 8
  const qweight = new Uint32Array(inF * words)
  const qzeros = new Uint32Array(groups * words)
  const codes = new Int32Array(outF * inF)
  for (let c = 0; c < words; c++) {
    for (let n = 0; n < 8; n++) {
      const o = 8 * c + AWQ_ORDER[n]
      for (let i = 0; i < inF; i++) {
        const g = Math.floor(i / group)
        const q = Math.max(0, Math.min(15, Math.round(x[o * inF + i] / ref.f16Value(scales[g * outF + o])) + zeros[g * outF + o]))
        codes[o * inF + i] = q
        qweight[i * words + c] |= q << (4 * n)
      }
      for (let g = 0; g < groups; g++) qzeros[g * words + c] |= zeros[g * outF + o] << (4 * n)
    }
  }
  return { qweight: new Int32Array(qweight.buffer), qzeros: new Int32Array(qzeros.buffer), scales, groups, codes, zeros }
}

/** @param {string} prefix @param {number} outF @param {number} inF @param {number} group @param {number} seed */
function awqWeight(prefix, outF, inF, group, seed) {
  const { qweight, qzeros, scales, groups } = encodeAwq(values(seed).normal(outF * inF, 0.02), outF, inF, group)
  const parts = { qweight: `${prefix}.qweight`, qzeros: `${prefix}.qzeros`, scales: `${prefix}.scales` }
  /** @type {Weight} */
  const w = {
    name: `${prefix}.weight`, scheme: 'awq', shape: [outF, inF], parts, details: { bits: 4, group },
    expected: () => ref.awq({ qweight, qzeros, scales: ref.scaleBits('F16', scales), inF, outF, group }),
  }
  return {
    tensors: {
      [parts.qweight]: { dtype: 'I32', shape: [inF, outF / 8], data: qweight },
      [parts.qzeros]: { dtype: 'I32', shape: [groups, outF / 8], data: qzeros },
      [parts.scales]: { dtype: 'F16', shape: [groups, outF], data: scales },
    },
    weight: w,
  }
}

// --- bnb-nf4 (bitsandbytes) --------------------------------------------------------------------

/** bitsandbytes get_4bit_type('nf4'), as float32. */
export const NF4_MAP = Float32Array.from([
  -1.0, -0.6961928009986877, -0.5250730514526367, -0.39491748809814453, -0.28444138169288635,
  -0.18477343022823334, -0.09105003625154495, 0.0, 0.07958029955625534, 0.16093020141124725,
  0.24611230194568634, 0.33791524171829224, 0.44070982933044434, 0.5626170039176941,
  0.7229568362236023, 1.0,
])

/**
 * bitsandbytes create_dynamic_map(signed=True, max_exponent_bits=7, total_bits=8), sorted: the
 * 256-entry code of the nested (double) quantization.
 */
export function dynamicMap() {
  const data = []
  const maxExp = 7
  const nonSign = 7
  /** @param {number} items */
  const means = (items) => {
    const b = Array.from({ length: items }, (_, k) => F(0.1 + (0.9 * k) / (items - 1)))
    return b.slice(0, -1).map((v, k) => F((v + b[k + 1]) / 2))
  }
  for (let i = 0; i < maxExp; i++) {
    const items = 2 ** (i + nonSign - maxExp) + 1
    for (const m of means(items)) data.push(10 ** (-(maxExp - 1) + i) * m, -(10 ** (-(maxExp - 1) + i)) * m)
  }
  data.push(0, 1)
  while (data.length < 256) data.push(0)
  return Float32Array.from(data.sort((a, b) => a - b))
}

/** The index of the code value nearest x. @param {Float32Array} code @param {number} x */
function nearest(code, x) {
  let best = 0
  for (let i = 1; i < code.length; i++) if (Math.abs(code[i] - x) < Math.abs(code[best] - x)) best = i
  return best
}

/**
 * bitsandbytes quantize_4bit (nf4): per block of `blocksize` elements absmax = max |x|, codes the
 * nearest NF4 value of x / absmax, two per byte HIGH nibble first, stored [ceil(n / 2), 1]; nested
 * (compress_statistics): offset = mean(absmax), absmax - offset quantized blockwise by 256 with
 * the dynamic map.
 * @param {Float32Array} x @param {number} blocksize @param {boolean} nested
 */
export function encodeNf4(x, blocksize, nested) {
  const n = x.length
  const blocks = Math.ceil(n / blocksize)
  const absmax = new Float32Array(blocks)
  for (let b = 0; b < blocks; b++)
    for (let k = b * blocksize; k < Math.min(n, (b + 1) * blocksize); k++) absmax[b] = Math.max(absmax[b], Math.abs(x[k]))
  const packed = new Uint8Array(Math.ceil(n / 2))
  const nibbles = new Uint8Array(n)
  for (let k = 0; k < n; k++) {
    const nib = nearest(NF4_MAP, x[k] / absmax[Math.floor(k / blocksize)])
    nibbles[k] = nib
    packed[k >> 1] |= k & 1 ? nib : nib << 4
  }
  if (!nested) return { packed, absmax, nibbles }
  let sum = 0
  for (const a of absmax) sum += a
  const offset = F(sum / blocks)
  const nestedBlocksize = 256
  const nestedBlocks = Math.ceil(blocks / nestedBlocksize)
  const nestedAbsmax = new Float32Array(nestedBlocks)
  const nestedMap = dynamicMap()
  const codes = new Uint8Array(blocks)
  for (let b = 0; b < blocks; b++) {
    const nb = Math.floor(b / nestedBlocksize)
    nestedAbsmax[nb] = Math.max(nestedAbsmax[nb], Math.abs(F(absmax[b] - offset)))
  }
  for (let b = 0; b < blocks; b++) codes[b] = nearest(nestedMap, F(absmax[b] - offset) / nestedAbsmax[Math.floor(b / nestedBlocksize)])
  return { packed, absmax, nibbles, codes, nestedAbsmax, nestedMap, offset, nestedBlocksize }
}

/** A float as Python's repr writes it (the tests' offsets are in [1e-4, 1e16): plain digits). @param {number} x */
const pyFloat = (x) => (Number.isInteger(x) ? `${x}.0` : String(x))

/**
 * @param {string} prefix @param {number[]} shape @param {boolean} nested @param {number} seed
 * @param {{ json?: string }} [o] json: the quant state's text instead of the right one
 */
function nf4Weight(prefix, shape, nested, seed, o = {}) {
  const n = count(shape)
  const blocksize = 64
  const enc = encodeNf4(values(seed).normal(n, 0.02), blocksize, nested)
  const name = `${prefix}.weight`
  const stateName = `${name}.quant_state.bitsandbytes__nf4`
  let json = `{"quant_type": "nf4", "blocksize": ${blocksize}, "dtype": "bfloat16", "shape": [${shape.join(', ')}]`
  if (nested) json += `, "nested_blocksize": 256, "nested_dtype": "float32", "nested_offset": ${pyFloat(/** @type {number} */ (enc.offset))}`
  json += '}'
  const state = new TextEncoder().encode(o.json ?? json)
  /** @type {Record<string, string>} */
  const parts = { weight: name, absmax: `${name}.absmax`, quantMap: `${name}.quant_map`, quantState: stateName }
  /** @type {Record<string, Stored>} */
  const tensors = {
    [name]: { dtype: 'U8', shape: [enc.packed.length, 1], data: enc.packed },
    [`${name}.quant_map`]: { dtype: 'F32', shape: [16], data: NF4_MAP },
    [stateName]: { dtype: 'U8', shape: [state.length], data: state },
  }
  if (enc.codes) {
    parts.nestedAbsmax = `${name}.nested_absmax`
    parts.nestedQuantMap = `${name}.nested_quant_map`
    tensors[`${name}.absmax`] = { dtype: 'U8', shape: [enc.codes.length], data: enc.codes }
    tensors[`${name}.nested_absmax`] = { dtype: 'F32', shape: [enc.nestedAbsmax.length], data: enc.nestedAbsmax }
    tensors[`${name}.nested_quant_map`] = { dtype: 'F32', shape: [256], data: enc.nestedMap }
  } else {
    tensors[`${name}.absmax`] = { dtype: 'F32', shape: [enc.absmax.length], data: enc.absmax }
  }
  /** @type {Weight} */
  const w = {
    name, scheme: 'bnb-nf4', shape, parts,
    details: nested ? { blocksize, nested: true, nestedBlocksize: 256 } : { blocksize, nested: false },
    expected: () => (enc.codes
      ? ref.nf4({ packed: enc.packed, n, blocksize, quantMap: NF4_MAP, codes: enc.codes, nestedMap: /** @type {Float32Array} */ (enc.nestedMap),
        nestedAbsmax: /** @type {Float32Array} */ (enc.nestedAbsmax), offset: /** @type {number} */ (enc.offset), nestedBlocksize: 256 })
      : ref.nf4({ packed: enc.packed, n, blocksize, quantMap: NF4_MAP, absmax: /** @type {Float32Array} */ (enc.absmax) })),
  }
  return { tensors, weight: w }
}

// --- ct-pack (compressed-tensors pack-quantized) -----------------------------------------------

/**
 * compressed-tensors quantize + pack_to_int32: per (row, group) a BF16 scale and (asymmetric) an
 * int zero point in [-2^(bits-1), 2^(bits-1) - 1]; q = clamp(round(x / scale) + zp); both stored
 * + 2^(bits-1); values packed along `in` (floor(32 / bits) a word, low bits first, the last word
 * padded with zeros), zero points packed along `out`.
 * @param {Float32Array} x [out, in] @param {number} outF @param {number} inF @param {number} bits
 * @param {number} group @param {boolean} symmetric
 */
export function encodeCtPack(x, outF, inF, bits, group, symmetric) {
  const offset = 2 ** (bits - 1)
  const pf = Math.floor(32 / bits)
  const groups = Math.ceil(inF / group)
  const scales = new Uint16Array(outF * groups)
  const zp = new Int32Array(outF * groups)
  for (let r = 0; r < outF; r++) {
    for (let g = 0; g < groups; g++) {
      let lo = 0
      let hi = 0
      for (let i = g * group; i < Math.min(inF, (g + 1) * group); i++) {
        lo = Math.min(lo, x[r * inF + i])
        hi = Math.max(hi, x[r * inF + i])
      }
      const s = symmetric ? f32ToBf16(Math.max(-lo, hi) / (offset - 0.5) || 1e-3) : f32ToBf16((hi - lo) / (2 * offset - 1) || 1e-3)
      scales[r * groups + g] = s
      zp[r * groups + g] = symmetric ? 0 : Math.max(-offset, Math.min(offset - 1, Math.round(-offset - lo / ref.bf16Value(s))))
    }
  }
  const words = Math.ceil(inF / pf)
  const packed = new Uint32Array(outF * words)
  const codes = new Int32Array(outF * inF)
  for (let r = 0; r < outF; r++) {
    for (let i = 0; i < inF; i++) {
      const g = Math.floor(i / group)
      const q = Math.max(-offset, Math.min(offset - 1, Math.round(x[r * inF + i] / ref.bf16Value(scales[r * groups + g])) + zp[r * groups + g]))
      codes[r * inF + i] = q
      packed[r * words + Math.floor(i / pf)] |= (q + offset) << (bits * (i % pf))
    }
  }
  let zeroPoints = null
  if (!symmetric) {
    const zpWords = new Uint32Array(Math.ceil(outF / pf) * groups)
    for (let r = 0; r < outF; r++)
      for (let g = 0; g < groups; g++) zpWords[Math.floor(r / pf) * groups + g] |= (zp[r * groups + g] + offset) << (bits * (r % pf))
    zeroPoints = new Int32Array(zpWords.buffer)
  }
  return { packed: new Int32Array(packed.buffer), scales, zeroPoints, groups, words, codes, zp }
}

/**
 * @param {string} prefix @param {{ outF: number, inF: number, bits: number, group: number,
 *   symmetric: boolean, seed: number }} o
 */
function ctPackWeight(prefix, { outF, inF, bits, group, symmetric, seed }) {
  const pf = Math.floor(32 / bits)
  const { packed, scales, zeroPoints, groups, words } = encodeCtPack(values(seed).normal(outF * inF, 0.02), outF, inF, bits, group, symmetric)
  const name = `${prefix}.weight`
  /** @type {Record<string, string>} */
  const parts = { packed: `${name}_packed`, scale: `${name}_scale`, shape: `${name}_shape` }
  /** @type {Record<string, Stored>} */
  const tensors = {
    [parts.packed]: { dtype: 'I32', shape: [outF, words], data: packed },
    [parts.scale]: { dtype: 'BF16', shape: [outF, groups], data: scales },
    [parts.shape]: { dtype: 'I64', shape: [2], data: new BigInt64Array([BigInt(outF), BigInt(inF)]) },
  }
  if (zeroPoints) {
    parts.zeroPoint = `${name}_zero_point`
    tensors[parts.zeroPoint] = { dtype: 'I32', shape: [Math.ceil(outF / pf), groups], data: zeroPoints }
  }
  /** @type {Weight} */
  const w = {
    name, scheme: 'ct-pack', shape: [outF, inF], parts, details: { bits, group, symmetric },
    expected: () => ref.ctPack({ packed, scales: ref.scaleBits('BF16', scales), zeroPoints, outF, inF, bits, group }),
  }
  return { tensors, weight: w }
}

// --- fp8 and int8 (per tensor, channel or group) ----------------------------------------------

/**
 * The scale units of a [rows, cols] weight: which unit element (r, c) is in, and how many.
 * @param {'tensor' | 'channel' | 'group'} strategy @param {number} rows @param {number} cols @param {number} group
 */
function units(strategy, rows, cols, group) {
  const groups = Math.ceil(cols / group)
  const count = strategy === 'tensor' ? 1 : strategy === 'channel' ? rows : rows * groups
  const at = (/** @type {number} */ r, /** @type {number} */ c) =>
    strategy === 'tensor' ? 0 : strategy === 'channel' ? r : r * groups + Math.floor(c / group)
  return { count, at, groups }
}

/** A float32 as stored in `dtype` (F32 or BF16) and its value. @param {number} v @param {string} dtype */
const storeScale = (v, dtype) => (dtype === 'BF16' ? { stored: f32ToBf16(v), value: ref.bf16Value(f32ToBf16(v)) } : { stored: F(v), value: F(v) })

/**
 * compressed-tensors float-quantized / fbgemm_fp8 / ModelOpt FP8: per unit s = amax / 448 (in the
 * scale's dtype), q = e4m3(x / s).
 * @param {Float32Array} x @param {number} rows @param {number} cols
 * @param {'tensor' | 'channel' | 'group'} strategy @param {number} group @param {string} scaleDtype
 */
export function encodeFp8Scaled(x, rows, cols, strategy, group, scaleDtype) {
  const u = units(strategy, rows, cols, group)
  const amax = new Float64Array(u.count)
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) amax[u.at(r, c)] = Math.max(amax[u.at(r, c)], Math.abs(x[r * cols + c]))
  const scales = scaleDtype === 'BF16' ? new Uint16Array(u.count) : new Float32Array(u.count)
  const value = new Float32Array(u.count)
  amax.forEach((a, k) => {
    const s = storeScale(a / 448 || 1, scaleDtype)
    scales[k] = s.stored
    value[k] = s.value
  })
  const weight = new Uint8Array(rows * cols)
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) weight[r * cols + c] = f32ToF8E4M3(F(x[r * cols + c] / value[u.at(r, c)]))
  return { weight, scales, groups: u.groups }
}

/**
 * compressed-tensors int-quantized, 8 bits: per unit, symmetric s = amax / 127.5 and zp 0, else
 * s = (max - min) / 255 and zp = round(-128 - min / s) in [-128, 127]; q = clamp(round(x / s) + zp).
 * @param {Float32Array} x @param {number} rows @param {number} cols
 * @param {'tensor' | 'channel' | 'group'} strategy @param {number} group @param {string} scaleDtype @param {boolean} symmetric
 */
export function encodeInt8(x, rows, cols, strategy, group, scaleDtype, symmetric) {
  const u = units(strategy, rows, cols, group)
  const lo = new Float64Array(u.count)
  const hi = new Float64Array(u.count)
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      const k = u.at(r, c)
      lo[k] = Math.min(lo[k], x[r * cols + c])
      hi[k] = Math.max(hi[k], x[r * cols + c])
    }
  }
  const scales = scaleDtype === 'BF16' ? new Uint16Array(u.count) : new Float32Array(u.count)
  const value = new Float32Array(u.count)
  const zp = new Int8Array(u.count)
  for (let k = 0; k < u.count; k++) {
    const s = storeScale((symmetric ? Math.max(-lo[k], hi[k]) / 127.5 : (hi[k] - lo[k]) / 255) || 1e-3, scaleDtype)
    scales[k] = s.stored
    value[k] = s.value
    if (!symmetric) zp[k] = Math.max(-128, Math.min(127, Math.round(-128 - lo[k] / s.value)))
  }
  const weight = new Int8Array(rows * cols)
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      const k = u.at(r, c)
      weight[r * cols + c] = Math.max(-128, Math.min(127, Math.round(x[r * cols + c] / value[k]) + zp[k]))
    }
  }
  return { weight, scales, zeroPoints: symmetric ? null : zp, groups: u.groups }
}

/** The scale shapes producers store. @type {Record<string, (rows: number, groups: number) => number[]>} */
const SCALE_SHAPES = {
  '[]': () => [], '[1]': () => [1], '[out, 1]': (rows) => [rows, 1], '[out, G]': (rows, groups) => [rows, groups],
}
const STRATEGY_OF = /** @type {Record<string, 'tensor' | 'channel' | 'group'>} */ ({ '[]': 'tensor', '[1]': 'tensor', '[out, 1]': 'channel', '[out, G]': 'group' })

/**
 * An fp8 or int8 weight as its producer stores it.
 * @param {string} prefix @param {{ scheme: 'fp8' | 'int8', rows: number, cols: number, scaleShape: string,
 *   scaleDtype: string, group?: number, symmetric?: boolean, seed: number,
 *   inputs?: Record<string, { dtype: string, shape: number[], data: ArrayBufferView }>,
 *   plant?: (p: { weight: Uint8Array | Int8Array, scales: Float32Array | Uint16Array, zeroPoints: Int8Array | null }) => void }} o
 *   inputs: activation parts by role (inputScale, inputScaleUb...), stored as `${prefix}.<suffix>`
 */
function scaledWeight(prefix, { scheme, rows, cols, scaleShape, scaleDtype, group = cols, symmetric = true, seed, inputs = {}, plant }) {
  const strategy = STRATEGY_OF[scaleShape]
  const x = values(seed).normal(rows * cols, 0.02)
  const enc = scheme === 'fp8' ? { ...encodeFp8Scaled(x, rows, cols, strategy, group, scaleDtype), zeroPoints: null }
    : encodeInt8(x, rows, cols, strategy, group, scaleDtype, symmetric)
  plant?.(enc)
  const name = `${prefix}.weight`
  const shape = SCALE_SHAPES[scaleShape](rows, enc.groups)
  /** @type {Record<string, string>} */
  const parts = { weight: name, scale: `${name}_scale` }
  /** @type {Record<string, Stored>} */
  const tensors = {
    [name]: { dtype: scheme === 'fp8' ? 'F8_E4M3' : 'I8', shape: [rows, cols], data: enc.weight },
    [parts.scale]: { dtype: scaleDtype, shape, data: enc.scales },
  }
  if (enc.zeroPoints) {
    parts.zeroPoint = `${name}_zero_point`
    tensors[parts.zeroPoint] = { dtype: 'I8', shape, data: enc.zeroPoints }
  }
  const suffixes = /** @type {Record<string, string>} */ ({ inputScale: 'input_scale', inputScaleUb: 'input_scale_ub', inputZeroPoint: 'input_zero_point' })
  for (const [role, t] of Object.entries(inputs)) {
    parts[role] = `${prefix}.${suffixes[role]}`
    tensors[parts[role]] = t
  }
  /** @type {Record<string, any>} */
  const details = { strategy }
  if (strategy === 'group') details.group = group
  if (scheme === 'int8') details.symmetric = !enc.zeroPoints
  /** @type {Weight} */
  const w = {
    name, scheme, shape: [rows, cols], parts, details,
    expected: () => ref.scaled({ weight: enc.weight, rows, cols, scales: ref.scaleBits(scaleDtype, enc.scales), strategy, group, zeroPoints: enc.zeroPoints }),
  }
  return { tensors, weight: w }
}

/** A one-value activation scale. @param {number[]} shape @param {number} v */
const actScale = (shape, v) => ({ dtype: 'F32', shape, data: new Float32Array([v]) })

/** @param {string} strategy @param {'float' | 'int'} type @param {Record<string, any>} [more] */
const ctConfig = (strategy, type, more = {}) => ({
  quant_method: 'compressed-tensors', format: type === 'float' ? 'float-quantized' : 'int-quantized', quantization_status: 'compressed',
  config_groups: { group_0: { targets: ['Linear'], weights: { num_bits: 8, type, strategy, symmetric: true, dynamic: false, ...more } } },
  ignore: ['lm_head'],
})

// --- the fixture files ------------------------------------------------------------------------

/**
 * @param {{ tensors: Record<string, Stored>, weight: Weight }[]} quantized
 * @param {Record<string, Stored>} plain
 * @param {Record<string, any>} [config]
 * @returns {Fixture}
 */
function fixture(quantized, plain, config) {
  /** @type {Record<string, Stored>} */
  const tensors = {}
  for (const q of quantized) Object.assign(tensors, q.tensors)
  Object.assign(tensors, plain)
  return { tensors, weights: quantized.map((q) => q.weight), plain: Object.keys(plain), ...(config ? { config } : {}) }
}

/** The valid fixtures by file name (without .safetensors). */
export function fixtures() {
  const down = fp8Weight('model.layers.0.mlp.down_proj', 300, 200, [128, 128], 11, (w) => {
    // the extremes in the first full block, in the partial corner block and in the partial rows
    E4M3_EXTREMES.forEach((b, k) => {
      w[k] = b
      w[299 * 200 + 190 + k] = b
      w[260 * 200 + 5 + k] = b
      w[127 * 200 + 123 + k] = b
    })
  })
  const q = fp8Weight('model.layers.0.self_attn.q_proj', 256, 128, [128, 128], 12)
  const up64 = fp8Weight('model.layers.0.mlp.up_proj', 100, 130, [64, 64], 13)

  /** every nibble, both halves @param {Uint8Array} blocks @param {number} g a group index */
  const allNibbles = (blocks, g) => {
    for (let k = 0; k < 16; k++) blocks[g * 16 + k] = (k & 15) | ((15 - k) << 4)
  }
  const gateUp = mxfp4Weight('model.layers.0.mlp.experts.gate_up_proj', [4, 48], 6, 21, (blocks, scales) => {
    ;[0, 1, 127, 254, 255].forEach((s, k) => {
      scales[k] = s  // expert 0, row 0, groups 0..4
      allNibbles(blocks, k)
      const g = 3 * 48 * 6 + 47 * 6 + k % 6  // expert 3, last row
      scales[g] = s
      allNibbles(blocks, g)
    })
  })
  const downMx = mxfp4Weight('model.layers.0.mlp.experts.down_proj', [4, 24], 3, 22)

  /** nibbles 8 (-0) and 0 (+0) and E4M3 scale extremes @param {Uint8Array} packed @param {Uint8Array} scales */
  const plantNv = (packed, scales) => {
    packed[0] = 0x08
    packed[1] = 0x80
    packed[2] = 0xf7
    scales[1] = 0x01
    scales[2] = 0x7e
    scales[3] = 0x00
  }
  const nvCt = nvfp4Weight('model.layers.0.mlp.gate_proj', 48, 80, 'compressed-tensors', 31, plantNv)
  const nvCt2 = nvfp4Weight('model.layers.0.mlp.up_proj', 32, 64, 'compressed-tensors', 32)
  const nvMo = nvfp4Weight('model.layers.0.mlp.down_proj', 32, 48, 'modelopt', 33, plantNv)
  const nvMo2 = nvfp4Weight('model.layers.0.self_attn.o_proj', 16, 32, 'modelopt', 34)

  /** a v1 stored zero of 2^bits - 1 (decodes as 2^bits) in group 0, columns 0 and 5 @param {number} bits */
  const maxZero = (bits) => (/** @type {{ qzeros: Int32Array }} */ { qzeros }) => {
    const mask = 2 ** bits - 1
    if (bits === 4 || bits === 8 || bits === 2) {
      for (const o of [0, 5]) {
        const bit = o * bits
        qzeros[Math.floor(bit / 32)] |= mask << (bit % 32)
      }
    }
  }
  const gptq4 = gptqWeight('model.layers.0.self_attn.q_proj', { outF: 96, inF: 256, bits: 4, group: 64, actOrder: true, seed: 41, plant: maxZero(4) })
  const gptq4b = gptqWeight('model.layers.0.self_attn.k_proj', { outF: 64, inF: 256, bits: 4, group: 64, seed: 42 })
  const gptq8 = gptqWeight('model.layers.0.mlp.up_proj', { outF: 64, inF: 128, bits: 8, group: 32, seed: 43, plant: maxZero(8) })
  const gptq3 = gptqWeight('model.layers.0.mlp.gate_proj', { outF: 64, inF: 128, bits: 3, group: 32, actOrder: true, seed: 44 })
  const gptq2 = gptqWeight('model.layers.0.mlp.down_proj', { outF: 64, inF: 128, bits: 2, group: 64, seed: 45, plant: maxZero(2) })
  const gptqV2 = gptqWeight('model.layers.0.self_attn.v_proj', { outF: 64, inF: 128, bits: 4, group: 32, v2: true, seed: 46 })

  const awq128 = awqWeight('model.layers.0.mlp.up_proj', 64, 256, 128, 51)
  const awq128b = awqWeight('model.layers.0.self_attn.o_proj', 32, 128, 128, 52)
  const awqOdd = awqWeight('model.layers.0.mlp.down_proj', 40, 288, 96, 53)

  const nf4Plain = nf4Weight('model.layers.0.mlp.down_proj', [97, 71], false, 61)
  const nf4Nested = nf4Weight('model.layers.0.mlp.up_proj', [300, 70], true, 62)

  const ct4 = ctPackWeight('model.layers.0.self_attn.o_proj', { outF: 44, inF: 196, bits: 4, group: 28, symmetric: false, seed: 71 })
  const ct8 = ctPackWeight('model.layers.0.mlp.down_proj', { outF: 36, inF: 203, bits: 8, group: 203, symmetric: false, seed: 72 })
  const ct4s = ctPackWeight('model.layers.0.mlp.gate_proj', { outF: 40, inF: 96, bits: 4, group: 32, symmetric: true, seed: 73 })

  const fp8Channel = scaledWeight('model.layers.0.mlp.down_proj', { scheme: 'fp8', rows: 300, cols: 200, scaleShape: '[out, 1]', scaleDtype: 'BF16', seed: 91,
    inputs: { inputScale: actScale([1], F(0.0173)) },
    plant: ({ weight, scales }) => {
      // the E4M3 extremes (NaN both signs, subnormals, -0, +-448) in rows 0, 127, 260 and 299;
      // row 5's scale 0, row 6's the smallest BF16 subnormal, row 7's a subnormal
      E4M3_EXTREMES.forEach((b, k) => { weight[k] = b; weight[127 * 200 + 123 + k] = b; weight[260 * 200 + 5 + k] = b; weight[299 * 200 + 190 + k] = b })
      for (const r of [5, 6, 7]) E4M3_EXTREMES.forEach((b, k) => { weight[r * 200 + k] = b })
      scales[5] = 0x0000
      scales[6] = 0x0001
      scales[7] = 0x0043
    } })
  const fp8ChannelF32 = scaledWeight('model.layers.0.mlp.up_proj', { scheme: 'fp8', rows: 64, cols: 48, scaleShape: '[out, 1]', scaleDtype: 'F32', seed: 92,
    plant: ({ scales }) => { scales[3] = 2 ** -149; scales[4] = 2 ** -127 } })
  const fp8Tensor = scaledWeight('model.layers.0.mlp.down_proj', { scheme: 'fp8', rows: 96, cols: 80, scaleShape: '[]', scaleDtype: 'F32', seed: 93,
    inputs: { inputScale: actScale([], F(0.0021)) }, plant: ({ weight }) => E4M3_EXTREMES.forEach((b, k) => { weight[95 * 80 + 70 + k] = b }) })
  const fp8TensorSub = scaledWeight('model.layers.0.self_attn.k_proj', { scheme: 'fp8', rows: 32, cols: 64, scaleShape: '[]', scaleDtype: 'F32', seed: 94,
    inputs: { inputScale: actScale([], F(0.5)) }, plant: ({ weight, scales }) => { scales[0] = 2 ** -140; E4M3_EXTREMES.forEach((b, k) => { weight[k] = b }) } })
  const fp8TensorZero = scaledWeight('model.layers.0.self_attn.v_proj', { scheme: 'fp8', rows: 32, cols: 64, scaleShape: '[]', scaleDtype: 'F32', seed: 95,
    inputs: { inputScale: actScale([], F(0.5)) }, plant: ({ weight, scales }) => { scales[0] = 0; E4M3_EXTREMES.forEach((b, k) => { weight[k] = b }) } })
  const fp8One = scaledWeight('model.layers.0.self_attn.q_proj', { scheme: 'fp8', rows: 40, cols: 72, scaleShape: '[1]', scaleDtype: 'F32', seed: 96,
    inputs: { inputScale: actScale([1], F(0.03)) } })
  const fbgemm = scaledWeight('model.layers.0.mlp.gate_proj', { scheme: 'fp8', rows: 48, cols: 64, scaleShape: '[out, 1]', scaleDtype: 'F32', seed: 97,
    inputs: { inputScaleUb: actScale([1], 1200) } })
  const fp8Group = scaledWeight('model.layers.0.mlp.gate_proj', { scheme: 'fp8', rows: 40, cols: 160, scaleShape: '[out, G]', scaleDtype: 'BF16', group: 32, seed: 98,
    plant: ({ weight }) => E4M3_EXTREMES.forEach((b, k) => { weight[39 * 160 + 28 + k] = b }) })
  const int8Channel = scaledWeight('model.layers.0.mlp.down_proj', { scheme: 'int8', rows: 100, cols: 72, scaleShape: '[out, 1]', scaleDtype: 'BF16', seed: 101,
    plant: ({ weight, scales }) => { weight[0] = -128; weight[1] = 127; weight[99 * 72 + 71] = -128; scales[2] = 0x0001; scales[3] = 0 } })
  const int8Group = scaledWeight('model.layers.0.mlp.up_proj', { scheme: 'int8', rows: 36, cols: 96, scaleShape: '[out, G]', scaleDtype: 'BF16', group: 32, symmetric: false, seed: 102,
    plant: ({ weight, zeroPoints }) => {
      const zp = /** @type {Int8Array} */ (zeroPoints)
      weight[0] = -128; weight[1] = 127; weight[32] = -128; weight[33] = 127; weight[35 * 96 + 95] = -128
      zp[0] = 127; zp[1] = -128; zp[3 * 3 + 2] = -128
    } })
  const int8Tensor = scaledWeight('model.layers.0.self_attn.k_proj', { scheme: 'int8', rows: 20, cols: 40, scaleShape: '[1]', scaleDtype: 'F32', symmetric: false, seed: 103,
    inputs: { inputScale: actScale([1], F(0.01)), inputZeroPoint: { dtype: 'I8', shape: [1], data: new Int8Array([3]) } },
    plant: ({ weight }) => { weight[0] = -128; weight[1] = 127 } })

  const gptqConfig = (/** @type {number} */ bits, /** @type {number} */ group, /** @type {boolean} */ descAct, format = 'gptq') =>
    ({ quant_method: 'gptq', bits, group_size: group, desc_act: descAct, sym: true, checkpoint_format: format })
  const v2Config = gptqConfig(4, 32, false, 'gptq_v2')
  return {
    fp8: fixture([down, q], {
      'model.embed_tokens.weight': plainBf16([64, 200], 1),
      'model.layers.0.input_layernorm.weight': plainBf16([200], 2),
      'model.norm.weight': plainBf16([200], 3),
      'lm_head.weight': plainBf16([64, 200], 4),
    }, { quant_method: 'fp8', fmt: 'e4m3', activation_scheme: 'dynamic', weight_block_size: [128, 128] }),
    'fp8-b64': fixture([up64], { 'model.norm.weight': plainBf16([130], 5) },
      { quant_method: 'fp8', fmt: 'e4m3', activation_scheme: 'dynamic', weight_block_size: [64, 64] }),
    mxfp4: fixture([gateUp, downMx], {
      'model.layers.0.mlp.experts.gate_up_proj_bias': plainBf16([4, 48], 6),
      'model.layers.0.mlp.router.weight': plainBf16([4, 96], 7),
      'model.embed_tokens.weight': plainBf16([32, 96], 8),
    }, { quant_method: 'mxfp4', modules_to_not_convert: ['model.layers.*.self_attn', 'model.layers.*.mlp.router', 'model.embed_tokens', 'lm_head'] }),
    'nvfp4-ct': fixture([nvCt, nvCt2], { 'model.layers.0.post_attention_layernorm.weight': plainBf16([80], 9) }, {
      quant_method: 'compressed-tensors', format: 'nvfp4-pack-quantized',
      config_groups: { group_0: { targets: ['Linear'], weights: { num_bits: 4, type: 'float', strategy: 'tensor_group', group_size: 16, symmetric: true } } },
    }),
    'nvfp4-modelopt': fixture([nvMo, nvMo2], { 'model.layers.0.input_layernorm.weight': plainBf16([48], 10) }),
    gptq4: fixture([gptq4, gptq4b], { 'model.layers.0.self_attn.q_proj.bias': { dtype: 'F16', shape: [96], data: new Uint16Array(96).fill(0x3c00) } },
      gptqConfig(4, 64, true)),
    gptq8: fixture([gptq8], {}, gptqConfig(8, 32, false)),
    gptq3: fixture([gptq3], {}, gptqConfig(3, 32, true)),
    gptq2: fixture([gptq2], {}, gptqConfig(2, 64, false)),
    'gptq-v2': { ...fixture([gptqV2], {}, v2Config), asV1: () => gptqV2.decode(false) },
    awq: fixture([awq128, awq128b], { 'model.norm.weight': plainBf16([256], 11) },
      { quant_method: 'awq', bits: 4, group_size: 128, version: 'gemm', zero_point: true }),
    'awq-odd': fixture([awqOdd], {}, { quant_method: 'awq', bits: 4, group_size: 96, version: 'gemm', zero_point: true }),
    'bnb-nf4': fixture([nf4Plain], {
      'model.embed_tokens.weight': plainBf16([32, 71], 12), 'lm_head.weight': plainBf16([32, 71], 13),
    }, { quant_method: 'bitsandbytes', load_in_4bit: true, bnb_4bit_quant_type: 'nf4', bnb_4bit_use_double_quant: false, bnb_4bit_compute_dtype: 'bfloat16' }),
    'bnb-nf4-nested': fixture([nf4Nested], { 'model.norm.weight': plainBf16([70], 14) },
      { quant_method: 'bitsandbytes', load_in_4bit: true, bnb_4bit_quant_type: 'nf4', bnb_4bit_use_double_quant: true, bnb_4bit_compute_dtype: 'bfloat16' }),
    'ct-pack': fixture([ct4, ct8, ct4s], { 'model.layers.0.input_layernorm.weight': plainBf16([196], 15) }),
    'fp8-channel': fixture([fp8Channel, fp8ChannelF32], {
      'model.layers.0.input_layernorm.weight': plainBf16([200], 16), 'lm_head.weight': plainBf16([32, 200], 17),
      'model.layers.0.self_attn.k_scale': actScale([], F(0.02)),
    }, ctConfig('channel', 'float')),
    'fp8-tensor': fixture([fp8Tensor, fp8TensorSub, fp8TensorZero, fp8One], { 'model.norm.weight': plainBf16([80], 18) },
      { quant_method: 'modelopt', quant_algo: 'FP8', kv_cache_quant_algo: null }),
    'fp8-fbgemm': fixture([fbgemm], { 'model.layers.0.mlp.gate_proj.bias': plainBf16([48], 19) },
      { quant_method: 'fbgemm_fp8', activation_scale_ub: 1200.0, modules_to_not_convert: ['lm_head'] }),
    'fp8-group': fixture([fp8Group], { 'model.norm.weight': plainBf16([160], 20) }, ctConfig('group', 'float', { group_size: 32 })),
    'int8-channel': fixture([int8Channel], { 'model.norm.weight': plainBf16([72], 21) }, ctConfig('channel', 'int')),
    'int8-group': fixture([int8Group], { 'model.norm.weight': plainBf16([96], 22) }, ctConfig('group', 'int', { group_size: 32, symmetric: false })),
    'int8-tensor': fixture([int8Tensor], { 'model.norm.weight': plainBf16([40], 23) }, ctConfig('tensor', 'int', { symmetric: false })),
  }
}

/**
 * Files for the error codes: each holds one problem (and a plain tensor). `code` is what
 * dequantize(weight) must reject with (and quantized() throw, when `listed` is false).
 * @returns {Record<string, { tensors: Record<string, Stored>, weight: string, code: string,
 *   part?: string, inQuantized: boolean }>}
 */
export function errorFixtures() {
  const norm = { 'model.norm.weight': plainBf16([64], 99) }
  const gptq = (/** @type {any} */ o) => gptqWeight('model.layers.0.self_attn.q_proj', { outF: 64, inF: 128, bits: 4, group: 32, seed: 81, ...o })
  const missing = gptq({ drop: ['qzeros'] })
  const nvMissing = nvfp4Weight('model.layers.0.mlp.gate_proj', 16, 32, 'compressed-tensors', 82)
  delete nvMissing.tensors['model.layers.0.mlp.gate_proj.weight_global_scale']
  const badScale = fp8Weight('model.layers.0.mlp.down_proj', 300, 200, [128, 128], 83)
  badScale.tensors['model.layers.0.mlp.down_proj.weight_scale_inv'] = { dtype: 'F32', shape: [2, 2], data: new Float32Array(4).fill(1e-4) }
  const badScaleDtype = fp8Weight('model.layers.0.mlp.down_proj', 300, 200, [128, 128], 84)
  badScaleDtype.tensors['model.layers.0.mlp.down_proj.weight_scale_inv'] = { dtype: 'I32', shape: [3, 2], data: new Int32Array(6).fill(1) }
  const gidx = gptq({ plant: (/** @type {{ gIdx: Int32Array }} */ { gIdx }) => { gIdx[77] = 4 } })
  const badJson = nf4Weight('model.layers.0.mlp.up_proj', [300, 70], true, 85, { json: '{"quant_type": "nf4", "blocksize": 64, "dtype": "bfloat16", "shape": [300, 70' })
  const badShape = nf4Weight('model.layers.0.mlp.up_proj', [300, 70], true, 86, {
    json: '{"quant_type": "nf4", "blocksize": 64, "dtype": "bfloat16", "shape": [300, 71], "nested_blocksize": 256, "nested_dtype": "float32", "nested_offset": 0.01}',
  })
  // GPTQ with 16 bits per value: qweight rows = in * 16 / 32
  const wide = gptq({})
  wide.tensors['model.layers.0.self_attn.q_proj.qweight'] = { dtype: 'I32', shape: [64, 64], data: new Int32Array(64 * 64) }
  wide.tensors['model.layers.0.self_attn.q_proj.qzeros'] = { dtype: 'I32', shape: [4, 32], data: new Int32Array(4 * 32) }
  const fp8 = (/** @type {any} */ o) => scaledWeight('model.layers.0.mlp.down_proj', { scheme: 'fp8', rows: 30, cols: 64, scaleShape: '[out, 1]', scaleDtype: 'F32', seed: 87, ...o })
  const fp8Scale = fp8({})
  fp8Scale.tensors['model.layers.0.mlp.down_proj.weight_scale'] = { dtype: 'F32', shape: [7], data: new Float32Array(7).fill(1e-3) }
  // compressed-tensors' asymmetric FP8 (a nonzero zero point): listed, not decoded
  const fp8Zp = fp8({})
  fp8Zp.tensors['model.layers.0.mlp.down_proj.weight_zero_point'] = { dtype: 'F8_E4M3', shape: [30, 1], data: new Uint8Array(30).fill(0x38) }
  const int8Zp = scaledWeight('model.layers.0.mlp.up_proj', { scheme: 'int8', rows: 30, cols: 64, scaleShape: '[out, 1]', scaleDtype: 'F32', symmetric: false, seed: 88 })
  int8Zp.tensors['model.layers.0.mlp.up_proj.weight_zero_point'] = { dtype: 'I32', shape: [30, 1], data: new Int32Array(30) }
  const with_ = (/** @type {{ tensors: Record<string, Stored> }} */ q) => ({ ...q.tensors, ...norm })
  return {
    'err-missing-qzeros': { tensors: with_(missing), weight: 'model.layers.0.self_attn.q_proj.weight', code: 'QuantPartMissing', part: 'model.layers.0.self_attn.q_proj.qzeros', inQuantized: false },
    'err-missing-global-scale': { tensors: with_(nvMissing), weight: 'model.layers.0.mlp.gate_proj.weight', code: 'QuantPartMissing', part: 'model.layers.0.mlp.gate_proj.weight_global_scale', inQuantized: false },
    'err-scale-shape': { tensors: with_(badScale), weight: 'model.layers.0.mlp.down_proj.weight', code: 'QuantPartInvalid', part: 'model.layers.0.mlp.down_proj.weight_scale_inv', inQuantized: false },
    'err-scale-dtype': { tensors: with_(badScaleDtype), weight: 'model.layers.0.mlp.down_proj.weight', code: 'QuantPartInvalid', part: 'model.layers.0.mlp.down_proj.weight_scale_inv', inQuantized: false },
    'err-g-idx': { tensors: with_(gidx), weight: 'model.layers.0.self_attn.q_proj.weight', code: 'QuantIndexOutOfRange', part: 'model.layers.0.self_attn.q_proj.g_idx', inQuantized: true },
    'err-quant-state-json': { tensors: with_(badJson), weight: 'model.layers.0.mlp.up_proj.weight', code: 'QuantStateInvalid', part: 'model.layers.0.mlp.up_proj.weight.quant_state.bitsandbytes__nf4', inQuantized: false },
    'err-quant-state-shape': { tensors: with_(badShape), weight: 'model.layers.0.mlp.up_proj.weight', code: 'QuantStateInvalid', part: 'model.layers.0.mlp.up_proj.weight.quant_state.bitsandbytes__nf4', inQuantized: false },
    'err-fp8-scale-shape': { tensors: with_(fp8Scale), weight: 'model.layers.0.mlp.down_proj.weight', code: 'QuantPartInvalid', part: 'model.layers.0.mlp.down_proj.weight_scale', inQuantized: false },
    'err-fp8-zero-point': { tensors: with_(fp8Zp), weight: 'model.layers.0.mlp.down_proj.weight', code: 'UnsupportedQuantization', part: 'model.layers.0.mlp.down_proj.weight_zero_point', inQuantized: true },
    'err-int8-zero-point-dtype': { tensors: with_(int8Zp), weight: 'model.layers.0.mlp.up_proj.weight', code: 'QuantPartInvalid', part: 'model.layers.0.mlp.up_proj.weight_zero_point', inQuantized: false },
    'err-gptq-16-bit': { tensors: with_(wide), weight: 'model.layers.0.self_attn.q_proj.weight', code: 'UnsupportedQuantization', inQuantized: false },
  }
}

/**
 * A sharded set whose quantized weights have their parts in different shards: shard 1 holds the
 * packed values, shard 2 the scales, zeros, maps, quant states and shapes.
 */
export function shardedFixture() {
  const all = fixtures()
  /** @type {[keyof typeof all, number][]} which weight of which fixture */
  const chosen = [['fp8', 0], ['mxfp4', 1], ['gptq4', 0], ['bnb-nf4-nested', 0], ['ct-pack', 0], ['nvfp4-ct', 0], ['fp8-tensor', 2], ['int8-tensor', 0]]
  const first = new Set(['weight', 'blocks', 'qweight', 'gIdx', 'packed'])
  /** @type {[Record<string, Stored>, Record<string, Stored>]} */
  const shards = [{}, {}]
  /** @type {Weight[]} */
  const picked = []
  for (const [file, index] of chosen) {
    const w = all[file].weights[index]
    picked.push(w)
    for (const [role, stored] of Object.entries(w.parts)) shards[first.has(role) ? 0 : 1][stored] = all[file].tensors[stored]
  }
  shards[1]['model.norm.weight'] = all.fp8.tensors['model.norm.weight']
  shards[0]['model.embed_tokens.weight'] = all.fp8.tensors['model.embed_tokens.weight']
  const names = ['model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors']
  /** @type {Record<string, string>} */
  const weightMap = {}
  shards.forEach((s, i) => { for (const n of Object.keys(s)) weightMap[n] = names[i] })
  return { shards: { [names[0]]: shards[0], [names[1]]: shards[1] }, weightMap, weights: picked, plain: ['model.norm.weight', 'model.embed_tokens.weight'] }
}

/** @param {Record<string, Stored>} tensors */
export const toBytes = (tensors) => serialize(tensors, { metadata: { format: 'pt' } })

/** Writes every fixture (and the sharded set with its index) into `dir`. @param {string} dir */
export async function writeFixtures(dir) {
  await mkdir(dir, { recursive: true })
  const written = []
  for (const [name, f] of Object.entries({ ...fixtures(), ...errorFixtures() })) {
    await writeFile(join(dir, `${name}.safetensors`), await toBytes(f.tensors))
    if ('config' in f && f.config) await writeFile(join(dir, `${name}.config.json`), JSON.stringify({ quantization_config: f.config }, null, 2))
    written.push(`${name}.safetensors`)
  }
  const sharded = shardedFixture()
  const shardDir = join(dir, 'sharded')
  await mkdir(shardDir, { recursive: true })
  let total = 0
  for (const [path, tensors] of Object.entries(sharded.shards)) {
    const bytes = await toBytes(tensors)
    total += bytes.length
    await writeFile(join(shardDir, path), bytes)
  }
  await writeFile(join(shardDir, 'model.safetensors.index.json'), JSON.stringify({ metadata: { total_size: total }, weight_map: sharded.weightMap }, null, 2))
  written.push('sharded/')
  return written
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const dir = process.argv[2]
  if (!dir) {
    console.error('usage: node tests/js/quant-fixtures.js <out dir>')
    process.exit(2)
  }
  const written = await writeFixtures(dir)
  console.log(`wrote ${written.length} fixtures into ${dir}`)
}

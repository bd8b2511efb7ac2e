#!/usr/bin/env node
/**
 * Dequantization throughput per scheme (the kernels of js/quant/kernels.js, src/quant/): each
 * decodes a weight of --elements float32 outputs (32 MiB by default) from random stored parts in
 * the wasm heap, against (a) the fastest plain-JS loop we could write for the same scheme (lookup
 * tables over typed arrays, scales converted once outside the loop, writing a Float32Array) and
 * (b) a wasm memcpy of the float32 output (the core's copyBytes), timed interleaved in one run.
 * The JS loop's output is checked bit for bit against the kernel's first. Targets (issue 15):
 * >= 4x the JS loop and >= 0.5x memcpy's bandwidth for fp8-block, mxfp4 and nvfp4; >= 0.5x memcpy's for
 * fp8 and int8 (issue 31: their JS loops, a lookup or a subtraction and a multiply, are simple).
 *   node bench/quant.js [--elements 8388608] [--rounds 7] [--variant simd|nosimd] [--schemes fp8-block,mxfp4]
 */
import { parseArgs } from 'node:util'
import { loadCoreVariant } from '../js/wasm.js'
import { loadKernels } from '../js/quant/kernels.js'
import { emitFigures, figure, fmtGBs, fmtMs, fmtX, machine, timeInterleaved } from './common.js'

const { values } = parseArgs({ options: {
  elements: { type: 'string', default: String(1 << 23) }, rounds: { type: 'string', default: '7' },
  variant: { type: 'string', default: 'simd' }, schemes: { type: 'string' },
} })
const ROUNDS = Number(values.rounds)
const VARIANT = /** @type {'simd' | 'nosimd'} */ (values.variant)
// A 2-D weight [OUT, IN] of about --elements values, IN a multiple of 128.
const IN = 4096
const OUT = Math.max(128, Math.round(Number(values.elements) / IN / 128) * 128)
const N = OUT * IN

let seed = 0x2545f491
const next = () => { seed ^= seed << 13; seed ^= seed >>> 17; seed ^= seed << 5; return seed >>> 0 }

/** E4M3FN as a 256-entry table (the JS baseline's). */
const E4M3 = new Float32Array(256)
for (let b = 0; b < 256; b++) {
  const e = (b >> 3) & 15, m = b & 7
  const v = (b & 0x7f) === 0x7f ? NaN : e === 0 ? m * 2 ** -9 : (8 + m) * 2 ** (e - 10)
  E4M3[b] = b & 0x80 ? -v : v
}
const FP4 = new Float64Array([0, 0.5, 1, 1.5, 2, 3, 4, 6, -0, -0.5, -1, -1.5, -2, -3, -4, -6])
// A byte's two FP4 values, low nibble first.
const FP4_LO = Float64Array.from({ length: 256 }, (_, b) => FP4[b & 15])
const FP4_HI = Float64Array.from({ length: 256 }, (_, b) => FP4[b >> 4])

/** @param {number} h */
function f16(h) {
  const e = (h >> 10) & 31, m = h & 0x3ff
  const v = e === 0 ? m * 2 ** -24 : e === 31 ? (m ? NaN : Infinity) : (1024 + m) * 2 ** (e - 25)
  return h & 0x8000 ? -v : v
}

async function main() {
  const core = await loadCoreVariant(VARIANT)
  const k = await loadKernels(core, { variant: VARIANT })
  console.log(`dequantization of a [${OUT}, ${IN}] weight (${(N * 4 / 2 ** 20).toFixed(0)} MiB of float32) per scheme: ` +
    `the ${VARIANT} kernels vs a plain JS loop (lookup tables) and vs a wasm memcpy of the output; ${machine()}`)
  /** @type {number[]} */
  const allocated = []
  const alloc = (/** @type {number} */ n) => {
    const p = core._malloc(n) >>> 0
    if (!p) throw new Error(`cannot allocate ${n} bytes`)
    allocated.push(p)
    return p
  }
  const u8 = (/** @type {number} */ p, /** @type {number} */ n) => new Uint8Array(core.HEAPU8.buffer, p, n)
  const u16 = (/** @type {number} */ p, /** @type {number} */ n) => new Uint16Array(core.HEAPU8.buffer, p, n)
  const u32 = (/** @type {number} */ p, /** @type {number} */ n) => new Uint32Array(core.HEAPU8.buffer, p, n)
  const f32 = (/** @type {number} */ p, /** @type {number} */ n) => new Float32Array(core.HEAPU8.buffer, p, n)
  const randomBytes = (/** @type {number} */ n, /** @type {(b: number) => number} */ map = (b) => b) => {
    const p = alloc(n)
    const v = u8(p, n)
    for (let i = 0; i < n; i++) v[i] = map(next() & 255)
    return p
  }
  const randomWords = (/** @type {number} */ n) => {
    const p = alloc(n * 4)
    const v = u32(p, n)
    for (let i = 0; i < n; i++) v[i] = next()
    return p
  }
  const f16Scales = (/** @type {number} */ n) => {
    const p = alloc(n * 2)
    const v = u16(p, n)
    for (let i = 0; i < n; i++) v[i] = 0x2000 | (next() & 0x13ff)
    return p
  }
  // Grow the heap once, up front, to hold everything below: the typed views the JS loops keep
  // would be detached by a later growth.
  core._free(alloc(16 * N))
  allocated.pop()
  const heapLength = core.HEAPU8.buffer.byteLength
  const out = alloc(N * 4)
  const copySource = alloc(N * 4)
  const jsOut = new Float32Array(N)

  /**
   * @typedef {{ name: string, target: boolean, copyTarget?: boolean, wasm: () => void, js: () => void }} Scheme
   *   target: both targets (>= 4x the JS loop, >= 0.5x memcpy); copyTarget: memcpy's only
   * @type {Scheme[]}
   */
  const schemes = []

  { // fp8-block: [OUT, IN] E4M3 with 128x128 F32 scales.
    const B = 128, scaleCols = IN / B
    const w = randomBytes(N)
    const s = alloc((OUT / B) * scaleCols * 4)
    const sv = f32(s, (OUT / B) * scaleCols)
    for (let i = 0; i < sv.length; i++) sv[i] = (next() % 1000 + 1) / 4096
    const wv = u8(w, N)
    schemes.push({
      name: 'fp8-block', target: true,
      wasm: () => k.fp8Block({ w, scales: s, scaleDtype: 'F32', out, rows: OUT, cols: IN, firstRow: 0, blockRows: B,
        blockCols: B, scaleCols }),
      js: () => {
        for (let r = 0; r < OUT; r++) {
          const base = r * IN, srow = (r >> 7) * scaleCols
          for (let cb = 0; cb < scaleCols; cb++) {
            const scale = sv[srow + cb]
            for (let c = base + cb * B, end = c + B; c < end; c++) jsOut[c] = E4M3[wv[c]] * scale
          }
        }
      },
    })
  }
  { // fp8 (compressed-tensors float-quantized, fbgemm_fp8), per channel: [OUT, IN] E4M3, a BF16 scale per row.
    const w = randomBytes(N)
    const s = alloc(OUT * 2)
    const sv = u16(s, OUT)
    for (let i = 0; i < OUT; i++) sv[i] = 0x3a00 | (next() & 0xff)
    const wv = u8(w, N)
    const scale = new Float32Array(new Uint32Array(Array.from(sv, (h) => h << 16)).buffer)
    schemes.push({
      name: 'fp8', target: false, copyTarget: true,
      wasm: () => k.fp8Block({ w, scales: s, scaleDtype: 'BF16', out, rows: OUT, cols: IN, firstRow: 0, blockRows: 1,
        blockCols: IN, scaleCols: 1 }),
      js: () => {
        for (let r = 0; r < OUT; r++) {
          const sc = scale[r]
          for (let c = r * IN, end = c + IN; c < end; c++) jsOut[c] = E4M3[wv[c]] * sc
        }
      },
    })
  }
  { // int8 (compressed-tensors int-quantized): [OUT, IN] I8, a BF16 scale and an I8 zero point per group of 128.
    const group = 128, groups = IN / group
    const w = randomBytes(N)
    const s = alloc(OUT * groups * 2)
    const sv = u16(s, OUT * groups)
    for (let i = 0; i < sv.length; i++) sv[i] = 0x3a00 | (next() & 0xff)
    const zeroPoints = randomBytes(OUT * groups)
    const wv = new Int8Array(core.HEAPU8.buffer, w, N), zv = new Int8Array(core.HEAPU8.buffer, zeroPoints, OUT * groups)
    const scale = new Float32Array(new Uint32Array(Array.from(sv, (h) => h << 16)).buffer)
    schemes.push({
      name: 'int8', target: false, copyTarget: true,
      wasm: () => k.int8Block({ w, scales: s, scaleDtype: 'BF16', zeroPoints, out, rows: OUT, cols: IN, firstRow: 0, blockRows: 1,
        blockCols: group, scaleCols: groups }),
      js: () => {
        for (let r = 0; r < OUT; r++) {
          for (let g = 0; g < groups; g++) {
            const sc = scale[r * groups + g], zp = zv[r * groups + g]
            for (let c = r * IN + g * group, end = c + group; c < end; c++) jsOut[c] = (wv[c] - zp) * sc
          }
        }
      },
    })
  }
  { // mxfp4: N/32 groups of 16 bytes, U8 exponent scales (realistic ones, 115-135).
    const groups = N / 32
    const blocks = randomBytes(groups * 16)
    const s = randomBytes(groups, (b) => 115 + (b % 21))
    const bv = u8(blocks, groups * 16), sv = u8(s, groups)
    schemes.push({
      name: 'mxfp4', target: true,
      wasm: () => k.mxfp4({ blocks, scales: s, out, groups }),
      js: () => {
        for (let g = 0; g < groups; g++) {
          const p = 2 ** (sv[g] - 127)
          for (let j = 0, b = g * 16, o = g * 32; j < 16; j++, b++, o += 2) {
            const byte = bv[b]
            jsOut[o] = FP4_LO[byte] * p
            jsOut[o + 1] = FP4_HI[byte] * p
          }
        }
      },
    })
  }
  { // nvfp4 (compressed-tensors: divide): [OUT, IN/2] packed, E4M3 scales per 16.
    const G = 16, scaleCols = IN / G
    const packed = randomBytes(N / 2)
    const s = randomBytes(OUT * scaleCols, (b) => 0x20 + (b % 0x38))
    const globalScale = Math.fround(448 * 6 / 2.5)
    const pv = u8(packed, N / 2), sv = u8(s, OUT * scaleCols)
    schemes.push({
      name: 'nvfp4', target: true,
      wasm: () => k.nvfp4({ packed, scales: s, out, rows: OUT, cols: IN, group: G, scaleCols, globalScale, divide: true }),
      js: () => {
        for (let r = 0; r < OUT; r++) {
          for (let g = 0; g < scaleCols; g++) {
            const eff = Math.fround(E4M3[sv[r * scaleCols + g]] / globalScale)
            for (let j = 0, b = (r * IN + g * G) >> 1, o = r * IN + g * G; j < G / 2; j++, b++, o += 2) {
              const byte = pv[b]
              jsOut[o] = FP4_LO[byte] * eff
              jsOut[o + 1] = FP4_HI[byte] * eff
            }
          }
        }
      },
    })
  }
  { // gptq v1, 4 bits, group 128, act-order g_idx: stored [IN/8, OUT], F16 scales.
    const group = 128, groups = IN / group, zw = OUT / 8
    const qweight = randomWords((IN / 8) * OUT)
    const qzeros = randomWords(groups * zw)
    const s = f16Scales(groups * OUT)
    const gIdx = alloc(IN * 4)
    const gv = new Int32Array(core.HEAPU8.buffer, gIdx, IN)
    for (let i = 0; i < IN; i++) gv[i] = Math.floor(i / group)
    for (let i = IN - 1; i > 0; i--) { const j = next() % (i + 1); [gv[i], gv[j]] = [gv[j], gv[i]] }
    const qv = u32(qweight, (IN / 8) * OUT), zv = u32(qzeros, groups * zw)
    const scale = Float32Array.from(u16(s, groups * OUT), f16)
    const g = Int32Array.from(gv)
    schemes.push({
      name: 'gptq', target: false,
      wasm: () => k.gptq({ qweight, qzeros, scales: s, scaleDtype: 'F16', gIdx, out, inFeatures: IN, outFeatures: OUT,
        firstIn: 0, inCount: IN, firstOut: 0, outCount: OUT, bits: 4, zeroOffset: 1 }),
      js: () => {
        for (let row = 0; row < IN / 8; row++) {
          for (let o = 0; o < OUT; o++) {
            const word = qv[row * OUT + o], zshift = (o & 7) * 4
            for (let j = 0, i = row * 8, at = o * IN + i; j < 8; j++, i++, at++) {
              const gi = g[i]
              const z = (zv[gi * zw + (o >> 3)] >>> zshift) & 15
              jsOut[at] = scale[gi * OUT + o] * (((word >>> (4 * j)) & 15) - (z + 1))
            }
          }
        }
      },
    })
  }
  { // awq GEMM, group 128: stored [IN, OUT/8], F16 scales.
    const group = 128, groups = IN / group, words = OUT / 8
    const qweight = randomWords(IN * words)
    const qzeros = randomWords(groups * words)
    const s = f16Scales(groups * OUT)
    const qv = u32(qweight, IN * words), zv = u32(qzeros, groups * words)
    const scale = Float32Array.from(u16(s, groups * OUT), f16)
    const SHIFT = [0, 16, 4, 20, 8, 24, 12, 28]
    schemes.push({
      name: 'awq', target: false,
      wasm: () => k.awq({ qweight, qzeros, scales: s, scaleDtype: 'F16', out, inFeatures: IN, outFeatures: OUT,
        firstIn: 0, inCount: IN, firstOut: 0, outCount: OUT, group }),
      js: () => {
        for (let i = 0; i < IN; i++) {
          const gi = (i / group) | 0
          for (let c = 0; c < words; c++) {
            const word = qv[i * words + c], zeros = zv[gi * words + c]
            for (let j = 0; j < 8; j++) {
              const o = c * 8 + j, sh = SHIFT[j]
              jsOut[o * IN + i] = (((word >>> sh) & 15) - ((zeros >>> sh) & 15)) * scale[gi * OUT + o]
            }
          }
        }
      },
    })
  }
  { // bnb-nf4, blocksize 64, F32 absmax (not nested).
    const blocksize = 64
    const packed = randomBytes(N / 2)
    const absmax = alloc((N / blocksize) * 4)
    const av = f32(absmax, N / blocksize)
    for (let i = 0; i < av.length; i++) av[i] = (next() % 1000) / 997
    const quantMap = alloc(64)
    const qm = f32(quantMap, 16)
    for (let i = 0; i < 16; i++) qm[i] = Math.fround(-1 + i / 7.5)
    const pv = u8(packed, N / 2)
    const HI = Float64Array.from({ length: 256 }, (_, b) => qm[b >> 4])
    const LO = Float64Array.from({ length: 256 }, (_, b) => qm[b & 15])
    schemes.push({
      name: 'bnb-nf4', target: false,
      wasm: () => k.nf4({ packed, absmax, quantMap, out, first: 0, count: N, blocksize }),
      js: () => {
        for (let blk = 0, b = 0, o = 0; blk < N / blocksize; blk++) {
          const a = av[blk]
          for (let j = 0; j < blocksize / 2; j++, b++, o += 2) {
            const byte = pv[b]
            jsOut[o] = HI[byte] * a
            jsOut[o + 1] = LO[byte] * a
          }
        }
      },
    })
  }
  { // ct-pack, 4 bits, group 128, asymmetric (zero points), BF16 scales.
    const bits = 4, group = 128, groups = IN / group, rowWords = IN / 8
    const packed = randomWords(OUT * rowWords)
    const s = alloc(OUT * groups * 2)
    const sv = u16(s, OUT * groups)
    for (let i = 0; i < sv.length; i++) sv[i] = 0x3c00 | (next() & 0x7f)
    const zeroPoints = randomWords((OUT / 8) * groups)
    const pv = u32(packed, OUT * rowWords), zv = u32(zeroPoints, (OUT / 8) * groups)
    const scale = new Float32Array(new Uint32Array(Array.from(sv, (h) => h << 16)).buffer)
    schemes.push({
      name: 'ct-pack', target: false,
      wasm: () => k.ctPack({ packed, scales: s, scaleDtype: 'BF16', zeroPoints, out, rows: OUT, firstRow: 0, inFeatures: IN,
        bits, group, groups, outFeatures: OUT }),
      js: () => {
        for (let r = 0; r < OUT; r++) {
          for (let g = 0; g < groups; g++) {
            const sc = scale[r * groups + g], zp = (zv[(r >> 3) * groups + g] >>> ((r & 7) * 4)) & 15
            for (let i = g * group, end = i + group, at = r * IN + i; i < end; i += 8, at += 8) {
              const word = pv[r * rowWords + (i >> 3)]
              for (let j = 0; j < 8; j++) jsOut[at + j] = (((word >>> (4 * j)) & 15) - zp) * sc
            }
          }
        }
      },
    })
  }

  if (core.HEAPU8.buffer.byteLength !== heapLength) throw new Error('the heap grew during the setup: raise the first allocation')
  const memcpy = () => core.copyBytes(out, copySource, N * 4)
  const only = values.schemes ? new Set(values.schemes.split(',')) : null
  for (const scheme of schemes) {
    if (only && !only.has(scheme.name)) continue
    scheme.wasm()
    scheme.js()
    const got = new Uint32Array(core.HEAPU8.buffer, out, N)
    const want = new Uint32Array(jsOut.buffer)
    for (let i = 0; i < N; i++) {
      if (got[i] !== want[i] && !(Number.isNaN(f32(out + i * 4, 1)[0]) && Number.isNaN(jsOut[i]))) {
        throw new Error(`${scheme.name}: the kernel and the JS loop disagree at ${i}: ${got[i].toString(16)} vs ${want[i].toString(16)}`)
      }
    }
    const t = timeInterleaved({ wasm: scheme.wasm, js: scheme.js, memcpy }, { rounds: ROUNDS, minSampleMs: 50, warmup: 1 })
    const vsJs = t.js / t.wasm
    const vsCopy = t.memcpy / t.wasm
    const label = `${scheme.name}, ${(N / 2 ** 20).toFixed(0)}M outputs (${fmtGBs(N * 4, t.wasm)} of float32)`
    figure({ area: 'quant', figure: `${label} vs JS`, ours: fmtMs(t.wasm), baselineName: 'JS loop', baseline: fmtMs(t.js),
      ratio: vsJs, ratioText: `${fmtX(vsJs)} faster`, target: scheme.target ? '>= 4x' : '', met: scheme.target ? vsJs >= 4 : null })
    figure({ area: 'quant', figure: `${label} vs memcpy`, ours: fmtMs(t.wasm), baselineName: 'wasm memcpy of the output',
      baseline: `${fmtMs(t.memcpy)} (${fmtGBs(N * 4, t.memcpy)})`, ratio: vsCopy, ratioText: `${fmtX(vsCopy)} memcpy's bandwidth`,
      target: scheme.target || scheme.copyTarget ? '>= 0.5x' : '', met: scheme.target || scheme.copyTarget ? vsCopy >= 0.5 : null })
  }
  for (const p of allocated) core._free(p)
  emitFigures()
}

if (import.meta.url === `file://${process.argv[1]}`) await main()

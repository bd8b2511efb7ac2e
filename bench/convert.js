#!/usr/bin/env node
/**
 * Conversions to float32 of 16M elements (BF16, F16, F8_E4M3, F8_E5M2, F4) in the wasm core
 * (heap to heap, as Tensor.toFloat32 runs them before its copy out), against
 *  - the fastest plain-JS loop we could write: a shift for BF16, lookup tables for the rest (a
 *    65,536-entry table for F16, 256 entries for the F8 types, two for F4's nibbles), over
 *    typed arrays in JS memory;
 *  - a wasm memcpy of the output's size (64 MiB), the bandwidth ceiling of any conversion.
 * Both builds are measured: SIMD (what SIMD engines load) and no-SIMD.
 *   node bench/convert.js [--elements 16777216] [--rounds 7]
 */
import { parseArgs } from 'node:util'
import { dtypeIndex } from '../js/dtypes.js'
import { loadCoreVariant } from '../js/wasm.js'
import { emitFigures, figure, fmtGBs, fmtMs, fmtX, machine, timeInterleaved } from './common.js'

const { values } = parseArgs({ options: { elements: { type: 'string', default: String(1 << 24) }, rounds: { type: 'string', default: '7' } } })
const N = Number(values.elements)
const ROUNDS = Number(values.rounds)
const millions = `${Math.round(N / 2 ** 20)}M`
const DTYPES = /** @type {const} */ (['BF16', 'F16', 'F8_E4M3', 'F8_E5M2', 'F4'])

/** Deterministic random bytes (xorshift32). @param {number} n */
export function randomBytes(n, seed = 0x9e3779b9) {
  const out = new Uint8Array(n)
  const words = new Uint32Array(out.buffer, 0, n >> 2)
  let x = seed >>> 0
  for (let i = 0; i < words.length; i++) {
    x ^= x << 13; x ^= x >>> 17; x ^= x << 5
    words[i] = x >>> 0
  }
  for (let i = words.length * 4; i < n; i++) out[i] = i * 31
  return out
}

/** @param {string} dtype */
const srcBytes = (dtype) => (dtype === 'BF16' || dtype === 'F16' ? 2 * N : dtype === 'F4' ? N / 2 : N)

/**
 * The decoding tables for the JS loops, made by the core (building them is not timed).
 * @param {any} core @param {string} dtype @param {number} codes
 */
function table(core, dtype, codes) {
  const bytes = dtype === 'F16' ? 2 : 1
  const src = core._malloc(codes * bytes) >>> 0
  const dst = core._malloc(codes * 4) >>> 0
  const view = new Uint8Array(core.HEAPU8.buffer, src, codes * bytes)
  if (bytes === 2) new Uint16Array(core.HEAPU8.buffer, src, codes).set(Uint16Array.from({ length: codes }, (_, i) => i))
  else if (dtype === 'F4') view.set(Uint8Array.from({ length: codes / 2 }, (_, i) => ((2 * i + 1) << 4) | (2 * i)))  // 0..15
  else view.set(Uint8Array.from({ length: codes }, (_, i) => i))
  core.toFloat32(dtypeIndex(dtype), src, codes, dst)
  const t = new Uint32Array(core.HEAPU8.buffer, dst, codes).slice()
  core._free(src)
  core._free(dst)
  return t
}

/** The JS contenders: each converts `src` (bytes in JS memory) into `out` (N float32 bits). */
function jsLoops(/** @type {any} */ core) {
  const f16 = table(core, 'F16', 65536)
  const e4m3 = table(core, 'F8_E4M3', 256)
  const e5m2 = table(core, 'F8_E5M2', 256)
  const e2m1 = table(core, 'F4', 16)
  const f4lo = Uint32Array.from({ length: 256 }, (_, b) => e2m1[b & 15])
  const f4hi = Uint32Array.from({ length: 256 }, (_, b) => e2m1[b >> 4])
  /** @type {Record<string, (src: Uint8Array, out: Uint32Array) => void>} */
  return {
    BF16(src, out) {
      const h = new Uint16Array(src.buffer, src.byteOffset, out.length)
      for (let i = 0; i < out.length; i++) out[i] = h[i] << 16
    },
    F16(src, out) {
      const h = new Uint16Array(src.buffer, src.byteOffset, out.length)
      for (let i = 0; i < out.length; i++) out[i] = f16[h[i]]
    },
    F8_E4M3(src, out) {
      for (let i = 0; i < out.length; i++) out[i] = e4m3[src[i]]
    },
    F8_E5M2(src, out) {
      for (let i = 0; i < out.length; i++) out[i] = e5m2[src[i]]
    },
    F4(src, out) {
      for (let i = 0, j = 0; j < out.length; i++, j += 2) {
        const b = src[i]
        out[j] = f4lo[b]
        out[j + 1] = f4hi[b]
      }
    },
  }
}

async function main() {
  console.log(`conversions to float32: ${N.toLocaleString('en-US')} elements, wasm heap to heap vs a JS loop ` +
    `(typed arrays, lookup tables) and vs a wasm memcpy of the output (${(N * 4 / 2 ** 20).toFixed(0)} MiB); ${machine()}`)
  const simd = await loadCoreVariant('simd')
  let nosimd = null
  try {
    nosimd = await loadCoreVariant('nosimd')
  } catch (error) {
    console.log(`  (no-SIMD build not available: ${/** @type {Error} */ (error).message})`)
  }
  const loops = jsLoops(simd)
  const outBytes = N * 4
  /** @param {any} core */
  const heapBuffers = (core) => {
    const src = core._malloc(2 * N) >>> 0
    const dst = core._malloc(outBytes) >>> 0
    const copy = core._malloc(outBytes) >>> 0
    if (!src || !dst || !copy) throw new Error('wasm allocation failed')
    new Uint8Array(core.HEAPU8.buffer, dst, outBytes).fill(1)  // touch every page once
    new Uint8Array(core.HEAPU8.buffer, copy, outBytes).fill(1)
    return { src, dst, copy }
  }
  const a = heapBuffers(simd)
  const b = nosimd ? heapBuffers(nosimd) : null
  const jsOut = new Uint32Array(N)
  for (const dtype of DTYPES) {
    const bytes = randomBytes(srcBytes(dtype), 0x12345 + dtype.length)
    new Uint8Array(simd.HEAPU8.buffer, a.src, bytes.length).set(bytes)
    if (nosimd && b) new Uint8Array(nosimd.HEAPU8.buffer, b.src, bytes.length).set(bytes)
    const index = dtypeIndex(dtype)
    /** @type {Record<string, () => unknown>} */
    const contenders = {
      wasm: () => simd.toFloat32(index, a.src, N, a.dst),
      js: () => loops[dtype](bytes, jsOut),
      memcpy: () => simd.copyBytes(a.copy, a.dst, outBytes),
    }
    if (nosimd && b) contenders['wasm, no SIMD'] = () => nosimd.toFloat32(index, b.src, N, b.dst)
    const t = timeInterleaved(contenders, { rounds: ROUNDS, minSampleMs: 30, warmup: 2 })
    // The JS loop must agree with both builds bit for bit, or the race means nothing.
    for (const [core, dst] of /** @type {[any, number][]} */ ([[simd, a.dst], ...(nosimd && b ? [[nosimd, b.dst]] : [])])) {
      const wasmOut = new Uint32Array(core.HEAPU8.buffer, dst, N)
      for (let i = 0; i < N; i++) if (wasmOut[i] !== jsOut[i]) throw new Error(`${dtype}: JS and wasm disagree at ${i}`)
    }
    const vsJs = t.js / t.wasm
    figure({ area: 'convert', figure: `${dtype} -> F32, ${millions} elements, vs JS loop`, ours: `${fmtMs(t.wasm)} (${fmtGBs(outBytes, t.wasm)} out)`,
      baselineName: 'JS loop', baseline: fmtMs(t.js), ratio: vsJs, ratioText: `${fmtX(vsJs)} faster`, target: '>= 2x', met: vsJs >= 2 })
    const vsCopy = t.memcpy / t.wasm
    figure({ area: 'convert', figure: `${dtype} -> F32, ${millions} elements, vs wasm memcpy of the output`, ours: fmtGBs(outBytes, t.wasm),
      baselineName: 'memcpy', baseline: fmtGBs(outBytes, t.memcpy), ratio: vsCopy, ratioText: `${fmtX(vsCopy)} its bandwidth`,
      target: '>= 0.5x', met: vsCopy >= 0.5 })
    if (t['wasm, no SIMD'] !== undefined) {
      const r = t.js / t['wasm, no SIMD']
      figure({ area: 'convert', figure: `${dtype} -> F32, no-SIMD build, vs JS loop`, ours: fmtMs(t['wasm, no SIMD']),
        baselineName: 'JS loop', baseline: fmtMs(t.js), ratio: r, ratioText: `${fmtX(r)} faster`, target: '', met: null })
    }
  }
  emitFigures()
}

if (import.meta.url === `file://${process.argv[1]}`) await main()

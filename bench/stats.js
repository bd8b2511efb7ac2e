#!/usr/bin/env node
/**
 * Tensor statistics (count of NaN/Inf/zeros, min, max, mean, std and a 64-bin histogram) of
 * 16M F32 and BF16 elements: the wasm core (Tensor.stats(), on the tensor's heap bytes) against
 * the fastest plain-JS loop we could write over a typed array in JS memory: one pass for
 * counts, min, max, sum and sum of squares (the naive formula, less accurate than the core's,
 * and faster), one for the histogram; BF16 is widened chunk by chunk through a Uint32Array.
 *   node bench/stats.js [--elements 16777216] [--rounds 7]
 */
import { parseArgs } from 'node:util'
import { dtypeIndex } from '../js/dtypes.js'
import { loadCoreVariant } from '../js/wasm.js'
import { emitFigures, figure, fmtMs, fmtX, machine, timeInterleaved } from './common.js'

const { values } = parseArgs({ options: { elements: { type: 'string', default: String(1 << 24) }, rounds: { type: 'string', default: '7' } } })
const N = Number(values.elements)
const ROUNDS = Number(values.rounds)
const BINS = 64

/** Normal-ish weights (sum of 4 uniforms), a few zeros, NaNs and infinities. */
function weights() {
  const out = new Float32Array(N)
  let x = 0x2545f491
  const next = () => { x ^= x << 13; x ^= x >>> 17; x ^= x << 5; return (x >>> 0) / 2 ** 32 }
  for (let i = 0; i < N; i++) out[i] = (next() + next() + next() + next() - 2) * 0.05
  for (let i = 0; i < N; i += 100_003) out[i] = 0
  out[7] = NaN
  out[11] = Infinity
  return out
}

/** @param {Float32Array} f32 */
function toBf16(f32) {
  const u32 = new Uint32Array(f32.buffer)
  const out = new Uint16Array(f32.length)
  for (let i = 0; i < out.length; i++) out[i] = u32[i] >>> 16
  return out
}

/**
 * The JS baseline over float32 values: two passes (see above).
 * @param {Float32Array} v
 */
function jsStatsF32(v) {
  let finite = 0, nan = 0, inf = 0, zero = 0, min = Infinity, max = -Infinity, sum = 0, sum2 = 0
  for (let i = 0; i < v.length; i++) {
    const x = v[i]
    if (x - x !== 0) {  // NaN or infinity
      if (x !== x) nan++
      else inf++
      continue
    }
    if (x === 0) zero++
    finite++
    sum += x
    sum2 += x * x
    if (x < min) min = x
    if (x > max) max = x
  }
  const mean = sum / finite
  const std = Math.sqrt(Math.max(0, sum2 / finite - mean * mean))
  const counts = new Float64Array(BINS)
  const scale = BINS / (max - min)
  for (let i = 0; i < v.length; i++) {
    const x = v[i]
    if (x - x !== 0) continue
    const k = Math.floor((x - min) * scale)
    counts[k < BINS ? k : BINS - 1]++
  }
  return { finite, nan, inf, zero, min, max, mean, std, counts }
}

const WIDE = new Float32Array(1 << 14)
const WIDE_BITS = new Uint32Array(WIDE.buffer)

/**
 * The same over BF16, widened 16,384 values at a time into a Float32Array.
 * @param {Uint16Array} h
 */
function jsStatsBf16(h) {
  let finite = 0, nan = 0, inf = 0, zero = 0, min = Infinity, max = -Infinity, sum = 0, sum2 = 0
  const C = WIDE.length
  for (let s = 0; s < h.length; s += C) {
    const len = Math.min(C, h.length - s)
    for (let i = 0; i < len; i++) WIDE_BITS[i] = h[s + i] << 16
    for (let i = 0; i < len; i++) {
      const x = WIDE[i]
      if (x - x !== 0) {
        if (x !== x) nan++
        else inf++
        continue
      }
      if (x === 0) zero++
      finite++
      sum += x
      sum2 += x * x
      if (x < min) min = x
      if (x > max) max = x
    }
  }
  const mean = sum / finite
  const std = Math.sqrt(Math.max(0, sum2 / finite - mean * mean))
  const counts = new Float64Array(BINS)
  const scale = BINS / (max - min)
  for (let s = 0; s < h.length; s += C) {
    const len = Math.min(C, h.length - s)
    for (let i = 0; i < len; i++) WIDE_BITS[i] = h[s + i] << 16
    for (let i = 0; i < len; i++) {
      const x = WIDE[i]
      if (x - x !== 0) continue
      const k = Math.floor((x - min) * scale)
      counts[k < BINS ? k : BINS - 1]++
    }
  }
  return { finite, nan, inf, zero, min, max, mean, std, counts }
}

async function main() {
  console.log(`stats (counts, min, max, mean, std, ${BINS}-bin histogram) of ${N.toLocaleString('en-US')} elements: ` +
    `wasm core vs a plain JS loop; ${machine()}`)
  const core = await loadCoreVariant('simd')
  const f32 = weights()
  const bf16 = toBf16(f32)
  const out = core._malloc((11 + BINS) * 8) >>> 0
  for (const [dtype, data] of /** @type {[string, Float32Array | Uint16Array][]} */ ([['F32', f32], ['BF16', bf16]])) {
    const ptr = core._malloc(data.byteLength) >>> 0
    new Uint8Array(core.HEAPU8.buffer, ptr, data.byteLength).set(new Uint8Array(data.buffer))
    const run = dtype === 'F32' ? () => jsStatsF32(f32) : () => jsStatsBf16(bf16)
    const index = dtypeIndex(dtype)
    let js = run()
    const t = timeInterleaved({
      wasm: () => core.statsInto(index, ptr, N, BINS, out),
      js: () => { js = run() },
    }, { rounds: ROUNDS, minSampleMs: 30, warmup: 1 })
    const v = new Float64Array(core.HEAPU8.buffer, out, 11 + BINS)
    if (v[1] !== js.finite || v[5] !== js.min || v[6] !== js.max || Math.abs(v[7] - js.mean) > 1e-6)
      throw new Error(`${dtype}: JS and wasm stats disagree: ${v.slice(0, 9)} vs ${JSON.stringify(js)}`)
    const r = t.js / t.wasm
    figure({ area: 'stats', figure: `stats of ${Math.round(N / 2 ** 20)}M ${dtype} (${BINS} bins)`, ours: fmtMs(t.wasm), baselineName: 'JS loop',
      baseline: fmtMs(t.js), ratio: r, ratioText: `${fmtX(r)} faster`, target: '>= 2x', met: r >= 2 })
    core._free(ptr)
  }
  core._free(out)
  emitFigures()
}

if (import.meta.url === `file://${process.argv[1]}`) await main()

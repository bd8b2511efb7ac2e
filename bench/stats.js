#!/usr/bin/env node
/**
 * Tensor statistics (count of NaN/Inf/zeros, min, max, mean, std and a 64-bin histogram) of
 * 16M F32 and BF16 elements: the wasm core (Tensor.stats(), on the tensor's heap bytes) against
 * the fastest plain-JS loop we could write over a typed array in JS memory: one pass for
 * counts, min, max, sum and sum of squares (the naive formula, less accurate than the core's,
 * and faster), one for the histogram; BF16 is widened chunk by chunk through a Uint32Array.
 * Then f.stats() streaming a tensor larger than the heap (5 GiB by default) from a virtual
 * source (a 64 MiB block of the same weights repeated, copied into the heap as a source's read
 * would), in bytes per second against the core's wasm memcpy over the same chunks: BF16 in one
 * pass (its histogram from a table of codes), F32 in two (the second bins).
 *   node bench/stats.js [--elements 16777216] [--rounds 7] [--stream-gib 5]
 */
import { parseArgs } from 'node:util'
import { stats } from '../js/core/index.js'
import { loadCore, loadCoreVariant } from '../js/wasm.js'
import { open } from '../js/node.js'
import { emitFigures, figure, fmtMs, fmtX, machine, timeInterleaved } from './common.js'

const { values } = parseArgs({ options: { elements: { type: 'string', default: String(1 << 24) }, rounds: { type: 'string', default: '7' },
  'stream-gib': { type: 'string', default: '5' } } })
const N = Number(values.elements)
const ROUNDS = Number(values.rounds)
const BINS = 64
/** Tensor.stats's bytes per second on the heap, by dtype (the first figures). @type {Record<string, number>} */
const IN_HEAP = {}

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
  for (const [dtype, data] of /** @type {[string, Float32Array | Uint16Array][]} */ ([['F32', f32], ['BF16', bf16]])) {
    const ptr = core._malloc(data.byteLength) >>> 0
    new Uint8Array(core.HEAPU8.buffer, ptr, data.byteLength).set(new Uint8Array(data.buffer))
    const run = dtype === 'F32' ? () => jsStatsF32(f32) : () => jsStatsBf16(bf16)
    let js = run()
    /** @type {import('../js/core/index.js').Stats | null} */
    let w = null
    const t = timeInterleaved({
      wasm: () => { w = stats(core, dtype, ptr, N, BINS) },
      js: () => { js = run() },
    }, { rounds: ROUNDS, minSampleMs: 30, warmup: 1 })
    const v = /** @type {import('../js/core/index.js').Stats} */ (/** @type {unknown} */ (w))
    if (v.finiteCount !== js.finite || v.min !== js.min || v.max !== js.max || Math.abs(v.mean - js.mean) > 1e-6)
      throw new Error(`${dtype}: JS and wasm stats disagree: ${JSON.stringify(v)} vs ${JSON.stringify(js)}`)
    const r = t.js / t.wasm
    IN_HEAP[dtype] = data.byteLength / (t.wasm / 1000)
    figure({ area: 'stats', figure: `stats of ${Math.round(N / 2 ** 20)}M ${dtype} (${BINS} bins)`, ours: fmtMs(t.wasm), baselineName: 'JS loop',
      baseline: fmtMs(t.js), ratio: r, ratioText: `${fmtX(r)} faster`, target: '>= 2x', met: r >= 2 })
    core._free(ptr)
  }
  await streaming(f32)
  emitFigures()
}

/**
 * A ByteSource of a safetensors file with one tensor of `size` bytes: `block` repeated.
 * @param {string} dtype @param {number} size @param {Uint8Array} block
 */
function virtualFile(dtype, size, block) {
  const elements = size / (dtype === 'F32' ? 4 : 2)
  const header = new TextEncoder().encode(JSON.stringify({ w: { dtype, shape: [elements], data_offsets: [0, size] } }))
  const prefix = new Uint8Array(8 + header.length)
  new DataView(prefix.buffer).setBigUint64(0, BigInt(header.length), true)
  prefix.set(header, 8)
  /** @param {Uint8Array} out @param {number} offset */
  const fill = (out, offset) => {
    for (let at = 0; at < out.length;) {
      const i = offset + at
      if (i < prefix.length) { out[at] = prefix[i]; at++; continue }
      const d = (i - prefix.length) % block.length
      const n = Math.min(out.length - at, block.length - d)
      out.set(block.subarray(d, d + n), at)
      at += n
    }
  }
  return {
    byteLength: prefix.length + size,
    async read(/** @type {number} */ offset, /** @type {number} */ length) {
      const out = new Uint8Array(length)
      fill(out, offset)
      return out
    },
    async readInto(/** @type {number} */ offset, /** @type {number} */ length, /** @type {(at: number, n: number) => Uint8Array} */ viewAt) {
      fill(viewAt(0, length), offset)
    },
  }
}

/** f.stats over a tensor larger than the heap, against a wasm memcpy of the same bytes. @param {Float32Array} f32 */
async function streaming(f32) {
  const size = Math.round(Number(values['stream-gib']) * 2 ** 30 / (64 << 20)) * (64 << 20)
  const block = new Uint8Array(f32.buffer, 0, Math.min(f32.byteLength, 64 << 20))
  const bf16Block = new Uint8Array(toBf16(f32).buffer, 0, Math.min(f32.byteLength / 2, 64 << 20))
  const core = await loadCore()
  const chunk = 4 << 20
  const a = core._malloc(chunk) >>> 0
  const b = core._malloc(chunk) >>> 0
  // memcpy of `size` bytes through the core, 4 MiB at a time (warm buffers).
  core.copyBytes(b, a, chunk)
  const t0 = performance.now()
  for (let done = 0; done < size; done += chunk) core.copyBytes(b, a, chunk)
  const memcpyS = (performance.now() - t0) / 1000
  core._free(a)
  core._free(b)
  const gib = (/** @type {number} */ n) => `${(n / 2 ** 30).toFixed(2)} GiB/s`
  for (const [dtype, data, passes] of /** @type {[string, Uint8Array, number][]} */ ([['BF16', bf16Block, 1], ['F32', block, 2]])) {
    const f = await open(virtualFile(dtype, size, data))
    const s0 = performance.now()
    const s = await f.stats('w', { chunkBytes: chunk })
    const seconds = (performance.now() - s0) / 1000
    await f.close()
    if (s.count !== size / (dtype === 'F32' ? 4 : 2)) throw new Error(`${dtype}: counted ${s.count}`)
    const rate = size / seconds
    const r = rate / (size / memcpyS)
    console.log(`f.stats of ${(size / 2 ** 30).toFixed(1)} GiB ${dtype} (${passes} ${passes > 1 ? 'passes' : 'pass'}, 4 MiB chunks): ${seconds.toFixed(2)} s, ` +
      `${gib(rate)}; wasm memcpy (4 MiB, in cache) ${gib(size / memcpyS)}; Tensor.stats on the heap ${gib(IN_HEAP[dtype])}`)
    figure({ area: 'stats', figure: `f.stats streamed, ${(size / 2 ** 30).toFixed(1)} GiB ${dtype} (${passes} ${passes > 1 ? 'passes' : 'pass'}, virtual source)`,
      ours: gib(rate), baselineName: 'wasm memcpy', baseline: gib(size / memcpyS), ratio: r, ratioText: `${r.toFixed(2)}x memcpy's rate (${(rate / IN_HEAP[dtype]).toFixed(2)}x Tensor.stats's on the heap)`, target: '', met: null })
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main()

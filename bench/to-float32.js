#!/usr/bin/env node
/**
 * Tensor.toFloat32() against toFloat32({ into }) on a 64 MiB output (16M BF16 and F16 values,
 * 16M F32, 8M C64): the plain form allocates the output in the heap, converts and copies it out
 * into a fresh Float32Array, whose pages the process touches for the first time; the `into`
 * form converts 256 KiB pieces into a heap scratch and copies each into the caller's array,
 * warm from the previous call. Also the core's conversion alone, heap to heap, as the floor.
 *   node bench/to-float32.js [--elements 16777216] [--rounds 7]
 */
import { parseArgs } from 'node:util'
import { heapAlloc, heapView, toFloat32Into } from '../js/core/index.js'
import { Tensor } from '../js/tensor.js'
import { loadCore } from '../js/wasm.js'
import { emitFigures, figure, fmtMs, fmtX, machine, timeInterleaved } from './common.js'

const { values } = parseArgs({ options: { elements: { type: 'string', default: String(1 << 24) }, rounds: { type: 'string', default: '7' } } })
const N = Number(values.elements)
const ROUNDS = Number(values.rounds)

/** @param {number} n float32 values */
function weights(n) {
  const out = new Float32Array(n)
  let x = 0x2545f491
  for (let i = 0; i < n; i++) {
    x ^= x << 13; x ^= x >>> 17; x ^= x << 5
    out[i] = ((x >>> 0) / 2 ** 32 - 0.5) * 0.1
  }
  return out
}

async function main() {
  console.log(`toFloat32() vs toFloat32({ into }): ${(N * 4 / 2 ** 20).toFixed(0)} MiB of float32 out; ${machine()}`)
  const core = await loadCore()
  const f32 = weights(N)
  const u32 = new Uint32Array(f32.buffer)
  const bf16 = new Uint16Array(N)
  for (let i = 0; i < N; i++) bf16[i] = u32[i] >>> 16
  const cases = /** @type {[string, ArrayBufferView, number][]} */ ([
    ['BF16', bf16, N], ['F16', new Uint16Array(N).map((_, i) => 0x3c00 + (i & 0x3ff)), N], ['F32', f32, N], ['C64', f32, N / 2],
  ])
  const into = new Float32Array(N)
  const scratch = heapAlloc(core, N * 4)
  for (const [dtype, data, elements] of cases) {
    const ptr = heapAlloc(core, data.byteLength)
    heapView(core, ptr, data.byteLength).set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength))
    const t = new Tensor(core, ptr, dtype, dtype, [elements], data.byteLength)
    const fresh = t.toFloat32()
    t.toFloat32({ into })
    for (let i = 0; i < N; i += 4099) {
      if (!Object.is(fresh[i], into[i])) throw new Error(`${dtype}: toFloat32({ into }) differs at ${i}: ${into[i]} vs ${fresh[i]}`)
    }
    const ms = timeInterleaved({
      fresh: () => t.toFloat32(),
      into: () => t.toFloat32({ into }),
      core: () => toFloat32Into(core, dtype, ptr, elements, scratch),
    }, { rounds: ROUNDS, minSampleMs: 50, warmup: 1 })
    const r = ms.fresh / ms.into
    console.log(`${dtype.padEnd(5)} toFloat32() ${fmtMs(ms.fresh).padStart(10)}   toFloat32({ into }) ${fmtMs(ms.into).padStart(10)}   ` +
      `core alone (heap to heap) ${fmtMs(ms.core).padStart(10)}   fresh/into ${fmtX(r)}`)
    figure({ area: 'to-float32', figure: `toFloat32({ into }) of ${dtype}, 64 MiB out (core alone ${fmtMs(ms.core)})`, ours: fmtMs(ms.into),
      baselineName: 'toFloat32() (fresh array)', baseline: fmtMs(ms.fresh), ratio: r, ratioText: `${fmtX(r)} faster`, target: '>= 2x', met: r >= 2 })
    t.dispose()
  }
  emitFigures()
}

if (import.meta.url === `file://${process.argv[1]}`) await main()

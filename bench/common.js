/**
 * Shared helpers for the benchmarks: timing (median of repeated runs, each run long enough for
 * the clock), figures with a baseline and a target, and the machine-readable line that
 * bench/index.js collects. Every figure is measured in one process against its baseline on the
 * same machine, interleaved, so both see the same load.
 */
import { cpus } from 'node:os'

/**
 * Median time in ms of one call of `fn`: calls are batched so that one sample lasts at least
 * `minSampleMs`, and `samples` samples are taken (after `warmup` untimed calls).
 * @param {() => unknown} fn synchronous
 * @param {{ samples?: number, minSampleMs?: number, warmup?: number }} [options]
 */
export function timeSync(fn, { samples = 15, minSampleMs = 20, warmup = 3 } = {}) {
  for (let i = 0; i < warmup; i++) fn()
  let batch = 1
  for (;;) {
    const t0 = performance.now()
    for (let i = 0; i < batch; i++) fn()
    const ms = performance.now() - t0
    if (ms >= minSampleMs || batch >= 1 << 20) break
    batch *= Math.max(2, Math.min(16, Math.ceil(minSampleMs / Math.max(ms, 0.01))))
  }
  const times = []
  for (let s = 0; s < samples; s++) {
    const t0 = performance.now()
    for (let i = 0; i < batch; i++) fn()
    times.push((performance.now() - t0) / batch)
  }
  return median(times)
}

/**
 * As timeSync for an async function.
 * @param {() => Promise<unknown>} fn
 * @param {{ samples?: number, minSampleMs?: number, warmup?: number }} [options]
 */
export async function timeAsync(fn, { samples = 15, minSampleMs = 20, warmup = 3 } = {}) {
  for (let i = 0; i < warmup; i++) await fn()
  let batch = 1
  for (;;) {
    const t0 = performance.now()
    for (let i = 0; i < batch; i++) await fn()
    const ms = performance.now() - t0
    if (ms >= minSampleMs || batch >= 1 << 20) break
    batch *= Math.max(2, Math.min(16, Math.ceil(minSampleMs / Math.max(ms, 0.01))))
  }
  const times = []
  for (let s = 0; s < samples; s++) {
    const t0 = performance.now()
    for (let i = 0; i < batch; i++) await fn()
    times.push((performance.now() - t0) / batch)
  }
  return median(times)
}

/**
 * Times several contenders interleaved (A B C A B C ...), so a burst of load on the machine
 * hits them all alike. Returns the median ms per contender.
 * @param {Record<string, () => unknown>} fns synchronous
 * @param {{ rounds?: number, minSampleMs?: number, warmup?: number }} [options]
 * @returns {Record<string, number>}
 */
export function timeInterleaved(fns, { rounds = 11, minSampleMs = 30, warmup = 2 } = {}) {
  const names = Object.keys(fns)
  /** @type {Record<string, number>} */
  const batches = {}
  for (const name of names) {
    for (let i = 0; i < warmup; i++) fns[name]()
    let batch = 1
    for (;;) {
      const t0 = performance.now()
      for (let i = 0; i < batch; i++) fns[name]()
      const ms = performance.now() - t0
      if (ms >= minSampleMs || batch >= 1 << 20) break
      batch *= Math.max(2, Math.min(16, Math.ceil(minSampleMs / Math.max(ms, 0.01))))
    }
    batches[name] = batch
  }
  /** @type {Record<string, number[]>} */
  const times = Object.fromEntries(names.map((n) => [n, []]))
  for (let r = 0; r < rounds; r++) {
    for (const name of names) {
      const t0 = performance.now()
      for (let i = 0; i < batches[name]; i++) fns[name]()
      times[name].push((performance.now() - t0) / batches[name])
    }
  }
  return Object.fromEntries(names.map((n) => [n, median(times[n])]))
}

/** @param {number[]} xs */
export function median(xs) {
  const s = xs.slice().sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2
}

/**
 * @typedef {{ area: string, figure: string, ours: string, baseline: string, baselineName: string,
 *   ratio: number, ratioText: string, target: string, met: boolean | null, note?: string }} Figure
 */

/** @type {Figure[]} */
const figures = []

/**
 * Records a figure. `ratio` is stated so that higher is better for the target's direction:
 * pass `direction: 'speedup'` for "baseline time / our time", 'relative' for a plain ratio.
 * @param {Figure} f
 */
export function figure(f) {
  figures.push(f)
  const met = f.met === null ? 'n/a' : f.met ? 'met' : 'NOT met'
  console.log(`  ${f.figure}: ${f.ours} vs ${f.baselineName} ${f.baseline} -> ${f.ratioText}` +
    `${f.target ? ` (target ${f.target}: ${met})` : ''}${f.note ? ` [${f.note}]` : ''}`)
}

/** Prints the figures for bench/index.js: one line, last in the output. */
export function emitFigures() {
  console.log(`BENCH_FIGURES ${JSON.stringify(figures)}`)
}

/** @param {number} ms */
export const fmtMs = (ms) => (ms >= 100 ? `${ms.toFixed(0)} ms` : ms >= 1 ? `${ms.toFixed(2)} ms` : `${(ms * 1000).toFixed(1)} µs`)
/** @param {number} bytes @param {number} ms */
export const fmtGBs = (bytes, ms) => `${(bytes / 1e9 / (ms / 1000)).toFixed(2)} GB/s`
/** @param {number} x */
export const fmtX = (x) => `${x.toFixed(2)}x`

export function machine() {
  const c = cpus()
  return `Node ${process.version}, ${c.length} x ${c[0]?.model ?? '?'}`
}

/**
 * The 8-byte length and padded header of a virtual file whose tensors (F32, else 2 bytes per
 * element) follow one another in the given order; used by the remote benches.
 * @param {{ name: string, dtype: string, shape: number[] }[]} tensors
 * @returns {{ prefix: Uint8Array, sizes: Map<string, number>, dataLength: number }}
 */
export function virtualHeader(tensors) {
  /** @type {Record<string, any>} */
  const header = { __metadata__: { format: 'pt' } }
  /** @type {Map<string, number>} */
  const sizes = new Map()
  let offset = 0
  for (const t of tensors) {
    const bytes = t.shape.reduce((a, b) => a * b, 1) * (t.dtype === 'F32' ? 4 : 2)
    header[t.name] = { dtype: t.dtype, shape: t.shape, data_offsets: [offset, offset + bytes] }
    sizes.set(t.name, bytes)
    offset += bytes
  }
  let json = JSON.stringify(header)
  json += ' '.repeat((8 - (json.length % 8)) % 8)
  const prefix = new Uint8Array(8 + json.length)
  new DataView(prefix.buffer).setBigUint64(0, BigInt(json.length), true)
  prefix.set(new TextEncoder().encode(json), 8)
  return { prefix, sizes, dataLength: offset }
}

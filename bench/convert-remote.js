#!/usr/bin/env node
/**
 * convert (BF16 to F32) of a sharded set read over HTTP: `--shards` virtual shards of `--tensors`
 * tensors of `--kib` KiB each, served by the test server on 127.0.0.1 with `--latency` ms before
 * each answer. Ours, with default options (tensors read ahead of the writer), against the same
 * convert one tensor at a time (`readAhead: false`), in the same run; times are medians over
 * `--runs` runs, requests and the most at once the server's counts.
 *   node bench/convert-remote.js [--shards 4] [--tensors 100] [--kib 32] [--latency 20] [--runs 3]
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { convertFile } from '../js/cli/convert.js'
import { startServer } from '../tests/js/http-server.js'
import { emitFigures, figure, fmtMs, fmtX, machine, median, virtualHeader } from './common.js'

const { values } = parseArgs({ options: {
  shards: { type: 'string', default: '4' }, tensors: { type: 'string', default: '100' }, kib: { type: 'string', default: '32' },
  latency: { type: 'string', default: '20' }, runs: { type: 'string', default: '3' },
} })
const SHARDS = Number(values.shards)
const TENSORS = Number(values.tensors)
const ELEMENTS = Number(values.kib) * 512  // BF16
const LATENCY = Number(values.latency)
const RUNS = Number(values.runs)

const server = await startServer({ lifetime: 30 * 60_000 })
/** @type {Record<string, string>} */
const weightMap = {}
for (let s = 0; s < SHARDS; s++) {
  const file = `model-${String(s + 1).padStart(5, '0')}-of-${String(SHARDS).padStart(5, '0')}.safetensors`
  const tensors = Array.from({ length: TENSORS }, (_, t) => ({ name: `model.layers.${s}.w${t}`, dtype: 'BF16', shape: [ELEMENTS] }))
  const { prefix, dataLength } = virtualHeader(tensors)
  for (const t of tensors) weightMap[t.name] = file
  server.addVirtual(`/set/${file}`, {
    size: prefix.length + dataLength,
    fill(out, o) {
      let i = 0
      for (; i < out.length && o + i < prefix.length; i++) out[i] = prefix[o + i]
      out.fill(0x3f, i)  // 0x3f3f: BF16 0.746
    },
  })
}
server.addFile('/set/model.safetensors.index.json', new TextEncoder().encode(JSON.stringify({ metadata: {}, weight_map: weightMap })))
const url = server.url('/set/model.safetensors.index.json')

/** One convert into a fresh folder; wall time and the server's counts. @param {Record<string, any>} options */
async function convertOnce(options) {
  const dir = mkdtempSync(join(tmpdir(), 'st-bench-convert-'))
  try {
    server.resetStats()
    const t0 = performance.now()
    const r = await convertFile(url, join(dir, 'out'), { dtype: 'F32', ...options })
    const ms = performance.now() - t0
    if (r.tensors !== SHARDS * TENSORS) throw new Error(`${r.tensors} tensors, expected ${SHARDS * TENSORS}`)
    return { ms, requests: server.stats.requests, most: server.stats.maxInFlight }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

console.log(`convert over HTTP: ${SHARDS} shards x ${TENSORS} tensors of ${values.kib} KiB (BF16 to F32); ${LATENCY} ms added per request; ${machine()}`)
await convertOnce({})  // warm-up: modules, wasm, connections
server.setLatency(LATENCY)
/** @type {Record<'ours' | 'serial', Awaited<ReturnType<typeof convertOnce>>[]>} */
const runs = { ours: [], serial: [] }
for (let r = 0; r < RUNS; r++) {
  runs.ours.push(await convertOnce({}))
  runs.serial.push(await convertOnce({ readAhead: false }))
}
await server.close()
const ours = median(runs.ours.map((x) => x.ms))
const serial = median(runs.serial.map((x) => x.ms))
const said = (/** @type {'ours' | 'serial'} */ k) => `${runs[k][0].requests} requests, ${runs[k][0].most} at most at once`
figure({ area: 'convert-remote', figure: `convert of ${SHARDS * TENSORS} tensors of ${values.kib} KiB over HTTP, ${LATENCY} ms latency`,
  ours: `${fmtMs(ours)}, ${said('ours')}`, baselineName: 'one tensor at a time (readAhead: false)', baseline: `${fmtMs(serial)}, ${said('serial')}`,
  ratio: serial / ours, ratioText: `${fmtX(serial / ours)} faster`, target: '', met: null })
emitFigures()

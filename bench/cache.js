#!/usr/bin/env node
/**
 * Reopening a sharded set with the `cache` option (issue 17, bench (c)): open the index and load
 * every shard's header, without the cache, then with it (a first, cold open that fills it; a
 * reopen that validates each file, answered 304; a reopen within maxAge, no request at all).
 * The set: `--shards` virtual shards (generated on demand, never stored) of `--tensors` tensors
 * each (headers of about 100 KB, as GLM-5-NVFP4's), behind an index naming all of them, served
 * by the test server on 127.0.0.1 with `--latency` ms before each answer. Requests and body
 * bytes are the server's counts; times are medians over `--runs` runs, each with a fresh folder.
 *   node bench/cache.js [--shards 96] [--tensors 800] [--latency 50] [--runs 3]
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { open } from '../js/node.js'
import { startServer } from '../tests/js/http-server.js'
import { emitFigures, figure, fmtMs, fmtX, machine, median, virtualHeader } from './common.js'

const { values } = parseArgs({ options: {
  shards: { type: 'string', default: '96' }, tensors: { type: 'string', default: '800' },
  latency: { type: 'string', default: '50' }, runs: { type: 'string', default: '3' },
} })
const SHARDS = Number(values.shards)
const TENSORS = Number(values.tensors)
const LATENCY = Number(values.latency)
const RUNS = Number(values.runs)

const server = await startServer({ lifetime: 30 * 60_000 })
/** @type {Record<string, string>} */
const weightMap = {}
let headerBytes = 0
for (let s = 0; s < SHARDS; s++) {
  const file = `model-${String(s + 1).padStart(5, '0')}-of-${String(SHARDS).padStart(5, '0')}.safetensors`
  const tensors = Array.from({ length: TENSORS }, (_, t) => ({
    name: `model.layers.${s}.mlp.experts.${t}.down_proj.weight_scale_${t % 3 === 0 ? 'inv' : 'packed'}`,
    dtype: t % 2 ? 'F32' : 'BF16', shape: [64, 32],
  }))
  const { prefix, dataLength } = virtualHeader(tensors)
  headerBytes += prefix.length
  for (const t of tensors) weightMap[t.name] = file
  const size = prefix.length + dataLength
  server.addVirtual(`/set/${file}`, {
    size,
    fill(out, o) {
      let i = 0
      for (; i < out.length && o + i < prefix.length; i++) out[i] = prefix[o + i]
      out.fill(0x3c, i)
    },
  })
}
const index = new TextEncoder().encode(JSON.stringify({ metadata: { total_size: 0 }, weight_map: weightMap }, null, 2))
server.addFile('/set/model.safetensors.index.json', index)
const url = server.url('/set/model.safetensors.index.json')

/** Opens the set and loads every header; the server's counts and the wall time.
 * @param {Record<string, any>} options */
async function openAll(options) {
  server.resetStats()
  const t0 = performance.now()
  const f = /** @type {import('../js/node.js').ShardedFile} */ (/** @type {unknown} */ (await open(url, options)))
  await f.loadHeaders()
  const names = f.names.length
  await f.close()
  const ms = performance.now() - t0
  if (names !== SHARDS * TENSORS) throw new Error(`${names} names, expected ${SHARDS * TENSORS}`)
  await new Promise((resolve) => setTimeout(resolve, 20))  // cancelled bodies counted
  return { ms, requests: server.stats.requests, bytes: server.stats.bytes, statuses: server.stats.log.map((e) => e.status) }
}

console.log(`cache: ${SHARDS} shards x ${TENSORS} tensors (headers ${(headerBytes / SHARDS / 1000).toFixed(0)} KB each), ` +
  `index ${(index.length / 1e6).toFixed(1)} MB; ${LATENCY} ms added per request; ${machine()}`)
await openAll({})  // warm-up: module, wasm, connections
server.setLatency(LATENCY)

/** @type {Record<string, Awaited<ReturnType<typeof openAll>>[]>} */
const runs = { none: [], cold: [], reopen: [], fresh: [] }
for (let r = 0; r < RUNS; r++) {
  const dir = mkdtempSync(join(tmpdir(), 'st-bench-cache-'))
  try {
    runs.none.push(await openAll({}))
    runs.cold.push(await openAll({ cache: { dir } }))
    runs.reopen.push(await openAll({ cache: { dir } }))
    runs.fresh.push(await openAll({ cache: { dir, maxAge: 600 } }))
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
const row = (/** @type {string} */ key) => {
  const all = runs[key]
  return { ms: median(all.map((x) => x.ms)), requests: all[0].requests, bytes: median(all.map((x) => x.bytes)), statuses: all[0].statuses }
}
const none = row('none')
const cold = row('cold')
const reopen = row('reopen')
const fresh = row('fresh')
const files = SHARDS + 1
const mb = (/** @type {number} */ n) => `${(n / 1e6).toFixed(2)} MB`
console.log('| open + loadHeaders | requests | body bytes | time |\n|---|---|---|---|')
for (const [label, x] of /** @type {const} */ ([['no cache', none], ['cache, first open', cold], ['cache, reopen (maxAge 0)', reopen],
  ['cache, reopen within maxAge', fresh]])) console.log(`| ${label} | ${x.requests} | ${mb(x.bytes)} | ${fmtMs(x.ms)} |`)

const revalidated = reopen.statuses.filter((s) => s === 304).length
figure({ area: 'cache', figure: `reopen ${SHARDS} shards + index: requests`, ours: `${reopen.requests} (${revalidated} answered 304)`,
  baselineName: 'no cache', baseline: String(none.requests), ratio: reopen.requests / none.requests,
  ratioText: `${reopen.requests} of ${none.requests}`, target: `one per file (${files}), each a 304`,
  met: reopen.requests === files && revalidated === files })
figure({ area: 'cache', figure: `reopen ${SHARDS} shards + index: body bytes`, ours: mb(reopen.bytes), baselineName: 'no cache',
  baseline: mb(none.bytes), ratio: none.bytes / Math.max(1, reopen.bytes), ratioText: reopen.bytes === 0 ? 'none' : fmtX(none.bytes / reopen.bytes),
  target: 'no body', met: reopen.bytes === 0 })
figure({ area: 'cache', figure: `reopen ${SHARDS} shards + index: time`, ours: fmtMs(reopen.ms), baselineName: 'no cache',
  baseline: fmtMs(none.ms), ratio: none.ms / reopen.ms, ratioText: `${fmtX(none.ms / reopen.ms)} faster`, target: '', met: null,
  note: `first open with the cache ${fmtMs(cold.ms)} (${fmtX(cold.ms / none.ms)} of no cache)` })
figure({ area: 'cache', figure: `reopen within maxAge: requests, time`, ours: `${fresh.requests}, ${fmtMs(fresh.ms)}`,
  baselineName: 'no cache', baseline: `${none.requests}, ${fmtMs(none.ms)}`, ratio: none.ms / fresh.ms,
  ratioText: `${fmtX(none.ms / fresh.ms)} faster`, target: 'no request', met: fresh.requests === 0 })
await server.close()
emitFigures()

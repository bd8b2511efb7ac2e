#!/usr/bin/env node
/**
 * Remote open and read against the targets: one round trip for the header, two for the header
 * plus any set of tensors, and bytes within the first request's window (P = 256 KiB) of the
 * exact need (8 + N + the tensors' bytes). A ~200 MB virtual file (as in bench/remote.js) is
 * served by the test server on 127.0.0.1 with 100 ms added before each answer. Round trips are
 * counted from the client's request start times: requests that start within one latency of
 * the first of their wave are one round trip (they are in flight together); a request that
 * starts later waited for an answer. Wall time is shown too.
 *   node bench/remote-targets.js [--latency 100]
 */
import { parseArgs } from 'node:util'
import { open } from '../js/node.js'
import { INITIAL_FETCH_SIZE } from '../js/io/http.js'
import { startServer } from '../tests/js/http-server.js'
import { emitFigures, figure, machine, virtualHeader } from './common.js'

const { values } = parseArgs({ options: { latency: { type: 'string', default: '100' } } })
const LATENCY = Number(values.latency)

/** 12 layers of F16 projections and F32 norms after an F16 embedding, like bench/remote.js. */
function virtualFile() {
  const tensors = [{ name: 'model.embed_tokens.weight', dtype: 'F16', shape: [8000, 1024] }]
  for (let l = 0; l < 12; l++) {
    const p = `model.layers.${l}.`
    tensors.push({ name: `${p}input_layernorm.weight`, dtype: 'F32', shape: [1024] },
      { name: `${p}mlp.down_proj.weight`, dtype: 'F16', shape: [1024, 2048] },
      { name: `${p}mlp.up_proj.weight`, dtype: 'F16', shape: [2048, 1024] },
      { name: `${p}post_attention_layernorm.weight`, dtype: 'F32', shape: [1024] },
      ...['k', 'o', 'q', 'v'].map((x) => ({ name: `${p}self_attn.${x}_proj.weight`, dtype: 'F16', shape: [1024, 1024] })))
  }
  const { prefix, sizes, dataLength: offset } = virtualHeader(tensors)
  const size = prefix.length + offset
  const content = {
    size,
    /** @param {Uint8Array} out @param {number} o */
    fill(out, o) {
      let i = 0
      for (; i < out.length && o + i < prefix.length; i++) out[i] = prefix[o + i]
      out.fill(0x3c, i)
    },
  }
  return { content, headerEnd: prefix.length, sizes }
}

async function main() {
  const server = await startServer({ lifetime: 10 * 60_000 })
  const file = virtualFile()
  server.addVirtual('/model.safetensors', file.content)
  const url = server.url('/model.safetensors')
  console.log(`remote targets: ${(file.content.size / 1e6).toFixed(0)} MB virtual file, header ${file.headerEnd} bytes, ` +
    `${LATENCY} ms added per request, P = ${INITIAL_FETCH_SIZE / 1024} KiB; ${machine()}`)
  const names = [...file.sizes.keys()]
  const sets = {
    'header only': [],
    '3 tensors far apart': ['model.layers.5.input_layernorm.weight', 'model.layers.5.self_attn.q_proj.weight', 'model.layers.11.mlp.down_proj.weight'],
    '12 scattered tensors': names.filter((n) => n.endsWith('q_proj.weight')),
    'every norm (25 tensors of 4 KB)': names.filter((n) => n.endsWith('norm.weight')),
  }
  await (await open(url)).close()  // warm-up: module, wasm, connections
  // The default concurrency (64) sends every span at once; capped at 6 (what a browser on
  // HTTP/1.1 allows per host) more than 6 spans take a round trip per 6.
  /** @type {[string, string[], number | undefined][]} */
  const cases = Object.entries(sets).map(([label, pick]) => [label, pick, undefined])
  cases.push(['every norm, concurrency 6', sets['every norm (25 tensors of 4 KB)'], 6])
  for (const [label, pick, concurrency] of cases) {
    server.setLatency(LATENCY)
    server.resetStats()
    /** @type {number[]} */
    const starts = []
    /** @type {typeof fetch} */
    const counting = (input, init) => { starts.push(performance.now()); return fetch(input, init) }
    const t0 = performance.now()
    const f = await open(url, { fetch: counting })
    if (pick.length) for (const t of (await f.load(pick, { concurrency })).values()) t.dispose()
    await f.close()
    const ms = performance.now() - t0
    await new Promise((r) => setTimeout(r, 50))  // let cancelled bodies settle
    const { requests, bytes, maxInFlight } = server.stats
    const need = file.headerEnd + pick.reduce((s, n) => s + /** @type {number} */ (file.sizes.get(n)), 0)
    let trips = 0
    let waveStart = -Infinity
    for (const t of starts) if (t - waveStart >= 0.9 * LATENCY) { trips++; waveStart = t }
    const wantTrips = pick.length ? 2 : 1
    figure({ area: 'remote', figure: `open${pick.length ? ` + load(${label})` : ''}: round trips`,
      ours: `${trips} (${requests} requests, ${maxInFlight} at once; ${ms.toFixed(0)} ms)`, baselineName: 'target', baseline: String(wantTrips),
      ratio: trips / wantTrips, ratioText: `${trips} of ${wantTrips}`,
      // The capped case shows a browser on HTTP/1.1; the target is for the defaults.
      target: concurrency ? '' : `${wantTrips} round trip${wantTrips > 1 ? 's' : ''}`, met: concurrency ? null : trips <= wantTrips })
    figure({ area: 'remote', figure: `open${pick.length ? ` + load(${label})` : ''}: bytes`, ours: bytes.toLocaleString('en-US'),
      baselineName: 'exact need', baseline: need.toLocaleString('en-US'), ratio: bytes / need,
      ratioText: `+${(bytes - need).toLocaleString('en-US')} bytes`, target: '<= need + P', met: bytes <= need + INITIAL_FETCH_SIZE })
  }
  await server.close()
  emitFigures()
}

await main()

// Remote reading against peers: requests, bytes and wall time to (a) read the header and (b) read
// the header and 3 tensors of a ~200 MB file (virtual: generated on demand, never stored), served
// by the test server on 127.0.0.1 with 50 ms added before each answer.
//   node bench/remote.js [--runs 5] [--latency 50]
// Peers: @huggingface/hub's parseSafetensorsMetadata (+ its downloadFile blob for the tensors),
// and a naive client that downloads the whole file.
import { parseArgs } from 'node:util'
import { downloadFile, parseSafetensorsMetadata } from '@huggingface/hub'
import { open } from '../js/node.js'
import { startServer } from '../tests/js/http-server.js'
import { virtualHeader } from './common.js'

const { values } = parseArgs({ options: { runs: { type: 'string', default: '5' }, latency: { type: 'string', default: '50' } } })
const RUNS = Number(values.runs)
const LATENCY = Number(values.latency)

/** A transformer-like layout: an F16 embedding, 12 layers of F16 projections and F32 norms. */
function layout() {
  const tensors = [{ name: 'model.embed_tokens.weight', dtype: 'F16', shape: [8000, 1024] }]
  for (let l = 0; l < 12; l++) {
    const p = `model.layers.${l}.`
    tensors.push(
      { name: `${p}input_layernorm.weight`, dtype: 'F32', shape: [1024] },
      { name: `${p}mlp.down_proj.weight`, dtype: 'F16', shape: [1024, 2048] },
      { name: `${p}mlp.up_proj.weight`, dtype: 'F16', shape: [2048, 1024] },
      { name: `${p}post_attention_layernorm.weight`, dtype: 'F32', shape: [1024] },
      ...['k', 'o', 'q', 'v'].map((x) => ({ name: `${p}self_attn.${x}_proj.weight`, dtype: 'F16', shape: [1024, 1024] })))
  }
  tensors.push({ name: 'model.norm.weight', dtype: 'F32', shape: [1024] })
  const { prefix, dataLength: offset } = virtualHeader(tensors)
  // Data bytes: a 1 MiB + 7 pattern, copied (fast enough that the server does not dominate).
  const pattern = new Uint8Array((1 << 20) + 7).map((_, i) => (i * 131 + 7) & 0xff)
  const size = prefix.length + offset
  return {
    size,
    content: {
      size,
      /** @param {Uint8Array} out @param {number} o */
      fill(out, o) {
        let i = 0
        for (; i < out.length && o + i < prefix.length; i++) out[i] = prefix[o + i]
        while (i < out.length) {
          const at = (o + i) % pattern.length
          const n = Math.min(out.length - i, pattern.length - at)
          out.set(pattern.subarray(at, at + n), i)
          i += n
        }
      },
    },
  }
}

const PICK = ['model.layers.5.input_layernorm.weight', 'model.layers.5.self_attn.q_proj.weight', 'model.layers.11.mlp.down_proj.weight']
const REPO = 'bench/model'
const PATH = 'model.safetensors'

const server = await startServer({ lifetime: 30 * 60_000 })
const file = layout()
server.addVirtual(`/${REPO}/resolve/main/${PATH}`, file.content)
const url = server.url(`/${REPO}/resolve/main/${PATH}`)
const hub = { repo: REPO, path: PATH, hubUrl: server.base }

/** @param {ArrayBuffer} buffer */
function parseHeaderOf(buffer) {
  const n = Number(new DataView(buffer, 0, 8).getBigUint64(0, true))
  return JSON.parse(new TextDecoder().decode(new Uint8Array(buffer, 8, n)))
}

/** @type {Record<string, Record<string, () => Promise<unknown>>>} */
const scenarios = {
  'header': {
    'safetensors-wasm': async () => {
      const f = /** @type {any} */ (await open(url))
      if (f.names.length !== 98) throw new Error('names')
    },
    'safetensors-wasm, P = 16 KiB': async () => {
      const f = /** @type {any} */ (await open(url, { initialFetchSize: 16 << 10 }))
      if (f.names.length !== 98) throw new Error('names')
    },
    '@huggingface/hub': async () => {
      const r = await parseSafetensorsMetadata(hub)
      if (r.sharded || Object.keys(r.header).length !== 99) throw new Error('header')
    },
    'whole download': async () => {
      const header = parseHeaderOf(await (await fetch(url)).arrayBuffer())
      if (Object.keys(header).length !== 99) throw new Error('header')
    },
  },
  'header + 3 tensors': {
    'safetensors-wasm': async () => {
      const f = /** @type {any} */ (await open(url))
      const m = await f.load(PICK)
      for (const t of m.values()) t.dispose()
    },
    'safetensors-wasm, P = 16 KiB': async () => {
      const f = /** @type {any} */ (await open(url, { initialFetchSize: 16 << 10 }))
      const m = await f.load(PICK)
      for (const t of m.values()) t.dispose()
    },
    '@huggingface/hub': async () => {
      const r = await parseSafetensorsMetadata(hub)
      if (r.sharded) throw new Error('sharded')
      const blob = /** @type {Blob} */ (await downloadFile(hub))
      const dataStart = 8 + Number(new DataView(await blob.slice(0, 8).arrayBuffer()).getBigUint64(0, true))
      await Promise.all(PICK.map((name) => {
        const [begin, end] = r.header[name].data_offsets
        return blob.slice(dataStart + begin, dataStart + end).arrayBuffer()
      }))
    },
    'whole download': async () => {
      const buffer = await (await fetch(url)).arrayBuffer()
      const header = parseHeaderOf(buffer)
      const dataStart = 8 + Number(new DataView(buffer, 0, 8).getBigUint64(0, true))
      for (const name of PICK) {
        const [begin, end] = header[name].data_offsets
        new Uint8Array(buffer, dataStart + begin, end - begin).slice()
      }
    },
  },
}

/** @param {number[]} xs */
const median = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)]

server.setLatency(LATENCY)
console.log(`file: ${(file.size / 1e6).toFixed(1)} MB (virtual), ${LATENCY} ms added per request, ` +
  `median of ${RUNS} runs, Node ${process.version}`)
console.log('| scenario | client | requests | bytes | wall ms | x requests | x bytes | x time |')
console.log('|---|---|---:|---:|---:|---:|---:|---:|')
for (const [scenario, clients] of Object.entries(scenarios)) {
  /** @type {{ requests: number, bytes: number, ms: number } | null} */
  let ours = null
  for (const [client, run] of Object.entries(clients)) {
    await run()  // warm-up (module loading, wasm compile, connection pool)
    const times = []
    let requests = 0
    let bytes = 0
    for (let i = 0; i < RUNS; i++) {
      server.resetStats()
      const t0 = performance.now()
      await run()
      times.push(performance.now() - t0)
      await new Promise((r) => setTimeout(r, 20))  // let cancelled bodies settle before counting
      requests = server.stats.requests
      bytes = server.stats.bytes
    }
    const row = { requests, bytes, ms: median(times) }
    ours ??= row
    const ratio = (/** @type {number} */ a, /** @type {number} */ b) => `${(a / b).toFixed(2)}`
    console.log(`| ${scenario} | ${client} | ${requests} | ${bytes.toLocaleString('en-US')} | ${row.ms.toFixed(0)} | ` +
      `${ratio(requests, ours.requests)} | ${ratio(bytes, ours.bytes)} | ${ratio(row.ms, ours.ms)} |`)
  }
}
await server.close()

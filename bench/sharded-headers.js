#!/usr/bin/env node
/**
 * Every shard header of a 282-shard set (issue 17, bench (b)): tests/js/sharded-fixtures.js's
 * glm282 (282 shards whose headers are 100,000 bytes, as GLM-5-NVFP4's; 60,000 names) served
 * by the test server with `--latency` ms before each answer, at hub-style paths
 * (`/{repo}/resolve/main/{path}`) so @huggingface/hub reads the same bytes from the same server.
 *   ours:  open(indexUrl), loadHeaders() and parameterCount() with default options, as an app
 *          calls them; also through `hf://` with `endpoint` set to the test server.
 *   hub:   parseSafetensorsMetadata({ path: index }), with and without computeParametersCount
 *          (which also asks for config.json: one more round trip).
 *   floors: the same bytes with nothing parsed (the index, then every shard's header at once,
 *          lengths known in advance), through fetch() and through node:http: what the transport
 *          alone costs here.
 * The target: at most 3 round trips' worth of latency plus transfer, transfer being our bytes
 * over the throughput measured in the same run (one large range request, no latency); and the
 * faster hub variant at least 3x our time. `--bandwidth` limits every answer's body together
 * to that many Mbit/s, as one network link would (loopback, over 7 Gbit/s here, by default).
 *
 * The server runs in a worker thread (`--server thread`, default), as a remote server's work is
 * not on the client's thread; `--server inline` runs it on the client's event loop, as
 * bench/remote.js does. Requests and body bytes are the server's counts.
 *   node bench/sharded-headers.js [--runs 3] [--latency 50] [--bandwidth 1000] [--server thread|inline]
 */
import { readFileSync } from 'node:fs'
import http from 'node:http'
import { loadavg } from 'node:os'
import { isMainThread, parentPort, Worker } from 'node:worker_threads'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'

const REPO = 'bench/glm282'
const FOLDER = `/${REPO}/resolve/main`
const INDEX = 'model.safetensors.index.json'
const THROUGHPUT_PATH = '/throughput.bin'
const THROUGHPUT_BYTES = 256 << 20
/** @typedef {{ cmd: string, ms?: number, bytesPerSecond?: number }} Command for the server: latency, bandwidth, reset, stats, close */

/** This thread's CPU time and time runnable but waiting for a CPU, in ms (Linux:
 * /proc/thread-self/schedstat, in ns), else NaN. */
function threadSched() {
  try {
    const [cpu, wait] = readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ').map((x) => Number(x) / 1e6)
    return { cpu, wait }
  } catch {
    return { cpu: NaN, wait: NaN }
  }
}

/**
 * The test server with the set and a large file for the throughput probe; `control` runs a
 * command (latency, reset, stats) and answers as the main thread's proxy expects.
 */
async function serve() {
  const { startServer } = await import('../tests/js/http-server.js')
  const { glm282, serveSet } = await import('../tests/js/sharded-fixtures.js')
  const server = await startServer({ lifetime: 60 * 60_000 })
  const set = glm282()
  const indexUrl = serveSet(server, set, { folder: FOLDER })
  const pattern = new Uint8Array(1 << 20).map((_, i) => (i * 131 + 7) & 0xff)
  server.addVirtual(THROUGHPUT_PATH, {
    size: THROUGHPUT_BYTES,
    fill(out, offset) {
      for (let i = 0; i < out.length;) {
        const at = (offset + i) % pattern.length
        const n = Math.min(out.length - i, pattern.length - at)
        out.set(pattern.subarray(at, at + n), i)
        i += n
      }
    },
  })
  /** @param {Command} m */
  const control = async (m) => {
    if (m.cmd === 'latency') server.setLatency(/** @type {number} */ (m.ms))
    else if (m.cmd === 'bandwidth') server.setBandwidth(/** @type {number} */ (m.bytesPerSecond))
    else if (m.cmd === 'reset') server.resetStats()
    else if (m.cmd === 'close') await server.close()
    const { requests, bytes, maxInFlight } = server.stats
    return { requests, bytes, maxInFlight }
  }
  // Each used shard's URL and the length of its 8-byte prefix plus header, for the floors.
  const heads = set.allShardPaths.flatMap((path, i) => {
    if (!set.shardPaths.includes(path)) return []
    const b = set.shardBytes(i)
    return [{ url: server.url(`${FOLDER}/${path}`), bytes: 8 + Number(new DataView(b.buffer, b.byteOffset).getBigUint64(0, true)) }]
  })
  return {
    base: server.base, indexUrl, throughputUrl: server.url(THROUGHPUT_PATH), control,
    set: { shards: set.shardPaths.length, names: set.names.length, parameters: set.parameters, indexBytes: set.indexBytes.length, heads },
  }
}

if (!isMainThread) {
  const s = await serve()
  const port = /** @type {import('node:worker_threads').MessagePort} */ (parentPort)
  port.on('message', async (/** @type {Command & { id: number }} */ m) => {
    port.postMessage({ id: m.id, result: await s.control(m) })
  })
  port.postMessage({ ready: { base: s.base, indexUrl: s.indexUrl, throughputUrl: s.throughputUrl, set: s.set } })
} else {
  await main()
}

/** A server in a worker thread, driven by messages. */
async function serveInWorker() {
  const worker = new Worker(fileURLToPath(import.meta.url))
  /** @type {Map<number, (r: any) => void>} */
  const waiting = new Map()
  let next = 0
  const ready = await new Promise((resolve, reject) => {
    worker.once('error', reject)
    worker.on('message', (m) => {
      if (m.ready) resolve(m.ready)
      else waiting.get(m.id)?.(m.result), waiting.delete(m.id)
    })
  })
  /** @param {Command} m */
  const control = (m) => new Promise((resolve) => {
    waiting.set(++next, resolve)
    worker.postMessage({ id: next, ...m })
  })
  return { ...ready, control, stop: async () => { await control({ cmd: 'close' }); await worker.terminate() } }
}

async function main() {
  const { values } = parseArgs({ options: {
    runs: { type: 'string', default: '3' }, latency: { type: 'string', default: '50' },
    bandwidth: { type: 'string', default: '0' }, server: { type: 'string', default: 'thread' },
  } })
  const RUNS = Number(values.runs)
  const LATENCY = Number(values.latency)
  const MBIT = Number(values.bandwidth)
  const CONDITIONS = `${LATENCY} ms latency${MBIT ? `, ${MBIT} Mbit/s` : ''}`
  const { parseSafetensorsMetadata } = await import('@huggingface/hub')
  const { open } = await import('../js/node.js')
  const { emitFigures, figure, fmtMs, fmtX, machine, median } = await import('./common.js')

  const server = values.server === 'inline' ? { ...(await serve()), stop: async () => {} } : await serveInWorker()
  const { base, indexUrl, throughputUrl, set } = server
  /** @param {Command} m @returns {Promise<{ requests: number, bytes: number, maxInFlight: number }>} */
  const control = (m) => /** @type {any} */ (server.control(m))

  /** @param {string | URL} src @param {Record<string, any>} [options] */
  const ours = async (src, options) => {
    const f = /** @type {import('../js/node.js').ShardedFile} */ (/** @type {unknown} */ (await open(src, options)))
    await f.loadHeaders()
    const { total } = await f.parameterCount()
    await f.close()
    if (total !== set.parameters) throw new Error(`parameterCount ${total}, expected ${set.parameters}`)
  }
  /** @param {boolean} count */
  const hub = async (count) => {
    const r = await parseSafetensorsMetadata({ repo: REPO, path: INDEX, hubUrl: base, computeParametersCount: count })
    if (!r.sharded || Object.keys(r.headers).length !== set.shards) throw new Error('hub: not every shard header')
    const counted = Object.values(r.parameterCount ?? {}).reduce((a, b) => a + b, 0)
    if (count && counted !== set.parameters) throw new Error(`hub: ${counted} parameters, expected ${set.parameters}`)
  }
  /**
   * A floor: the same bytes over the same server with nothing parsed and no request waiting on
   * another but the headers on the index: the index's body, then every shard's prefix and header
   * (lengths known in advance) at once, read to the end. `get` is one request's transport.
   * @param {(url: string, bytes: number) => Promise<number>} get resolves to the body bytes read
   */
  const floor = async (get) => {
    const indexBytes = await get(indexUrl, set.indexBytes)
    const counts = await Promise.all(set.heads.map((h) => get(h.url, h.bytes)))
    const want = set.indexBytes + set.heads.reduce((a, h) => a + h.bytes, 0)
    const got = indexBytes + counts.reduce((a, b) => a + b, 0)
    if (got !== want) throw new Error(`floor: ${got} bytes, expected ${want}`)
  }
  /** @param {string} url @param {number} bytes */
  const viaFetch = async (url, bytes) => {
    const res = await fetch(url, { headers: { Range: `bytes=0-${bytes - 1}` } })
    return (await res.arrayBuffer()).byteLength
  }
  const agent = new http.Agent({ keepAlive: true, maxSockets: 512 })
  /** @param {string} url @param {number} bytes @returns {Promise<number>} */
  const viaHttp = (url, bytes) => new Promise((resolve, reject) => {
    http.get(url, { agent, headers: { Range: `bytes=0-${bytes - 1}` } }, (res) => {
      let n = 0
      res.on('data', (/** @type {Buffer} */ c) => { n += c.length })
      res.on('end', () => resolve(n))
      res.on('error', reject)
    }).on('error', reject)
  })
  /** @type {Record<string, () => Promise<void>>} */
  const clients = {
    'safetensors-wasm: open(url) + loadHeaders() + parameterCount()': () => ours(indexUrl),
    'safetensors-wasm: the same through hf://': () => ours(`hf://${REPO}/${INDEX}`, { endpoint: base }),
    '@huggingface/hub: parseSafetensorsMetadata': () => hub(false),
    '@huggingface/hub: parseSafetensorsMetadata, computeParametersCount': () => hub(true),
    'floor: fetch() of the same bytes, all headers at once, nothing parsed': () => floor(viaFetch),
    'floor: node:http of the same bytes, all headers at once, nothing parsed': () => floor(viaHttp),
  }
  const keys = Object.keys(clients)

  // A limited link is probed with about a second of its bytes.
  const probeBytes = MBIT ? Math.min(THROUGHPUT_BYTES, Math.max(16 << 20, MBIT * 125_000)) : THROUGHPUT_BYTES
  /** The throughput: one range request of probeBytes, no latency; best of 3, bytes/ms. */
  async function throughput() {
    await control({ cmd: 'latency', ms: 0 })
    let best = Infinity
    for (let i = 0; i < 3; i++) {
      const t0 = performance.now()
      const res = await fetch(throughputUrl, { headers: { Range: `bytes=0-${probeBytes - 1}` } })
      const reader = /** @type {ReadableStream<Uint8Array>} */ (res.body).getReader()
      let n = 0
      for (let r = await reader.read(); !r.done; r = await reader.read()) n += r.value.length
      if (n !== probeBytes) throw new Error(`throughput probe: ${n} bytes`)
      best = Math.min(best, performance.now() - t0)
    }
    return probeBytes / best
  }

  console.log(`sharded headers: ${set.shards} shards, ${set.names.toLocaleString('en-US')} names, 100,000-byte headers, ` +
    `index ${(set.indexBytes / 1e6).toFixed(2)} MB; ${LATENCY} ms added per request; ${MBIT ? `a ${MBIT} Mbit/s link` : 'loopback'}; server in ${values.server === 'inline' ? 'the client\'s thread' : 'a worker thread'}; ` +
    `median of ${RUNS} runs; ${machine()}, load average ${loadavg()[0].toFixed(1)}`)
  await control({ cmd: 'bandwidth', bytesPerSecond: MBIT * 125_000 })
  for (const key of keys) await clients[key]()  // warm-up: modules, wasm, shard bytes built, connections
  const bytesPerMs = await throughput()
  console.log(`throughput (one ${probeBytes >> 20} MiB range request): ${(bytesPerMs / 1e6).toFixed(2)} GB/s`)

  // Where a run's wall time goes, on the client's thread: CPU; waiting for answers (the event
  // loop idle); runnable but not running (other processes had the CPU).
  /** @typedef {{ ms: number, cpu: number, wait: number, idle: number }} Sample */
  /** @type {Record<string, { samples: Sample[], requests: number, bytes: number, maxInFlight: number }>} */
  const rows = Object.fromEntries(keys.map((k) => [k, { samples: [], requests: 0, bytes: 0, maxInFlight: 0 }]))
  /** @param {() => Promise<void>} run @returns {Promise<Sample>} */
  const timed = async (run) => {
    const elu = performance.eventLoopUtilization()
    const before = threadSched()
    const t0 = performance.now()
    await run()
    const ms = performance.now() - t0
    const after = threadSched()
    return { ms, cpu: after.cpu - before.cpu, wait: after.wait - before.wait, idle: performance.eventLoopUtilization(elu).idle }
  }
  await control({ cmd: 'latency', ms: LATENCY })
  for (let r = 0; r < RUNS; r++) {
    for (const key of keys) {  // interleaved, so a burst of load hits every client alike
      await control({ cmd: 'reset' })
      rows[key].samples.push(await timed(clients[key]))
      await new Promise((resolve) => setTimeout(resolve, 50))  // cancelled bodies counted
      Object.assign(rows[key], await control({ cmd: 'stats' }))
    }
  }
  // Ours without latency: what is left is our CPU and the transfer.
  await control({ cmd: 'latency', ms: 0 })
  /** @type {Sample[]} */
  const bare = []
  for (let r = 0; r < RUNS; r++) bare.push(await timed(clients[keys[0]]))
  await server.stop()

  /** @param {Sample[]} samples @param {keyof Sample} field */
  const med = (samples, field) => median(samples.map((x) => x[field]))
  const ms = (/** @type {string} */ k) => med(rows[k].samples, 'ms')
  /** @param {Sample[]} samples */
  const split = (samples) => {
    const cpu = med(samples, 'cpu')
    const idle = med(samples, 'idle')
    return Number.isNaN(cpu) ? `waiting ${fmtMs(idle)}` : `CPU ${fmtMs(cpu)}, waiting ${fmtMs(idle)}, descheduled ${fmtMs(med(samples, 'wait'))}`
  }
  console.log('| client | requests | most at once | body bytes | wall | / latency | transfer (bytes / throughput) | client thread | hub time / ours |')
  console.log('|---|---:|---:|---:|---:|---:|---:|---|---:|')
  for (const key of keys) {
    const row = rows[key]
    console.log(`| ${key} | ${row.requests} | ${row.maxInFlight} | ${row.bytes.toLocaleString('en-US')} | ${fmtMs(ms(key))} | ` +
      `${(ms(key) / LATENCY).toFixed(1)} | ${fmtMs(row.bytes / bytesPerMs)} | ${split(row.samples)} | ` +
      `${key.startsWith('@') ? fmtX(ms(key) / ms(keys[0])) : ''} |`)
  }
  console.log(`safetensors-wasm at 0 ms latency: ${fmtMs(med(bare, 'ms'))} (${split(bare)})`)
  console.log('client thread: CPU, its CPU time; waiting, its event loop idle (no answer to handle); descheduled, ' +
    'runnable but without a CPU (other processes had it; /proc/thread-self/schedstat)')

  // What a run would take with the CPU to itself: the wall time less the time runnable without
  // a CPU (an estimate: the same work, nothing else changed).
  const own = (/** @type {string} */ k) => ms(k) - (med(rows[k].samples, 'wait') || 0)
  const mine = rows[keys[0]]
  const transfer = mine.bytes / bytesPerMs
  const bound = 3 * LATENCY + transfer
  figure({ area: 'sharded-headers', figure: `${set.shards} shard headers (open + loadHeaders + parameterCount), ${CONDITIONS}`,
    ours: `${fmtMs(ms(keys[0]))}, ${mine.requests} requests, ${(mine.bytes / 1e6).toFixed(1)} MB`,
    baselineName: '3 round trips + transfer', baseline: `${fmtMs(bound)} (${fmtMs(3 * LATENCY)} + ${fmtMs(transfer)})`,
    ratio: bound / ms(keys[0]), ratioText: `${(ms(keys[0]) / LATENCY).toFixed(1)} round trips' worth, ` +
      `${((ms(keys[0]) - transfer) / LATENCY).toFixed(1)} without the transfer`,
    target: '<= 3 round trips + transfer', met: ms(keys[0]) <= bound, note: `client thread: ${split(mine.samples)}; less the descheduled time ${fmtMs(own(keys[0]))} ` +
      `(${(own(keys[0]) / LATENCY).toFixed(1)} round trips' worth); ${fmtMs(med(bare, 'ms'))} at 0 ms latency; load average ${loadavg()[0].toFixed(1)}` })
  // What the transport alone costs against the bound: a bound below the floor cannot be met
  // by any client on that transport on this machine.
  const [viaFetchKey, viaHttpKey] = keys.filter((k) => k.startsWith('floor:'))
  figure({ area: 'sharded-headers', figure: `${set.shards} shard headers, ${CONDITIONS}: the transport alone (no parsing)`,
    ours: `fetch() ${fmtMs(ms(viaFetchKey))}, node:http ${fmtMs(ms(viaHttpKey))}`,
    baselineName: '3 round trips + transfer', baseline: fmtMs(bound), ratio: bound / ms(viaFetchKey),
    ratioText: `fetch() alone takes ${fmtX(ms(viaFetchKey) / bound)} the bound, node:http alone ${fmtX(ms(viaHttpKey) / bound)}; ` +
      `ours takes ${fmtX(ms(keys[0]) / ms(viaFetchKey))} fetch() alone`,
    target: '', met: null, note: `client thread, fetch() alone: ${split(rows[viaFetchKey].samples)}; node:http alone: ${split(rows[viaHttpKey].samples)}` })
  const hubKeys = keys.filter((k) => k.startsWith('@'))
  const fastest = hubKeys.reduce((a, b) => (ms(a) <= ms(b) ? a : b))
  const speedup = ms(fastest) / ms(keys[0])
  figure({ area: 'sharded-headers', figure: `${set.shards} shard headers, ${CONDITIONS}: vs @huggingface/hub`,
    ours: fmtMs(ms(keys[0])), baselineName: fastest.replace('@huggingface/hub: ', '@huggingface/hub '),
    baseline: `${fmtMs(ms(fastest))}, ${rows[fastest].requests} requests, ${(rows[fastest].bytes / 1e6).toFixed(1)} MB`,
    ratio: speedup, ratioText: `${fmtX(speedup)} faster`, target: '>= 3x', met: speedup >= 3,
    note: `less each one's descheduled time: ${fmtMs(own(fastest))} vs ${fmtMs(own(keys[0]))}, ${fmtX(own(fastest) / own(keys[0]))}` })
  emitFigures()
}

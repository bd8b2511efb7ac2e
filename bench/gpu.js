#!/usr/bin/env node
/**
 * Every tensor of a 1 GiB file to WebGPU in headless Chromium (SwiftShader's WebGPU: the memory
 * figures are the point; its writeBuffer is a memcpy), two ways, interleaved in one run:
 *   toGPU  f = await open(url); await f.toGPU(device) (js/gpu/upload.js: each tensor streamed
 *          through two heap chunks into writeBuffer)
 *   plain  fetch(url) -> arrayBuffer() -> JSON header -> writeBuffer of each tensor's range
 * Each run ends when the queue has done the writes (onSubmittedWorkDone). Measured: the time
 * (throughput), the wasm heap in use at its peak over the run's start (sampled at every
 * writeBuffer; the plain path never touches the heap) and the page's peak JS memory over the
 * run's start (CDP Runtime.getHeapUsage: the JS heap plus ArrayBuffer backing stores, polled).
 * The file is generated on demand by a local server on another loopback origin (never stored).
 * Targets (issue 16): toGPU's peak wasm heap at most 2 chunks + the header; at least 0.8x the
 * plain path's throughput.
 *   node bench/gpu.js [--mib 1024] [--rounds 3] [--chunk-mib 4]
 */
import { parseArgs } from 'node:util'
import { launchChromium, skip } from '../tests/browser/chromium.js'
import { startServer as startAppServer } from '../tests/servers/static-server.js'
import { startServer as startDataServer } from '../tests/js/http-server.js'
import { emitFigures, figure, fmtGBs, fmtMs, fmtX, machine, median, virtualHeader } from './common.js'

const { values } = parseArgs({ options: {
  mib: { type: 'string', default: '1024' }, rounds: { type: 'string', default: '3' }, 'chunk-mib': { type: 'string', default: '4' },
} })
const MIB = 1 << 20
const ROUNDS = Number(values.rounds)
const CHUNK = Number(values['chunk-mib']) * MIB
const PAGE = '/bench/gpu/page.html'
const FILE = '/gpu/model.safetensors'

/** The page: the browser entry as an app imports it, and the core's heap in use for the samples. */
const PAGE_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>toGPU bench</title></head><body>
<script type="module">
  import { open } from '/js/index.js'
  import { loadCore } from '/js/wasm.js'
  const core = await loadCore()
  const adapter = await navigator.gpu?.requestAdapter()
  const device = adapter && await adapter.requestDevice({ requiredLimits: {
    maxBufferSize: adapter.limits.maxBufferSize, maxStorageBufferBindingSize: adapter.limits.maxStorageBufferBindingSize } })
  globalThis.bench = { open, core, device }
  globalThis.ready = adapter ? 'ok' : 'no WebGPU adapter'
</script></body></html>`

/**
 * A model-like file of about `mib` MiB: an F16 embedding [8192, 4096] (64 MiB), then layers of
 * an F16 [4096, 4096] weight (32 MiB) and an F32 norm [4096].
 * @param {number} mib
 */
function layout(mib) {
  const tensors = [{ name: 'model.embed_tokens.weight', dtype: 'F16', shape: [8192, 4096] }]
  for (let i = 0; i < Math.max(1, Math.round((mib - 64) / 32)); i++) {
    tensors.push({ name: `model.layers.${i}.mlp.weight`, dtype: 'F16', shape: [4096, 4096] })
    tensors.push({ name: `model.layers.${i}.norm.weight`, dtype: 'F32', shape: [4096] })
  }
  return virtualHeader(tensors)
}

/** @typedef {{ ms: number, bytes: number, wasmPeak: number, heapSize: number, writes: number, jsPeak: number }} Run */

/**
 * One upload in the page; the page's JS memory polled over CDP meanwhile.
 * @param {import('playwright-core').Page} page @param {import('playwright-core').CDPSession} cdp
 * @param {'toGPU' | 'plain'} mode @param {string} url
 * @returns {Promise<Run>}
 */
async function runOnce(page, cdp, mode, url) {
  await cdp.send('HeapProfiler.collectGarbage')
  const usage = async () => {
    const u = /** @type {any} */ (await cdp.send('Runtime.getHeapUsage'))
    return u.usedSize + (u.backingStorageSize ?? 0)
  }
  const base = await usage()
  let peak = base
  let polling = true
  const poller = (async () => {
    while (polling) {
      peak = Math.max(peak, await usage())
      await new Promise((r) => setTimeout(r, 5))
    }
  })()
  try {
    const r = await page.evaluate(async ({ mode, url, chunkBytes }) => {
      const { open, core, device } = /** @type {any} */ (globalThis).bench
      const queue = device.queue
      const before = core.heapInUse()
      let wasmPeak = before
      let writes = 0
      const write = queue.writeBuffer
      queue.writeBuffer = (/** @type {any[]} */ ...args) => {
        wasmPeak = Math.max(wasmPeak, core.heapInUse())
        writes++
        return write.apply(queue, args)
      }
      /** @type {any[]} */
      let buffers = []
      let bytes = 0
      const t0 = performance.now()
      try {
        if (mode === 'toGPU') {
          const f = await open(url)
          const map = await f.toGPU(device, undefined, { chunkBytes })
          buffers = [...map.values()]
          await f.close()
        } else {
          const ab = await (await fetch(url)).arrayBuffer()
          const n = Number(new DataView(ab).getBigUint64(0, true))
          const header = JSON.parse(new TextDecoder().decode(new Uint8Array(ab, 8, n)))
          for (const [name, t] of Object.entries(header)) {
            if (name === '__metadata__') continue
            const [begin, end] = /** @type {any} */ (t).data_offsets
            const size = Math.ceil((end - begin) / 4) * 4
            const buffer = device.createBuffer({ label: name, size, usage: 0x80 | 0x8 | 0x4 })
            buffers.push(buffer)
            queue.writeBuffer(buffer, 0, ab, 8 + n + begin, size)
          }
        }
        await queue.onSubmittedWorkDone()
        const ms = performance.now() - t0
        for (const b of buffers) bytes += b.size
        return { ms, bytes, wasmPeak: wasmPeak - before, heapSize: core.HEAPU8.length, writes }
      } finally {
        queue.writeBuffer = write
        for (const b of buffers) b.destroy()
      }
    }, { mode, url, chunkBytes: CHUNK })
    polling = false
    await poller
    peak = Math.max(peak, await usage())
    return { ...r, jsPeak: peak - base }
  } finally {
    polling = false
    await poller
  }
}

/** @param {number} bytes */
const fmtMiB = (bytes) => `${(bytes / MIB).toFixed(1)} MiB`

async function main() {
  if (skip) {
    console.log(`gpu: skipped, ${skip}`)
    emitFigures()
    return
  }
  const { prefix, dataLength } = layout(Number(values.mib))
  const size = prefix.length + dataLength
  // Bytes that are neither zero nor one repeated value: 1 MiB of a xorshift stream, repeated.
  const pattern = new Uint8Array(MIB)
  for (let i = 0, s = 0x9e3779b9; i < pattern.length; i++) {
    s ^= s << 13; s ^= s >>> 17; s ^= s << 5
    pattern[i] = s & 255
  }
  const data = await startDataServer({ lifetime: 3_600_000 })
  data.addVirtual(FILE, {
    size,
    fill: (out, offset) => {
      for (let done = 0; done < out.length;) {
        const at = offset + done
        if (at < prefix.length) {
          const n = Math.min(out.length - done, prefix.length - at)
          out.set(prefix.subarray(at, at + n), done)
          done += n
          continue
        }
        const p = (at - prefix.length) % MIB
        const n = Math.min(out.length - done, MIB - p)
        out.set(pattern.subarray(p, p + n), done)
        done += n
      }
    },
  })
  const app = await startAppServer()
  app.addFile(PAGE, new TextEncoder().encode(PAGE_HTML))
  const browser = await launchChromium({ webgpu: true })
  try {
    const page = await browser.newPage()
    await page.goto(app.url(PAGE))
    await page.waitForFunction(() => /** @type {any} */ (globalThis).ready !== undefined, undefined, { timeout: 30_000 })
    const ready = await page.evaluate(() => /** @type {any} */ (globalThis).ready)
    if (ready !== 'ok') {
      console.log(`gpu: skipped, ${ready} (Chromium launched with SwiftShader's Vulkan)`)
      emitFigures()
      return
    }
    const cdp = await page.context().newCDPSession(page)
    const url = data.url(FILE)
    console.log(`every tensor of a ${fmtMiB(size)} file (${Math.round(dataLength / MIB)} MiB of tensors, header ${prefix.length} bytes) ` +
      `to WebGPU in Chromium (SwiftShader), toGPU (chunks of ${fmtMiB(CHUNK)}) vs fetch -> arrayBuffer -> writeBuffer, ` +
      `${ROUNDS} rounds interleaved; ${machine()}`)
    /** @type {Record<'toGPU' | 'plain', Run[]>} */
    const runs = { toGPU: [], plain: [] }
    // A first, untimed round of each warms the page (the core, the kernels of writeBuffer).
    for (let round = -1; round < ROUNDS; round++) {
      for (const mode of /** @type {const} */ (['toGPU', 'plain'])) {
        const r = await runOnce(page, cdp, mode, url)
        if (round >= 0) runs[mode].push(r)
        console.log(`  ${round < 0 ? 'warm-up' : `round ${round + 1}`} ${mode}: ${fmtMs(r.ms)} (${fmtGBs(r.bytes, r.ms)}), ` +
          `wasm heap +${fmtMiB(r.wasmPeak)} (heap ${fmtMiB(r.heapSize)}), JS memory +${fmtMiB(r.jsPeak)}, ${r.writes} writes`)
      }
    }
    const ms = (/** @type {Run[]} */ rs) => median(rs.map((r) => r.ms))
    const max = (/** @type {Run[]} */ rs, /** @type {'wasmPeak' | 'jsPeak'} */ k) => Math.max(...rs.map((r) => r[k]))
    const bytes = runs.toGPU[0].bytes
    const [ours, plain] = [ms(runs.toGPU), ms(runs.plain)]
    const bound = 2 * CHUNK + prefix.length
    const wasm = max(runs.toGPU, 'wasmPeak')
    const js = { ours: max(runs.toGPU, 'jsPeak'), plain: max(runs.plain, 'jsPeak') }
    figure({ area: 'gpu', figure: `toGPU of a ${fmtMiB(size)} file: peak wasm heap (chunks of ${fmtMiB(CHUNK)})`, ours: fmtMiB(wasm),
      baselineName: 'plain path\'s peak JS memory', baseline: fmtMiB(js.plain), ratio: js.plain / Math.max(wasm, 1),
      ratioText: `${fmtX(js.plain / Math.max(wasm, 1))} less`, target: `<= 2 chunks + header (${fmtMiB(bound)})`, met: wasm <= bound })
    figure({ area: 'gpu', figure: `toGPU of a ${fmtMiB(size)} file: peak JS memory (heap + ArrayBuffers)`, ours: fmtMiB(js.ours),
      baselineName: 'fetch -> arrayBuffer -> writeBuffer', baseline: fmtMiB(js.plain), ratio: js.plain / Math.max(js.ours, 1),
      ratioText: `${fmtX(js.plain / Math.max(js.ours, 1))} less`, target: '', met: null })
    figure({ area: 'gpu', figure: `toGPU of a ${fmtMiB(size)} file: throughput`, ours: `${fmtMs(ours)} (${fmtGBs(bytes, ours)})`,
      baselineName: 'fetch -> arrayBuffer -> writeBuffer', baseline: `${fmtMs(plain)} (${fmtGBs(bytes, plain)})`, ratio: plain / ours,
      ratioText: `${fmtX(plain / ours)} the plain path's`, target: '>= 0.8x', met: plain / ours >= 0.8 })
  } finally {
    await browser.close()
    await app.close()
    await data.close()
  }
  emitFigures()
}

await main()

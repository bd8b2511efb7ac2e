// f.toGPU() in headless Chromium with WebGPU on SwiftShader, used as an app uses it: a page on
// origin A imports the browser entry (/js/index.js, default options) and uploads tensors of
// files served by origin B (tests/js/http-server.js: CORS and Range); the test maps every GPU
// buffer back (a copy into a MAP_READ buffer) and compares its bytes with what the Node entry
// reads from the same file: stored bytes, the F32 and F16 conversions, quantized weights
// dequantized. The page's test-only hook (/js/wasm.js and /js/core/index.js, the same module
// instances as the entry's) samples the heap in use at every writeBuffer: its high-water mark
// must stay under two chunks plus the header. A module worker (an app's loader off the main
// thread: WebGPU's navigator.gpu is there too) uploads with default options as well, maps its
// buffers back and hashes them there. Skips, saying why, where Chromium gives no adapter.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { castTensor, open, serialize } from '../../js/node.js'
import { startServer as startAppServer } from '../servers/static-server.js'
import { startServer as startDataServer } from '../js/http-server.js'
import { fixtures as quantFixtures, toBytes } from '../js/quant-fixtures.js'
import { launchChromium, skip } from './chromium.js'

const PAGE = '/tests/browser/gpu/page.html'
const TIMEOUT = 60_000
/** The page: the entry, and the hook a test needs (the core's heap in use), nothing else. */
const PAGE_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>toGPU</title></head><body>
<script type="module">
  import { open } from '/js/index.js'
  import { loadCore } from '/js/wasm.js'
  import { heapInUse } from '/js/core/index.js'
  const core = await loadCore()
  globalThis.st = { open, heapInUse: () => heapInUse(core) }
  globalThis.ready = true
</script></body></html>`

/** The module worker an app would start: the entry, default options, nothing of the test's. */
const WORKER = '/tests/browser/gpu/worker.js'
/** Gets { url, byteLengths }: opens the file, uploads every tensor with toGPU's defaults, copies
 * each buffer into a MAP_READ one, maps it and hashes its first byteLength bytes (the rest must be
 * zero padding); posts { names, buffers } or { error }. (Playwright reports a dedicated worker's
 * console on its page: the page's listener sees a console error of the worker.) */
const WORKER_JS = `import { open } from '/js/index.js'
const hex = (bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')
self.onmessage = async (event) => {
  const { url, byteLengths } = event.data
  try {
    if (!('gpu' in navigator)) throw new Error('navigator.gpu is missing in the module worker')
    const adapter = await navigator.gpu.requestAdapter()
    if (!adapter) throw new Error('navigator.gpu.requestAdapter() gave no adapter in the module worker')
    const device = await adapter.requestDevice()
    const errors = []
    device.addEventListener('uncapturederror', (e) => errors.push(e.error.message))
    const f = await open(url)
    const names = f.names
    const map = await f.toGPU(device, names)
    const buffers = {}
    for (const [name, buffer] of map) {
      const read = device.createBuffer({ size: buffer.size, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST })
      const encoder = device.createCommandEncoder()
      encoder.copyBufferToBuffer(buffer, 0, read, 0, buffer.size)
      device.queue.submit([encoder.finish()])
      await read.mapAsync(GPUMapMode.READ)
      const bytes = new Uint8Array(read.getMappedRange())
      const byteLength = byteLengths[name]
      const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes.slice(0, byteLength)))
      buffers[name] = { byteLength, size: buffer.size, usage: buffer.usage, paddingZero: bytes.subarray(byteLength).every((b) => b === 0), sha256: hex(digest) }
      read.unmap()
      read.destroy()
      buffer.destroy()
    }
    await f.close()
    device.destroy()
    if (errors.length > 0) throw new Error('WebGPU validation errors: ' + errors.join('; '))
    self.postMessage({ names, buffers })
  } catch (error) {
    self.postMessage({ error: { code: error?.code, message: String(error?.message ?? error) } })
  }
}
`

/** @typedef {import('../../js/index.js').SafetensorsFile} SafetensorsFile */

/** @type {Awaited<ReturnType<typeof startAppServer>>} */
let app
/** @type {Awaited<ReturnType<typeof startDataServer>>} */
let data
/** @type {import('playwright-core').Browser} */
let browser
/** @type {import('playwright-core').Page} */
let page
/** Why the tests skip, once Chromium is up: no WebGPU adapter. @type {string | false} */
let noAdapter = false
/** @type {string[]} */
const pageErrors = []

const sha256 = (/** @type {ArrayBufferView} */ v) => createHash('sha256').update(new Uint8Array(v.buffer, v.byteOffset, v.byteLength)).digest('hex')

/** Tensors of odd sizes and several dtypes (lengths that are not multiples of 4 included). */
function mixedFile() {
  const bytes = (/** @type {number} */ n, /** @type {number} */ seed) => new Uint8Array(n).map((_, i) => (i * seed + 11) & 255)
  // Finite values for the float dtypes, so that any conversion is exact to compare.
  const f32 = Float32Array.from({ length: 70_001 }, (_, i) => Math.sin(i) * 1000)
  const bf16 = new Uint16Array(300_003).map((_, i) => 0x3f80 + (i % 0x7f) - ((i & 1) << 15))
  const f16 = new Uint16Array(1_001).map((_, i) => 0x3c00 + (i % 0x3ff))
  const i8 = new Int8Array(bytes(4099, 7).buffer)
  /** @type {Record<string, { dtype: any, shape: number[], data: ArrayBufferView }>} */
  const tensors = {
    'w.f32': { dtype: 'F32', shape: [70_001], data: f32 },
    'w.bf16': { dtype: 'BF16', shape: [3, 100_001], data: bf16 },
    'w.f16': { dtype: 'F16', shape: [7, 143], data: f16 },
    'w.u8': { dtype: 'U8', shape: [7], data: bytes(7, 13) },
    'w.i8': { dtype: 'I8', shape: [4099], data: i8 },
    'w.f8': { dtype: 'F8_E4M3', shape: [9, 9], data: bytes(81, 5).map((b) => b & 0x77) },
    'w.bool': { dtype: 'BOOL', shape: [3], data: new Uint8Array([1, 0, 1]) },
    'w.empty': { dtype: 'F32', shape: [0, 4], data: new Float32Array(0) },
  }
  return serialize(tensors, { metadata: { note: 'tests/browser/gpu.test.js' } })
}

/** What the Node entry reads: per tensor, the stored bytes' and toFloat32()'s and F16 cast's SHA-256. */
const expected = /** @type {{ mixed: Record<string, { byteLength: number, bytes: string, f32?: string, f16?: string }>,
  quant: Record<string, Record<string, { byteLength: number, f32: string, f16: string }>>, headerLength: number, bigHeader: number }} */ ({ mixed: {}, quant: {} })

/** The quantized fixtures uploaded (one of each kind of plan: by rows, by inputs, by blocks). */
const QUANT = ['fp8', 'gptq4', 'bnb-nf4-nested', 'mxfp4']
/** Tensors over the device's default maxStorageBufferBindingSize (128 MiB), and maxBufferSize (256 MiB). */
const BIG = { name: 'big', overStorage: 200 * 1024 * 1024, overBuffer: 300 * 1024 * 1024 }
const bigPath = (/** @type {number} */ bytes) => `/big/${bytes}.safetensors`

/** A file of one zero F32 tensor of `bytes` bytes, made on demand by the data server (never stored). @param {number} bytes */
function virtualBig(bytes) {
  const json = new TextEncoder().encode(JSON.stringify({ [BIG.name]: { dtype: 'F32', shape: [bytes / 4], data_offsets: [0, bytes] } }))
  const n = Math.ceil(json.length / 8) * 8
  const head = new Uint8Array(8 + n).fill(0x20)
  new DataView(head.buffer).setBigUint64(0, BigInt(n), true)
  head.set(json, 8)
  expected.bigHeader = head.length
  return {
    size: head.length + bytes,
    fill: (/** @type {Uint8Array} */ out, /** @type {number} */ offset) => {
      out.fill(0)
      if (offset < head.length) out.set(head.subarray(offset, offset + out.length))
    },
  }
}

before(async () => {
  if (skip) return
  const mixed = await mixedFile()
  const f = /** @type {SafetensorsFile} */ (await open(mixed))
  expected.headerLength = 8 + f.headerLength
  for (const name of f.names) {
    const t = await f.tensor(name)
    /** @type {{ byteLength: number, bytes: string, f32?: string, f16?: string }} */
    const e = { byteLength: t.byteLength, bytes: sha256(t.bytes) }
    if (name !== 'w.empty') {
      e.f32 = sha256(t.toFloat32())
      e.f16 = sha256((await castTensor(t, 'F16')).data)
    }
    expected.mixed[name] = e
    t.dispose()
  }
  await f.close()
  data = await startDataServer({ lifetime: 600_000 })
  data.addFile('/mixed/model.safetensors', mixed)
  const all = /** @type {Record<string, import('../js/quant-fixtures.js').Fixture>} */ (quantFixtures())
  for (const fixture of QUANT) {
    const fx = all[fixture]
    const bytes = await toBytes(fx.tensors)
    const q = /** @type {SafetensorsFile} */ (await open(bytes, fx.config ? { quantization: fx.config } : {}))
    expected.quant[fixture] = {}
    for (const { name } of q.quantized()) {
      const t = await q.dequantize(name)
      const half = (await castTensor(t, 'F16')).data
      expected.quant[fixture][name] = { byteLength: t.byteLength, f32: sha256(t.bytes), f16: sha256(half) }
      t.dispose()
    }
    await q.close()
    data.addFile(`/quant/${fixture}/model.safetensors`, bytes)
  }
  for (const bytes of [BIG.overStorage, BIG.overBuffer]) data.addVirtual(bigPath(bytes), virtualBig(bytes))

  app = await startAppServer()
  app.addFile(PAGE, new TextEncoder().encode(PAGE_HTML))
  app.addFile(WORKER, new TextEncoder().encode(WORKER_JS))
  browser = await launchChromium({ webgpu: true })
  page = await browser.newPage()
  page.on('pageerror', (e) => pageErrors.push(e.message))
  page.on('console', (m) => { if (m.type() === 'error' && !/Failed to load resource/.test(m.text())) pageErrors.push(m.text()) })
  await page.goto(app.url(PAGE))
  await page.waitForFunction(() => /** @type {any} */ (globalThis).ready === true, undefined, { timeout: TIMEOUT })
  const adapter = await page.evaluate(async () => {
    if (!('gpu' in navigator)) return 'navigator.gpu is missing'
    const a = await /** @type {any} */ (navigator).gpu.requestAdapter()
    return a ? '' : 'navigator.gpu.requestAdapter() gave no adapter'
  })
  noAdapter = adapter ? `no WebGPU in this Chromium (${adapter}): launched with SwiftShader's Vulkan` : false
  if (noAdapter) process.stderr.write(`gpu.test.js: skipping, ${noAdapter}\n`)
})

after(async () => {
  await browser?.close()
  await app?.close()
  await data?.close()
})

/**
 * @typedef {{ byteLength: number, size: number, sha256: string, paddingZero: boolean, usage: number }} Uploaded
 * @typedef {{ buffers?: Record<string, Uploaded>, error?: { code?: string, message: string }, heap: { before: number,
 *   peak: number, after: number, writes: number }, created: number, destroyed: number, requests?: number }} Run
 */

/**
 * Uploads `names` of the file at `path` on origin B in the page, with `options` (a JSON-able part of
 * toGPU's) and `abortAfter` writes; maps every buffer back and hashes its first byteLength bytes.
 * @param {string} path @param {string[] | undefined} names
 * @param {{ dtype?: string, chunkBytes?: number, usage?: number }} [options]
 * @param {{ abortAfter?: number, byteLengths?: Record<string, number>, openOptions?: Record<string, any> }} [more]
 * @returns {Promise<Run>}
 */
async function upload(path, names, options = {}, more = {}) {
  const url = data.base + path
  return page.evaluate(async ({ url, names, options, more }) => {
    const g = /** @type {any} */ (globalThis)
    const gpu = /** @type {any} */ (navigator).gpu
    const adapter = await gpu.requestAdapter()
    const device = await adapter.requestDevice()
    const errors = /** @type {string[]} */ ([])
    device.addEventListener('uncapturederror', (/** @type {any} */ e) => errors.push(e.error.message))
    const f = await g.st.open(url, more.openOptions ?? {})
    const heap = { before: g.st.heapInUse(), peak: 0, after: 0, writes: 0 }
    heap.peak = heap.before
    // The test-only hook: the heap in use at every writeBuffer (when both chunks are held).
    const write = device.queue.writeBuffer.bind(device.queue)
    device.queue.writeBuffer = (/** @type {any[]} */ ...args) => {
      heap.peak = Math.max(heap.peak, g.st.heapInUse())
      heap.writes++
      return write(...args)
    }
    let created = 0
    let destroyed = 0
    const createBuffer = device.createBuffer.bind(device)
    device.createBuffer = (/** @type {any} */ d) => {
      const b = createBuffer(d)
      created++
      const destroy = b.destroy.bind(b)
      b.destroy = () => { destroyed++; destroy() }
      return b
    }
    const controller = new AbortController()
    let written = 0
    /** @type {Map<string, any>} */
    let map
    try {
      map = await f.toGPU(device, names ?? undefined, { ...options, signal: controller.signal,
        onProgress: () => { if (++written === more.abortAfter) controller.abort(new Error('enough')) } })
    } catch (error) {
      heap.after = g.st.heapInUse()
      await f.close()
      device.destroy()
      return { error: { code: /** @type {any} */ (error).code, message: String(/** @type {any} */ (error).message) }, heap, created, destroyed }
    }
    heap.after = g.st.heapInUse()
    const destroyedByUpload = destroyed
    /** @type {Record<string, any>} */
    const buffers = {}
    for (const [name, buffer] of map) {
      const read = createBuffer({ size: buffer.size, usage: 0x1 | 0x8 })  // MAP_READ | COPY_DST
      const encoder = device.createCommandEncoder()
      encoder.copyBufferToBuffer(buffer, 0, read, 0, buffer.size)
      device.queue.submit([encoder.finish()])
      await read.mapAsync(0x1)
      const bytes = new Uint8Array(read.getMappedRange())
      const byteLength = more.byteLengths?.[name] ?? bytes.length
      const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes.slice(0, byteLength)))
      buffers[name] = { byteLength, size: buffer.size, usage: buffer.usage, paddingZero: bytes.subarray(byteLength).every((b) => b === 0),
        sha256: Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('') }
      read.unmap()
      read.destroy()
      buffer.destroy()
    }
    await f.close()
    device.destroy()
    if (errors.length > 0) throw new Error(`WebGPU validation errors: ${errors.join('; ')}`)
    return { buffers, heap, created, destroyed: destroyedByUpload }
  }, { url, names, options, more })
}

/** @param {import('node:test').TestContext} t */
const skipped = (t) => {
  if (noAdapter) t.skip(noAdapter)
  return Boolean(noAdapter)
}

/** @param {Run} run */
function ok(run) {
  if (run.error) assert.fail(`toGPU failed in the page: ${run.error.code}: ${run.error.message}`)
  assert.deepEqual(pageErrors, [], 'no script errors in the page')
  return /** @type {Record<string, Uploaded>} */ (run.buffers)
}

/** @param {Run} run @param {number} chunkBytes @param {string} what */
function assertHeap(run, chunkBytes, what) {
  const used = run.heap.peak - run.heap.before
  assert.ok(run.heap.writes > 0, `${what}: writes were seen`)
  assert.ok(used <= 2 * chunkBytes + expected.headerLength, `${what}: heap high-water ${used} bytes over the opened file's, ` +
    `within 2 chunks (${2 * chunkBytes}) + the header (${expected.headerLength})`)
  assert.equal(run.heap.after, run.heap.before, `${what}: the heap is back where it was`)
}

const byteLengths = () => Object.fromEntries(Object.entries(expected.mixed).map(([n, e]) => [n, e.byteLength]))

test('stored bytes: every tensor of a remote file, read back from the GPU, equals what Node reads', { skip, timeout: TIMEOUT }, async (t) => {
  if (skipped(t)) return
  // Odd chunks (1001 bytes) leave 1 to 3 bytes for the next write: on the small tensors.
  const small = ['w.f16', 'w.u8', 'w.i8', 'w.f8', 'w.bool', 'w.empty']
  for (const [chunkBytes, names] of /** @type {const} */ ([[undefined, undefined], [4096, undefined], [1001, small]])) {
    const run = await upload('/mixed/model.safetensors', names && [...names], chunkBytes ? { chunkBytes } : {}, { byteLengths: byteLengths() })
    const buffers = ok(run)
    assert.deepEqual(Object.keys(buffers).sort(), [...(names ?? Object.keys(expected.mixed))].sort(), 'names undefined: every tensor')
    for (const name of Object.keys(buffers)) {
      const e = expected.mixed[name]
      const b = buffers[name]
      assert.equal(b.sha256, e.bytes, `${name} (chunkBytes ${chunkBytes}): the bytes`)
      assert.equal(b.size, Math.max(4, Math.ceil(e.byteLength / 4) * 4), `${name}: size padded to 4`)
      assert.ok(b.paddingZero, `${name}: zero padding`)
      assert.equal(b.usage, 0x80 | 0x8 | 0x4, `${name}: STORAGE | COPY_DST | COPY_SRC`)
    }
    if (chunkBytes) assertHeap(run, chunkBytes, `chunkBytes ${chunkBytes}`)
    assert.equal(run.destroyed, 0)
  }
})

test("dtype 'F32' equals toFloat32(), dtype 'F16' equals castTensor(t, 'F16'), within the same heap bound", { skip, timeout: TIMEOUT }, async (t) => {
  if (skipped(t)) return
  const names = Object.keys(expected.mixed).filter((n) => n !== 'w.empty')
  for (const dtype of /** @type {const} */ (['F32', 'F16'])) {
    const chunkBytes = 64 * 1024
    /** @type {Record<string, number>} */
    const lengths = {}
    for (const n of names) lengths[n] = (expected.mixed[n].byteLength / ({ 'w.f32': 4, 'w.bf16': 2, 'w.f16': 2 }[n] ?? 1)) * (dtype === 'F32' ? 4 : 2)
    const run = await upload('/mixed/model.safetensors', names, { dtype, chunkBytes }, { byteLengths: lengths })
    const buffers = ok(run)
    for (const n of names) {
      assert.equal(buffers[n].sha256, dtype === 'F32' ? expected.mixed[n].f32 : expected.mixed[n].f16, `${n} as ${dtype}`)
      assert.ok(buffers[n].paddingZero)
    }
    assertHeap(run, chunkBytes, dtype)
  }
})

test('quantized weights upload dequantized: F32 equals dequantize(), F16 its cast', { skip, timeout: TIMEOUT }, async (t) => {
  if (skipped(t)) return
  const all = /** @type {Record<string, import('../js/quant-fixtures.js').Fixture>} */ (quantFixtures())
  for (const fixture of QUANT) {
    const want = expected.quant[fixture]
    const openOptions = all[fixture].config ? { quantization: all[fixture].config } : {}
    for (const dtype of [undefined, 'F32', 'F16']) {
      /** @type {Record<string, number>} */
      const lengths = {}
      for (const [n, e] of Object.entries(want)) lengths[n] = dtype === 'F16' ? e.byteLength / 2 : e.byteLength
      // A small chunk: several pieces of rows per weight.
      const run = await upload(`/quant/${fixture}/model.safetensors`, Object.keys(want), { ...(dtype ? { dtype } : {}), chunkBytes: 8192 },
        { byteLengths: lengths, openOptions })
      const buffers = ok(run)
      for (const [n, e] of Object.entries(want))
        assert.equal(buffers[n].sha256, dtype === 'F16' ? e.f16 : e.f32, `${fixture} ${n} (${dtype ?? 'default'})`)
      assert.equal(run.heap.after, run.heap.before, `${fixture}: the heap is back where it was`)
    }
  }
})

test('a tensor over the device limits is refused before any byte of it is read; nothing is created', { skip, timeout: TIMEOUT }, async (t) => {
  if (skipped(t)) return
  const cases = /** @type {const} */ ([[BIG.overStorage, undefined, 'maxStorageBufferBindingSize'],
    [BIG.overBuffer, 0x8 | 0x4, 'maxBufferSize']])
  for (const [bytes, usage, limit] of cases) {
    data.resetStats()
    const path = bigPath(bytes)
    const run = await upload(path, [BIG.name], usage === undefined ? {} : { usage })
    assert.equal(run.error?.code, 'DeviceLimitExceeded', JSON.stringify(run.error))
    assert.match(run.error?.message ?? '', new RegExp(`${limit} \\(\\d+\\)`))
    assert.equal(run.created, 0, 'no buffer was made')
    const read = data.stats.log.filter((e) => e.path === path).map((e) => e.range)
    for (const range of read) {
      const start = Number(/^bytes=(\d+)-/.exec(range ?? '')?.[1] ?? 0)
      assert.ok(range !== null && start < expected.bigHeader, `only the header was asked for: ${read.join(', ')}`)
    }
  }
})

test('abort mid-way: Aborted, every buffer made so far destroyed, the heap back where it was', { skip, timeout: TIMEOUT }, async (t) => {
  if (skipped(t)) return
  const run = await upload('/mixed/model.safetensors', ['w.u8', 'w.f32', 'w.bf16'], { chunkBytes: 4096 }, { abortAfter: 5 })
  assert.equal(run.error?.code, 'Aborted', JSON.stringify(run.error))
  assert.ok(run.created >= 2, `buffers were made before the abort (${run.created})`)
  assert.equal(run.destroyed, run.created, 'each destroyed')
  assert.equal(run.heap.after, run.heap.before, 'the heap is back where it was')
  assert.deepEqual(pageErrors, [])
})

test('a module worker uploads every tensor with default options; read back, the bytes equal what Node reads', { skip, timeout: TIMEOUT }, async (t) => {
  if (skipped(t)) return
  const url = data.base + '/mixed/model.safetensors'
  const run = /** @type {{ names?: string[], buffers?: Record<string, Uploaded>, error?: { code?: string, message: string } }} */ (
    await page.evaluate(({ worker, url, byteLengths }) => new Promise((resolve, reject) => {
      const w = new Worker(worker, { type: 'module' })
      w.onmessage = (event) => { w.terminate(); resolve(event.data) }
      w.onerror = (event) => {
        event.preventDefault()
        w.terminate()
        reject(new Error(`the worker failed: ${event.message || 'error event without a message (a module that did not load?)'}`))
      }
      w.postMessage({ url, byteLengths })
    }), { worker: WORKER, url, byteLengths: byteLengths() }))
  if (run.error) assert.fail(`toGPU failed in the worker: ${run.error.code}: ${run.error.message}`)
  assert.deepEqual(pageErrors, [], 'no script errors in the page or the worker')
  const buffers = /** @type {Record<string, Uploaded>} */ (run.buffers)
  assert.deepEqual(run.names, Object.keys(expected.mixed), 'f.names in the worker')
  assert.deepEqual(Object.keys(buffers).sort(), Object.keys(expected.mixed).sort(), 'a buffer per name')
  for (const [name, e] of Object.entries(expected.mixed)) {
    const b = buffers[name]
    assert.equal(b.sha256, e.bytes, `${name}: the bytes, uploaded in the worker`)
    assert.equal(b.size, Math.max(4, Math.ceil(e.byteLength / 4) * 4), `${name}: size padded to 4`)
    assert.ok(b.paddingZero, `${name}: zero padding`)
    assert.equal(b.usage, 0x80 | 0x8 | 0x4, `${name}: STORAGE | COPY_DST | COPY_SRC`)
  }
})

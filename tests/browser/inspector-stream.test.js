// The inspector (web-demo/) on tensors larger than it ever reads at once (16 MiB), in headless
// Chromium against the project's static server: the statistics and histogram are the whole
// tensor's (equal to Tensor.stats in Node, not the leading block's), streamed with f.stats through
// a bounded heap, with progress and a Cancel that stops the requests and leaves the page usable;
// a quantized weight's are those of dequantize().stats() of the whole weight.
// Screenshots go to tests/artifacts/inspector/ (git-ignored).
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { open, serialize } from '../../js/node.js'
import { formatValue } from '../../js/format.js'
import { startServer } from '../servers/static-server.js'
import { sameStats, shownStats } from './inspector-stats.js'
import { launchChromium, newPage, skip, waitOpened } from './chromium.js'

const ARTIFACTS = fileURLToPath(new URL('../artifacts/inspector/', import.meta.url))

const ROWS = 2560
const COLS = 4096  // F32 [2560, 4096]: 41.9 MB
const NAME = 'big.weight'
const PLAIN = '/big/ramp.safetensors'
const DELAYED = '/delayed/ramp.safetensors'  // throttled a little: progress can be watched
const SLOW = '/slow/ramp.safetensors'        // throttled: cancelled mid-way
const QUANT = '/q/model.safetensors'         // with /q/config.json beside it
const WEIGHT = 'model.layers.0.mlp.down_proj.weight'  // fp8 [2400, 2000]: 19.2 MB of float32
const WEIGHT_SHAPE = [2400, 2000]
const BLOCK = 100
const CONFIG = {
  architectures: ['DeepseekV3ForCausalLM'], model_type: 'deepseek_v3',
  quantization_config: { quant_method: 'fp8', fmt: 'e4m3', activation_scheme: 'dynamic', weight_block_size: [BLOCK, BLOCK] },
}

/** @type {Awaited<ReturnType<typeof startServer>>} */
let server
/** @type {import('playwright-core').Browser} */
let browser
/** Worked out in Node with the library. */
const expected = /** @type {{ whole: import('../../js/index.js').Stats, block: import('../../js/index.js').Stats,
  byteLength: number, weight: import('../../js/index.js').Stats, weightRows: import('../../js/index.js').Stats }} */ ({})

/**
 * A ramp down the rows with a ripple along them, and a NaN, an Inf and a row of zeros near the
 * end: the leading block's statistics are nothing like the whole tensor's.
 */
function rampFile() {
  const data = new Float32Array(ROWS * COLS)
  for (let r = 0; r < ROWS; r++) {
    for (let c = 0; c < COLS; c++) data[r * COLS + c] = (4 * r) / ROWS - 1 + 0.5 * Math.sin(c / 17 + r / 5)
  }
  data.fill(0, 2000 * COLS, 2001 * COLS)
  data[ROWS * COLS - 1] = NaN
  data[(ROWS - 3) * COLS + 7] = Infinity
  return serialize({
    [NAME]: { dtype: 'F32', shape: [ROWS, COLS], data },
    'small.bias': { dtype: 'F32', shape: [COLS], data: new Float32Array(COLS).fill(0.25) },
  })
}

/** E4M3FN bytes from a pattern, avoiding the NaN codes 0x7F and 0xFF. @param {number} n */
function e4m3(n) {
  const out = new Uint8Array(n)
  for (let i = 0; i < n; i++) {
    const b = (Math.imul(i, 2654435761) + (i >> 9)) >>> 24
    out[i] = (b & 0x7f) === 0x7f ? b - 1 : b
  }
  return out
}

/** An FP8 checkpoint whose block scales grow down the rows. */
function quantFile() {
  const [rows, cols] = WEIGHT_SHAPE.map((d) => Math.ceil(d / BLOCK))
  const scales = Float32Array.from({ length: rows * cols }, (_, i) => 0.001 * (1 + Math.floor(i / cols)) * (1 + ((i * 7) % 5)))
  return serialize({
    [WEIGHT]: { dtype: 'F8_E4M3', shape: WEIGHT_SHAPE, data: e4m3(WEIGHT_SHAPE[0] * WEIGHT_SHAPE[1]) },
    [`${WEIGHT}_scale_inv`]: { dtype: 'F32', shape: [rows, cols], data: scales },
  }, { metadata: { format: 'pt' } })
}

before(async () => {
  if (skip) return
  const bytes = await rampFile()
  const f = /** @type {import('../../js/index.js').SafetensorsFile} */ (await open(bytes))
  const t = await f.tensor(NAME)
  expected.whole = t.stats({ bins: 64 })
  expected.byteLength = t.byteLength
  t.dispose()
  const block = await f.slice(NAME, '0:256, 0:256')
  expected.block = block.stats({ bins: 64 })
  block.dispose()
  await f.close()
  const quant = await quantFile()
  const q = /** @type {import('../../js/index.js').SafetensorsFile} */ (await open(quant, { quantization: CONFIG }))
  const w = await q.dequantize(WEIGHT)
  expected.weight = w.stats({ bins: 64 })
  w.dispose()
  const lead = await q.dequantize(WEIGHT, { slice: [0, 256] })
  expected.weightRows = lead.stats({ bins: 64 })
  lead.dispose()
  await q.close()

  server = await startServer()
  for (const path of [PLAIN, DELAYED, SLOW]) server.addFile(path, bytes)
  server.addFile(QUANT, quant)
  server.addFile('/q/config.json', new TextEncoder().encode(JSON.stringify(CONFIG)))
  await mkdir(ARTIFACTS, { recursive: true })
  browser = await launchChromium()
})

after(async () => {
  await browser?.close()
  await server?.close()
})

/** Waits for the streamed statistics to be shown. @param {import('playwright-core').Page} page */
async function statsDone(page) {
  await page.waitForSelector('.stats-area[data-state="done"] .stats-grid', { timeout: 60_000 })
}

/** The count the histogram's hover read-out gives for bin `bin` of 64. @param {import('playwright-core').Page} page @param {number} bin */
async function hoverCount(page, bin) {
  const canvas = page.locator('.histogram-canvas')
  await canvas.scrollIntoViewIfNeeded()
  const box = /** @type {{ x: number, y: number, width: number, height: number }} */ (await canvas.boundingBox())
  await canvas.hover({ position: { x: ((bin + 0.5) * box.width) / 64, y: box.height / 2 } })
  const text = await page.textContent('.histogram .chart-info') ?? ''
  return Number(/: ([\d,]+) values$/.exec(text)?.[1].replace(/,/g, ''))
}

/** The wasm heap's size in the page: it only grows, so this is its high-water mark. @param {import('playwright-core').Page} page */
function heapBytes(page) {
  return page.evaluate(async () => {
    const { loadCore } = await import('/js/wasm.js')
    return /** @type {any} */ (await loadCore()).HEAPU8.buffer.byteLength
  })
}

test('a 42 MB tensor: the whole tensor\'s statistics and histogram, streamed with progress through a bounded heap', { skip, timeout: 120_000 }, async () => {
  assert.notEqual(formatValue(expected.whole.max), formatValue(expected.block.max), 'the leading block differs from the whole')
  const { page, done } = await newPage(browser)
  await page.goto(server.pageUrl(DELAYED))
  await waitOpened(page)
  server.addQuirks('/delayed/', { bytesPerSecond: 30_000_000 })
  server.resetStats()
  try {
    await page.click(`#panel-table tr[data-name="${NAME}"]`)
    assert.equal(await page.inputValue('#slice-input'), '', 'the selection is the whole tensor')
    assert.match(await page.textContent('#slice-help') ?? '', /41\.9 MB, more than is ever read at once: its statistics and histogram are streamed over all of it/)
    // The heatmap and values of the leading block first, then the statistics with their progress.
    await page.waitForSelector('.heatmap-canvas[data-drawn]', { timeout: 20_000 })
    assert.match(await page.textContent('.loaded-line') ?? '', /^The whole tensor, shape \[2560, 4096\]: 10,485,760 values, 41\.9 MB\./)
    assert.match(await page.textContent('.preview-line') ?? '', /only its leading block \[0:256, 0:256\] \(shape \[256, 256\]\); the statistics and histogram cover all of it/)
    assert.equal(await page.locator('.values-table tbody td.num').count(), 64)
    await page.waitForFunction(() => Number(/** @type {HTMLProgressElement} */ (document.querySelector('.stream-progress'))?.value) > 0, null, { timeout: 20_000 })
    assert.equal(await page.getAttribute('.stats-area', 'data-state'), 'running')
    assert.match(await page.textContent('.stats-stream') ?? '', /Statistics of all 10,485,760 values: \d+% streamed\./)
    assert.match(await page.textContent('#status-text') ?? '', /^Computing the statistics of big\.weight: \d+% \(all 41\.9 MB, streamed\)/)
    assert.match(await page.textContent('.histogram .chart-empty') ?? '', /follows the statistics/)
    await page.locator('#tensor-view').screenshot({ path: join(ARTIFACTS, 'stream-progress.png') })
    await statsDone(page)
  } finally {
    server.clearQuirks()
  }
  assert.ok(await page.isHidden('#status'), 'the status bar is gone')
  sameStats(await shownStats(page), expected.whole, NAME)
  assert.match(await page.textContent('.stats-scope') ?? '', new RegExp(`of all ${expected.whole.count.toLocaleString('en-US')} values, streamed`))
  const h = expected.whole.histogram
  assert.equal(await page.getAttribute('.histogram-canvas', 'aria-label'),
    `Histogram of ${expected.whole.finiteCount.toLocaleString('en-US')} finite values from ${formatValue(h.min)} to ${formatValue(h.max)} in 64 bins`)
  for (const bin of [0, 21, 63]) assert.equal(await hoverCount(page, bin), h.counts[bin], `bin ${bin}`)
  await page.locator('#tensor-view').screenshot({ path: join(ARTIFACTS, 'stream-done.png') })
  // Streamed: ranged requests, the tensor read twice (the histogram's pass) after the leading
  // block; the heap never held it whole.
  const log = server.stats.log.filter((e) => e.path === DELAYED)
  assert.ok(log.every((e) => e.range !== null && e.status === 206), JSON.stringify(log.map((e) => [e.range, e.bytes])))
  const sent = server.bytesFor(DELAYED)
  assert.ok(sent >= 2 * expected.byteLength && sent <= 2 * expected.byteLength + 4_500_000, `${sent} bytes sent`)
  const heap = await heapBytes(page)
  assert.ok(heap < expected.byteLength, `a ${heap}-byte heap for a ${expected.byteLength}-byte tensor`)
  // A slice small enough is read whole, with its own statistics.
  await page.fill('#slice-input', '0:256, 0:256')
  await page.click('.slice-form button[type="submit"]')
  await page.waitForFunction(() => /^Slice \[0:256, 0:256\] of shape \[256, 256\]/.test(document.querySelector('.loaded-line')?.textContent ?? ''))
  assert.equal(await page.getAttribute('.stats-area', 'data-state'), 'no')
  sameStats(await shownStats(page), expected.block, `${NAME} [0:256, 0:256]`)
  await done()
})

test('Cancel stops the streamed statistics: the requests stop, a notice says so, the page stays usable', { skip, timeout: 120_000 }, async () => {
  const { page, done } = await newPage(browser)
  await page.goto(server.pageUrl(SLOW))
  await waitOpened(page)
  server.resetStats()
  server.addQuirks('/slow/', { bytesPerSecond: 3_000_000 })
  try {
    await page.click(`#panel-table tr[data-name="${NAME}"]`)
    await page.waitForSelector('.heatmap-canvas[data-drawn]', { timeout: 20_000 })
    await page.waitForFunction(() => Number(/** @type {HTMLProgressElement} */ (document.querySelector('.stream-progress'))?.value) > 0, null, { timeout: 20_000 })
    await page.click('.stream-cancel')
    await page.waitForSelector('.stats-area[data-state="stopped"]')
    await page.waitForSelector('#status', { state: 'hidden' })
    assert.match(await page.textContent('#notice') ?? '', /^Cancelled: computing the statistics of big\.weight\./)
    assert.ok(await page.isHidden('#error'), 'a cancel is not an error')
    assert.match(await page.textContent('.stats-area') ?? '', /Statistics cancelled/)
    assert.match(await page.textContent('.histogram .chart-empty') ?? '', /Not counted/)
    // The download stopped: the server sends no more.
    await new Promise((r) => setTimeout(r, 300))
    const sent = server.bytesFor(SLOW)
    await new Promise((r) => setTimeout(r, 800))
    assert.equal(server.bytesFor(SLOW), sent, 'no more bytes after the cancel')
    assert.ok(sent < expected.byteLength, `${sent} bytes sent`)
    // The heatmap and values are still there; the plane and the log toggle still work.
    assert.equal(await page.getAttribute('.heatmap-canvas', 'data-drawn'), 'true')
    assert.equal(await page.locator('.values-table tbody td.num').count(), 64)
    await page.locator('#tensor-view').screenshot({ path: join(ARTIFACTS, 'stream-cancelled.png') })
    // The page stays usable: another tensor opens; back to this one, the status bar's Cancel
    // (the same task) stops the statistics too, and they can be computed again.
    await page.click('#panel-table tr[data-name="small.bias"]')
    await page.waitForFunction(() => document.querySelector('#tensor-title')?.textContent === 'small.bias' && document.querySelector('.stats-grid') !== null)
    assert.equal((await shownStats(page)).mean, formatValue(0.25))
    await page.click(`#panel-table tr[data-name="${NAME}"]`)
    await page.waitForSelector('.stats-area[data-state="running"]', { timeout: 20_000 })
    await page.click('#cancel-button')
    await page.waitForSelector('.stats-area[data-state="stopped"] .stream-retry')
  } finally {
    server.clearQuirks()
  }
  await page.click('.stream-retry')
  await statsDone(page)
  sameStats(await shownStats(page), expected.whole, NAME)
  await done()
})

test('a quantized weight over 16 MB of float32: the stats of dequantize() of the whole weight, streamed', { skip, timeout: 120_000 }, async () => {
  assert.notEqual(formatValue(expected.weight.max), formatValue(expected.weightRows.max), 'the leading rows differ from the whole')
  const { page, done } = await newPage(browser)
  await page.goto(server.pageUrl(QUANT))
  await waitOpened(page)
  await page.waitForSelector(`#panel-table tr[data-name="${WEIGHT}"] .scheme-badge`)
  server.resetStats()
  await page.click(`#panel-table tr[data-name="${WEIGHT}"] td.name .mono`)
  await page.waitForSelector('.heatmap-canvas[data-drawn]', { timeout: 20_000 })
  assert.equal(await page.inputValue('#slice-input'), '')
  assert.match(await page.textContent('#slice-help') ?? '', /19\.2 MB of float32, more than is ever decoded at once: its statistics and histogram are streamed over all of it, a few rows at a time/)
  assert.match(await page.textContent('.loaded-line') ?? '', /^The whole weight, dequantized \(fp8-block to F32\), shape \[2400, 2000\]: 4,800,000 values/)
  assert.match(await page.textContent('.preview-line') ?? '', /only its leading rows \[0:256\] \(shape \[256, 2000\]\)/)
  await statsDone(page)
  sameStats(await shownStats(page), expected.weight, WEIGHT)
  const h = expected.weight.histogram
  for (const bin of [0, 32, 63]) assert.equal(await hoverCount(page, bin), h.counts[bin], `bin ${bin}`)
  assert.ok(server.stats.log.filter((e) => e.path === QUANT).every((e) => e.range !== null && e.status === 206))
  assert.ok(await heapBytes(page) < WEIGHT_SHAPE[0] * WEIGHT_SHAPE[1] * 4, 'the float32 weight was never whole in the heap')
  // Leading rows small enough are decoded whole, with their own statistics.
  await page.fill('#slice-input', '0:256')
  await page.click('.slice-form button[type="submit"]')
  await page.waitForFunction(() => /^Rows \[0:256\] of the weight/.test(document.querySelector('.loaded-line')?.textContent ?? ''))
  sameStats(await shownStats(page), expected.weightRows, `${WEIGHT} [0:256]`)
  await done()
})

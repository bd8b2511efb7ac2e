// The inspector (web-demo/) on quantized checkpoints, in headless Chromium against the project's
// static server: a quantized weight is one row (a badge with its scheme, its logical shape), its
// parts fold under it, selecting it shows its dequantized values (the same statistics as
// dequantize() in Node; a large one's heatmap and values of its leading rows only, its statistics
// streamed over the whole weight), config.json is read beside the file (or
// dropped with it), and an inconsistent checkpoint is listed as stored with a coded notice.
// Screenshots go to tests/artifacts/inspector/ (git-ignored).
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { open, serialize } from '../../js/node.js'
import { startServer } from '../servers/static-server.js'
import { startHub } from '../js/hub-server.js'
import { sameStats, shownStats } from './inspector-stats.js'
import { serveSample, sampleFixture } from './inspector-setup.js'
import { FP8_LAYER } from '../fixtures/make-sample.js'
import { launchChromium, newPage, showSourceInputs, skip, waitOpened } from './chromium.js'

const ARTIFACTS = fileURLToPath(new URL('../artifacts/inspector/', import.meta.url))

/** A DeepSeek-style FP8 checkpoint with 100 x 100 blocks: only its config.json says so. */
const BLOCK = 100
const BIG = 'model.layers.0.mlp.down_proj.weight'  // [2400, 2000]: 19.2 MB of float32, over the inspector's 16 MiB
const SMALL = 'model.layers.0.self_attn.q_proj.weight'  // [300, 200]: decoded whole
const BIG_SHAPE = [2400, 2000]
const SMALL_SHAPE = [300, 200]
const BIG_ROWS = 256  // the leading rows of BIG the inspector's heatmap and values show
const CONFIG = {
  architectures: ['DeepseekV3ForCausalLM'], model_type: 'deepseek_v3', hidden_size: 2000,
  quantization_config: { quant_method: 'fp8', fmt: 'e4m3', activation_scheme: 'dynamic', weight_block_size: [BLOCK, BLOCK] },
}
/** A config that disagrees with the tensors (the default block size). */
const WRONG_CONFIG = { ...CONFIG, quantization_config: { ...CONFIG.quantization_config, weight_block_size: [128, 128] } }

const WITH_CONFIG = '/q/model.safetensors'         // config.json beside it
const NO_CONFIG = '/bare/model.safetensors'         // none (404): 128 x 128 blocks assumed, which do not fit
const MISMATCH = '/mismatch/model.safetensors'      // a config.json that disagrees
const NOT_JSON = '/notjson/model.safetensors'       // a config.json that is not JSON: ignored silently
const FAILING = '/failing/model.safetensors'        // config.json answers 500: a note, the file opens
const PLAIN = '/plain/model.safetensors'            // no quantized weight at all

/** @type {Awaited<ReturnType<typeof startServer>>} */
let server
/** @type {import('playwright-core').Browser} */
let browser
/** @type {Uint8Array} */
let quantBytes
/** What the page must show, worked out in Node with the library. */
const expected = /** @type {{ stored: number, parameters: number, big: import('../../js/index.js').Stats,
  bigRows: import('../../js/index.js').Stats, small: import('../../js/index.js').Stats, bigRead: number, bigWeight: number,
  bigScales: number, sampleFp8: import('../../js/index.js').Stats }} */ ({})
/** The bundled sample's F8_E4M3 weight with a per-tensor weight_scale: an fp8 weight. */
const SAMPLE_FP8 = `model.layers.${FP8_LAYER}.mlp.down_proj.weight`

/** E4M3FN bytes from a pattern, avoiding the NaN codes 0x7F and 0xFF. @param {number} n @param {number} seed */
function e4m3(n, seed) {
  const out = new Uint8Array(n)
  for (let i = 0; i < n; i++) {
    const b = (Math.imul(i, 2654435761) + seed * 97 + (i >> 7)) >>> 24
    out[i] = (b & 0x7f) === 0x7f ? b - 1 : b
  }
  return out
}

/** Positive block scales, varying smoothly. @param {number} rows @param {number} cols */
function scales(rows, cols) {
  return Float32Array.from({ length: rows * cols }, (_, i) => 0.001 * (1 + ((i * 7) % 13)) * (1 + Math.floor(i / cols) / rows))
}

/** BF16 bytes of a smooth pattern. @param {number} n */
function bf16(n) {
  const f = Float32Array.from({ length: n }, (_, i) => 1 + 0.1 * Math.sin(i / 7))
  return new Uint8Array(new Uint16Array(Array.from(new Uint32Array(f.buffer), (u) => u >>> 16)).buffer)
}

/** @param {{ badScale?: boolean }} [options] badScale: the small weight's scales one column short */
function quantFile(options = {}) {
  const up = (/** @type {number} */ n) => Math.ceil(n / BLOCK)
  const smallScale = [up(SMALL_SHAPE[0]), up(SMALL_SHAPE[1]) - (options.badScale ? 1 : 0)]
  return serialize({
    'model.embed_tokens.weight': { dtype: 'BF16', shape: [64, 2000], data: bf16(64 * 2000) },
    [SMALL]: { dtype: 'F8_E4M3', shape: SMALL_SHAPE, data: e4m3(SMALL_SHAPE[0] * SMALL_SHAPE[1], 1) },
    [`${SMALL}_scale_inv`]: { dtype: 'F32', shape: smallScale, data: scales(smallScale[0], smallScale[1]) },
    [BIG]: { dtype: 'F8_E4M3', shape: BIG_SHAPE, data: e4m3(BIG_SHAPE[0] * BIG_SHAPE[1], 2) },
    [`${BIG}_scale_inv`]: { dtype: 'F32', shape: [up(BIG_SHAPE[0]), up(BIG_SHAPE[1])], data: scales(up(BIG_SHAPE[0]), up(BIG_SHAPE[1])) },
    'model.norm.weight': { dtype: 'BF16', shape: [2000], data: bf16(2000) },
  }, { metadata: { format: 'pt' } })
}

const json = (/** @type {unknown} */ value) => new TextEncoder().encode(JSON.stringify(value, null, 2))

before(async () => {
  if (skip) return
  quantBytes = await quantFile()
  const f = /** @type {import('../../js/index.js').SafetensorsFile} */ (await open(quantBytes, { quantization: CONFIG }))
  expected.stored = f.names.length
  expected.parameters = f.parameterCount().total
  const big = await f.dequantize(BIG)
  expected.big = big.stats({ bins: 64 })
  big.dispose()
  const rows = await f.dequantize(BIG, { slice: [0, BIG_ROWS] })
  expected.bigRows = rows.stats({ bins: 64 })
  rows.dispose()
  const small = await f.dequantize(SMALL)
  expected.small = small.stats({ bins: 64 })
  small.dispose()
  // What reading BIG's leading rows needs: those rows of the weight, and the scale rows they use.
  const scaleInfo = f.info(`${BIG}_scale_inv`)
  expected.bigRead = BIG_ROWS * BIG_SHAPE[1] + Math.ceil(BIG_ROWS / BLOCK) * (scaleInfo.byteLength / scaleInfo.shape.map(Number)[0])
  expected.bigWeight = f.info(BIG).byteLength
  expected.bigScales = scaleInfo.byteLength
  await f.close()

  server = await startServer()
  server.addFile(WITH_CONFIG, quantBytes)
  server.addFile('/q/config.json', json(CONFIG))
  server.addFile(NO_CONFIG, quantBytes)
  server.addFile(MISMATCH, quantBytes)
  server.addFile('/mismatch/config.json', json(WRONG_CONFIG))
  server.addFile(NOT_JSON, quantBytes)
  server.addFile('/notjson/config.json', new TextEncoder().encode('<!doctype html><p>a login page</p>'))
  server.addFile(FAILING, quantBytes)
  server.addFile('/failing/config.json', json(CONFIG))
  server.addQuirks('/failing/config.json', { auth: 'Bearer nobody' })
  const sample = await sampleFixture()
  serveSample(server, sample)
  const g = /** @type {import('../../js/index.js').SafetensorsFile} */ (await open(sample.bytes))
  const fp8 = await g.dequantize(SAMPLE_FP8)
  expected.sampleFp8 = fp8.stats({ bins: 64 })
  fp8.dispose()
  await g.close()
  server.addFile(PLAIN, await serialize({ 'a.weight': { dtype: 'F32', shape: [4, 4], data: new Float32Array(16).fill(1) } }))
  await mkdir(ARTIFACTS, { recursive: true })
  browser = await launchChromium()
})

after(async () => {
  await browser?.close()
  await server?.close()
})

/** @param {import('playwright-core').Page} page @param {string} name */
async function selectWeight(page, name) {
  await page.click(`#panel-table tr[data-name="${name}"] td.name .mono`)
  await page.waitForFunction((n) => document.querySelector('#tensor-title')?.textContent === n &&
    document.querySelector('.result')?.getAttribute('aria-busy') === null, name, { timeout: 20_000 })
}

/** The notice's text once shown. @param {import('playwright-core').Page} page */
async function noticeText(page) {
  await page.waitForSelector('#notice:not([hidden])', { timeout: 10_000 })
  return (await page.textContent('#notice')) ?? ''
}

/** The top-level rows of the table (by data-name) and the part rows shown (by data-part). @param {import('playwright-core').Page} page */
function tableRows(page) {
  return page.evaluate(() => ({
    names: [...document.querySelectorAll('#panel-table tbody tr[data-name]')].map((tr) => /** @type {HTMLElement} */ (tr).dataset.name),
    parts: [...document.querySelectorAll('#panel-table tbody tr[data-part]')].map((tr) => /** @type {HTMLElement} */ (tr).dataset.part),
  }))
}

test('a quantized weight is one row with its scheme and logical shape; its parts fold under it; totals are logical', { skip }, async () => {
  const { page, done } = await newPage(browser)
  await page.goto(server.pageUrl(WITH_CONFIG))
  await waitOpened(page)
  await page.waitForSelector(`#panel-table tr[data-name="${BIG}"]`)
  assert.ok(await page.isHidden('#notice'), 'no notice for a consistent checkpoint with its config')
  const rows = await tableRows(page)
  assert.deepEqual(rows.names.slice().sort(), [BIG, SMALL, 'model.embed_tokens.weight', 'model.norm.weight'].sort(), 'each weight once, parts folded')
  assert.deepEqual(rows.parts, [])
  const cells = await page.$$eval(`#panel-table tr[data-name="${BIG}"] td`, (tds) => tds.map((td) => td.textContent?.replace(/^[▸▾]/, '')))
  assert.equal(cells[0], BIG)
  assert.equal(cells[1], 'fp8-block')
  assert.equal(cells[2], `[${BIG_SHAPE.join(', ')}]`)
  assert.equal(await page.locator(`#panel-table tr[data-name="${BIG}"] .scheme-badge`).textContent(), 'fp8-block')
  // Unfold: the weight and its block scales, with their roles, dtypes and stored shapes.
  await page.click(`#panel-table tr[data-name="${BIG}"] .fold-toggle`)
  await page.waitForSelector(`#panel-table tr[data-part="${BIG}_scale_inv"]`)
  assert.deepEqual((await tableRows(page)).parts, [BIG, `${BIG}_scale_inv`])
  assert.equal(await page.getAttribute(`#panel-table tr[data-name="${BIG}"]`, 'aria-expanded'), 'true')
  const part = await page.$$eval(`#panel-table tr[data-part="${BIG}_scale_inv"] td`, (tds) => tds.map((td) => td.textContent))
  assert.match(part[0] ?? '', /^scaleInv/)
  assert.equal(part[1], 'F32')
  assert.equal(part[2], '[24, 20]')
  // ← folds them again (from a part: its weight).
  await page.focus(`#panel-table tr[data-part="${BIG}"]`)
  await page.keyboard.press('ArrowLeft')
  await page.waitForFunction(() => document.querySelectorAll('#panel-table tr[data-part]').length === 0)
  // Totals: logical parameters, by dtype and by scheme; the stored tensors counted as such.
  const tiles = await page.$$eval('.tile', (els) => els.map((e) => e.textContent))
  assert.match(tiles[2] ?? '', new RegExp(`^Tensors${expected.stored}2 quantized weights$`))
  assert.match(tiles[3] ?? '', new RegExp(expected.parameters.toLocaleString('en-US')))
  assert.equal(expected.parameters, 64 * 2000 + 2000 + SMALL_SHAPE[0] * SMALL_SHAPE[1] + BIG_SHAPE[0] * BIG_SHAPE[1])
  const legend = await page.textContent('.dtype-legend') ?? ''
  assert.match(legend, /fp8-block/)
  assert.match(legend, new RegExp(`fp8-block${(SMALL_SHAPE[0] * SMALL_SHAPE[1] + BIG_SHAPE[0] * BIG_SHAPE[1]).toLocaleString('en-US')}`))
  assert.doesNotMatch(legend, /F8_E4M3|F32/, 'the parts count zero')
  assert.match(await page.textContent('.quantization') ?? '', /fp8-block 2 weights/)
  assert.match(await page.textContent('.config-source') ?? '', /Settings from http:\/\/.+\/q\/config\.json/)
  // The tree: the weight is a leaf with its badge, its parts folded under it.
  await page.click('#tab-tree')
  const leaf = page.locator(`#panel-tree button.tree-leaf[data-name="${BIG}"]`)
  assert.equal(await leaf.locator('.scheme-badge').textContent(), 'fp8-block')
  assert.equal(await page.locator(`#panel-tree button.tree-leaf[data-part="${BIG}_scale_inv"]`).count(), 1)
  assert.ok(!await page.locator(`#panel-tree button.tree-leaf[data-part="${BIG}_scale_inv"]`).isVisible(), 'parts start folded')
  await page.screenshot({ path: join(ARTIFACTS, 'quant-listing.png'), fullPage: true })
  await done()
})

test('a large quantized weight: its leading rows decoded for the heatmap and values (only their bytes read), the stats of the whole dequantize() streamed', { skip }, async () => {
  const { page, done } = await newPage(browser)
  await page.goto(server.pageUrl(WITH_CONFIG))
  await waitOpened(page)
  await page.waitForSelector(`#panel-table tr[data-name="${BIG}"]`)
  server.resetStats()
  await selectWeight(page, BIG)
  assert.equal(await page.inputValue('#slice-input'), '')
  assert.match(await page.textContent('#slice-help') ?? '', /streamed over all of it, a few rows at a time, and the heatmap and values show its leading rows/)
  await page.waitForSelector('.heatmap-canvas[data-drawn]')
  assert.match(await page.textContent('.loaded-line') ?? '',
    new RegExp(`^The whole weight, dequantized \\(fp8-block to F32\\), shape \\[${BIG_SHAPE.join(', ')}\\]: ${(BIG_SHAPE[0] * BIG_SHAPE[1]).toLocaleString('en-US')} values`))
  assert.match(await page.textContent('.preview-line') ?? '', new RegExp(`leading rows \\[0:${BIG_ROWS}\\] \\(shape \\[${BIG_ROWS}, ${BIG_SHAPE[1]}\\]\\)`))
  assert.equal(await page.locator('.values-table tbody td.num').count(), 64, 'an 8 x 8 corner of values')
  // The first read: only the rows shown and their scale rows, every request ranged.
  const first = server.stats.log.filter((e) => e.path === WITH_CONFIG)
  assert.ok(first.length >= 1 && first.every((e) => e.range !== null && e.status === 206), JSON.stringify(first))
  const rowsRead = first.reduce((n, e) => n + e.bytes, 0)
  assert.ok(rowsRead >= expected.bigRead, `${rowsRead} bytes sent for ${expected.bigRead} needed`)
  // Then the whole weight's statistics, streamed (the weight read twice: a histogram's pass).
  await page.waitForSelector('.stats-area[data-state="done"] .stats-grid', { timeout: 30_000 })
  sameStats(await shownStats(page), expected.big, BIG)
  assert.equal(await page.locator('.histogram-canvas').count(), 1)
  const log = server.stats.log.filter((e) => e.path === WITH_CONFIG)
  assert.ok(log.every((e) => e.range !== null && e.status === 206), JSON.stringify(log))
  const sent = server.bytesFor(WITH_CONFIG)
  assert.ok(sent <= expected.bigRead + 2 * (expected.bigWeight + expected.bigScales) + 8192, `${sent} bytes sent`)
  // The header names the scheme, the logical shape and the parts decoded from.
  assert.equal(await page.textContent('.tensor-head .scheme-badge'), 'fp8-block')
  assert.match(await page.textContent('.tensor-head .chips') ?? '', /shape\[2400, 2000\]/)
  assert.match(await page.textContent('.quant-parts') ?? '', /Decoded from 2 stored tensors/)
  assert.match(new URL(page.url()).search, new RegExp(`tensor=${BIG.replace(/\./g, '\\.')}`))
  await page.locator('#tensor-view').screenshot({ path: join(ARTIFACTS, 'quant-weight.png') })

  // Other rows: a range over the first dimension (read whole when small enough, with their own
  // statistics); anything else is refused with a coded error.
  await page.fill('#slice-input', `0:${BIG_ROWS}`)
  await page.click('.slice-form button[type="submit"]')
  await page.waitForFunction((n) => document.querySelector('.loaded-line')?.textContent?.startsWith(`Rows [0:${n}] of the weight`), BIG_ROWS)
  sameStats(await shownStats(page), expected.bigRows, `${BIG} [0:${BIG_ROWS}]`)
  await page.fill('#slice-input', '-3:')
  await page.click('.slice-form button[type="submit"]')
  await page.waitForFunction(() => /^Rows \[-3:\] of the weight, .*shape \[3, 2000\]/.test(document.querySelector('.loaded-line')?.textContent ?? ''))
  await page.fill('#slice-input', '0:4, 0:8')
  await page.click('.slice-form button[type="submit"]')
  await page.waitForSelector('#error:not([hidden])')
  assert.equal(await page.textContent('.error-code'), 'InvalidSlice')
  await done()
})

test('a small quantized weight is decoded whole; a part can be selected and shows its stored values', { skip }, async () => {
  const { page, done } = await newPage(browser)
  await page.goto(`${server.pageUrl(server.url(WITH_CONFIG))}&tensor=${encodeURIComponent(SMALL)}`)
  await waitOpened(page)
  await page.waitForFunction(() => document.querySelector('.result')?.getAttribute('aria-busy') === null &&
    document.querySelector('.stats-grid') !== null, null, { timeout: 20_000 })
  assert.equal(await page.textContent('#tensor-title'), SMALL)
  assert.equal(await page.inputValue('#slice-input'), '')
  assert.match(await page.textContent('.loaded-line') ?? '', /^The whole weight, dequantized \(fp8-block to F32\), shape \[300, 200\]/)
  sameStats(await shownStats(page), expected.small, SMALL)
  // The part sharing the weight's name: its stored F8_E4M3 values, not the dequantized ones.
  await page.click(`#panel-table tr[data-name="${SMALL}"] .fold-toggle`)
  await page.click(`#panel-table tr[data-part="${SMALL}"] td.name .mono`)
  await page.waitForFunction(() => /^The whole tensor, shape \[300, 200\]/.test(document.querySelector('.loaded-line')?.textContent ?? ''))
  assert.equal(await page.textContent('.tensor-head .chip:first-child dd'), 'F8_E4M3')
  assert.equal(await page.getAttribute(`#panel-table tr[data-part="${SMALL}"]`, 'aria-selected'), 'true')
  assert.equal(await page.getAttribute(`#panel-table tr[data-name="${SMALL}"]`, 'aria-selected'), 'false')
  await done()
})

test('the bundled sample\'s FP8 layer is an fp8 weight: one row with its badge, its real values (not the codes up to 448)', { skip }, async () => {
  const { page, done } = await newPage(browser)
  await page.goto(server.pageUrl())
  await page.click('#sample-button')
  await waitOpened(page)
  await page.waitForSelector(`#panel-table tr[data-name="${SAMPLE_FP8}"] .scheme-badge`)
  assert.equal(await page.locator(`#panel-table tr[data-name="${SAMPLE_FP8}"] .scheme-badge`).textContent(), 'fp8')
  assert.equal(await page.locator(`#panel-table tr[data-name="${SAMPLE_FP8}_scale"]`).count(), 0, 'the scale folds under its weight')
  assert.ok(await page.isHidden('#notice'), 'no config needed, no notice')
  const legend = await page.textContent('.dtype-legend') ?? ''
  assert.match(legend, /fp8/)
  assert.doesNotMatch(legend, /F8_E4M3/, 'the stored codes are not counted as F8_E4M3 parameters')
  await selectWeight(page, SAMPLE_FP8)
  await page.waitForSelector('.stats-grid')
  assert.match(await page.textContent('.loaded-line') ?? '', /^The whole weight, dequantized \(fp8 to F32\), shape \[128, 352\]/)
  sameStats(await shownStats(page), expected.sampleFp8, SAMPLE_FP8)
  assert.ok(expected.sampleFp8.max < 1 && expected.sampleFp8.min > -1, `real values: ${expected.sampleFp8.min}..${expected.sampleFp8.max}`)
  assert.match(await page.textContent('.quant-parts') ?? '', /Decoded from 2 stored tensors/)
  await page.locator('#tensor-view').screenshot({ path: join(ARTIFACTS, 'quant-sample-fp8.png') })
  await done()
})

test('without its config.json the checkpoint is listed as stored, with the coded error as a notice', { skip }, async () => {
  const { page, done } = await newPage(browser)
  await page.goto(server.pageUrl(NO_CONFIG))
  await waitOpened(page)
  const text = await noticeText(page)
  assert.match(text, /The quantized weights cannot be decoded, so every tensor is listed as stored/)
  assert.equal(await page.textContent('#notice .notice-code'), 'QuantPartInvalid')
  assert.match(text, /scale_inv/)
  assert.ok(await page.isHidden('#error'), 'not an error of the file')
  const rows = await tableRows(page)
  assert.equal(rows.names.length, expected.stored, 'every stored tensor is a row')
  assert.ok(rows.names.includes(`${BIG}_scale_inv`))
  assert.equal(await page.locator('#panel-table .scheme-badge').count(), 0)
  // Plain tensors still open.
  await page.click('#panel-table tr[data-name="model.norm.weight"]')
  await page.waitForSelector('.stats-grid')
  await page.screenshot({ path: join(ARTIFACTS, 'quant-notice.png'), fullPage: true })

  // A config.json that disagrees with the tensors: the same, with its own code.
  await showSourceInputs(page)
  await page.fill('#url-input', server.url(MISMATCH))
  await page.click('#url-form button[type="submit"]')
  await page.waitForFunction(() => document.querySelector('#notice .notice-code')?.textContent === 'QuantConfigMismatch', null, { timeout: 15_000 })
  assert.match(await page.textContent('#notice') ?? '', /weight_block_size/)
  assert.equal((await tableRows(page)).names.length, expected.stored)
  await done()
})

test('config.json: not JSON is ignored silently; another failure is a note; a file that is not quantized says nothing', { skip }, async () => {
  const { page, done } = await newPage(browser)
  server.resetStats()
  await page.goto(server.pageUrl(NOT_JSON))
  await waitOpened(page)
  // Ignored: no config, so the 100 x 100 blocks do not fit, and that is the only thing said.
  assert.equal(await page.textContent('#notice .notice-code'), 'QuantPartInvalid')
  assert.doesNotMatch(await page.textContent('#notice') ?? '', /config\.json/)

  await showSourceInputs(page)
  await page.fill('#url-input', server.url(FAILING))
  await page.click('#url-form button[type="submit"]')
  await page.waitForFunction(() => /config\.json beside the file could not be read \(HTTP 401\)/.test(document.querySelector('#notice')?.textContent ?? ''), null, { timeout: 15_000 })
  assert.ok(await page.isHidden('#error'))
  assert.equal(await page.textContent('#summary-title'), 'model.safetensors')

  await showSourceInputs(page)
  await page.fill('#url-input', server.url(PLAIN))
  await page.click('#url-form button[type="submit"]')
  await page.waitForFunction(() => document.querySelector('#panel-table tr[data-name="a.weight"]') !== null)
  assert.ok(await page.isHidden('#notice'))
  assert.equal(await page.locator('.quantization').count(), 0)
  assert.equal(server.requestsFor('/plain/config.json'), 0, 'not looked for: no name of the file looks quantized')
  assert.equal(server.requestsFor(PLAIN), 1, 'opened once')
  await done()
})

test('a file dropped with its config.json opens with those settings; dropped alone, the notice', { skip }, async () => {
  const { page, done } = await newPage(browser)
  await page.goto(server.pageUrl())
  // The file's bytes come from the test server (a fetch of the page's own, not through the inspector).
  const drop = (/** @type {boolean} */ withConfig) => page.evaluate(async ({ url, config, withConfig }) => {
    const bytes = await (await fetch(url)).arrayBuffer()
    const transfer = new DataTransfer()
    transfer.items.add(new File([bytes], 'model.safetensors'))
    if (withConfig) transfer.items.add(new File([config], 'config.json', { type: 'application/json' }))
    document.dispatchEvent(new DragEvent('dragenter', { dataTransfer: transfer, bubbles: true, cancelable: true }))
    document.body.dispatchEvent(new DragEvent('drop', { dataTransfer: transfer, bubbles: true, cancelable: true }))
  }, { url: server.url(NO_CONFIG), config: JSON.stringify(CONFIG), withConfig })
  await drop(true)
  await waitOpened(page)
  await page.waitForSelector(`#panel-table tr[data-name="${BIG}"] .scheme-badge`)
  assert.ok(await page.isHidden('#notice'))
  assert.equal(await page.textContent('.summary .badge'), 'local file')
  assert.match(await page.textContent('.config-source') ?? '', /Settings from config\.json \(local\)/)
  await selectWeight(page, SMALL)
  await page.waitForSelector('.heatmap-canvas[data-drawn]')
  sameStats(await shownStats(page), expected.small, SMALL)
  const counts = await page.evaluate(() => Number(/** @type {HTMLElement} */ (document.querySelector('#network')).dataset.bytes))
  assert.ok(counts < quantBytes.length / 4, `read ${counts} of ${quantBytes.length} bytes`)
  await selectWeight(page, BIG)
  await page.waitForSelector('.stats-area[data-state="done"] .stats-grid', { timeout: 30_000 })
  sameStats(await shownStats(page), expected.big, BIG)

  await drop(false)
  await page.waitForFunction(() => document.querySelector('#notice .notice-code')?.textContent === 'QuantPartInvalid', null, { timeout: 15_000 })
  assert.equal((await tableRows(page)).names.length, expected.stored)
  await done()
})

test('every scheme (tests/js/quant-fixtures.js), served with its config.json: badges, logical shapes, stats of dequantize(); a sharded set; error fixtures', { skip, timeout: 180_000 }, async () => {
  const { fixtures, errorFixtures, shardedFixture, toBytes } = await import('../js/quant-fixtures.js')
  /** @type {{ path: string, weights: { name: string, scheme: string, shape: number[] }[], stats: Map<string, import('../../js/index.js').Stats> }[]} */
  const files = []
  for (const [name, fx] of Object.entries(fixtures())) {
    const bytes = await toBytes(fx.tensors)
    const config = fx.config ? { quantization_config: fx.config } : undefined
    const path = `/fx/${name}/model.safetensors`
    server.addFile(path, bytes)
    if (config) server.addFile(`/fx/${name}/config.json`, json(config))
    const f = /** @type {import('../../js/index.js').SafetensorsFile} */ (await open(bytes, { quantization: config }))
    const stats = new Map()
    for (const w of fx.weights) {
      const t = await f.dequantize(w.name)
      stats.set(w.name, t.stats({ bins: 64 }))
      t.dispose()
    }
    await f.close()
    files.push({ path, weights: fx.weights, stats })
  }
  const sharded = shardedFixture()
  for (const [shard, tensors] of Object.entries(sharded.shards)) server.addFile(`/fx/sharded/${shard}`, await toBytes(tensors))
  server.addFile('/fx/sharded/model.safetensors.index.json', json({ metadata: {}, weight_map: sharded.weightMap }))
  for (const [name, fx] of Object.entries(errorFixtures())) {
    if (!fx.inQuantized) server.addFile(`/fx/${name}/model.safetensors`, await toBytes(fx.tensors))
  }

  const { page, done } = await newPage(browser)
  await page.goto(server.pageUrl())
  /** @param {string} path */
  const openPath = async (path) => {
    await showSourceInputs(page)
    await page.fill('#url-input', server.url(path))
    await page.click('#url-form button[type="submit"]')
    await page.waitForFunction((p) => document.querySelector('#url-input') instanceof HTMLInputElement &&
      !document.querySelector('#summary')?.hasAttribute('hidden') && document.querySelector('#status')?.hasAttribute('hidden') &&
      /** @type {HTMLInputElement} */ (document.querySelector('#url-input')).value.endsWith(p), path, { timeout: 20_000 })
  }
  for (const file of files) {
    await openPath(file.path)
    assert.ok(await page.isHidden('#notice'), `${file.path}: no notice`)
    for (const w of file.weights) {
      const row = `#panel-table tr[data-name="${w.name}"]`
      assert.equal(await page.textContent(`${row} .scheme-badge`), w.scheme, `${file.path} ${w.name}`)
      assert.equal(await page.textContent(`${row} td:nth-child(3)`), `[${w.shape.join(', ')}]`, `${file.path} ${w.name}`)
      for (const part of Object.values(/** @type {any} */ (w).parts)) {
        if (part !== w.name) assert.equal(await page.locator(`#panel-table tr[data-name="${part}"]`).count(), 0, `${part} folded`)
      }
      await selectWeight(page, w.name)
      await page.waitForSelector('.stats-grid')
      sameStats(await shownStats(page), /** @type {import('../../js/index.js').Stats} */ (file.stats.get(w.name)), `${file.path} ${w.name}`)
    }
  }
  // A sharded set whose weights have their parts in different shards.
  await openPath('/fx/sharded/model.safetensors.index.json')
  for (const w of sharded.weights) assert.equal(await page.textContent(`#panel-table tr[data-name="${w.name}"] .scheme-badge`), w.scheme)
  const gate = sharded.weights.find((w) => w.scheme === 'mxfp4') ?? sharded.weights[0]
  await selectWeight(page, gate.name)
  await page.waitForSelector('.stats-grid')
  // Error fixtures: listed as stored, their code in the notice.
  for (const [name, fx] of Object.entries(errorFixtures())) {
    if (fx.inQuantized) continue
    await openPath(`/fx/${name}/model.safetensors`)
    await page.waitForFunction((code) => document.querySelector('#notice .notice-code')?.textContent === code, fx.code, { timeout: 10_000 })
    assert.equal(await page.locator('#panel-table .scheme-badge').count(), 0, name)
  }
  await done()
})

test('?hf= reads the config.json of the same repo folder at the same revision', { skip }, async () => {
  const hub = await startHub()
  try {
    hub.addFile('org/fp8', 'model.safetensors', quantBytes)
    hub.addFile('org/fp8', 'config.json', json(CONFIG))
    hub.addFile('org/fp8', 'weights/model.safetensors', quantBytes, { revision: 'refs/pr/1' })
    hub.addFile('org/fp8', 'weights/config.json', json(CONFIG), { revision: 'refs/pr/1' })
    hub.addFile('org/fp8', 'weights/config.json', json(WRONG_CONFIG))  // main's: not the one to read
    const { page, done } = await newPage(browser)
    await page.goto(`${server.origin}/web-demo/?${new URLSearchParams({ hf: 'org/fp8', endpoint: hub.base })}`)
    await waitOpened(page)
    await page.waitForSelector(`#panel-table tr[data-name="${BIG}"] .scheme-badge`)
    assert.ok(await page.isHidden('#notice'))
    assert.match(await page.textContent('.config-source') ?? '', /org\/fp8\/resolve\/main\/config\.json/)
    await page.goto(`${server.origin}/web-demo/?${new URLSearchParams({ hf: 'org/fp8@refs%2Fpr%2F1/weights/model.safetensors', endpoint: hub.base, tensor: SMALL })}`)
    await waitOpened(page)
    await page.waitForSelector('.stats-grid', { timeout: 20_000 })
    assert.ok(await page.isHidden('#notice'))
    assert.match(await page.textContent('.config-source') ?? '', /org\/fp8\/resolve\/refs%2Fpr%2F1\/weights\/config\.json/)
    sameStats(await shownStats(page), expected.small, SMALL)
    await done()
  } finally {
    await hub.close()
  }
})

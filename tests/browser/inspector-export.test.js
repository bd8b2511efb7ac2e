// The inspector's exports (a tensor or slice as .npy and JSON, downloaded; its name copied), the
// tree's parameter counts (a sharded set's partial ones while headers arrive), the network
// panel's split of the first request into header and the data read ahead with it, and error
// cards that name the file (two shards of a set missing). One Chromium for the file; the files'
// expected numbers are worked out here in Node with the library. Screenshots go to
// tests/artifacts/inspector/ (git-ignored).
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { open, serialize } from '../../js/node.js'
import { formatBytes } from '../../js/format.js'
import { sampleModel } from '../fixtures/make-sample.js'
import { SAMPLE_PATH, startServer } from '../servers/static-server.js'
import { INDEX_NAME, shardSample } from '../../web-demo/make-sharded-sample.js'
import { readNpy, valuesOf } from '../js/npy-reader.js'
import { encodeFp8Block } from '../js/quant-fixtures.js'
import { launchChromium, newPage, skip, waitOpened } from './chromium.js'

const ARTIFACTS = fileURLToPath(new URL('../artifacts/inspector/', import.meta.url))
const EXPORT = '/export/values.safetensors'
const SLOW_SET = '/slowset/'
const GONE_SET = '/gone/'
const QUANT = '/quant/model.safetensors'  // one FP8-block weight (DeepSeek style), config.json beside it
const QUANT_CONFIG = { model_type: 'deepseek_v3', quantization_config: { quant_method: 'fp8', fmt: 'e4m3', activation_scheme: 'dynamic', weight_block_size: [128, 128] } }
/** @type {number[]} the quantized weight dequantized by the library in Node */
let dequantized = []

/** @type {Awaited<ReturnType<typeof startServer>>} */
let server
/** @type {import('playwright-core').Browser} */
let browser
/** @type {Uint8Array} */
let sampleBytes
/** Each sample tensor's elements, byte offset and length, and its shard in the sharded sample. */
const sample = /** @type {Map<string, { elements: number, stored: number, byteOffset: number, byteLength: number, shard: string, quantized: boolean }>} */ (new Map())
/** @type {string[]} the sharded sample's shard files, sorted */
let shardNames = []
/** The sharded sample's index size and its first shard's header bytes (length prefix included). */
const goneSet = { index: 0, header: 0 }

const F32 = new Float32Array([0.1, NaN, Infinity, -Infinity, 1, 2, 3, 4, -0.5, 5, 6, 1e-3])
const BF16 = new Uint16Array([0x3f80, 0xc000, 0x7fc0, 0x4049, 0xff80, 0x0000])
const I64 = new BigInt64Array([2n ** 62n + 1n, -5n, 2n ** 53n + 1n])
const F8 = new Uint8Array([0x38, 0xc0, 0x7e, 0x7f])
/** @type {{ bf16: number[], f8: number[] }} the float32 values the library decodes these to */
const decoded = { bf16: [], f8: [] }

before(async () => {
  if (skip) return
  const m = sampleModel()
  sampleBytes = await serialize(m.tensors, { metadata: m.metadata })
  const f = /** @type {any} */ (await open(sampleBytes))
  const files = await shardSample(f)
  const index = JSON.parse(new TextDecoder().decode(files.get(INDEX_NAME)))
  // The FP8 layer is an fp8 weight: its scale counts no parameters, and selecting it reads both.
  const parts = new Set(f.quantized().flatMap((/** @type {any} */ q) => Object.values(q.parts).filter((p) => p !== q.name)))
  for (const name of f.names) {
    const info = f.info(name)
    const stored = info.shape.reduce((/** @type {number} */ a, /** @type {number} */ b) => a * b, 1)
    const quantized = f.quantized().some((/** @type {any} */ q) => Object.values(q.parts).includes(name))
    sample.set(name, { elements: parts.has(name) ? 0 : stored, stored, byteOffset: info.byteOffset, byteLength: info.byteLength, shard: index.weight_map[name], quantized })
  }
  await f.close()
  shardNames = [...new Set(Object.values(index.weight_map).map(String))].sort()

  const values = await serialize({
    'w.f32': { dtype: 'F32', shape: [3, 4], data: F32 },
    'w.bf16': { dtype: 'BF16', shape: [2, 3], data: BF16 },
    'w.i64': { dtype: 'I64', shape: [3], data: I64 },
    'w.f8': { dtype: 'F8_E4M3', shape: [2, 2], data: F8 },
  })
  const v = await open(values)
  for (const [name, key] of /** @type {const} */ ([['w.bf16', 'bf16'], ['w.f8', 'f8']])) {
    const t = await v.tensor(name)
    decoded[key] = [...t.toFloat32()]
    t.dispose()
  }
  await v.close()

  const x = Float32Array.from({ length: 256 * 128 }, (_, i) => Math.sin(i / 17) * (1 + (i % 5)))
  const { weight, scales, scaleShape } = encodeFp8Block(x, 256, 128, [128, 128])
  const quant = await serialize({
    'q.weight': { dtype: 'F8_E4M3', shape: [256, 128], data: weight },
    'q.weight_scale_inv': { dtype: 'F32', shape: scaleShape, data: scales },
  })
  const qf = /** @type {any} */ (await open(quant, { quantization: QUANT_CONFIG }))
  const dq = await qf.dequantize('q.weight')
  dequantized = [...dq.toFloat32()]
  dq.dispose()
  await qf.close()

  server = await startServer()
  server.addFile(QUANT, quant)
  server.addFile('/quant/config.json', new TextEncoder().encode(JSON.stringify(QUANT_CONFIG)))
  server.addFile(SAMPLE_PATH, sampleBytes)
  server.addFile(EXPORT, values)
  for (const [name, bytes] of files) server.addFile(SLOW_SET + name, bytes)
  // The last shard answers late: the tree is looked at while its header is still pending.
  server.addQuirks(SLOW_SET + shardNames[shardNames.length - 1], { latency: 2500 })
  // Two of the three shards are not there.
  server.addFile(GONE_SET + INDEX_NAME, /** @type {Uint8Array} */ (files.get(INDEX_NAME)))
  const first = /** @type {Uint8Array} */ (files.get(shardNames[0]))
  server.addFile(GONE_SET + shardNames[0], first)
  goneSet.index = /** @type {Uint8Array} */ (files.get(INDEX_NAME)).length
  goneSet.header = 8 + Number(new DataView(first.buffer, first.byteOffset).getBigUint64(0, true))
  await mkdir(ARTIFACTS, { recursive: true })
  browser = await launchChromium()
})

after(async () => {
  await browser?.close()
  await server?.close()
})

/** @param {import('playwright-core').Page} page @param {string} name */
async function selectTensor(page, name) {
  await page.click(`#panel-table tr[data-name="${name}"]`)
  await waitShown(page, name)
}

/** @param {import('playwright-core').Page} page @param {string} name */
async function waitShown(page, name) {
  await page.waitForFunction((n) => document.querySelector('#tensor-title')?.textContent === n &&
    document.querySelector('.result')?.getAttribute('aria-busy') === null && document.querySelector('.export-bar') !== null, name, { timeout: 15_000 })
}

/**
 * Clicks an export button and returns the download's file name and bytes.
 * @param {import('playwright-core').Page} page @param {string} selector
 */
async function downloaded(page, selector) {
  const [download] = await Promise.all([page.waitForEvent('download', { timeout: 15_000 }), page.click(selector)])
  const path = await download.path()
  assert.ok(path, 'the download was saved')
  return { name: download.suggestedFilename(), bytes: new Uint8Array(await readFile(path)) }
}

/** @param {import('playwright-core').Page} page @param {string} name */
async function shoot(page, name) {
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true })
}

test('exports a tensor and a slice as .npy and JSON, float32 for BF16 and F8, and copies its name', { skip }, async () => {
  const { page, done } = await newPage(browser)
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(server.url('/')).origin })
  await page.goto(server.pageUrl(EXPORT))
  await waitOpened(page)
  await selectTensor(page, 'w.f32')
  await shoot(page, 'export-f32')

  // The whole tensor: its own bytes as '<f4', shape (3, 4).
  let file = await downloaded(page, '.export-npy')
  assert.equal(file.name, 'w.f32.npy')
  let npy = readNpy(file.bytes)
  assert.equal(npy.descr, '<f4')
  assert.equal(npy.fortran, false)
  assert.deepEqual(npy.shape, [3, 4])
  assert.deepEqual(valuesOf(npy.descr, npy.data), [...F32])

  // A slice: rows 1 and 2 only.
  await page.fill('#slice-input', '1:3')
  await page.press('#slice-input', 'Enter')
  await page.waitForFunction(() => /Slice \[1:3\]/.test(document.querySelector('.loaded-line')?.textContent ?? '') &&
    document.querySelector('.export-label')?.textContent === 'Export [1:3]:', null, { timeout: 15_000 })
  file = await downloaded(page, '.export-npy')
  assert.equal(file.name, 'w.f32_1_3_.npy')
  npy = readNpy(file.bytes)
  assert.deepEqual(npy.shape, [2, 4])
  assert.deepEqual(valuesOf(npy.descr, npy.data), [...F32.slice(4)])
  file = await downloaded(page, '.export-json')
  assert.equal(file.name, 'w.f32_1_3_.json')
  let json = JSON.parse(new TextDecoder().decode(file.bytes))
  assert.deepEqual({ name: json.name, dtype: json.dtype, shape: json.shape, slice: json.slice }, { name: 'w.f32', dtype: 'F32', shape: [2, 4], slice: '1:3' })
  assert.deepEqual(json.values, [[1, 2, 3, 4], [-0.5, 5, 6, 0.001]])
  await page.locator('#tensor-view').screenshot({ path: join(ARTIFACTS, 'export-slice.png') })

  // NaN and the infinities in JSON are strings.
  await page.fill('#slice-input', '0')
  await page.press('#slice-input', 'Enter')
  await page.waitForFunction(() => document.querySelector('.export-label')?.textContent === 'Export [0]:', null, { timeout: 15_000 })
  file = await downloaded(page, '.export-json')
  json = JSON.parse(new TextDecoder().decode(file.bytes))
  assert.deepEqual(json.values, [0.1, 'NaN', 'Infinity', '-Infinity'])

  // BF16 and F8_E4M3: numpy has neither, so float32 as the library decodes them.
  await selectTensor(page, 'w.bf16')
  assert.match(await page.textContent('.export-note') ?? '', /numpy has no BF16: as float32/)
  npy = readNpy((await downloaded(page, '.export-npy')).bytes)
  assert.equal(npy.descr, '<f4')
  assert.deepEqual(npy.shape, [2, 3])
  assert.deepEqual(valuesOf(npy.descr, npy.data), decoded.bf16)
  assert.deepEqual(decoded.bf16.slice(0, 2), [1, -2], 'the library decodes BF16 as expected')
  await selectTensor(page, 'w.f8')
  npy = readNpy((await downloaded(page, '.export-npy')).bytes)
  assert.deepEqual([npy.descr, npy.shape], ['<f4', [2, 2]])
  assert.deepEqual(valuesOf(npy.descr, npy.data), decoded.f8)

  // I64: '<i8', every digit (past 2^53 too), in .npy and JSON.
  await selectTensor(page, 'w.i64')
  npy = readNpy((await downloaded(page, '.export-npy')).bytes)
  assert.equal(npy.descr, '<i8')
  assert.match(npy.header, /'shape': \(3,\), \}/)
  assert.deepEqual(valuesOf(npy.descr, npy.data), [...I64])
  const text = new TextDecoder().decode((await downloaded(page, '.export-json')).bytes)
  assert.match(text, new RegExp(`"values": \\[${I64.join(', ')}\\]`))

  // Copy the name: through navigator.clipboard, then through the fallback when it is missing.
  await page.click('.copy-name')
  await page.waitForSelector('.copy-name[data-copied="true"]')
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), 'w.i64')
  await selectTensor(page, 'w.f32')
  await page.evaluate(() => Object.defineProperty(navigator, 'clipboard', { value: undefined, configurable: true }))
  await page.click('.copy-name')
  await page.waitForSelector('.copy-name[data-copied="true"]')
  await page.evaluate(() => { delete (/** @type {any} */ (navigator)).clipboard })
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), 'w.f32', 'the fallback copied it')
  await done()
})

test('a quantized weight exports dequantized, as float32 in its logical shape, whole or by rows', { skip }, async () => {
  const { page, done } = await newPage(browser)
  await page.goto(server.pageUrl(QUANT))
  await waitOpened(page)
  await selectTensor(page, 'q.weight')
  assert.match(await page.textContent('.export-note') ?? '', /dequantized, as float32/)
  let npy = readNpy((await downloaded(page, '.export-npy')).bytes)
  assert.deepEqual([npy.descr, npy.shape], ['<f4', [256, 128]])
  assert.deepEqual(valuesOf(npy.descr, npy.data), dequantized)
  await page.fill('#slice-input', '130:132')
  await page.press('#slice-input', 'Enter')
  await page.waitForFunction(() => document.querySelector('.export-label')?.textContent === 'Export [130:132]:', null, { timeout: 15_000 })
  npy = readNpy((await downloaded(page, '.export-npy')).bytes)
  assert.deepEqual(npy.shape, [2, 128])
  assert.deepEqual(valuesOf(npy.descr, npy.data), dequantized.slice(130 * 128, 132 * 128))
  await done()
})

/** Parameters of the sample under `path` (a group's dotted prefix). @param {string} path @param {(shard: string) => boolean} [counted] */
function parametersUnder(path, counted) {
  let parameters = 0
  let bytes = 0
  let pending = 0
  for (const [name, t] of sample) {
    if (name !== path && !name.startsWith(`${path}.`)) continue
    // Until every header is in, quantized weights are not detected: their parts count as stored.
    if (!counted || counted(t.shard)) {
      parameters += counted ? t.stored : t.elements
      bytes += t.byteLength
    } else pending++
  }
  return { parameters, pending, bytes }
}

/** Every group's parameter span in the tree. @param {import('playwright-core').Page} page */
function treeParams(page) {
  return page.$$eval('#panel-tree .tree-params', (els) => els.map((e) => {
    const d = /** @type {HTMLElement} */ (e).dataset
    const size = /** @type {HTMLElement} */ (e.closest('summary')?.querySelector('.tree-size'))
    return {
      path: d.path ?? '', parameters: Number(d.parameters), pending: d.pending === undefined ? null : Number(d.pending), text: e.textContent ?? '',
      size: size?.textContent ?? '', bytes: size?.dataset.bytes === undefined ? null : Number(size.dataset.bytes),
    }
  }))
}

test('the tree gives each group its parameters; a sharded set partial ones (≥) until its headers are in', { skip }, async () => {
  const { page, done } = await newPage(browser)
  await page.goto(server.pageUrl(SAMPLE_PATH))
  await waitOpened(page)
  await page.click('#tab-tree')
  let groups = await treeParams(page)
  assert.ok(groups.length >= 5, `groups drawn: ${groups.length}`)
  for (const g of groups) {
    assert.equal(g.parameters, parametersUnder(g.path).parameters, g.path)
    assert.equal(g.pending, null)
    assert.match(g.text, /^[\d.,]+ ?[kMB]? params$/)
  }
  const layers = groups.find((g) => g.path === 'model.layers')
  assert.ok(layers, 'model.layers is a group')
  await page.locator('#panel-tree').screenshot({ path: join(ARTIFACTS, 'tree-parameters.png') })

  // The sharded sample, its last shard slow: while it is pending, counts of what is read, marked.
  const slow = shardNames[shardNames.length - 1]
  await page.goto(server.pageUrl(SLOW_SET + INDEX_NAME))
  await page.waitForFunction((n) => (document.querySelector('#tensors')?.textContent ?? '').includes(`Reading the shard headers: ${n - 1} of ${n}`), shardNames.length, { timeout: 15_000 })
  await page.click('#tab-tree')
  await page.waitForSelector('#panel-tree .tree-params-partial')
  groups = await treeParams(page)
  let partial = 0
  for (const g of groups) {
    const want = parametersUnder(g.path, (shard) => shard !== slow)
    if (want.pending === 0) {
      assert.equal(g.pending, null, `${g.path}: whole`)
      assert.equal(g.parameters, want.parameters, g.path)
      continue
    }
    partial++
    assert.deepEqual({ parameters: g.parameters, pending: g.pending, bytes: g.bytes }, want, g.path)
    assert.ok(g.text.startsWith(want.parameters > 0 ? '≥ ' : '…'), `${g.path}: marked partial (${g.text})`)
    assert.equal(g.size, want.bytes > 0 ? `≥ ${formatBytes(want.bytes)}` : '…', `${g.path}: its size, partial`)
  }
  assert.ok(partial > 0, 'some groups wait for the slow shard')
  await page.locator('#panel-tree').screenshot({ path: join(ARTIFACTS, 'tree-parameters-partial.png') })
  await waitOpened(page)
  await page.waitForFunction(() => document.querySelector('#panel-tree .tree-params') !== null && document.querySelector('#panel-tree .tree-params-partial') === null, null, { timeout: 15_000 })
  for (const g of await treeParams(page)) assert.equal(g.parameters, parametersUnder(g.path).parameters, `${g.path} once every header is in`)
  await done()
})

test('the network panel tells the header from the data read ahead with it, and from tensors fetched later', { skip }, async () => {
  const { page, done } = await newPage(browser)
  await page.goto(server.pageUrl(SAMPLE_PATH))
  await waitOpened(page)
  const header = 8 + Number(new DataView(sampleBytes.buffer, sampleBytes.byteOffset).getBigUint64(0, true))
  const window = Math.min(sampleBytes.length, 262144)
  assert.ok(header < window / 4, 'the header is much smaller than the first window')
  const detail = () => page.$eval('.network-detail', (e) => ({ ...(/** @type {HTMLElement} */ (e)).dataset, text: e.textContent ?? '' }))
  await page.waitForFunction((w) => document.querySelector('#network')?.getAttribute('data-bytes') === String(w), window, { timeout: 5000 })
  let d = await detail()
  assert.deepEqual([Number(d.header), Number(d.ahead), Number(d.tensors)], [header, window - header, 0])
  assert.equal(d.text, `Of which: header ${formatBytes(header)} + ${formatBytes(window - header)} of tensor data read ahead with it + 0 B of tensors fetched since.`)
  await page.locator('#network').screenshot({ path: join(ARTIFACTS, 'network-header-window.png') })

  // A tensor past the window: its bytes count as tensors, the header's stay as they were.
  const [last, info] = [...sample].filter(([, t]) => !t.quantized).reduce((a, b) => (b[1].byteOffset > a[1].byteOffset ? b : a))
  assert.ok(8 + info.byteOffset >= window, 'the last tensor lies past the first window')
  server.resetStats()
  await selectTensor(page, last)
  await page.waitForFunction((b) => document.querySelector('.network-detail')?.getAttribute('data-tensors') === String(b), info.byteLength, { timeout: 5000 })
  d = await detail()
  assert.deepEqual([Number(d.header), Number(d.ahead), Number(d.tensors)], [header, window - header, server.bytesFor(SAMPLE_PATH)])
  assert.match(d.text, new RegExp(`\\+ ${formatBytes(info.byteLength).replace('.', '\\.')} of tensors fetched since\\.$`))
  await shoot(page, 'network-breakdown')
  await done()
})

test('error cards name the file; two missing shards are listed and the index\'s names still shown', { skip }, async () => {
  const { page, done } = await newPage(browser)
  const indexUrl = server.url(GONE_SET + INDEX_NAME)
  await page.goto(server.pageUrl(indexUrl))
  await page.waitForSelector('#error:not([hidden]) .shard-failures', { timeout: 15_000 })
  const card = await page.evaluate(() => ({
    title: document.querySelector('#error .error-title')?.textContent ?? '',
    file: document.querySelector('#error .error-file')?.textContent ?? '',
    items: [...document.querySelectorAll('#error .shard-failure')].map((e) => e.textContent ?? ''),
  }))
  const missing = shardNames.slice(1)
  assert.equal(card.title, `${missing.length} of ${shardNames.length} shard headers could not be read`)
  assert.equal(card.file, `File: ${indexUrl}`)
  assert.equal(card.items.length, missing.length)
  missing.forEach((name, i) => {
    assert.ok(card.items[i].startsWith(name), `${card.items[i]} names ${name}`)
    assert.match(card.items[i], /ShardMissing .*: HTTP 404/)
  })
  // Every name from the index is still listed, those of the missing shards too.
  assert.equal(await page.locator('#panel-table tbody tr').count(), sample.size)
  const orphan = [...sample].find(([, t]) => t.shard === missing[0])?.[0]
  assert.ok(orphan)
  assert.equal(await page.locator(`#panel-table tr[data-name="${orphan}"]`).count(), 1)
  // The network panel: the index, the one header read, and what came with it; the 404s' bodies are none of them.
  await page.waitForFunction((g) => {
    const d = /** @type {HTMLElement | null} */ (document.querySelector('.network-detail'))?.dataset
    return d?.index === String(g.index) && d?.header === String(g.header)
  }, goneSet, { timeout: 5000 }).catch(() => {})
  const shown = await page.$eval('.network-detail', (e) => ({ ...(/** @type {HTMLElement} */ (e)).dataset }))
  assert.deepEqual([shown.index, shown.header], [String(goneSet.index), String(goneSet.header)])
  const ahead = Number(await page.getAttribute('.network-detail', 'data-ahead'))
  assert.equal(ahead, server.bytesFor(GONE_SET + shardNames[0]) - goneSet.header, 'the rest of the one shard\'s first window')
  assert.equal(await page.textContent('.network-detail'), `Of which: index ${formatBytes(goneSet.index)} + headers ${formatBytes(goneSet.header)} + ` +
    `${formatBytes(ahead)} of tensor data read ahead with them + 0 B of tensors fetched since.`)
  assert.equal(await page.getAttribute('.network-detail', 'data-tensors'), '0', 'the 404 pages are not tensors')
  await shoot(page, 'error-missing-shards')

  // Selecting a tensor of a missing shard: the card names that shard.
  await page.click(`#panel-table tr[data-name="${orphan}"]`)
  await page.waitForFunction(() => document.querySelector('#error:not([hidden]) .error-code')?.textContent === 'ShardMissing' &&
    document.querySelector('#error .shard-failures') === null, null, { timeout: 15_000 })
  assert.equal(await page.textContent('#error .error-file'), `File: ${server.url(GONE_SET + missing[0])}`)

  // A single file that is not there.
  const gone = server.url('/nowhere/model.safetensors')
  await page.goto(server.pageUrl(gone))
  await page.waitForSelector('#error:not([hidden]) .error-file', { timeout: 15_000 })
  assert.equal(await page.textContent('#error .error-file'), `File: ${gone}`)
  assert.equal(await page.textContent('#error .error-code'), 'NotFound')
  await shoot(page, 'error-file-named')
  await done()
})

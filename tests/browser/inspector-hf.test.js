// The inspector (web-demo/) opening Hugging Face repo ids in headless Chromium, against the Hub
// emulation (tests/js/hub-server.js: a hub and its CDN on two more origins, signed URLs that
// expire), with `?endpoint=` pointing the page at it. The page itself comes from
// web-demo/serve.js. Screenshots go to tests/artifacts/inspector/ (git-ignored).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { formatValue } from '../../js/format.js'
import { startServer } from '../servers/static-server.js'
import { INDEX_NAME } from '../../web-demo/make-sharded-sample.js'
import { startHub } from '../js/hub-server.js'
import { newPage, showSourceInputs, skip, waitOpened } from './chromium.js'
import { ARTIFACTS, DOWN_PROJ, errorShown, inspectorHooks, sampleFixture, selectTensor } from './inspector-setup.js'

const NORM = 'model.norm.weight'

/** @type {Awaited<ReturnType<typeof startServer>>} */
let server
/** @type {Awaited<ReturnType<typeof startHub>>} */
let hub
/** @type {Uint8Array} */
let sampleBytes
/** @type {Awaited<ReturnType<typeof sampleFixture>>['expected'] & { shards: number }} the sample's tensor count, parameters and stats, worked out in Node, and its shards */
let expected

const hooks = inspectorHooks(async ({ closeAfter }) => {
  const sample = await sampleFixture()
  const { shardFiles } = sample
  sampleBytes = sample.bytes
  expected = { ...sample.expected, shards: shardFiles.size - 1 }

  hub = closeAfter(await startHub())
  hub.addFile('org/tiny-llama', 'model.safetensors', sampleBytes)
  hub.addFile('org/tiny-llama', 'config.json', new TextEncoder().encode('{"model_type": "llama"}'))
  hub.addFile('org/gated-llama', 'model.safetensors', sampleBytes, { gated: true })
  hub.addFile('org/revs', 'weights/model.safetensors', sampleBytes, { revision: 'refs/pr/1' })
  for (const [name, bytes] of shardFiles) hub.addFile('org/sharded-llama', name, bytes)
  server = closeAfter(await startServer())
})

/** The inspector with `?endpoint=` naming the emulated Hub, and more parameters. @param {Record<string, string>} [more] */
function pageUrl(more = {}) {
  return `${server.origin}/web-demo/?${new URLSearchParams({ ...more, endpoint: hub.base })}`
}

/** @param {import('playwright-core').Page} page @param {string} text */
async function openRepo(page, text) {
  await showSourceInputs(page)
  await page.fill('#repo-input', text)
  await page.click('#repo-form button[type="submit"]')
}

/** The network panel's counts. @param {import('playwright-core').Page} page */
function networkCounts(page) {
  return page.evaluate(() => {
    const e = /** @type {HTMLElement} */ (document.querySelector('#network'))
    return { bytes: Number(e.dataset.bytes), requests: Number(e.dataset.requests), total: Number(e.dataset.total), text: e.textContent ?? '' }
  })
}

test('a repo id opens: every tensor in the table, a tensor view loads, one resolve, the meter counts', { skip }, async () => {
  const { page, done } = await newPage(hooks.browser)
  await page.goto(pageUrl())
  assert.match(await page.textContent('#hub-endpoint') ?? '', new RegExp(`Repo ids open from ${hub.base}`), 'the page says where repo ids go')
  hub.resetStats()
  await openRepo(page, 'org/tiny-llama')
  await waitOpened(page)
  assert.equal(await page.textContent('#summary-title'), 'org/tiny-llama')
  assert.equal(await page.textContent('.summary .badge'), 'Hugging Face Hub file')
  assert.equal(await page.locator('#panel-table tbody tr').count(), expected.rows)
  assert.equal(await page.textContent('#tensor-count'), `${expected.rows} tensors`)
  const tiles = await page.$$eval('.tile', (els) => els.map((e) => e.textContent))
  assert.match(tiles[0] ?? '', new RegExp(`${sampleBytes.length.toLocaleString('en-US')} bytes`))
  assert.match(tiles[3] ?? '', new RegExp(expected.parameters.toLocaleString('en-US')))

  await selectTensor(page, DOWN_PROJ)
  await page.waitForSelector('.heatmap-canvas[data-drawn]')
  const stats = await page.$$eval('.stats-grid .stat', (els) => Object.fromEntries(els.map((e) => [e.querySelector('dt')?.textContent, e.querySelector('dd')?.textContent])))
  assert.equal(stats.min, formatValue(expected.downProj.min))
  assert.equal(stats.max, formatValue(expected.downProj.max))
  assert.equal(stats.mean, formatValue(expected.downProj.mean))
  assert.equal(await page.locator('.values-table tbody td.num').count(), 64)

  // One resolve through the hub; the header and the tensor from the CDN; the meter saw both.
  assert.deepEqual(hub.stats.hubLog.map((e) => [e.file, e.status]), [['model.safetensors', 302]])
  assert.deepEqual(hub.stats.cdnLog.map((e) => e.status), [206, 206])
  const sent = hub.stats.cdnLog.reduce((n, e) => n + e.bytes, 0)
  await page.waitForFunction((b) => document.querySelector('#network')?.getAttribute('data-bytes') === String(b), sent, { timeout: 5000 })
  const counts = await networkCounts(page)
  assert.equal(counts.requests, 2, 'the redirect is followed inside one fetch: two requests for the page')
  assert.equal(counts.total, sampleBytes.length)
  const search = new URL(page.url()).searchParams
  assert.deepEqual([search.get('hf'), search.get('endpoint'), search.get('tensor')], ['org/tiny-llama', hub.base, DOWN_PROJ])
  await page.screenshot({ path: join(ARTIFACTS, 'hf-repo-opened.png'), fullPage: true })
  await done()
})

test('a gated repo: access denied without a token, opens with the page\'s token, which never reaches the CDN', { skip }, async () => {
  const { page, done } = await newPage(hooks.browser)
  await page.goto(pageUrl())
  await openRepo(page, 'org/gated-llama')
  const error = await errorShown(page)
  assert.equal(error.title, 'Access denied (HTTP 401)')
  assert.match(error.text, /restricted/)
  await page.screenshot({ path: join(ARTIFACTS, 'hf-gated-denied.png'), fullPage: true })
  hub.resetStats()
  await page.click('.token summary')
  await page.fill('#token-input', hub.token)
  await openRepo(page, 'org/gated-llama/model.safetensors')
  await waitOpened(page)
  assert.ok(await page.isHidden('#error'))
  await selectTensor(page, NORM)
  assert.deepEqual(hub.stats.hubLog.map((e) => e.authorization), [`Bearer ${hub.token}`])
  assert.ok(hub.stats.cdnLog.length >= 2)
  for (const e of hub.stats.cdnLog) assert.deepEqual([e.authorization, e.cookie], [null, null])
  assert.ok(!page.url().includes(hub.token), 'the token is never put in the address')
  await done()
})

test('after the CDN URL expires, the next tensor is read with one more resolve', { skip }, async () => {
  const { page, done } = await newPage(hooks.browser)
  await page.goto(pageUrl())
  hub.resetStats()
  await openRepo(page, 'org/tiny-llama')
  await waitOpened(page)
  hub.expireAll()
  await selectTensor(page, DOWN_PROJ)
  await page.waitForSelector('.heatmap-canvas[data-drawn]')
  assert.equal(await page.textContent('.stats-grid .stat:first-child dd'), formatValue(expected.downProj.min))
  assert.deepEqual(hub.stats.hubLog.map((e) => [e.range, e.status]), [['bytes=0-262143', 302], ['bytes=0-0', 302]])
  assert.deepEqual(hub.stats.cdnLog.map((e) => e.status), [206, 403, 206, 206])
  assert.ok(await page.isHidden('#error'))
  await done()
})

test('?hf= opens a sharded repo on load; hf:// in the URL field, revisions and huggingface.co links work', { skip }, async () => {
  const { page, done } = await newPage(hooks.browser)
  await page.goto(pageUrl({ hf: 'org/sharded-llama', tensor: NORM }))
  await waitOpened(page)
  assert.equal(await page.textContent('.summary .badge'), `sharded · ${expected.shards} shards`)
  assert.equal(await page.locator('#panel-table tbody tr').count(), expected.rows)
  await page.waitForFunction((n) => document.querySelector('#tensor-title')?.textContent === n, NORM)
  assert.equal(await page.inputValue('#repo-input'), 'org/sharded-llama')
  assert.ok(hub.stats.hubLog.some((e) => e.file === INDEX_NAME && e.status === 200))
  await page.screenshot({ path: join(ARTIFACTS, 'hf-sharded.png'), fullPage: true })

  await showSourceInputs(page)
  await page.fill('#url-input', 'hf://org/revs@refs%2Fpr%2F1/weights/model.safetensors')
  await page.click('#url-form button[type="submit"]')
  await page.waitForFunction(() => document.querySelector('#summary-title')?.textContent === 'org/revs@refs%2Fpr%2F1/weights/model.safetensors')
  assert.deepEqual(hub.stats.hubLog.slice(-1).map((e) => [e.revision, e.file]), [['refs/pr/1', 'weights/model.safetensors']])
  assert.equal(new URL(page.url()).searchParams.get('hf'), 'org/revs@refs%2Fpr%2F1/weights/model.safetensors')

  // A huggingface.co page link in the repo field: the same file, from the configured Hub.
  await openRepo(page, 'https://huggingface.co/org/tiny-llama/blob/main/model.safetensors')
  await page.waitForFunction(() => document.querySelector('#summary-title')?.textContent === 'org/tiny-llama@main/model.safetensors')
  assert.equal(await page.locator('#panel-table tbody tr').count(), expected.rows)
  await done()
})

test('what cannot be opened says why: a bad repo id, a repo without weights, a missing file', { skip }, async () => {
  const { page, done } = await newPage(hooks.browser)
  await page.goto(pageUrl())
  await openRepo(page, 'just-a-name')
  let error = await errorShown(page)
  assert.equal(error.title, 'Not a Hugging Face repo id')
  assert.equal(error.code, 'InvalidArgument')
  hub.addFile('org/no-weights', 'README.md', new TextEncoder().encode('# nothing'))
  await openRepo(page, 'org/no-weights')
  await page.waitForFunction(() => document.querySelector('.error-code')?.textContent === 'NotFound')
  error = await errorShown(page)
  assert.match(error.text, /neither model\.safetensors nor model\.safetensors\.index\.json/)
  await openRepo(page, 'org/tiny-llama/nope.safetensors')
  await page.waitForFunction(() => /Entry not found/.test(document.querySelector('#error')?.textContent ?? ''))
  error = await errorShown(page)
  assert.equal(error.title, 'Not found (HTTP 404)')
  await done()
})

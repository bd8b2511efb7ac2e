// The inspector (web-demo/) on a sharded set at the scale of the largest public checkpoints: an
// index of 500,000 names over 96 shards (tests/js/sharded-fixtures.js), served with every shard
// held back until the test lets it through, so that what shows from the index alone can be seen.
// The names show at once (dtype, shape and size as …), the table keeps fewer than 200 rows in the
// DOM, scrolls to the last name, filters, sorts and folds alike layers in the tree; once the
// headers are let through, dtypes and shapes fill in. A smaller set covers Cancel, going on after
// it, a tensor selected before its shard header arrived, and shards that fail. The page's own
// sort and filter times (performance.measure) are printed, not asserted; that the sort by name
// took the names' keys the page made while idle is.
// Screenshots go to tests/artifacts/inspector/ (git-ignored).
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { bytesBody, findFile, startServer } from '../../web-demo/serve.js'
import { formatBytes } from '../../js/format.js'
import { makeShardedSet, kimiK3 } from '../js/sharded-fixtures.js'
import { launchChromium, newPage, skip, waitOpened } from './chromium.js'

const ARTIFACTS = fileURLToPath(new URL('../artifacts/inspector/', import.meta.url))

/** The 500,000-name set: Kimi-K3's layout, BF16 (no quantized weights to fold: rows are the stored tensors). */
const BIG = '/big/'
/** 5,000 names over 12 shards: Cancel, selecting a pending tensor, failing shards. */
const SMALL = '/small/'
/** Shards of the small set that answer 404 under FAILING. */
const FAILING = '/failing/'
const MISSING = [3, 8]

const collator = new Intl.Collator('en', { numeric: true })

/** @type {import('playwright-core').Browser} */
let browser
/** @type {Awaited<ReturnType<typeof startServer>>} */
let server
/** @type {ReturnType<typeof makeShardedSet>} */
let big
/** @type {ReturnType<typeof makeShardedSet>} */
let small
/** @type {Map<string, { set: ReturnType<typeof makeShardedSet>, file: number | 'index' }>} what each data path serves */
const files = new Map()
/** Shard paths let through; requests for the others wait. */
const released = new Set()
/** @type {Map<string, (() => void)[]>} */
const waiting = new Map()
/** Shard requests answered, by path. */
const served = new Map()

/** Lets the requests for these shard paths through. @param {string[]} paths */
function release(paths) {
  for (const path of paths) {
    released.add(path)
    for (const go of waiting.get(path) ?? []) go()
    waiting.delete(path)
  }
}

/** @param {string} folder @param {ReturnType<typeof makeShardedSet>} set */
function mount(folder, set) {
  files.set(`${folder}${set.indexName}`, { set, file: 'index' })
  set.allShardPaths.forEach((path, i) => { if (set.shardPaths.includes(path)) files.set(`${folder}${path}`, { set, file: i }) })
}

/** @param {string} path @returns {Promise<import('../../web-demo/serve.js').Body | null>} */
async function find(path) {
  const entry = files.get(path)
  if (!entry) return findFile(path)
  return bytesBody(entry.file === 'index' ? entry.set.indexBytes : entry.set.shardBytes(entry.file), path)
}

before(async () => {
  if (skip) return
  big = kimiK3({ dtype: 'BF16' })
  small = makeShardedSet({ tensors: 5000, shards: 12, experts: 16 })
  // Made now, so that the page's times are the page's: the set is generated on first use.
  for (const set of [big, small]) {
    void set.indexBytes
    set.allShardPaths.forEach((_, i) => set.shardBytes(i))
  }
  mount(BIG, big)
  mount(SMALL, small)
  mount(FAILING, small)
  for (const i of MISSING) files.delete(`${FAILING}${small.allShardPaths[i]}`)
  server = await startServer({
    find,
    policy: (path) => ({ data: files.has(path) || path.startsWith(FAILING) }),
    admit: async (_req, entry) => {
      if (!/\/model-[^/]*\.safetensors$/.test(entry.path)) return null
      if (!released.has(entry.path)) await new Promise((go) => waiting.set(entry.path, [...waiting.get(entry.path) ?? [], () => go(undefined)]))
      served.set(entry.path, (served.get(entry.path) ?? 0) + 1)
      return null
    },
  })
  await mkdir(ARTIFACTS, { recursive: true })
  browser = await launchChromium()
})

after(async () => {
  release([...waiting.keys()])
  await browser?.close()
  await server?.close()
})

/**
 * The page's measures named `name` since the last call: what each was of (a column; a filter's
 * words) and how long it took.
 * @param {import('playwright-core').Page} page @param {string} name
 * @returns {Promise<string[]>}
 */
async function measures(page, name) {
  return page.evaluate((n) => {
    const entries = /** @type {PerformanceMeasure[]} */ (performance.getEntriesByName(n))
    performance.clearMeasures(n)
    return entries.map((e) => `${e.detail?.key ?? `"${e.detail?.words?.join(' ')}"`} ${e.duration.toFixed(0)} ms`)
  }, name)
}

/** The names of the rows in the DOM, in order. @param {import('playwright-core').Page} page */
function rowNames(page) {
  return page.$$eval('#panel-table tbody tr', (trs) => trs.map((tr) => /** @type {HTMLElement} */ (tr).dataset.name ?? ''))
}

/** @param {import('playwright-core').Page} page @param {string} text */
async function waitCount(page, text) {
  await page.waitForFunction((t) => document.querySelector('#tensor-count')?.textContent === t, text, { timeout: 30_000 })
}

/** Clicks a column's sort button and returns the first names shown. @param {import('playwright-core').Page} page @param {string} key @param {number} n */
async function sortBy(page, key, n) {
  await page.click(`th button[data-key="${key}"]`)
  return (await rowNames(page)).slice(0, n)
}

/** The `n` least names in `compare`'s order, by one pass (no sort of them all). @param {string[]} names @param {(a: string, b: string) => number} compare @param {number} n */
function least(names, compare, n) {
  /** @type {string[]} */
  const best = []
  for (const name of names) {
    if (best.length === n && compare(name, best[n - 1]) >= 0) continue
    best.push(name)
    best.sort(compare)
    if (best.length > n) best.pop()
  }
  return best
}

/** @param {number} ms */
const fmt = (ms) => `${ms.toFixed(0)} ms`

test('500,000 names over 96 shards: shown from the index at once, virtualized, sorted, filtered, folded; headers fill in', { skip, timeout: 600_000 }, async (t) => {
  const names = big.names
  assert.equal(names.length, 500_000)
  assert.equal(big.shardPaths.length, 96)
  // The index lists names sorted within each shard, and the page keeps the index's order: shard by shard.
  const byShard = new Map(big.shardPaths.map((p) => [p, /** @type {string[]} */ ([])]))
  for (const name of names) byShard.get(/** @type {string} */ (big.shardOfName(name)))?.push(name)
  const indexOrder = big.shardPaths.flatMap((p) => (byShard.get(p) ?? []).sort())
  const expert = 'layers.17.mlp.experts.42.'
  const expertNames = names.filter((n) => n.includes(expert))
  assert.equal(expertNames.length, 3)
  // Layers alike by their names: the layers with as many tensors as layer 0.
  const perLayer = new Map()
  for (const n of names) {
    const m = /^model\.layers\.(\d+)\./.exec(n)
    if (m) perLayer.set(Number(m[1]), (perLayer.get(Number(m[1])) ?? 0) + 1)
  }
  let alike = 0
  while (perLayer.get(alike + 1) === perLayer.get(0)) alike++

  const { page, done } = await newPage(browser)
  const opened = Date.now()
  await page.goto(server.pageUrl(server.url(`${BIG}${big.indexName}`)))
  await waitCount(page, '500,000 tensors')
  const shownAfter = Date.now() - opened
  // No shard header has arrived: every shard request is still held.
  assert.equal(served.size, 0, 'no shard answered yet')
  assert.equal(await page.textContent('#headers-text'), 'Reading the shard headers: 0 of 96')
  assert.equal(await page.getAttribute('#summary', 'aria-busy'), 'true')
  assert.equal(await page.textContent('.summary .badge'), 'sharded · 96 shards')
  const rows = await page.locator('#panel-table tbody tr').count()
  assert.ok(rows > 10 && rows < 200, `${rows} rows in the DOM`)
  assert.deepEqual(await rowNames(page).then((r) => r.slice(0, 5)), indexOrder.slice(0, 5))
  assert.deepEqual(await page.$$eval('#panel-table tbody tr:first-child td', (tds) => tds.map((td) => td.textContent)),
    [indexOrder[0], '…', '…', '…', '…', '1/96'])
  assert.equal(await page.getAttribute('#panel-table table', 'aria-rowcount'), '500001')
  await page.screenshot({ path: join(ARTIFACTS, 'scale-names-first.png'), fullPage: true })

  // Scrolling to the end draws the last names only.
  await page.$eval('.tensor-table-scroll', (e) => { e.scrollTop = e.scrollHeight })
  await page.waitForSelector(`#panel-table tr[data-name="${indexOrder.at(-1)}"]`, { timeout: 10_000 })
  assert.ok(await page.locator(`#panel-table tr[data-name="${indexOrder.at(-1)}"]`).isVisible())
  assert.ok(await page.locator('#panel-table tbody tr').count() < 200)
  assert.equal(await page.locator(`#panel-table tr[data-name="${indexOrder[0]}"]`).count(), 0, 'the first rows are gone')
  await page.locator('#tensors').screenshot({ path: join(ARTIFACTS, 'scale-scrolled-end.png') })
  // The keyboard reaches both ends through every row.
  await page.focus('#panel-table tbody tr[tabindex="0"]')
  await page.keyboard.press('Home')
  assert.equal(await page.evaluate(() => /** @type {HTMLElement} */ (document.activeElement).dataset.name), indexOrder[0])
  await page.keyboard.press('ArrowDown')
  await page.keyboard.press('PageDown')
  await page.keyboard.press('End')
  assert.equal(await page.evaluate(() => /** @type {HTMLElement} */ (document.activeElement).dataset.name), indexOrder.at(-1))
  await page.keyboard.press('ArrowUp')
  assert.equal(await page.evaluate(() => /** @type {HTMLElement} */ (document.activeElement).dataset.name), indexOrder.at(-2))

  // Filtering for one expert of one layer.
  await page.fill('#tensor-filter', expert)
  await waitCount(page, `3 of 500,000`)
  assert.deepEqual((await rowNames(page)).sort(), [...expertNames].sort())
  await page.fill('#tensor-filter', 'experts.42.down')
  const downs = names.filter((n) => n.includes('experts.42.down')).length
  await waitCount(page, `${downs.toLocaleString('en-US')} of 500,000`)
  await page.fill('#tensor-filter', '')
  await waitCount(page, '500,000 tensors')
  const filterTimes = await measures(page, 'tensor-browser:filter')

  // Sorting by name, both ways: the collator's order (worked out here without sorting them all),
  // with the names' keys the page made while idle.
  await measures(page, 'tensor-table:sort')  // the first order, by offset
  await page.waitForFunction(() => performance.getEntriesByName('tensor-table:name-keys').length > 0, null, { timeout: 60_000 })
  const byName = await sortBy(page, 'name', 5)
  assert.deepEqual(byName, least(names, (a, b) => collator.compare(a, b), 5))
  assert.deepEqual(await page.evaluate(() => performance.getEntriesByName('tensor-table:sort').map((e) => /** @type {PerformanceMeasure} */ (e).detail.prepared)),
    [true], 'the sort by name took the keys made beforehand')
  const byNameDown = await sortBy(page, 'name', 5)
  assert.deepEqual(byNameDown, least(names, (a, b) => collator.compare(b, a), 5))
  // By size while no size is known: every row is unknown, in index order.
  assert.deepEqual(await sortBy(page, 'byteLength', 3), indexOrder.slice(0, 3))
  const pendingSorts = await measures(page, 'tensor-table:sort')
  await page.fill('#tensor-filter', 'down_proj')
  await waitCount(page, `${names.filter((n) => n.includes('down_proj')).length.toLocaleString('en-US')} of 500,000`)
  assert.deepEqual((await rowNames(page)).slice(0, 3), indexOrder.filter((n) => n.includes('down_proj')).slice(0, 3), 'the matches, unknown sizes in index order')
  await page.fill('#tensor-filter', '')
  await waitCount(page, '500,000 tensors')
  filterTimes.push(...await measures(page, 'tensor-browser:filter'))

  // The tree: layers alike by their names fold into one group with their count.
  await page.click('#tab-tree')
  await page.waitForSelector('#panel-tree .tree-root', { timeout: 60_000 })
  const run = page.locator('.tensor-tree summary', { has: page.locator(`.tree-name:text-is("{0..${alike}}")`) })
  assert.equal(await run.count(), 1, `layers.{0..${alike}} in the tree`)
  assert.equal(await page.textContent('.tensor-tree details:has(> summary .tree-name:text-is("layers")) > ul > li:first-child .tree-name'), `{0..${alike}}`)
  // No shard header is in yet: no parameter is counted, and the count says so.
  assert.equal(await run.locator('.tree-meta').textContent(), `${(alike + 1).toLocaleString('en-US')} × ${perLayer.get(0).toLocaleString('en-US')} tensors · … params`)
  assert.ok(await page.locator('.tensor-tree *').count() < 3000, 'a folded tree is small')
  await page.locator('#tensors').screenshot({ path: join(ARTIFACTS, 'scale-tree-folded.png') })
  await page.click('#tab-table')

  // The headers arrive: dtypes, shapes and sizes fill in, the summary becomes whole.
  release(big.shardPaths.map((p) => `${BIG}${p}`))
  const releasedAt = Date.now()
  await waitOpened(page, 60_000)
  const wholeAfter = Date.now() - releasedAt
  const duringHeaders = await measures(page, 'tensor-table:sort')
  assert.ok(await page.isHidden('#headers-status'))
  assert.equal(served.size, 96, 'each shard asked for')
  const tiles = await page.$$eval('.tile', (els) => els.map((e) => e.textContent))
  assert.match(tiles[3] ?? '', new RegExp(big.parameters.toLocaleString('en-US')))
  // Sorted by size, smallest first (ties in index order), then largest first (the order reversed).
  const size = (/** @type {string} */ n) => {
    const spec = /** @type {{ dtype: string, shape: number[] }} */ (big.specOf(n))
    return spec.shape.reduce((a, b) => a * b, 1) * (spec.dtype === 'F32' ? 4 : 2)
  }
  const sizes = new Map(indexOrder.map((n) => [n, size(n)]))
  const ascending = indexOrder.map((n, i) => ({ n, i })).sort((a, b) => /** @type {number} */ (sizes.get(a.n)) - /** @type {number} */ (sizes.get(b.n)) || a.i - b.i).map((x) => x.n)
  await page.waitForFunction(() => document.querySelector('#panel-table tbody tr:first-child td.col-dtype')?.textContent !== '…', null, { timeout: 30_000 })
  assert.equal(await page.getAttribute('th:has(button[data-key="byteLength"])', 'aria-sort'), 'ascending')
  assert.deepEqual((await rowNames(page)).slice(0, 5), ascending.slice(0, 5))
  assert.deepEqual(await sortBy(page, 'byteLength', 5), ascending.slice(-5).reverse())
  const first = ascending.at(-1) ?? ''
  const spec = /** @type {{ dtype: string, shape: number[] }} */ (big.specOf(first))
  assert.deepEqual(await page.$$eval('#panel-table tbody tr:first-child td', (tds) => tds.slice(0, 4).map((td) => td.textContent)),
    [first, spec.dtype, `[${spec.shape.join(', ')}]`, `${size(first)} B`])
  assert.deepEqual(await sortBy(page, 'shape', 1), [ascending[0]])
  assert.deepEqual(await sortBy(page, 'dtype', 1), [indexOrder[0]])
  // Filtering by dtype now that they are known.
  await page.fill('#tensor-filter', 'bf16 experts.42.')
  await waitCount(page, `${names.filter((n) => n.includes('experts.42.')).length.toLocaleString('en-US')} of 500,000`)
  await page.fill('#tensor-filter', '')
  await waitCount(page, '500,000 tensors')
  await page.click('th button[data-key="byteOffset"]')
  await page.screenshot({ path: join(ARTIFACTS, 'scale-headers-in.png'), fullPage: true })
  const sortTimes = await measures(page, 'tensor-table:sort')
  filterTimes.push(...await measures(page, 'tensor-browser:filter'))

  t.diagnostic(`names shown ${fmt(shownAfter)} after opening (index ${(big.indexBytes.length / 1e6).toFixed(1)} MB); the 96 headers read and the summary whole ${fmt(wholeAfter)} after they were let through`)
  t.diagnostic(`sorts of 500,000 rows, headers pending: ${pendingSorts.join(', ')}`)
  t.diagnostic(`sorts while the headers arrived (the size order made again): ${duringHeaders.join(', ')}`)
  t.diagnostic(`sorts once the headers are in: ${sortTimes.join(', ')}`)
  t.diagnostic(`filters of 500,000 rows: ${filterTimes.join(', ')}`)
  await done()
})

test('Cancel keeps the headers read and the names; a tensor of a shard not read yet is read first; going on completes the set', { skip, timeout: 120_000 }, async () => {
  const paths = small.shardPaths.map((p) => `${SMALL}${p}`)
  const { page, done } = await newPage(browser)
  await page.goto(server.pageUrl(server.url(`${SMALL}${small.indexName}`)))
  await waitCount(page, '5,000 tensors')
  release(paths.slice(0, 4))
  await page.waitForFunction(() => /: 4 of 12$/.test(document.querySelector('#headers-text')?.textContent ?? ''), null, { timeout: 20_000 })
  await page.click('#headers-button')
  await page.waitForFunction(() => document.querySelector('#headers-status')?.getAttribute('data-state') === 'stopped', null, { timeout: 20_000 })
  assert.match(await page.textContent('#headers-text') ?? '', /^Stopped: 4 of 12 shard headers read\./)
  assert.equal(await page.textContent('#headers-button'), 'Read the rest')
  assert.equal(await page.getAttribute('#summary', 'aria-busy'), null, 'not busy once stopped')
  assert.ok(await page.isHidden('#error'), 'a cancel is no error')
  assert.equal(await page.textContent('.tile:nth-child(2)'), 'Headers4 of 12shard headers read; stopped')
  assert.equal(await page.textContent('.tile:nth-child(4)'), 'Parameters—not counted: 8 of the shard headers unread')
  // Rows of shards read have their dtype; the others …
  const readName = small.names.find((n) => small.shardOfName(n) === small.shardPaths[0]) ?? ''
  const pendingName = small.names.find((n) => small.shardOfName(n) === small.shardPaths[6] && n.endsWith('up_proj.weight')) ?? ''
  await page.fill('#tensor-filter', readName)
  await page.waitForSelector(`#panel-table tr[data-name="${readName}"]`)
  assert.equal(await page.textContent(`#panel-table tr[data-name="${readName}"] td.col-dtype`), 'BF16')
  await page.fill('#tensor-filter', pendingName)
  await page.waitForSelector(`#panel-table tr[data-name="${pendingName}"]`)
  assert.equal(await page.textContent(`#panel-table tr[data-name="${pendingName}"] td.col-dtype`), '…')
  await page.fill('#tensor-filter', '')
  await waitCount(page, '5,000 tensors')
  // Sorted by size either way, the rows whose size is known come first, the pending ones last.
  for (const direction of ['ascending', 'descending']) {
    await page.click('th button[data-key="byteLength"]')
    assert.equal(await page.getAttribute('th:has(button[data-key="byteLength"])', 'aria-sort'), direction)
    assert.equal(await page.textContent('#panel-table tbody tr:first-child td.col-size'), direction === 'ascending' ? '4 B' : '16 B')
    await page.$eval('.tensor-table-scroll', (e) => { e.scrollTop = e.scrollHeight })
    await page.waitForFunction(() => document.querySelector('#panel-table tbody tr:last-child')?.getAttribute('aria-rowindex') === '5001')
    assert.equal(await page.textContent('#panel-table tbody tr:last-child td.col-size'), '…')
  }
  await page.screenshot({ path: join(ARTIFACTS, 'scale-stopped.png') })
  // Selecting it reads its shard (held until let through), then shows the tensor.
  await page.fill('#tensor-filter', pendingName)
  await page.click(`#panel-table tr[data-name="${pendingName}"]`)
  await page.waitForFunction(() => /^Reading the header of /.test(document.querySelector('#status-text')?.textContent ?? ''))
  release([paths[6]])
  await page.waitForFunction((n) => document.querySelector('#tensor-title')?.textContent === n, pendingName, { timeout: 20_000 })
  await page.waitForSelector('.stats-grid', { timeout: 20_000 })
  assert.equal(await page.textContent(`#panel-table tr[data-name="${pendingName}"] td.col-dtype`), 'BF16')
  assert.match(await page.textContent('#headers-text') ?? '', /^Stopped: 5 of 12 shard headers read\./)
  // Going on reads the rest.
  release(paths)
  await page.click('#headers-button')
  await waitOpened(page)
  assert.ok(await page.isHidden('#headers-status'))
  assert.match(await page.textContent('.tile:nth-child(4)') ?? '', new RegExp(small.parameters.toLocaleString('en-US')))
  await done()
})

test('shards that cannot be read are listed in the error area; their tensors stay listed by name', { skip, timeout: 120_000 }, async () => {
  release(small.shardPaths.map((p) => `${FAILING}${p}`))
  const { page, done } = await newPage(browser)
  await page.goto(server.pageUrl(server.url(`${FAILING}${small.indexName}`)))
  await waitCount(page, '5,000 tensors')
  await page.waitForSelector('#error:not([hidden])', { timeout: 30_000 })
  await page.waitForFunction(() => document.querySelector('#headers-status')?.getAttribute('data-state') === 'done')
  assert.equal(await page.textContent('.error-title'), '2 of 12 shard headers could not be read')
  const listed = await page.$$eval('.shard-failures li', (lis) => lis.map((li) => li.textContent ?? ''))
  assert.equal(listed.length, 2)
  MISSING.forEach((i, k) => {
    assert.ok(listed[k].startsWith(small.allShardPaths[i]), listed[k])
    assert.match(listed[k], /ShardMissing/)
  })
  assert.equal(await page.textContent('#headers-text'),
    '10 of 12 shard headers read; 2 could not be read (listed above). The other shards’ tensors are listed from the index; selecting one reads its shard.')
  assert.equal(await page.textContent('#headers-button'), 'Try again')
  // The summary says the reading is over: how many were read, and that parameters are not counted.
  assert.deepEqual(await page.$$eval('.tile', (tiles) => tiles.map((t) => t.textContent)), [
    `File size${formatBytes(small.totalSize)}of tensor data, as the index says`, 'Headers10 of 12shard headers read; 2 could not be read',
    'Tensors5,000', 'Parameters—not counted: 2 of the shard headers unread'])
  // A tensor of a failed shard: listed, its values unknown.
  const lost = small.names.find((n) => small.shardOfName(n) === small.allShardPaths[MISSING[0]]) ?? ''
  await page.fill('#tensor-filter', lost)
  await page.waitForSelector(`#panel-table tr[data-name="${lost}"]`)
  assert.deepEqual(await page.$$eval(`#panel-table tr[data-name="${lost}"] td`, (tds) => tds.slice(1, 4).map((td) => td.textContent)), ['?', '?', '?'])
  assert.match(await page.getAttribute(`#panel-table tr[data-name="${lost}"] td.col-dtype span`, 'title') ?? '', /could not be read/)
  await page.click('#tab-tree')
  const leaf = page.locator(`#panel-tree button.tree-leaf[data-name="${lost}"]`)
  assert.deepEqual([await leaf.locator('.tree-meta').textContent(), await leaf.locator('.tree-size').textContent()], ['?', '?'])
  await page.click('#tab-table')
  assert.equal(await page.getAttribute('#summary', 'aria-busy'), null)
  await page.screenshot({ path: join(ARTIFACTS, 'scale-failed-shards.png') })
  await done()
})

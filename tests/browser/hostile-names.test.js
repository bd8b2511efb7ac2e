// The inspector (web-demo/) against hostile names, which must neither freeze nor crash it, in
// headless Chromium: 100,000 names g<i>.w open at once, with the table
// only (the tree is built when its tab is shown) and a filter that keeps up; a tree 1,500 levels
// deep draws 64 of them without crashing the renderer; bidirectional controls and invisible
// characters in names, metadata and error messages show as marked escapes. Same server, launch
// and skip pattern as inspector.test.js; screenshots go to tests/artifacts/inspector/ (git-ignored).
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { serialize } from '../../js/node.js'
import { startServer } from '../servers/static-server.js'
import { launchChromium, showSourceInputs, skip } from './chromium.js'

const ARTIFACTS = fileURLToPath(new URL('../artifacts/inspector/', import.meta.url))

const MANY = '/hostile/many.safetensors'    // 100,000 tensors g0.w ... g99999.w
const DEEP = '/hostile/deep.safetensors'    // w, x.w, x.x.w, ...: a tree 1,500 levels deep
const BIDI = '/hostile/bidi.safetensors'    // names and metadata with bidi controls and zero-width characters
const BAD = '/hostile/bad.safetensors'      // invalid, naming a tensor "\u202Eevil" in its error
const RLO_NAME = '\u202Eexe.txt'
/** Characters that must not reach the page's text as they are. */
const HIDDEN = /[\u202A-\u202E\u2066-\u2069\u200B-\u200F\u061C\uFEFF]/

/** @type {Awaited<ReturnType<typeof startServer>>} */
let server
/** @type {import('playwright-core').Browser} */
let browser

/** A file whose header says tensor "\u202Eevil" needs 12 bytes but spans 8: TensorInvalidInfo. */
function badFile() {
  const header = new TextEncoder().encode(
    '{"\u202Eevil":{"dtype":"F32","shape":[3],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}}')
  const length = Math.ceil(header.length / 8) * 8
  const bytes = new Uint8Array(8 + length + 16).fill(0x20, 8, 8 + length)
  new DataView(bytes.buffer).setBigUint64(0, BigInt(length), true)
  bytes.set(header, 8)
  return bytes
}

before(async () => {
  if (skip) return
  const one = () => ({ dtype: /** @type {const} */ ('F32'), shape: [1], data: new Float32Array([1]) })
  server = await startServer()
  server.addFile(MANY, await serialize(Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`g${i}.w`, one()]))))
  server.addFile(DEEP, await serialize(Object.fromEntries(Array.from({ length: 1500 }, (_, k) => [`${'x.'.repeat(k)}w`, one()]))))
  server.addFile(BIDI, await serialize({
    [RLO_NAME]: { dtype: 'F32', shape: [2, 2], data: new Float32Array([1, 2, 3, 4]) },
    'zero\u200Bwidth.weight': one(),
    'layers.\u2066x\u2069.bias': one(),
    'plain.weight': one(),
  }, { metadata: { '\u202Ekey': 'value\u200B\u202Eevil', format: 'pt' } }))
  server.addFile(BAD, badFile())
  await mkdir(ARTIFACTS, { recursive: true })
  browser = await launchChromium()
})

after(async () => {
  await browser?.close()
  await server?.close()
})

/** A fresh page that fails the test on any script error or a crash of its renderer. */
async function newPage() {
  const context = await browser.newContext({ viewport: { width: 1400, height: 950 }, colorScheme: 'light' })
  const page = await context.newPage()
  /** @type {string[]} */
  const errors = []
  page.on('pageerror', (e) => errors.push(e.message))
  page.on('crash', () => errors.push('the page crashed'))
  page.on('console', (m) => { if (m.type() === 'error' && !/Failed to load resource/.test(m.text())) errors.push(m.text()) })
  return {
    page,
    errors,
    async done() {
      await context.close()
      assert.deepEqual(errors, [], 'no script error and no crash')
    },
  }
}

/** @param {import('playwright-core').Page} page @param {string} name */
async function shoot(page, name) {
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: false })
}

/** The tree panel's element count, the tree not shown. @param {import('playwright-core').Page} page */
function treeNodes(page) {
  return page.evaluate(() => document.querySelectorAll('#panel-tree .tensor-tree *').length)
}

test('100,000 names: the table shows at once and the tree is built only on its tab; filtering keeps up', { skip, timeout: 180_000 }, async () => {
  const { page, done } = await newPage()
  await page.goto(server.pageUrl(server.url(MANY)))
  // The tree of 100,000 groups takes seconds to build: it waits until its tab is shown.
  await page.waitForSelector('#panel-table tbody tr', { timeout: 15_000 })
  assert.equal(await page.textContent('#tensor-count'), '100,000 tensors')
  // Every row can be scrolled to; only those in view are drawn (tests/browser/inspector-scale.test.js).
  assert.ok(await page.locator('#panel-table tbody tr').count() < 200)
  assert.equal(await page.getAttribute('#panel-table table', 'aria-rowcount'), '100001')
  assert.equal(await treeNodes(page), 0, 'no tree before its tab is shown')
  await shoot(page, 'hostile-many-table')

  // The table's filter: typed key by key, matched against lower-cased names kept per file.
  await page.click('#tensor-filter')
  await page.keyboard.type('g9999', { delay: 30 })
  await page.waitForFunction(() => document.querySelector('#tensor-count')?.textContent === '11 of 100,000', null, { timeout: 10_000 })
  assert.equal(await page.locator('#panel-table tbody tr').count(), 11)
  assert.equal(await treeNodes(page), 0, 'filtering on the Table tab builds no tree')

  // The tree tab: built now, drawing a group's first 500 children and a line for the rest.
  await page.fill('#tensor-filter', '')
  await page.waitForFunction(() => document.querySelector('#tensor-count')?.textContent === '100,000 tensors', null, { timeout: 10_000 })
  await page.click('#tab-tree')
  await page.waitForSelector('#panel-tree .tree-root', { timeout: 15_000 })
  assert.equal(await page.locator('.tree-leaf').count(), 500)
  assert.match(await page.textContent('.tree-more') ?? '', /^99,500 more: filter to narrow them down, or show 500 more$/)
  assert.deepEqual(await page.$$eval('.tree-leaf .tree-name', (els) => els.slice(0, 3).map((e) => e.textContent)), ['g0.w', 'g1.w', 'g2.w'])
  await page.click('.tree-more button')
  assert.equal(await page.locator('.tree-leaf').count(), 1000)
  assert.match(await page.textContent('.tree-more') ?? '', /^99,000 more/)
  await page.locator('.tree-more').scrollIntoViewIfNeeded()
  await page.locator('#tensors').screenshot({ path: join(ARTIFACTS, 'hostile-many-tree-more.png') })
  // Typing in the filter with the tree shown: each pause redraws the tree of the matches.
  await page.click('#tensor-filter')
  await page.keyboard.type('g1', { delay: 30 })
  await page.waitForFunction(() => document.querySelector('#tensor-count')?.textContent === '11,111 of 100,000', null, { timeout: 10_000 })
  await page.keyboard.type('2345', { delay: 30 })
  await page.waitForFunction(() => document.querySelector('#tensor-count')?.textContent === '1 of 100,000', null, { timeout: 10_000 })
  await page.waitForFunction(() => document.querySelectorAll('.tree-leaf').length === 1, null, { timeout: 10_000 })
  assert.equal(await page.textContent('.tree-leaf .tree-name'), 'g12345.w')
  await page.click('.tree-leaf')
  await page.waitForFunction(() => document.querySelector('#tensor-title')?.textContent === 'g12345.w', null, { timeout: 15_000 })
  await shoot(page, 'hostile-many-tree')
  await done()
})

test('a tree 1,500 levels deep: 64 levels drawn, the rest of each name joined and marked; no crash', { skip, timeout: 120_000 }, async () => {
  const { page, errors, done } = await newPage()
  await page.goto(server.pageUrl(server.url(DEEP)))
  await page.waitForSelector('#panel-table tbody tr', { timeout: 15_000 })
  assert.equal(await page.textContent('#tensor-count'), '1,500 tensors')
  await page.click('#tab-tree')
  await page.waitForSelector('#panel-tree .tree-root', { timeout: 15_000 })
  // Searching opens every group: all 64 levels at once.
  await page.fill('#tensor-filter', 'w')
  await page.waitForFunction(() => document.querySelector('#tensor-count')?.textContent === '1,500 of 1,500', null, { timeout: 10_000 })
  await page.waitForSelector('.tree-joined', { timeout: 10_000 })
  assert.deepEqual(errors, [])
  const shape = await page.evaluate(() => {
    let deepest = 0
    for (const d of document.querySelectorAll('.tensor-tree details')) {
      let level = 0
      for (let e = /** @type {Element | null} */ (d); e; e = e.parentElement?.closest('details') ?? null) level++
      deepest = Math.max(deepest, level)
    }
    const marks = document.querySelectorAll('.tree-joined')
    return { deepest, marks: marks.length, title: marks[0]?.getAttribute('title'), first: marks[0]?.parentElement?.textContent, more: document.querySelector('.tree-more')?.textContent }
  })
  // 63 nested groups; the 64th level holds the last group's own w and, joined, the tensors below.
  assert.equal(shape.deepest, 63)
  assert.equal(shape.marks, 499, 'the first 500 children of the deepest group: its w and 499 joined names')
  assert.equal(shape.title, 'Deeper than 64 levels: the rest of the name is shown as one node')
  assert.equal(shape.first, '⋯x.w')
  assert.equal(shape.more, '937 more in x: filter to narrow them down, or show 500 more')
  const mark = page.locator('.tree-joined').first()
  await mark.scrollIntoViewIfNeeded()
  assert.ok(await mark.isVisible())
  await shoot(page, 'hostile-deep-tree')
  // A joined node is a tensor like any other.
  await page.locator('.tree-leaf:has(.tree-joined)').first().click()
  await page.waitForFunction((n) => document.querySelector('#tensor-title')?.textContent === n, `${'x.'.repeat(64)}w`, { timeout: 15_000 })
  await done()
})

test('bidi controls and invisible characters show as marked escapes: table, tree, tensor title, metadata, error card', { skip, timeout: 120_000 }, async () => {
  const { page, done } = await newPage()
  await page.goto(server.pageUrl(server.url(BIDI)))
  await page.waitForSelector('#panel-table tbody tr', { timeout: 15_000 })
  const cell = page.locator(`#panel-table tr[data-name="${RLO_NAME}"] td.name`)
  assert.equal(await cell.textContent(), '\\u{202E}exe.txt', 'read as stored, never as txt.exe')
  const marker = cell.locator('.invisible-char')
  assert.equal(await marker.textContent(), '\\u{202E}')
  assert.equal(await marker.getAttribute('title'), 'U+202E RIGHT-TO-LEFT OVERRIDE: a bidirectional control, which would reorder the text around it; shown escaped')
  assert.ok(await marker.isVisible())
  assert.equal(await page.textContent('#panel-table tr[data-name="zero\u200Bwidth.weight"] td.name'), 'zero\\u{200B}width.weight')
  assert.equal(await page.textContent('#panel-table tr[data-name="layers.\u2066x\u2069.bias"] td.name'), 'layers.\\u{2066}x\\u{2069}.bias')
  assert.equal(await page.textContent('#panel-table tr[data-name="plain.weight"] td.name'), 'plain.weight')
  // Metadata keys and values.
  const entry = page.locator('.metadata-entry', { has: page.locator('dt .invisible-char') })
  assert.equal(await entry.locator('dt').textContent(), '\\u{202E}key')
  assert.equal(await entry.locator('dd').textContent(), 'value\\u{200B}\\u{202E}evil')
  assert.equal(await entry.locator('dd .invisible-char').count(), 2)
  // The tensor's title.
  await page.click(`#panel-table tr[data-name="${RLO_NAME}"]`)
  await page.waitForFunction(() => document.querySelector('#tensor-title')?.textContent === '\\u{202E}exe.txt' &&
    document.querySelector('.result')?.getAttribute('aria-busy') === null, null, { timeout: 15_000 })
  assert.equal(await page.locator('#tensor-title .invisible-char').count(), 1)
  // The tree.
  await page.click('#tab-tree')
  await page.waitForSelector('.tree-root')
  assert.deepEqual(await page.$$eval('.tree-root .tree-name', (els) => els.map((e) => e.textContent)),
    ['\\u{202E}exe.txt', 'layers.\\u{2066}x\\u{2069}.bias', 'plain.weight', 'zero\\u{200B}width.weight'])
  assert.equal(await page.locator('.tree-root .invisible-char').count(), 4)
  assert.equal(await page.getAttribute(`.tree-leaf[data-name="${RLO_NAME}"]`, 'title'), '\\u{202E}exe.txt')
  const shown = await page.evaluate(() => document.body.innerText)
  assert.doesNotMatch(shown, HIDDEN, 'no bidi control or invisible character reaches the page as it is')
  await page.click('#tab-table')
  await shoot(page, 'hostile-bidi')
  await page.click('#tab-tree')
  await page.locator('#tensors').screenshot({ path: join(ARTIFACTS, 'hostile-bidi-tree.png') })

  // An error card quoting such a name.
  await showSourceInputs(page)
  await page.fill('#url-input', server.url(BAD))
  await page.click('#url-form button[type="submit"]')
  await page.waitForSelector('#error:not([hidden])', { timeout: 15_000 })
  assert.equal(await page.textContent('.error-code'), 'TensorInvalidInfo')
  assert.match(await page.textContent('.error-details span') ?? '', /^tensor "\\u\{202E\}evil", at byte \d+$/)
  assert.match(await page.textContent('.error-message') ?? '', /^tensor "\\u\{202E\}evil" F32 \[3\] needs 12 bytes/)
  assert.equal(await page.locator('#error .invisible-char').count(), 2)
  assert.doesNotMatch(await page.evaluate(() => /** @type {HTMLElement} */ (document.querySelector('#error')).innerText), HIDDEN)
  await page.locator('#error').screenshot({ path: join(ARTIFACTS, 'hostile-error.png') })
  await done()
})

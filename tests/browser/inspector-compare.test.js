// The inspector's compare mode and the view's state in the page address, in headless Chromium,
// on two generated checkpoints served over HTTP whose differences are known: a tensor only in A,
// one only in B, a dtype change and a shape change (2 MiB each, never read), identical tensors,
// and a fine-tuned one whose max and mean |B - A| and ||B - A|| / ||A|| are worked out
// apart from the library (tests/js/diff-reference.js).
// Screenshots go to tests/artifacts/inspector/ (git-ignored).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { open, serialize } from '../../js/node.js'
import { INITIAL_FETCH_SIZE } from '../../js/io/http.js'
import { formatValue } from '../../js/format.js'
import { startServer } from '../servers/static-server.js'
import { startHub } from '../js/hub-server.js'
import { expectedChange } from '../js/diff-reference.js'
import { newPage, skip, waitOpened } from './chromium.js'
import { ARTIFACTS, inspectorHooks } from './inspector-setup.js'

const A = '/cmp/a.safetensors'
const B = '/cmp/b.safetensors'
/** B again, sent slowly: a comparison long enough to watch and cancel. */
const SLOW_A = '/slow-a/a.safetensors'
const SLOW_B = '/slow-b/b.safetensors'

const TUNED = 'model.tuned.weight'
const TUNED_ROWS = 128
const TUNED_COLS = 64
const A_TUNED = Float32Array.from({ length: TUNED_ROWS * TUNED_COLS }, (_, i) => Math.sin(i * 0.13) / 4)
const B_TUNED = A_TUNED.slice()
for (const [i, d] of [[3, 0.01], [700, -0.25], [4000, 0.125], [8191, 0.0625], [5000, 1e-4]]) B_TUNED[i] += d
/** 2 MiB of F32, whose bytes a comparison must never fetch (its dtype or shape differs in B). */
const big = (/** @type {number} */ seed) => Float32Array.from({ length: 512 * 1024 }, (_, i) => ((i * 7 + seed) % 101) / 100)
const SAME = Float32Array.from({ length: 64 * 64 }, (_, i) => (i % 17) - 8)
const BIAS = Float32Array.from({ length: 64 }, (_, i) => i / 64)

const FILE_A = {
  'model.big.dtype': { dtype: 'F32', shape: [512, 1024], data: big(1) },
  'model.big.shape': { dtype: 'F32', shape: [1024, 512], data: big(2) },
  'model.same.weight': { dtype: 'F32', shape: [64, 64], data: SAME },
  'model.same.bias': { dtype: 'F32', shape: [64], data: BIAS },
  [TUNED]: { dtype: 'F32', shape: [TUNED_ROWS, TUNED_COLS], data: A_TUNED },
  'old.head': { dtype: 'F32', shape: [3], data: new Float32Array([1, 2, 3]) },
}
const FILE_B = {
  'model.big.dtype': { dtype: 'F16', shape: [512, 1024], data: new Uint16Array(512 * 1024).fill(0x3c00) },
  'model.big.shape': { dtype: 'F32', shape: [512, 1024], data: big(2) },
  'model.same.weight': { dtype: 'F32', shape: [64, 64], data: SAME },
  'model.same.bias': { dtype: 'F32', shape: [64], data: BIAS },
  [TUNED]: { dtype: 'F32', shape: [TUNED_ROWS, TUNED_COLS], data: B_TUNED },
  'new.head': { dtype: 'F32', shape: [2], data: new Float32Array([4, 5]) },
}
/** The tensors read from both sides (same dtype and shape), and their bytes on one side. */
const COMPARED = ['model.same.weight', 'model.same.bias', TUNED]
const COMPARED_BYTES = (SAME.length + BIAS.length + A_TUNED.length) * 4

/** @type {Awaited<ReturnType<typeof startServer>>} */
let server
/** @type {Awaited<ReturnType<typeof startHub>>} */
let hub
/** @type {string} B written to disk, for the file picker */
let dir
/** @type {{ a: Uint8Array, b: Uint8Array }} */
const bytes = /** @type {any} */ ({})

const hooks = inspectorHooks(async ({ closeAfter, tempDir }) => {
  bytes.a = await serialize(FILE_A)
  bytes.b = await serialize(FILE_B)
  // A big one of the same dtype and shape on both sides, sent slowly: the comparison reads it.
  const slow = { ...FILE_A, 'model.slow': { dtype: 'F32', shape: [1024, 1024], data: new Float32Array(1024 * 1024) } }
  server = closeAfter(await startServer())
  server.addFile(A, bytes.a)
  server.addFile(B, bytes.b)
  server.addFile(SLOW_A, await serialize(slow))
  server.addFile(SLOW_B, await serialize({ ...slow, 'model.slow': { ...slow['model.slow'], data: new Float32Array(1024 * 1024).fill(1) } }))
  server.addQuirks('/slow-b/', { bytesPerSecond: 400_000 })
  hub = closeAfter(await startHub())
  hub.addFile('org/tuned', 'b.safetensors', bytes.b)
  dir = await tempDir('st-compare-')
  await writeFile(join(dir, 'b.safetensors'), bytes.b)
})

/** The counts, lists and numbers the compare card shows. @param {import('playwright-core').Page} page */
function compareShown(page) {
  return page.evaluate(() => {
    const q = (/** @type {string} */ s) => Array.from(document.querySelectorAll(s))
    const counts = Object.fromEntries(q('#compare-result .compare-count').map((e) => [/** @type {HTMLElement} */ (e).dataset.kind, Number(/** @type {HTMLElement} */ (e).dataset.count)]))
    const list = (/** @type {string} */ kind) => q(`.compare-list[data-kind="${kind}"] li .compare-name`).map((e) => /** @type {HTMLElement} */ (e).dataset.name)
    const layout = q('.compare-layout tbody tr').map((tr) => ({
      name: /** @type {HTMLElement} */ (tr).dataset.name, kind: /** @type {HTMLElement} */ (tr).dataset.kind,
      a: tr.querySelector('[data-side="a"]')?.textContent, b: tr.querySelector('[data-side="b"]')?.textContent,
    }))
    const values = q('.compare-values tbody tr').map((tr) => ({
      name: /** @type {HTMLElement} */ (tr).dataset.name,
      ...Object.fromEntries(Array.from(tr.querySelectorAll('td[data-col]')).map((td) => [/** @type {HTMLElement} */ (td).dataset.col,
        { value: /** @type {HTMLElement} */ (td).dataset.value, text: td.textContent }])),
    }))
    return { counts, onlyA: list('only-a'), onlyB: list('only-b'), identical: list('identical'), layout, values,
      verdict: document.querySelector('.compare-verdict')?.textContent ?? '' }
  })
}

/** @param {import('playwright-core').Page} page */
async function waitCompared(page) {
  await page.waitForSelector('#compare-result .compare-counts', { timeout: 20_000 })
}

/** Checks what a comparison of A with B shows. @param {Awaited<ReturnType<typeof compareShown>>} shown */
function assertAgainstB(shown) {
  assert.deepEqual(shown.counts, { identical: 2, values: 1, layout: 2, 'only-a': 1, 'only-b': 1 })
  assert.deepEqual(shown.onlyA, ['old.head'])
  assert.deepEqual(shown.onlyB, ['new.head'])
  assert.deepEqual(shown.identical.sort(), ['model.same.bias', 'model.same.weight'])
  assert.deepEqual(shown.layout, [
    { name: 'model.big.dtype', kind: 'dtype', a: 'F32 [512, 1024]', b: 'F16 [512, 1024]' },
    { name: 'model.big.shape', kind: 'shape', a: 'F32 [1024, 512]', b: 'F32 [512, 1024]' },
  ])
  assert.equal(shown.values.length, 1)
  const [v] = /** @type {any[]} */ (shown.values)
  // Worked out in float64 over the float32 values.
  const e = expectedChange(A_TUNED, B_TUNED)
  assert.equal(v.name, TUNED)
  for (const [col, want] of /** @type {const} */ ([['max', e.maxAbsDiff], ['mean', e.meanAbsDiff], ['relative', e.relativeChange]])) {
    const got = Number(v[col].value)
    assert.ok(Math.abs(got - want) <= 1e-9 * want, `${col}: ${got}, the reference's ${want}`)
    assert.equal(v[col].text, formatValue(want), `${col} as shown`)
  }
  assert.equal(Number(v.changed.value), e.changedValues)
  assert.equal(e.changedValues, 5)
  assert.match(shown.verdict, /differ/)
}

test('compare mode: only in A or B, dtype and shape changes, identical, changed values; only the bytes needed', { skip }, async () => {
  const { page, done } = await newPage(hooks.browser)
  await page.goto(server.pageUrl(server.url(A)))
  await waitOpened(page)
  assert.equal(await page.isVisible('#compare'), true, 'the compare card shows once a file is open')
  server.resetStats()
  await page.fill('#compare-input', server.url(B))
  await page.click('.compare-form button[type="submit"]')
  await waitCompared(page)
  assertAgainstB(await compareShown(page))
  // The layout changes (4 MiB of B, 4 MiB of A) are never fetched: A's compared tensors, B's
  // first window (its header and whatever follows it) and its compared tensors at most.
  const fromA = server.bytesFor(A)
  const fromB = server.bytesFor(B)
  assert.ok(fromA <= COMPARED_BYTES, `${fromA} bytes of A, the compared tensors are ${COMPARED_BYTES}`)
  assert.ok(fromB <= INITIAL_FETCH_SIZE + COMPARED_BYTES, `${fromB} bytes of B`)
  assert.ok(bytes.b.length > 2 * (INITIAL_FETCH_SIZE + COMPARED_BYTES), 'B is much larger than what was read')
  // The compare card counts B's downloads as the server sent them.
  await page.waitForFunction((n) => document.querySelector('#compare-network')?.getAttribute('data-bytes') === String(n), fromB, { timeout: 5000 })
  const f = await open(bytes.a)
  assert.equal(COMPARED.reduce((n, name) => n + /** @type {any} */ (f).info(name).byteLength, 0), COMPARED_BYTES)
  await f.close()
  assert.match(new URL(page.url()).searchParams.get('compare') ?? '', /\/cmp\/b\.safetensors$/, 'the address names B')
  await page.screenshot({ path: join(ARTIFACTS, 'compare.png'), fullPage: true })

  // A name in the result shows that tensor of A.
  await page.click(`.compare-values button.compare-name[data-name="${TUNED}"]`)
  await page.waitForFunction((n) => document.querySelector('#tensor-title')?.textContent === n, TUNED)

  // B that cannot be read: the card says why, and the address no longer names a comparison.
  await page.fill('#compare-input', server.url('/cmp/missing.safetensors'))
  await page.press('#compare-input', 'Enter')
  await page.waitForSelector('#compare-message.error:not([hidden])')
  assert.match(await page.textContent('#compare-message') ?? '', /404/)
  await page.locator('#compare').screenshot({ path: join(ARTIFACTS, 'compare-error.png') })
  assert.equal(await page.locator('#compare-result .compare-counts').count(), 0)
  assert.equal(new URL(page.url()).searchParams.get('compare'), null)

  // Progress, then Cancel, on a comparison that reads slowly.
  await page.goto(server.pageUrl(server.url(SLOW_A)))
  await waitOpened(page)
  await page.fill('#compare-input', server.url(SLOW_B))
  await page.click('.compare-form button[type="submit"]')
  await page.waitForFunction(() => Number(/** @type {HTMLProgressElement} */ (document.querySelector('#compare-progress')).value) > 0 &&
    !(/** @type {HTMLElement} */ (document.querySelector('#compare-status')).hidden), undefined, { timeout: 15_000 })
  assert.match(await page.textContent('#compare-status-text') ?? '', /Comparing: .* of .* read from A and B/)
  await page.click('#compare-cancel')
  await page.waitForSelector('#compare-message:not([hidden])')
  assert.match(await page.textContent('#compare-message') ?? '', /Cancelled/)
  assert.equal(await page.isHidden('#compare-status'), true)
  assert.equal(await page.locator('#compare-result .compare-counts').count(), 0, 'no result shown')

  // Escape cancels a comparison too, as it does the page's own tasks.
  await page.click('.compare-form button[type="submit"]')
  await page.waitForFunction(() => !(/** @type {HTMLElement} */ (document.querySelector('#compare-status')).hidden), undefined, { timeout: 15_000 })
  await page.keyboard.press('Escape')
  await page.waitForFunction(() => /Cancelled/.test(document.querySelector('#compare-message')?.textContent ?? '') &&
    /** @type {HTMLElement} */ (document.querySelector('#compare-status')).hidden, undefined, { timeout: 15_000 })
  assert.equal(await page.locator('#compare-result .compare-counts').count(), 0, 'no result shown')
  await done()
})

test('state in the address: ?url=&tensor=&slice=&compare= reopens the view; interacting updates it', { skip }, async () => {
  const { page, done } = await newPage(hooks.browser)
  const query = new URLSearchParams({ url: server.url(A), tensor: TUNED, slice: '2:5', compare: server.url(B) })
  await page.goto(`${server.pageUrl()}?${query}`)
  await waitOpened(page)
  await page.waitForFunction((n) => document.querySelector('#tensor-title')?.textContent === n &&
    document.querySelector('.loaded-line') !== null, TUNED, { timeout: 15_000 })
  assert.equal(await page.inputValue('#slice-input'), '2:5')
  assert.match(await page.textContent('.loaded-line') ?? '', /^Slice \[2:5\] of shape \[3, 64\]: 192 values/)
  assert.equal(await page.locator('#panel-table tr[data-name="model.tuned.weight"][aria-selected="true"]').count(), 1, 'its row is selected')
  await waitCompared(page)
  assertAgainstB(await compareShown(page))
  const search = () => page.evaluate(() => Object.fromEntries(new URLSearchParams(location.search)))
  assert.deepEqual(await search(), Object.fromEntries(query), 'the address kept as it was')
  await page.screenshot({ path: join(ARTIFACTS, 'compare-from-address.png'), fullPage: true })

  // Another tensor: the address names it, without the slice; the comparison stays.
  await page.click('#panel-table tr[data-name="model.same.weight"]')
  await page.waitForFunction(() => new URLSearchParams(location.search).get('tensor') === 'model.same.weight')
  assert.deepEqual(await search(), { url: server.url(A), tensor: 'model.same.weight', compare: server.url(B) })
  // A slice of it: in the address.
  await page.fill('#slice-input', '1:3')
  await page.press('#slice-input', 'Enter')
  await page.waitForFunction(() => new URLSearchParams(location.search).get('slice') === '1:3')
  await page.waitForSelector('.loaded-line')
  assert.match(await page.textContent('.loaded-line') ?? '', /^Slice \[1:3\] of shape \[2, 64\]/)
  assert.deepEqual(await search(), { url: server.url(A), tensor: 'model.same.weight', slice: '1:3', compare: server.url(B) })

  // Reloading the page with that address shows the same view again.
  await page.reload()
  await waitOpened(page)
  await page.waitForFunction(() => document.querySelector('.loaded-line')?.textContent?.startsWith('Slice [1:3]'), undefined, { timeout: 15_000 })
  assert.equal(await page.textContent('#tensor-title'), 'model.same.weight')
  await waitCompared(page)
  assert.equal((await compareShown(page)).counts.values, 1)
  await done()
})

test('B from the Hub (a repo id, hf:// in the address) and from a local file: the same comparison', { skip }, async () => {
  const { page, done } = await newPage(hooks.browser)
  await page.goto(`${server.pageUrl()}?${new URLSearchParams({ url: server.url(A), endpoint: hub.base })}`)
  await waitOpened(page)
  hub.resetStats()
  await page.fill('#compare-input', 'org/tuned/b.safetensors')
  await page.press('#compare-input', 'Enter')
  await waitCompared(page)
  assertAgainstB(await compareShown(page))
  assert.equal(await page.inputValue('#compare-input'), 'hf://org/tuned/b.safetensors')
  const search = new URL(page.url()).searchParams
  assert.equal(search.get('compare'), 'hf://org/tuned/b.safetensors')
  assert.equal(search.get('endpoint'), hub.base, 'the Hub it came from, not the token')
  assert.ok(![...search.values()].some((v) => /hf_test/.test(v)))
  assert.ok(hub.allRequests().length > 0, 'B was read from the Hub')

  await page.setInputFiles('#compare-file-input', join(dir, 'b.safetensors'))
  await page.waitForFunction(() => document.querySelector('.compare-side:last-child')?.textContent === 'B b.safetensors' &&
    new URLSearchParams(location.search).get('compare') === null, undefined, { timeout: 15_000 })
  await waitCompared(page)
  assertAgainstB(await compareShown(page))
  assert.match(await page.textContent('#compare-network') ?? '', /read/, 'B\'s local reads are counted')
  await done()
})

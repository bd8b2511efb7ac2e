#!/usr/bin/env node
/**
 * The inspector (web-demo/) opening a 500,000-name sharded set in headless Chromium, from a
 * local server with no added latency, as a user opens `?url=<index>`: Kimi-K3's layout in FP8
 * (half the names FP8 weights, half their block scales: detected, counted and folded into
 * 249,674 weight rows once every shard header is in) against the same layout in BF16 (nothing
 * to detect or fold) in the same run, alternating. Measured from the page: the time until the
 * index's names show, until the set is complete (the tensor count shows the folded rows), and
 * the main thread's long tasks (PerformanceObserver 'longtask': the total and the longest, the
 * time the page could not answer input).
 *   node bench/inspector-open.js [--runs 2]
 */
import { parseArgs } from 'node:util'
import { launchChromium, newPage, skip } from '../tests/browser/chromium.js'
import { bytesBody, findFile, startServer } from '../web-demo/serve.js'
import { kimiK3 } from '../tests/js/sharded-fixtures.js'
import { emitFigures, figure, fmtMs, fmtX, machine, median } from './common.js'

const { values } = parseArgs({ options: { runs: { type: 'string', default: '2' } } })
const RUNS = Number(values.runs)

if (skip) {
  console.log(`inspector-open: skipped (${skip})`)
  process.exit(0)
}

/** @type {Record<string, ReturnType<typeof kimiK3>>} */
const sets = { FP8: kimiK3(), BF16: kimiK3({ dtype: 'BF16' }) }
/** @type {Map<string, () => Uint8Array>} what each data path serves */
const files = new Map()
for (const [label, set] of Object.entries(sets)) {
  // Made now, so that the page's times are the page's: the set is generated on first use.
  files.set(`/${label}/${set.indexName}`, () => set.indexBytes)
  set.allShardPaths.forEach((path, i) => {
    if (!set.shardPaths.includes(path)) return
    set.shardBytes(i)
    files.set(`/${label}/${path}`, () => set.shardBytes(i))
  })
}
const server = await startServer({
  find: async (path) => {
    const bytes = files.get(path)
    return bytes ? bytesBody(bytes(), path) : findFile(path)
  },
  policy: (path) => ({ data: files.has(path) }),
})
const browser = await launchChromium()

/**
 * Opens the set in a fresh page; resolves to the page's times.
 * @param {string} label @returns {Promise<{ names: number, complete: number, longTotal: number, longest: number }>}
 */
async function openIn(label) {
  const set = sets[label]
  const stored = set.names.length.toLocaleString('en-US')
  const { page } = await newPage(browser)
  try {
    await page.addInitScript(() => {
      const w = /** @type {any} */ (window)
      w.__long = []
      new PerformanceObserver((list) => { for (const e of list.getEntries()) w.__long.push(e.duration) })
        .observe({ type: 'longtask', buffered: true })
    })
    const t0 = Date.now()
    await page.goto(`${server.url('/web-demo/')}?url=${encodeURIComponent(server.url(`/${label}/${set.indexName}`))}`)
    const count = () => page.evaluate(() => document.querySelector('#tensor-count')?.textContent ?? '')
    await page.waitForFunction((t) => document.querySelector('#tensor-count')?.textContent === t, `${stored} tensors`, { timeout: 120_000 })
    const names = Date.now() - t0
    // Complete: the summary counts parameters (it says it waits for the headers till then)
    // and the count is final (FP8: the weights folded).
    const want = label === 'FP8' ? `${(set.names.length - countWeights(set)).toLocaleString('en-US')} tensors` : `${stored} tensors`
    await page.waitForFunction((t) => document.querySelector('#tensor-count')?.textContent === t &&
      !(document.body.textContent ?? '').includes('counted once every shard header is read'), want, { timeout: 120_000 })
      .catch(async () => { throw new Error(`${label}: the count shows ${await count()}, not ${want}, or the set is not complete`) })
    const complete = Date.now() - t0
    // Long tasks are reported after they end: wait for the page to settle.
    await page.waitForTimeout(1000)
    const long = /** @type {number[]} */ (await page.evaluate(() => /** @type {any} */ (window).__long))
    return { names, complete, longTotal: long.reduce((a, b) => a + b, 0), longest: Math.max(0, ...long) }
  } finally {
    await page.context().close()
  }
}

/** FP8 block weights in the set: one per scale tensor. @param {ReturnType<typeof kimiK3>} set */
function countWeights(set) {
  let n = 0
  for (const name of set.names) if (name.endsWith('.weight_scale_inv')) n++
  return n
}

console.log(`inspector-open: Kimi-K3's layout, ${sets.FP8.names.length.toLocaleString('en-US')} names over ${sets.FP8.shardPaths.length} shards, ` +
  `FP8 vs BF16, alternating; median of ${RUNS} runs after a warm-up; ${machine()}`)
/** @type {Record<string, { names: number, complete: number, longTotal: number, longest: number }[]>} */
const runs = { FP8: [], BF16: [] }
try {
  for (let r = 0; r <= RUNS; r++) {
    for (const label of ['FP8', 'BF16']) {
      const m = await openIn(label)
      if (r > 0) runs[label].push(m)
      console.log(`  ${r === 0 ? 'warm-up' : `run ${r}`} ${label}: names ${m.names} ms, complete ${m.complete} ms, ` +
        `long tasks ${m.longTotal.toFixed(0)} ms (longest ${m.longest.toFixed(0)} ms)`)
    }
  }
} finally {
  await browser.close()
  await server.close()
}

/** @param {string} label @param {'names' | 'complete' | 'longTotal' | 'longest'} key */
const med = (label, key) => median(runs[label].map((m) => m[key]))
for (const [key, what] of /** @type {['complete' | 'longTotal' | 'longest', string][]} */ ([
  ['complete', 'open to complete (every header in, counted, folded)'],
  ['longTotal', 'main-thread long tasks, total'],
  ['longest', 'the longest main-thread task'],
])) {
  const fp8 = med('FP8', key)
  const bf16 = med('BF16', key)
  figure({ area: 'inspector-open', figure: `the inspector opening 500,000 names over 96 shards, FP8 (249,674 weights folded): ${what}`,
    ours: fmtMs(fp8), baselineName: 'the same layout in BF16 (nothing to detect or fold)', baseline: fmtMs(bf16),
    ratio: bf16 / fp8, ratioText: `${fmtX(fp8 / bf16)} BF16's`, target: '', met: null })
}
emitFigures()

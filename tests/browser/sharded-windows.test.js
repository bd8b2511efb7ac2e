// A sharded set whose shard headers outgrow the default first window (256 KiB), opened as an app
// opens it in a page and in a module worker: the browser entry, default options, the data on
// another origin. Each shard's header must come in one request, sized from the index
// (js/sharded.js firstWindows), and the count must be the set's own. And a quantized set past
// one block of detection (65,536 names): the realm's timers run while its weights are detected.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { startServer as startAppServer } from '../servers/static-server.js'
import { startServer as startDataServer } from '../js/http-server.js'
import { makeShardedSet, serveSet } from '../js/sharded-fixtures.js'
import { launchChromium, newPage, skip } from './chromium.js'

// 4 shards of 4,000 names: headers of about 370 kB each.
const set = makeShardedSet({ tensors: 16_000, shards: 4 })
// 90,000 FP8 names (weights with their block scales): two blocks of detection.
const fp8 = makeShardedSet({ tensors: 90_000, shards: 4, dtype: 'F8_E4M3', experts: 64 })
let fp8Url = ''

/** @type {Awaited<ReturnType<typeof startAppServer>>} origin A: the page and the package */
let app
/** @type {Awaited<ReturnType<typeof startDataServer>>} origin B: the set */
let data
/** @type {import('playwright-core').Browser} */
let browser
let indexUrl = ''

before(async () => {
  if (skip) return
  data = await startDataServer({ lifetime: 120_000 })
  indexUrl = serveSet(data, set, { folder: '/big' })
  fp8Url = serveSet(data, fp8, { folder: '/fp8' })
  app = await startAppServer()
  browser = await launchChromium()
})
after(async () => {
  await browser?.close()
  await app?.close()
  await data?.close()
})

/** What the app does, as module source: open the index, count, close; posts or returns the count. */
const APP = (/** @type {string} */ entry, /** @type {string} */ url) => `
  const { open } = await import(${JSON.stringify(entry)})
  const f = await open(${JSON.stringify(url)})
  const { total } = await f.parameterCount()
  await f.close()
  const result = { total, shards: f.shards.length }`

/**
 * The app with every header in first: then the count is detection and counting alone, and the
 * timer can only run between detection's blocks.
 */
const DETECTING = (/** @type {string} */ entry, /** @type {string} */ url) => `
  const { open } = await import(${JSON.stringify(entry)})
  const f = await open(${JSON.stringify(url)})
  await f.loadHeaders()
  let turns = 0
  const timer = setInterval(() => { turns++ }, 0)
  const counted = await f.parameterCount().finally(() => clearInterval(timer))
  await f.close()
  const result = { total: counted.total, fp8: counted.byScheme['fp8-block'] ?? 0, turns }`

/**
 * @param {'page' | 'worker'} realm @param {typeof APP} build the app's code, given the entry and the URL
 * @param {string} url @returns {Promise<any>} what the app's code leaves in `result`
 */
async function countIn(realm, build = APP, url = indexUrl) {
  const { page, done } = await newPage(browser)
  try {
    // Any page of origin A: the code below imports the package from there, as an app's page does.
    await page.goto(app.url('/package.json'))
    const code = build(app.url('/js/index.js'), url)
    const result = await page.evaluate(async ({ code, realm }) => {
      if (realm === 'page') return new Function(`return (async () => { ${code}; return result })()`)()
      const source = `${code}; postMessage(result)`
      const worker = new Worker(URL.createObjectURL(new Blob([source], { type: 'text/javascript' })), { type: 'module' })
      return new Promise((resolve, reject) => {
        worker.onmessage = (e) => resolve(e.data)
        worker.onerror = (e) => reject(new Error(e.message))
      })
    }, { code, realm })
    return result
  } finally {
    await done()
  }
}

for (const realm of /** @type {const} */ (['page', 'worker'])) {
  test(`in a ${realm === 'page' ? 'page' : 'module worker'}, with default options: one request per shard header of 370 kB, sized from the index`, { skip, timeout: 60_000 }, async () => {
    data.resetStats()
    const { total, shards } = await countIn(realm)
    assert.equal(total, set.parameters)
    assert.equal(shards, 4)
    const shardRequests = data.stats.log.filter((e) => e.path !== `/big/${set.indexName}`)
    assert.deepEqual(shardRequests.map((e) => e.path).sort(), set.shardPaths.map((p) => `/big/${p}`), 'one request per shard')
    for (const e of shardRequests) {
      const i = set.shardPaths.indexOf(/** @type {string} */ (e.path.split('/').pop()))
      const b = set.shardBytes(i)
      const end = 8 + Number(new DataView(b.buffer, b.byteOffset).getBigUint64(0, true))
      assert.ok(end > 256 * 1024, `${e.path}: a ${end}-byte header, past the default window`)
      assert.ok(e.bytes >= end, `${e.path}: ${e.bytes} bytes hold the ${end}-byte header`)
    }
  })

  test(`in a ${realm === 'page' ? 'page' : 'module worker'}, parameterCount of 90,000 FP8 names: the count, with timers run between blocks of detection`, { skip, timeout: 60_000 }, async () => {
    const { total, fp8: inBlocks, turns } = await countIn(realm, DETECTING, fp8Url)
    assert.equal(total, fp8.parameters)
    assert.ok(inBlocks > 0, 'the weights counted by their logical shape')
    assert.ok(turns >= 1, `the ${realm}'s timer ran ${turns} times during detection`)
  })
}

// A sharded set whose shard headers outgrow the default first window (256 KiB), opened as an app
// opens it in a page and in a module worker: the browser entry, default options, the data on
// another origin. Each shard's header must come in one request, sized from the index
// (js/sharded.js firstWindows), and the count must be the set's own.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { startServer as startAppServer } from '../servers/static-server.js'
import { startServer as startDataServer } from '../js/http-server.js'
import { makeShardedSet, serveSet } from '../js/sharded-fixtures.js'
import { launchChromium, newPage, skip } from './chromium.js'

// 4 shards of 4,000 names: headers of about 370 kB each.
const set = makeShardedSet({ tensors: 16_000, shards: 4 })

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

/** @param {'page' | 'worker'} realm @returns {Promise<{ total: number, shards: number }>} */
async function countIn(realm) {
  const { page, done } = await newPage(browser)
  try {
    // Any page of origin A: the code below imports the package from there, as an app's page does.
    await page.goto(app.url('/package.json'))
    const code = APP(app.url('/js/index.js'), indexUrl)
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
}

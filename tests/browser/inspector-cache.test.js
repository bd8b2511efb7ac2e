// The inspector keeps headers and indexes in the browser's Cache API by default (issue 17): a
// sharded set opened, then the page reloaded as a user would, costs one request per file, each a
// 304 without a body (web-demo/serve.js answers If-None-Match); a shard changed on the server since
// (another ETag) is read anew. The page is the inspector as `npm start` serves it, no option set.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { bytesBody, findFile, startServer } from '../../web-demo/serve.js'
import { makeShardedSet } from '../js/sharded-fixtures.js'
import { launchChromium, newPage, skip, waitOpened } from './chromium.js'

const FOLDER = '/cached/'

/** @type {import('playwright-core').Browser} */
let browser
/** @type {Awaited<ReturnType<typeof startServer>>} */
let server
const set = makeShardedSet({ tensors: 600, shards: 12, experts: 8 })
/** Each file's modification time: a new one is a new ETag. @type {Map<string, number>} */
const mtimes = new Map()
/** @type {{ path: string, status: number, bytes: number }[]} the data requests answered */
const log = []

/** @param {string} path @returns {Promise<import('../../web-demo/serve.js').Body | null>} */
async function find(path) {
  if (!path.startsWith(FOLDER)) return findFile(path)
  const name = path.slice(FOLDER.length)
  const i = set.allShardPaths.indexOf(name)
  const bytes = name === set.indexName ? set.indexBytes : i >= 0 ? set.shardBytes(i) : null
  return bytes && bytesBody(bytes, path, mtimes.get(name) ?? 1_000_000)
}

before(async () => {
  if (skip) return
  server = await startServer({
    find,
    policy: (path) => ({ data: path.startsWith(FOLDER) }),
    onRequest: (e) => { if (e.path.startsWith(FOLDER)) log.push({ path: e.path.slice(FOLDER.length), status: e.status, bytes: e.bytes }) },
  })
  browser = await launchChromium()
})

after(async () => {
  await browser?.close()
  await server?.close()
})

/** What the data server answered since the last call, by file: its statuses. */
function answered() {
  /** @type {Record<string, number[]>} */
  const by = {}
  for (const e of log.splice(0)) (by[e.path] ??= []).push(e.status)
  return by
}

test('a sharded set reopened in the inspector costs a 304 per file; a changed shard is read anew', { skip, timeout: 120_000 }, async () => {
  const { page, done } = await newPage(browser)
  const files = [set.indexName, ...set.shardPaths]
  await page.goto(server.pageUrl(server.url(`${FOLDER}${set.indexName}`)))
  await waitOpened(page)
  const first = answered()
  assert.deepEqual(Object.keys(first).sort(), [...files].sort(), 'the index and every shard read')
  for (const file of files) assert.ok(first[file].every((s) => s === 206 || s === 200), `${file}: ${first[file]}`)
  const names = await page.locator('#summary').textContent()

  await page.reload()
  await waitOpened(page)
  const again = answered()
  assert.deepEqual(again, Object.fromEntries(files.map((f) => [f, [304]])), 'one validation per file, each answered 304')
  assert.equal(await page.locator('#summary').textContent(), names, 'the same set shown')
  assert.ok((await page.evaluate(() => caches.keys())).includes('safetensors-wasm'), 'kept in the Cache API')
  await page.waitForFunction((n) => document.querySelector('.network-detail')?.textContent?.includes(`${n} files from the cache`), files.length)
  assert.equal(await page.textContent('.network-detail'),
    `Of which: headers 0 B (${files.length} files from the cache, validated: 304, no body) + 0 B of tensors fetched since.`)

  mtimes.set(set.shardPaths[3], 2_000_000)
  await page.reload()
  await waitOpened(page)
  const changed = answered()
  assert.deepEqual(changed[set.shardPaths[3]], [206], 'the changed shard read anew')
  for (const file of files.filter((f) => f !== set.shardPaths[3])) assert.deepEqual(changed[file], [304], file)
  await done()
})

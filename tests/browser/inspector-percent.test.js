// The inspector with names that hold a bare % (100%.safetensors): opened by URL (a bare % is not
// percent-encoding: decoding the name would throw "URI malformed" and leave the opened file
// unclosed) and as a local file, each showing its tensors and the name as it is.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { serialize } from '../../js/node.js'
import { startServer } from '../servers/static-server.js'
import { launchChromium, skip } from './chromium.js'


/** @type {Awaited<ReturnType<typeof startServer>>} */
let server
/** @type {import('playwright-core').Browser} */
let browser
/** @type {string} */
let dir

before(async () => {
  if (skip) return
  const bytes = await serialize({ 'a.weight': { dtype: 'F32', shape: [2, 2], data: new Float32Array([1, 2, 3, 4]) } })
  server = await startServer({ quiet: true })
  server.addFile('/pct/100%.safetensors', bytes)
  dir = await mkdtemp(join(tmpdir(), 'st-percent-'))
  await writeFile(join(dir, '100%.safetensors'), bytes)
  browser = await launchChromium()
})

after(async () => {
  await browser?.close()
  await server?.close()
  if (dir) await rm(dir, { recursive: true })
})

/** @param {(page: import('playwright-core').Page) => Promise<void>} openIt */
async function opened(openIt) {
  const page = await browser.newPage()
  /** @type {string[]} */
  const errors = []
  page.on('pageerror', (e) => errors.push(e.message))
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()) })
  try {
    await openIt(page)
    await page.waitForSelector('#summary:not([hidden])', { timeout: 15_000 })
    assert.equal(await page.locator('#panel-table tbody tr').count(), 1)
    assert.match(await page.textContent('body') ?? '', /100%\.safetensors/)
    assert.equal(await page.locator('#error:not([hidden])').count(), 0)
    assert.deepEqual(errors, [])
  } finally {
    await page.close()
  }
}

test('a URL whose file name holds a bare %', { skip, timeout: 60_000 }, async () => {
  await opened(async (page) => {
    await page.goto(server.pageUrl())
    await page.fill('#url-input', `${server.origin}/pct/100%.safetensors`)
    await page.click('#url-form button[type="submit"]')
  })
})

test('a local file named 100%.safetensors', { skip, timeout: 60_000 }, async () => {
  await opened(async (page) => {
    await page.goto(server.pageUrl())
    await page.setInputFiles('#file-input', join(dir, '100%.safetensors'))
  })
})

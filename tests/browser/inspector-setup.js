/**
 * What the inspector's browser tests share around their tests: one Chromium for a test file,
 * launched once its servers and files are ready and closed before them; the screenshots' folder;
 * the bundled sample as Node reads it (what the page must show of it); and the page helpers that
 * are the same in every file.
 */
import { after, before } from 'node:test'
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { open, serialize } from '../../js/node.js'
import { sampleModel } from '../fixtures/make-sample.js'
import { SAMPLE_PATH, SHARDED_SAMPLE_PATH } from '../servers/static-server.js'
import { INDEX_NAME, shardSample } from '../../web-demo/make-sharded-sample.js'
import { launchChromium, skip } from './chromium.js'

/** Where screenshots go (git-ignored). */
export const ARTIFACTS = fileURLToPath(new URL('../artifacts/inspector/', import.meta.url))
/** The sample's tensor whose statistics the tests check. */
export const DOWN_PROJ = 'model.layers.0.mlp.down_proj.weight'

/**
 * What a file's setup hands over to be undone after its tests.
 * @typedef {{
 *   closeAfter<T extends { close(): Promise<unknown> }>(thing: T): T,
 *   tempDir(prefix: string): Promise<string>,
 * }} Keep
 *   closeAfter: `thing` (a server) is closed after the tests, and returned; tempDir: a new folder
 *   under the OS's temporary one, removed with what it holds after the tests
 */

/**
 * Registers a test file's before and after hooks. Before (unless browser tests are skipped):
 * `setup` (servers, files), the screenshots' folder, then Chromium. After: Chromium closed, then
 * what setup kept, in the order it was kept; whatever had been made when a step failed is undone
 * too.
 * @param {(keep: Keep) => Promise<void>} setup
 * @returns {{ readonly browser: import('playwright-core').Browser }} the browser, once before has run
 */
export function inspectorHooks(setup) {
  /** @type {(() => Promise<unknown>)[]} */
  const undo = []
  /** @type {import('playwright-core').Browser | undefined} */
  let browser
  before(async () => {
    if (skip) return
    await setup({
      closeAfter(thing) {
        undo.push(() => thing.close())
        return thing
      },
      async tempDir(prefix) {
        const dir = await mkdtemp(join(tmpdir(), prefix))
        undo.push(() => rm(dir, { recursive: true }))
        return dir
      },
    })
    await mkdir(ARTIFACTS, { recursive: true })
    browser = await launchChromium()
  })
  after(async () => {
    await browser?.close()
    for (const step of undo) await step()
  })
  return {
    get browser() {
      if (!browser) throw new Error('the browser is launched in before()')
      return browser
    },
  }
}

/**
 * The bundled sample (web-demo's Sample button) as Node reads it: its bytes, its sharded form
 * (shard files and index, by file name) and what the page must show of it.
 */
export async function sampleFixture() {
  const sample = sampleModel()
  const bytes = await serialize(sample.tensors, { metadata: sample.metadata })
  const f = /** @type {import('../../js/index.js').SafetensorsFile} */ (await open(bytes))
  try {
    const t = await f.tensor(DOWN_PROJ)
    const downProj = t.stats({ bins: 64 })
    t.dispose()
    // The table's rows: a quantized weight's parts (its FP8 layer's weight_scale) fold under it.
    const folded = new Set(f.quantized().flatMap((q) => Object.values(q.parts).filter((p) => p !== q.name)))
    // The tree's leaves: each row, and under a quantized weight a leaf for each of its parts.
    const leaves = f.names.length - folded.size + f.quantized().reduce((n, q) => n + Object.keys(q.parts).length, 0)
    const expected = { tensors: f.names.length, rows: f.names.length - folded.size, leaves, quantized: f.quantized().length,
      parameters: f.parameterCount().total, downProj }
    return { bytes, shardFiles: await shardSample(f), expected }
  } finally {
    await f.close()
  }
}

/**
 * Serves the sample and its sharded form where the page's sample buttons ask for them.
 * @param {{ addFile(path: string, bytes: Uint8Array): void }} server
 * @param {{ bytes: Uint8Array, shardFiles: Map<string, Uint8Array> }} sample
 */
export function serveSample(server, sample) {
  server.addFile(SAMPLE_PATH, sample.bytes)
  const folder = SHARDED_SAMPLE_PATH.slice(0, -INDEX_NAME.length)
  for (const [name, bytes] of sample.shardFiles) server.addFile(folder + name, bytes)
}

/**
 * Clicks a tensor's row and waits until its view is shown and done loading.
 * @param {import('playwright-core').Page} page @param {string} name
 */
export async function selectTensor(page, name) {
  await page.click(`#panel-table tr[data-name="${name}"]`)
  await page.waitForFunction((n) => document.querySelector('#tensor-title')?.textContent === n &&
    document.querySelector('.result')?.getAttribute('aria-busy') === null, name, { timeout: 15_000 })
}

/** The error the page shows, once it shows one. @param {import('playwright-core').Page} page */
export async function errorShown(page) {
  await page.waitForSelector('#error:not([hidden])', { timeout: 20_000 })
  return page.evaluate(() => ({
    title: document.querySelector('.error-title')?.textContent ?? '',
    code: document.querySelector('.error-code')?.textContent ?? '',
    text: document.querySelector('#error')?.textContent ?? '',
  }))
}

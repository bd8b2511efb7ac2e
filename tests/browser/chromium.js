/**
 * What every browser test shares: Debian's Chromium (never a downloaded one), the reason to skip
 * when it is absent or switched off, and the launch with the flags a headless test run wants.
 */
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { chromium } from 'playwright-core'

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'

/** A reason to skip (node:test's `skip` option), or false. @type {string | false} */
export const skip = process.env.ST_BROWSER_TESTS === '0' ? 'ST_BROWSER_TESTS=0: browser tests switched off'
  : existsSync(CHROMIUM) ? false : `no Chromium at ${CHROMIUM} (bash .ci/bootstrap.sh installs it; CHROMIUM_PATH points elsewhere)`

/** WebGPU on SwiftShader (Vulkan in software), headless: what Debian's Chromium ships. */
const WEBGPU_ARGS = ['--headless=new', '--enable-unsafe-webgpu', '--enable-features=Vulkan', '--use-angle=swiftshader',
  '--use-vulkan=swiftshader', '--disable-vulkan-surface', '--ignore-gpu-blocklist']

/**
 * @param {{ webgpu?: boolean }} [options] webgpu: WebGPU on SwiftShader instead of no GPU at all
 *   (navigator.gpu.requestAdapter() then gives a software adapter on pages of a secure context,
 *   http://127.0.0.1 included)
 * @returns {Promise<import('playwright-core').Browser>}
 */
export function launchChromium(options = {}) {
  const common = ['--no-sandbox', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run']
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: options.webgpu ? [...common, ...WEBGPU_ARGS] : ['--no-sandbox', '--disable-gpu', ...common.slice(1)],
  })
}

/**
 * A fresh page in its own context that fails the test, at `done()`, on any script error or
 * console error (a refused Content-Security-Policy shows as one).
 * @param {import('playwright-core').Browser} browser
 * @param {{ width?: number, height?: number, colorScheme?: 'light' | 'dark' }} [options]
 */
export async function newPage(browser, options = {}) {
  const context = await browser.newContext({
    viewport: { width: options.width ?? 1400, height: options.height ?? 950 },
    colorScheme: options.colorScheme ?? 'light',
  })
  const page = await context.newPage()
  /** @type {string[]} */
  const errors = []
  page.on('pageerror', (e) => errors.push(e.message))
  page.on('console', (m) => { if (m.type() === 'error' && !/Failed to load resource/.test(m.text())) errors.push(m.text()) })
  return {
    page,
    async done() {
      await context.close()
      assert.deepEqual(errors, [], 'no script errors in the page')
    },
  }
}

/**
 * Waits until the inspector shows an opened file whole (a sharded set's summary is busy while its
 * shard headers are read). @param {import('playwright-core').Page} page
 * @param {number} [timeout] ms; longer for the 500,000-name set, whose 96 headers fill in its rows
 */
export async function waitOpened(page, timeout = 15_000) {
  await page.waitForSelector('#summary:not([hidden]):not([aria-busy="true"])', { timeout })
}

/**
 * Shows the open panel's inputs (URL, repo, files): once a file is open the panel is folded to a
 * line naming it, and its Change button unfolds it. @param {import('playwright-core').Page} page
 */
export async function showSourceInputs(page) {
  if (await page.isVisible('#source-change[aria-expanded="false"]')) await page.click('#source-change')
}

/**
 * What every browser test shares: Debian's Chromium (never a downloaded one), the reason to skip
 * when it is absent or switched off, and the launch with the flags a headless test run wants.
 */
import { existsSync } from 'node:fs'
import { chromium } from 'playwright-core'

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'

/** A reason to skip (node:test's `skip` option), or false. @type {string | false} */
export const skip = process.env.ST_BROWSER_TESTS === '0' ? 'ST_BROWSER_TESTS=0: browser tests switched off'
  : existsSync(CHROMIUM) ? false : `no Chromium at ${CHROMIUM} (bash .ci/bootstrap.sh installs it; CHROMIUM_PATH points elsewhere)`

/** @returns {Promise<import('playwright-core').Browser>} */
export function launchChromium() {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  })
}

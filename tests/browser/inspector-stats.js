/**
 * The inspector's statistics panel as the browser tests read it, compared with a Stats object
 * computed in Node (the numbers as the page formats them).
 */
import assert from 'node:assert/strict'
import { formatValue } from '../../js/format.js'

/** The panel's figures by label. @param {import('playwright-core').Page} page */
export function shownStats(page) {
  return page.$$eval('.stats-grid .stat', (els) => Object.fromEntries(els.map((e) => [e.querySelector('dt')?.textContent, e.querySelector('dd')?.textContent])))
}

/** @param {Record<string, string | null | undefined>} shown @param {import('../../js/index.js').Stats} s @param {string} what */
export function sameStats(shown, s, what) {
  assert.equal(shown.min, formatValue(s.min), `${what} min`)
  assert.equal(shown.max, formatValue(s.max), `${what} max`)
  assert.equal(shown.mean, formatValue(s.mean), `${what} mean`)
  assert.equal(shown.std, formatValue(s.std), `${what} std`)
  assert.equal(shown.NaN?.split(' ')[0], s.nanCount.toLocaleString('en-US'), `${what} NaN`)
  assert.equal(shown.Inf?.split(' ')[0], s.infCount.toLocaleString('en-US'), `${what} Inf`)
  assert.equal(shown.zeros?.split(' ')[0], s.zeroCount.toLocaleString('en-US'), `${what} zeros`)
}

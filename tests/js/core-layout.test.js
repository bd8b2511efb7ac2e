// js/core/ is the one place in js/ that knows how the wasm core lays out what crosses on the
// heap (its LAYOUT); the core reports the same layout from C++ (layout(), st::layoutJson: sizeof
// and offsetof of the structs JS reads, positions in the records, element sizes of the arrays).
// A struct change in src/ that js/core/ does not follow fails here, naming the number.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { LAYOUT } from '../../js/core/index.js'
import { DTYPES } from '../../js/dtypes.js'
import { loadCoreVariant } from '../../js/wasm.js'

/**
 * The names of the core's layout entries, in the order layout() reports their values: the
 * module carries the numbers alone, the names are those of the kLayout table in src/api.cpp.
 * @returns {string[]}
 */
function layoutNames() {
  const source = readFileSync(new URL('../../src/api.cpp', import.meta.url), 'utf8')
  const start = source.indexOf('kLayout[] = {')
  assert.ok(start >= 0, 'src/api.cpp has the kLayout table')
  const table = source.slice(start, source.indexOf('\n};', start))
  return [...table.matchAll(/\{"([\w.]+)",/g)].map((m) => m[1])
}

/**
 * The core's layout by name, as a given build reports it.
 * @param {'simd' | 'nosimd'} variant
 * @returns {Promise<{ layout: Map<string, number>, dtypes: string[] }>}
 */
async function reported(variant) {
  const core = await loadCoreVariant(variant)
  const { values, dtypes } = JSON.parse(core.layout())
  const names = layoutNames()
  assert.equal(names.length, values.length, 'one kLayout name in src/api.cpp per value layout() reports')
  return { layout: new Map(names.map((n, i) => [n, values[i]])), dtypes }
}

/**
 * LAYOUT flattened to the core's names: { TensorInfo: { rank } } is "TensorInfo.rank".
 * @param {Record<string, any>} layout
 * @returns {Map<string, number>}
 */
function flatten(layout, prefix = '') {
  /** @type {Map<string, number>} */
  const out = new Map()
  for (const [key, value] of Object.entries(layout)) {
    if (typeof value === 'number') out.set(prefix + key, value)
    else for (const [k, v] of flatten(value, `${prefix}${key}.`)) out.set(k, v)
  }
  return out
}

/**
 * Every disagreement between the core's layout and js/core/'s, one sentence each.
 * @param {Map<string, number>} core
 * @param {Map<string, number>} js
 */
function mismatches(core, js) {
  const out = []
  for (const [name, value] of core) {
    if (!js.has(name)) out.push(`${name}: the core reports ${value}, js/core/ LAYOUT has no such entry`)
    else if (js.get(name) !== value) out.push(`${name}: the core reports ${value}, js/core/ LAYOUT says ${js.get(name)}`)
  }
  for (const [name, value] of js) {
    if (!core.has(name)) out.push(`${name}: js/core/ LAYOUT says ${value}, the core reports no such entry`)
  }
  return out
}

for (const variant of /** @type {const} */ (['simd', 'nosimd'])) {
  test(`js/core/ LAYOUT is the layout the ${variant} core reports`, async () => {
    const { layout } = await reported(variant)
    assert.ok(layout.size >= 40, `${layout.size} entries`)
    assert.deepEqual(mismatches(layout, flatten(LAYOUT)), [])
  })

  test(`the dtypes cross as the ${variant} core's enum: DTYPES in its order`, async () => {
    const { dtypes } = await reported(variant)
    assert.deepEqual(dtypes, [...DTYPES])
  })
}

test('the comparison catches any one wrong constant, a missing one and an extra one', async () => {
  const { layout } = await reported('simd')
  const js = flatten(LAYOUT)
  for (const [name, value] of js) {
    const wrong = new Map(js).set(name, value + 1)
    assert.equal(mismatches(layout, wrong).length, 1, name)
    assert.match(mismatches(layout, wrong)[0], new RegExp(`^${name.replace('.', '\\.')}: `))
  }
  const missing = new Map(js)
  missing.delete('TensorInfo.rank')
  assert.deepEqual(mismatches(layout, missing),
    [`TensorInfo.rank: the core reports ${layout.get('TensorInfo.rank')}, js/core/ LAYOUT has no such entry`])
  assert.deepEqual(mismatches(layout, new Map(js).set('TensorInfo.flags', 36)),
    ['TensorInfo.flags: js/core/ LAYOUT says 36, the core reports no such entry'])
})

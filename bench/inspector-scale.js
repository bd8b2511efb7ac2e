#!/usr/bin/env node
/**
 * The inspector's table at 500,000 rows (web-demo/modules/row-order.js, which the page runs): the
 * order of each sortable column and a filter, against Array.prototype.sort on the row objects
 * with the comparators the table used before (the collator for names and dtypes; sizes, shapes
 * as numbers; ties by file order) and Array.prototype.filter with words.every() over the
 * lower-cased names. Rows are those of a generated Kimi-K3-like index (tests/js/sharded-fixtures.js,
 * BF16: 500,000 names over 96 shards), in index order, as the page holds them once every shard
 * header is in. Contenders alternate (ours, baseline, ours...) so that both see the same load.
 *   node bench/inspector-scale.js [--tensors 500000] [--runs 5]
 */
import { parseArgs } from 'node:util'
import { makeShardedSet } from '../tests/js/sharded-fixtures.js'
import { columnOrder, lowered, matching, prepareNameOrder, visibleOrder } from '../web-demo/modules/row-order.js'
import { emitFigures, figure, fmtMs, fmtX, machine, median } from './common.js'

const { values } = parseArgs({ options: { tensors: { type: 'string', default: '500000' }, runs: { type: 'string', default: '5' } } })
const TENSORS = Number(values.tensors)
const RUNS = Number(values.runs)
/** What "well under a second" is taken to mean for one sort or filter of every row. */
const TARGET_MS = 500

const collator = new Intl.Collator('en', { numeric: true })

/** The rows as the page makes them: index order (shard by shard, sorted names within). */
function makeRows() {
  const set = makeShardedSet({ tensors: TENSORS, shards: 96, experts: 384 })
  /** @type {Map<string, string[]>} */
  const byShard = new Map(set.shardPaths.map((p) => [p, []]))
  for (const name of set.names) byShard.get(/** @type {string} */ (set.shardOfName(name)))?.push(name)
  const names = set.shardPaths.flatMap((p) => (byShard.get(p) ?? []).sort())
  return names.map((name, order) => {
    const spec = /** @type {{ dtype: string, shape: number[] }} */ (set.specOf(name))
    const elements = spec.shape.reduce((a, b) => a * b, 1)
    // Flattened strings, as JSON.parse gives them (the generator's are built by concatenation).
    const flat = JSON.parse(JSON.stringify(name))
    return /** @type {import('../web-demo/modules/model.js').Row} */ (/** @type {unknown} */ ({
      name: flat, dtype: spec.dtype, shape: spec.shape, elements, byteLength: elements * 2, byteOffset: order * 8,
      shard: set.shardOfName(name), order, part: null,
    }))
  })
}

/** @typedef {import('../web-demo/modules/model.js').Row} Row */

/** The table's comparators before row-order.js, on row objects. @type {Record<string, (a: Row, b: Row) => number>} */
const BEFORE = {
  name: (a, b) => collator.compare(a.name, b.name) || a.order - b.order,
  dtype: (a, b) => collator.compare(a.dtype, b.dtype) || a.order - b.order,
  shape: (a, b) => a.shape.length - b.shape.length || a.elements - b.elements || a.order - b.order,
  byteLength: (a, b) => a.byteLength - b.byteLength || a.order - b.order,
}

/**
 * Median ms of each contender over `runs` alternating runs (one warm-up each).
 * @param {Record<string, () => unknown>} fns @param {number} [runs]
 */
function alternate(fns, runs = RUNS) {
  /** @type {Record<string, number[]>} */
  const times = Object.fromEntries(Object.keys(fns).map((k) => [k, []]))
  for (const fn of Object.values(fns)) fn()
  for (let r = 0; r < runs; r++) {
    for (const [k, fn] of Object.entries(fns)) {
      const t0 = performance.now()
      fn()
      times[k].push(performance.now() - t0)
    }
  }
  return Object.fromEntries(Object.entries(times).map(([k, t]) => [k, median(t)]))
}

/** @param {string} what @param {number} ours @param {number} baseline @param {string} baselineName */
function report(what, ours, baseline, baselineName) {
  figure({
    area: 'inspector-scale', figure: what, ours: fmtMs(ours), baseline: fmtMs(baseline), baselineName,
    ratio: baseline / ours, ratioText: baseline >= ours ? `${fmtX(baseline / ours)} faster` : `${fmtX(baseline / ours)} (slower)`,
    target: `under ${TARGET_MS} ms`, met: ours < TARGET_MS,
  })
}

console.log(`inspector-scale: ${machine()}, ${TENSORS.toLocaleString('en-US')} rows, median of ${RUNS} runs`)
const rows = makeRows()
const orders = Uint32Array.from(rows, (r) => r.order)

// Both must give the same order: the bench checks it once per column before timing.
for (const key of Object.keys(BEFORE)) {
  const ours = columnOrder(rows, key).order
  const theirs = rows.slice().sort(BEFORE[key])
  if (!theirs.every((r, k) => r.order === ours[k])) throw new Error(`${key}: row-order.js and the comparator disagree`)
}

// The collator sort of 500,000 names takes seconds: fewer runs of it, still alternating.
const nameRuns = alternate({
  ours: () => columnOrder(rows, 'name'),
  before: () => rows.slice().sort(BEFORE.name),
}, Math.min(RUNS, 3))
report('sort by name', nameRuns.ours, nameRuns.before, 'Array.prototype.sort on rows, Intl.Collator')
// The page makes the names' keys while idle once the rows are in (browser.js #prepareNames):
// then a sort by name is the sort alone. The same rows in another array, keys made.
const preparedRows = rows.slice()
const t0 = performance.now()
await prepareNameOrder(preparedRows, () => Promise.resolve())
const keysMs = performance.now() - t0
{
  const ours = columnOrder(preparedRows, 'name').order
  const plain = columnOrder(rows, 'name').order
  if (!plain.every((p, k) => p === ours[k])) throw new Error('name: prepared keys give another order')
}
const preparedRuns = alternate({
  ours: () => columnOrder(preparedRows, 'name'),
  before: () => rows.slice().sort(BEFORE.name),
}, Math.min(RUNS, 3))
report(`sort by name, keys made while idle before (as the page does; making them: ${fmtMs(keysMs)})`, preparedRuns.ours,
  preparedRuns.before, 'Array.prototype.sort on rows, Intl.Collator')
for (const key of ['byteLength', 'shape', 'dtype']) {
  const t = alternate({ ours: () => columnOrder(rows, key), before: () => rows.slice().sort(BEFORE[key]) })
  report(`sort by ${key}`, t.ours, t.before, 'Array.prototype.sort on rows')
}

const lower = lowered(rows)
const lowerNames = rows.map((r) => r.name.toLowerCase())
const lowerDtypes = rows.map((r) => r.dtype.toLowerCase())
const sizeOrder = columnOrder(rows, 'byteLength')
for (const filter of ['experts.42.', 'layers.7 down_proj', 'bf16 experts.1']) {
  const words = filter.split(' ')
  let count = 0
  const t = alternate({
    // The filter and the display order it gives (the rows sorted by size, the matches kept).
    ours: () => {
      const m = matching(rows, lower, words)
      count = m.count
      return visibleOrder(sizeOrder, 1, m.mask, orders)
    },
    before: () => rows.filter((_, i) => words.every((w) => lowerNames[i].includes(w) || lowerDtypes[i] === w)),
  })
  report(`filter "${filter}" (${count.toLocaleString('en-US')} rows)`, t.ours, t.before, 'Array.prototype.filter with words.every')
}
emitFigures()

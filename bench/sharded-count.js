#!/usr/bin/env node
/**
 * Counting a 500,000-name FP8 set (tests/js/sharded-fixtures.js's kimiK3: 96 shards, half the
 * names FP8 weights, half their block scales), as the inspector does once every shard header is
 * in: parameterCount() (quantization detection, then the count: each FP8 weight once by logical
 * shape, its scale not at all) and quantized() (the list of every weight), against a plain count
 * by dtype of every stored tensor through the public API (each shard's names and info(), no
 * detection: what a reader that knows nothing of quantization does); and the inspector's folding
 * of each weight's parts under it (web-demo/modules/model.js foldParts) against one Map of the
 * rows by name (the least a join of parts and rows by name costs). The set is read from bytes
 * in memory, its headers loaded before the timing; each run opens it anew (detection is cached
 * per open). Contenders alternate, so both see the same load.
 *   node bench/sharded-count.js [--runs 3]
 */
import { parseArgs } from 'node:util'
import { open } from '../js/node.js'
import { kimiK3 } from '../tests/js/sharded-fixtures.js'
import { foldParts } from '../web-demo/modules/model.js'
import { emitFigures, figure, fmtMs, fmtX, machine, median } from './common.js'

const { values } = parseArgs({ options: { runs: { type: 'string', default: '3' } } })
const RUNS = Number(values.runs)

const set = kimiK3()
/** @type {Record<string, Uint8Array>} */
const shards = {}
set.allShardPaths.forEach((path, i) => { if (set.shardPaths.includes(path)) shards[path] = set.shardBytes(i) })

/** The set opened from memory with every shard header in. */
async function opened() {
  const f = /** @type {import('../js/node.js').ShardedFile} */ (/** @type {unknown} */ (await open(set.indexBytes, { shards })))
  await f.loadHeaders()
  return f
}

/** @param {() => Promise<unknown>} fn @returns {Promise<number>} ms */
async function timed(fn) {
  const t0 = performance.now()
  await fn()
  return performance.now() - t0
}

console.log(`sharded count: ${set.names.length.toLocaleString('en-US')} names over ${set.shardPaths.length} shards, FP8 with block scales; ` +
  `median of ${RUNS} runs; ${machine()}`)
/** @type {{ count: number[], list: number[], plain: number[], fold: number[], map: number[] }} */
const times = { count: [], list: [], plain: [], fold: [], map: [] }
let weights = 0
/** @type {import('../web-demo/modules/model.js').QuantEntry[]} */
let entries = []
for (let r = 0; r <= RUNS; r++) {  // the first run warms up
  const f = await opened()
  const count = await timed(async () => {
    const { total, byScheme } = await f.parameterCount()
    if (total !== set.parameters || !(byScheme['fp8-block'] > 0)) throw new Error(`parameterCount ${total}, expected ${set.parameters}`)
  })
  const list = await timed(async () => { entries = await f.quantized() })
  weights = entries.length
  // The rows as the inspector holds them once every header is in.
  const rows = /** @type {import('../web-demo/modules/model.js').Row[]} */ (await Promise.all(f.names.map(async (name, order) => {
    const info = await f.info(name)
    return { name, dtype: info.dtype, shape: info.shape, byteOffset: info.byteOffset, byteLength: info.byteLength,
      elements: info.shape.reduce((a, b) => a * b, 1), shard: info.shard, order, part: null }
  })))
  await f.close()
  let folded = 0
  const fold = await timed(async () => { folded = (await foldParts(rows, entries)).length })
  if (folded !== rows.length - weights) throw new Error(`foldParts: ${folded} rows, expected ${rows.length - weights}`)
  const map = await timed(async () => {
    const byName = new Map(rows.map((r) => [r.name, r]))
    if (byName.size !== rows.length) throw new Error('names repeat')
  })
  const g = await opened()
  const plain = await timed(async () => {
    /** @type {Record<string, number>} */
    const byDtype = {}
    for (const path of g.shards) {
      const shard = await g.shard(path)
      for (const name of shard.names) {
        const { dtype, shape } = shard.info(name)
        byDtype[dtype] = (byDtype[dtype] ?? 0) + shape.reduce((a, b) => a * b, 1)
      }
    }
    if (!(byDtype.F8_E4M3 > 0)) throw new Error('no F8_E4M3 counted')
  })
  await g.close()
  if (r === 0) continue
  times.count.push(count)
  times.list.push(list)
  times.plain.push(plain)
  times.fold.push(fold)
  times.map.push(map)
}
const [count, list, plain] = [median(times.count), median(times.list), median(times.plain)]
const [fold, map] = [median(times.fold), median(times.map)]
figure({ area: 'sharded-count', figure: `parameterCount() of ${set.names.length.toLocaleString('en-US')} FP8 names (detection included)`,
  ours: fmtMs(count), baselineName: 'a plain count by dtype through shard(), names and info()', baseline: fmtMs(plain),
  ratio: plain / count, ratioText: `${fmtX(count / plain)} the plain count`, target: '', met: null })
figure({ area: 'sharded-count', figure: `quantized() of the same set (${weights.toLocaleString('en-US')} weights, copies)`,
  ours: fmtMs(list), baselineName: 'the plain count', baseline: fmtMs(plain),
  ratio: plain / list, ratioText: `${fmtX(list / plain)} the plain count`, target: '', met: null })
figure({ area: 'sharded-count', figure: `the inspector's folding of the parts under their weights (foldParts), ${weights.toLocaleString('en-US')} weights`,
  ours: fmtMs(fold), baselineName: 'one Map of the rows by name', baseline: fmtMs(map),
  ratio: map / fold, ratioText: `${fmtX(fold / map)} the Map`, target: '', met: null })
emitFigures()

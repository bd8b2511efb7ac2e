// The inspector's folding of quantized weights' parts under their weights
// (web-demo/modules/model.js foldParts) against a plain reference: one table of part names, a
// pass over the rows. foldParts finds each part's row next to the last one found, else by binary
// searches in the ascending runs of names, else in a table; every order of rows here takes one
// of those paths, and the result must be the reference's whatever the path.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { foldParts } from '../../web-demo/modules/model.js'

/** @typedef {import('../../web-demo/modules/model.js').Row} Row */
/** @typedef {import('../../web-demo/modules/model.js').QuantEntry} QuantEntry */

/** The reference: the rows folded with one Map (a part two weights name goes to the later). @param {Row[]} stored @param {QuantEntry[]} entries */
function reference(stored, entries) {
  /** @type {Map<string, { k: number, role: string }>} */
  const owner = new Map()
  entries.forEach((e, k) => { for (const role of Object.keys(e.parts)) owner.set(e.parts[role], { k, role }) })
  /** @type {Map<number, Row[]>} */
  const parts = new Map()
  /** @type {Map<number, number>} each weight's first part's order */
  const first = new Map()
  /** @type {(Row | number)[]} */
  const out = []
  for (const r of stored) {
    const o = owner.get(r.name)
    if (!o) {
      out.push(r)
      continue
    }
    if (!parts.has(o.k)) {
      parts.set(o.k, [])
      first.set(o.k, r.order)
      out.push(o.k)
    }
    parts.get(o.k)?.push({ ...r, partOf: entries[o.k].name, role: o.role })
  }
  return out.map((x) => {
    if (typeof x !== 'number') return x
    const e = entries[x]
    const order = Object.keys(e.parts)
    const ps = /** @type {Row[]} */ (parts.get(x)).sort((a, b) => order.indexOf(/** @type {string} */ (a.role)) - order.indexOf(/** @type {string} */ (b.role)))
    const shape = e.shape.map(Number)
    return {
      name: e.name, dtype: e.scheme, shape, elements: shape.reduce((a, b) => a * b, 1), part: null,
      byteOffset: Math.min(...ps.map((p) => p.byteOffset)), byteLength: ps.reduce((n, p) => n + p.byteLength, 0),
      shard: ps[0].shard ?? null, order: first.get(x),
      quant: { scheme: e.scheme, details: e.details ?? {}, parts: ps },
    }
  })
}

/** A row. @param {string} name @param {number} order @param {string} dtype */
const row = (name, order, dtype = 'BF16') => /** @type {Row} */ ({
  name, dtype, shape: [order + 1, 2], byteOffset: order * 64, byteLength: 2 * (order + 1) * 2, elements: (order + 1) * 2,
  shard: `s${order % 3}`, order, part: null,
})

/**
 * `n` FP8 weights (a weight, its scales) and a norm beside each, named so that sorting by name
 * puts a layer's tensors together; an MXFP4 weight whose two parts a third role names.
 * @param {number} n
 */
function model(n) {
  /** @type {[string, string][]} name, dtype */
  const tensors = []
  /** @type {QuantEntry[]} */
  const entries = []
  for (let k = 0; k < n; k++) {
    const base = `model.layers.${k}.mlp.experts.${k % 7}.down_proj`
    tensors.push([`${base}.weight`, 'F8_E4M3'], [`${base}.weight_scale_inv`, 'F32'], [`model.layers.${k}.norm.weight`, 'BF16'])
    entries.push({ name: `${base}.weight`, scheme: 'fp8-block', shape: [256, 128 + k], parts: { weight: `${base}.weight`, scaleInv: `${base}.weight_scale_inv` }, details: { block: [128, 128] } })
  }
  tensors.push(['model.mx.gate_blocks', 'U8'], ['model.mx.gate_scales', 'U8'])
  entries.push({ name: 'model.mx.gate', scheme: 'mxfp4', shape: [4, 64], parts: { blocks: 'model.mx.gate_blocks', scales: 'model.mx.gate_scales' }, details: {} })
  return { tensors, entries }
}

/** A seeded shuffle. @template T @param {T[]} items @param {number} seed */
function shuffled(items, seed) {
  const out = items.slice()
  let s = seed
  for (let i = out.length - 1; i > 0; i--) {
    s = (s * 1103515245 + 12345) >>> 0
    const j = s % (i + 1);
    [out[i], out[j]] = [out[j], out[i]]
  }
  return out
}

const bytes = (/** @type {string} */ a, /** @type {string} */ b) => Buffer.compare(Buffer.from(a), Buffer.from(b))

/** @type {Record<string, (t: [string, string][]) => [string, string][]>} */
const ORDERS = {
  // An index with sorted keys: parts next to each other.
  'sorted by name': (t) => t.slice().sort((a, b) => bytes(a[0], b[0])),
  // A file the reference wrote: by dtype, then by name: a few ascending runs.
  'by dtype, then name': (t) => t.slice().sort((a, b) => (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : bytes(a[0], b[0]))),
  // No order: runs of one or two names, until the searches give way to a table.
  shuffled: (t) => shuffled(t, 7),
  // Shard-like: three sorted runs, a weight's scales in another run than the weight.
  'three sorted runs': (t) => {
    const s = t.slice().sort((a, b) => bytes(a[0], b[0]))
    const third = Math.ceil(s.length / 3)
    return [s.slice(2 * third), s.slice(0, third), s.slice(third, 2 * third)].flat()
  },
}

for (const [what, order] of Object.entries(ORDERS)) {
  test(`foldParts, rows ${what}: as the reference folds them`, async () => {
    const { tensors, entries } = model(what === 'shuffled' ? 3000 : 400)
    const stored = order(tensors).map(([name, dtype], i) => row(name, i, dtype))
    const got = await foldParts(stored, entries)
    assert.equal(got.length, stored.length - entries.reduce((n, e) => n + Object.keys(e.parts).length, 0) + entries.length)
    assert.deepEqual(got, reference(stored, entries))
  })
}

test('foldParts: a part two weights name goes under the later one; a part with no row is left out', async () => {
  const { tensors, entries } = model(30)
  const stored = tensors.slice().sort((a, b) => bytes(a[0], b[0])).map(([name, dtype], i) => row(name, i, dtype))
  const shared = entries[3].parts.scaleInv
  entries[10] = { ...entries[10], parts: { weight: entries[10].parts.weight, scaleInv: shared } }
  entries[20] = { ...entries[20], parts: { ...entries[20].parts, extra: 'model.not.there' } }
  const got = await foldParts(stored, entries)
  assert.deepEqual(got, reference(stored, entries))
  const under = (/** @type {string} */ w) => got.find((r) => r.name === w)?.quant?.parts.map((p) => p.name)
  assert.deepEqual(under(entries[10].name), [entries[10].parts.weight, shared])
  assert.deepEqual(under(entries[3].name), [entries[3].parts.weight])
  assert.deepEqual(under(entries[20].name), [entries[20].parts.weight, entries[20].parts.scaleInv])
})

test('foldParts of 300,000 rows pauses between blocks of them, and folds as the reference', async () => {
  const { tensors, entries } = model(100_000)
  const stored = tensors.map(([name, dtype], i) => row(name, i, dtype))
  let pauses = 0
  const got = await foldParts(stored, entries, async () => { pauses++ })
  // 300,002 stored rows and 100,001 weights, in blocks of 100,000: 3 pauses, then 1.
  assert.equal(pauses, 4)
  assert.deepEqual(got, reference(stored, entries))
})

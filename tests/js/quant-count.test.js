// countParameters (js/quant/detect.js) against a count worked out here from detect's entries:
// every stored tensor that is no part of a detected weight, by dtype (a dtype present as long as
// one such tensor has it, even of zero elements), plus each weight's logical elements by scheme.
// FP8 block weights alone take the path that subtracts their parts' sizes; any other kind
// present takes the one that skips parts by name: both must give exactly this.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { countParameters, detect } from '../../js/quant/detect.js'

/** @typedef {{ dtype: string, shape: number[] }} Info */

/** A TensorView over name -> info, in the given order. @param {[string, Info][]} tensors */
function viewOf(tensors) {
  const byName = new Map(tensors)
  return { names: tensors.map(([n]) => n), get: (/** @type {string} */ n) => byName.get(n), value: () => undefined }
}

const elements = (/** @type {Info} */ i) => i.shape.reduce((a, b) => a * b, 1)

/** @param {[string, Info][]} tensors */
function expected(tensors) {
  const found = detect(viewOf(tensors), null)
  const parts = new Set(found.entries.flatMap((e) => Object.values(e.parts)))
  /** @type {Record<string, number>} */
  const byDtype = {}
  /** @type {Record<string, number>} */
  const byScheme = {}
  let total = 0
  for (const [name, info] of tensors) {
    if (parts.has(name)) continue
    byDtype[info.dtype] = (byDtype[info.dtype] ?? 0) + elements(info)
    total += elements(info)
  }
  for (const e of found.entries) {
    byScheme[e.scheme] = (byScheme[e.scheme] ?? 0) + e.shape.reduce((a, b) => a * b, 1)
    total += e.shape.reduce((a, b) => a * b, 1)
  }
  return { found, count: { total, byDtype, byScheme } }
}

/** An FP8 block weight [out, inF] and its F32 scales. @returns {[string, Info][]} */
const fp8 = (/** @type {string} */ base, out = 256, inF = 128) => [
  [`${base}.weight`, { dtype: 'F8_E4M3', shape: [out, inF] }],
  [`${base}.weight_scale_inv`, { dtype: 'F32', shape: [Math.ceil(out / 128), Math.ceil(inF / 128)] }],
]

const CASES = /** @type {Record<string, { tensors: [string, Info][], partTotals: boolean }>} */ ({
  'FP8 alone, every F8 and F32 tensor a part (those dtypes gone)': {
    tensors: [...fp8('a'), ...fp8('b', 300, 200), ['norm', { dtype: 'BF16', shape: [8] }]], partTotals: true,
  },
  'FP8 alone, plain F32 and F8 tensors beside the parts, one of zero elements': {
    tensors: [...fp8('a'), ['bias', { dtype: 'F32', shape: [0] }], ['lone', { dtype: 'F8_E4M3', shape: [4, 4] }], ...fp8('c')],
    partTotals: true,
  },
  'FP8 alone, one weight broken (its scales of the wrong shape count as plain)': {
    tensors: [...fp8('a'), ['b.weight', { dtype: 'F8_E4M3', shape: [256, 128] }], ['b.weight_scale_inv', { dtype: 'F32', shape: [5, 5] }]],
    partTotals: true,
  },
  'FP8 beside MXFP4 (two kinds: parts skipped by name)': {
    tensors: [...fp8('a'), ['e.gate_blocks', { dtype: 'U8', shape: [4, 2, 16] }], ['e.gate_scales', { dtype: 'U8', shape: [4, 2] }],
      ['norm', { dtype: 'BF16', shape: [8] }]],
    partTotals: false,
  },
  'two kinds giving one name twice (an FP8 weight and a GPTQ qweight of the same module): counted once': {
    tensors: [...fp8('m'), ['m.qweight', { dtype: 'I32', shape: [16, 256] }], ['m.qzeros', { dtype: 'I32', shape: [1, 32] }],
      ['m.scales', { dtype: 'F16', shape: [1, 256] }]],
    partTotals: false,
  },
})

for (const [what, c] of Object.entries(CASES)) {
  test(`countParameters: ${what}`, () => {
    const { found, count } = expected(c.tensors)
    assert.equal(Boolean(found.partTotals), c.partTotals, 'the path taken')
    assert.deepEqual(countParameters(viewOf(c.tensors), found), count)
    // byName and partNames, made on first use, hold what detect found
    for (const e of found.entries) assert.equal(found.byName.get(e.name), e)
    for (const p of found.problems) assert.ok([...found.byName.values()].includes(p))
    assert.deepEqual(found.partNames, new Set(found.entries.flatMap((e) => Object.values(e.parts))))
  })
}

test('two kinds giving one name twice: the first anchor in name order wins, as it always did', () => {
  const tensors = CASES['two kinds giving one name twice (an FP8 weight and a GPTQ qweight of the same module): counted once'].tensors
  const found = detect(viewOf(tensors), null)
  assert.deepEqual(found.entries.map((e) => [e.name, e.scheme]), [['m.weight', 'fp8-block']])
  const reversed = detect(viewOf([...tensors.slice(2), ...tensors.slice(0, 2)]), null)
  assert.deepEqual(reversed.entries.map((e) => [e.name, e.scheme]), [['m.weight', 'gptq']])
  assert.equal(reversed.byName.size, 1)
  assert.equal(reversed.byName.get('m.weight'), reversed.entries[0])
})

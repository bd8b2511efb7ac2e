// js/name-tree.js at the scale of the largest checkpoints: foldRepeats shows layers (and the
// experts inside them) that repeat one structure once, as `layers.{0..60}`, and sortByName orders
// names exactly as Intl.Collator('en', { numeric: true }) does without building a key per name.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { buildTree, foldRepeats, sortByName, treeText } from '../../js/name-tree.js'

/** @param {string} name @param {string} [dtype] @param {number[]} [shape] */
const row = (name, dtype = 'BF16', shape = [2, 2]) => ({ name, dtype, shape, byteLength: 8, elements: shape.reduce((a, b) => a * b, 1) })

/**
 * A model: `layers` layers of `experts` experts with three projections each, and a norm.
 * @param {number} layers @param {number} experts
 */
function moe(layers, experts) {
  const rows = [row('model.embed_tokens.weight', 'BF16', [8, 2])]
  for (let l = 0; l < layers; l++) {
    rows.push(row(`model.layers.${l}.input_layernorm.weight`, 'BF16', [2]))
    for (let e = 0; e < experts; e++) {
      for (const p of ['gate_proj', 'up_proj', 'down_proj']) rows.push(row(`model.layers.${l}.mlp.experts.${e}.${p}.weight`))
    }
  }
  return rows
}

/** The child of `n` named `name`. @param {import('../../js/name-tree.js').TreeNode} n @param {string} name */
function child(n, name) {
  const c = n.children.find((k) => k.name === name)
  assert.ok(c, `${n.path || '(root)'} has ${name}: ${n.children.map((k) => k.name).join(', ')}`)
  return c
}

test('foldRepeats: alike layers show once as {0..N}, their experts too, with the run\'s counts', () => {
  const rows = moe(61, 8)
  const tree = foldRepeats(buildTree(rows))
  // `layers` holds one run: they merge, as treeOf merges a group with one child.
  assert.deepEqual(child(tree, 'model').children.map((c) => c.name), ['embed_tokens.weight', 'layers.{0..60}'])
  const run = child(child(tree, 'model'), 'layers.{0..60}')
  assert.equal(run.path, 'model.layers.{0..60}')
  assert.deepEqual([run.repeat?.first, run.repeat?.last, run.repeat?.members.length], [0, 60, 61])
  assert.equal(run.tensors, 61 * (1 + 8 * 3), 'the counts are the whole run\'s')
  assert.equal(run.byteLength, 61 * (1 + 8 * 3) * 8)
  assert.deepEqual(run.repeat?.members.map((m) => m.path).slice(0, 2), ['model.layers.0', 'model.layers.1'])
  // Inside: one layer's structure, its experts folded too (a group left with one run is named by both).
  const experts = child(run, 'mlp.experts.{0..7}')
  assert.equal(experts.tensors, 8 * 3)
  assert.deepEqual(experts.children.map((c) => c.name), ['down_proj.weight', 'gate_proj.weight', 'up_proj.weight'])
  assert.equal(experts.children[0].row?.name, 'model.layers.0.mlp.experts.0.down_proj.weight', 'the first member\'s tensors stand for all')
  const text = treeText(tree, { label: 'moe' })
  assert.match(text, /└─ layers\.\{0\.\.60\} +1,525 tensors/)
})

test('foldRepeats: a layer that differs (another shape, another name, a gap in the numbers) stays apart', () => {
  const rows = moe(6, 2)
  rows.push(row('model.layers.3.extra.weight'))  // layer 3 has one tensor more
  const i = rows.findIndex((r) => r.name === 'model.layers.5.input_layernorm.weight')
  rows[i] = row(rows[i].name, 'F32', [2])  // layer 5 has another dtype
  const tree = foldRepeats(buildTree(rows))
  const layers = child(child(tree, 'model'), 'layers')
  assert.deepEqual(layers.children.map((c) => c.name), ['{0..2}', '3', '4', '5'])
  // Numbers that skip one are no run; names that are not plain numbers (007) neither.
  const gaps = foldRepeats(buildTree([row('a.0.w'), row('a.0.v'), row('a.2.w'), row('a.2.v'), row('b.007.w'), row('b.007.v'), row('b.8.w'), row('b.8.v')]))
  assert.deepEqual(child(gaps, 'a').children.map((c) => c.name), ['0', '2'])
  assert.deepEqual(child(gaps, 'b').children.map((c) => c.name), ['007', '8'])
  // Tensors named by numbers are not folded: only groups.
  assert.deepEqual(foldRepeats(buildTree([row('x.0'), row('x.1'), row('x.2')])).children[0].children.map((c) => c.name), ['0', '1', '2'])
})

test('foldRepeats over 500,000 names: 200 layers of 832 experts', { timeout: 120_000 }, () => {
  const rows = moe(200, 832)
  assert.ok(rows.length > 499_000)
  const tree = foldRepeats(buildTree(rows))
  const run = child(child(tree, 'model'), 'layers.{0..199}')
  assert.equal(run.tensors, rows.length - 1)
  assert.equal(child(run, 'mlp.experts.{0..831}').tensors, 832 * 3)
})

/** Random names from pieces that exercise the collator's rules: case, leading zeros, `_ - .`, long numbers. */
function randomNames(count, seed) {
  const pieces = ['a', 'B', 'b', '_', '-', '.', '0', '00', '1', '9', '10', '007', 'Z', 'z', '5', '0000000000000000000001', 'layers', 'x']
  let s = seed
  const next = () => ((s = (s * 1103515245 + 12345) % 2147483648) / 2147483648)
  return Array.from({ length: count }, () => Array.from({ length: 1 + Math.floor(next() * 7) }, () => pieces[Math.floor(next() * pieces.length)]).join(''))
}

test('sortByName orders as Intl.Collator(en, numeric) does, ties by `tie`, stably', () => {
  const collator = new Intl.Collator('en', { numeric: true })
  for (let seed = 1; seed <= 200; seed++) {
    const names = randomNames(40, seed)
    const sorted = sortByName(names.map((name, i) => ({ name, i })), (x) => x.name, (a, b) => a.i - b.i)
    const expected = names.map((name, i) => ({ name, i })).sort((a, b) => collator.compare(a.name, b.name) || a.i - b.i)
    assert.deepEqual(sorted.map((x) => x.i), expected.map((x) => x.i), names.join(' '))
  }
  // Lower case and no leading zeros: every key differs, and the engine's order is final.
  for (let seed = 1; seed <= 100; seed++) {
    const names = [...new Set(randomNames(60, seed).map((n) => n.toLowerCase().replace(/(^|[^0-9])0+(?=[0-9])/g, '$1')))]
    const expected = names.map((name, i) => ({ name, i })).sort((a, b) => collator.compare(a.name, b.name) || a.i - b.i)
    assert.deepEqual(sortByName(names.map((_, i) => i), (i) => names[i]), expected.map((x) => x.i), names.join(' '))
  }
  // Names without sort keys (another character, a run of more digits than a key holds) are
  // ordered by the collator alone.
  for (const odd of ['layers.é.w', `layers.${'7'.repeat(70)}.w`, 'layers 1']) {
    const names = [...randomNames(60, 7), odd]
    const expected = names.map((name, i) => ({ name, i })).sort((a, b) => collator.compare(a.name, b.name) || a.i - b.i)
    assert.deepEqual(sortByName(names.map((_, i) => i), (i) => names[i]), expected.map((x) => x.i), odd)
  }
  // Positions sorted by the names they point at.
  const names = ['layers.10.w', 'layers.9.w', 'layers.100.w', 'layers.9_a.w', 'Layers.9.w']
  assert.deepEqual(sortByName([0, 1, 2, 3, 4], (i) => names[i]).map((i) => names[i]),
    ['layers.9_a.w', 'layers.9.w', 'Layers.9.w', 'layers.10.w', 'layers.100.w'])
})

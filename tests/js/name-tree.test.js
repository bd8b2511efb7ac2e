// Hostile names, which must neither freeze nor crash the inspector or the CLI:
// js/name-tree.js groups 500,000 names in linear time and names thousands of levels deep without
// recursion, and shows at most MAX_TREE_DEPTH levels; js/format.js's escapeInvisible shows
// bidirectional controls and invisible characters as escapes; the CLI's text output uses it
// (`inspect`, `inspect --tree`, `stats`, `verify`) while --json keeps the names as stored.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtemp, rm, writeFile as fsWriteFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { serialize } from '../../js/node.js'
import { MAX_TREE_DEPTH, buildTree, indexNames, treeJson, treeOf, treeText } from '../../js/name-tree.js'
import { escapeInvisible, invisibleParts } from '../../js/format.js'

const CLI = fileURLToPath(new URL('../../js/cli/main.js', import.meta.url))

/** @param {string} name */
const row = (name) => ({ name, dtype: 'F32', shape: [1], byteLength: 4, elements: 1 })

/** `g0.w` ... : one group per name. @param {number} n */
const groups = (n) => Array.from({ length: n }, (_, i) => row(`g${i}.w`))

/** `w`, `x.w`, `x.x.w`, ...: every level branches, so nothing squashes: a tree `n` deep. @param {number} n */
const comb = (n) => Array.from({ length: n }, (_, k) => row(`${'x.'.repeat(k)}w`))

/**
 * Levels of a treeJson tree, counted without recursion.
 * @param {any} json @returns {number}
 */
function jsonDepth(json) {
  let deepest = 0
  /** @type {[any, number][]} */
  const stack = [[json, 0]]
  while (stack.length) {
    const [n, depth] = /** @type {[any, number]} */ (stack.pop())
    deepest = Math.max(deepest, depth)
    for (const c of n.children ?? []) stack.push([c, depth + 1])
  }
  return deepest
}

/**
 * Every node of a treeJson tree.
 * @param {any} json @returns {any[]}
 */
function jsonNodes(json) {
  const found = []
  const stack = [json]
  while (stack.length) {
    const n = stack.pop()
    found.push(n)
    for (const c of n.children ?? []) stack.push(c)
  }
  return found
}

test('500,000 names g<i>.w are grouped with exact counts, in time linear in their number', { timeout: 120_000 }, () => {
  const tree = buildTree(groups(500_000))
  assert.equal(tree.tensors, 500_000)
  assert.equal(tree.parameters, 500_000)
  assert.equal(tree.byteLength, 2_000_000)
  assert.equal(tree.children.length, 500_000, 'each g<i> has one child: merged into g<i>.w')
  assert.deepEqual(tree.children.slice(0, 3).map((c) => c.name), ['g0.w', 'g1.w', 'g2.w'])
  assert.deepEqual(tree.children.slice(-2).map((c) => [c.name, c.path, c.tensors]), [['g499998.w', 'g499998.w', 1], ['g499999.w', 'g499999.w', 1]])
  const lines = treeText(tree, { label: 'big' }).split('\n')
  assert.equal(lines.length, 500_001)
  assert.match(lines[1], /^├─ g0\.w +F32 \[1\] {2}4 B$/)
  // Ten times the names must cost about ten times as long (n log n sorting, GC and a busy
  // machine: under 40 times), where grouping by searching each group's children cost a hundred
  // times. The best of three runs of each, on the same machine and run.
  const best = (/** @type {number} */ n) => {
    const rows = groups(n)
    let fastest = Infinity
    for (let i = 0; i < 3; i++) {
      const start = performance.now()
      buildTree(rows)
      fastest = Math.min(fastest, performance.now() - start)
    }
    return fastest
  }
  best(20_000)  // warm up
  const ratio = best(200_000) / best(20_000)
  assert.ok(ratio < 40, `200,000 names took ${ratio.toFixed(1)} times as long as 20,000`)
})

test('a name 1,500 levels deep, and 200,000 deep, builds without recursion into one node', { timeout: 120_000 }, () => {
  const deep = `${'x.'.repeat(1500)}leaf`
  const tree = buildTree([row(deep), row('other')])
  assert.equal(tree.children.length, 2)
  assert.deepEqual(tree.children.map((c) => [c.name === deep || c.name, c.path === deep || c.path, c.tensors, c.joined]),
    [['other', 'other', 1, undefined], [true, true, 1, undefined]], 'merged into one tensor node named by all of it')
  const deeper = `${'x.'.repeat(200_000)}leaf`
  const two = buildTree([row(deeper), row(`${'x.'.repeat(100_000)}y`)])
  assert.equal(two.children.length, 1)
  const [shared] = two.children
  assert.ok(shared.name === `${'x.'.repeat(99_999)}x`, 'the 100,000 shared levels are one group')
  assert.equal(shared.tensors, 2)
  assert.equal(shared.children.length, 2)
  assert.ok(shared.children[0].name === `${'x.'.repeat(100_000)}leaf`, 'the rest of the deeper name is one tensor node')
  assert.equal(shared.children[1].name, 'y')
  assert.equal(treeText(two, { label: 'd' }).split('\n').length, 4)
})

test('a tree 1,500 levels deep shows 64 levels: the rest of each deeper name as one node, marked, in text and JSON', () => {
  assert.equal(MAX_TREE_DEPTH, 64)
  const tree = buildTree(comb(1500))
  assert.equal(tree.tensors, 1500)
  const json = /** @type {any} */ (treeJson(tree))
  assert.equal(jsonDepth(json), 64)
  const nodes = jsonNodes(json)
  assert.equal(nodes.filter((n) => n.dtype).length, 1500, 'every tensor is there')
  const joined = nodes.filter((n) => n.joined)
  assert.equal(joined.length, 1500 - 64, 'x.x...w of 64 or more levels: joined at level 64')
  // The group at level 63 holds its own w, then the tensors of the group that would be level 64.
  let at = json
  for (let level = 1; level < 64; level++) at = at.children.find((/** @type {any} */ c) => c.name === 'x')
  assert.equal(at.path, `${'x.'.repeat(62)}x`)
  assert.equal(at.tensors, 1500 - 63)
  assert.deepEqual(at.children[0], { name: 'w', path: `${'x.'.repeat(63)}w`, dtype: 'F32', shape: [1], parameters: 1, byteLength: 4 })
  assert.deepEqual(at.children[1], { name: 'x.w', path: `${'x.'.repeat(64)}w`, dtype: 'F32', shape: [1], parameters: 1, byteLength: 4, joined: true })
  assert.equal(at.children.at(-1).name, `${'x.'.repeat(1436)}w`)
  assert.equal(at.children.at(-1).path, `${'x.'.repeat(1499)}w`)

  const lines = treeText(tree, { label: 'comb' }).split('\n')
  assert.equal(lines.filter((l) => / [├└]─ ⋯ x\./.test(l)).length, 1436)
  assert.equal(lines.at(-1), '⋯ the tree shows 64 levels at most: the rest of a deeper name as one node')
  const indents = lines.map((l) => l.search(/[├└]─ /)).filter((i) => i >= 0)
  assert.equal(Math.max(...indents), 63 * 3, 'the deepest line is at level 64')
  assert.match(lines.at(-2) ?? '', new RegExp(`^ {189}└─ ⋯ ${'x\\.'.repeat(1436)}w {2}F32 \\[1\\] {2}4 B$`))

  // The same with a small limit, exactly.
  const small = buildTree(['a.b.c.d', 'a.b.e', 'a.f', 'g'].map(row), { maxDepth: 2 })
  assert.equal(treeText(small, { label: 'f' }), [
    'f                       4 tensors, 4 parameters, 16 B',
    '├─ a                    3 tensors, 3 parameters, 12 B',
    '│  ├─ ⋯ b.c.d  F32 [1]  4 B',
    '│  ├─ ⋯ b.e    F32 [1]  4 B',
    '│  └─ f        F32 [1]  4 B',
    '└─ g           F32 [1]  4 B',
    '⋯ the tree shows 2 levels at most: the rest of a deeper name as one node',
  ].join('\n'))
  assert.deepEqual(/** @type {any} */ (treeJson(small)).children[0].children.map((/** @type {any} */ c) => [c.name, c.path, c.joined]),
    [['b.c.d', 'a.b.c.d', true], ['b.e', 'a.b.e', true], ['f', 'a.f', undefined]])
})

test('the tree of a filter comes from the grouping of every name, squashed anew, in one pass', () => {
  const rows = ['model.layers.0.mlp.w', 'model.layers.0.attn.w', 'model.layers.1.mlp.w', 'model.layers.10.mlp.w', 'model.norm.w', 'lm_head.w'].map(row)
  const index = indexNames(rows)
  const all = treeOf(index)
  assert.deepEqual(all.children.map((c) => c.name), ['lm_head.w', 'model'])
  assert.deepEqual(all.children[1].children.map((c) => c.name), ['layers', 'norm.w'])
  assert.deepEqual(all.children[1].children[0].children.map((c) => c.name), ['0', '1.mlp.w', '10.mlp.w'])
  const mlp = treeOf(index, (r) => r.name.includes('mlp'))
  assert.equal(mlp.tensors, 3)
  assert.deepEqual(mlp.children.map((c) => c.name), ['model.layers'])
  assert.deepEqual(mlp.children[0].children.map((c) => [c.name, c.path]), [
    ['0.mlp.w', 'model.layers.0.mlp.w'], ['1.mlp.w', 'model.layers.1.mlp.w'], ['10.mlp.w', 'model.layers.10.mlp.w']])
  assert.equal(treeOf(index, () => false).tensors, 0)
  assert.deepEqual(buildTree(rows), all, 'buildTree is indexNames then treeOf')
})

test('escapeInvisible: bidirectional controls and invisible characters as \\u{...} escapes', () => {
  assert.equal(escapeInvisible('\u202Eexe.txt'), '\\u{202E}exe.txt')
  const bidi = '\u202A\u202B\u202C\u202D\u202E\u2066\u2067\u2068\u2069\u200E\u200F\u061C'
  assert.equal(escapeInvisible(`a${bidi}b`),
    'a\\u{202A}\\u{202B}\\u{202C}\\u{202D}\\u{202E}\\u{2066}\\u{2067}\\u{2068}\\u{2069}\\u{200E}\\u{200F}\\u{061C}b')
  const invisible = '\u200B\u200C\u200D\u2060\u2061\u2062\u2063\u2064\uFEFF\u00AD\u180E\u3164\u{E0041}'
  assert.equal(escapeInvisible(`x${invisible}y`),
    'x\\u{200B}\\u{200C}\\u{200D}\\u{2060}\\u{2061}\\u{2062}\\u{2063}\\u{2064}\\u{FEFF}\\u{00AD}\\u{180E}\\u{3164}\\u{E0041}y')
  // Control characters, tab and newline included (a name is one line), ESC (terminal escapes),
  // line separators, lone surrogates.
  assert.equal(escapeInvisible('a\tb\nc\rd\x1B[31me\x00\x7F\u0085\u2028\u2029\uD800'),
    'a\\u{0009}b\\u{000A}c\\u{000D}d\\u{001B}[31me\\u{0000}\\u{007F}\\u{0085}\\u{2028}\\u{2029}\\u{D800}')
  // Metadata values may be text of several lines: newlines and tabs stay there.
  assert.equal(escapeInvisible('line 1\n\tline 2\r\u202E', { multiline: true }), 'line 1\n\tline 2\\u{000D}\\u{202E}')
  // A literal "\u{" is escaped, so that every \u{...} shown is an escape; other backslashes stay.
  assert.equal(escapeInvisible('x\\u{202E}y'), 'x\\u{005C}u{202E}y')
  assert.equal(escapeInvisible('a\\b\\u0041'), 'a\\b\\u0041')
  // Visible text, right-to-left letters included, is left alone (the same string comes back).
  for (const plain of ['model.layers.0.mlp.weight', '模型.层.0', 'שלום.עולם', 'émoji 🙂', 'a b', ''])
    assert.equal(escapeInvisible(plain), plain)
  assert.deepEqual(invisibleParts('\u202Eexe.txt'), [
    { escape: '\\u{202E}', title: 'U+202E RIGHT-TO-LEFT OVERRIDE: a bidirectional control, which would reorder the text around it; shown escaped' },
    'exe.txt',
  ])
  assert.deepEqual(invisibleParts('a\u200Bb'), ['a', { escape: '\\u{200B}', title: 'U+200B ZERO WIDTH SPACE: an invisible character, shown escaped' }, 'b'])
  assert.deepEqual(invisibleParts('tab\there', { multiline: true }), ['tab\there'])
  assert.deepEqual(invisibleParts('x\\u{41}'), ['x\\u{41}'], 'the page marks escapes: a backslash stays')
})

/**
 * Runs the CLI.
 * @param {...string} args
 * @returns {Promise<{ code: number, stdout: string, stderr: string }>}
 */
function run(...args) {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 120_000, maxBuffer: 256 << 20 }, (error, stdout, stderr) => {
      resolve({ code: error ? Number(/** @type {any} */ (error).code ?? 1) : 0, stdout, stderr })
    })
  })
}

/** @type {string} */
let dir
const files = /** @type {Record<string, string>} */ ({})
const RLO_NAME = '\u202Eexe.txt'
const BIDI = /[\u202A-\u202E\u2066-\u2069\u200B-\u200F\u061C\uFEFF]/

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'st-name-tree-'))
  files.hostile = join(dir, 'hostile.safetensors')
  await fsWriteFile(files.hostile, await serialize({
    [RLO_NAME]: { dtype: 'F32', shape: [2], data: new Float32Array([1, NaN]) },
    'zero\u200Bwidth.weight': { dtype: 'F32', shape: [1], data: new Float32Array([2]) },
    'layers.\u2066x\u2069.bias': { dtype: 'F32', shape: [1], data: new Float32Array([3]) },
  }, { metadata: { '\u202Ekey': 'value\u200B\u202Eevil', note: 'line 1\nline 2' } }))
  const empty = { dtype: /** @type {const} */ ('F32'), shape: [0], data: new Float32Array(0) }
  files.many = join(dir, 'many.safetensors')
  await fsWriteFile(files.many, await serialize(Object.fromEntries(Array.from({ length: 150_000 }, (_, i) => [`g${i}.w`, empty]))))
  files.deep = join(dir, 'deep.safetensors')
  await fsWriteFile(files.deep, await serialize(Object.fromEntries(Array.from({ length: 1500 }, (_, k) => [`${'x.'.repeat(k)}w`, empty]))))
})

after(async () => {
  if (dir) await rm(dir, { recursive: true })
})

test('CLI text output shows hostile names and metadata escaped; --json keeps them as stored', async () => {
  const r = await run('inspect', files.hostile)
  assert.equal(r.code, 0, r.stderr)
  assert.doesNotMatch(r.stdout, BIDI, 'no bidi control or invisible character reaches the terminal')
  assert.match(r.stdout, /^ {2}\\u\{202E\}key: value\\u\{200B\}\\u\{202E\}evil$/m)
  assert.match(r.stdout, /^ {2}note: line 1\n {6}line 2$/m, 'a newline in a metadata value stays one')
  assert.match(r.stdout, /^\\u\{202E\}exe\.txt +F32 +\[2\] +8 B +\d+$/m)
  assert.match(r.stdout, /^zero\\u\{200B\}width\.weight +F32/m)
  assert.match(r.stdout, /^layers\.\\u\{2066\}x\\u\{2069\}\.bias +F32/m)

  const tree = await run('inspect', files.hostile, '--tree')
  assert.equal(tree.code, 0, tree.stderr)
  assert.doesNotMatch(tree.stdout, BIDI)
  assert.deepEqual(tree.stdout.trimEnd().split('\n').slice(1).map((l) => l.replace(/ {2,}[A-Z0-9].*$/, '')), [
    '├─ \\u{202E}exe.txt', '├─ layers.\\u{2066}x\\u{2069}.bias', '└─ zero\\u{200B}width.weight',
  ])

  // JSON consumers get the real strings (JSON.stringify leaves these characters as they are).
  const json = JSON.parse((await run('inspect', files.hostile, '--json')).stdout)
  assert.deepEqual(json.tensors.map((/** @type {any} */ t) => t.name).sort(), ['layers.\u2066x\u2069.bias', 'zero\u200Bwidth.weight', RLO_NAME])
  assert.deepEqual(json.metadata, { '\u202Ekey': 'value\u200B\u202Eevil', note: 'line 1\nline 2' })
  const treeJsonOut = JSON.parse((await run('inspect', files.hostile, '--tree', '--json')).stdout)
  assert.equal(treeJsonOut.children[0].name, RLO_NAME)

  const stats = await run('stats', files.hostile, RLO_NAME)
  assert.equal(stats.code, 0, stats.stderr)
  assert.match(stats.stdout, /^\\u\{202E\}exe\.txt {2}F32 \[2\] {2}2 values, 8 B$/m)
  assert.equal(JSON.parse((await run('stats', files.hostile, RLO_NAME, '--json')).stdout).tensors[0].name, RLO_NAME)
  const missing = await run('stats', files.hostile, 'no\u202Esuch')
  assert.equal(missing.code, 1)
  assert.match(missing.stderr, /^error: TensorNotFound \(tensor "no\\u\{202E\}such"\)/)
  assert.doesNotMatch(missing.stderr, BIDI)

  const verify = await run('verify', files.hostile, '--full')
  assert.equal(verify.code, 0, verify.stderr)
  assert.match(verify.stdout, /^warn {2}values +1 tensor holds NaN or Inf: \\u\{202E\}exe\.txt \(1 NaN\)$/m)
  assert.doesNotMatch(verify.stdout, BIDI)
})

test('CLI: inspect and inspect --tree of 150,000 names, and --tree of a tree 1,500 levels deep', { timeout: 240_000 }, async () => {
  const plain = await run('inspect', files.many, '-q')
  assert.equal(plain.code, 0, plain.stderr)
  assert.ok(/^tensors {5}150,000$/m.test(plain.stdout))
  assert.ok(/^g149999\.w +F32 +\[0\] +0 B +\d+$/m.test(plain.stdout))
  assert.equal(plain.stdout.trimEnd().split('\n').length, 8 + 150_000)
  const tree = await run('inspect', files.many, '--tree', '-q')
  assert.equal(tree.code, 0, tree.stderr)
  const lines = tree.stdout.trimEnd().split('\n')
  assert.equal(lines.length, 150_001)
  assert.match(lines[0], /many\.safetensors +150,000 tensors, 0 parameters, 0 B$/)
  assert.match(lines[2], /^├─ g1\.w +F32 \[0\] +0 B$/)
  assert.match(lines[150_000], /^└─ g149999\.w +F32 \[0\] +0 B$/)

  const deep = await run('inspect', files.deep, '--tree', '-q')
  assert.equal(deep.code, 0, deep.stderr)
  const deepLines = deep.stdout.trimEnd().split('\n')
  assert.equal(deepLines.at(-1), '⋯ the tree shows 64 levels at most: the rest of a deeper name as one node')
  assert.equal(deepLines.filter((l) => /[├└]─ ⋯ /.test(l)).length, 1436)
  assert.equal(Math.max(...deepLines.map((l) => l.search(/[├└]─ /))), 63 * 3)
  const json = JSON.parse((await run('inspect', files.deep, '--tree', '--json', '-q')).stdout)
  assert.equal(jsonDepth(json), 64)
  assert.equal(jsonNodes(json).filter((n) => n.joined).length, 1436)
})

/**
 * Tensor names grouped by their dotted prefix (model.layers.3.mlp...), each group with its
 * tensor count, parameter count and size: `inspect --tree` prints it, the inspector (web-demo/)
 * draws it. A group with a single child is merged into it (`embed_tokens.weight`), and children
 * sort by name, numeric segments as numbers (layers 2 before 10). Plain ESM, no Node or DOM.
 *
 * Names come from files, so nothing here trusts their shape: every step is linear in the total
 * length of the names (apart from sorting siblings) and none recurses (explicit stacks), so
 * 500,000 groups or a name 100,000 levels deep cost time and memory in proportion, never a stack
 * overflow. The tree shows at most MAX_TREE_DEPTH levels: a group at the last level is replaced by
 * its tensors, each named by the rest of its name and marked `joined`.
 */
import { escapeInvisible, formatBytes, formatCount, formatShape } from './format.js'

/** Levels of the tree at most; deeper names are shown as one node at the last level (joined). */
export const MAX_TREE_DEPTH = 64

/**
 * @typedef {{ name: string, dtype: string, shape: Array<number | bigint>, byteLength: number,
 *   elements: number }} NamedTensor  what the tree needs of a tensor (callers' rows have more)
 * @typedef {{ name: string, path: string, tensors: number, parameters: number, byteLength: number,
 *   children: TreeNode[], row: NamedTensor | null, joined?: boolean, repeat?: Repeat }} TreeNode  a
 *   group (row null) or a tensor; `joined`: a tensor past the depth limit, `name` being the rest
 *   of its name; `repeat`: on a group that stands for a run of alike groups (foldRepeats)
 * @typedef {{ first: number, last: number, members: TreeNode[] }} Repeat  the run `{first..last}`:
 *   its groups, each named by its number
 */

/**
 * A name segment in the grouping of every name: `start` is where it starts in the names below
 * it (the same in all of them, since they share the prefix), `first` one of those rows.
 * @template {NamedTensor} R
 * @typedef {{ name: string, start: number, row: R | null, first: R, children: Segment<R>[],
 *   groups: Map<string, Segment<R>> | null }} Segment
 */

/**
 * Every name split at its dots and grouped, children sorted: built once (indexNames), it gives
 * the tree of any subset of the names in one linear pass (treeOf), without sorting again.
 * @template {NamedTensor} R
 * @typedef {{ root: Segment<R>, rows: R[] }} NameIndex
 */

/**
 * @typedef {{ keys: string[], folded: boolean }} NameKeys  sort keys of names (sortKeys), for
 *   sortByName
 */

/** A group scans its children for a name up to this many; past it, it keeps a Map. */
const SCAN_LIMIT = 8
/** The children of every tensor (fewer objects: a large tree is mostly tensors). */
const NO_SEGMENTS = /** @type {any[]} */ (/** @type {unknown} */ (Object.freeze([])))
const NO_NODES = /** @type {TreeNode[]} */ (/** @type {unknown} */ (Object.freeze([])))

/**
 * Groups the names by dotted prefix and sorts each group's children: O(total length of the
 * names) plus the sorts.
 * @template {NamedTensor} R
 * @param {R[]} rows
 * @returns {NameIndex<R>}
 */
export function indexNames(rows) {
  /** @type {Segment<R>} */
  const root = { name: '', start: 0, row: null, first: /** @type {R} */ (/** @type {unknown} */ (null)), children: [], groups: null }
  for (const r of rows) {
    const name = r.name
    let at = root
    let start = 0
    for (;;) {
      const dot = name.indexOf('.', start)
      if (dot === -1) {
        at.children.push({ name: name.slice(start), start, row: r, first: r, children: NO_SEGMENTS, groups: null })
        break
      }
      const part = name.slice(start, dot)
      let child = findGroup(at, part)
      if (!child) {
        child = { name: part, start, row: null, first: r, children: [], groups: null }
        at.children.push(child)
        if (at.groups) at.groups.set(part, child)
        else if (at.children.length > SCAN_LIMIT) at.groups = new Map(at.children.filter((c) => c.row === null).map((c) => [c.name, c]))
      }
      at = child
      start = dot + 1
    }
  }
  // Sort every group's children (iteratively: a name may be thousands of levels deep).
  const stack = [root]
  while (stack.length) {
    const g = /** @type {Segment<R>} */ (stack.pop())
    g.groups = null
    if (g.children.length > 1) sortByName(g.children, (c) => c.name, (a, b) => (a.row ? 0 : 1) - (b.row ? 0 : 1))
    for (const c of g.children) if (c.row === null) stack.push(c)
  }
  return { root, rows }
}

/**
 * @template {NamedTensor} R
 * @param {Segment<R>} group @param {string} part
 * @returns {Segment<R> | undefined}
 */
function findGroup(group, part) {
  if (group.groups) return group.groups.get(part)
  return group.children.find((c) => c.row === null && c.name === part)
}

const collator = /* @__PURE__ */ new Intl.Collator('en', { numeric: true })
/** Digit runs longer than this make a name unkeyable (ICU cuts runs of over 200 digits). */
const MAX_RUN = 60
const KEY_BLOCK = 16384
/** A key ends in NUL and the name's position in four 7-bit code units. */
const MAX_KEYED = 2 ** 28
const ascii = /* @__PURE__ */ new TextDecoder()

/**
 * Sort keys for names: strings whose code units, compared as strings are, give the collator's
 * order but for case and leading zeros, or null when a name is not plain ASCII (letters, digits,
 * `_ - .`) or has a run of over MAX_RUN digits. A key is lower case, with `_` as \x01 (below `-`
 * and `.`, as ICU puts it) and each run of digits as `0` (between punctuation and letters, where
 * the collator puts digits), a code unit for its length without leading zeros (the shorter number
 * first), then those digits; then NUL (below any of those) and the name's position. `folded`
 * tells whether some name had an upper-case letter or a leading zero, which keys leave out. Keys
 * are built as bytes, a block of names at a time, and decoded once per block: a regular
 * expression per name costs several times more.
 * @param {string[]} names @returns {NameKeys | null}
 */
function sortKeys(names) {
  const blocks = keyBlocks(names)
  let step = blocks.next()
  while (!step.done) step = blocks.next()
  return step.value
}

/**
 * sortKeys a block of names at a time: yields after each block, returns the keys (or null).
 * @param {string[]} names @returns {Generator<void, NameKeys | null>}
 */
function* keyBlocks(names) {
  if (names.length > MAX_KEYED) return null
  const keys = new Array(names.length)
  const ends = new Uint32Array(KEY_BLOCK)
  let bytes = new Uint8Array(0)
  let folded = false
  for (let first = 0; first < names.length; first += KEY_BLOCK) {
    const last = Math.min(names.length, first + KEY_BLOCK)
    // A run of one digit grows by two bytes: at most 2n + 7 bytes for n characters.
    let need = 0
    for (let k = first; k < last; k++) need += 2 * names[k].length + 7
    if (bytes.length < need) bytes = new Uint8Array(need)
    let o = 0
    for (let k = first; k < last; k++) {
      const name = names[k]
      const n = name.length
      for (let i = 0; i < n;) {
        const c = name.charCodeAt(i)
        if (c >= 48 && c <= 57) {
          let e = i + 1
          while (e < n && isDigit(name.charCodeAt(e))) e++
          if (c === 48 && e - i > 1) folded = true
          while (i < e - 1 && name.charCodeAt(i) === 48) i++
          if (e - i > MAX_RUN) return null
          bytes[o++] = 48
          bytes[o++] = 0x40 + e - i
          for (; i < e; i++) bytes[o++] = name.charCodeAt(i)
          continue
        }
        if (c >= 97 && c <= 122) bytes[o++] = c
        else if (c >= 65 && c <= 90) (bytes[o++] = c + 32), (folded = true)
        else if (c === 95) bytes[o++] = 1
        else if (c === 45 || c === 46) bytes[o++] = c
        else return null
        i++
      }
      bytes[o++] = 0
      for (let shift = 21; shift >= 0; shift -= 7) bytes[o++] = (k >>> shift) & 0x7f
      ends[k - first] = o
    }
    const text = ascii.decode(bytes.subarray(0, o))
    let start = 0
    for (let k = first; k < last; k++) {
      keys[k] = text.slice(start, ends[k - first])
      start = ends[k - first]
    }
    if (last < names.length) yield
  }
  return { keys, folded }
}

/**
 * Sort keys for `names` made a block of names at a time, `pause()` awaited between blocks (a
 * page makes them while idle, so that sorting by name later costs only the sort), for
 * sortByName's `keyed`. null when names cannot be keyed (sortByName then uses the collator).
 * @param {string[]} names @param {() => Promise<void>} pause may throw to stop
 * @returns {Promise<NameKeys | null>}
 */
export async function nameKeys(names, pause) {
  const blocks = keyBlocks(names)
  for (let step = blocks.next(); ; step = blocks.next()) {
    if (step.done) return step.value
    await pause()
  }
}

/** @param {string} key @returns {number} the position a sort key ends in */
function keyPosition(key) {
  let k = 0
  for (let i = key.length - 4; i < key.length; i++) k = (k << 7) | key.charCodeAt(i)
  return k
}

/** @param {number} c a UTF-16 code unit */
const isDigit = (c) => c >= 48 && c <= 57

/**
 * Sorts `items` in place by name as Intl.Collator('en', { numeric: true }) orders them (then by
 * `tie`, then stably). Collator calls are slow (seconds for 500,000 names): when each name is plain
 * ASCII their keys (sortKeys) are compared instead, in the same order; the collator settles only
 * equal keys.
 * @template T
 * @param {T[]} items
 * @param {(item: T) => string} nameOf
 * @param {(a: T, b: T) => number} [tie]
 * @param {NameKeys | null} [keyed] nameKeys of the items' names, in the items' order (made
 *   beforehand); left as they were
 * @returns {T[]} items
 */
export function sortByName(items, nameOf, tie = () => 0, keyed = undefined) {
  const names = items.map(nameOf)
  const by = (/** @type {number} */ a, /** @type {number} */ b) => collator.compare(names[a], names[b]) || tie(items[a], items[b]) || a - b
  if (keyed === undefined) keyed = sortKeys(names)
  else if (keyed) keyed = { keys: keyed.keys.slice(), folded: keyed.folded }
  let at
  if (!keyed) {
    at = Array.from(names, (_, k) => k).sort(by)
  } else {
    // Strings sorted without a comparator are compared in the engine, several times faster than
    // through any function. Names whose keys are equal (they differ in case or leading zeros
    // alone) are then next to each other, in the collator's order only after `by` sorts them.
    const { keys, folded } = keyed
    keys.sort()
    at = keys.map(keyPosition)
    if (folded) {
      for (let k = 0; k < keys.length;) {
        const key = keys[k].slice(0, -5)
        let e = k + 1
        while (e < keys.length && keys[e].length === key.length + 5 && keys[e].startsWith(key)) e++
        if (e - k > 1) at.slice(k, e).sort(by).forEach((position, j) => { at[k + j] = position })
        k = e
      }
    }
  }
  const sorted = at.map((k) => items[k])
  for (let k = 0; k < sorted.length; k++) items[k] = sorted[k]
  return items
}

/**
 * The tree of the names that `keep` accepts (all of them without it): single-child groups
 * merged, at most `maxDepth` levels. One pass over the index, no sorting: O(number of segments).
 * @template {NamedTensor} R
 * @param {NameIndex<R>} index
 * @param {((row: R) => boolean) | null} [keep]
 * @param {{ maxDepth?: number }} [options]
 * @returns {TreeNode} the root (name ''); a tensor node's `row` is the caller's row
 */
export function treeOf(index, keep = null, options = {}) {
  const maxDepth = options.maxDepth ?? MAX_TREE_DEPTH
  /** @type {TreeNode | null} */
  let root = null
  // Post-order over the segments: a group is finished once all its children are.
  /** @type {{ segment: Segment<R>, next: number, kids: TreeNode[] }[]} */
  const stack = [{ segment: index.root, next: 0, kids: [] }]
  while (stack.length) {
    const top = stack[stack.length - 1]
    if (top.next < top.segment.children.length) {
      const c = top.segment.children[top.next++]
      if (c.row === null) stack.push({ segment: c, next: 0, kids: [] })
      else if (!keep || keep(c.row)) {
        top.kids.push({ name: c.name, path: c.row.name, tensors: 1, parameters: c.row.elements, byteLength: c.row.byteLength, children: NO_NODES, row: c.row })
      }
      continue
    }
    stack.pop()
    const g = top.segment
    const kids = top.kids
    if (stack.length === 0) {
      root = { name: '', path: '', tensors: 0, parameters: 0, byteLength: 0, children: kids, row: null }
      for (const kid of kids) add(root, kid)
      break
    }
    if (kids.length === 0) continue
    if (kids.length === 1) {
      // Squash: a group with one child is that child, named by both. The nodes are this call's
      // own, so it is renamed in place; its own single-child groups went the same way before.
      const only = kids[0]
      only.name = only.path.slice(g.start)
      stack[stack.length - 1].kids.push(only)
      continue
    }
    /** @type {TreeNode} */
    const node = { name: g.name, path: g.first.name.slice(0, g.start + g.name.length), tensors: 0, parameters: 0, byteLength: 0, children: kids, row: null }
    for (const kid of kids) add(node, kid)
    stack[stack.length - 1].kids.push(node)
  }
  const tree = /** @type {TreeNode} */ (root)
  if (Number.isFinite(maxDepth)) limitDepth(tree, Math.max(1, maxDepth))
  return tree
}

/** @param {TreeNode} group @param {TreeNode} child */
function add(group, child) {
  group.tensors += child.tensors
  group.parameters += child.parameters
  group.byteLength += child.byteLength
}

/**
 * @typedef {{ parameters: number, byteLength: number, pending: number }} KnownTotals  a group's
 *   parameters and bytes among its tensors whose size is known, and how many tensors are not
 *   (their row's elements and byteLength NaN: a shard header not read yet, or unreadable)
 */

/**
 * Every group's KnownTotals: one pass, bottom up, without recursion. A folded run counts all its
 * members. Made only where some size is unknown (a group's own totals are then NaN).
 * @param {TreeNode | null} root
 * @returns {Map<TreeNode, KnownTotals>}
 */
export function knownTotals(root) {
  /** @type {Map<TreeNode, KnownTotals>} */
  const totals = new Map()
  if (!root) return totals
  /** @param {TreeNode} g */
  const kids = (g) => (g.repeat ? g.repeat.members : g.children)
  /** @type {TreeNode[]} groups, each after its parent */
  const order = [root]
  for (let i = 0; i < order.length; i++) for (const c of kids(order[i])) if (!c.row) order.push(c)
  for (let i = order.length - 1; i >= 0; i--) {
    const sum = { parameters: 0, byteLength: 0, pending: 0 }
    for (const c of kids(order[i])) {
      if (c.row) {
        if (Number.isNaN(c.parameters) || Number.isNaN(c.byteLength)) sum.pending++
        else {
          sum.parameters += c.parameters
          sum.byteLength += c.byteLength
        }
      } else {
        const k = /** @type {KnownTotals} */ (totals.get(c))
        sum.parameters += k.parameters
        sum.byteLength += k.byteLength
        sum.pending += k.pending
      }
    }
    totals.set(order[i], sum)
  }
  return totals
}

/**
 * Replaces each group at level `maxDepth` by its tensors, each named by the rest of its name
 * (relative to the group's parent) and marked `joined`, so that the tree has at most `maxDepth`
 * levels.
 * @param {TreeNode} root @param {number} maxDepth
 */
function limitDepth(root, maxDepth) {
  /** @type {[TreeNode, number][]} */
  const stack = [[root, 0]]
  while (stack.length) {
    const [n, depth] = /** @type {[TreeNode, number]} */ (stack.pop())
    if (depth + 1 < maxDepth) {
      for (const c of n.children) if (c.row === null) stack.push([c, depth + 1])
      continue
    }
    if (!n.children.some((c) => c.row === null)) continue
    const cut = n === root ? 0 : n.path.length + 1
    /** @type {TreeNode[]} */
    const children = []
    for (const c of n.children) {
      if (c.row) children.push(c)
      else for (const leaf of leaves(c)) children.push(Object.assign({}, leaf, { name: leaf.path.slice(cut), joined: true }))
    }
    n.children = children
  }
}

/** The tensors under `n`, in tree order. @param {TreeNode} n @returns {TreeNode[]} */
function leaves(n) {
  const found = []
  const stack = [n]
  while (stack.length) {
    const m = /** @type {TreeNode} */ (stack.pop())
    if (m.row) found.push(m)
    else for (let i = m.children.length - 1; i >= 0; i--) stack.push(m.children[i])
  }
  return found
}

/** A group named by a number: 0, or digits without a leading zero (at most 15 of them: exact). */
const NUMBERED = /^(?:0|[1-9][0-9]{0,14})$/

/**
 * The tree with repeated structure shown once: a run of two or more sibling groups named by
 * consecutive numbers (layers 0, 1, ... 60) that hold the same names below them, with the same
 * dtypes and shapes, becomes one group named `{0..60}`. Its counts are the whole run's, its
 * children the first member's, and `repeat` gives the run (first, last, members). Inner runs fold
 * first (the experts of a layer, then the layers), so layers whose experts fold alike fold too.
 * The nodes of `root` are changed in place (treeOf makes them per call). Linear in the size of
 * the tree, no recursion.
 * @param {TreeNode} root
 * @returns {TreeNode} root
 */
export function foldRepeats(root) {
  /** @type {Map<string, number>} each distinct structure's number */
  const ids = new Map()
  /** @param {string} key */
  const intern = (key) => {
    let id = ids.get(key)
    if (id === undefined) ids.set(key, (id = ids.size))
    return id
  }
  // Post-order: a group's structure is known once its children's are (each frame collects them).
  /** @type {{ n: TreeNode, next: number, shapes: number[] }[]} */
  const stack = [{ n: root, next: 0, shapes: [] }]
  while (stack.length) {
    const top = stack[stack.length - 1]
    const n = top.n
    if (top.next < n.children.length) {
      const c = n.children[top.next++]
      if (c.row) top.shapes.push(intern(`${c.row.dtype} ${c.row.shape.join()}`))
      else stack.push({ n: c, next: 0, shapes: [] })
      continue
    }
    stack.pop()
    const shapes = foldRuns(n, top.shapes)
    const only = n.children.length === 1 && n !== root ? n.children[0] : null
    if (only?.repeat) {
      // A group left with one folded run is that run, named by both (experts.{0..383}), as
      // treeOf merges a group with one child.
      n.name = `${n.name}.${only.name}`
      n.path = only.path
      n.repeat = only.repeat
      n.children = only.children
    }
    let key = ''
    for (let k = 0; k < n.children.length; k++) key += `${n.children[k].name}\u0000${shapes[k]}\u0001`
    stack[stack.length - 1]?.shapes.push(intern(key))
  }
  return root
}

/**
 * Replaces each run of numbered sibling groups of the same structure under `group` by one group.
 * @param {TreeNode} group @param {number[]} shapes each child's structure
 * @returns {number[]} the structure of each of the group's new children
 */
function foldRuns(group, shapes) {
  const children = group.children
  /** @type {TreeNode[]} */
  const out = []
  /** @type {number[]} */
  const outShapes = []
  for (let k = 0; k < children.length;) {
    const first = children[k]
    let end = k + 1
    if (first.row === null && NUMBERED.test(first.name)) {
      let value = Number(first.name)
      while (end < children.length && children[end].row === null && shapes[end] === shapes[k] && children[end].name === String(value + 1)) {
        value++
        end++
      }
    }
    if (end - k < 2) {
      out.push(first)
      outShapes.push(shapes[k])
      k++
      continue
    }
    const members = children.slice(k, end)
    const last = members[members.length - 1]
    const name = `{${first.name}..${last.name}}`
    /** @type {TreeNode} */
    const folded = {
      name, path: first.path.slice(0, first.path.length - first.name.length) + name, tensors: 0, parameters: 0, byteLength: 0,
      children: first.children, row: null, repeat: { first: Number(first.name), last: Number(last.name), members },
    }
    for (const m of members) add(folded, m)
    out.push(folded)
    outShapes.push(shapes[k])
    k = end
  }
  if (out.length !== children.length) group.children = out
  return outShapes
}

/**
 * The tree of `rows`: indexNames then treeOf.
 * @template {NamedTensor} R
 * @param {R[]} rows
 * @param {{ maxDepth?: number }} [options] levels at most (MAX_TREE_DEPTH)
 * @returns {TreeNode} the root (name ''); a tensor node's `row` is the caller's row
 */
export function buildTree(rows, options = {}) {
  return treeOf(indexNames(rows), null, options)
}

/** How a joined node (past the depth limit) is marked in text. */
export const JOINED_MARK = '⋯'
/** Names longer than this do not widen the name column (they push their own line's columns). */
const NAME_COLUMN = 100

/**
 * The tree as text lines, groups deeper than `depth` folded. Names are shown with their
 * invisible and bidirectional characters escaped (escapeInvisible).
 * @param {TreeNode} root
 * @param {{ label: string, depth?: number }} options
 */
export function treeText(root, options) {
  const depth = options.depth ?? Infinity
  const known = unknownSizes(root) ? knownTotals(root) : null
  /** @param {TreeNode} n */
  const totals = (n) => groupTotals(n, known)
  /** @type {[string, string, string][]} name column, dtype/shape column, totals column */
  const lines = [[escapeInvisible(options.label), '', totals(root)]]
  let joined = 0  // the level of the joined nodes (the depth limit), once met
  /** @type {{ n: TreeNode, next: number, indent: string, level: number }[]} */
  const stack = [{ n: root, next: 0, indent: '', level: 1 }]
  while (stack.length) {
    const top = stack[stack.length - 1]
    if (top.next === top.n.children.length) {
      stack.pop()
      continue
    }
    const i = top.next++
    const c = top.n.children[i]
    const lastChild = i === top.n.children.length - 1
    const folded = c.row === null && top.level >= depth
    if (c.joined) joined = top.level
    const name = `${top.indent}${lastChild ? '└─ ' : '├─ '}${c.joined ? `${JOINED_MARK} ` : ''}${escapeInvisible(c.name)}${folded ? '.*' : ''}`
    if (c.row) lines.push([name, `${c.row.dtype} ${formatShape(c.row.shape)}`, Number.isNaN(c.byteLength) ? '?' : formatBytes(c.byteLength)])
    else lines.push([name, '', c.repeat ? `${totals(c)}; ${formatCount(c.repeat.members.length)} alike, the first shown` : totals(c)])
    if (c.row === null && !folded) stack.push({ n: c, next: 0, indent: `${top.indent}${lastChild ? '   ' : '│  '}`, level: top.level + 1 })
  }
  let w0 = 0
  let w1 = 0
  const widths = lines.map((l) => [...l[0]].length)
  for (const [i, l] of lines.entries()) {
    if (widths[i] <= NAME_COLUMN) w0 = Math.max(w0, widths[i])
    w1 = Math.max(w1, l[1].length)
  }
  const text = lines.map(([a, b, c], i) => `${a}${' '.repeat(Math.max(0, w0 - widths[i]))}  ${b.padEnd(w1)}  ${c}`.trimEnd())
  if (joined) text.push(`${JOINED_MARK} the tree shows ${joined} levels at most: the rest of a deeper name as one node`)
  return text.join('\n')
}

/** Whether some tensor under `n` has no known size (NaN: its shard header unread). @param {TreeNode} n */
function unknownSizes(n) {
  return Number.isNaN(n.parameters) || Number.isNaN(n.byteLength)
}

/**
 * A group's totals; with tensors of unknown size, those of the others as lower bounds.
 * @param {TreeNode} n @param {Map<TreeNode, KnownTotals> | null} known knownTotals of the tree
 */
function groupTotals(n, known) {
  const tensors = `${formatCount(n.tensors)} ${n.tensors === 1 ? 'tensor' : 'tensors'}`
  const k = unknownSizes(n) ? known?.get(n) : undefined
  if (!k) return `${tensors}, ${formatCount(n.parameters)} parameters, ${formatBytes(n.byteLength)}`
  if (k.pending === n.tensors) return `${tensors}, all unread: parameters and size unknown`
  return `${tensors} (${formatCount(k.pending)} unread), ≥ ${formatCount(k.parameters)} parameters, ≥ ${formatBytes(k.byteLength)}`
}

/**
 * The tree as JSON: groups { name, path, tensors, parameters, byteLength, children }, tensors
 * { name, path, dtype, shape, byteLength, parameters }, and `joined: true` on a tensor past the
 * depth limit (its name is the rest of its name). A folded run (foldRepeats) is a group with
 * `repeat: { first, last, count }`, its totals the run's, its children the first member's.
 * A tensor of unknown size (its shard unread) has parameters and byteLength null; a group with
 * such tensors has null totals, `unread` (how many) and `known` (the others' totals).
 * Names are the stored strings, not escaped: JSON readers want the real name (and
 * JSON.stringify keeps them exact).
 * @param {TreeNode} root
 * @returns {Record<string, unknown>}
 */
export function treeJson(root) {
  const known = unknownSizes(root) ? knownTotals(root) : null
  /** @param {number} x */
  const orNull = (x) => (Number.isNaN(x) ? null : x)
  /** @param {TreeNode} n @returns {Record<string, unknown>} */
  const one = (n) => {
    if (n.row) {
      const shape = n.row.shape.map((d) => (typeof d === 'bigint' ? d.toString() : d))
      return { name: n.name, path: n.path, dtype: n.row.dtype, shape, parameters: orNull(n.parameters), byteLength: orNull(n.byteLength), ...(n.joined ? { joined: true } : {}) }
    }
    const repeat = n.repeat && { first: n.repeat.first, last: n.repeat.last, count: n.repeat.members.length }
    const k = unknownSizes(n) ? known?.get(n) : undefined
    const partial = k ? { unread: k.pending, known: { parameters: k.parameters, byteLength: k.byteLength } } : {}
    return { name: n.name, path: n.path, tensors: n.tensors, parameters: orNull(n.parameters), byteLength: orNull(n.byteLength), ...partial, ...(repeat ? { repeat } : {}), children: [] }
  }
  const out = one(root)
  /** @type {[TreeNode, Record<string, unknown>][]} */
  const stack = [[root, out]]
  while (stack.length) {
    const [n, json] = /** @type {[TreeNode, Record<string, unknown>]} */ (stack.pop())
    const children = /** @type {unknown[]} */ (json.children)
    for (const c of n.children) {
      const child = one(c)
      children.push(child)
      if (!c.row) stack.push([c, child])
    }
  }
  return out
}

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
 *   children: TreeNode[], row: NamedTensor | null, joined?: boolean }} TreeNode  a group (row
 *   null) or a tensor; `joined`: a tensor past the depth limit, `name` being the rest of its name
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
/** Names whose sort key (below) orders them exactly as the collator does. */
const KEYABLE = /^[A-Za-z0-9_.-]*$/

/**
 * A string whose code-unit order is the collator's order for a KEYABLE name, case aside:
 * punctuation before digits before letters (`_` `-` `.`, as ICU), letters lower-cased, a run of
 * digits as its length then its digits (leading zeros dropped), so that 9 sorts before 10. null
 * for a run of over 200 digits (ICU cuts long runs into pieces).
 * @param {string} s
 */
function sortKey(s) {
  let key = ''
  for (let i = 0; i < s.length;) {
    const c = s.charCodeAt(i)
    if (c >= 48 && c <= 57) {
      let end = i
      while (end < s.length && s.charCodeAt(end) >= 48 && s.charCodeAt(end) <= 57) end++
      if (end - i > 200) return null
      let from = i
      while (from < end - 1 && s.charCodeAt(from) === 48) from++
      key += `\x04${String.fromCharCode(32 + end - from)}${s.slice(from, end)}`
      i = end
    } else {
      key += c === 95 ? '\x01' : c === 45 ? '\x02' : c === 46 ? '\x03' : c >= 65 && c <= 90 ? String.fromCharCode(c + 32) : s[i]
      i++
    }
  }
  return key
}

/**
 * Sorts `items` in place by name as Intl.Collator('en', { numeric: true }) orders them (then by
 * `tie`, then stably). Collator calls are slow (seconds for 500,000 names): when each name is plain
 * ASCII (letters, digits, `_ - .`) they are compared by a precomputed key instead, in the same
 * order (the collator settles only names that differ in case or leading zeros).
 * @template T
 * @param {T[]} items
 * @param {(item: T) => string} nameOf
 * @param {(a: T, b: T) => number} [tie]
 * @returns {T[]} items
 */
export function sortByName(items, nameOf, tie = () => 0) {
  /** @type {string[]} */
  const keys = []
  for (const item of items) {
    const name = nameOf(item)
    const key = KEYABLE.test(name) ? sortKey(name) : null
    if (key === null) {
      keys.length = 0
      break
    }
    keys.push(key)
  }
  if (keys.length !== items.length || items.length === 0) {
    return items.sort((a, b) => collator.compare(nameOf(a), nameOf(b)) || tie(a, b))
  }
  const copy = items.slice()
  const order = Uint32Array.from(copy.keys())  // a stable sort of positions: fewer objects
  order.sort((i, j) => (keys[i] < keys[j] ? -1 : keys[i] > keys[j] ? 1 : collator.compare(nameOf(copy[i]), nameOf(copy[j])) || tie(copy[i], copy[j]) || i - j))
  order.forEach((i, at) => { items[at] = copy[i] })
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
      else for (const leaf of leaves(c)) children.push({ ...leaf, name: leaf.path.slice(cut), joined: true })
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
  /** @type {[string, string, string][]} name column, dtype/shape column, totals column */
  const lines = [[escapeInvisible(options.label), '', groupTotals(root)]]
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
    if (c.row) lines.push([name, `${c.row.dtype} ${formatShape(c.row.shape)}`, formatBytes(c.byteLength)])
    else lines.push([name, '', groupTotals(c)])
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

/** @param {TreeNode} n */
function groupTotals(n) {
  return `${formatCount(n.tensors)} ${n.tensors === 1 ? 'tensor' : 'tensors'}, ${formatCount(n.parameters)} parameters, ${formatBytes(n.byteLength)}`
}

/**
 * The tree as JSON: groups { name, path, tensors, parameters, byteLength, children }, tensors
 * { name, path, dtype, shape, byteLength, parameters }, and `joined: true` on a tensor past the
 * depth limit (its name is the rest of its name). Names are the stored strings, not escaped: JSON
 * readers want the real name (and JSON.stringify keeps them exact).
 * @param {TreeNode} root
 * @returns {Record<string, unknown>}
 */
export function treeJson(root) {
  /** @param {TreeNode} n @returns {Record<string, unknown>} */
  const one = (n) => {
    if (n.row) {
      const shape = n.row.shape.map((d) => (typeof d === 'bigint' ? d.toString() : d))
      return { name: n.name, path: n.path, dtype: n.row.dtype, shape, parameters: n.parameters, byteLength: n.byteLength, ...(n.joined ? { joined: true } : {}) }
    }
    return { name: n.name, path: n.path, tensors: n.tensors, parameters: n.parameters, byteLength: n.byteLength, children: [] }
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

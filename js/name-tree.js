/**
 * Tensor names grouped by their dotted prefix (model.layers.3.mlp...), each group with its
 * tensor count, parameter count and size: `inspect --tree` prints it, the inspector (web-demo/)
 * draws it. A group with a single child is merged into it (`embed_tokens.weight`), and numeric
 * segments sort as numbers (layers 2 before 10). Plain ESM, no Node or DOM.
 */
import { formatBytes, formatCount, formatShape } from './format.js'

/**
 * @typedef {{ name: string, dtype: string, shape: Array<number | bigint>, byteLength: number,
 *   elements: number }} NamedTensor  what the tree needs of a tensor (callers' rows have more)
 * @typedef {{ name: string, path: string, tensors: number, parameters: number, byteLength: number,
 *   children: TreeNode[], row: NamedTensor | null }} TreeNode  a group (row null) or a tensor
 */

/**
 * @template {NamedTensor} R
 * @param {R[]} rows
 * @returns {TreeNode} the root (name ''); a tensor node's `row` is the caller's row
 */
export function buildTree(rows) {
  /** @type {TreeNode} */
  const root = node('', '', null)
  for (const r of rows) {
    const parts = r.name.split('.')
    let at = root
    add(at, r)
    parts.forEach((part, i) => {
      const last = i === parts.length - 1
      let child = last ? null : at.children.find((c) => c.name === part && c.row === null)
      if (!child) {
        child = node(part, parts.slice(0, i + 1).join('.'), last ? r : null)
        at.children.push(child)
      }
      if (!last) add(child, r)
      else Object.assign(child, { tensors: 1, parameters: r.elements, byteLength: r.byteLength })
      at = child
    })
  }
  return squash(root)
}

/** @param {string} name @param {string} path @param {NamedTensor | null} row @returns {TreeNode} */
function node(name, path, row) {
  return { name, path, tensors: 0, parameters: 0, byteLength: 0, children: [], row }
}

/** @param {TreeNode} group @param {NamedTensor} r */
function add(group, r) {
  group.tensors++
  group.parameters += r.elements
  group.byteLength += r.byteLength
}

const collator = /* @__PURE__ */ new Intl.Collator('en', { numeric: true })

/** Merges single-child groups into their child and sorts children. @param {TreeNode} n @returns {TreeNode} */
function squash(n) {
  n.children = n.children.map((c) => {
    let merged = c
    while (merged.row === null && merged.children.length === 1) {
      const only = merged.children[0]
      merged = { ...only, name: `${merged.name}.${only.name}` }
    }
    return squash(merged)
  }).sort((a, b) => collator.compare(a.name, b.name))
  return n
}

/**
 * The tree as text lines, groups deeper than `depth` folded.
 * @param {TreeNode} root
 * @param {{ label: string, depth?: number }} options
 */
export function treeText(root, options) {
  const depth = options.depth ?? Infinity
  /** @type {[string, string, string][]} name column, dtype/shape column, totals column */
  const lines = [[options.label, '', groupTotals(root)]]
  /** @param {TreeNode} n @param {string} indent @param {number} level */
  const walk = (n, indent, level) => {
    n.children.forEach((c, i) => {
      const lastChild = i === n.children.length - 1
      const folded = c.row === null && level >= depth
      const name = `${indent}${lastChild ? '└─ ' : '├─ '}${c.name}${folded ? '.*' : ''}`
      if (c.row) lines.push([name, `${c.row.dtype} ${formatShape(c.row.shape)}`, formatBytes(c.byteLength)])
      else lines.push([name, '', groupTotals(c)])
      if (c.row === null && !folded) walk(c, `${indent}${lastChild ? '   ' : '│  '}`, level + 1)
    })
  }
  walk(root, '', 1)
  const w0 = Math.max(...lines.map((l) => [...l[0]].length))
  const w1 = Math.max(...lines.map((l) => l[1].length))
  return lines.map(([a, b, c]) => `${a}${' '.repeat(w0 - [...a].length)}  ${b.padEnd(w1)}  ${c}`.trimEnd()).join('\n')
}

/** @param {TreeNode} n */
function groupTotals(n) {
  return `${formatCount(n.tensors)} ${n.tensors === 1 ? 'tensor' : 'tensors'}, ${formatCount(n.parameters)} parameters, ${formatBytes(n.byteLength)}`
}

/**
 * The tree as JSON: groups { name, path, tensors, parameters, byteLength, children }, tensors
 * { name, path, dtype, shape, byteLength, parameters }.
 * @param {TreeNode} n
 * @returns {Record<string, unknown>}
 */
export function treeJson(n) {
  if (n.row) {
    const shape = n.row.shape.map((d) => (typeof d === 'bigint' ? d.toString() : d))
    return { name: n.name, path: n.path, dtype: n.row.dtype, shape, parameters: n.parameters, byteLength: n.byteLength }
  }
  return { name: n.name, path: n.path, tensors: n.tensors, parameters: n.parameters, byteLength: n.byteLength, children: n.children.map(treeJson) }
}

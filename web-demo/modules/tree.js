/**
 * The tensors as a tree of dotted name prefixes (model › layers › 3 › mlp › …; built by
 * js/name-tree.js, as `inspect --tree` does), each group with its tensor count and size. Groups
 * are native <details> elements and tensors are buttons, so the tree works with the keyboard as
 * it is.
 *
 * Files can hold hundreds of thousands of names, or names thousands of levels deep: the names
 * are grouped once, when the tree is first shown (indexNames), and each filter takes the tree of
 * its matches from that in one pass (treeOf, at most MAX_TREE_DEPTH levels). Drawing is bounded
 * too: a group draws its first TREE_CHILDREN children and a line to show more, and past
 * TREE_NODES nodes in all, groups draw their children only when opened. Nothing recurses.
 *
 * A quantized weight is one leaf (its scheme and logical shape), its stored parts folded under
 * it in a <details> of their own.
 */
import { JOINED_MARK, MAX_TREE_DEPTH, indexNames, treeOf } from '../../js/name-tree.js'
import { el, visible } from './dom.js'
import { escapeInvisible, formatBytes, formatCount, formatShape } from './format.js'
import { schemeBadge } from './table.js'

/**
 * @typedef {import('./model.js').Row} Row
 * @typedef {import('../../js/name-tree.js').TreeNode} TreeNode
 * @typedef {{ ul: HTMLElement, group: TreeNode, depth: number, from: number }} Fill
 */

/** Children a group draws at a time; a line under them draws the next ones. */
export const TREE_CHILDREN = 500
/** Nodes drawn at once in all; past them, a group draws its children when it is opened. */
export const TREE_NODES = 3000
/** Levels indented in full. */
const INDENTED_LEVELS = 12

export class TensorTree {
  /** @param {(name: string, part?: boolean) => void} onSelect */
  constructor(onSelect) {
    this.onSelect = onSelect
    /** @type {string | null} */
    this.selected = null
    this.selectedPart = false
    /** @type {Row[]} */
    this.rows = []
    /** @type {import('../../js/name-tree.js').NameIndex<Row> | null} grouped on first show */
    this.index = null
    this.element = el('div', { class: 'tensor-tree' })
    this.element.addEventListener('click', (e) => {
      const button = /** @type {HTMLElement} */ (e.target).closest('button.tree-leaf')
      if (!(button instanceof HTMLElement)) return
      if (button.dataset.part !== undefined) this.onSelect(button.dataset.part, true)
      else if (button.dataset.name !== undefined) this.onSelect(button.dataset.name)
    })
  }

  /**
   * Takes a file's rows; nothing is built or drawn until show().
   * @param {Row[]} rows
   */
  setRows(rows) {
    this.rows = rows
    this.index = null
    this.element.replaceChildren()
  }

  /**
   * Draws the tree of the rows that `mask` keeps (all of them when null).
   * @param {Uint8Array | null} mask 1 at the `order` of each row to show
   * @param {boolean} expandAll open every group (while searching)
   */
  show(mask, expandAll) {
    this.index ??= indexNames(this.rows)
    const root = treeOf(this.index, mask ? (r) => mask[r.order] === 1 : null)
    if (root.tensors === 0) {
      this.element.replaceChildren(el('p', { class: 'muted', text: 'No tensor matches.' }))
      return
    }
    // Open the first levels of a small model; everything while searching.
    const openDepth = expandAll ? Infinity : root.tensors > 400 ? 1 : 2
    const ul = el('ul', { class: 'tree-root', 'aria-label': 'Tensors by name prefix' })
    this.#fill({ ul, group: root, depth: 0, from: 0 }, openDepth, { left: TREE_NODES })
    this.element.replaceChildren(ul)
  }

  /**
   * Draws children of `start.group` from `start.from` into `start.ul`, and the children of the
   * groups among them (open down to `openDepth`) while `budget` lasts: each group drawn reserves
   * its first TREE_CHILDREN children from it; the others draw theirs when opened. Iterative, so
   * depth costs no stack. `start.depth` is the group's level (the root's is 0).
   * @param {Fill} start @param {number} openDepth @param {{ left: number }} budget
   */
  #fill(start, openDepth, budget) {
    budget.left -= Math.min(start.group.children.length - start.from, TREE_CHILDREN)
    // Breadth first: the budget goes to the upper levels, which are what shows first.
    /** @type {Fill[]} */
    const queue = [start]
    for (let next = 0; next < queue.length; next++) {
      const { ul, group, depth, from } = queue[next]
      const end = Math.min(group.children.length, from + TREE_CHILDREN)
      for (let i = from; i < end; i++) {
        const c = group.children[i]
        if (c.row) {
          ul.append(this.#leaf(c))
          continue
        }
        const drawn = Math.min(c.children.length, TREE_CHILDREN)
        const eager = budget.left >= drawn
        if (eager) budget.left -= drawn
        // Past INDENTED_LEVELS, levels indent by a few pixels only: 64 full steps are wider than the panel.
        const list = el('ul', { class: depth + 1 >= INDENTED_LEVELS ? 'tree-deep' : undefined })
        const details = el('details', { open: eager && depth < openDepth },
          el('summary', {},
            el('span', { class: 'tree-name mono' }, ...visible(c.name)),
            el('span', { class: 'tree-meta', text: `${formatCount(c.tensors)} ${c.tensors === 1 ? 'tensor' : 'tensors'}` }),
            el('span', { class: 'tree-size', text: formatBytes(c.byteLength) })),
          list)
        ul.append(el('li', {}, details))
        const fill = { ul: list, group: c, depth: depth + 1, from: 0 }
        if (eager) queue.push(fill)
        else {
          // Past the budget: drawn when first opened, with a budget of its own.
          const onToggle = () => {
            if (!/** @type {HTMLDetailsElement} */ (details).open) return
            details.removeEventListener('toggle', onToggle)
            this.#fill(fill, openDepth, { left: TREE_NODES })
          }
          details.addEventListener('toggle', onToggle)
        }
      }
      if (end < group.children.length) ul.append(this.#more({ ul, group, depth, from: end }, openDepth))
    }
  }

  /** The line under a group's first children: how many more, and a button to draw them. @param {Fill} next @param {number} openDepth */
  #more(next, openDepth) {
    const rest = next.group.children.length - next.from
    const item = el('li', { class: 'tree-more' },
      el('span', { class: 'muted', text: `${formatCount(rest)} more${next.depth === 0 ? '' : ` in ${escapeInvisible(next.group.name)}`}: filter to narrow them down, or ` }),
      el('button', {
        type: 'button', class: 'link', text: `show ${formatCount(Math.min(rest, TREE_CHILDREN))} more`,
        onclick: () => {
          item.remove()
          this.#fill(next, openDepth, { left: TREE_NODES })
        },
      }))
    return item
  }

  /** @param {TreeNode} n a tensor */
  #leaf(n) {
    const r = /** @type {Row} */ (n.row)
    const leaf = el('button', {
      type: 'button', class: 'tree-leaf', dataset: { name: r.name }, title: escapeInvisible(r.name),
      'aria-current': !this.selectedPart && r.name === this.selected ? 'true' : undefined,
    }, el('span', { class: 'tree-name mono' },
      n.joined ? el('span', {
        class: 'tree-joined', text: JOINED_MARK,
        title: `Deeper than ${MAX_TREE_DEPTH} levels: the rest of the name is shown as one node`,
      }) : null,
      ...visible(n.name)),
    r.quant
      ? el('span', { class: 'tree-meta mono' }, schemeBadge(r.quant.scheme), ` ${formatShape(r.shape)}`)
      : el('span', { class: 'tree-meta mono', text: `${r.dtype} ${formatShape(r.shape)}` }),
    el('span', { class: 'tree-size', text: formatBytes(r.byteLength) }))
    if (!r.quant) return el('li', {}, leaf)
    const parts = r.quant.parts
    return el('li', {}, leaf, el('details', { class: 'tree-parts', open: parts.some((p) => this.selectedPart && p.name === this.selected) },
      el('summary', {}, el('span', { class: 'tree-name muted', text: `${parts.length} stored ${parts.length === 1 ? 'part' : 'parts'}` })),
      el('ul', {}, parts.map((p) => el('li', {}, el('button', {
        type: 'button', class: 'tree-leaf tree-part', dataset: { part: p.name }, title: escapeInvisible(p.name),
        'aria-current': this.selectedPart && p.name === this.selected ? 'true' : undefined,
      }, el('span', { class: 'tree-name mono' }, el('span', { class: 'part-role', text: p.role ?? '' }), ...visible(p.name)),
      el('span', { class: 'tree-meta mono', text: `${p.dtype} ${formatShape(p.shape)}` }),
      el('span', { class: 'tree-size', text: formatBytes(p.byteLength) })))))))
  }

  /** @param {string | null} name @param {boolean} [part] a quantized weight's part */
  select(name, part = false) {
    this.selected = name
    this.selectedPart = part
    for (const b of this.element.querySelectorAll('button.tree-leaf')) {
      const d = /** @type {HTMLElement} */ (b).dataset
      if (part ? d.part === name : d.part === undefined && d.name === name) {
        b.setAttribute('aria-current', 'true')
        const fold = b.closest('details.tree-parts')
        if (fold) /** @type {HTMLDetailsElement} */ (fold).open = true
      } else {
        b.removeAttribute('aria-current')
      }
    }
  }
}

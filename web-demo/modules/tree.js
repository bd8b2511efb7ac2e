/**
 * The tensors as a tree of dotted name prefixes (model › layers › 3 › mlp › …; built by
 * js/name-tree.js, as `inspect --tree` does), each group with its tensor count and size. Groups
 * are native <details> elements and tensors are buttons, so the tree works with the keyboard as
 * it is.
 */
import { buildTree } from '../../js/name-tree.js'
import { el } from './dom.js'
import { formatBytes, formatCount, formatShape } from './format.js'

/** @typedef {import('./model.js').Row} Row */

export class TensorTree {
  /** @param {(name: string) => void} onSelect */
  constructor(onSelect) {
    this.onSelect = onSelect
    /** @type {string | null} */
    this.selected = null
    this.element = el('div', { class: 'tensor-tree' })
    this.element.addEventListener('click', (e) => {
      const button = /** @type {HTMLElement} */ (e.target).closest('button.tree-leaf')
      if (button instanceof HTMLElement && button.dataset.name !== undefined) this.onSelect(button.dataset.name)
    })
  }

  /**
   * @param {Row[]} rows the rows to show (already filtered)
   * @param {boolean} expandAll open every group (while searching)
   */
  show(rows, expandAll) {
    const root = buildTree(rows)
    const many = rows.length > 400
    /** @param {import('../../js/name-tree.js').TreeNode} n @param {number} depth @returns {HTMLElement} */
    const draw = (n, depth) => {
      if (n.row) {
        const r = n.row
        return el('li', {}, el('button', {
          type: 'button', class: 'tree-leaf', dataset: { name: r.name }, title: r.name,
          'aria-current': r.name === this.selected ? 'true' : undefined,
        }, el('span', { class: 'tree-name mono', text: n.name }),
        el('span', { class: 'tree-meta mono', text: `${r.dtype} ${formatShape(r.shape)}` }),
        el('span', { class: 'tree-size', text: formatBytes(r.byteLength) })))
      }
      // Open the first levels of a small model; everything while searching.
      const open = expandAll || depth < (many ? 1 : 2)
      return el('li', {}, el('details', { open },
        el('summary', {},
          el('span', { class: 'tree-name mono', text: n.name }),
          el('span', { class: 'tree-meta', text: `${formatCount(n.tensors)} ${n.tensors === 1 ? 'tensor' : 'tensors'}` }),
          el('span', { class: 'tree-size', text: formatBytes(n.byteLength) })),
        el('ul', {}, n.children.map((c) => draw(c, depth + 1)))))
    }
    this.element.replaceChildren(rows.length
      ? el('ul', { class: 'tree-root', 'aria-label': 'Tensors by name prefix' }, root.children.map((c) => draw(c, 0)))
      : el('p', { class: 'muted', text: 'No tensor matches.' }))
  }

  /** @param {string | null} name */
  select(name) {
    this.selected = name
    for (const b of this.element.querySelectorAll('button.tree-leaf')) {
      if (/** @type {HTMLElement} */ (b).dataset.name === name) b.setAttribute('aria-current', 'true')
      else b.removeAttribute('aria-current')
    }
  }
}

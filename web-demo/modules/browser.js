/**
 * The tensors panel: a filter box and two views of the same rows, a table and a tree, as tabs.
 * The tree is built only while its tab is shown (a file may hold 500,000 names); a filter matches
 * against names lower-cased once per file, waits for a pause in typing on large files, and each
 * view draws only its first matches.
 */
import { el } from './dom.js'
import { formatCount } from './format.js'
import { TensorTable } from './table.js'
import { TensorTree } from './tree.js'

/** @typedef {import('./model.js').Row} Row */

/**
 * The rows that match every word of the filter, as a mask by `order`: a word matches a name or
 * shard containing it, or a dtype equal to it (case-insensitive); a quantized weight's name
 * counts its parts' names, its dtype is its scheme's name.
 * @param {Row[]} rows @param {Lowered} lower @param {string[]} words lower-case, at least one
 * @returns {{ mask: Uint8Array, count: number }}
 */
function matching(rows, lower, words) {
  const mask = new Uint8Array(lower.size)
  let count = 0
  for (let i = 0; i < rows.length; i++) {
    const name = lower.names[i]
    const shard = lower.shards[i]
    const dtype = lower.dtypes[i]
    if (words.every((w) => name.includes(w) || dtype === w || (shard !== '' && shard.includes(w)))) {
      mask[rows[i].order] = 1
      count++
    }
  }
  return { mask, count }
}

/**
 * The rows' names, shards and dtypes lower-cased once per file, and the size of a mask by
 * `order` (model.js numbers rows from 0 in file or index order).
 * @typedef {{ names: string[], shards: string[], dtypes: string[], size: number }} Lowered
 */

/** @param {Row[]} rows @returns {Lowered} */
function lowered(rows) {
  let size = 0
  for (const r of rows) size = Math.max(size, r.order + 1)
  return {
    names: rows.map((r) => (r.quant ? [r.name, ...r.quant.parts.map((p) => p.name)].join('\n') : r.name).toLowerCase()),
    shards: rows.map((r) => (r.shard ?? '').toLowerCase()),
    dtypes: rows.map((r) => r.dtype.toLowerCase()),
    size,
  }
}

export class TensorBrowser {
  /**
   * @param {HTMLElement} section
   * @param {(name: string, part?: boolean) => void} onSelect part: `name` is the stored name of a quantized weight's part
   */
  constructor(section, onSelect) {
    /** @type {Row[]} */
    this.rows = []
    /** @type {Lowered} */
    this.lower = lowered([])
    /** @type {Uint8Array | null} the rows the filter keeps, by order (null: all) */
    this.mask = null
    /** Whether the tree shows the current rows and filter (it is drawn only while shown). */
    this.treeDrawn = false
    this.sharded = false
    this.table = new TensorTable(onSelect)
    this.tree = new TensorTree(onSelect)
    this.search = /** @type {HTMLInputElement} */ (el('input', {
      id: 'tensor-filter', type: 'search', autocomplete: 'off', spellcheck: 'false',
      placeholder: 'e.g. layers.3 mlp, or bf16',
      'aria-describedby': 'tensor-count',
    }))
    this.count = el('span', { id: 'tensor-count', class: 'muted', 'aria-live': 'polite' })
    this.tabs = /** @type {const} */ (['table', 'tree']).map((view) => el('button', {
      type: 'button', role: 'tab', id: `tab-${view}`, 'aria-controls': `panel-${view}`,
      'aria-selected': String(view === 'table'), tabindex: view === 'table' ? '0' : '-1',
      text: view === 'table' ? 'Table' : 'Tree', onclick: () => this.view(view),
    }))
    this.panels = {
      table: el('div', { role: 'tabpanel', id: 'panel-table', 'aria-labelledby': 'tab-table' }, this.table.wrapper),
      tree: el('div', { role: 'tabpanel', id: 'panel-tree', 'aria-labelledby': 'tab-tree', hidden: true }, this.tree.element),
    }
    const tablist = el('div', { role: 'tablist', 'aria-label': 'Tensor view', class: 'tabs' }, this.tabs)
    tablist.addEventListener('keydown', (e) => {
      if (e.key !== 'ArrowLeft' && e.key !== 'ArrowRight') return
      e.preventDefault()
      const next = this.current === 'table' ? 'tree' : 'table'
      this.view(next)
      this.tabs[next === 'table' ? 0 : 1].focus()
    })
    this.current = 'table'
    // Redrawing thousands of rows per keystroke lags: wait for a pause in typing then (longer
    // for a file whose filter takes a while: matching 500,000 names, the tree's pass).
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    let timer
    this.search.addEventListener('input', () => {
      clearTimeout(timer)
      if (this.rows.length > 1000) timer = setTimeout(() => this.#refresh(), this.rows.length > 100_000 ? 300 : 150)
      else this.#refresh()
    })
    this.search.addEventListener('keydown', (e) => {
      if (e.key === 'ArrowDown' && this.current === 'table') {
        e.preventDefault()
        this.table.focus()
      }
    })
    section.replaceChildren(
      el('div', { class: 'panel-head' }, el('h2', { id: 'tensors-title', text: 'Tensors' }), tablist),
      el('div', { class: 'filter' },
        el('label', { for: 'tensor-filter', class: 'visually-hidden', text: 'Filter tensors' }),
        el('span', { class: 'filter-icon', 'aria-hidden': 'true' }),
        this.search, this.count),
      this.panels.table, this.panels.tree,
    )
  }

  /** @param {Row[]} rows @param {boolean} sharded */
  setRows(rows, sharded) {
    this.rows = rows
    this.lower = lowered(rows)
    this.sharded = sharded
    this.search.value = ''
    this.table.sort = { key: 'byteOffset', direction: 1 }
    this.table.setRows(rows, sharded)
    this.tree.setRows(rows)
    this.select(null)
    this.#refresh()
  }

  /** @param {'table' | 'tree'} view */
  view(view) {
    this.current = view
    this.tabs.forEach((tab, i) => {
      const on = (i === 0) === (view === 'table')
      tab.setAttribute('aria-selected', String(on))
      tab.setAttribute('tabindex', on ? '0' : '-1')
    })
    this.panels.table.hidden = view !== 'table'
    this.panels.tree.hidden = view !== 'tree'
    if (view === 'tree' && !this.treeDrawn) this.#drawTree()
  }

  /** @param {string | null} name @param {boolean} [part] a quantized weight's part */
  select(name, part = false) {
    this.table.select(name, part)
    this.tree.select(name, part)
  }

  #refresh() {
    const words = this.search.value.toLowerCase().split(/\s+/).filter(Boolean)
    const { mask, count } = words.length ? matching(this.rows, this.lower, words) : { mask: null, count: this.rows.length }
    this.mask = mask
    this.count.textContent = words.length ? `${formatCount(count)} of ${formatCount(this.rows.length)}` : `${formatCount(this.rows.length)} tensors`
    this.table.filter(mask)
    this.table.select(this.table.selected)
    this.treeDrawn = false
    if (this.current === 'tree') this.#drawTree()
  }

  #drawTree() {
    this.tree.show(this.mask, this.mask !== null)
    this.treeDrawn = true
  }
}

/**
 * The tensors panel: a filter box and two views of the same rows, a table and a tree, as tabs.
 */
import { el } from './dom.js'
import { formatCount } from './format.js'
import { TensorTable } from './table.js'
import { TensorTree } from './tree.js'

/** @typedef {import('./model.js').Row} Row */

/**
 * Whether a row matches every word of the filter: a word matches a name or shard containing it,
 * or a dtype equal to it (case-insensitive).
 * @param {Row} r @param {string[]} words lower-case
 */
function matches(r, words) {
  const name = r.name.toLowerCase()
  const shard = (r.shard ?? '').toLowerCase()
  const dtype = r.dtype.toLowerCase()
  return words.every((w) => name.includes(w) || dtype === w || (shard !== '' && shard.includes(w)))
}

export class TensorBrowser {
  /**
   * @param {HTMLElement} section
   * @param {(name: string) => void} onSelect
   */
  constructor(section, onSelect) {
    /** @type {Row[]} */
    this.rows = []
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
    // Redrawing thousands of rows per keystroke lags: wait for a pause in typing then.
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    let timer
    this.search.addEventListener('input', () => {
      clearTimeout(timer)
      if (this.rows.length > 1000) timer = setTimeout(() => this.#refresh(), 150)
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
    this.sharded = sharded
    this.search.value = ''
    this.table.sort = { key: 'byteOffset', direction: 1 }
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
  }

  /** @param {string | null} name */
  select(name) {
    this.table.select(name)
    this.tree.select(name)
  }

  #refresh() {
    const words = this.search.value.toLowerCase().split(/\s+/).filter(Boolean)
    const rows = words.length ? this.rows.filter((r) => matches(r, words)) : this.rows
    this.count.textContent = words.length ? `${formatCount(rows.length)} of ${formatCount(this.rows.length)}` : `${formatCount(this.rows.length)} tensors`
    this.table.show(rows, this.sharded)
    this.tree.show(rows, words.length > 0)
    this.table.select(this.table.selected)
  }
}

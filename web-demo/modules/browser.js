/**
 * The tensors panel: a filter box and two views of the same rows, a table and a tree, as tabs.
 * The tree is built only while its tab is shown (a file may hold 500,000 names); a filter matches
 * against names lower-cased once per file (row-order.js), in one loop over them, and waits for a
 * pause in typing on large files.
 *
 * A sharded set's rows come from its index at once; while its shard headers are read, a line
 * under the filter counts them (with Cancel, and a way to go on after a cancel or a failure),
 * and each batch of headers that arrives redraws the rows in view (refresh).
 */
import { el } from './dom.js'
import { formatCount } from './format.js'
import { forgetNameOrder, lowered, matching, prepareNameOrder } from './row-order.js'
import { TensorTable } from './table.js'
import { TensorTree } from './tree.js'

/**
 * @typedef {import('./model.js').Row} Row
 * @typedef {{ loaded: number, total: number, failed: number, state: 'reading' | 'done' | 'stopped',
 *   cancel: () => void, resume: () => void }} HeaderProgress
 */

/** Rows from which on the names' sort keys are made while the page is idle (#prepareNames). */
const PREPARE_ROWS = 20_000

export class TensorBrowser {
  /**
   * @param {HTMLElement} section
   * @param {(name: string, part?: boolean) => void} onSelect part: `name` is the stored name of a quantized weight's part
   */
  constructor(section, onSelect) {
    /** @type {Row[]} */
    this.rows = []
    /** @type {import('./row-order.js').Lowered | null} the rows' names lower-cased, made on the first filter */
    this.lower = null
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
    this.headers = {
      line: el('div', { id: 'headers-status', class: 'headers-status', role: 'status', hidden: true }),
      text: el('span', { id: 'headers-text' }),
      bar: /** @type {HTMLProgressElement} */ (el('progress', { id: 'headers-progress', max: '1', 'aria-labelledby': 'headers-text' })),
      button: /** @type {HTMLButtonElement} */ (el('button', { id: 'headers-button', type: 'button', class: 'small-button', text: 'Cancel' })),
      /** @type {(() => void) | null} */
      action: null,
    }
    this.headers.button.addEventListener('click', () => this.headers.action?.())
    this.headers.line.append(this.headers.text, this.headers.bar, this.headers.button)
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
    // Large files: wait for a pause in typing (the tree's pass over 500,000 names is slower than
    // the filter's).
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    let timer
    this.search.addEventListener('input', () => {
      clearTimeout(timer)
      if (this.rows.length > 1000) timer = setTimeout(() => this.#refresh(), this.rows.length > 100_000 ? 200 : 100)
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
      this.headers.line,
      this.panels.table, this.panels.tree,
    )
  }

  /** @param {Row[]} rows @param {boolean} sharded */
  setRows(rows, sharded) {
    if (this.rows !== rows) forgetNameOrder(this.rows)
    this.rows = rows
    this.#prepareNames(rows)
    this.lower = null
    this.sharded = sharded
    this.search.value = ''
    this.table.sort = { key: 'byteOffset', direction: 1 }
    this.table.setRows(rows, sharded)
    this.tree.setRows(rows)
    this.headers.line.hidden = true
    this.select(null)
    this.#refresh()
  }

  /**
   * Makes the sort keys of many rows' names while the page is idle, a block of names at a time,
   * so that the first sort by name costs only the sort (half as long at 500,000 rows). Other
   * rows shown stop it (setRows and replaceRows forget these rows' order).
   * @param {Row[]} rows
   */
  #prepareNames(rows) {
    if (rows.length < PREPARE_ROWS) return
    const pause = () => new Promise((resolve) => {
      if (typeof requestIdleCallback === 'function') requestIdleCallback(() => resolve(undefined), { timeout: 1000 })
      else setTimeout(resolve, 0)
    })
    prepareNameOrder(rows, pause).then(() => performance.mark('tensor-table:name-keys', { detail: { rows: rows.length } }), () => {})
  }

  /**
   * Takes new rows for the same file (a sharded set's quantized weights folded once every header
   * is in), keeping the filter, the order and the selection.
   * @param {Row[]} rows
   */
  replaceRows(rows) {
    const { selected, selectedPart } = this.table
    if (this.rows !== rows) forgetNameOrder(this.rows)
    this.rows = rows
    this.#prepareNames(rows)
    this.lower = null
    this.table.setRows(rows, this.sharded)
    this.tree.setRows(rows)
    this.update({ tree: true })
    this.select(selected, selectedPart)
  }

  /**
   * The rows' values changed (shard headers arrived): the table shows them and the filter applies
   * to them at once; the tree, slower to draw, when `tree` is set (the last headers) or when its
   * tab is next shown.
   * @param {{ tree?: boolean }} [options]
   */
  update(options = {}) {
    this.mask = this.#match()
    this.table.refresh(this.mask)
    this.treeDrawn = false
    if (this.current === 'tree' && options.tree) this.#drawTree()
  }

  /** @param {HeaderProgress} p what the line under the filter says about the shard headers */
  showHeaders(p) {
    const h = this.headers
    const failed = p.failed ? `; ${formatCount(p.failed)} could not be read (listed above)` : ''
    h.line.hidden = p.state === 'done' && p.failed === 0
    h.bar.max = Math.max(1, p.total)
    h.bar.value = p.loaded
    h.bar.hidden = p.state !== 'reading'
    if (p.state === 'reading') {
      h.text.textContent = `Reading the shard headers: ${formatCount(p.loaded)} of ${formatCount(p.total)}${failed}`
      h.button.textContent = 'Cancel'
      h.action = p.cancel
    } else {
      const stopped = p.state === 'stopped' ? 'Stopped: ' : ''
      h.text.textContent = `${stopped}${formatCount(p.loaded)} of ${formatCount(p.total)} shard headers read${failed}. ` +
        'The other shards’ tensors are listed from the index; selecting one reads its shard.'
      h.button.textContent = p.failed ? 'Try again' : 'Read the rest'
      h.action = p.resume
    }
    h.line.dataset.state = p.state
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

  /** The filter's words, lower-case. */
  #words() {
    return this.search.value.toLowerCase().split(/\s+/).filter(Boolean)
  }

  /** The filter's mask (null: no filter), counted into the count line; timed as `tensor-browser:filter`. */
  #match() {
    const words = this.#words()
    if (words.length === 0) {
      this.count.textContent = `${formatCount(this.rows.length)} ${this.rows.length === 1 ? 'tensor' : 'tensors'}`
      return null
    }
    const start = performance.now()
    this.lower ??= lowered(this.rows)
    const { mask, count } = matching(this.rows, this.lower, words)
    performance.measure('tensor-browser:filter', { start, detail: { words, rows: this.rows.length, count } })
    this.count.textContent = `${formatCount(count)} of ${formatCount(this.rows.length)}`
    return mask
  }

  #refresh() {
    this.mask = this.#match()
    this.table.filter(this.mask)
    this.treeDrawn = false
    if (this.current === 'tree') this.#drawTree()
  }

  #drawTree() {
    this.tree.show(this.mask, this.mask !== null)
    this.treeDrawn = true
  }
}

/**
 * The tensor table: sortable columns (click a header), rows selectable with the mouse or the
 * keyboard (a grid with one focusable row: arrows, Home/End and Page Up/Down move, Enter or Space
 * selects). Sorted once per column and direction; a filter picks its first MAX_ROWS matches from
 * that order (no sort per keystroke, whatever the number of tensors). Names are shown with their
 * invisible and bidirectional characters as marked escapes (visible()).
 *
 * A quantized weight is one row (its scheme as a badge, its logical shape) whose parts, the
 * stored tensors it is decoded from, fold under it: the ▸ button (or → and ←) shows and hides
 * them, and each part can be selected like a tensor.
 */
import { sortByName } from '../../js/name-tree.js'
import { el, visible } from './dom.js'
import { escapeInvisible, formatBytes, formatCount, formatShape } from './format.js'

/** Rows drawn at most; a search narrows the rest down. */
const MAX_ROWS = 2000
const collator = new Intl.Collator('en', { numeric: true })

/**
 * @typedef {import('./model.js').Row} Row
 * @typedef {{ key: string, label: string, numeric?: boolean, compare: (a: Row, b: Row) => number,
 *   cell: (r: Row) => string, className?: string }} Column
 */

/** @type {Column[]} */
const COLUMNS = [
  { key: 'name', label: 'Name', compare: (a, b) => collator.compare(a.name, b.name), cell: (r) => r.name, className: 'name' },
  { key: 'dtype', label: 'dtype', compare: (a, b) => collator.compare(a.dtype, b.dtype) || a.order - b.order, cell: (r) => r.dtype, className: 'mono col-dtype' },
  { key: 'shape', label: 'Shape', compare: (a, b) => a.shape.length - b.shape.length || a.elements - b.elements || a.order - b.order, cell: (r) => formatShape(r.shape), className: 'mono' },
  { key: 'byteLength', label: 'Size', numeric: true, compare: (a, b) => a.byteLength - b.byteLength || a.order - b.order, cell: (r) => formatBytes(r.byteLength) },
  { key: 'byteOffset', label: 'Offset', numeric: true, compare: (a, b) => a.order - b.order, cell: (r) => formatCount(r.byteOffset), className: 'col-offset' },
]
const SHARD_COLUMN = /** @type {Column} */ ({
  key: 'shard', label: 'Shard', compare: (a, b) => collator.compare(a.shard ?? '', b.shard ?? '') || a.order - b.order,
  cell: (r) => shortShard(r.shard ?? ''), className: 'mono col-shard',
})

/** model-00001-of-00003.safetensors as 1/3 when the name follows the usual pattern. @param {string} path */
function shortShard(path) {
  const m = /-(\d+)-of-(\d+)\.safetensors$/.exec(path)
  return m ? `${Number(m[1])}/${Number(m[2])}` : path
}

/** Names of more segments than this wrap anywhere rather than after each dot (two nodes a dot). */
const WBR_SEGMENTS = 64

/**
 * A dotted name that may wrap after each dot: model.<wbr>layers.<wbr>3.<wbr>mlp…
 * @param {string} name
 */
function breakable(name) {
  const span = el('span', { class: 'mono' })
  const parts = name.split('.')
  if (parts.length > WBR_SEGMENTS) {
    span.classList.add('wrap-anywhere')
    span.append(...visible(name))
    return span
  }
  parts.forEach((part, i) => {
    span.append(...visible(i < parts.length - 1 ? `${part}.` : part))
    if (i < parts.length - 1) span.append(document.createElement('wbr'))
  })
  return span
}

export class TensorTable {
  /** @param {(name: string, part?: boolean) => void} onSelect part: `name` is a quantized weight's part */
  constructor(onSelect) {
    this.onSelect = onSelect
    /** @type {Row[]} every row of the file */
    this.rows = []
    /** @type {Uint8Array | null} 1 at the `order` of each row to show; null: all */
    this.mask = null
    /** @type {{ key: string, direction: number, rows: Row[] } | null} the rows in the current order */
    this.sorted = null
    /** @type {Column[]} */
    this.columns = COLUMNS
    this.sort = { key: 'byteOffset', direction: 1 }
    /** @type {string | null} */
    this.selected = null
    /** Whether `selected` names a part of a quantized weight (a part may share its weight's name). */
    this.selectedPart = false
    /** @type {Set<string>} the quantized weights whose parts are shown */
    this.expanded = new Set()
    this.table = el('table', { class: 'tensor-table', role: 'grid', 'aria-label': 'Tensors', 'aria-readonly': 'true' })
    this.note = el('p', { class: 'muted table-note', hidden: true })
    this.element = el('div', { class: 'table-scroll tensor-table-scroll' }, this.table)
    this.wrapper = el('div', {}, this.element, this.note)
    this.table.addEventListener('keydown', (e) => this.#onKey(e))
    this.table.addEventListener('click', (e) => {
      const target = /** @type {HTMLElement} */ (e.target)
      const tr = target.closest('tbody tr')
      if (!(tr instanceof HTMLElement)) return
      if (target.closest('.fold-toggle') && tr.dataset.name !== undefined) {
        this.#toggle(tr.dataset.name)
        return
      }
      if (tr.dataset.part !== undefined) {
        this.#focusRow(tr)
        this.onSelect(tr.dataset.part, true)
      } else if (tr.dataset.name !== undefined) {
        this.#focusRow(tr)
        this.onSelect(tr.dataset.name)
      }
    })
  }

  /** Shows or hides a quantized weight's parts. @param {string} name @param {boolean} [open] */
  #toggle(name, open = !this.expanded.has(name)) {
    if (open === this.expanded.has(name)) return
    if (open) this.expanded.add(name)
    else this.expanded.delete(name)
    this.#draw()
    const tr = [...this.table.querySelectorAll('tbody tr')].find((t) => /** @type {HTMLElement} */ (t).dataset.name === name)
    if (tr instanceof HTMLElement) this.#focusRow(tr)
  }

  /** @param {Row[]} rows every row of the file @param {boolean} sharded */
  setRows(rows, sharded) {
    this.rows = rows
    this.sorted = null
    this.mask = null
    this.expanded = new Set()
    this.columns = sharded ? [...COLUMNS, SHARD_COLUMN] : COLUMNS
  }

  /** Shows the rows that `mask` keeps. @param {Uint8Array | null} mask 1 at the `order` of each row to show; null: all */
  filter(mask) {
    this.mask = mask
    this.#draw()
  }

  /** The rows in the current order: sorted when the order or the rows change, not per filter. */
  #inOrder() {
    const { key, direction } = this.sort
    if (this.sorted?.key === key && this.sorted.direction === direction) return this.sorted.rows
    const column = this.columns.find((c) => c.key === key) ?? this.columns[0]
    const rows = this.rows.slice()
    if (column.key === 'name') {
      // The collator's order, by precomputed keys where it can (a collator sort of 500,000 names
      // takes seconds); names are unique, so descending is ascending reversed.
      sortByName(rows, (r) => r.name, (a, b) => a.order - b.order)
      if (direction < 0) rows.reverse()
    } else {
      rows.sort((a, b) => direction * column.compare(a, b))
    }
    this.sorted = { key, direction, rows }
    return rows
  }

  /**
   * Marks the selected row; a part's weight unfolds to show it.
   * @param {string | null} name @param {boolean} [part] `name` is a part's stored name
   */
  select(name, part = false) {
    this.selected = name
    this.selectedPart = part
    const owner = part ? this.rows.find((r) => r.quant?.parts.some((p) => p.name === name)) : null
    if (owner && !this.expanded.has(owner.name)) {
      this.expanded.add(owner.name)
      this.#draw()
      return
    }
    for (const tr of this.table.querySelectorAll('tbody tr')) {
      const t = /** @type {HTMLElement} */ (tr)
      const on = part ? t.dataset.part === name : t.dataset.part === undefined && t.dataset.name === name
      tr.setAttribute('aria-selected', String(on))
    }
  }

  /** Puts the keyboard focus on the current (or first) row. */
  focus() {
    const row = /** @type {HTMLElement | null} */ (this.table.querySelector('tbody tr[tabindex="0"]'))
    row?.focus()
  }

  #draw() {
    const mask = this.mask
    /** @type {Row[]} */
    const shown = []
    let matches = 0
    for (const r of this.#inOrder()) {
      if (mask && mask[r.order] !== 1) continue
      matches++
      if (shown.length < MAX_ROWS) shown.push(r)
    }
    const head = el('thead', {}, el('tr', {}, this.columns.map((c) => {
      const active = c.key === this.sort.key
      return el('th', {
        scope: 'col', class: [c.numeric ? 'num' : '', c.className ?? ''].join(' ').trim(),
        'aria-sort': active ? (this.sort.direction > 0 ? 'ascending' : 'descending') : 'none',
      }, el('button', {
        type: 'button', class: 'sort-button', dataset: { key: c.key },
        onclick: () => {
          this.sort = { key: c.key, direction: active ? -this.sort.direction : 1 }
          this.#draw()
        },
      }, c.label, el('span', { class: 'sort-mark', 'aria-hidden': 'true', text: active ? (this.sort.direction > 0 ? '▲' : '▼') : '' })))
    })))
    const focusName = this.selected !== null && !this.selectedPart && shown.some((r) => r.name === this.selected) ? this.selected : shown[0]?.name
    const body = el('tbody', {}, shown.flatMap((r) => {
      const tr = el('tr', {
        dataset: { name: r.name },
        tabindex: r.name === focusName ? '0' : '-1',
        'aria-selected': String(!this.selectedPart && r.name === this.selected),
        'aria-expanded': r.quant ? String(this.expanded.has(r.name)) : undefined,
        class: r.quant ? 'quant-row' : undefined,
      }, this.columns.map((c) => el('td', { class: [c.numeric ? 'num' : '', c.className ?? ''].join(' ').trim() }, this.#cell(c, r))))
      return r.quant && this.expanded.has(r.name) ? [tr, ...r.quant.parts.map((p) => this.#partRow(p))] : [tr]
    }))
    this.table.setAttribute('aria-rowcount', String(matches + 1))
    this.table.replaceChildren(head, body)
    this.note.hidden = matches <= MAX_ROWS
    this.note.textContent = `Showing the first ${formatCount(MAX_ROWS)} of ${formatCount(matches)} tensors: filter to narrow them down.`
  }

  /** A cell of a row: a quantized weight's name has its fold button, its dtype is its scheme's badge. @param {Column} c @param {Row} r */
  #cell(c, r) {
    if (r.quant && c.key === 'name') {
      const open = this.expanded.has(r.name)
      const n = r.quant.parts.length
      return [el('button', {
        type: 'button', class: 'fold-toggle', tabindex: '-1', 'aria-expanded': String(open),
        'aria-label': `${open ? 'Hide' : 'Show'} the ${n} stored ${n === 1 ? 'part' : 'parts'} of ${escapeInvisible(r.name)}`,
        text: open ? '▾' : '▸',
      }), breakable(r.name)]
    }
    if (r.quant && c.key === 'dtype') return [schemeBadge(r.quant.scheme)]
    return c.key === 'name' ? [breakable(r.name)] : visible(c.cell(r))
  }

  /** The row of a part, under its weight. @param {Row} p */
  #partRow(p) {
    const on = this.selectedPart && p.name === this.selected
    return el('tr', {
      class: 'part-row', dataset: { part: p.name, partOf: p.partOf ?? '' }, tabindex: '-1', 'aria-selected': String(on),
    }, this.columns.map((c) => el('td', { class: [c.numeric ? 'num' : '', c.className ?? ''].join(' ').trim() },
      c.key === 'name' ? [el('span', { class: 'part-role', text: p.role ?? '' }), breakable(p.name)] : visible(c.cell(p)))))
  }

  /** @param {HTMLElement} tr */
  #focusRow(tr) {
    for (const other of this.table.querySelectorAll('tbody tr[tabindex="0"]')) other.setAttribute('tabindex', '-1')
    tr.setAttribute('tabindex', '0')
    tr.focus()
  }

  /** @param {KeyboardEvent} e */
  #onKey(e) {
    const tr = /** @type {HTMLElement} */ (e.target).closest('tbody tr')
    if (!(tr instanceof HTMLElement)) return
    const rows = /** @type {HTMLElement[]} */ ([...this.table.querySelectorAll('tbody tr')])
    const at = rows.indexOf(tr)
    const moves = /** @type {Record<string, number>} */ ({
      ArrowDown: at + 1, ArrowUp: at - 1, Home: 0, End: rows.length - 1, PageDown: at + 10, PageUp: at - 10,
    })
    if (e.key in moves) {
      e.preventDefault()
      this.#focusRow(rows[Math.max(0, Math.min(rows.length - 1, moves[e.key]))])
    } else if (e.key === 'Enter' || e.key === ' ') {
      e.preventDefault()
      if (tr.dataset.part !== undefined) this.onSelect(tr.dataset.part, true)
      else if (tr.dataset.name !== undefined) this.onSelect(tr.dataset.name)
    } else if ((e.key === 'ArrowRight' || e.key === 'ArrowLeft') && (tr.dataset.partOf || tr.getAttribute('aria-expanded') !== null)) {
      // → unfolds a quantized weight's parts, ← folds them (from a part: back to its weight).
      e.preventDefault()
      const name = tr.dataset.partOf || tr.dataset.name
      if (name) this.#toggle(name, e.key === 'ArrowRight')
    }
  }
}

/** The badge naming a quantized weight's scheme. @param {string} scheme */
export function schemeBadge(scheme) {
  return el('span', { class: 'scheme-badge', title: `quantized: ${scheme}`, text: scheme })
}

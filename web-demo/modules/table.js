/**
 * The tensor table, virtualized so that 500,000 rows scroll as smoothly as 50: every row has one
 * height, a sizer as tall as all of them gives the scroll bar its range, and only the rows in
 * view (and OVERSCAN more on each side) are in the DOM, redrawn as the view moves. Column orders
 * and filters work on arrays of row positions (row-order.js), never on the DOM.
 *
 * Columns sort with a click on their header; rows are selected with the mouse or the keyboard (a
 * grid with one focusable row: arrows, Home/End and Page Up/Down move through every row,
 * scrolling to it; Enter or Space selects). Names are shown with their invisible and
 * bidirectional characters as marked escapes (visible()) and wrap after their dots on up to
 * MAX_LINES lines: the rows are as tall as the longest name needs at the column's width, and a
 * name longer still is cut (whole in its tooltip).
 *
 * A quantized weight is one row (its scheme as a badge, its logical shape) whose parts, the
 * stored tensors it is decoded from, fold under it: the ▸ button (or → and ←) shows and hides
 * them, and each part can be selected like a tensor. A row of a sharded set whose shard header
 * has not arrived yet (`pending`) shows … for what the header gives; sorted by such a column, it
 * comes last.
 */
import { el, visible } from './dom.js'
import { escapeInvisible, formatBytes, formatCount, formatShape } from './format.js'
import { FROM_HEADERS, columnOrder, forgetNameOrder, preparedNameKeys, visibleOrder } from './row-order.js'
import { isScalar, scalarCell } from './scalars.js'

/**
 * @typedef {import('./model.js').Row} Row
 * @typedef {import('./row-order.js').ColumnOrder} ColumnOrder
 * @typedef {{ key: string, label: string, numeric?: boolean, cell: (r: Row) => string, className?: string }} Column
 */

/** Rows drawn above and below those in view: a short scroll shows rows already drawn. */
const OVERSCAN = 12
/** A table of up to this many rows is drawn whole: it is cheap, and find-in-page sees every row. */
const DRAW_ALL = 150
/** Lines a name may take; in a narrow name column (fewer characters a line than NARROW), more. */
const MAX_LINES = 3
const MAX_LINES_NARROW = 5
const NARROW = 24
/** The sizer's height at most: browsers cap an element's height (Firefox near 17.9 million px);
 * past this, the scroll bar's range stands for all the rows, scaled. */
const MAX_SIZER = 10_000_000
/** Shown for what a pending row's shard header would give, once that header could not be read. */
export const UNREADABLE = '?'
/** Shown for what a pending row's shard header has not given yet. */
export const UNKNOWN = '…'

/** @type {Column[]} */
const COLUMNS = [
  { key: 'name', label: 'Name', cell: (r) => r.name, className: 'name' },
  { key: 'dtype', label: 'dtype', cell: (r) => r.dtype, className: 'mono col-dtype' },
  { key: 'shape', label: 'Shape', cell: (r) => formatShape(r.shape), className: 'mono col-shape' },
  { key: 'byteLength', label: 'Size', numeric: true, cell: (r) => formatBytes(r.byteLength), className: 'col-size' },
  { key: 'byteOffset', label: 'Offset', numeric: true, cell: (r) => formatCount(r.byteOffset), className: 'col-offset' },
]
const SHARD_COLUMN = /** @type {Column} */ ({ key: 'shard', label: 'Shard', cell: (r) => shortShard(r.shard ?? ''), className: 'mono col-shard' })

/** model-00001-of-00003.safetensors as 1/3, model-1-of-61.safetensors as 1/61. @param {string} path */
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
  const span = el('span', { class: 'mono name-text' })
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

/**
 * Lines a name takes wrapped after its dots (and anywhere in a part longer than a line), as
 * breakable() lets it wrap, `perLine` characters a line.
 * @param {string} name @param {number} perLine
 */
function linesOf(name, perLine) {
  let lines = 1
  let used = 0
  for (let start = 0; start < name.length;) {
    const dot = name.indexOf('.', start)
    const end = dot === -1 ? name.length : dot + 1
    let length = end - start
    start = end
    if (used + length <= perLine) {
      used += length
      continue
    }
    if (used > 0) {
      lines++
      used = 0
    }
    while (length > perLine) {
      lines++
      length -= perLine
    }
    used = length
  }
  return lines
}

/**
 * The `k` longest names (one pass).
 * @param {Row[]} rows @param {number} k
 */
function longestNames(rows, k) {
  /** @type {string[]} */
  const top = []
  for (const r of rows) {
    if (top.length === k && r.name.length <= top[k - 1].length) continue
    let at = top.length
    while (at > 0 && top[at - 1].length < r.name.length) at--
    top.splice(at, 0, r.name)
    if (top.length > k) top.pop()
  }
  return top
}

/**
 * Characters of a row's shape cell: [4096, 128] is 11; a scalar's is `[] = ` and its value
 * (4 characters while unknown); a pending row has none yet.
 * @param {Row} r @param {{ peek(row: Row): { text: string } | null } | null} scalars
 */
function shapeChars(r, scalars) {
  if (r.pending) return 0
  if (r.shape.length === 0) return r.quant ? 2 : 5 + (scalars?.peek(r)?.text.length ?? 4)
  let n = 2 * r.shape.length
  for (const d of r.shape) {
    for (let x = Number(d); x >= 10; x /= 10) n++
    n++
  }
  return n
}

/** @param {Column} c */
const cellClass = (c) => [c.numeric ? 'num' : '', c.className ?? ''].join(' ').trim()

/**
 * Makes `old` show what `fresh` (drawn anew) shows, keeping every node of `old` whose place and
 * kind are the same: the node under a pressed pointer must stay in the page for the release to
 * make a click on it. Rows hold no listeners of their own (the table delegates), so none is lost.
 * @param {ChildNode} old @param {ChildNode} fresh @returns {ChildNode} the node now in the page
 */
function morph(old, fresh) {
  if (old.nodeName !== fresh.nodeName) {
    old.replaceWith(fresh)
    return fresh
  }
  if (old instanceof CharacterData) {
    if (old.data !== /** @type {CharacterData} */ (fresh).data) old.data = /** @type {CharacterData} */ (fresh).data
    return old
  }
  const o = /** @type {HTMLElement} */ (old)
  const f = /** @type {HTMLElement} */ (fresh)
  for (const { name } of [...o.attributes]) if (!f.hasAttribute(name)) o.removeAttribute(name)
  for (const { name, value } of f.attributes) {
    if (o.getAttribute(name) === value) continue
    // Through the CSSOM: the page's Content-Security-Policy refuses style attributes.
    if (name === 'style') o.style.cssText = f.style.cssText
    else o.setAttribute(name, value)
  }
  const before = [...o.childNodes]
  const after = [...f.childNodes]
  if (before.length !== after.length) o.replaceChildren(...after)
  else before.forEach((child, i) => morph(child, after[i]))
  return o
}

/**
 * Makes `trs` the children of `body`, in order, moving only what must move: a row that stays
 * is never taken out of the page (a press on it would lose its click).
 * @param {HTMLElement} body @param {HTMLElement[]} trs
 */
function placeRows(body, trs) {
  const keep = new Set(trs)
  for (const child of [...body.children]) if (!keep.has(/** @type {HTMLElement} */ (child))) child.remove()
  let next = body.firstElementChild
  for (const tr of trs) {
    if (tr === next) next = next.nextElementSibling
    else body.insertBefore(tr, next)
  }
}

export class TensorTable {
  /** @param {(name: string, part?: boolean) => void} onSelect part: `name` is a quantized weight's part */
  constructor(onSelect) {
    this.onSelect = onSelect
    /** @type {Row[]} every row of the file */
    this.rows = []
    /** @type {Uint32Array} each row's `order`, by position (masks are by order) */
    this.orders = new Uint32Array(0)
    /** @type {Uint8Array | null} 1 at the `order` of each row to show; null: all */
    this.mask = null
    /** @type {Map<string, ColumnOrder>} each column's order once computed */
    this.orderCache = new Map()
    /** @type {Column[]} */
    this.columns = COLUMNS
    this.sort = { key: 'byteOffset', direction: 1 }
    /** @type {string | null} */
    this.selected = null
    /** Whether `selected` names a part of a quantized weight (a part may share its weight's name). */
    this.selectedPart = false
    /** @type {Set<string>} the quantized weights whose parts are shown */
    this.expanded = new Set()
    /** @type {Uint32Array} the rows to show, by position, in display order */
    this.shown = new Uint32Array(0)
    /** @type {Uint32Array} what each display line shows: a row position... */
    this.lineRow = new Uint32Array(0)
    /** @type {Int32Array | null} ...and which of its parts (-1: the row itself); null: no parts shown */
    this.linePart = null
    /** The display line that holds the keyboard focus (tabindex 0). */
    this.focusAt = 0
    /** Lines a name takes, the row height and the header's, in px (measured once drawn). */
    this.lines = 1
    this.rowHeight = 29
    this.headHeight = 33
    /** @type {number | null} */
    this.charWidth = null
    /** @type {Map<number, number>} lines the longest name takes, by characters a line: names
     * stay as they are until new rows are set, while shard headers widen columns many times */
    this.nameLines = new Map()
    /** The display lines drawn: [first, last). */
    this.drawn = { first: 0, last: 0 }
    /** @type {Map<string, HTMLElement>} the drawn rows' elements, by row or part (see #rowElement) */
    this.rowElements = new Map()
    /** Whether the row height is to be measured at the next draw (new rows, lines or width). */
    this.remeasure = true
    /** @type {number | null} the line at the top of the view when the row height changed */
    this.anchor = null
    /** @type {{ get(row: Row): { text: string, full: string } | null, peek(row: Row): { text: string, full: string } | null } | null} scalars' values, where known (scalars.js) */
    this.scalars = null
    /** The shape and dtype columns' widths, in characters of their longest cells so far (--shape-chars, --dtype-chars). */
    this.shapeChars = 0
    this.dtypeChars = 0

    this.table = el('table', { class: 'tensor-table', role: 'grid', 'aria-label': 'Tensors', 'aria-readonly': 'true', tabindex: '-1' })
    this.head = el('thead')
    this.body = el('tbody')
    this.table.append(this.head, this.body)
    this.sizer = el('div', { class: 'table-sizer' }, this.table)
    this.element = el('div', { class: 'table-scroll tensor-table-scroll' }, this.sizer)
    this.wrapper = el('div', {}, this.element)
    this.table.addEventListener('keydown', (e) => this.#onKey(e))
    this.table.addEventListener('focusin', (e) => {
      const tr = /** @type {HTMLElement} */ (e.target).closest?.('tbody tr')
      if (tr instanceof HTMLElement) this.#setFocusAt(this.#lineOf(tr))
    })
    this.table.addEventListener('click', (e) => {
      const target = /** @type {HTMLElement} */ (e.target)
      const tr = target.closest('tbody tr')
      if (!(tr instanceof HTMLElement)) return
      if (target.closest('.fold-toggle') && tr.dataset.name !== undefined) {
        this.#toggle(tr.dataset.name)
        return
      }
      this.#focusLine(this.#lineOf(tr))
      if (tr.dataset.part !== undefined) this.onSelect(tr.dataset.part, true)
      else if (tr.dataset.name !== undefined) this.onSelect(tr.dataset.name)
    })
    let frame = 0
    this.element.addEventListener('scroll', () => {
      if (frame) return
      frame = requestAnimationFrame(() => {
        frame = 0
        this.#draw()
      })
    })
    // Shown, hidden (another tab) or resized: the name column's width sets the row height.
    new ResizeObserver(() => {
      if (this.element.clientWidth === 0) return
      this.remeasure = true
      this.#fitLines()
      this.#draw()
    }).observe(this.element)
  }

  /** @param {Row[]} rows every row of the file @param {boolean} sharded */
  setRows(rows, sharded) {
    this.rows = rows
    // A loop, not Uint32Array.from with a map function: a tenth of the time at 500,000 rows.
    this.orders = new Uint32Array(rows.length)
    for (let i = 0; i < rows.length; i++) this.orders[i] = rows[i].order
    this.orderCache = new Map()
    this.mask = null
    this.expanded = new Set()
    // Nothing shown until filter() or refresh() lays the new rows out.
    this.shown = new Uint32Array(0)
    this.lineRow = this.shown
    this.linePart = null
    this.focusAt = 0
    this.columns = sharded ? [...COLUMNS, SHARD_COLUMN] : COLUMNS
    this.lines = 0
    this.charWidth = null
    this.nameLines = new Map()
    this.remeasure = true
    this.#drawHead()
    this.#fitLines()
    this.shapeChars = 0
    this.dtypeChars = 0
    this.#widenShapes(rows)
  }

  /**
   * Widens the shape and dtype columns (--shape-chars and --dtype-chars, bounded by style.css) to
   * the longest cells among `rows`, up to 24 characters; never narrower until new rows are set.
   * True when either changed.
   * @param {Iterable<Row>} rows
   */
  #widenShapes(rows) {
    let shape = this.shapeChars
    let dtype = this.dtypeChars
    for (const r of rows) {
      shape = Math.max(shape, shapeChars(r, this.scalars))
      // A scheme's badge takes about two characters more than its name.
      dtype = Math.max(dtype, r.quant ? r.quant.scheme.length + 2 : r.dtype.length)
    }
    shape = Math.min(24, Math.max(2, shape))
    dtype = Math.min(24, Math.max(4, dtype))
    if (shape === this.shapeChars && dtype === this.dtypeChars) return false
    this.shapeChars = shape
    this.dtypeChars = dtype
    this.table.style.setProperty('--shape-chars', String(shape))
    this.table.style.setProperty('--dtype-chars', String(dtype))
    return true
  }

  /** The rows (and parts) of the display lines [first, last). @param {number} first @param {number} last */
  * #rowsOf(first, last) {
    for (let at = first; at < last; at++) {
      const line = /** @type {{ row: Row, part: Row | null }} */ (this.#line(at))
      yield line.part ?? line.row
    }
  }

  /** Shows the rows that `mask` keeps, from the top. @param {Uint8Array | null} mask 1 at the `order` of each row to show; null: all */
  filter(mask) {
    this.mask = mask
    this.#layout({ top: true })
  }

  /**
   * The rows' values changed (shard headers arrived): orders by those values are made again,
   * the same filter applied, the view kept where it is.
   * @param {Uint8Array | null} mask the filter's rows now (dtypes may have arrived)
   */
  refresh(mask) {
    this.mask = mask
    for (const key of FROM_HEADERS) this.orderCache.delete(key)
    this.#layout({ top: false })
  }

  /**
   * The order of the current column, computed once per column (timed: `tensor-table:sort`, with
   * whether the names' keys were made beforehand, browser.js #prepareNames).
   */
  #columnOrder() {
    const key = this.columns.some((c) => c.key === this.sort.key) ? this.sort.key : 'byteOffset'
    let order = this.orderCache.get(key)
    if (!order) {
      const start = performance.now()
      const prepared = key === 'name' ? preparedNameKeys(this.rows) !== undefined : undefined
      order = columnOrder(this.rows, key)
      // The order by name is kept until other rows come: its keys are not needed again.
      if (key === 'name') forgetNameOrder(this.rows)
      performance.measure('tensor-table:sort', { start, detail: { key, rows: this.rows.length, prepared } })
      this.orderCache.set(key, order)
    }
    return order
  }

  /**
   * Works out the lines to show (sorted, filtered, parts unfolded) and draws them.
   * @param {{ top: boolean }} options top: scroll back to the first line
   */
  #layout(options) {
    const focused = this.#line(this.focusAt)
    this.shown = visibleOrder(this.#columnOrder(), this.sort.direction, this.mask, this.orders)
    this.#lines()
    if (options.top) {
      this.element.scrollTop = 0
      this.focusAt = 0
    } else {
      // Keep the focus on the same row where it is still shown.
      const at = focused ? this.#find(focused.row.name, focused.part) : -1
      this.focusAt = at >= 0 ? at : Math.min(this.focusAt, Math.max(0, this.lineRow.length - 1))
    }
    this.table.setAttribute('aria-rowcount', String(this.lineRow.length + 1))
    this.#draw()
  }

  /** The display lines: the shown rows, and the parts of each unfolded weight under it. */
  #lines() {
    if (this.expanded.size === 0) {
      this.lineRow = this.shown
      this.linePart = null
      return
    }
    let count = this.shown.length
    for (const i of this.shown) if (this.rows[i].quant && this.expanded.has(this.rows[i].name)) count += this.rows[i].quant?.parts.length ?? 0
    this.lineRow = new Uint32Array(count)
    this.linePart = new Int32Array(count)
    let at = 0
    for (const i of this.shown) {
      const r = this.rows[i]
      this.lineRow[at] = i
      this.linePart[at++] = -1
      if (r.quant && this.expanded.has(r.name)) {
        for (let p = 0; p < r.quant.parts.length; p++) {
          this.lineRow[at] = i
          this.linePart[at++] = p
        }
      }
    }
  }

  /** @param {number} at a display line @returns {{ row: Row, part: Row | null } | null} */
  #line(at) {
    if (at < 0 || at >= this.lineRow.length) return null
    const row = this.rows[this.lineRow[at]]
    const p = this.linePart ? this.linePart[at] : -1
    return { row, part: p >= 0 ? row.quant?.parts[p] ?? null : null }
  }

  /**
   * The display line of a row, or of a part (by its stored name), or -1.
   * @param {string} name @param {Row | boolean | null} part a part (or true: `name` is a part's)
   */
  #find(name, part) {
    for (let at = 0; at < this.lineRow.length; at++) {
      const line = /** @type {{ row: Row, part: Row | null }} */ (this.#line(at))
      if (part ? line.part?.name === name : line.part === null && line.row.name === name) return at
    }
    return -1
  }

  /**
   * Sets the name lines from the name column's width and the longest name; false when that
   * changes nothing (or the table is not shown).
   */
  #fitLines() {
    const th = /** @type {HTMLElement | null} */ (this.head.querySelector('th.name'))
    // A drawn name cell's width is the room exactly (the cells' padding depends on the screen).
    const cell = /** @type {HTMLElement | null} */ (this.body.querySelector('tr:not(.part-row) .name-cell'))
    const width = cell?.clientWidth || (th?.clientWidth ?? 0) - 20
    if (width <= 0) return false
    if (this.charWidth === null) {
      // The average advance of the longest names' own characters: the fallback monospace font
      // need not give `_` and `x` the same width.
      const sample = longestNames(this.rows, 16).join('')
      const probe = el('span', { class: 'mono', text: sample || 'x' })
      probe.style.position = 'absolute'
      probe.style.visibility = 'hidden'
      probe.style.whiteSpace = 'pre'
      this.table.append(probe)
      this.charWidth = probe.getBoundingClientRect().width / Math.max(1, sample.length) || 8
      probe.remove()
    }
    // A character to spare: text measures in fractions of a pixel.
    const perLine = Math.max(4, Math.floor(width / this.charWidth) - 1)
    const most = perLine < NARROW ? MAX_LINES_NARROW : MAX_LINES
    let lines = this.nameLines.get(perLine)
    if (lines === undefined) {
      lines = 1
      for (let i = 0; i < this.rows.length && lines < most; i++) {
        const r = this.rows[i]
        // The fold button takes about two characters' room before a quantized weight's name.
        const room = perLine - (r.quant ? 2 : 0)
        if (r.name.length > room) lines = Math.max(lines, linesOf(r.name, room))
      }
      lines = Math.min(most, lines)
      this.nameLines.set(perLine, lines)
    }
    if (lines === this.lines) return false
    this.lines = lines
    this.remeasure = true
    this.table.style.setProperty('--lines', String(lines))
    return true
  }

  /** Draws the header: a sort button per column, the current one marked. */
  #drawHead() {
    this.head.replaceChildren(el('tr', { 'aria-rowindex': '1' }, this.columns.map((c) => {
      const active = c.key === this.sort.key
      return el('th', {
        scope: 'col', class: cellClass(c),
        'aria-sort': active ? (this.sort.direction > 0 ? 'ascending' : 'descending') : 'none',
      }, el('button', {
        type: 'button', class: 'sort-button', dataset: { key: c.key },
        onclick: () => this.#sortBy(c.key),
      }, c.label, el('span', { class: 'sort-mark', 'aria-hidden': 'true', text: active ? (this.sort.direction > 0 ? '▲' : '▼') : '' })))
    })))
  }

  /** Sorts by a column (again: the other way), from the top. @param {string} key */
  #sortBy(key) {
    this.sort = { key, direction: key === this.sort.key ? -this.sort.direction : 1 }
    this.#drawHead()
    this.#layout({ top: true })
  }

  /**
   * Where the view is: the height of all the rows, the offset of the view into them (scaled when
   * the sizer is capped), and the view's height below the header.
   */
  #geometry() {
    const rowsHeight = this.lineRow.length * this.rowHeight
    const view = Math.max(this.rowHeight, this.element.clientHeight - this.headHeight)
    const sizer = Math.min(rowsHeight, MAX_SIZER)
    const top = this.element.scrollTop
    const scale = rowsHeight > sizer && sizer > view ? (rowsHeight - view) / (sizer - view) : 1
    return { rowsHeight, sizer, view, top, offset: Math.min(top * scale, Math.max(0, rowsHeight - view)), scale }
  }

  /** Draws the lines in view (all of them for a small table), keeping the focus if it was in the table. */
  #draw() {
    const count = this.lineRow.length
    let g = this.#geometry()
    this.sizer.style.height = `${this.headHeight + g.sizer}px`
    if (this.anchor !== null) {
      // The row height changed: the line at the top of the view stays there.
      this.element.scrollTop = (this.anchor * this.rowHeight) / g.scale
      this.anchor = null
      g = this.#geometry()
    }
    let first = 0
    let last = count
    if (count > DRAW_ALL) {
      first = Math.max(0, Math.floor(g.offset / this.rowHeight) - OVERSCAN)
      last = Math.min(count, Math.ceil((g.offset + g.view) / this.rowHeight) + OVERSCAN)
    }
    // Rows sit where they would in the full list: the table moves with the view.
    this.table.style.top = `${g.top + first * this.rowHeight - g.offset}px`
    const active = document.activeElement
    const hadFocus = active instanceof HTMLElement && this.table.contains(active)
    const focusable = this.focusAt >= first && this.focusAt < last ? this.focusAt : first
    /** @type {HTMLElement[]} */
    const trs = []
    const previous = this.rowElements
    this.rowElements = new Map()
    for (let at = first; at < last; at++) trs.push(this.#rowElement(at, at === focusable, previous))
    placeRows(this.body, trs)
    this.drawn = { first, last }
    // Shapes (and scalars' values) arrive after the rows: the ones drawn may widen the column.
    if (this.#widenShapes(this.#rowsOf(first, last))) this.#fitLines()
    if (this.#measure()) {
      this.#draw()
      return
    }
    if (hadFocus) {
      const tr = this.#rowAt(this.focusAt)
      ;(tr ?? this.table).focus({ preventScroll: true })
    }
  }

  /** Takes the row and header heights as drawn, when asked to; true when they changed (draw again). */
  #measure() {
    const tr = this.body.firstElementChild
    const th = this.head.firstElementChild
    if (!this.remeasure || !tr || !th) return false
    const row = tr.getBoundingClientRect().height
    const head = th.getBoundingClientRect().height
    if (row <= 0) return false  // not shown: measured once it is
    this.remeasure = false
    if (Math.abs(row - this.rowHeight) < 0.5 && Math.abs(head - this.headHeight) < 0.5) return false
    this.anchor = this.#geometry().offset / this.rowHeight
    this.rowHeight = row
    this.headHeight = head
    this.element.style.scrollPaddingTop = `${head}px`
    return true
  }

  /**
   * A display line's row, drawn anew into the element that showed the same row or part the last
   * time, if any: a row under a pressed pointer stays in the page, so the release makes a click
   * on it (a removed element would make it a click on the table body).
   * @param {number} at a display line @param {boolean} focusable
   * @param {Map<string, HTMLElement>} previous the last draw's elements, by row (taken once)
   */
  #rowElement(at, focusable, previous) {
    const line = /** @type {{ row: Row, part: Row | null }} */ (this.#line(at))
    const fresh = this.#rowContent(at, line, focusable)
    const key = line.part ? `part:${line.part.name}` : `row:${line.row.name}`
    const old = previous.get(key)
    previous.delete(key)
    const tr = old ? /** @type {HTMLElement} */ (morph(old, fresh)) : fresh
    this.rowElements.set(key, tr)
    return tr
  }

  /** @param {number} at @param {{ row: Row, part: Row | null }} line @param {boolean} focusable */
  #rowContent(at, { row: r, part: p }, focusable) {
    const rowIndex = String(at + 2)
    if (p) {
      const on = this.selectedPart && p.name === this.selected
      return el('tr', {
        class: 'part-row', dataset: { part: p.name, partOf: p.partOf ?? '' }, tabindex: focusable ? '0' : '-1',
        'aria-selected': String(on), 'aria-rowindex': rowIndex,
      }, this.columns.map((c) => el('td', { class: cellClass(c) },
        c.key === 'name' ? el('div', { class: 'name-cell', title: escapeInvisible(p.name) }, el('span', { class: 'part-role', text: p.role ?? '' }), breakable(p.name))
          : this.#value(c, p))))
    }
    return el('tr', {
      dataset: { name: r.name },
      tabindex: focusable ? '0' : '-1',
      'aria-selected': String(!this.selectedPart && r.name === this.selected),
      'aria-expanded': r.quant ? String(this.expanded.has(r.name)) : undefined,
      'aria-rowindex': rowIndex,
      class: [r.quant ? 'quant-row' : '', r.pending ? 'pending-row' : ''].join(' ').trim() || undefined,
    }, this.columns.map((c) => el('td', { class: cellClass(c) }, this.#cell(c, r))))
  }

  /** A cell of a row: a quantized weight's name has its fold button, its dtype is its scheme's badge. @param {Column} c @param {Row} r */
  #cell(c, r) {
    if (c.key === 'name') {
      const cell = el('div', { class: 'name-cell', title: escapeInvisible(r.name) })
      if (r.quant) {
        const open = this.expanded.has(r.name)
        const n = r.quant.parts.length
        cell.append(el('button', {
          type: 'button', class: 'fold-toggle', tabindex: '-1', 'aria-expanded': String(open),
          'aria-label': `${open ? 'Hide' : 'Show'} the ${n} stored ${n === 1 ? 'part' : 'parts'} of ${escapeInvisible(r.name)}`,
          text: open ? '▾' : '▸',
        }))
      }
      cell.append(breakable(r.name))
      return [cell]
    }
    if (r.quant && c.key === 'dtype') return [schemeBadge(r.quant.scheme)]
    return this.#value(c, r)
  }

  /** A value cell: … while the row's shard header is pending, ? when it could not be read, – when
   * its shard lacks it. @param {Column} c @param {Row} r */
  #value(c, r) {
    if ((r.pending || r.missing) && c.key !== 'shard') {
      return [el('span', {
        class: r.missing ? 'missing' : 'unknown', text: r.missing ? '–' : r.unreadable ? UNREADABLE : UNKNOWN,
        title: r.missing ? 'The index names this tensor, but its shard’s header does not hold it'
          : r.unreadable ? 'Its shard’s header could not be read (see the error above)' : 'Its shard’s header is not read yet',
      })]
    }
    if (c.key === 'shape' && this.scalars && isScalar(r)) return scalarCell(this.scalars.get(r))
    const text = c.cell(r)
    return c.key === 'shape' ? [el('span', { title: text }, ...visible(text))] : visible(text)
  }

  /** @param {HTMLElement} tr @returns {number} its display line */
  #lineOf(tr) {
    return Number(tr.getAttribute('aria-rowindex')) - 2
  }

  /** @param {number} at @returns {HTMLElement | null} the drawn row of a display line */
  #rowAt(at) {
    if (at < this.drawn.first || at >= this.drawn.last) return null
    return /** @type {HTMLElement | null} */ (this.body.children[at - this.drawn.first] ?? null)
  }

  /** Makes `at` the focusable line. @param {number} at */
  #setFocusAt(at) {
    if (at === this.focusAt && this.#rowAt(at)?.getAttribute('tabindex') === '0') return
    this.focusAt = at
    for (const other of this.body.querySelectorAll('tr[tabindex="0"]')) other.setAttribute('tabindex', '-1')
    this.#rowAt(at)?.setAttribute('tabindex', '0')
  }

  /**
   * Moves the focus to a display line: scrolls it into view, drawn, and focuses it.
   * @param {number} at
   */
  #focusLine(at) {
    const count = this.lineRow.length
    if (count === 0) return
    at = Math.max(0, Math.min(count - 1, at))
    const g = this.#geometry()
    const y = at * this.rowHeight
    let offset = g.offset
    if (y < offset) offset = y
    else if (y + this.rowHeight > offset + g.view) offset = y + this.rowHeight - g.view
    if (offset !== g.offset) this.element.scrollTop = offset / g.scale
    this.focusAt = at
    this.#draw()
    const tr = this.#rowAt(at)
    if (!tr) return
    tr.focus({ preventScroll: true })
    // The page itself may need to scroll too (the table below the fold).
    tr.scrollIntoView({ block: 'nearest' })
  }

  /** Shows or hides a quantized weight's parts. @param {string} name @param {boolean} [open] */
  #toggle(name, open = !this.expanded.has(name)) {
    if (open === this.expanded.has(name)) return
    if (open) this.expanded.add(name)
    else this.expanded.delete(name)
    this.#lines()
    this.table.setAttribute('aria-rowcount', String(this.lineRow.length + 1))
    const at = this.#find(name, null)
    if (at >= 0) this.#focusLine(at)
    else this.#draw()
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
      this.#lines()
      this.table.setAttribute('aria-rowcount', String(this.lineRow.length + 1))
    }
    this.#draw()
  }

  /** Draws the rows in view again (a scalar's value arrived: the shape column may widen). */
  redraw() {
    this.#draw()
  }

  /** Puts the keyboard focus on the current (or first) row. */
  focus() {
    if (this.lineRow.length > 0) this.#focusLine(this.focusAt)
  }

  /** @param {KeyboardEvent} e */
  #onKey(e) {
    const target = /** @type {HTMLElement} */ (e.target)
    const tr = target.closest('tbody tr')
    if (target !== this.table && !(tr instanceof HTMLElement)) return
    const at = tr instanceof HTMLElement ? this.#lineOf(tr) : this.focusAt
    const page = Math.max(1, Math.floor(this.#geometry().view / this.rowHeight) - 1)
    const moves = /** @type {Record<string, number>} */ ({
      ArrowDown: at + 1, ArrowUp: at - 1, Home: 0, End: this.lineRow.length - 1, PageDown: at + page, PageUp: at - page,
    })
    const line = this.#line(at)
    if (e.key in moves) {
      e.preventDefault()
      this.#focusLine(moves[e.key])
    } else if (!line) {
      // Nothing to select or fold.
    } else if (e.key === 'Enter' || e.key === ' ') {
      e.preventDefault()
      if (line.part) this.onSelect(line.part.name, true)
      else this.onSelect(line.row.name)
    } else if ((e.key === 'ArrowRight' || e.key === 'ArrowLeft') && line.row.quant) {
      // → unfolds a quantized weight's parts, ← folds them (from a part: back to its weight).
      e.preventDefault()
      this.#toggle(line.row.name, e.key === 'ArrowRight')
    }
  }
}

/** The badge naming a quantized weight's scheme. @param {string} scheme */
export function schemeBadge(scheme) {
  return el('span', { class: 'scheme-badge', title: `quantized: ${scheme}`, text: scheme })
}

/**
 * Scalars (shape []): one value each, shown in the table's shape column and as the tensor view's
 * whole result (no statistics, histogram, heatmap or slice box for one value).
 *
 * The table reads a scalar's value only when that costs no download: from a local file (a read
 * of a few bytes), or from a URL when its bytes lie in the first window the header came with
 * (kept in memory by the library). Any other scalar's value shows once it has been selected: a
 * checkpoint with a scale per layer, far apart, must not cost a request per row just to be listed.
 */
import { INITIAL_FETCH_SIZE } from '../../js/io/http.js'
import { el } from './dom.js'
import { isInteger, valueText } from './values.js'

/**
 * @typedef {import('./model.js').Row} Row
 * @typedef {import('./model.js').Model} Model
 * @typedef {{ text: string, full: string }} Value
 */

/** A stored tensor of one value (a pending row of a sharded set has shape [] too, and is none). @param {Row} row */
export function isScalar(row) {
  return row.shape.length === 0 && !row.quant && !row.pending && !row.missing
}

/**
 * The text of a tensor of one value, as the values table shows values (integers exact).
 * @param {import('../../js/index.js').Tensor} t @returns {Value}
 */
export function scalarValue(t) {
  const decodable = !t.dtype.startsWith('F6')
  return valueText(/** @type {any} */ ({
    dtype: t.dtype,
    exact: isInteger(t.dtype) ? t.copy() : null,
    floats: decodable ? t.toFloat32() : null,
    raw: decodable ? null : t.bytes.slice(0, 1),
  }), 0)
}

/**
 * The table's shape cell of a scalar: [] and its value, when known.
 * @param {Value | null} value @returns {HTMLElement[]}
 */
export function scalarCell(value) {
  return [el('span', { class: 'scalar-cell', title: value ? `one value: ${value.full}` : 'one value: select the tensor to read it' },
    '[]', value ? el('span', { class: 'scalar-cell-value', text: ` = ${value.text}` }) : null)]
}

/** The tensor view's result for a scalar: its one value, large. @param {Value} value */
export function scalarFigure(value) {
  return el('div', { class: 'scalar-view' },
    el('span', { class: 'scalar-label', text: 'Value' }),
    el('output', { class: 'scalar-value mono', title: value.full, text: value.text }))
}

/** How many scalar reads run at once: they are a few bytes each. */
const BATCH = 16

export class ScalarValues {
  /** @param {() => void} onChange called (at most once a frame) when values arrive */
  constructor(onChange) {
    this.onChange = onChange
    /** @type {Model | null} */
    this.model = null
    /** @type {Map<string, Value>} */
    this.values = new Map()
    /** @type {Set<string>} asked for (read, being read, or failed): never read twice */
    this.asked = new Set()
    /** @type {Row[]} */
    this.queue = []
    this.running = false
    this.frame = 0
  }

  /** @param {Model | null} model */
  setModel(model) {
    this.model = model
    this.values = new Map()
    this.asked = new Set()
    this.queue = []
  }

  /**
   * The value of a scalar row if known; else null, and a read is queued when it costs no download.
   * @param {Row} row @returns {Value | null}
   */
  get(row) {
    const known = this.values.get(row.name)
    if (known || !this.model || this.asked.has(row.name) || !this.#inHand(row)) return known ?? null
    this.asked.add(row.name)
    this.queue.push(row)
    if (!this.running) this.#drain(this.model)
    return null
  }

  /** The value of a scalar row if known, without reading it. @param {Row} row @returns {Value | null} */
  peek(row) {
    return this.values.get(row.name) ?? null
  }

  /** A value read elsewhere (the tensor view). @param {string} name @param {Value} value */
  remember(name, value) {
    if (this.values.get(name)?.full === value.full) return
    this.values.set(name, value)
    this.asked.add(name)
    this.#changed()
  }

  /** Whether reading the row costs no request. @param {Row} row */
  #inHand(row) {
    const m = /** @type {Model} */ (this.model)
    if (m.source === 'local') return true
    // A single file's first window; a sharded set's shards may have let theirs go.
    return m.kind === 'file' && row.byteOffset + row.byteLength <= INITIAL_FETCH_SIZE
  }

  /** Reads the queued scalars, BATCH at a time, for as long as `model` is open. @param {Model} model */
  async #drain(model) {
    this.running = true
    try {
      while (this.queue.length > 0 && this.model === model) {
        const batch = this.queue.splice(0, BATCH)
        await Promise.all(batch.map(async (row) => {
          try {
            const t = await model.file.tensor(row.name)
            try {
              if (this.model === model) this.values.set(row.name, scalarValue(t))
            } finally {
              t.dispose()
            }
          } catch {
            // Left unknown: selecting the tensor reads it again and says what went wrong.
          }
        }))
        if (this.model === model) this.#changed()
      }
    } finally {
      this.running = false
      if (this.model !== model && this.model && this.queue.length > 0) this.#drain(this.model)
    }
  }

  #changed() {
    if (this.frame) return
    this.frame = requestAnimationFrame(() => {
      this.frame = 0
      this.onChange()
    })
  }
}

/**
 * The selected tensor (or the slice of it typed in the box): its statistics, a histogram, a
 * heatmap of a 2-D plane with its colour scale, and its first values. Only its bytes are
 * fetched, and the wasm memory is freed as soon as the values are copied out.
 *
 * Up to LARGE_TENSOR bytes the selection is read whole. Past that it never is: the heatmap and
 * values show a leading block of it (read alone), and the statistics and histogram cover all of
 * it, streamed chunk by chunk through a bounded heap (f.stats, with progress and Cancel).
 *
 * A quantized weight shows the same of its dequantized values (f.dequantize(), float32, logical
 * shape); a large one's heatmap and values, its leading rows only (dequantize's `slice`, which
 * reads only the stored rows and scale rows those need where the layout allows), and its
 * statistics, f.stats of the weight: dequantized a few rows at a time.
 */
import { SafetensorsError } from '../../js/index.js'
import { colourScale, drawHeatmap, drawHistogram, drawLegend } from './charts.js'
import { el, visible, wrappable } from './dom.js'
import { copyNameButton, exportBar } from './export-bar.js'
import { elementCount, escapeInvisible, formatBytes, formatCount, formatPercent, formatShape, formatValue } from './format.js'
import { schemeBadge } from './table.js'
import { isScalar, scalarFigure } from './scalars.js'
import { DTYPE_BITS } from '../../js/dtypes.js'
import { LARGE_TENSOR, isInteger, planeOf, planeOffset, plainSelection, quantSelection, quantSlice, valueText } from './values.js'

/**
 * @typedef {import('./model.js').Row} Row
 * @typedef {import('./model.js').Model} Model
 * @typedef {import('../../js/index.js').Stats} Stats
 * @typedef {{ row: Row, spec: string, dtype: string, shape: number[], byteLength: number, stats: Stats | null,
 *   floats: Float32Array | null, exact: ArrayLike<number | bigint> | null, raw: Uint8Array | null,
 *   selection: { shape: number[], byteLength: number }, preview: string | null,
 *   streamed: 'no' | 'running' | 'stopped' | 'done' }} Loaded
 *   shape, byteLength, floats, exact, raw: of the values read (the selection, or its leading
 *   block `preview` when it is large); stats: of the whole selection (streamed when it is large:
 *   null until `streamed` is 'done')
 */

const BINS = 64
const TABLE_ROWS = 8
const TABLE_COLS = 8
const FLAT_VALUES = 64

export class TensorView {
  /** @type {Loaded | null} */
  #loaded = null
  /** @type {number[]} plane index for tensors of rank > 2 */
  #planeIndex = []
  #logScale = false
  /** Counts loads, so that a load overtaken by a newer one drops its result. */
  #loads = 0

  /**
   * @param {HTMLElement} section
   * @param {import('./task.js').Tasks} tasks
   * @param {(row: Row | null) => void} onShown called when a tensor is shown (null: cleared)
   */
  constructor(section, tasks, onShown) {
    this.section = section
    this.tasks = tasks
    this.onShown = onShown
    /** @type {Model | null} */
    this.model = null
    /** @type {Row | null} */
    this.row = null
    this.resizeObserver = new ResizeObserver(() => this.#redrawCharts())
    /** Called with a scalar's value once read (the table shows it too). @type {((row: Row, value: { text: string, full: string }) => void) | null} */
    this.onScalar = null
    /** Called as a slice (or the whole tensor, '') of the shown tensor starts loading. @type {((row: Row, spec: string) => void) | null} */
    this.onSlice = null
  }

  /** @param {Model | null} model */
  setModel(model) {
    this.model = model
    this.clear()
  }

  clear() {
    this.row = null
    this.#loaded = null
    this.#loads++
    this.resizeObserver.disconnect()
    this.section.replaceChildren(el('div', { class: 'placeholder' },
      el('h2', { id: 'tensor-title', text: 'No tensor selected' }),
      el('p', { class: 'muted', text: 'Pick a tensor in the table or the tree (arrow keys and Enter work too). Only its bytes are fetched.' })))
  }

  /**
   * Shows a tensor and fetches it (a leading block of it when it is large), or the slice `spec` of it.
   * @param {Row} row @param {string} [spec]
   */
  async show(row, spec = '') {
    this.row = row
    this.#loaded = null
    this.#planeIndex = []
    const head = this.#header(row)
    head.querySelector('.tensor-name')?.after(copyNameButton(row.name))
    this.section.replaceChildren(head, this.#sliceForm(row, spec), el('div', { class: 'result', 'aria-busy': 'true' }))
    // One value: nothing to slice.
    if (isScalar(row)) this.section.querySelector('.slice-form')?.remove()
    this.onShown(row)
    await this.load(spec)
  }

  /**
   * Shows the slice `rawSpec` of the shown tensor ('' for all of it): reads it whole up to
   * LARGE_TENSOR bytes; past that, reads its leading block for the heatmap and values, then
   * streams its statistics.
   * @param {string} rawSpec
   */
  async load(rawSpec) {
    const row = this.row
    const model = this.model
    if (!row || !model) return
    const spec = rawSpec.trim()
    const load = ++this.#loads
    this.onSlice?.(row, spec)
    const result = /** @type {HTMLElement} */ (this.section.querySelector('.result'))
    result.setAttribute('aria-busy', 'true')
    // Null: a spec this page does not resolve; the library reads it, or says what is wrong.
    const selection = row.quant ? quantSelection(spec, row.shape.map(Number)) : plainSelection(spec, row.shape, DTYPE_BITS[row.dtype] ?? 8)
    const preview = selection?.preview ?? null
    const read = preview ?? spec
    const streamed = preview !== null && !row.dtype.startsWith('F6')
    result.replaceChildren(el('p', { class: 'muted loading', text: read ? `Fetching [${read}] of this tensor…` : 'Fetching this tensor…' }))
    const label = `${row.quant ? 'Dequantizing' : 'Fetching'} ${escapeInvisible(row.name)}${read ? ` [${read}]` : ''}`
    const loaded = await this.tasks.run(label, async (signal, progress) => {
      const options = { signal, onProgress: (/** @type {{ loaded: number, total: number }} */ p) => progress(p.loaded, p.total) }
      const t = row.quant ? await dequantize(model.file, row, read, options)
        : read ? await model.file.slice(row.name, read, options) : await model.file.tensor(row.name, options)
      try {
        return readValues(row, spec, t, { preview, streamed, selection })
      } finally {
        t.dispose()
      }
    })
    if (load !== this.#loads) return  // another tensor or slice was asked for meanwhile
    result.removeAttribute('aria-busy')
    if (!loaded) {
      result.replaceChildren(el('p', { class: 'muted', text: 'Nothing loaded. Edit the slice or press Load to try again.' }))
      return
    }
    this.#loaded = loaded
    this.#renderResult(result, loaded)
    if (streamed) await this.#streamStats(loaded)
  }

  /**
   * The statistics and histogram of a large selection, streamed (f.stats): progress and Cancel
   * in the statistics area and in the status bar; the heatmap and values stay usable meanwhile.
   * @param {Loaded} data
   */
  async #streamStats(data) {
    const model = this.model
    if (!model || this.#loaded !== data) return
    const load = this.#loads
    const row = data.row
    const what = `${formatCount(elementCount(data.selection.shape))} ${row.quant ? 'dequantized values' : 'values'}`
    const text = el('p', { class: 'stream-text', text: `Statistics of all ${what}: streaming…` })
    const bar = /** @type {HTMLProgressElement} */ (el('progress', { class: 'stream-progress', max: 1, 'aria-label': 'Statistics streamed' }))
    bar.removeAttribute('value')
    data.streamed = 'running'
    this.#showStats(el('div', { class: 'stats-stream' }, text,
      el('div', { class: 'input-row' }, bar, el('button', { type: 'button', class: 'stream-cancel', text: 'Cancel', onclick: () => this.tasks.cancel() }))))
    const label = `Computing the statistics of ${escapeInvisible(row.name)}${data.spec ? ` [${data.spec}]` : ''}`
    /** @type {AbortSignal | null} */
    let taskSignal = null
    const stats = await this.tasks.run(label, (signal, progress) => {
      taskSignal = signal
      /** @param {{ loaded: number, total: number }} p */
      const onProgress = (p) => {
        const share = `${p.total > 0 ? Math.floor((100 * p.loaded) / p.total) : 0}%`
        progress(p.loaded, p.total, `${label}: ${share} (all ${formatBytes(data.selection.byteLength)}, streamed)`)
        if (p.total > 0) {
          bar.max = p.total
          bar.value = p.loaded
          text.textContent = `Statistics of all ${what}: ${share} streamed.`
        }
      }
      const range = row.quant ? quantSlice(data.spec, Number(row.shape[0] ?? 0)) : data.spec
      const slice = range && range !== 'invalid' ? { slice: range } : {}
      return model.file.stats(row.name, { bins: BINS, signal, onProgress, ...slice })
    })
    if (load !== this.#loads || this.#loaded !== data) return  // superseded
    if (!stats) {
      data.streamed = 'stopped'
      const cancelled = /** @type {AbortSignal | null} */ (taskSignal)?.aborted ?? false
      this.#showStats(el('div', { class: 'stats-stream stats-stopped' },
        el('p', { class: 'stream-text', text: cancelled ? 'Statistics cancelled: the heatmap and values above are of the leading block only.'
          : 'The statistics could not be computed (see the message above).' }),
        el('button', { type: 'button', class: 'stream-retry', text: 'Compute the statistics', onclick: () => this.#streamStats(data) })))
      return
    }
    data.stats = stats
    data.streamed = 'done'
    this.#showStats(this.#statsGrid(data))
  }

  /** Puts `content` in the statistics area and redraws the histogram. @param {HTMLElement} content */
  #showStats(content) {
    const data = this.#loaded
    const area = this.section.querySelector('.stats-area')
    const histogram = this.section.querySelector('.histogram')
    if (!data || !area || !histogram) return
    area.setAttribute('data-state', data.streamed)
    if (data.streamed === 'running') area.setAttribute('aria-busy', 'true')
    else area.removeAttribute('aria-busy')
    area.replaceChildren(content)
    histogram.replaceWith(this.#histogramFigure(data))
    this.#redrawCharts()
  }

  /** @param {Row} row */
  #header(row) {
    const chip = (/** @type {string} */ label, /** @type {string} */ value) =>
      el('div', { class: 'chip' }, el('dt', { text: label }), el('dd', { class: 'mono', text: value }))
    const where = row.shard ? `${formatCount(row.byteOffset)} in ${escapeInvisible(row.shard)}` : `${formatCount(row.byteOffset)} – ${formatCount(row.byteOffset + row.byteLength)}`
    if (row.quant) {
      const q = row.quant
      const details = Object.entries(q.details).map(([k, v]) => `${k} ${Array.isArray(v) ? `[${v.join(', ')}]` : String(v)}`).join(', ')
      return el('header', { class: 'tensor-head' },
        el('h2', { id: 'tensor-title', class: 'tensor-name mono' }, ...wrappable(row.name)),
        el('dl', { class: 'chips' },
          el('div', { class: 'chip' }, el('dt', { text: 'quantized' }), el('dd', {}, schemeBadge(q.scheme))),
          chip('shape', formatShape(row.shape)),
          chip('parameters', formatCount(row.elements)),
          chip('stored', formatBytes(row.byteLength)),
          details ? chip('details', details) : null),
        el('details', { class: 'quant-parts' },
          el('summary', { text: `Decoded from ${q.parts.length} stored ${q.parts.length === 1 ? 'tensor' : 'tensors'}` }),
          el('table', { class: 'plain-table' },
            el('thead', {}, el('tr', {}, ['role', 'tensor', 'dtype', 'shape', 'size'].map((h, i) => el('th', { scope: 'col', class: i === 4 ? 'num' : '', text: h })))),
            el('tbody', {}, q.parts.map((p) => el('tr', {},
              el('td', { class: 'mono', text: p.role ?? '' }),
              el('td', { class: 'mono' }, ...visible(p.name)),
              el('td', { class: 'mono', text: p.dtype }),
              el('td', { class: 'mono', text: formatShape(p.shape) }),
              el('td', { class: 'num', text: formatBytes(p.byteLength) })))))))
    }
    return el('header', { class: 'tensor-head' },
      el('h2', { id: 'tensor-title', class: 'tensor-name mono' }, ...wrappable(row.name)),
      el('dl', { class: 'chips' },
        chip('dtype', row.dtype),
        chip('shape', formatShape(row.shape)),
        chip('parameters', formatCount(row.elements)),
        chip('size', formatBytes(row.byteLength)),
        chip('bytes', where)))
  }

  /** @param {Row} row @param {string} spec */
  #sliceForm(row, spec) {
    const input = /** @type {HTMLInputElement} */ (el('input', {
      id: 'slice-input', type: 'text', value: spec, spellcheck: 'false', autocomplete: 'off',
      placeholder: row.shape.length ? `all of it, or e.g. ${row.shape.map((_, i) => (i === 0 ? '0:4' : ':')).join(', ')}` : 'a scalar: all of it',
      'aria-describedby': 'slice-help',
    }))
    const large = row.quant ? row.elements * 4 > LARGE_TENSOR : row.byteLength > LARGE_TENSOR
    const help = row.quant
      ? large
        ? `Dequantized, this weight is ${formatBytes(row.elements * 4)} of float32, more than is ever decoded at once: its statistics and histogram are streamed over all of it, a few rows at a time, and the heatmap and values show its leading rows. start:stop over the first dimension narrows all of them.`
        : 'Empty decodes the whole weight. start:stop over the first dimension decodes only those rows (reading only their bytes where the stored layout allows).'
      : large
        ? `This tensor is ${formatBytes(row.byteLength)}, more than is ever read at once: its statistics and histogram are streamed over all of it, chunk by chunk, and the heatmap and values show a leading block. A slice (one index or start:stop per leading dimension) narrows all of them.`
        : 'Empty fetches the whole tensor. One index or start:stop per leading dimension; only those bytes are fetched.'
    return el('form', {
      class: 'slice-form',
      onsubmit: (/** @type {Event} */ e) => {
        e.preventDefault()
        this.#planeIndex = []
        this.load(input.value)
      },
    },
    el('label', { for: 'slice-input', text: 'Slice' }),
    el('div', { class: 'input-row' }, input, el('button', { type: 'submit', text: 'Load' })),
    el('p', { id: 'slice-help', class: `hint${large ? ' hint-large' : ''}`, text: help }))
  }

  /** @param {HTMLElement} result @param {Loaded} data */
  #renderResult(result, data) {
    const s = data.stats
    const shape = data.selection.shape
    const what = data.row.quant
      ? `${data.spec ? `Rows [${data.spec}] of the weight` : 'The whole weight'}, dequantized (${data.row.quant.scheme} to F32), shape ${formatShape(shape)}`
      : data.spec ? `Slice [${data.spec}] of shape ${formatShape(shape)}` : `The whole tensor, shape ${formatShape(shape)}`
    const count = s?.count ?? (data.preview || data.floats ? elementCount(shape) : data.byteLength)
    const parts = [el('p', { class: 'loaded-line' }, `${what}: ${formatCount(count)} ${count === 1 ? 'value' : 'values'}, ${formatBytes(data.selection.byteLength)}.`)]
    if (this.model) parts.push(exportBar({ model: this.model, row: data.row, spec: data.spec, shape, tasks: this.tasks }))
    if (data.preview) {
      parts.push(el('p', { class: 'hint preview-line' },
        `Over ${formatBytes(LARGE_TENSOR)}: the heatmap and values show only its leading ${data.row.quant ? 'rows' : 'block'} [${data.preview}] (shape ${formatShape(data.shape)}); ` +
        (data.streamed === 'no' ? 'its values cannot be summarised.' : 'the statistics and histogram cover all of it, streamed chunk by chunk without reading it whole.')))
    }
    if (isScalar(data.row) && shape.length === 0) {
      // One value: shown as it is, with nothing to summarise or draw.
      const value = valueText(data, 0)
      result.replaceChildren(...parts, scalarFigure(value))
      this.resizeObserver.disconnect()
      this.onScalar?.(data.row, value)
      return
    }
    parts.push(el('div', { class: 'stats-area', 'data-state': data.streamed }, this.#statsGrid(data)))
    parts.push(el('div', { class: 'charts' }, this.#histogramFigure(data), this.#heatmapFigure(data)))
    parts.push(this.#valuesSection(data))
    result.replaceChildren(...parts)
    this.resizeObserver.disconnect()
    this.resizeObserver.observe(result)
    this.#redrawCharts()
  }

  /** The statistics grid (a note instead for values that cannot be summarised). @param {Loaded} data */
  #statsGrid(data) {
    const s = data.stats
    const stat = (/** @type {string} */ label, /** @type {string} */ value, /** @type {string} */ title = value, warn = false) =>
      el('div', { class: `stat${warn ? ' stat-warn' : ''}` }, el('dt', { text: label }), el('dd', { class: 'mono', title, text: value }))
    const parts = []
    if (s) {
      const counted = (/** @type {number} */ n) => `${formatCount(n)}${n ? ` (${formatPercent(n, s.count)})` : ''}`
      parts.push(el('dl', { class: 'stats-grid', 'aria-label': 'Statistics' },
        stat('min', formatValue(s.min), String(s.min)),
        stat('max', formatValue(s.max), String(s.max)),
        stat('mean', formatValue(s.mean), String(s.mean)),
        stat('std', formatValue(s.std), String(s.std)),
        stat('NaN', counted(s.nanCount), undefined, s.nanCount > 0),
        stat('Inf', counted(s.infCount), undefined, s.infCount > 0),
        stat('zeros', counted(s.zeroCount)),
        stat('finite', s.finiteCount === s.count ? 'all' : counted(s.finiteCount))))
      if (data.preview) parts.push(el('p', { class: 'hint stats-scope', text: `Statistics and histogram of all ${formatCount(s.count)} values, streamed.` }))
      if (data.dtype === 'C64') parts.push(el('p', { class: 'hint', text: 'Statistics and histogram cover real and imaginary parts together; the heatmap shows magnitudes.' }))
    } else if (data.streamed === 'no') {
      parts.push(el('p', { class: 'hint', text: `${data.dtype} values are packed bits with no fixed layout yet: showing raw bytes.` }))
    }
    return el('div', {}, ...parts)
  }

  /** @param {Loaded} data */
  #histogramFigure(data) {
    const s = data.stats
    const figure = el('figure', { class: 'histogram' })
    const title = el('figcaption', {}, el('span', { class: 'figure-title', text: 'Histogram' }))
    if (!s || s.finiteCount === 0 || s.histogram.min === s.histogram.max) {
      const text = !s ? (data.streamed === 'running' ? 'Counting all the values: follows the statistics.'
        : data.streamed === 'stopped' ? 'Not counted: the statistics were stopped.' : 'No values to count.') : s.finiteCount === 0 ? 'No finite values.' : `Every finite value is ${formatValue(s.histogram.min)}.`
      figure.append(title, el('p', { class: 'muted chart-empty', text }))
      return figure
    }
    const log = /** @type {HTMLInputElement} */ (el('input', { type: 'checkbox', id: 'histogram-log', checked: this.#logScale }))
    log.addEventListener('change', () => {
      this.#logScale = log.checked
      this.#redrawCharts()
    })
    title.append(el('label', { class: 'toggle', for: 'histogram-log' }, log, ' log scale'))
    const h = s.histogram
    const canvas = el('canvas', { class: 'histogram-canvas', role: 'img', 'aria-label': `Histogram of ${formatCount(s.finiteCount)} finite values from ${formatValue(h.min)} to ${formatValue(h.max)} in ${BINS} bins` })
    const info = el('p', { class: 'chart-info muted', 'aria-live': 'off', text: `${BINS} bins of ${formatValue((h.max - h.min) / BINS)}. Hover for counts.` })
    const zero = h.min < 0 && h.max > 0 ? el('span', { class: 'axis-zero', style: `left: ${(100 * -h.min) / (h.max - h.min)}%`, text: '0' }) : null
    const axis = el('div', { class: 'axis mono' }, el('span', { text: formatValue(h.min) }), zero, el('span', { text: formatValue(h.max) }))
    canvas.addEventListener('mousemove', (e) => {
      const rect = canvas.getBoundingClientRect()
      const bin = Math.min(BINS - 1, Math.max(0, Math.floor(((e.clientX - rect.left) / rect.width) * BINS)))
      const width = (h.max - h.min) / BINS
      info.textContent = `[${formatValue(h.min + bin * width)}, ${formatValue(h.min + (bin + 1) * width)}): ${formatCount(h.counts[bin])} values`
      drawHistogram(/** @type {HTMLCanvasElement} */ (canvas), h, { log: this.#logScale, highlight: bin })
    })
    canvas.addEventListener('mouseleave', () => drawHistogram(/** @type {HTMLCanvasElement} */ (canvas), h, { log: this.#logScale }))
    figure.append(title, canvas, axis, info)
    return figure
  }

  /** @param {Loaded} data */
  #heatmapFigure(data) {
    const figure = el('figure', { class: 'heatmap' })
    const title = el('figcaption', {}, el('span', { class: 'figure-title', text: 'Heatmap' }))
    figure.append(title)
    const shape = data.shape
    if (!data.floats || shape.length < 2) {
      figure.append(el('p', { class: 'muted chart-empty', text: !data.floats ? 'No decoded values to draw.' : 'A heatmap needs at least two dimensions; this has ' + (shape.length === 0 ? 'none (a scalar).' : 'one.') }))
      return figure
    }
    if (shape[shape.length - 1] === 0 || shape[shape.length - 2] === 0 || shape.some((d) => d === 0)) {
      figure.append(el('p', { class: 'muted chart-empty', text: 'This tensor has no values.' }))
      return figure
    }
    if (shape.length > 2) figure.append(this.#planePicker(shape))
    figure.append(
      el('canvas', { class: 'heatmap-canvas', role: 'img', 'aria-label': 'Heatmap' }),
      el('div', { class: 'legend' },
        el('span', { class: 'legend-lo mono' }),
        el('canvas', { class: 'legend-canvas', 'aria-hidden': 'true' }),
        el('span', { class: 'legend-hi mono' })),
      el('p', { class: 'chart-info muted heatmap-info' }))
    return figure
  }

  /** Index inputs for the dimensions before the last two. @param {number[]} shape */
  #planePicker(shape) {
    const lead = shape.slice(0, -2)
    while (this.#planeIndex.length < lead.length) this.#planeIndex.push(0)
    return el('div', { class: 'plane-picker' },
      el('span', { class: 'muted', text: 'Plane ' }),
      el('span', { class: 'mono', text: '[' }),
      lead.map((d, i) => {
        const input = /** @type {HTMLInputElement} */ (el('input', {
          type: 'number', min: 0, max: d - 1, step: 1, value: this.#planeIndex[i], class: 'plane-index',
          'aria-label': `Index of dimension ${i} (0 to ${d - 1})`,
        }))
        input.addEventListener('change', () => {
          const v = Math.max(0, Math.min(d - 1, Math.floor(Number(input.value) || 0)))
          input.value = String(v)
          this.#planeIndex[i] = v
          this.#redrawCharts()
          this.#refreshValues()
        })
        return el('span', { class: 'plane-dim' }, input, el('span', { class: 'mono', text: ',' }))
      }),
      el('span', { class: 'mono', text: ' :, :]' }))
  }

  /** @param {Loaded} data */
  #valuesSection(data) {
    return el('section', { class: 'values', 'aria-labelledby': 'values-title' },
      el('h3', { id: 'values-title', text: 'First values' }),
      el('div', { class: 'table-scroll' }, valuesTable(data, this.#planeIndex)))
  }

  #refreshValues() {
    const data = this.#loaded
    const holder = this.section.querySelector('.values .table-scroll')
    if (data && holder) holder.replaceChildren(valuesTable(data, this.#planeIndex))
  }

  #redrawCharts() {
    const data = this.#loaded
    if (!data) return
    const histogram = /** @type {HTMLCanvasElement | null} */ (this.section.querySelector('.histogram-canvas'))
    if (histogram && data.stats) drawHistogram(histogram, data.stats.histogram, { log: this.#logScale })
    const heatmap = /** @type {HTMLCanvasElement | null} */ (this.section.querySelector('.heatmap-canvas'))
    if (!heatmap || !data.floats) return
    const plane = planeOf(data.floats, data.shape, this.#planeIndex, data.dtype === 'C64')
    if (!plane) return
    const scale = colourScale(plane.values)
    const cells = drawHeatmap(heatmap, plane, scale)
    drawLegend(/** @type {HTMLCanvasElement} */ (this.section.querySelector('.legend-canvas')), scale)
    const lo = /** @type {HTMLElement} */ (this.section.querySelector('.legend-lo'))
    const hi = /** @type {HTMLElement} */ (this.section.querySelector('.legend-hi'))
    lo.textContent = scale.kind === 'constant' ? formatValue(scale.lo) : `${scale.clipped ? '≤ ' : ''}${formatValue(scale.lo)}`
    hi.textContent = scale.kind === 'constant' ? '' : `${scale.clipped ? '≥ ' : ''}${formatValue(scale.hi)}`
    const notes = [`${formatCount(plane.rows)} × ${formatCount(plane.cols)}`]
    if (cells.cellRows > 1 || cells.cellCols > 1) notes.push(`each pixel averages up to ${Math.ceil(cells.cellRows)} × ${Math.ceil(cells.cellCols)} values`)
    if (scale.kind === 'diverging') notes.push('blue negative, red positive')
    if (scale.kind === 'constant') notes.push('every value is the same')
    if (scale.clipped) notes.push('colours clipped at the 0.5th and 99.5th percentiles')
    if (scale.nan) notes.push('black: NaN')
    const info = /** @type {HTMLElement} */ (this.section.querySelector('.heatmap-info'))
    info.textContent = `${notes.join('; ')}.`
    heatmap.setAttribute('aria-label', `Heatmap of a ${plane.rows} by ${plane.cols} plane, colour scale from ${formatValue(scale.lo)} to ${formatValue(scale.hi)}`)
    heatmap.dataset.drawn = 'true'
  }
}

/**
 * Dequantizes a quantized weight, or the leading rows `spec` names.
 * @param {Model['file']} file @param {Row} row @param {string} spec
 * @param {{ signal: AbortSignal, onProgress: (p: { loaded: number, total: number }) => void }} options
 * @returns {Promise<import('../../js/index.js').Tensor>}
 */
function dequantize(file, row, spec, options) {
  const slice = quantSlice(spec, Number(row.shape[0] ?? 0))
  if (slice === 'invalid') {
    throw new SafetensorsError('InvalidSlice', `“${spec}”: a quantized weight is sliced along its first dimension only, ` +
      'as start:stop (e.g. 0:64) or one index', { tensor: row.name })
  }
  const f = /** @type {any} */ (file)
  return f.dequantize(row.name, slice ? { ...options, slice } : options)
}

/**
 * Copies what the page needs out of a tensor (the caller then frees its wasm memory): the
 * selection, or its leading block `preview` (its statistics are then streamed apart).
 * @param {Row} row @param {string} spec @param {import('../../js/index.js').Tensor} t
 * @param {{ preview: string | null, streamed: boolean, selection: { shape: number[], byteLength: number } | null }} of
 * @returns {Loaded}
 */
function readValues(row, spec, t, of) {
  const decodable = !t.dtype.startsWith('F6')
  const shape = t.shape.map(Number)
  return {
    row, spec, dtype: t.dtype, shape, byteLength: t.byteLength,
    stats: decodable && !of.preview ? t.stats({ bins: BINS }) : null,
    floats: decodable ? t.toFloat32() : null,
    exact: isInteger(t.dtype) ? t.copy() : null,
    raw: decodable ? null : t.bytes.slice(0, FLAT_VALUES),
    selection: of.preview && of.selection ? of.selection : { shape, byteLength: t.byteLength },
    preview: of.preview,
    streamed: of.streamed ? 'running' : 'no',
  }
}

/**
 * The first values: a grid of the plane's top-left corner for 2-D and up, else a run of values.
 * @param {Loaded} data @param {number[]} planeIndex
 */
function valuesTable(data, planeIndex) {
  const shape = data.shape
  const count = shape.reduce((a, b) => a * b, 1)
  if (count === 0) return el('p', { class: 'muted', text: 'No values.' })
  const cell = (/** @type {number} */ i) => {
    const v = valueText(data, i)
    return el('td', { class: 'num mono', title: v.full, text: v.text })
  }
  if (shape.length >= 2 && data.floats) {
    const rows = shape[shape.length - 2]
    const cols = shape[shape.length - 1]
    const offset = planeOffset(shape, planeIndex)
    const r = Math.min(rows, TABLE_ROWS)
    const c = Math.min(cols, TABLE_COLS)
    const lead = planeIndex.slice(0, shape.length - 2)
    return el('table', { class: 'values-table', 'aria-label': `Values [${[...lead, `0:${r}`, `0:${c}`].join(', ')}]` },
      el('thead', {}, el('tr', {}, el('th', { scope: 'col', class: 'corner', text: '' }),
        Array.from({ length: c }, (_, j) => el('th', { scope: 'col', class: 'num', text: String(j) })),
        cols > c ? el('th', { scope: 'col', class: 'more', text: `… ${formatCount(cols)}` }) : null)),
      el('tbody', {}, Array.from({ length: r }, (_, i) => el('tr', {},
        el('th', { scope: 'row', class: 'num', text: String(i) }),
        Array.from({ length: c }, (_, j) => cell(offset + i * cols + j)),
        cols > c ? el('td', { class: 'more', text: '…' }) : null)),
      rows > r ? el('tr', {}, el('th', { scope: 'row', class: 'more', text: '⋮' }), el('td', { colspan: c + (cols > c ? 1 : 0), class: 'more', text: `${formatCount(rows - r)} more rows` })) : null))
  }
  const n = Math.min(count, FLAT_VALUES, data.floats || data.exact ? count : (data.raw?.length ?? 0))
  const perRow = 8
  return el('table', { class: 'values-table', 'aria-label': `The first ${n} values` },
    count > n ? el('caption', { class: 'muted', text: `${formatCount(n)} of ${formatCount(count)} values` }) : null,
    el('tbody', {}, Array.from({ length: Math.ceil(n / perRow) }, (_, i) => el('tr', {},
      el('th', { scope: 'row', class: 'num', text: String(i * perRow) }),
      Array.from({ length: Math.min(perRow, n - i * perRow) }, (_, j) => cell(i * perRow + j))))))
}

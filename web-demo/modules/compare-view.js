/**
 * Compare mode: the open checkpoint (A) against a second one (B: a URL, an hf:// address or repo
 * id, or local files), by tensor name, with the library's comparison (js/compare.js, the CLI
 * diff's): the tensors only in A, only in B, with another dtype or shape (no bytes read), the
 * byte-identical ones, and those whose values changed with max and mean |B - A| and
 * ||B - A|| / ||A||. Only the tensors of the same dtype and shape are read, from both sides,
 * piece by piece; B's header is all else that is fetched. It runs beside the tensor view with
 * its own progress bar and Cancel, and is loaded on first use (the reading page does not carry
 * the comparison).
 */
import { el, visible } from './dom.js'
import { formatBytes, formatCount, formatShape, formatValue } from './format.js'
import { fileLink, hubAddress, openLocal, openUrl } from './model.js'
import { describeError } from './errors.js'
import { NetworkMeter } from './network.js'
import { Tasks } from './task.js'
import { SafetensorsError } from '../../js/index.js'

/**
 * @typedef {import('./model.js').Model} Model
 * @typedef {import('../../js/compare.js').CompareResult} CompareResult
 * @typedef {import('../../js/compare.js').Change} Change
 * @typedef {{ access: () => { token?: string, endpoint?: string },
 *   onChange: (source: string | null) => void, onSelect: (name: string) => void }} CompareHooks
 *   access: the token and Hub endpoint for B; onChange: B's address once compared (null: none,
 *   or local files); onSelect: a name clicked
 */

export class CompareView {
  /** @type {Model | null} */
  #a = null
  /** @type {Model | null} */
  #b = null
  /** Counts comparisons, so that one overtaken by a newer one (or by another A) drops its result. */
  #runs = 0

  /** @param {HTMLElement} section @param {CompareHooks} hooks */
  constructor(section, hooks) {
    this.section = section
    this.hooks = hooks
    this.input = /** @type {HTMLInputElement} */ (el('input', {
      id: 'compare-input', type: 'text', inputmode: 'url', spellcheck: 'false', autocomplete: 'off',
      placeholder: 'https://…/model.safetensors, hf://org/model or org/model: the checkpoint to compare with',
      'aria-label': 'The checkpoint to compare with (B)',
    }))
    this.files = /** @type {HTMLInputElement} */ (el('input', {
      id: 'compare-file-input', class: 'visually-hidden', type: 'file', multiple: true,
      accept: '.safetensors,.json,application/octet-stream,application/json',
      onchange: () => {
        const given = Array.from(this.files.files ?? [])
        this.files.value = ''
        if (given.length > 0) this.compareFiles(given)
      },
    }))
    const progress = /** @type {HTMLProgressElement} */ (el('progress', { id: 'compare-progress', max: '1', 'aria-labelledby': 'compare-status-text' }))
    const cancel = /** @type {HTMLButtonElement} */ (el('button', { id: 'compare-cancel', type: 'button', text: 'Cancel' }))
    const text = el('span', { id: 'compare-status-text', class: 'status-text' })
    this.status = el('div', { id: 'compare-status', class: 'status compare-status', role: 'status', 'aria-live': 'polite', hidden: true },
      text, progress, cancel)
    this.message = el('div', { id: 'compare-message', class: 'compare-message', hidden: true })
    this.result = el('div', { id: 'compare-result', class: 'compare-result' })
    // B's downloads, counted apart from the page's panel (which is A's, against A's size).
    const network = el('section', { id: 'compare-network', class: 'network compare-network', 'aria-label': 'Network: checkpoint B', hidden: true })
    this.meter = new NetworkMeter(network)
    this.tasks = new Tasks({ status: this.status, text, progress, cancel,
      notice: (message) => this.#say(message), error: (error) => this.#fail(error) })
    const form = el('form', {
      class: 'compare-form',
      onsubmit: (/** @type {Event} */ e) => {
        e.preventDefault()
        if (this.input.value.trim()) this.compareWith(this.input.value)
      },
    },
    el('div', { class: 'input-row' }, this.input, el('button', { type: 'submit', class: 'primary', text: 'Compare' })),
    el('div', { class: 'compare-local' },
      el('label', { class: 'button file-button', for: 'compare-file-input', text: 'Choose local files…' }), this.files,
      el('span', { class: 'hint', text: 'Only B\'s header and the tensors of the same dtype and shape in both are read, piece by piece.' })))
    section.replaceChildren(
      el('h2', { id: 'compare-title', text: 'Compare with another checkpoint' }),
      form, this.status, this.message,
      el('div', { class: 'compare-network-box' }, el('span', { class: 'compare-network-label', text: 'Checkpoint B' }), network),
      this.result)
    section.setAttribute('aria-labelledby', 'compare-title')
  }

  /**
   * The checkpoint compared from now on (null: none): a comparison under way stops, and its
   * result goes.
   * @param {Model | null} model
   */
  setModel(model) {
    this.#runs++
    this.tasks.cancel()
    this.#a = model
    this.#closeB()
    this.result.replaceChildren()
    this.message.hidden = true
    this.meter.reset('none')
    this.section.hidden = model === null
  }

  /**
   * Compares A with a URL (absolute, or relative to the page) or a Hub address or repo id.
   * @param {string} text
   */
  async compareWith(text) {
    const value = text.trim()
    // A repo id, an hf:// address or a huggingface.co link goes to the Hub (as in the repo
    // field); another http(s) URL, or a path (/, ./, ../: against this page), opens as a URL.
    const hub = /^\.{0,2}\//.test(value) ? null : hubAddress(value)
    let src = hub
    if (!src) {
      try {
        src = new URL(fileLink(value), location.href).href
      } catch {
        this.#fail(new SafetensorsError('UnsupportedSource', `${JSON.stringify(value)} is not a URL or an hf:// address`))
        return
      }
    }
    this.input.value = src
    const address = src
    const { token, endpoint } = this.hooks.access()
    await this.#run(address, address, 'http', (signal) => openUrl(address, hub
      ? { fetch: this.meter.fetch, token, endpoint, signal }
      : { fetch: this.meter.fetch, headers: token ? { Authorization: `Bearer ${token}` } : undefined, signal }))
  }

  /**
   * Compares A with local files: one .safetensors file, or a sharded set's index with its shards.
   * @param {File[]} files
   */
  async compareFiles(files) {
    const index = files.find((file) => file.name.endsWith('.index.json'))
    await this.#run((index ?? files[0]).name, null, 'local', (signal) => openLocal(files, (source) => this.meter.countingSource(source), signal))
  }

  /**
   * Opens B, compares, shows the result.
   * @param {string} label @param {string | null} address B's address for the page's, or null (local)
   * @param {'http' | 'local'} kind @param {(signal: AbortSignal) => Promise<Model>} openB
   */
  async #run(label, address, kind, openB) {
    const a = this.#a
    if (!a) return
    const run = ++this.#runs
    this.#closeB()
    this.message.hidden = true
    this.result.replaceChildren()
    this.result.setAttribute('aria-busy', 'true')
    this.meter.reset(kind)
    // The address names the comparison from its start (a reload while it runs starts it again).
    this.hooks.onChange(address)
    const shown = await this.tasks.run(`Comparing with ${label}`, async (signal, progress) => {
      const b = await openB(signal)
      if (run !== this.#runs) {
        await b.file.close()
        return null
      }
      this.#b = b
      if (!Number.isNaN(b.byteLength)) this.meter.setTotal(b.byteLength)
      progress(0, 1, `Reading the tensor tables of ${a.label} and ${b.label}…`)
      const { compareFiles } = await import('../../js/compare.js')
      const result = await compareFiles(a.file, b.file, {
        signal,
        onProgress: (p) => progress(p.loaded, p.total, `Comparing: ${formatBytes(p.loaded)} of ${formatBytes(p.total)} read from A and B`),
      })
      return { b, result }
    })
    if (run !== this.#runs) return
    this.result.removeAttribute('aria-busy')
    if (!shown) {
      this.hooks.onChange(null)  // failed or cancelled: nothing compared to share
      return
    }
    this.#render(a, shown.b, shown.result)
  }

  #closeB() {
    const b = this.#b
    this.#b = null
    b?.file.close().catch(() => {})
  }

  /** @param {string} message */
  #say(message) {
    this.result.removeAttribute('aria-busy')
    this.message.className = 'compare-message notice'
    this.message.replaceChildren(...visible(message))
    this.message.hidden = false
  }

  /** @param {unknown} error */
  #fail(error) {
    this.result.removeAttribute('aria-busy')
    const d = describeError(error)
    this.message.className = 'compare-message error'
    this.message.replaceChildren(el('p', {}, el('strong', { text: `${d.title}: ` }),
      d.code ? el('code', { class: 'notice-code', text: d.code }) : null, d.code ? ' ' : null, ...visible(d.message)))
    this.message.hidden = false
  }

  /**
   * @param {Model} a @param {Model} b @param {CompareResult} r
   */
  #render(a, b, r) {
    const values = r.changed.filter((c) => c.kind === 'values')
    const layout = r.changed.filter((c) => c.kind !== 'values')
    const inB = new Set(b.file.names)
    const changedNames = new Set(r.changed.map((c) => c.name))
    const identical = a.file.names.filter((name) => inB.has(name) && !changedNames.has(name))
    const same = r.onlyInA.length + r.onlyInB.length + r.changed.length === 0
    /** @type {[string, number, string][]} */
    const counts = [
      ['identical', r.identical, 'identical'],
      ['values', values.length, 'changed values'],
      ['layout', layout.length, 'dtype or shape changed'],
      ['only-a', r.onlyInA.length, 'only in A'],
      ['only-b', r.onlyInB.length, 'only in B'],
    ]
    this.result.replaceChildren(...[
      el('p', { class: 'compare-sides' },
        el('span', { class: 'compare-side' }, el('b', { text: 'A ' }), ...visible(a.label)),
        el('span', { class: 'compare-side' }, el('b', { text: 'B ' }), ...visible(b.label))),
      el('p', { class: `compare-verdict${same ? ' same' : ''}`, text: same
        ? `A and B hold the same ${formatCount(r.identical)} ${r.identical === 1 ? 'tensor' : 'tensors'}, byte for byte.`
        : 'A and B differ.' }),
      el('dl', { class: 'compare-counts' }, counts.map(([kind, n, label]) =>
        el('div', { class: 'compare-count', dataset: { kind, count: String(n) } }, el('dt', { text: label }), el('dd', { text: formatCount(n) })))),
      values.length ? this.#section('Changed values', 'values', values.length, this.#valuesTable(values)) : null,
      layout.length ? this.#section('Dtype or shape changed', 'layout', layout.length, this.#layoutTable(layout)) : null,
      r.onlyInA.length ? this.#section('Only in A', 'only-a', r.onlyInA.length, this.#names(r.onlyInA)) : null,
      r.onlyInB.length ? this.#section('Only in B', 'only-b', r.onlyInB.length, this.#names(r.onlyInB, false)) : null,
      identical.length ? this.#section('Identical', 'identical', identical.length, this.#names(identical), identical.length > 20) : null,
    ].filter((node) => node !== null))
  }

  /**
   * @param {string} title @param {string} kind @param {number} n @param {HTMLElement} body
   * @param {boolean} [closed] folded (a long list of identical tensors)
   */
  #section(title, kind, n, body, closed = false) {
    return el('details', { class: 'compare-list', dataset: { kind }, open: !closed },
      el('summary', {}, `${title} `, el('span', { class: 'muted', text: `(${formatCount(n)})` })), body)
  }

  /** A tensor's name; a button that selects it in A's view when it is in A. @param {string} name @param {boolean} [inA] */
  #name(name, inA = true) {
    return inA
      ? el('button', { type: 'button', class: 'link compare-name', dataset: { name }, title: 'Show it (A)', onclick: () => this.hooks.onSelect(name) }, ...visible(name))
      : el('span', { class: 'compare-name', dataset: { name } }, ...visible(name))
  }

  /** @param {string[]} names @param {boolean} [inA] */
  #names(names, inA = true) {
    return el('ul', { class: 'compare-names' }, names.map((name) => el('li', {}, this.#name(name, inA))))
  }

  /** @param {Change[]} changes */
  #valuesTable(changes) {
    const num = (/** @type {number | null} */ x, /** @type {string} */ none) => (x === null ? none : formatValue(x))
    return el('div', { class: 'table-scroll' }, el('table', { class: 'compare-table compare-values' },
      el('thead', {}, el('tr', {}, ['tensor', 'dtype', 'shape', 'max |Δ|', 'mean |Δ|', '‖Δ‖ / ‖A‖', 'values changed']
        .map((h) => el('th', { scope: 'col', text: h })))),
      el('tbody', {}, changes.map((c) => el('tr', { dataset: { name: c.name } },
        el('td', {}, this.#name(c.name)),
        el('td', { text: c.a.dtype }),
        el('td', { text: formatShape(c.a.shape) }),
        el('td', { class: 'num', dataset: { col: 'max', value: String(c.maxAbsDiff) }, text: num(c.maxAbsDiff, '–') }),
        el('td', { class: 'num', dataset: { col: 'mean', value: String(c.meanAbsDiff) }, text: num(c.meanAbsDiff, '–') }),
        el('td', { class: 'num', dataset: { col: 'relative', value: String(c.relativeChange) }, text: c.relativeChange === null ? (c.changedValues === null ? '–' : '∞ (A is all zeros)') : formatValue(c.relativeChange) }),
        el('td', { class: 'num', dataset: { col: 'changed', value: String(c.changedValues) }, text: changedText(c) }))))))
  }

  /** @param {Change[]} changes */
  #layoutTable(changes) {
    return el('div', { class: 'table-scroll' }, el('table', { class: 'compare-table compare-layout' },
      el('thead', {}, el('tr', {}, ['tensor', 'change', 'A', 'B'].map((h) => el('th', { scope: 'col', text: h })))),
      el('tbody', {}, changes.map((c) => el('tr', { dataset: { name: c.name, kind: c.kind } },
        el('td', {}, this.#name(c.name)),
        el('td', { text: c.kind }),
        el('td', { dataset: { side: 'a' }, text: `${c.a.dtype} ${formatShape(c.a.shape)}` }),
        el('td', { dataset: { side: 'b' }, text: `${c.b.dtype} ${formatShape(c.b.shape)}` }))))))
  }
}

/** How many values changed, in words. @param {Change} c */
function changedText(c) {
  if (c.changedValues === null) return `bytes differ (${c.a.dtype} has no values to compare)`
  if (c.changedValues === 0) return 'none: NaN payloads or the sign of zero'
  const nonFinite = c.nonFiniteChanges ? `, ${formatCount(c.nonFiniteChanges)} NaN or Inf on one side` : ''
  return `${formatCount(c.changedValues)} of ${formatCount(c.values)}${nonFinite}`
}

/**
 * The network panel: what was downloaded (or read, for a local file) against the file's size.
 * Counts come from the transport itself: a `fetch` wrapper handed to open() as options.fetch
 * counts each request and every body byte as it arrives; a ByteSource wrapper counts local reads.
 */
import { el, throttled } from './dom.js'
import { formatBytes, formatCount, formatPercent } from './format.js'

/**
 * @typedef {{ label: string, range: string, status: string, bytes: number, done: boolean }} Entry
 */

const LOG_LIMIT = 200

export class NetworkMeter {
  /** @type {'http' | 'local' | 'none'} */
  kind = 'none'
  requests = 0
  bytes = 0
  /** @type {number | null} the file's size (all shards' for a sharded set), once known */
  total = null
  /** @type {Entry[]} */
  log = []
  /** Bumped by reset: requests of a file opened before do not count any more. */
  generation = 0
  /** Whether the request log is open: its rows are drawn only then (hundreds of shard requests
   * stream at once, and the panel is redrawn every frame while they do). */
  logOpen = false

  /** @param {HTMLElement} element */
  constructor(element) {
    this.element = element
    this.render = throttled(() => this.#draw())
    this.reset('none')
  }

  /**
   * Starts counting for a newly opened source.
   * @param {'http' | 'local' | 'none'} kind
   */
  reset(kind) {
    this.kind = kind
    this.generation++
    this.requests = 0
    this.bytes = 0
    this.total = null
    this.log = []
    this.element.hidden = kind === 'none'
    this.render()
  }

  /** @param {number | null} total */
  setTotal(total) {
    this.total = total
    this.render()
  }

  /**
   * A fetch that counts: pass it as options.fetch. Each body is passed through a counting
   * stream, so cancelling it still cancels the real download.
   * @type {(input: string, init?: RequestInit) => Promise<Response>}
   */
  fetch = async (input, init) => {
    const generation = this.generation
    /** @type {Entry} */
    const entry = {
      label: String(input).split('?')[0].split('/').pop() || String(input),
      range: new Headers(init?.headers).get('range') ?? 'whole file',
      status: '…', bytes: 0, done: false,
    }
    this.#add(entry)
    let response
    try {
      response = await fetch(input, init)
    } catch (error) {
      entry.status = 'failed'
      entry.done = true
      this.render()
      throw error
    }
    entry.status = String(response.status)
    this.render()
    if (!response.body) {
      entry.done = true
      return response
    }
    const counted = response.body.pipeThrough(new TransformStream({
      transform: (chunk, controller) => {
        entry.bytes += chunk.byteLength
        if (generation === this.generation) this.bytes += chunk.byteLength
        this.render()
        controller.enqueue(chunk)
      },
      flush: () => {
        entry.done = true
        this.render()
      },
    }))
    const wrapped = new Response(counted, { status: response.status, statusText: response.statusText, headers: response.headers })
    // A constructed Response has no url: the reader takes `url` as where a redirect (the Hub's
    // /resolve/ to its CDN) ended up and reads from there; without it every read would go
    // through the redirect again.
    Object.defineProperties(wrapped, { url: { value: response.url }, redirected: { value: response.redirected } })
    return wrapped
  }

  /**
   * A byte source that counts its reads (local files).
   * @param {import('../../js/index.js').ByteSource} source
   * @returns {import('../../js/index.js').ByteSource}
   */
  countingSource(source) {
    return {
      byteLength: source.byteLength,
      describe: source.describe,
      defaultMergeGap: source.defaultMergeGap,
      defaultConcurrency: source.defaultConcurrency,
      // Large reads stream in slices (blobSource): each slice is counted as it arrives.
      stream: source.stream && ((offset, length, options) => this.#countStream(/** @type {NonNullable<typeof source.stream>} */ (source.stream), offset, length, options)),
      read: async (offset, length, options) => {
        const generation = this.generation
        /** @type {Entry} */
        const entry = { label: 'read', range: `bytes ${offset}-${offset + length - 1}`, status: '…', bytes: 0, done: false }
        this.#add(entry)
        try {
          const bytes = await source.read(offset, length, options)
          Object.assign(entry, { bytes: bytes.length, status: 'ok', done: true })
          if (generation === this.generation) this.bytes += bytes.length
          return bytes
        } catch (error) {
          Object.assign(entry, { status: 'failed', done: true })
          throw error
        } finally {
          this.render()
        }
      },
      close: () => source.close?.(),
    }
  }

  /**
   * @param {NonNullable<import('../../js/index.js').ByteSource['stream']>} stream
   * @param {number} offset @param {number} length @param {{ signal?: AbortSignal }} [options]
   */
  async* #countStream(stream, offset, length, options) {
    const generation = this.generation
    /** @type {Entry} */
    const entry = { label: 'read', range: `bytes ${offset}-${offset + length - 1}`, status: '…', bytes: 0, done: false }
    this.#add(entry)
    try {
      for await (const chunk of stream(offset, length, options)) {
        entry.bytes += chunk.length
        if (generation === this.generation) this.bytes += chunk.length
        this.render()
        yield chunk
      }
      Object.assign(entry, { status: 'ok', done: true })
    } catch (error) {
      Object.assign(entry, { status: 'failed', done: true })
      throw error
    } finally {
      if (!entry.done) Object.assign(entry, { status: 'cancelled', done: true })
      this.render()
    }
  }

  /** @param {Entry} entry */
  #add(entry) {
    this.requests++
    this.log.push(entry)
    if (this.log.length > LOG_LIMIT) this.log.shift()
    this.render()
  }

  /** The one-line summary, e.g. "1.2 MB of 4.9 GB downloaded (0.02%) in 3 requests". */
  summary() {
    const verb = this.kind === 'local' ? 'read' : 'downloaded'
    const unit = this.kind === 'local' ? 'read' : 'request'
    const of = this.total === null ? '' : ` of ${formatBytes(this.total)}`
    const share = this.total ? ` (${formatPercent(this.bytes, this.total)})` : ''
    return `${formatBytes(this.bytes)}${of} ${verb}${share} in ${formatCount(this.requests)} ${unit}${this.requests === 1 ? '' : 's'}`
  }

  #draw() {
    const e = this.element
    e.dataset.bytes = String(this.bytes)
    e.dataset.requests = String(this.requests)
    e.dataset.total = this.total === null ? '' : String(this.total)
    const fraction = this.total ? Math.min(1, this.bytes / this.total) : 0
    // Rebuilding keeps the markup simple; whether the log is open is kept across.
    const open = this.logOpen
    const log = el('details', { class: 'network-log', open },
      el('summary', { text: `${this.kind === 'local' ? 'Reads' : 'Requests'} (${formatCount(this.requests)})` }),
      open ? this.#table() : null)
    log.addEventListener('toggle', () => {
      if (/** @type {HTMLDetailsElement} */ (log).open === this.logOpen) return
      this.logOpen = /** @type {HTMLDetailsElement} */ (log).open
      this.render()
    })
    e.replaceChildren(
      el('div', { class: 'network-line' },
        el('span', { class: 'network-label', text: this.kind === 'local' ? 'Local reads' : 'Network' }),
        el('span', { class: 'network-summary', text: this.summary() })),
      el('div', { class: 'meter', role: 'img', 'aria-label': `${formatPercent(this.bytes, this.total ?? 0)} of the file fetched` },
        el('span', { class: 'meter-fill', style: `width: ${Math.max(fraction > 0 ? 0.5 : 0, fraction * 100)}%` })),
      log,
    )
  }

  /** The request log, latest first. */
  #table() {
    return el('table', {},
      el('thead', {}, el('tr', {}, el('th', { scope: 'col', text: '#' }), el('th', { scope: 'col', text: 'file' }),
        el('th', { scope: 'col', text: 'range' }), el('th', { scope: 'col', text: 'status' }), el('th', { scope: 'col', class: 'num', text: 'bytes' }))),
      el('tbody', {}, this.log.slice().reverse().map((entry, i) => el('tr', {},
        el('td', { text: String(this.requests - i) }), el('td', { class: 'mono', text: entry.label }),
        el('td', { class: 'mono', text: entry.range }), el('td', { text: entry.status }),
        el('td', { class: 'num', text: formatCount(entry.bytes) })))))
  }
}

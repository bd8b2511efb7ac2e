/**
 * The network panel: what was downloaded (or read, for a local file) against the file's size.
 * Counts come from the transport itself: a `fetch` wrapper handed to open() as options.fetch
 * counts each request and every body byte as it arrives; a ByteSource wrapper counts local reads.
 */
import { el, throttled } from './dom.js'
import { formatBytes, formatCount, formatPercent } from './format.js'

/**
 * @typedef {{ label: string, range: string, status: string, bytes: number, done: boolean }} Entry
 * @typedef {{ header: number, index: number, ahead: number, tensors: number }} Breakdown  bytes
 *   of headers, of whole files (a sharded index), of the data that came after a header in the
 *   same first request, and of tensor reads since
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
  /** Bytes of the requests that start at byte 0 of a file: its first window (header and the data after it). */
  openingBytes = 0
  /** Answers 304: files the library's cache had, validated without a body. */
  validated = 0
  /** Bytes of requests without a range: whole files (a sharded set's index). */
  wholeBytes = 0
  /** Bytes of error answers' bodies (a 404 page): neither headers nor tensors. */
  errorBytes = 0
  /** The open file's header bytes (length prefixes included) read so far; null until known. @type {() => number | null} */
  headerBytes = () => null

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
    this.openingBytes = 0
    this.validated = 0
    this.wholeBytes = 0
    this.errorBytes = 0
    this.headerBytes = () => null
    this.element.hidden = kind === 'none'
    this.render()
  }

  /** @param {number | null} total */
  setTotal(total) {
    this.total = total
    this.render()
  }

  /**
   * Tells the panel how many of the bytes are headers (asked at each redraw: a sharded set's grow
   * as they are read), so that it can say what else came with them.
   * @param {() => number | null} bytes
   */
  setHeaders(bytes) {
    this.headerBytes = bytes
    this.render()
  }

  /**
   * The bytes by what they were for, once the header's size is known. The reader's first request
   * asks for a window from byte 0 before it knows the header's size: what came past the header
   * is `ahead` (the tensors right after it, never asked for). A header longer than the window is
   * read on by a later request, counted here as header, not tensors.
   * @returns {Breakdown | null}
   */
  breakdown() {
    const header = this.headerBytes()
    if (header === null || Number.isNaN(header)) return null
    const ahead = Math.max(0, this.openingBytes - header)
    const tensors = Math.max(0, this.bytes - this.wholeBytes - this.errorBytes - Math.max(this.openingBytes, header))
    return { header: Math.min(header, this.bytes - this.wholeBytes), index: this.wholeBytes, ahead, tensors }
  }

  /** The breakdown as a line, e.g. "Of which: header 37.6 kB + 224 kB of tensor data read ahead with it + 0 B of tensors fetched since." */
  breakdownText() {
    const b = this.breakdown()
    if (!b) return null
    const parts = []
    if (b.index > 0) parts.push(`index ${formatBytes(b.index)}`)
    // A reopen served by the cache moves no header bytes: say where they came from.
    const n = this.validated
    const cached = n > 0 ? ` (${n === 1 ? 'a file' : `${n} files`} from the cache, validated: 304, no body)` : ''
    parts.push(`${b.index > 0 || n > 1 ? 'headers' : 'header'} ${formatBytes(b.header)}${cached}`)
    if (b.ahead > 0) parts.push(`${formatBytes(b.ahead)} of tensor data read ahead with ${b.index > 0 ? 'them' : 'it'}`)
    parts.push(`${formatBytes(b.tensors)} of tensors fetched since`)
    const text = parts.join(' + ')
    return `Of which: ${text}.`
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
    // A 304 (the library's cache validating) has no body to count, and a Response made with
    // that status and a stream throws.
    if (!response.body || response.status === 304) {
      if (response.status === 304 && generation === this.generation) this.validated++
      entry.done = true
      return response
    }
    // An error's body (a 404 page) is neither header nor data.
    const opening = !response.ok ? null : entry.range === 'whole file' ? 'whole' : /^bytes=0-/.test(entry.range) ? 'window' : null
    const counted = response.body.pipeThrough(new TransformStream({
      transform: (chunk, controller) => {
        entry.bytes += chunk.byteLength
        if (generation === this.generation) {
          this.bytes += chunk.byteLength
          if (!response.ok) this.errorBytes += chunk.byteLength
          else if (opening === 'whole') this.wholeBytes += chunk.byteLength
          else if (opening === 'window') this.openingBytes += chunk.byteLength
        }
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
          if (generation === this.generation) {
            this.bytes += bytes.length
            if (offset === 0) this.openingBytes += bytes.length
          }
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
        if (generation === this.generation) {
          this.bytes += chunk.length
          if (offset === 0) this.openingBytes += chunk.length
        }
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
      this.#breakdownLine(),
      el('div', { class: 'meter', role: 'img', 'aria-label': `${formatPercent(this.bytes, this.total ?? 0)} of the file fetched` },
        el('span', { class: 'meter-fill', style: `width: ${Math.max(fraction > 0 ? 0.5 : 0, fraction * 100)}%` })),
      log,
    )
  }

  #breakdownLine() {
    const b = this.breakdown()
    const text = this.breakdownText()
    if (!b || !text) return el('p', { class: 'network-detail', hidden: true })
    return el('p', {
      class: 'network-detail', dataset: { header: String(b.header), index: String(b.index), ahead: String(b.ahead), tensors: String(b.tensors) }, text,
      title: 'A file\'s first request asks for a window from its start before the header\'s size is known: what comes past the header is tensor data read ahead, never asked for (a tensor inside it costs no request).',
    })
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

/**
 * The header bytes of a model read so far: a file's 8-byte length and its JSON; a sharded set's,
 * summed over the shards whose headers are read (`partial`: that sum while the set is not
 * whole). Null while none is.
 * @param {{ headerLength: number, shards?: Array<{ headerLength: number }> | null }} model
 * @param {number | null} [partial]
 * @returns {number | null}
 */
export function headerBytesOf(model, partial = null) {
  if (partial !== null) return partial > 0 ? partial : null
  if (!model.shards) return Number.isNaN(model.headerLength) ? null : 8 + model.headerLength
  let sum = 0
  let read = 0
  for (const s of model.shards) {
    if (Number.isNaN(s.headerLength)) continue
    sum += 8 + s.headerLength
    read++
  }
  return read > 0 ? sum : null
}

/**
 * The safetensors inspector: opens a file from a URL (ranged requests), a Hugging Face repo id
 * (hf://...), a local file (read by slices) or the bundled sample, and shows its header and the
 * tensors you pick. Uses only the package's public API (../js/index.js). `?url=...` or
 * `?hf=org/repo[@revision][/path]` opens a file on load; `&tensor=...` also selects a tensor,
 * `&slice=...` shows that slice of it, `&compare=...` (a URL or hf:// address) compares it with
 * another checkpoint;
 * `&endpoint=...` names another Hub for repo ids (a local one in tests, a mirror), shown on the
 * page since the token goes there. A config.json beside the file (same folder URL, same repo
 * folder and revision, or among the files dropped) gives open() its quantization settings.
 */
import { SafetensorsError } from '../js/index.js'
import { TensorBrowser } from './modules/browser.js'
import { isAwkward, renderAwkward } from './modules/awkward-view.js'
import { CONFIG_NAME, configAmong, configUrlBeside, fetchConfig, hubConfigUrl, quantizationOption } from './modules/config.js'
import { byId, el, visible } from './modules/dom.js'
import { CompareView } from './modules/compare-view.js'
import { blame, describeError, errorCard, shardFailuresCard } from './modules/errors.js'
import { escapeInvisible } from './modules/format.js'
import { breathe, completeSharded, fileLink, hubAddress, isHubAddress, looksQuantized, openLocal, openUrl } from './modules/model.js'
import { HF_ENDPOINT } from '../js/io/hf.js'
import { NetworkMeter, headerBytesOf } from './modules/network.js'
import { headerBytesRead, readHeaders, readShard } from './modules/shard-headers.js'
import { ScalarValues } from './modules/scalars.js'
import { renderSummary } from './modules/summary.js'
import { SourceLine } from './modules/source-line.js'
import { Tasks } from './modules/task.js'
import { TensorView } from './modules/tensor-view.js'

/** Where the dev server (web-demo/serve.js) serves the samples, relative to this page. */
const SAMPLE = '../sample/tiny-llama.safetensors'
const SHARDED_SAMPLE = '../sample/sharded/model.safetensors.index.json'

const ui = {
  urlForm: /** @type {HTMLFormElement} */ (byId('url-form')),
  urlInput: /** @type {HTMLInputElement} */ (byId('url-input')),
  repoForm: /** @type {HTMLFormElement} */ (byId('repo-form')),
  repoInput: /** @type {HTMLInputElement} */ (byId('repo-input')),
  hubEndpoint: byId('hub-endpoint'),
  tokenInput: /** @type {HTMLInputElement} */ (byId('token-input')),
  fileInput: /** @type {HTMLInputElement} */ (byId('file-input')),
  error: byId('error'),
  notice: byId('notice'),
  empty: byId('empty'),
  summary: byId('summary'),
  awkward: byId('awkward'),
  workspace: byId('workspace'),
  dropOverlay: byId('drop-overlay'),
}

const meter = new NetworkMeter(byId('network'))
const sourceLine = new SourceLine(byId('open-panel'))
const tasks = new Tasks({
  status: byId('status'),
  text: byId('status-text'),
  progress: /** @type {HTMLProgressElement} */ (byId('status-progress')),
  cancel: /** @type {HTMLButtonElement} */ (byId('cancel-button')),
  notice: showNotice,
  error: showError,
})
const view = new TensorView(byId('tensor-view'), tasks, (row) => {
  browser.select(row?.name ?? null, Boolean(row?.partOf))
  if (row) revealView()
  shownSlice = ''
  setAddress(row?.name ?? null)
})
view.onSlice = (/** @type {import('./modules/model.js').Row} */ row, /** @type {string} */ spec) => {
  shownSlice = spec
  setAddress(row.name)
}
const browser = new TensorBrowser(byId('tensors'), (name, part) => { pick(name, part) })
// Scalars' values in the table: read where that costs no download, else once selected.
const scalars = new ScalarValues(() => browser.table.redraw())
browser.table.scalars = scalars
view.onScalar = (/** @type {import('./modules/model.js').Row} */ row, /** @type {{ text: string, full: string }} */ value) => scalars.remember(row.name, value)
const compare = new CompareView(byId('compare'), {
  access: () => ({ token: ui.tokenInput.value.trim() || undefined, endpoint: hubEndpoint ?? undefined }),
  onChange: (source) => {
    comparedWith = source
    setAddress(view.row?.name ?? null)
  },
  onSelect: (name) => { selectNamed(name) },
})

/**
 * Shows a tensor (or a quantized weight's part), or its slice `spec`; one of a sharded set whose
 * shard header is not read yet has it read first.
 * @param {string} name @param {boolean} [part] @param {string} [spec]
 */
async function pick(name, part = false, spec = '') {
  const opened = model
  const rows = /** @type {import('./modules/model.js').Row[]} */ (opened?.rows ?? [])
  const row = part ? findPart(name) : rows.find((r) => r.name === name)
  if (!row || !opened) return
  if (row.pending && row.shard && opened.headers) {
    const shard = row.shard
    const read = await tasks.run(`Reading the header of ${shard}`, async (signal) => {
      await readShard(opened, shard, signal).catch((error) => { throw blame(error, shardName(shard)) })
      return true
    })
    if (model !== opened) return
    browser.update()
    if (!headerRun) showHeaderProgress(opened, headerEnd)
    if (!read) return
  }
  await view.show(row, spec)
}

/**
 * Brings the tensor view into sight when it is below the list (one column: phones, narrow
 * windows); beside the list, it is in sight already.
 */
function revealView() {
  const section = byId('tensor-view')
  if (section.getBoundingClientRect().top < byId('tensors').getBoundingClientRect().bottom - 1) return
  const still = matchMedia('(prefers-reduced-motion: reduce)').matches
  section.scrollIntoView({ block: 'start', behavior: still ? 'auto' : 'smooth' })
}

/**
 * The row of a quantized weight's part, by its stored name.
 * @param {string} name @returns {import('./modules/model.js').Row | null}
 */
function findPart(name) {
  for (const r of /** @type {import('./modules/model.js').Row[]} */ (model?.rows ?? [])) {
    const part = r.quant?.parts.find((p) => p.name === name)
    if (part) return part
  }
  return null
}

/** @type {import('./modules/model.js').Model | null} */
let model = null
/** The reading of the open sharded set's shard headers, while it runs. @type {AbortController | null} */
let headerRun = null
/** How the last reading of shard headers ended. @type {'done' | 'stopped'} */
let headerEnd = 'done'
/** The URL or hf:// address of the open file, for the address bar (null for a local file). @type {string | null} */
let openedUrl = null
/** The slice of the shown tensor ('' for all of it) and the address of the checkpoint the open one
 * is compared with (null: none, or local files), for the address bar. */
let shownSlice = ''
/** @type {string | null} */
let comparedWith = null
/** The local file being opened (its name), for an error card while there is no model yet. @type {string | null} */
let openingName = null

const params = new URLSearchParams(location.search)
/** The Hub that repo ids resolve against: `?endpoint=` when it names the Hub itself or a server
 * on this machine (a local Hub, in tests), else the library's default (https://huggingface.co).
 * Never used for URLs. Any other endpoint is ignored: the token typed on this page goes to the
 * endpoint, and a link must not be able to send it elsewhere. */
const hubEndpoint = endpointParam(params.get('endpoint'))
/** What the page address asks for once its file is open: a slice of its tensor, a comparison. */
let startSlice = params.get('tensor') && params.get('slice') ? { tensor: params.get('tensor'), spec: String(params.get('slice')) } : null
let startCompare = params.get('compare')

/** @param {string | null} value @returns {string | null} */
function endpointParam(value) {
  if (!value) return null
  try {
    const url = new URL(value)
    const local = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/.test(url.hostname) && (url.protocol === 'http:' || url.protocol === 'https:')
    const hub = url.protocol === 'https:' && /(^|\.)(huggingface\.co|hf\.co)$/.test(url.hostname)
    if (local || hub) return url.href.replace(/\/$/, '')
  } catch {
    // Not a URL: ignored, and said so below.
  }
  return null
}
if (hubEndpoint || params.get('endpoint')) {
  ui.hubEndpoint.textContent = hubEndpoint
    ? `Repo ids open from ${hubEndpoint} (set by the page address), and the token is sent there.`
    : `The page address names an endpoint that is neither the Hugging Face Hub nor this machine (${params.get('endpoint')}): ` +
      'it is ignored, and repo ids open from the Hugging Face Hub.'
  ui.hubEndpoint.hidden = false
}

/** @param {unknown} error */
function showError(error) {
  ui.notice.hidden = true
  ui.error.replaceChildren(...errorCard(error, () => { ui.error.hidden = true }, fileOf(error)))
  ui.error.hidden = false
}

/**
 * The file an error came from, for its card: a sharded set's shard when the error names one of
 * its tensors, else the file open (or being opened).
 * @param {unknown} error
 */
function fileOf(error) {
  const tensor = error instanceof SafetensorsError ? error.tensor : null
  const shard = tensor && model?.headers ? model.rows.find((r) => r.name === tensor)?.shard : undefined
  if (shard) return shardName(shard)
  return openedUrl ?? model?.label ?? openingName
}

/** A shard of the open set, by its URL when the set came from one. @param {string} shard */
function shardName(shard) {
  try {
    if (openedUrl && !isHubAddress(openedUrl)) return new URL(shard, openedUrl).href
  } catch {
    // Not a URL base: the path as the index gives it.
  }
  return openedUrl ? `${shard} (beside ${openedUrl})` : shard
}

/** @param {string} message */
function showNotice(message) {
  ui.notice.textContent = message
  ui.notice.hidden = false
}

/**
 * What the page says about a file's quantization once it is shown: a config.json that could not
 * be read, a config that does not fit the tensors, and a quantization the library finds
 * inconsistent (its coded error: the tensors are then listed as stored). Nothing when all is well.
 * @param {import('./modules/model.js').Model} opened @param {string[]} notes
 */
function showQuantNotes(opened, notes) {
  /** @type {HTMLElement[]} */
  const lines = notes.map((note) => el('p', { class: 'notice-line' }, ...visible(note)))
  if (opened.quantError) {
    const d = describeError(opened.quantError)
    lines.push(el('p', { class: 'notice-line quant-notice' },
      'The quantized weights cannot be decoded, so every tensor is listed as stored. ',
      d.code ? el('code', { class: 'notice-code', text: d.code }) : null,
      d.code ? ' ' : null,
      ...visible(d.message)))
  }
  if (lines.length === 0) return
  ui.notice.replaceChildren(...lines)
  ui.notice.hidden = false
}

function clearMessages() {
  ui.error.hidden = true
  ui.notice.hidden = true
}

/** Closes the open file, if any: opening another one starts from an empty page. */
async function discard() {
  const previous = model
  model = null
  headerRun?.abort()
  headerRun = null
  openedUrl = null
  openingName = null
  comparedWith = null
  view.setModel(null)
  compare.setModel(null)
  scalars.setModel(null)
  ui.summary.hidden = true
  ui.awkward.hidden = true
  ui.workspace.hidden = true
  ui.empty.hidden = false
  document.title = 'safetensors inspector'
  sourceLine.reset()
  setAddress(null)
  await previous?.file.close()
}

/**
 * Shows a newly opened file.
 * @param {import('./modules/model.js').Model} next
 */
function show(next) {
  model = next
  meter.setTotal(Number.isNaN(next.byteLength) ? null : next.byteLength)
  meter.setHeaders(() => headerBytesOf(next, next.headers && !next.headers.complete ? headerBytesRead(next.headers) : null))
  ui.empty.hidden = true
  renderSummary(ui.summary, next)
  if (next.kind === 'file' && isAwkward(next.metadata)) {
    // Its own small read (the first entries), beside whatever the user selects meanwhile.
    const file = /** @type {import('../js/index.js').SafetensorsFile} */ (next.file)
    renderAwkward(ui.awkward, file, new AbortController().signal).catch((error) => {
      if (model === next) showError(error)
    })
  }
  view.setModel(next)
  compare.setModel(next)
  if (startCompare) compare.compareWith(startCompare)
  startCompare = null
  scalars.setModel(next)
  browser.setRows(next.rows, next.kind === 'sharded')
  ui.workspace.hidden = false
  document.title = `${escapeInvisible(next.label)} · safetensors inspector`
  sourceLine.fold(next.label, next.source === 'local'
    ? `from this computer${next.kind === 'sharded' ? `: the index and ${next.shards?.length ?? 0} shards` : ''}`
    : openedUrl ?? '', ui.summary.querySelector('.summary-head .badge')?.textContent ?? '')
  setBusy(Boolean(next.headers && !next.headers.complete))
}

/** Marks the summary as incomplete while shard headers are read (tests wait for it to be whole). @param {boolean} busy */
function setBusy(busy) {
  if (busy) ui.summary.setAttribute('aria-busy', 'true')
  else ui.summary.removeAttribute('aria-busy')
}

/**
 * The line under the filter about the shard headers.
 * @param {import('./modules/model.js').Model} m @param {'reading' | 'done' | 'stopped'} state
 */
function showHeaderProgress(m, state) {
  const h = /** @type {import('./modules/model.js').HeaderState} */ (m.headers)
  meter.render()  // its split of the bytes counts the headers read so far
  browser.showHeaders({
    loaded: h.read.size, total: h.total, failed: h.failed.size, state,
    cancel: () => headerRun?.abort(),
    resume: () => { loadHeaders(m, { notes: [], tensor: null }) },
  })
}

/**
 * Reads a sharded set's shard headers after its names are shown, redrawing the rows as they fill
 * in (at most every REDRAW ms); once all are in, makes the summary whole and folds quantized
 * weights. A cancel keeps what was read; shards that fail are listed in the error area.
 * @param {import('./modules/model.js').Model} m
 * @param {{ notes: string[], tensor: string | null }} then quantization notes to show, a tensor to select, once whole
 */
async function loadHeaders(m, then) {
  headerRun?.abort()
  const controller = new AbortController()
  headerRun = controller
  const h = /** @type {import('./modules/model.js').HeaderState} */ (m.headers)
  setBusy(true)
  if (h.ended) {
    h.ended = false
    renderSummary(ui.summary, m)
  }
  showHeaderProgress(m, 'reading')
  let timer = /** @type {ReturnType<typeof setTimeout> | null} */ (null)
  let pause = REDRAW
  try {
    await readHeaders(m, {
      signal: controller.signal,
      onShard: () => {
        if (model !== m) return
        showHeaderProgress(m, 'reading')
        timer ??= setTimeout(() => {
          timer = null
          if (model !== m) return
          // A redraw that takes a while (re-sorting 500,000 rows by size) waits longer before the next.
          const start = performance.now()
          browser.update()
          pause = Math.max(REDRAW, 4 * (performance.now() - start))
        }, pause)
      },
    })
  } catch (error) {
    if (!controller.signal.aborted) showError(error)
  } finally {
    if (timer) clearTimeout(timer)
  }
  if (model !== m) return
  if (headerRun === controller) headerRun = null
  if (h.read.size === h.total) {
    const previous = m.rows
    try {
      await completeSharded(m, controller.signal)
      await breathe()  // the rows drawn anew in a task of their own
    } catch (error) {
      if (!controller.signal.aborted) showError(error)
    }
    if (model !== m) return
    // Shards that failed before and were read on a second try are no error any more.
    if (ui.error.querySelector('.shard-failures')) ui.error.hidden = true
    renderSummary(ui.summary, m)
    if (!Number.isNaN(m.byteLength)) meter.setTotal(m.byteLength)
    if (m.rows !== previous) browser.replaceRows(m.rows)
    else browser.update({ tree: true })
    showQuantNotes(m, then.notes)
  } else {
    h.ended = headerRun === null  // else another reading of them has begun
    renderSummary(ui.summary, m)
    browser.update({ tree: true })
    if (h.failed.size > 0) showShardFailures(h.failed, h.total)
  }
  headerEnd = controller.signal.aborted && h.read.size < h.total ? 'stopped' : 'done'
  showHeaderProgress(m, headerEnd)
  setBusy(false)
  if (then.tensor) selectNamed(then.tensor)
}

/** Redraws of the rows while shard headers arrive: at most one per this many ms (and per four
 * times as long as the last one took). */
const REDRAW = 250

/** @param {Map<string, unknown>} failed @param {number} total */
function showShardFailures(failed, total) {
  ui.notice.hidden = true
  ui.error.replaceChildren(...shardFailuresCard(failed, total, () => { ui.error.hidden = true }, openedUrl ?? model?.label ?? null))
  ui.error.hidden = false
}

/** Selects a tensor (or a part) by its name (with the page address's slice, the first time), or
 * says there is none. @param {string} tensor */
function selectNamed(tensor) {
  const spec = startSlice?.tensor === tensor ? startSlice.spec : ''
  startSlice = null
  if (model?.rows.some((r) => r.name === tensor)) pick(tensor, false, spec)
  else if (findPart(tensor)) pick(tensor, true, spec)
  else showNotice(`This file has no tensor named “${escapeInvisible(tensor)}”.`)
}

/**
 * After a file is shown: a single file's quantization notes and the tensor asked for at once; a
 * sharded set's shard headers read next, the tensor selected at once unless quantized weights
 * may fold (its row is then the folded one, once all headers are in).
 * @param {import('./modules/model.js').Model} opened @param {string[]} notes @param {string | null | undefined} tensor
 */
function afterShow(opened, notes, tensor) {
  showQuantNotes(opened, notes)
  if (!opened.headers) {
    if (tensor) selectNamed(tensor)
    return
  }
  const later = tensor && (opened.config.used || looksQuantized(opened.stored.map((r) => r.name))) ? tensor : null
  loadHeaders(opened, { notes, tensor: later })
  if (tensor && !later) selectNamed(tensor)
}

/**
 * @param {string} href a URL, absolute or relative to this page, or an hf:// address
 * @param {{ tensor?: string | null }} [options] a tensor to select once open
 */
async function openFromUrl(href, options = {}) {
  if (isHubAddress(href)) return openFromHub(href.trim(), options)
  clearMessages()
  await discard()
  let url
  try {
    url = new URL(fileLink(href.trim()), location.href).href
  } catch {
    showError(new SafetensorsError('UnsupportedSource', `${JSON.stringify(href)} is not a URL`))
    return
  }
  ui.urlInput.value = url
  const token = ui.tokenInput.value.trim()
  const headers = token ? { Authorization: `Bearer ${token}` } : undefined
  await openRemote(url, { headers }, options.tensor, configUrlBeside(url), headers)
}

/**
 * Opens a Hub address: the token goes to the Hub only (the library keeps it off the CDN).
 * @param {string} address hf://org/repo[@revision][/path]
 * @param {{ tensor?: string | null }} [options] a tensor to select once open
 */
async function openFromHub(address, options = {}) {
  clearMessages()
  await discard()
  ui.repoInput.value = address.replace(/^hf:\/\//i, '')
  const token = ui.tokenInput.value.trim() || undefined
  // config.json of the same repo folder at the same revision; the token goes to the Hub only.
  await openRemote(address, { token, endpoint: hubEndpoint ?? undefined }, options.tensor,
    hubConfigUrl(address, hubEndpoint ?? HF_ENDPOINT), token ? { Authorization: `Bearer ${token}` } : undefined)
}

/**
 * Opens a URL or an hf:// address through the network meter and shows it; when it looks
 * quantized, with the settings of the config.json at `configUrl` (fetched outside the meter: it
 * is not part of the checkpoint).
 * @param {string} src @param {{ headers?: Record<string, string>, token?: string, endpoint?: string }} access
 * @param {string | null | undefined} tensor a tensor to select once open
 * @param {string | null} configUrl @param {Record<string, string> | undefined} configHeaders
 */
async function openRemote(src, access, tensor, configUrl, configHeaders) {
  openedUrl = src  // in the address bar from now on, so that a reload tries again
  setAddress(null)
  meter.reset('http')
  /** @type {string[]} */
  const notes = []
  const opened = await tasks.run(`Opening ${src}`, (signal) => openUrl(src, {
    ...access, fetch: meter.fetch, signal,
    findConfig: async () => {
      const read = configUrl ? await fetchConfig(configUrl, { headers: configHeaders, signal }) : null
      if (read?.note) notes.push(read.note)
      return { config: quantizationOption(read?.config ?? null), from: read?.from ?? null }
    },
  }))
  if (!opened) return
  show(opened)
  afterShow(opened, notes, tensor)
}

/** @param {File[]} given one file, or a sharded set's index with its shards; and a config.json */
async function openFromFiles(given) {
  clearMessages()
  await discard()
  meter.reset('local')
  const { files, read } = await configAmong(given)
  if (files.length === 0) {
    showError(new SafetensorsError('UnsupportedSource', `${CONFIG_NAME} alone: choose or drop it together with the .safetensors file (or the sharded index and its shards) it describes`))
    return
  }
  const index = files.find((file) => file.name.endsWith('.index.json'))
  openingName = (index ?? files[0]).name
  const opened = await tasks.run(`Opening ${(index ?? files[0]).name}`, (signal) =>
    openLocal(files, (s) => meter.countingSource(s), signal, { config: quantizationOption(read.config), from: read.from }))
  if (!opened) return
  show(opened)
  afterShow(opened, read.note ? [read.note] : [], null)
}

/**
 * Keeps ?url= or ?hf= (and &endpoint=, &tensor=, &slice=, &compare=) in the address bar, so that
 * the page can be reloaded or shared. Never the token.
 * @param {string | null} tensor
 */
function setAddress(tensor) {
  const address = new URLSearchParams()
  if (openedUrl && isHubAddress(openedUrl)) {
    address.set('hf', openedUrl.replace(/^hf:\/\//i, ''))
    if (hubEndpoint) address.set('endpoint', hubEndpoint)
  } else if (openedUrl) {
    address.set('url', openedUrl)
  }
  if (openedUrl && tensor) {
    address.set('tensor', tensor)
    if (shownSlice) address.set('slice', shownSlice)
  }
  if (openedUrl && comparedWith) {
    address.set('compare', comparedWith)
    if (hubEndpoint && isHubAddress(comparedWith) && !address.has('endpoint')) address.set('endpoint', hubEndpoint)
  }
  const query = address.toString()
  history.replaceState(null, '', `${location.pathname}${query ? `?${query}` : ''}`)
}

ui.urlForm.addEventListener('submit', (e) => {
  e.preventDefault()
  if (ui.urlInput.value.trim()) openFromUrl(ui.urlInput.value)
})
ui.repoForm.addEventListener('submit', (e) => {
  e.preventDefault()
  const text = ui.repoInput.value.trim()
  if (!text) return
  const address = hubAddress(text)
  openFromUrl(address ?? text)  // another site's URL typed here opens as a URL
})
byId('sample-button').addEventListener('click', () => openFromUrl(SAMPLE))
byId('sharded-sample-button').addEventListener('click', () => openFromUrl(SHARDED_SAMPLE))
ui.fileInput.addEventListener('change', () => {
  const files = Array.from(ui.fileInput.files ?? [])
  if (files.length > 0) openFromFiles(files)
  ui.fileInput.value = ''
})

// Drag and drop anywhere on the page.
let dragDepth = 0
/** @param {DragEvent} e */
const hasFiles = (e) => Boolean(e.dataTransfer && Array.from(e.dataTransfer.types).includes('Files'))
document.addEventListener('dragenter', (e) => {
  if (!hasFiles(e)) return
  e.preventDefault()
  dragDepth++
  ui.dropOverlay.hidden = false
})
document.addEventListener('dragover', (e) => {
  if (!hasFiles(e)) return
  e.preventDefault()
  if (e.dataTransfer) e.dataTransfer.dropEffect = 'copy'
})
document.addEventListener('dragleave', () => {
  dragDepth = Math.max(0, dragDepth - 1)
  if (dragDepth === 0) ui.dropOverlay.hidden = true
})
document.addEventListener('drop', (e) => {
  e.preventDefault()
  dragDepth = 0
  ui.dropOverlay.hidden = true
  const files = Array.from(e.dataTransfer?.files ?? [])
  if (files.length > 0) openFromFiles(files)
})

document.addEventListener('keydown', (e) => {
  if (e.key !== 'Escape') return
  if (tasks.busy) tasks.cancel()
  else if (compare.tasks.busy) compare.tasks.cancel()
  else headerRun?.abort()
})

view.clear()
const startRepo = params.get('hf')
const start = params.get('url')
if (startRepo) openFromHub(hubAddress(startRepo) ?? `hf://${startRepo}`, { tensor: params.get('tensor') })
else if (start) openFromUrl(start, { tensor: params.get('tensor') })

/**
 * The safetensors inspector: opens a file from a URL (ranged requests), a local file (read by
 * slices) or the bundled sample, and shows its header and the tensors you pick. Uses only the
 * package's public API (../js/index.js). `?url=...` opens a file on load; `&tensor=...` also
 * selects a tensor.
 */
import { SafetensorsError } from '../js/index.js'
import { TensorBrowser } from './modules/browser.js'
import { isAwkward, renderAwkward } from './modules/awkward-view.js'
import { byId } from './modules/dom.js'
import { errorCard } from './modules/errors.js'
import { fileLink, openLocal, openUrl } from './modules/model.js'
import { NetworkMeter } from './modules/network.js'
import { renderSummary } from './modules/summary.js'
import { Tasks } from './modules/task.js'
import { TensorView } from './modules/tensor-view.js'

/** Where the dev server (web-demo/serve.js) serves the samples, relative to this page. */
const SAMPLE = '../sample/tiny-llama.safetensors'
const SHARDED_SAMPLE = '../sample/sharded/model.safetensors.index.json'

const ui = {
  urlForm: /** @type {HTMLFormElement} */ (byId('url-form')),
  urlInput: /** @type {HTMLInputElement} */ (byId('url-input')),
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
const tasks = new Tasks({
  status: byId('status'),
  text: byId('status-text'),
  progress: /** @type {HTMLProgressElement} */ (byId('status-progress')),
  cancel: /** @type {HTMLButtonElement} */ (byId('cancel-button')),
  notice: showNotice,
  error: showError,
})
const view = new TensorView(byId('tensor-view'), tasks, (row) => {
  browser.select(row?.name ?? null)
  setAddress(row?.name ?? null)
})
const browser = new TensorBrowser(byId('tensors'), (name) => {
  const row = model?.rows.find((r) => r.name === name)
  if (row) view.show(row)
})

/** @type {import('./modules/model.js').Model | null} */
let model = null
/** The URL of the open file, for the address bar (null for a local file). @type {string | null} */
let openedUrl = null

/** @param {unknown} error */
function showError(error) {
  ui.notice.hidden = true
  ui.error.replaceChildren(...errorCard(error, () => { ui.error.hidden = true }))
  ui.error.hidden = false
}

/** @param {string} message */
function showNotice(message) {
  ui.notice.textContent = message
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
  openedUrl = null
  view.setModel(null)
  ui.summary.hidden = true
  ui.awkward.hidden = true
  ui.workspace.hidden = true
  ui.empty.hidden = false
  document.title = 'safetensors inspector'
  setAddress(null)
  await previous?.file.close()
}

/**
 * Shows a newly opened file.
 * @param {import('./modules/model.js').Model} next
 */
function show(next) {
  model = next
  meter.setTotal(next.byteLength)
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
  browser.setRows(next.rows, next.kind === 'sharded')
  ui.workspace.hidden = false
  document.title = `${next.label} · safetensors inspector`
}

/**
 * @param {string} href a URL, absolute or relative to this page
 * @param {{ tensor?: string | null }} [options] a tensor to select once open
 */
async function openFromUrl(href, options = {}) {
  clearMessages()
  await discard()
  let url
  try {
    url = new URL(fileLink(href.trim()), location.href).href
  } catch {
    showError(new SafetensorsError('UnsupportedSource', `${JSON.stringify(href)} is not a URL`))
    return
  }
  openedUrl = url  // in the address bar from now on, so that a reload tries again
  ui.urlInput.value = url
  setAddress(null)
  const token = ui.tokenInput.value.trim()
  const headers = token ? { Authorization: `Bearer ${token}` } : undefined
  meter.reset('http')
  const opened = await tasks.run(`Opening ${url}`, (signal, progress) =>
    openUrl(url, {
      fetch: meter.fetch, headers, signal,
      onShards: (done, total) => progress(done, total, `Reading the shard headers: ${done} of ${total}`),
    }))
  if (!opened) return
  show(opened)
  const row = options.tensor ? opened.rows.find((r) => r.name === options.tensor) : null
  if (row) await view.show(row)
  else if (options.tensor) showNotice(`This file has no tensor named “${options.tensor}”.`)
}

/** @param {File[]} files one file, or a sharded set's index with its shards */
async function openFromFiles(files) {
  clearMessages()
  await discard()
  meter.reset('local')
  const index = files.find((file) => file.name.endsWith('.index.json'))
  const opened = await tasks.run(`Opening ${(index ?? files[0]).name}`, (signal, progress) =>
    openLocal(files, (s) => meter.countingSource(s), signal,
      (done, total) => progress(done, total, `Reading the shard headers: ${done} of ${total}`)))
  if (!opened) return
  show(opened)
}

/**
 * Keeps ?url= (and &tensor=) in the address bar, so that the page can be reloaded or shared.
 * @param {string | null} tensor
 */
function setAddress(tensor) {
  const params = new URLSearchParams()
  if (openedUrl) params.set('url', openedUrl)
  if (openedUrl && tensor) params.set('tensor', tensor)
  const query = params.toString()
  history.replaceState(null, '', `${location.pathname}${query ? `?${query}` : ''}`)
}

ui.urlForm.addEventListener('submit', (e) => {
  e.preventDefault()
  if (ui.urlInput.value.trim()) openFromUrl(ui.urlInput.value)
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
  if (e.key === 'Escape' && tasks.busy) tasks.cancel()
})

view.clear()
const params = new URLSearchParams(location.search)
const start = params.get('url')
if (start) openFromUrl(start, { tensor: params.get('tensor') })

/**
 * The export line under a shown tensor: its values (or the slice typed in the box) as a .npy or
 * a JSON file to download, and a button that copies its name. An export reads the selection
 * again, whole (the page keeps only float32 values and a preview of large ones), so the file
 * has the stored bytes; a selection past EXPORT_LIMIT is not exported (a slice narrows it).
 */
import { SafetensorsError } from '../../js/index.js'
import { el } from './dom.js'
import { elementCount, escapeInvisible, formatBytes } from './format.js'
import { exportFileName, jsonPieces, npyBytes, numpyHas } from './export.js'
import { quantSlice } from './values.js'

/**
 * @typedef {import('./model.js').Row} Row
 * @typedef {import('./model.js').Model} Model
 */

/** The largest selection exported: its values are held in memory twice (read, then encoded). */
export const EXPORT_LIMIT = 256 * 1024 * 1024

/**
 * The export buttons for `row`'s selection `spec` ('' for all of it).
 * @param {{ model: Model, row: Row, spec: string, shape: number[], tasks: import('./task.js').Tasks }} of
 *   shape: the selection's (logical, for a quantized weight)
 */
export function exportBar(of) {
  const { row, spec, shape } = of
  const what = spec ? `[${spec}]` : 'the whole tensor'
  const count = elementCount(shape)
  const f32 = row.quant || !numpyHas(row.dtype)
  const bytes = f32 ? count * 4 * (row.dtype === 'C64' ? 2 : 1) : (row.byteLength * count) / Math.max(1, row.elements)
  const refused = row.dtype.startsWith('F6') && !row.quant ? `${row.dtype} values have no float32 form yet: nothing to export.`
    : bytes > EXPORT_LIMIT ? `${formatBytes(bytes)} is more than is exported at once (${formatBytes(EXPORT_LIMIT)}): type a slice to narrow it.` : null
  const note = row.quant ? 'dequantized, as float32' : f32 ? `numpy has no ${row.dtype}: as float32` : `as ${row.dtype}`
  const button = (/** @type {'npy' | 'json'} */ kind, /** @type {string} */ text) => el('button', {
    type: 'button', class: `export-${kind}`, text, disabled: refused !== null, title: refused ?? undefined,
    onclick: () => { exportValues(of, kind) },
  })
  return el('div', { class: 'export-bar', role: 'group', 'aria-label': 'Export' },
    el('span', { class: 'export-label muted', text: `Export ${what}:` }),
    button('npy', 'Download .npy'),
    button('json', 'Download JSON'),
    el('span', { class: 'export-note hint', text: refused ?? `.npy ${note}; JSON with NaN and ±Infinity as strings.` }))
}

/**
 * Reads the selection again and downloads it as `kind`.
 * @param {{ model: Model, row: Row, spec: string, tasks: import('./task.js').Tasks }} of @param {'npy' | 'json'} kind
 */
async function exportValues(of, kind) {
  const { model, row, spec } = of
  const label = `Exporting ${escapeInvisible(row.name)}${spec ? ` [${spec}]` : ''} as ${kind === 'npy' ? '.npy' : 'JSON'}`
  const blob = await of.tasks.run(label, async (signal, progress) => {
    const options = { signal, onProgress: (/** @type {{ loaded: number, total: number }} */ p) => progress(p.loaded, p.total) }
    const t = row.quant ? await dequantized(model.file, row, spec, options)
      : spec ? await model.file.slice(row.name, spec, options) : await model.file.tensor(row.name, options)
    try {
      const native = !row.quant && numpyHas(t.dtype)
      if (kind === 'npy') {
        // Copies out of wasm memory before the tensor is freed.
        const data = native ? t.bytes.slice() : t.toFloat32()
        return new Blob([npyBytes({ dtype: row.quant ? 'F32' : t.dtype, shape: t.shape, data })], { type: 'application/octet-stream' })
      }
      const exact = native && t.dtype !== 'F16' && t.dtype !== 'F32' && t.dtype !== 'C64'
      const values = exact ? t.copy() : t.toFloat32()
      const pieces = jsonPieces({ name: row.name, dtype: row.quant ? 'F32' : t.dtype, shape: t.shape, slice: spec, values })
      return new Blob(pieces, { type: 'application/json' })
    } finally {
      t.dispose()
    }
  })
  if (blob) download(blob, exportFileName(row.name, spec, kind))
}

/**
 * A quantized weight dequantized, or the leading rows `spec` names.
 * @param {Model['file']} file @param {Row} row @param {string} spec @param {{ signal: AbortSignal }} options
 * @returns {Promise<import('../../js/index.js').Tensor>}
 */
function dequantized(file, row, spec, options) {
  const slice = quantSlice(spec, Number(row.shape[0] ?? 0))
  if (slice === 'invalid')
    throw new SafetensorsError('InvalidSlice', `“${spec}”: a quantized weight is sliced along its first dimension only`, { tensor: row.name })
  const f = /** @type {any} */ (file)
  return f.dequantize(row.name, slice ? { ...options, slice } : options)
}

/** Saves `blob` as `name` through a download link. @param {Blob} blob @param {string} name */
function download(blob, name) {
  const url = URL.createObjectURL(blob)
  const link = el('a', { href: url, download: name, hidden: true })
  document.body.append(link)
  link.click()
  link.remove()
  // The download has its own reference once started; the URL is only needed for the click.
  setTimeout(() => URL.revokeObjectURL(url), 60_000)
}

/**
 * A button that copies `name` to the clipboard (navigator.clipboard where the page may use it,
 * else a selected text area and execCommand), and says so in its label for a moment.
 * @param {string} name
 */
export function copyNameButton(name) {
  const button = el('button', { type: 'button', class: 'copy-name link', text: 'Copy name', title: 'Copy the tensor’s name' })
  button.addEventListener('click', async () => {
    const copied = await copyText(name)
    button.textContent = copied ? 'Copied' : 'Copy failed'
    button.dataset.copied = String(copied)
    setTimeout(() => { button.textContent = 'Copy name' }, 1500)
  })
  return button
}

/** @param {string} text @returns {Promise<boolean>} */
async function copyText(text) {
  try {
    if (navigator.clipboard?.writeText) {
      await navigator.clipboard.writeText(text)
      return true
    }
  } catch {
    // Refused (no permission, not a secure context): the older way below.
  }
  const area = /** @type {HTMLTextAreaElement} */ (el('textarea', { readonly: true, class: 'copy-buffer', 'aria-hidden': 'true' }))
  area.value = text
  document.body.append(area)
  area.select()
  try {
    return document.execCommand('copy')
  } catch {
    return false
  } finally {
    area.remove()
  }
}

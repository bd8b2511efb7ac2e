/**
 * What the page shows of an opened file: one object for a single file and a sharded set alike,
 * built with the package's public API and js/overview.js (what the CLI's inspect shows too).
 *
 * A sharded set is shown from its index at once: a row per name, `pending` until its shard's
 * header arrives (shard-headers.js fills it in), and the summary's sizes and counts once every
 * header is in (completeSharded). Nothing waits for 300 headers before the names show.
 *
 * A quantized checkpoint's weights (f.quantized()) are listed once, by logical name: their row
 * carries the scheme and the logical shape, and their parts (the stored tensors: packed values,
 * scales, zero points...) are folded under it instead of being rows of their own. A checkpoint
 * whose quantization is inconsistent (quantized() throws) is listed as stored, with the coded
 * error kept to show as a notice.
 */
import { SafetensorsError, ShardedFile, blobSource, open } from '../../js/index.js'
import { overview } from '../../js/overview.js'
import { nameFinder } from '../../js/name-finder.js'

/**
 * @typedef {import('../../js/index.js').SafetensorsFile} SafetensorsFile
 * @typedef {import('../../js/overview.js').Row & { quant?: QuantRow, partOf?: string, role?: string,
 *   pending?: boolean, missing?: boolean, unreadable?: boolean }} Row
 *   quant: on a quantized weight's row (its `dtype` is then the scheme's name, its `shape` the
 *   logical shape, `elements` the logical count, `byteLength` the sum of its parts'); partOf and
 *   role: on a part's row, the logical weight it belongs to and its role; pending: a sharded
 *   set's row whose shard header is not read yet (dtype '', shape [], numbers NaN); missing: its
 *   shard's header was read and has no such tensor (still pending); unreadable: its shard's header
 *   could not be read on the last try (still pending)
 * @typedef {{ scheme: string, details: Record<string, unknown>, parts: Row[] }} QuantRow
 * @typedef {import('../../js/quant/detect.js').QuantizedWeight} QuantEntry
 * @typedef {import('../../js/overview.js').ShardSummary} ShardSummary
 * @typedef {import('../../js/overview.js').Overview & {
 *   label: string, source: 'url' | 'hub' | 'local', file: SafetensorsFile | ShardedFile,
 *   rows: Row[], stored: Row[], quantized: QuantEntry[], quantError: unknown,
 *   parameters: { total: number, byDtype: Record<string, number>, byScheme?: Record<string, number> },
 *   config: { from: string | null, used: boolean },
 *   headers: HeaderState | null, shardRows: Map<string, Row[]> | null,
 * }} Model
 *   rows: what the tensor list shows (plain tensors and quantized weights, parts folded);
 *   stored: every stored tensor; quantError: what quantized() threw, or null; headers: a sharded
 *   set's shard headers read so far (null for a single file); shardRows: each shard's rows
 * @typedef {{ read: Set<string>, failed: Map<string, unknown>, total: number, complete: boolean, ended: boolean }} HeaderState
 *   read: the shards whose rows are filled in; failed: those that could not be read, and why;
 *   complete: every header read and the summary made whole (completeSharded); ended: the last
 *   reading of them is over (stopped, or some failed) and none is under way
 */

/** @typedef {{ config: Record<string, unknown> | undefined, from: string | null }} ConfigUse */

/**
 * Opens a URL or a Hub address (hf://...): a single file, or a sharded set (its index: the
 * shard headers are read afterwards, see shard-headers.js). `token` and `endpoint` are for Hub
 * addresses (the token goes to the Hub only); `headers` for URLs. Headers and indexes are kept in
 * the browser's Cache API (the library's `cache` option): reopening a model costs one validation
 * request per file, not every shard's header again.
 * @param {string} href absolute URL, or hf://org/repo[@revision][/path]
 * @param {{ fetch: (input: string, init?: RequestInit) => Promise<Response>, headers?: Record<string, string>,
 *   token?: string, endpoint?: string, signal: AbortSignal,
 *   findConfig?: () => Promise<ConfigUse> }} options  findConfig: the quantization config beside
 *   the file, asked for when the file looks quantized
 * @returns {Promise<Model>}
 */
export async function openUrl(href, options) {
  const hub = isHubAddress(href)
  /** @param {Record<string, unknown> | undefined} quantization */
  const opener = (quantization) => open(href, hub
    ? { fetch: options.fetch, token: options.token, endpoint: options.endpoint, signal: options.signal, quantization, cache: true }
    : { fetch: options.fetch, headers: options.headers, signal: options.signal, quantization, cache: true })
  let f = await opener(undefined)
  /** @type {Model['config'] & { refused: unknown }} */
  let config = { from: null, used: false, refused: null }
  try {
    // At 500,000 names, parsing the index, making its names, making their rows and showing them
    // take hundreds of milliseconds each: the page answers input between them, not after their sum.
    await breathe(options.signal)
    // config.json is looked for only when the names look quantized (a plain checkpoint costs no
    // request more); when it has quantization settings, the file is opened again with them.
    if (options.findConfig && looksQuantized(f.names)) {
      const found = await options.findConfig()
      if (found.config) {
        const previous = f
        const again = await openQuantized(opener, found)
        f = again.file
        config = again.config
        await previous.close()
      } else {
        config = { ...config, from: found.from }
      }
    }
    // A name with a bare % (100%.safetensors) is not percent-encoding: shown as it is.
    const label = hub ? href.replace(/^hf:\/\//i, '') : safeDecode(new URL(href).pathname.split('/').pop() || href)
    const source = hub ? 'hub' : 'url'
    if (f instanceof ShardedFile) return await shardedModel(f, label, source, config, options.signal)
    return await fileModel(/** @type {SafetensorsFile} */ (f), label, source, config)
  } catch (error) {
    await f.close()
    throw error
  }
}

/**
 * Names of parts of quantized weights (detection itself is the library's): a part only one of the
 * schemes has. Not a bare `.weight_scale`: per-tensor FP8 checkpoints have it, and need no config.
 */
const PART_NAME = /(\.weight_scale_inv|_blocks|_scales|\.weight_packed|\.weight_scale_2|\.weight_global_scale|\.weight_shape|\.weight_zero_point|\.qweight|\.qzeros|\.g_idx|\.absmax|\.quant_map|\.quant_state\.bitsandbytes__\w+)$/

/**
 * Whether a checkpoint's tensor names look like a quantized one's (some part of a scheme the
 * library decodes): then its config.json is worth a request. Names only, so that a sharded set
 * is judged from its index before its shard headers are read.
 * @param {string[]} names
 */
export function looksQuantized(names) {
  return names.some((name) => PART_NAME.test(name))
}

/**
 * Opens with the config's quantization settings; when open() itself refuses them (a config that
 * does not fit the tensors), opens without, so that the file is still shown (quantized() then
 * reports what it finds).
 * @template F
 * @param {(quantization: Record<string, unknown> | undefined) => Promise<F>} opener
 * @param {ConfigUse} config
 * @returns {Promise<{ file: F, config: Model['config'] & { refused: unknown } }>}
 */
async function openQuantized(opener, config) {
  if (!config.config) return { file: await opener(undefined), config: { from: config.from, used: false, refused: null } }
  try {
    return { file: await opener(config.config), config: { from: config.from, used: true, refused: null } }
  } catch (error) {
    if (!isQuantError(error)) throw error
    return { file: await opener(undefined), config: { from: config.from, used: false, refused: error } }
  }
}

/** @param {unknown} error a quantization problem (its codes: Quant*, NotQuantized, UnsupportedQuantization) */
export function isQuantError(error) {
  return error instanceof SafetensorsError && /^(Quant|NotQuantized$|UnsupportedQuantization$)/.test(error.code)
}

/**
 * Opens local files (from the picker or a drop), read in slices through `wrap`: one
 * .safetensors file, or a sharded set's index together with its shards, found by file name
 * (a config.json among them is taken out by the caller and comes as `config`).
 * @param {File[]} files
 * @param {(source: import('../../js/index.js').ByteSource) => import('../../js/index.js').ByteSource} wrap
 * @param {AbortSignal} signal
 * @param {ConfigUse} [config] the quantization config given with the files
 * @returns {Promise<Model>}
 */
export async function openLocal(files, wrap, signal, config = { config: undefined, from: null }) {
  const index = files.find((file) => file.name.endsWith('.index.json'))
  if (index) {
    // The index names shards by path; a drop or a picker gives file names only.
    const byName = new Map(files.map((file) => [file.name, file]))
    /** @type {string[]} */
    const missing = []
    const shards = (/** @type {string} */ path) => {
      const file = byName.get(path.slice(path.lastIndexOf('/') + 1))
      if (!file) missing.push(path)
      return file && wrap(blobSource(file))
    }
    const opened = await openQuantized((quantization) => open(index, { signal, shards, quantization }), config).catch((error) => {
      if (missing.length === 0) throw error
      throw new SafetensorsError('ShardMissing', `${index.name} names ${missing.length === 1 ? 'a shard' : 'shards'} ` +
        `not among the files given: ${missing.join(', ')}. Choose or drop the index together with its shards.`)
    })
    const f = /** @type {ShardedFile} */ (opened.file)
    try {
      return await shardedModel(f, index.name, 'local', opened.config, signal)
    } catch (error) {
      await f.close()
      throw error
    }
  }
  if (files.length > 1) {
    throw new SafetensorsError('UnsupportedSource', `${files.length} files given: choose one .safetensors file, ` +
      "or a sharded set's .index.json together with its shards")
  }
  const [file] = files
  if (file.name.endsWith('.json'))
    throw new SafetensorsError('UnsupportedSource', `${file.name} is JSON, not a safetensors file`)
  const opened = await openQuantized((quantization) => open(wrap(blobSource(file)), { signal, quantization }), config)
  const f = /** @type {SafetensorsFile} */ (opened.file)
  try {
    return await fileModel(f, file.name, 'local', opened.config)
  } catch (error) {
    await f.close()
    throw error
  }
}

/**
 * @param {SafetensorsFile} f @param {string} label @param {Model['source']} source
 * @param {Model['config'] & { refused: unknown }} config
 * @returns {Promise<Model>}
 */
async function fileModel(f, label, source, config) {
  const o = await overview(f)
  return withQuantized({ label, source, file: f, ...o, headers: null, shardRows: null }, () => /** @type {any} */ (f).quantized?.(), config)
}

/** The shape of a pending row: none yet. */
const NO_SHAPE = /** @type {number[]} */ (/** @type {unknown} */ (Object.freeze([])))

/** Rows made between two breaths: a few tens of milliseconds' work. */
const ROWS_A_BREATH = 100_000

/**
 * A sharded set as its index gives it: a pending row per name (its shard known, nothing else),
 * the sizes and counts that need the shard headers unknown (NaN) until completeSharded. Made
 * between breaths (after the index's names, before they are shown), a block of rows at a time.
 * @param {ShardedFile} f @param {string} label @param {Model['source']} source
 * @param {Model['config'] & { refused: unknown }} config @param {AbortSignal} signal
 * @returns {Promise<Model>}
 */
async function shardedModel(f, label, source, config, signal) {
  const paths = f.shards
  /** @type {Map<string, Row[]>} */
  const shardRows = new Map()
  /** @type {Row[]} */
  const rows = []
  let made = 0
  await breathe(signal)
  // Shard by shard, as `names` groups them (a lookup of each name's shard costs microseconds).
  for (const shard of paths) {
    if (rows.length - made >= ROWS_A_BREATH) {
      made = rows.length
      await breathe(signal)
    }
    /** @type {Row[]} */
    const own = []
    for (const name of f.namesIn(shard)) {
      const r = /** @type {Row} */ (/** @type {unknown} */ ({
        name, dtype: '', shape: NO_SHAPE, byteOffset: NaN, byteLength: NaN, elements: NaN, shard, order: rows.length, part: null, pending: true,
      }))
      rows.push(r)
      own.push(r)
    }
    shardRows.set(shard, own)
  }
  await breathe(signal)
  return {
    kind: 'sharded', label, source, file: f, byteLength: NaN, headerLength: NaN,
    metadata: f.metadata, shardMetadata: null,
    shards: paths.map((path) => ({ path, byteLength: NaN, headerLength: NaN, tensors: shardRows.get(path)?.length ?? 0, metadata: null })),
    rows, stored: rows, parameters: { total: NaN, byDtype: {} }, quantized: [], quantizedError: null, quantError: config.refused,
    config: { from: config.from, used: config.used },
    headers: { read: new Set(), failed: new Map(), total: paths.length, complete: false, ended: false }, shardRows,
  }
}

/**
 * Makes a sharded set's model whole once every shard header is read: sizes, header lengths,
 * shard summaries, parameters (as js/overview.js counts them for the CLI) and quantized weights,
 * folded into their rows. Changes `model` in place (the page holds it); its `rows` may be new.
 * @param {Model} model @param {AbortSignal} signal
 */
export async function completeSharded(model, signal) {
  const f = /** @type {ShardedFile} */ (model.file)
  const files = await Promise.all(f.shards.map((path) => f.shard(path, { signal })))  // read: no request
  const shards = f.shards.map((path, i) => ({
    path, byteLength: files[i].byteLength, headerLength: files[i].headerLength,
    tensors: model.shardRows?.get(path)?.length ?? 0, metadata: files[i].metadata,
  }))
  const first = JSON.stringify(files[0]?.metadata ?? null)
  const same = files.every((file) => JSON.stringify(file.metadata) === first)
  // Each step below takes hundreds of milliseconds at 500,000 names: between them the page
  // answers input (clicks, scrolling, Cancel) instead of freezing for their sum.
  const parameters = await f.parameterCount({ signal })
  await breathe(signal)
  const stored = model.stored
  /** @type {QuantEntry[]} */
  let quantized = []
  /** @type {unknown} */
  let quantizedError = null
  try {
    quantized = await f.quantized({ signal })
  } catch (error) {
    if (!isQuantError(error)) throw error
    quantizedError = error
  }
  await breathe(signal)
  // (Rows keep `part` null: the page folds parts under their weight instead, foldParts.)
  const base = {
    ...model, rows: stored, quantized, quantizedError, parameters, shards, shardMetadata: same ? files[0]?.metadata ?? null : null,
    byteLength: shards.reduce((n, s) => n + s.byteLength, 0), headerLength: shards.reduce((n, s) => n + s.headerLength, 0),
  }
  const whole = await withQuantized(base, () => undefined, { ...model.config, refused: model.quantError }, () => breathe(signal))
  Object.assign(model, whole)
  const headers = /** @type {HeaderState} */ (model.headers)
  headers.complete = true
  return model
}

/**
 * Lets the event loop run (input, rendering) before going on; throws Aborted if `signal` was
 * aborted meanwhile.
 * @param {AbortSignal} [signal]
 */
export async function breathe(signal) {
  await new Promise((resolve) => setTimeout(resolve, 0))
  if (signal?.aborted) throw new SafetensorsError('Aborted', 'the operation was cancelled')
}

/**
 * The model with its quantized weights folded: each weight one row by logical name, its parts
 * under it. A library without quantized() (or a file with no quantized weight) changes nothing.
 * @param {Omit<Model, 'stored' | 'quantized' | 'quantError' | 'config'>} base
 * @param {() => QuantEntry[] | Promise<QuantEntry[]> | undefined} list
 * @param {Model['config'] & { refused: unknown }} config
 * @param {() => Promise<void>} [pause] awaited between blocks of the folding (foldParts)
 * @returns {Promise<Model>}
 */
async function withQuantized(base, list, config, pause) {
  const stored = base.rows
  /** @type {QuantEntry[]} */
  let entries = []
  /** @type {unknown} */
  let quantError = config.refused
  // js/overview.js lists them (quantized, quantizedError) where it does; else they are asked for.
  const listed = /** @type {{ quantized?: unknown, quantizedError?: unknown }} */ (base)
  if (Array.isArray(listed.quantized)) {
    entries = listed.quantized
    quantError ??= listed.quantizedError ?? null
  } else {
    try {
      entries = (await list()) ?? []
    } catch (error) {
      if (!isQuantError(error)) throw error
      quantError ??= error
    }
  }
  const model = { ...base, stored, quantized: entries, quantError, config: { from: config.from, used: config.used } }
  if (entries.length === 0) return model
  return { ...model, rows: await foldParts(stored, entries, pause) }
}

/**
 * The rows the list shows: stored rows that are no part of a quantized weight, and one row per
 * quantized weight (where its first part was), its parts under it in the order of its `parts`.
 * A part two weights name (detection gives none) goes under the later one. At 500,000 parts
 * that is over half a second of work and of garbage collection: `pause` is awaited between
 * blocks of it, so that the page answers input meanwhile.
 * @param {Row[]} stored @param {QuantEntry[]} entries @param {() => Promise<void>} [pause]
 * @returns {Promise<Row[]>}
 */
export async function foldParts(stored, entries, pause = async () => {}) {
  // Each stored row's weight and role, in one number (-1: no part).
  const owner = new Int32Array(stored.length).fill(-1)
  const roles = entries.map((e) => Object.keys(e.parts))
  const find = nameFinder(stored)
  entries.forEach((e, k) => roles[k].forEach((role, j) => {
    const i = find(e.parts[role])
    if (i >= 0) owner[i] = k * ROLES + j
  }))
  /** @type {Row[][]} each weight's part rows */
  const partsOf = entries.map(() => [])
  /** @type {(Row | null)[]} */
  const rows = []
  // Where each weight's row goes (its first part's place) and that part's order.
  const at = new Int32Array(entries.length).fill(-1)
  const orders = new Float64Array(entries.length)
  // The loops are plain functions, called a block at a time: a loop in the async function
  // itself measured slower here (bench/sharded-count.js).
  /** @param {number} from @param {number} to */
  const place = (from, to) => {
    for (let i = from; i < to; i++) {
      const r = stored[i]
      const code = owner[i]
      if (code < 0) {
        rows.push(r)
        continue
      }
      const k = Math.floor(code / ROLES)
      partsOf[k].push(partRow(r, entries[k].name, roles[k][code % ROLES]))
      if (at[k] < 0) {
        at[k] = rows.length
        orders[k] = r.order
        rows.push(null)
      }
    }
  }
  /** @param {number} from @param {number} to */
  const weights = (from, to) => {
    for (let k = from; k < to; k++) {
      const position = at[k]
      if (position < 0) continue
      const e = entries[k]
      const parts = partsOf[k]
      // In role order (the order of the weight's `parts`), which file order mostly is already.
      let sorted = true
      for (let j = 1; j < parts.length && sorted; j++) sorted = roles[k].indexOf(/** @type {string} */ (parts[j - 1].role)) < roles[k].indexOf(/** @type {string} */ (parts[j].role))
      if (!sorted) parts.sort((a, b) => roles[k].indexOf(/** @type {string} */ (a.role)) - roles[k].indexOf(/** @type {string} */ (b.role)))
      let byteOffset = Infinity
      let byteLength = 0
      for (const p of parts) {
        byteOffset = Math.min(byteOffset, p.byteOffset)
        byteLength += p.byteLength
      }
      const shape = e.shape.map(Number)
      rows[position] = /** @type {Row} */ ({
        name: e.name, dtype: /** @type {any} */ (e.scheme), shape, elements: shape.reduce((a, b) => a * b, 1), part: null,
        byteOffset, byteLength, shard: parts[0].shard ?? null, order: orders[k],
        quant: { scheme: e.scheme, details: e.details ?? {}, parts },
      })
    }
  }
  for (const [run, n] of /** @type {[typeof place, number][]} */ ([[place, stored.length], [weights, entries.length]])) {
    for (let from = 0; from < n; from += FOLD_BLOCK) {
      if (from > 0) await pause()
      run(from, Math.min(n, from + FOLD_BLOCK))
    }
  }
  return /** @type {Row[]} */ (rows)
}

/** Stored rows (or weights) folded between two pauses: a few tens of milliseconds' work. */
const FOLD_BLOCK = 100_000

/**
 * A part's row: the stored row's fields, written out (copying with Object.assign costs several
 * times more, about half a second at 500,000 parts), and its weight and role.
 * @param {Row} r @param {string} partOf @param {string} role @returns {Row}
 */
function partRow(r, partOf, role) {
  return {
    name: r.name, dtype: r.dtype, shape: r.shape, byteOffset: r.byteOffset, byteLength: r.byteLength, elements: r.elements,
    shard: r.shard, order: r.order, part: r.part, partOf, role,
  }
}

/** More roles than any weight has (bitsandbytes' six): a part's code is weight * ROLES + role. */
const ROLES = 16

/**
 * A Hugging Face page link (…/blob/main/x.safetensors) as its file link (…/resolve/main/…).
 * @param {string} href
 */
export function fileLink(href) {
  try {
    const url = new URL(href)
    if (url.hostname === 'huggingface.co') url.pathname = url.pathname.replace(/^(\/(?:[^/]+\/){1,3})blob\//, '$1resolve/')
    return url.href
  } catch {
    return href
  }
}

/** @param {string} text @returns {boolean} an hf:// address */
export const isHubAddress = (text) => /^hf:\/\//i.test(text.trim())

/**
 * What the user typed in the repo id field as an hf:// address: `org/repo`,
 * `org/repo@revision/path`, `datasets/org/repo/...`, an hf:// address as it is, or a link to a
 * repo or file page on huggingface.co (…/org/repo/blob/main/x.safetensors, …/tree/main, …).
 * null for another http(s) URL (to open as a URL). Anything else is passed on as `hf://text`,
 * for open() to say what is wrong with it.
 * @param {string} text
 * @returns {string | null}
 */
export function hubAddress(text) {
  const value = text.trim()
  if (isHubAddress(value)) return value
  let url = null
  try { url = /^https?:\/\//i.test(value) ? new URL(value) : null } catch { url = null }
  if (url && /(^|\.)huggingface\.co$/.test(url.hostname)) {
    const parts = url.pathname.split('/').filter(Boolean)
    const prefix = parts[0] === 'datasets' || parts[0] === 'spaces' ? `${parts.shift()}/` : ''
    const [org, repo, kind, revision, ...path] = parts
    if (org && repo) {
      const at = kind && ['blob', 'resolve', 'tree'].includes(kind) && revision ? `@${encodeURIComponent(safeDecode(revision))}` : ''
      const file = at && path.length > 0 ? `/${path.map(safeDecode).join('/')}` : ''
      return `hf://${prefix}${org}/${repo}${at}${file}`
    }
  }
  if (url) return null
  return `hf://${value.replace(/^\/+/, '')}`
}

/** @param {string} segment */
function safeDecode(segment) {
  try { return decodeURIComponent(segment) } catch { return segment }
}

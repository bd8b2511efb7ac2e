/**
 * What the page shows of an opened file: one object for a single file and a sharded set alike,
 * built with the package's public API and js/overview.js (what the CLI's inspect shows too).
 */
import { SafetensorsError, ShardedFile, blobSource, open } from '../../js/index.js'
import { overview } from '../../js/overview.js'

/**
 * @typedef {import('../../js/index.js').SafetensorsFile} SafetensorsFile
 * @typedef {import('../../js/overview.js').Row} Row
 * @typedef {import('../../js/overview.js').ShardSummary} ShardSummary
 * @typedef {import('../../js/overview.js').Overview & {
 *   label: string, source: 'url' | 'hub' | 'local', file: SafetensorsFile | ShardedFile,
 * }} Model
 */

/**
 * Opens a URL or a Hub address (hf://...): a single file, or a sharded set whose shard headers
 * are then all fetched. `token` and `endpoint` are for Hub addresses (the token goes to the Hub
 * only); `headers` for URLs.
 * @param {string} href absolute URL, or hf://org/repo[@revision][/path]
 * @param {{ fetch: (input: string, init?: RequestInit) => Promise<Response>, headers?: Record<string, string>,
 *   token?: string, endpoint?: string, signal: AbortSignal, onShards?: (done: number, total: number) => void }} options
 * @returns {Promise<Model>}
 */
export async function openUrl(href, options) {
  const hub = isHubAddress(href)
  const f = await open(href, hub
    ? { fetch: options.fetch, token: options.token, endpoint: options.endpoint, signal: options.signal }
    : { fetch: options.fetch, headers: options.headers, signal: options.signal })
  try {
    // A name with a bare % (100%.safetensors) is not percent-encoding: shown as it is.
    const label = hub ? href.replace(/^hf:\/\//i, '') : safeDecode(new URL(href).pathname.split('/').pop() || href)
    const source = hub ? 'hub' : 'url'
    if (f instanceof ShardedFile) return await shardedModel(f, label, options.signal, options.onShards, source)
    return await fileModel(f, label, source)
  } catch (error) {
    await f.close()
    throw error
  }
}

/**
 * Opens local files (from the picker or a drop), read in slices through `wrap`: one
 * .safetensors file, or a sharded set's index together with its shards, found by file name.
 * @param {File[]} files
 * @param {(source: import('../../js/index.js').ByteSource) => import('../../js/index.js').ByteSource} wrap
 * @param {AbortSignal} signal
 * @param {(done: number, total: number) => void} [onShards]
 * @returns {Promise<Model>}
 */
export async function openLocal(files, wrap, signal, onShards) {
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
    const f = await open(index, { signal, shards }).catch((error) => {
      if (missing.length === 0) throw error
      throw new SafetensorsError('ShardMissing', `${index.name} names ${missing.length === 1 ? 'a shard' : 'shards'} ` +
        `not among the files given: ${missing.join(', ')}. Choose or drop the index together with its shards.`)
    })
    try {
      return await shardedModel(f, index.name, signal, onShards, 'local')
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
  const f = /** @type {SafetensorsFile} */ (await open(wrap(blobSource(file)), { signal }))
  try {
    return await fileModel(f, file.name, 'local')
  } catch (error) {
    await f.close()
    throw error
  }
}

/**
 * @param {SafetensorsFile} f @param {string} label @param {Model['source']} source
 * @returns {Promise<Model>}
 */
async function fileModel(f, label, source) {
  return { label, source, file: f, ...await overview(f) }
}

/**
 * Reads every shard's header and joins them into one table (js/overview.js, as the CLI's inspect).
 * @param {ShardedFile} f @param {string} label @param {AbortSignal} signal
 * @param {((done: number, total: number) => void) | undefined} onShards
 * @param {Model['source']} source
 * @returns {Promise<Model>}
 */
async function shardedModel(f, label, signal, onShards, source) {
  const o = await overview(f, { signal, onProgress: onShards && (({ loaded, total }) => onShards(loaded, total)) })
  return { label, source, file: f, ...o }
}

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

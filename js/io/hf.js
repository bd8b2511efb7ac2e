/**
 * Hugging Face Hub addresses: `hf://org/repo/path/in/repo.safetensors`, `hf://org/repo@rev/...`,
 * and `hf://org/repo` alone (its model.safetensors, else its model.safetensors.index.json, as
 * @huggingface/hub looks for them); `hf://datasets/org/repo/...` and `hf://spaces/...` too, as
 * huggingface_hub's HfFileSystem writes them. Each becomes the endpoint's `/resolve/` URL, which
 * the Hub redirects to a signed CDN URL (see http.js for how reads follow it).
 *
 * A `token` is sent as `Authorization: Bearer` to the endpoint's origin only, never to the CDN.
 */
import { SafetensorsError } from '../errors.js'

export const HF_ENDPOINT = 'https://huggingface.co'
const SINGLE = 'model.safetensors'
const INDEX = 'model.safetensors.index.json'

/**
 * @typedef {{ type: 'model' | 'dataset' | 'space', repo: string, revision: string, path: string | null }} HfRef
 * @typedef {{ endpoint?: string, token?: string, headers?: HeadersInit } & Record<string, any>} HfOptions
 * @typedef {(url: URL, options: Record<string, any>) => Promise<any>} UrlOpener
 */

/**
 * @param {string} src
 * @returns {HfRef}
 */
export function parseHfUrl(src) {
  const bad = (/** @type {string} */ why) => new SafetensorsError('InvalidArgument', `${src} is not a Hub address ` +
    `(${why}): write hf://org/repo, hf://org/repo@revision/path/to/file.safetensors or hf://datasets/org/repo/...`)
  const rest = src.replace(/^hf:\/\//i, '').replace(/[?#].*$/, '')
  const parts = rest.split('/')
  /** @type {HfRef['type']} */
  let type = 'model'
  if (parts[0] === 'datasets' || parts[0] === 'spaces') type = /** @type {'dataset' | 'space'} */ (parts.shift()?.slice(0, -1))
  if (parts.length < 2 || !parts[0] || !parts[1]) throw bad('no org/repo')
  const [org, repoAt] = parts
  const at = repoAt.indexOf('@')
  const name = at < 0 ? repoAt : repoAt.slice(0, at)
  let revision = 'main'
  if (at >= 0) {
    try { revision = decodeURIComponent(repoAt.slice(at + 1)) } catch { throw bad('a revision that is not URL-encoded text') }
  }
  if (!name || !revision) throw bad('an empty repo name or revision')
  // As the Hub names them (huggingface_hub's validate_repo_id): a name of dots, or with "..",
  // would be a "." or ".." segment of the URL, leaving the endpoint's path.
  const nameOk = (/** @type {string} */ n) => /^\w(?:[\w.-]*\w)?$/.test(n) && !n.includes('..')
  if (!nameOk(org) || !nameOk(name)) throw bad('org and repo are letters, digits, ".", "-" and "_", starting and ending with a letter or digit, without ".."')
  // The revision is sent as one encoded segment, but a server that decodes its slashes would
  // resolve a "." or ".." in it.
  if (revision.split('/').some((s) => s === '.' || s === '..')) throw bad('a revision with a "." or ".." segment')
  const path = parts.slice(2).join('/')
  // The path is sent as written, encoded; "%2e%2e" is refused as well, for a server that decodes twice.
  if (path !== '' && path.split('/').some((s) => s === '' || /^(?:\.|%2e){1,2}$/i.test(s)))
    throw bad('a path with an empty, "." or ".." segment')
  return { type, repo: `${org}/${name}`, revision, path: path === '' ? null : path }
}

/**
 * The `/resolve/` URL of a file of a repo.
 * @param {HfRef} ref @param {string} path @param {string} endpoint
 */
export function resolveHfUrl(ref, path, endpoint) {
  const base = new URL(endpoint.endsWith('/') ? endpoint : `${endpoint}/`)
  const prefix = ref.type === 'model' ? '' : `${ref.type}s/`
  const file = path.split('/').map(encodeURIComponent).join('/')
  return new URL(`${prefix}${ref.repo}/resolve/${encodeURIComponent(ref.revision)}/${file}`, base)
}

/**
 * Opens a Hub address through `openUrl` (which opens an http(s) URL, a sharded index or a file).
 * A bare repo is looked up as model.safetensors, then model.safetensors.index.json; `prefer`
 * 'sharded' (openSharded) looks for the index first.
 * @param {string} src @param {HfOptions} options @param {UrlOpener} openUrl
 * @param {'file' | 'sharded'} [prefer]
 */
export async function openHf(src, options, openUrl, prefer) {
  const ref = parseHfUrl(src)
  const { endpoint = HF_ENDPOINT, token, ...rest } = options
  let base
  try {
    base = new URL(endpoint)
  } catch {
    throw new SafetensorsError('InvalidArgument', `endpoint ${JSON.stringify(endpoint)} is not a URL`)
  }
  const headers = new Headers(rest.headers)
  if (token && !headers.has('authorization')) headers.set('Authorization', `Bearer ${token}`)
  const http = { ...rest, headers }
  if (ref.path !== null) return openUrl(resolveHfUrl(ref, ref.path, base.href), http)
  /** @type {SafetensorsError | null} */
  let last = null
  for (const path of prefer === 'sharded' ? [INDEX, SINGLE] : [SINGLE, INDEX]) {
    try {
      return await openUrl(resolveHfUrl(ref, path, base.href), http)
    } catch (error) {
      if (/** @type {any} */ (error)?.code !== 'NotFound') throw error
      last = /** @type {SafetensorsError} */ (error)
    }
  }
  // The Hub's own words say which: an unknown revision ("Invalid rev id"), or no such file.
  const said = last?.body ? ` (the Hub said: ${last.body.replace(/\s+/g, ' ').trim()})` : ''
  throw new SafetensorsError('NotFound', `${src}: the ${ref.type} ${ref.repo} has neither ${SINGLE} nor ${INDEX} ` +
    `at revision ${ref.revision}${said}; name the file: hf://${ref.repo}/path/to/file.safetensors`,
  { status: 404, body: last?.body ?? null, cause: last })
}

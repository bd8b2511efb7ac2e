/**
 * The model's config.json, read beside the checkpoint so that open() gets its
 * `quantization_config` (block size, bits, group size, format version): fetched from the same
 * folder URL, from the same repo folder and revision for a Hub address, or taken from the files
 * dropped or chosen together with the checkpoint. A missing config.json (404, or text that is
 * not JSON) is normal and says nothing; another failure (the network, a 500, access denied) is a
 * note on the page, never an error of the file: everything the library can infer from the
 * tensors still works without it.
 */
import { parseHfUrl, resolveHfUrl } from '../../js/io/hf.js'

export const CONFIG_NAME = 'config.json'

/**
 * @typedef {{ config: Record<string, unknown> | null, from: string | null, note: string | null }} ConfigRead
 *   config: the parsed object (null: none); from: where it was read, for the summary; note: a
 *   failure to show as a note
 */

/** No config, nothing to say. @type {ConfigRead} */
const NONE = Object.freeze({ config: null, from: null, note: null })

/**
 * The URL of config.json beside a file or index URL (null when `href` is no http(s) URL).
 * @param {string} href an absolute URL
 */
export function configUrlBeside(href) {
  try {
    const url = new URL(href)
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return null
    url.search = ''
    url.hash = ''
    return new URL(CONFIG_NAME, url).href
  } catch {
    return null
  }
}

/**
 * The `/resolve/` URL of config.json for a Hub address: in the folder of the file it names, at
 * the same revision; the repo's root when it names no file.
 * @param {string} address hf://org/repo[@revision][/path]
 * @param {string} endpoint
 */
export function hubConfigUrl(address, endpoint) {
  try {
    const ref = parseHfUrl(address)
    const folder = ref.path === null ? '' : ref.path.slice(0, ref.path.lastIndexOf('/') + 1)
    return resolveHfUrl(ref, folder + CONFIG_NAME, endpoint).href
  } catch {
    return null
  }
}

/**
 * Fetches config.json. Never throws (an abort excepted): a 404 or a body that is not a JSON
 * object gives no config silently; anything else, a note.
 * @param {string} url
 * @param {{ headers?: Record<string, string>, signal?: AbortSignal }} [options]
 * @returns {Promise<ConfigRead>}
 */
export async function fetchConfig(url, options = {}) {
  let response
  try {
    response = await fetch(url, { headers: options.headers, signal: options.signal, credentials: 'omit', cache: 'no-store' })
  } catch (error) {
    if (options.signal?.aborted) throw error
    return { ...NONE, note: `${CONFIG_NAME} beside the file could not be fetched (${error instanceof Error ? error.message : String(error)}): quantization settings are inferred from the tensors alone.` }
  }
  if (response.status === 404 || response.status === 410) {
    await response.body?.cancel().catch(() => {})
    return NONE
  }
  if (!response.ok) {
    await response.body?.cancel().catch(() => {})
    return { ...NONE, note: `${CONFIG_NAME} beside the file could not be read (HTTP ${response.status}): quantization settings are inferred from the tensors alone.` }
  }
  let text
  try {
    text = await response.text()
  } catch (error) {
    if (options.signal?.aborted) throw error
    return { ...NONE, note: `${CONFIG_NAME} beside the file could not be read (${error instanceof Error ? error.message : String(error)}): quantization settings are inferred from the tensors alone.` }
  }
  const config = parseObject(text)
  return config ? { config, from: url, note: null } : NONE
}

/**
 * The config.json among files dropped or chosen together, and the other files. One that is not
 * a JSON object is left out with a note (it was given on purpose).
 * @param {File[]} files
 * @returns {Promise<{ files: File[], read: ConfigRead }>}
 */
export async function configAmong(files) {
  const file = files.find((f) => f.name === CONFIG_NAME)
  if (!file) return { files, read: NONE }
  const rest = files.filter((f) => f !== file)
  const config = parseObject(await file.text().catch(() => ''))
  if (!config) return { files: rest, read: { ...NONE, note: `The ${CONFIG_NAME} given is not a JSON object: quantization settings are inferred from the tensors alone.` } }
  return { files: rest, read: { config, from: `${CONFIG_NAME} (local)`, note: null } }
}

/**
 * What open() takes as `quantization`: the whole config.json when it has a
 * `quantization_config` (undefined otherwise: a model that is not quantized, or one whose
 * settings are inferred).
 * @param {Record<string, unknown> | null} config
 */
export function quantizationOption(config) {
  const q = config?.quantization_config
  return q !== null && typeof q === 'object' && !Array.isArray(q) ? config ?? undefined : undefined
}

/** @param {string} text @returns {Record<string, unknown> | null} */
function parseObject(text) {
  try {
    const value = JSON.parse(text)
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? value : null
  } catch {
    return null
  }
}

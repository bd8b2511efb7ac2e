/**
 * What an HTTP answer means for a ranged reader: its Content-Range and whether the file behind
 * it changed. The coded error for a failed status or a failed request, with what the server said
 * and the likely fix, is http-failures.js's, loaded on a first failure.
 */
import { SafetensorsError } from '../errors.js'

/**
 * @typedef {{ href: string, byteLength: number, etag: string | null, lastModified: string | null,
 *   credentialed: boolean }} Known  what the reader learnt from the first answer
 */

/** A failure worth retrying; `error` is what is reported when the retries run out. */
export class Transient {
  /** @param {SafetensorsError} error @param {number | null} [retryAfter] ms the server asked for */
  constructor(error, retryAfter = null) { this.error = error; this.retryAfter = retryAfter }
}

/**
 * The Content-Range of a 206 (or 416) answer; InvalidContentRange when missing or unreadable.
 * @param {string} href @param {Response} response
 * @returns {{ start: number, end: number, total: number | null }} start and end -1 for `bytes *\/N`
 */
export function contentRange(href, response) {
  const header = response.headers.get('content-range')
  if (header === null)
    throw new SafetensorsError('InvalidContentRange', `${href}: a ${response.status} answer without a ` +
      'readable Content-Range header. A cross-origin server must send "Access-Control-Expose-Headers: ' +
      'Content-Range, ETag, Content-Length", otherwise the browser hides it', { status: response.status })
  const m = /^\s*bytes\s+(?:(\d+)-(\d+)|\*)\/(\d+|\*)\s*$/i.exec(header)
  const [start, end, total] = [m?.[1] ?? '-1', m?.[2] ?? '-1', m?.[3] ?? ''].map((v) => (v === '*' ? null : Number(v)))
  if (!m || ![start, end, total].every((v) => v === null || Number.isSafeInteger(v)))
    throw new SafetensorsError('InvalidContentRange', `${href}: cannot parse Content-Range ${JSON.stringify(header)}`,
      { status: response.status })
  return { start: /** @type {number} */ (start), end: /** @type {number} */ (end), total }
}

/**
 * Throws ContentEncoded for a ranged answer whose body is compressed: its Content-Range counts
 * compressed bytes (Apache's force-gzip does this), which are not the file's.
 * @param {string} href @param {Response} response
 */
export function refuseEncoded(href, response) {
  const encoding = response.headers.get('content-encoding')?.trim().toLowerCase()
  if (!encoding || encoding === 'identity') return
  throw new SafetensorsError('ContentEncoded', `${href}: the server compressed the byte range it sent ` +
    `(Content-Encoding: ${encoding}), and the ranges of a compressed body are not ranges of the file. Turn ` +
    'compression off for .safetensors files on the server (Apache: drop force-gzip, or "SetEnvIfNoCase ' +
    'Request_URI \\.safetensors$ no-gzip"; nginx: keep application/octet-stream out of gzip_types; a CDN: ' +
    'do not compress this file type)', { status: response.status })
}

/** A 200 body's length, when the headers say it (a compressed body's length is not the file's). */
export function declaredLength(/** @type {Response} */ response) {
  const encoding = response.headers.get('content-encoding')
  const length = response.headers.get('content-length')
  if ((encoding && encoding !== 'identity') || length === null || !/^\d+$/.test(length)) return null
  return Number(length)
}

/** SourceChanged when the answer's validators differ from the first answer's.
 * @param {Known} known @param {Response} response */
export function checkValidators(known, response) {
  const etag = response.headers.get('etag')
  const modified = response.headers.get('last-modified')
  const weak = (/** @type {string} */ tag) => tag.replace(/^W\//, '')
  const changed = known.etag !== null && etag !== null ? weak(etag) !== weak(known.etag)
    : known.lastModified !== null && modified !== null && modified !== known.lastModified
  if (changed)
    throw new SafetensorsError('SourceChanged', `${known.href} changed while being read (ETag ${known.etag} -> ` +
      `${etag}, Last-Modified ${known.lastModified} -> ${modified})`, { status: response.status })
}

/** SourceChanged when an answer gives another file length than the first answer did.
 * @param {Known} known @param {number | null} total @param {Response} response */
export function checkTotal(known, total, response) {
  if (total !== null && total !== known.byteLength)
    throw new SafetensorsError('SourceChanged', `${known.href}: the file was ${known.byteLength} bytes, now ${total}`,
      { status: response.status })
}

/** A URL without its query: a signed URL's query is a credential of sorts, kept out of messages.
 * @param {string} href */
export function plainUrl(href) {
  try {
    const url = new URL(href)
    return url.origin + url.pathname
  } catch { return href }
}

/** @param {string} href */
export function safeOrigin(href) {
  try { return new URL(href).origin } catch { return null }
}

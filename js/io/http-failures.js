/**
 * What follows a failure: the coded error for a failed status or a failed request, with what
 * the server said and the likely fix, and the renewal of a signed URL that expired. Only a
 * failure needs it: http.js loads it then (a chunk of its own in a bundle).
 */
import { SafetensorsError } from '../errors.js'
import {
  Transient, checkTotal, checkValidators, contentRange, declaredLength, plainUrl, refuseEncoded, safeOrigin,
} from './http-answers.js'
import { request, retrying } from './http.js'

/** @typedef {import('./http-answers.js').Known} Known @typedef {import('./http.js').State} State */

const MAX_RETRY_AFTER = 60_000
/** How much of an error body is kept (HttpError's `body`) and read at most. */
const BODY_EXCERPT = 200
const BODY_READ_LIMIT = 4096

/**
 * The error for a status that is not an answer to the request (transient ones wrapped in
 * Transient), with what the server said: the X-Error-Message header, or the start of a text body
 * (an S3 XML error, a JSON error). An answer from another origin than the file's URL (a redirect
 * target, a CDN) is named, and gets no hint about credentials: they are never sent there.
 * Consumes the body.
 * @param {Known} known @param {Response} response
 */
export async function failedStatus(known, response) {
  const status = response.status
  const said = await whatTheServerSaid(response)
  const elsewhere = response.url !== '' && safeOrigin(response.url) !== safeOrigin(known.href)
  const where = elsewhere ? `${known.href} (at ${plainUrl(response.url)})` : known.href
  const text = `${where}: HTTP ${status} ${response.statusText}`.trim() + (said.summary ? `: ${said.summary}` : '')
  const details = { status, body: said.body }
  if (status === 404 || status === 410) return new SafetensorsError('NotFound', text, details)
  const auth = (status === 401 || status === 403) && !known.credentialed && !elsewhere
    ? ' (if the file needs permission, pass credentials: options.token for the Hub, or options.headers, e.g. Authorization)' : ''
  const error = new SafetensorsError('HttpError', text + auth, details)
  if (status !== 408 && status !== 429 && !(status >= 500 && status !== 501 && status !== 505)) return error
  const retryAfter = parseRetryAfter(response.headers.get('retry-after'))
  if (retryAfter !== null && retryAfter > MAX_RETRY_AFTER)
    return new SafetensorsError('HttpError', `${text}: the server asks to retry after ${Math.round(retryAfter / 1000)} s`, details)
  return new Transient(error, retryAfter)
}

/**
 * @param {Response} response
 * @returns {Promise<{ body: string | null, summary: string | null }>}
 */
async function whatTheServerSaid(response) {
  const header = response.headers.get('x-error-message')
  const type = response.headers.get('content-type') ?? ''
  let body = null
  if (response.body && /^(text\/|application\/(.*\+)?(xml|json)|$)/i.test(type)) {
    body = (await readText(response, BODY_READ_LIMIT)).slice(0, BODY_EXCERPT)
  } else {
    await response.body?.cancel().catch(() => {})
  }
  const s3 = body && /<Code>([^<]*)<\/Code>[\s\S]*?<Message>([^<]*)<\/Message>/.exec(body)
  const summary = header ?? (s3 ? `${s3[1]}: ${s3[2]}` : body?.replace(/\s+/g, ' ').trim() || null)
  return { body, summary: summary === null ? null : summary.slice(0, BODY_EXCERPT) }
}

/** Up to `limit` bytes of a body as text; the rest is cancelled.
 * @param {Response} response @param {number} limit */
async function readText(response, limit) {
  const reader = /** @type {ReadableStream<Uint8Array>} */ (response.body).getReader()
  /** @type {Uint8Array[]} */
  const parts = []
  let n = 0
  try {
    while (n < limit) {
      const { done, value } = await reader.read()
      if (done) break
      parts.push(value)
      n += value.length
    }
  } catch {
    // What arrived is enough to describe the error.
  } finally {
    reader.cancel().catch(() => {})
  }
  const all = new Uint8Array(Math.min(n, limit))
  let at = 0
  for (const part of parts) {
    const piece = part.subarray(0, all.length - at)
    all.set(piece, at)
    at += piece.length
  }
  return new TextDecoder().decode(all)
}

/**
 * Seconds, or an HTTP date (which names its month: Date.parse alone takes "-5" for a date in
 * 2001); anything else (a negative, a fraction, junk) is no Retry-After at all.
 * @param {string | null} value @returns {number | null} milliseconds
 */
function parseRetryAfter(value) {
  if (value === null) return null
  if (/^\s*\d+\s*$/.test(value)) return Number(value) * 1000
  const date = /[a-z]{3}/i.test(value) ? Date.parse(value) : NaN
  return Number.isNaN(date) ? null : Math.max(0, date - Date.now())
}

/** Node's codes for failures that another try would not mend: a refused connection, a name
 * that does not resolve, a certificate that does not verify. */
const PERMANENT = /^(ECONNREFUSED|ENOTFOUND|EAI_NONAME|EAI_FAIL|EAI_NODATA|ERR_INVALID_URL|ERR_TLS_.*|ERR_SSL_.*|.*CERT.*|.*SELF_SIGNED.*|UNABLE_TO_.*)$/

/**
 * A failed request (fetch rejected, or its body broke): the underlying cause named (Node gives
 * a code such as ECONNREFUSED deep in `cause`; a browser gives "Failed to fetch" and nothing
 * else, where a cross-origin URL most often means CORS).
 * @param {unknown} error @param {string} href @param {string} what
 * @returns {{ message: string, permanent: boolean }}
 */
export function describeFailure(error, href, what) {
  const top = /** @type {Error} */ (error)?.message ?? String(error)
  // Down the causes: the first with a code, else the deepest message (undici's reason under
  // "fetch failed").
  let reason = null
  for (let e = /** @type {any} */ (error), depth = 0; e && typeof e === 'object' && depth < 8; e = e.cause, depth++) {
    const message = typeof e.message === 'string' && e.message !== '' ? e.message : null
    if (typeof e.code === 'string' && /^[A-Z][A-Z0-9_]+$/.test(e.code)) {
      const said = message && message !== e.code ? `${e.code} (${message})` : e.code
      return { message: `${what}: ${said}`, permanent: PERMANENT.test(e.code) }
    }
    if (depth > 0 && message) reason = message
  }
  // Node's fetch refuses the ports the Fetch standard blocks (6000, 6665-6669, ...) with a bare
  // "bad port" under "fetch failed"; a browser refuses them too, saying nothing.
  if (reason === 'bad port') {
    let port = ''
    try { port = new URL(href).port } catch { /* the message goes without it */ }
    return {
      message: `${what}: fetch refuses to connect to port ${port}, one of the ports the Fetch standard ` +
        'blocks, as browsers do; serve the file on another port',
      permanent: true,
    }
  }
  const page = /** @type {any} */ (globalThis).location?.origin
  const origin = safeOrigin(href)
  if (error instanceof TypeError && typeof page === 'string' && origin !== null && origin !== page) {
    return {
      message: `${what}: ${top}. This page is on ${page} and the file on ${origin}; the likely cause is CORS: ` +
        `that server must answer with "Access-Control-Allow-Origin: ${page}" (or *), allow the Range header ` +
        '(and Authorization or If-Range when sent) in "Access-Control-Allow-Headers", and send "Access-Control-' +
        'Expose-Headers: Content-Range, Content-Length, ETag, Last-Modified"',
      permanent: false,
    }
  }
  return { message: `${what}: ${reason && reason !== top ? `${top} (${reason})` : top}`, permanent: false }
}

/**
 * The final URL answered `stale` with 401/403/410 (a signature that expired): resolves the
 * original URL again, once for all the reads that saw it fail, and checks the file is the same.
 * @param {State} state @param {string} stale the URL that failed
 */
export async function renew(state, stale) {
  if (state.readHref !== stale) return
  state.renewing ??= retrying(state, undefined, 'the file again (its URL expired)', async () => {
    const response = await request(state, state.href, { Range: 'bytes=0-0' }, undefined)
    try {
      if (response.status !== 206 && response.status !== 200) throw await failedStatus(state, response)
      if (response.status === 206) {
        refuseEncoded(state.href, response)
        checkTotal(state, contentRange(state.href, response).total, response)
      } else {
        checkTotal(state, declaredLength(response), response)
      }
      checkValidators(state, response)
      state.readHref = response.url || state.href
    } finally {
      if (!response.bodyUsed) await new Response(response.body).arrayBuffer().catch(() => {})
    }
  }).finally(() => { state.renewing = null })
  await state.renewing
}

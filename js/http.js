/**
 * A file on an HTTP(S) server as a ByteSource, read with Range requests through `fetch` (any
 * platform: nothing here is Node-only).
 *
 * The first request asks for `bytes=0-(P-1)` and learns the file length from Content-Range; the
 * bytes that arrive are kept, so the 8-byte length, a header of up to P - 8 bytes and whatever
 * follows it cost that one round trip, and are never downloaded again. Later reads stream each
 * range's body chunk by chunk to the caller (the reader copies each chunk into the wasm heap).
 *
 * Every response is checked before its bytes are used: the Content-Range must be the range asked
 * for and the total the length learnt first; the ETag (else Last-Modified) must not change, and a
 * strong ETag is sent as If-Range. A transient failure (network error, 408, 429, 5xx, a body cut
 * short) is retried with backoff, resuming after the bytes already received.
 *
 * A cross-origin server must send `Access-Control-Expose-Headers: Content-Range, ETag,
 * Content-Length, Last-Modified, Retry-After` (and allow the Range, If-Range and Authorization
 * request headers in preflights); without it a browser hides Content-Range from the script.
 */
import { SafetensorsError, abortError, throwIfAborted } from './errors.js'
import { checkRange } from './sources.js'

/** P. Real headers: LLM shards 10-100 KB, SD 1.5 and Whisper ~120 KB, Flux ~80 KB; SDXL single
 * files (~280 KB) take the follow-up. 256 KiB costs ~20 ms at 100 Mbit/s, under one round trip;
 * every open pays it, while only the rare larger header pays the second round trip. */
export const INITIAL_FETCH_SIZE = 256 * 1024
/** Ranges closer than this are one request: about the bandwidth-delay product of a 100 Mbit/s
 * link at 40 ms, so streaming the gap costs no more than another round trip. */
export const MERGE_GAP = 512 * 1024
/**
 * Requests in flight per read. Every span of a read at once, so any set of up to 64 far-apart
 * tensors costs one round trip after the header: Node and HTTP/2 origins take them together,
 * and a browser on HTTP/1.1 queues what passes its 6 connections per host itself, which is no
 * slower than queueing here.
 */
export const CONCURRENCY = 64
export const RETRIES = 3
export const RETRY_DELAY = 250
/** A server that ignores Range: files up to this size are kept whole in memory. */
export const WHOLE_FILE_THRESHOLD = 8 * 1024 * 1024
const MAX_BACKOFF = 8000
const MAX_RETRY_AFTER = 60_000

/**
 * @typedef {{
 *   fetch?: (input: string, init: RequestInit) => Promise<Response>,
 *   headers?: HeadersInit, requestInit?: RequestInit, signal?: AbortSignal,
 *   initialFetchSize?: number, concurrency?: number, mergeGap?: number,
 *   retries?: number, retryDelay?: number, allowFullDownload?: boolean,
 *   wholeFileThreshold?: number, ifRange?: boolean,
 * }} HttpOptions
 * @typedef {{ href: string, fetch: NonNullable<HttpOptions['fetch']>, init: RequestInit,
 *   headers: Headers, retries: number, retryDelay: number, allowFullDownload: boolean,
 *   ifRange: boolean, byteLength: number, etag: string | null, lastModified: string | null,
 *   rangeIgnored: boolean }} State
 * @typedef {import('./sources.js').ByteSource & { url: string, readonly cachedBytes: number,
 *   releaseCache(): void, close(): void }} UrlSource
 */

/** A failure worth retrying; `error` is what is reported when the retries run out. */
class Transient {
  /** @param {SafetensorsError} error @param {number | null} [retryAfter] ms the server asked for */
  constructor(error, retryAfter = null) { this.error = error; this.retryAfter = retryAfter }
}

/** @param {unknown} src @param {string} [base] resolves relative strings (browsers: the page) */
export function httpUrl(src, base) {
  let url = null
  if (src instanceof URL) url = src
  else if (typeof src === 'string') {
    try { url = new URL(src, /^[a-z][a-z0-9+.-]*:/i.test(src) ? undefined : base) } catch { url = null }
  }
  return url && (url.protocol === 'http:' || url.protocol === 'https:') ? url : null
}

/** Opens http(s) URLs (strings or URL objects) for `open`. @type {import('./open.js').Resolver} */
export async function resolveUrl(src, options) {
  const url = httpUrl(src)
  return url ? { source: await urlSource(url, options), close: true } : null
}

/** Performs the first request and returns a source whose byteLength is known.
 * @param {string | URL} url @param {HttpOptions} [options] @returns {Promise<UrlSource>} */
export async function urlSource(url, options = {}) {
  const state = makeState(String(url), options)
  const size = Math.max(8, options.initialFetchSize ?? INITIAL_FETCH_SIZE)
  if (!Number.isSafeInteger(size)) throw new SafetensorsError('InvalidArgument', `initialFetchSize ${size} is not an integer`)
  const threshold = options.wholeFileThreshold ?? WHOLE_FILE_THRESHOLD
  const prefix = await retrying(state, options.signal, `the first ${size} bytes`, async () => {
    const response = await request(state, { Range: `bytes=0-${size - 1}` }, options.signal)
    try {
      return await firstResponse(state, response, size, threshold)
    } finally {
      if (!response.bodyUsed) response.body?.cancel().catch(() => {})
    }
  })
  return makeSource(state, prefix, options)
}

/** The whole body of a URL (a sharded index), with the same retries and error codes.
 * @param {string | URL} url @param {HttpOptions} [options] */
export async function fetchBytes(url, options = {}) {
  const state = makeState(String(url), options)
  return retrying(state, options.signal, 'the file', async () => {
    const response = await request(state, {}, options.signal)
    if (response.status !== 200) throw await failedStatus(state, response)
    return new Uint8Array(await response.arrayBuffer())
  })
}

/** @param {string} href @param {HttpOptions} options @returns {State} */
function makeState(href, options) {
  const fetchFn = options.fetch ?? globalThis.fetch
  if (typeof fetchFn !== 'function')
    throw new SafetensorsError('UnsupportedSource', `cannot open ${href}: no fetch on this platform; pass options.fetch`)
  const init = options.requestInit ?? {}
  const headers = new Headers(init.headers)
  new Headers(options.headers).forEach((value, key) => headers.set(key, value))
  const location = /** @type {{ origin?: string } | undefined} */ (/** @type {any} */ (globalThis).location)
  // If-Range is not a CORS-safelisted header: cross-origin in a browser it would cost a preflight.
  const crossOrigin = typeof location?.origin === 'string' && new URL(href).origin !== location.origin
  return {
    // Called as a plain function: browsers throw "Illegal invocation" when fetch is called as a
    // method of anything but the global object (`state.fetch(...)` would be such a call).
    href, fetch: (input, init) => fetchFn(input, init), init, headers,
    retries: options.retries ?? RETRIES, retryDelay: options.retryDelay ?? RETRY_DELAY,
    allowFullDownload: options.allowFullDownload ?? false, ifRange: options.ifRange ?? !crossOrigin,
    byteLength: 0, etag: null, lastModified: null, rangeIgnored: false,
  }
}

/** @param {State} state @param {Record<string, string>} extra @param {AbortSignal | undefined} signal */
function request(state, extra, signal) {
  const headers = new Headers(state.headers)
  for (const [key, value] of Object.entries(extra)) headers.set(key, value)
  return state.fetch(state.href, { ...state.init, method: 'GET', headers, signal })
}

/** Runs `attempt` until it succeeds, fails for good, or the retries run out.
 * @template T @param {State} state @param {AbortSignal | undefined} signal @param {string} what
 * @param {() => Promise<T>} attempt @returns {Promise<T>} */
async function retrying(state, signal, what, attempt) {
  for (let failures = 0; ; failures++) {
    throwIfAborted(signal)
    try {
      return await attempt()
    } catch (error) {
      await pause(state, error, failures, signal, what, false)
    }
  }
}

/** After a failed attempt: waits before the next one, or throws what to report.
 * @param {State} state @param {unknown} error @param {number} failures so far, this one excluded
 * @param {AbortSignal | undefined} signal @param {string} what @param {boolean} midBody */
async function pause(state, error, failures, signal, what, midBody) {
  if (signal?.aborted) throw abortError(signal)
  if (error instanceof SafetensorsError) throw error
  const reason = /** @type {Error} */ (error)?.message ?? String(error)
  const transient = error instanceof Transient ? error : new Transient(new SafetensorsError(midBody ? 'ShortRead' : 'NetworkError',
    `${state.href}: ${midBody ? 'the connection broke while reading' : 'could not request'} ${what}: ${reason}`, { cause: error }))
  if (failures >= state.retries) throw transient.error
  const backoff = Math.min(MAX_BACKOFF, state.retryDelay * 2 ** failures) * (0.5 + Math.random() / 2)
  await sleep(transient.retryAfter ?? backoff, signal)
}

/** @param {number} ms @param {AbortSignal | undefined} signal */
function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    const done = () => { signal?.removeEventListener('abort', onAbort); resolve(undefined) }
    const timer = setTimeout(done, ms)
    const onAbort = () => { clearTimeout(timer); reject(abortError(signal)) }
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}

/** The error for any other status (transient ones wrapped in Transient); cancels the body.
 * @param {State} state @param {Response} response */
async function failedStatus(state, response) {
  await response.body?.cancel().catch(() => {})
  const status = response.status
  const text = `${state.href}: HTTP ${status} ${response.statusText}`.trim()
  if (status === 404 || status === 410) return new SafetensorsError('NotFound', text)
  const auth = status === 401 || status === 403 ? ' (pass credentials in options.headers, e.g. Authorization)' : ''
  const error = new SafetensorsError('HttpError', text + auth)
  if (status !== 408 && status !== 429 && !(status >= 500 && status !== 501 && status !== 505)) return error
  const retryAfter = parseRetryAfter(response.headers.get('retry-after'))
  if (retryAfter !== null && retryAfter > MAX_RETRY_AFTER)
    return new SafetensorsError('HttpError', `${text}: the server asks to retry after ${Math.round(retryAfter / 1000)} s`)
  return new Transient(error, retryAfter)
}

/** @param {string | null} value @returns {number | null} milliseconds */
function parseRetryAfter(value) {
  if (value === null) return null
  if (/^\s*\d+\s*$/.test(value)) return Number(value) * 1000
  const date = Date.parse(value)
  return Number.isNaN(date) ? null : Math.max(0, date - Date.now())
}

/**
 * The Content-Range of a 206 (or 416) answer; InvalidContentRange when missing or unreadable.
 * @param {State} state @param {Response} response
 * @returns {{ start: number, end: number, total: number | null }} start and end -1 for `bytes *\/N`
 */
function contentRange(state, response) {
  const header = response.headers.get('content-range')
  if (header === null)
    throw new SafetensorsError('InvalidContentRange', `${state.href}: a ${response.status} answer without a ` +
      'readable Content-Range header. A cross-origin server must send "Access-Control-Expose-Headers: ' +
      'Content-Range, ETag, Content-Length", otherwise the browser hides it')
  const m = /^\s*bytes\s+(?:(\d+)-(\d+)|\*)\/(\d+|\*)\s*$/i.exec(header)
  const [start, end, total] = [m?.[1] ?? '-1', m?.[2] ?? '-1', m?.[3] ?? ''].map((v) => (v === '*' ? null : Number(v)))
  if (!m || ![start, end, total].every((v) => v === null || Number.isSafeInteger(v)))
    throw new SafetensorsError('InvalidContentRange', `${state.href}: cannot parse Content-Range ${JSON.stringify(header)}`)
  return { start: /** @type {number} */ (start), end: /** @type {number} */ (end), total }
}

/** A 200 body's length, when the headers say it (a compressed body's length is not the file's). */
function declaredLength(/** @type {Response} */ response) {
  const encoding = response.headers.get('content-encoding')
  const length = response.headers.get('content-length')
  if ((encoding && encoding !== 'identity') || length === null || !/^\d+$/.test(length)) return null
  return Number(length)
}

/** Throws SourceChanged when the response's validators differ from the first response's. */
function checkValidators(/** @type {State} */ state, /** @type {Response} */ response) {
  const etag = response.headers.get('etag')
  const modified = response.headers.get('last-modified')
  const weak = (/** @type {string} */ tag) => tag.replace(/^W\//, '')
  const changed = state.etag !== null && etag !== null ? weak(etag) !== weak(state.etag)
    : state.lastModified !== null && modified !== null && modified !== state.lastModified
  if (changed)
    throw new SafetensorsError('SourceChanged', `${state.href} changed while being read (ETag ${state.etag} -> ` +
      `${etag}, Last-Modified ${state.lastModified} -> ${modified})`)
}

/** Reads a body into one buffer: `limit` bytes at most, fewer once `stop(chunks, n)` names a
 * length; cancels the rest. A broken connection ends the read with what arrived.
 * @param {Response} response @param {number} limit
 * @param {(chunks: Uint8Array[], n: number) => number | null} [stop]
 * @returns {Promise<{ bytes: Uint8Array, complete: boolean, broken: unknown }>} */
async function readBody(response, limit, stop) {
  /** @type {Uint8Array[]} */
  const chunks = []
  let n = 0
  let want = limit
  let done = false
  /** @type {unknown} */
  let broken = null
  const reader = /** @type {ReadableStream<Uint8Array>} */ (response.body ?? new Blob().stream()).getReader()
  try {
    while (n < want && !done) {
      const r = await reader.read()
      if (!(done = r.done)) {
        chunks.push(r.value)
        n += r.value.length
        want = Math.min(limit, stop?.(chunks, n) ?? limit)
      }
    }
  } catch (error) {
    broken = error
  } finally {
    if (!done) reader.cancel().catch(() => {})
  }
  return { bytes: concat(chunks, Math.min(n, want)), complete: done && n <= want, broken }
}

/** The first `n` bytes of `chunks` in one array. @param {Uint8Array[]} chunks @param {number} n */
function concat(chunks, n) {
  const out = new Uint8Array(n)
  for (let i = 0, at = 0; at < n; at += chunks[i++].length) out.set(chunks[i].subarray(0, n - at), at)
  return out
}

/** Checks the answer to `bytes=0-(size-1)`, learns the file length, returns the prefix to keep.
 * @param {State} state @param {Response} response @param {number} size @param {number} threshold
 * @returns {Promise<Uint8Array>} */
async function firstResponse(state, response, size, threshold) {
  if (response.status === 206) {
    const range = contentRange(state, response)
    if (range.total === null)
      throw new SafetensorsError('InvalidContentRange', `${state.href}: Content-Range does not give the file length`)
    if (range.start !== 0 || range.end !== Math.min(size, range.total) - 1)
      throw new SafetensorsError('InvalidContentRange', `${state.href}: asked for bytes 0-${size - 1}, ` +
        `the server sent ${range.start}-${range.end} of ${range.total}`)
    remember(state, response, range.total)
    // A body cut short keeps what arrived: later reads fetch the rest.
    const { bytes, complete, broken } = await readBody(response, range.end + 2)
    if (bytes.length > range.end + 1)
      throw new SafetensorsError('InvalidContentRange', `${state.href}: the body is longer than its Content-Range`)
    if (bytes.length === 0 && !complete) throw broken
    return bytes
  }
  if (response.status === 416) {
    if (response.headers.get('content-range')?.trim() !== 'bytes */0')
      throw new SafetensorsError('RangeNotSatisfiable', `${state.href}: HTTP 416 for bytes 0-${size - 1}`)
    remember(state, response, 0)  // an empty file: no byte 0 to send
    return new Uint8Array(0)
  }
  if (response.status !== 200) throw await failedStatus(state, response)
  // The server ignores Range and sends the whole file: keep a small one whole; of a large one
  // read P bytes or the whole header (if allowed), then cancel.
  const declared = declaredLength(response)
  const refuse = () => new SafetensorsError('RangeNotSupported', `${state.href}: the server ignores Range and ` +
    `sends the whole file (${declared === null ? `no length, over ${threshold}` : declared} bytes)` +
    (declared === null ? '' : '; pass allowFullDownload: true to read it anyway (each read streams from the start)'))
  if (declared === null || declared <= threshold) {
    const { bytes, complete, broken } = await readBody(response, (declared ?? threshold) + 1)
    if (broken !== null) throw broken
    if (!complete) throw refuse()
    if (declared !== null && bytes.length !== declared) throw new Transient(shortBody(state, 0, bytes.length, declared))
    remember(state, response, bytes.length)
    return bytes
  }
  if (!state.allowFullDownload) throw refuse()
  const headerEnd = (/** @type {Uint8Array[]} */ chunks, /** @type {number} */ n) => {
    if (n < 8) return null
    const length = new DataView(concat(chunks, 8).buffer).getBigUint64(0, true)
    return Math.max(size, 8 + Number(length < 100_000_000n ? length : 100_000_000n))
  }
  const { bytes, broken } = await readBody(response, Infinity, headerEnd)
  if (broken !== null) throw broken
  remember(state, response, declared)
  state.rangeIgnored = true
  return bytes
}

/** @param {State} state @param {Response} response @param {number} total */
function remember(state, response, total) {
  Object.assign(state, { byteLength: total, etag: response.headers.get('etag'), lastModified: response.headers.get('last-modified') })
}

/** @param {State} state @param {number} offset @param {number} got @param {number} expected */
function shortBody(state, offset, got, expected) {
  return new SafetensorsError('ShortRead', `${state.href}: the body for bytes ${offset}-${offset + expected - 1} ` +
    `ended after ${got} of ${expected} bytes`, { offset: offset + got })
}

/** Checks a later answer for [from, to] (inclusive); returns how many body bytes to skip (from,
 * for a whole-file 200 when allowFullDownload lets us read through it).
 * @param {State} state @param {Response} response @param {number} from @param {number} to */
async function checkRangeResponse(state, response, from, to) {
  if (response.status === 206) {
    const range = contentRange(state, response)
    checkValidators(state, response)
    if (range.total !== null && range.total !== state.byteLength)
      throw new SafetensorsError('SourceChanged', `${state.href}: the file was ${state.byteLength} bytes, now ${range.total}`)
    if (range.start !== from || range.end !== to)
      throw new SafetensorsError('InvalidContentRange', `${state.href}: asked for bytes ${from}-${to}, ` +
        `the server sent ${range.start}-${range.end}`, { offset: from })
    const encoding = response.headers.get('content-encoding')
    if (encoding && encoding !== 'identity')
      throw new SafetensorsError('InvalidContentRange', `${state.href}: a range of ${encoding}-encoded bytes`, { offset: from })
    return 0
  }
  if (response.status === 200) {
    checkValidators(state, response)
    const declared = declaredLength(response)
    if (!state.rangeIgnored && state.ifRange && isStrong(state.etag))
      throw new SafetensorsError('SourceChanged', `${state.href}: the server answered If-Range with the whole file: it changed`)
    if (!state.allowFullDownload)
      throw new SafetensorsError('RangeNotSupported', `${state.href}: the server answered a Range request with ` +
        'the whole file; pass allowFullDownload: true to read it anyway', { offset: from })
    if (declared !== null && declared !== state.byteLength)
      throw new SafetensorsError('SourceChanged', `${state.href}: the file was ${state.byteLength} bytes, now ${declared}`)
    return from
  }
  if (response.status === 416)
    throw new SafetensorsError('RangeNotSatisfiable', `${state.href}: HTTP 416 for bytes ${from}-${to} of a ` +
      `${state.byteLength} byte file`, { offset: from })
  if (response.status === 412) throw new SafetensorsError('SourceChanged', `${state.href}: HTTP 412, the file changed`)
  throw await failedStatus(state, response)
}

/** @param {string | null} etag */
function isStrong(etag) { return etag !== null && !etag.startsWith('W/') }

/** The bytes [from, end) as they arrive, retried and resumed after the bytes already yielded.
 * @param {State} state @param {number} from @param {number} end @param {AbortSignal | undefined} signal
 * @returns {AsyncGenerator<Uint8Array>} */
async function* fetchRange(state, from, end, signal) {
  let position = from
  for (let failures = 0; position < end; failures++) {
    throwIfAborted(signal)
    /** @type {ReadableStreamDefaultReader<Uint8Array> | null} */
    let reader = null
    /** @type {Response | null} */
    let response = null
    let midBody = false
    try {
      const extra = /** @type {Record<string, string>} */ ({ Range: `bytes=${position}-${end - 1}` })
      if (state.ifRange && !state.rangeIgnored && isStrong(state.etag)) extra['If-Range'] = /** @type {string} */ (state.etag)
      response = await request(state, extra, signal)
      let skip = await checkRangeResponse(state, response, position, end - 1)
      const whole = skip > 0 || response.status === 200
      if (!response.body) throw shortBody(state, position, 0, end - position)
      reader = response.body.getReader()
      midBody = true
      const start = position
      for (;;) {
        const { done, value } = await reader.read()
        if (done) { reader = null; break }
        let chunk = value
        if (skip > 0) {
          if (chunk.length <= skip) { skip -= chunk.length; continue }
          chunk = chunk.subarray(skip)
          skip = 0
        }
        if (chunk.length > end - position) {
          if (!whole) throw new SafetensorsError('InvalidContentRange', `${state.href}: the body for bytes ` +
            `${start}-${end - 1} is longer than its Content-Range`, { offset: end })
          chunk = chunk.subarray(0, end - position)
        }
        position += chunk.length
        yield chunk
        if (position === end && whole) break
      }
      if (position < end) throw new Transient(shortBody(state, start, position - start, end - start))
    } catch (error) {
      await pause(state, error, failures, signal, `bytes ${position}-${end - 1}`, midBody)
    } finally {
      if (reader) reader.cancel().catch(() => {})
      else if (response && !response.bodyUsed) response.body?.cancel().catch(() => {})
    }
  }
}

/** @param {State} state @param {Uint8Array} prefix the file's first bytes, kept
 * @param {HttpOptions} options @returns {UrlSource} */
function makeSource(state, prefix, options) {
  let cache = prefix
  /** @param {number} offset @param {number} length @param {{ signal?: AbortSignal }} [opts] */
  async function* stream(offset, length, opts = {}) {
    checkRange(offset, length, state.byteLength)
    const end = offset + length
    if (offset < cache.length && offset < end) {
      const stop = Math.min(end, cache.length)
      yield cache.subarray(offset, stop)
      offset = stop
    }
    if (offset < end) yield* fetchRange(state, offset, end, opts.signal)
  }
  return {
    url: state.href,
    describe: state.href,
    byteLength: state.byteLength,
    defaultMergeGap: options.mergeGap ?? MERGE_GAP,
    defaultConcurrency: options.concurrency ?? CONCURRENCY,
    get cachedBytes() { return cache.length },
    /** Forgets the kept prefix (a sharded set keeps the prefixes of its shards within a budget). */
    releaseCache() { cache = new Uint8Array(0) },
    stream,
    async read(offset, length, opts = {}) {
      checkRange(offset, length, state.byteLength)
      if (offset + length <= cache.length) return cache.subarray(offset, offset + length)
      const out = new Uint8Array(length)
      let at = 0
      for await (const chunk of stream(offset, length, opts)) {
        out.set(chunk, at)
        at += chunk.length
      }
      return out
    },
    close() { cache = new Uint8Array(0) },
  }
}

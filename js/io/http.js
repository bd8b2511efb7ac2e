/**
 * A file on an HTTP(S) server as a ByteSource, read with Range requests through `fetch` (any
 * platform: nothing here is Node-only).
 *
 * The first request asks for `bytes=0-(P-1)` and learns the file length from Content-Range; the
 * bytes that arrive are kept, so the 8-byte length, a header of up to P - 8 bytes and whatever
 * follows it cost that one round trip, and are never downloaded again. Later reads stream each
 * range's body chunk by chunk to the caller (the reader copies each chunk into the wasm heap).
 *
 * Redirects: later reads go to where the first request ended up (`response.url`), so a Hub
 * `/resolve/` URL, which redirects to a signed CDN URL, is resolved once and not per read. The
 * caller's headers and credentials go only to the origin of the URL they were given for, so
 * redirects are followed here, hop by hop (`request`). When the final URL stops answering (401,
 * 403, 410: its signature expired), the original URL is resolved once more and reading goes on,
 * if the file is still the same one. A URL signed for one range only (403 for another range
 * right after renewal) is given up: each read then goes through the original URL.
 *
 * Every response is checked before its bytes are used: the Content-Range must be the range asked
 * for and the total the length learnt first; the ETag (else Last-Modified) must not change, and a
 * strong ETag is sent as If-Range. A transient failure (network error, 408, 429, 5xx, a body cut
 * short) is retried with backoff, resuming after the bytes already received.
 *
 * A cross-origin server must send `Access-Control-Expose-Headers: Content-Range, ETag,
 * Content-Length, Last-Modified, Retry-After` (and allow the Range, If-Range and Authorization
 * request headers in preflights); without it a browser hides Content-Range from the script.
 *
 * Code no page needs at load lives apart, loaded when needed: http-failures.js explains a
 * failure and renews an expired URL; http-whole.js reads whole bodies (a sharded index, a server that ignores Range) with
 * the helpers exported here (makeState, request, retrying, readBody...).
 */
import { SafetensorsError, abortError, throwIfAborted } from '../errors.js'
import {
  Transient, checkTotal, checkValidators, contentRange, declaredLength, plainUrl, refuseEncoded, safeOrigin,
} from './http-answers.js'
import { Prefix } from './prefix.js'
import { checkRange } from './sources.js'
import { checkIdleTimeout, checkOpenOptions } from '../options.js'

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
/** A request with no byte for this many ms (headers or body) fails as a transient failure. Four
 * attempts of a server that stopped answering then fail in about two minutes, where Node's own
 * 300 s headers timeout made it twenty. A healthy server sends a byte within seconds, even of a
 * slow link's 64 KiB chunk. */
export const IDLE_TIMEOUT = 30_000
/** setTimeout's largest delay: a longer idleTimeout is no timeout at all. */
const MAX_TIMER = 2 ** 31 - 1
/** Answers of a signed URL whose signature expired (S3 and CloudFront say 403). */
const EXPIRED = new Set([401, 403, 410])

/**
 * @typedef {{ loaded: number, total: number }} Progress
 * @typedef {{
 *   fetch?: (input: string, init: RequestInit) => Promise<Response>,
 *   headers?: HeadersInit, requestInit?: RequestInit, signal?: AbortSignal,
 *   onProgress?: (p: Progress) => void,
 *   initialFetchSize?: number, concurrency?: number, mergeGap?: number,
 *   retries?: number, retryDelay?: number, allowFullDownload?: boolean,
 *   wholeFileThreshold?: number, ifRange?: boolean, idleTimeout?: number,
 *   onWarning?: (message: string) => void,
 * }} HttpOptions
 * @typedef {{ href: string, readHref: string, fetch: NonNullable<HttpOptions['fetch']>,
 *   init: RequestInit, headers: Headers, credentialed: boolean, ifRange: boolean | undefined,
 *   retries: number, retryDelay: number, idleTimeout: number, allowFullDownload: boolean, byteLength: number,
 *   etag: string | null, lastModified: string | null, rangeIgnored: boolean,
 *   status: number, contentType: string | null, renewing: Promise<void> | null,
 *   perRead: boolean, onWarning: (message: string) => void }} State
 *   href: the URL as given, whose origin the caller's credentials belong to; readHref: where
 *   ranges are read from (the first answer's final URL, after redirects); perRead: every read
 *   asks href and reads where it is sent (a CDN whose URLs are signed for one range)
 * @typedef {import('./sources.js').ByteSource & { url: string, readonly finalUrl: string,
 *   readonly cachedBytes: number, readonly response: { status: number, contentType: string | null },
 *   releaseCache(): void, close(): Promise<void> | undefined }} UrlSource
 */

/** @param {unknown} src @param {string} [base] resolves relative strings (browsers: the page) */
export function httpUrl(src, base) {
  let url = null
  if (src instanceof URL) url = src
  else if (typeof src === 'string') {
    try { url = new URL(src, /^[a-z][a-z0-9+.-]*:/i.test(src) ? undefined : base) } catch { url = null }
  }
  return url && (url.protocol === 'http:' || url.protocol === 'https:') ? url : null
}

/** Opens http(s) URLs (strings or URL objects) for `open`. @type {import('../open.js').Resolver} */
export async function resolveUrl(src, options) {
  const url = httpUrl(src)
  return url ? { source: await urlSource(url, options), close: true } : null
}

/** Performs the first request and returns a source whose byteLength is known.
 * @param {string | URL} url @param {HttpOptions} [options] @returns {Promise<UrlSource>} */
export async function urlSource(url, options = {}) {
  checkOpenOptions(options)
  const state = makeState(String(url), options)
  const size = Math.max(8, options.initialFetchSize ?? INITIAL_FETCH_SIZE)
  const threshold = options.wholeFileThreshold ?? WHOLE_FILE_THRESHOLD
  const cache = cacheOf(options)
  let kept = await cache?.lookup('header', state.href) ?? null
  if (kept?.fresh) {
    kept.restore(state, null)
    return makeSource(state, Prefix.of(kept.bytes), options, kept)
  }
  let prefix = await retrying(state, options.signal, `the first ${size} bytes`, async () => {
    const range = { Range: `bytes=0-${size - 1}` }
    const send = (/** @type {Record<string, string>} */ extra) => request(state, state.href, { ...range, ...extra }, options.signal)
    let response = await (kept ? kept.request(state.href, send) : send({}))
    try {
      const hit = kept ? await kept.answers(response) : false
      if (hit === null) {  // a 304 for another ETag: asked again, unconditionally
        kept = null
        response = await send({})
      }
      state.readHref = response.url || state.href
      if (hit) {
        /** @type {NonNullable<typeof kept>} */ (kept).restore(state, response)
        return Prefix.of(lastFirstAnswer(state, /** @type {NonNullable<typeof kept>} */ (kept).bytes))
      }
      kept = null
      return await firstResponse(state, response, size, threshold, options.onProgress)
    } finally {
      if (!response.bodyUsed) response.body?.cancel().catch(() => {})
    }
  })
  // Only from a server that honours Range: one that sends the whole file would answer later
  // ranges (asked with If-Range) with it too, which reads as a change.
  if (cache && !kept && state.status === 206) {
    const { prefix: bytes, entry } = await cache.keepHeader(state, prefix.bytes(),
      (from, end) => fetchRange(state, from, end, options.signal), options.onProgress)
    prefix = Prefix.of(bytes)
    kept = entry
    if (kept) lastKept = { href: state.href, etag: state.etag, bytes }
  }
  return makeSource(state, prefix, options, kept)
}

/**
 * The first answer of the file last kept in a cache, the bytes past its header included. A file
 * opened again at once (an app reopening with a quantization config, as the inspector does) and
 * found unchanged (a 304) then finds its first tensors there, as the first open did, where the
 * entry holds only the header. Not within maxAge, unvalidated: its reads check the version. One
 * file's, at most the first answer's size.
 * @type {{ href: string, etag: string | null, bytes: Uint8Array } | null}
 */
let lastKept = null

/** @param {State} state restored from its entry @param {Uint8Array} header the entry's bytes */
function lastFirstAnswer(state, header) {
  const last = lastKept
  const same = last !== null && last.href === state.href && last.etag === state.etag && last.bytes.length > header.length
  return same ? /** @type {Uint8Array} */ (last?.bytes) : header
}

/** Where `open` puts the cache it made of its `cache` option (cache.js, loaded only then), in
 * the options it passes on: a symbol, so that no option of urlSource's own names it. */
export const CACHE = Symbol('cache')

/** @param {HttpOptions} options @returns {import('./cache.js').HttpCache | null} */
export function cacheOf(options) {
  return /** @type {Record<symbol, any>} */ (options)[CACHE] ?? null
}

/** @param {string} href @param {HttpOptions} options @returns {State} */
export function makeState(href, options) {
  const fetchFn = options.fetch ?? globalThis.fetch
  if (typeof fetchFn !== 'function')
    throw new SafetensorsError('UnsupportedSource', `cannot open ${href}: no fetch on this platform; pass options.fetch`)
  const idleTimeout = checkIdleTimeout(options.idleTimeout, IDLE_TIMEOUT)
  // Only undefined is 'not given', as for the numeric options: a null is a mistake too.
  const onWarning = options.onWarning === undefined ? (/** @type {string} */ message) => console.warn(message) : options.onWarning
  if (typeof onWarning !== 'function') throw new SafetensorsError('InvalidArgument', 'onWarning must be a function')
  const init = options.requestInit ?? {}
  const headers = new Headers(init.headers)
  new Headers(options.headers).forEach((value, key) => headers.set(key, value))
  return {
    // Called as a plain function: browsers throw "Illegal invocation" when fetch is called as a
    // method of anything but the global object (`state.fetch(...)` would be such a call).
    href, readHref: href, fetch: (input, init) => fetchFn(input, init), init, headers,
    credentialed: headers.has('authorization') || headers.has('cookie') || init.credentials === 'include',
    ifRange: options.ifRange,
    retries: options.retries ?? RETRIES, retryDelay: options.retryDelay ?? RETRY_DELAY, idleTimeout,
    allowFullDownload: options.allowFullDownload ?? false,
    byteLength: 0, etag: null, lastModified: null, rangeIgnored: false, status: 0, contentType: null, renewing: null,
    perRead: false, onWarning,
  }
}

/** Redirect statuses, followed here rather than by fetch (see `request`). */
const REDIRECTS = new Set([301, 302, 303, 307, 308])
/** Hops of one request before it fails, as browsers and undici count them. */
const MAX_REDIRECTS = 20
/** Caller headers a browser itself removes on a cross-origin redirect (the Fetch standard). */
const DROPPED_ACROSS_ORIGINS = new Set(['authorization', 'cookie', 'proxy-authorization'])

/**
 * One GET. The caller's headers and credentials go only to the origin of the URL they were
 * given for (a hop back to that origin gets them again); a redirect target elsewhere (a CDN)
 * gets neither. fetch would follow a redirect with every header but Authorization and Cookie,
 * so redirects are followed here (`redirect: 'manual'`, the answer's Location). A browser hides
 * the Location (an 'opaqueredirect'): a page lets fetch follow, unless the caller gave headers
 * other than Authorization, which the browser drops itself where the origin changes; with such
 * headers, a redirect is asked again without them, with fetch following it.
 * @param {State} state @param {string} target @param {Record<string, string>} extra
 * @param {AbortSignal | undefined} signal @param {RequestCache} [cache] the fetch's cache mode
 * @returns {Promise<Response>} the last hop's answer: its `url` is where the bytes came from
 */
export async function request(state, target, extra, signal, cache) {
  const idle = idleWatch(state.idleTimeout, signal)
  try {
    for (let hop = 0; ; hop++) {
      const own = safeOrigin(target) === safeOrigin(state.href)
      const guarded = own && [...state.headers.keys()].some((key) => !DROPPED_ACROSS_ORIGINS.has(key))
      const redirect = inPage() && !guarded ? 'follow' : 'manual'
      let response = await idle.during(() => send(state, target, extra, idle.signal, cache, own, redirect, null))
      if (response.type === 'opaqueredirect') {
        response = await idle.during(() => send(state, target, extra, idle.signal, cache, own, 'follow', DROPPED_ACROSS_ORIGINS))
      }
      const location = REDIRECTS.has(response.status) ? response.headers.get('location') : null
      if (location === null) return idle.watchBody(response)
      await response.body?.cancel().catch(() => {})
      const next = httpUrl(location, target)
      if (next === null || hop === MAX_REDIRECTS)
        throw new SafetensorsError('HttpError', `${state.href}: ${next === null ? `a redirect to ${JSON.stringify(location)}, ` +
          'not an http(s) URL' : `more than ${MAX_REDIRECTS} redirects`}`, { status: response.status })
      target = next.href
    }
  } catch (error) {
    throw idle.fired ?? error
  }
}

/**
 * A request's idle timeout: its own abort signal (the caller's linked in), aborted when no byte
 * arrives for `ms` while one is awaited: the headers, or a body chunk the reader asked for. A
 * reader busy with the last chunk is not idle time.
 * @param {number} ms @param {AbortSignal | undefined} signal the caller's
 */
function idleWatch(ms, signal) {
  const controller = new AbortController()
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer
  /** @type {Error | null} what the request fails with, retried as a network failure */
  let fired = null
  const arm = () => {
    if (ms > MAX_TIMER) return
    timer = setTimeout(() => {
      fired = new Error(`no byte arrived for ${ms} ms (idleTimeout)`)
      fired.name = 'TimeoutError'
      controller.abort(fired)
    }, ms)
  }
  const watch = {
    signal: signal ? linked(signal, controller) : controller.signal,
    get fired() { return fired },
    /** @template T @param {() => Promise<T>} wait @returns {Promise<T>} */
    async during(wait) {
      arm()
      try { return await wait() } finally { clearTimeout(timer) }
    },
    /** The response, its body read through the watch. @param {Response} response */
    watchBody(response) {
      const body = response.body
      if (!body) return response
      /** @type {ReadableStreamDefaultReader<Uint8Array> | null} */
      let reader = null
      // Pulled only when read (highWaterMark 0), so only a reader's wait is timed.
      const watched = new ReadableStream({
        async pull(out) {
          reader ??= body.getReader()
          const r = await watch.during(() => /** @type {typeof reader & {}} */ (reader).read()).catch((error) => { throw fired ?? error })
          if (r.done) out.close()
          else out.enqueue(r.value)
        },
        cancel(reason) { return reader ? reader.cancel(reason) : body.cancel(reason) },
      }, { highWaterMark: 0 })
      // A Response keeps its url, type and status only as itself: its body is replaced in place.
      Object.defineProperty(response, 'body', { value: watched })
      return response
    },
  }
  return watch
}

/** A signal aborted by either. @param {AbortSignal} signal @param {AbortController} controller */
function linked(signal, controller) {
  if (typeof AbortSignal.any === 'function') return AbortSignal.any([signal, controller.signal])
  // Older browsers: the listener lives as long as the caller's signal.
  if (signal.aborted) controller.abort(signal.reason)
  else signal.addEventListener('abort', () => controller.abort(signal.reason), { once: true })
  return controller.signal
}

/**
 * One fetch of one hop: the caller's headers and credentials only on their own origin, and of
 * those only the `only` ones when given.
 * @param {State} state @param {string} target @param {Record<string, string>} extra
 * @param {AbortSignal | undefined} signal @param {RequestCache | undefined} cache @param {boolean} own
 * @param {RequestRedirect} redirect @param {Set<string> | null} only
 */
function send(state, target, extra, signal, cache, own, redirect, only) {
  const headers = new Headers()
  if (own) state.headers.forEach((value, key) => { if (!only || only.has(key)) headers.set(key, value) })
  // A compressed range is useless (ContentEncoded); browsers set this themselves for ranges.
  if (extra.Range) headers.set('Accept-Encoding', 'identity')
  for (const [key, value] of Object.entries(extra)) headers.set(key, value)
  const init = own ? state.init : { ...state.init, credentials: /** @type {RequestCredentials} */ ('omit') }
  return state.fetch(target, { ...init, method: 'GET', headers, signal, redirect, ...(cache && { cache }) })
}

/** A page or a worker (where a redirect's Location is hidden), as `useIfRange` tells it. */
function inPage() {
  return typeof /** @type {any} */ (globalThis).location?.origin === 'string'
}

/**
 * What explains a failure (what the server said, the likely cause), loaded on a first failure. A
 * page that cannot load it (offline) gets the bare status or error, still coded.
 * @returns {Promise<Pick<typeof import('./http-failures.js'), 'failedStatus' | 'describeFailure'>>}
 */
export function explainer() {
  return import('./http-failures.js').catch(() => ({
    /** @param {{ href: string }} known @param {Response} response */
    async failedStatus(known, response) {
      await response.body?.cancel().catch(() => {})
      const { status } = response
      return new SafetensorsError(status === 404 || status === 410 ? 'NotFound' : 'HttpError', `${known.href}: HTTP ${status}`, { status })
    },
    /** @param {unknown} error @param {string} _href @param {string} what */
    describeFailure: (error, _href, what) => ({ message: `${what}: ${/** @type {Error} */ (error)?.message ?? error}`, permanent: false }),
  }))
}

/** If-Range is not a CORS-safelisted header: cross-origin in a browser it would cost a preflight.
 * @param {State} state @param {string} target */
function useIfRange(state, target) {
  if (state.ifRange !== undefined) return state.ifRange
  const page = /** @type {{ origin?: string } | undefined} */ (/** @type {any} */ (globalThis).location)?.origin
  return typeof page !== 'string' || safeOrigin(target) === page
}

/** Runs `attempt` until it succeeds, fails for good, or the retries run out.
 * @template T @param {State} state @param {AbortSignal | undefined} signal @param {string} what
 * @param {() => Promise<T>} attempt @returns {Promise<T>} */
export async function retrying(state, signal, what, attempt) {
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
  let transient = error instanceof Transient ? error : null
  if (!transient) {
    const doing = `${midBody ? 'the connection broke while reading' : 'could not request'} ${what}`
    const failure = (await explainer()).describeFailure(error, state.readHref, `${state.href}: ${doing}`)
    const coded = new SafetensorsError(midBody ? 'ShortRead' : 'NetworkError', failure.message, { cause: error })
    if (failure.permanent) throw coded
    transient = new Transient(coded)
  }
  if (failures >= state.retries) throw transient.error
  const backoff = Math.min(MAX_BACKOFF, state.retryDelay * 2 ** failures) * (0.5 + Math.random() / 2)
  // A Retry-After lengthens the wait, never shortens it: "0" or a date past must not turn the
  // retries into a burst of requests.
  await sleep(Math.max(backoff, transient.retryAfter ?? 0), signal)
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

/**
 * Reads a body into one buffer: `limit` bytes at most, fewer once `stop(chunks, n)` names a
 * length; cancels the rest, and only the rest: a body read to its end is left to finish.
 * A broken connection ends the read with what arrived.
 * @param {Response} response @param {number} limit
 * @param {((chunks: Uint8Array[], n: number) => number | null) | undefined} [stop]
 * @param {(n: number) => void} [onBytes] told the count so far after each chunk
 * @param {(chunk: Uint8Array) => void} [onChunk] given each chunk as it arrives
 * @param {boolean} [keep] false: the chunks are not gathered (`bytes` is empty; `length` counts)
 * @returns {Promise<{ bytes: Uint8Array, prefix: Prefix, chunks: Uint8Array[], length: number, complete: boolean, broken: unknown }>}
 *   prefix: the chunks kept, unjoined; bytes: them joined (a view where one chunk holds them) */
export async function readBody(response, limit, stop, onBytes, onChunk, keep = true) {
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
        onChunk?.(r.value)
        if (keep) chunks.push(r.value)
        n += r.value.length
        onBytes?.(n)
        want = Math.min(limit, stop?.(chunks, n) ?? limit)
      }
    }
  } catch (error) {
    broken = error
  } finally {
    if (!done) reader.cancel().catch(() => {})
  }
  const kept = () => new Prefix(keep ? chunks : [], keep ? Math.min(n, want) : 0)
  return {
    get bytes() { return kept().bytes() },
    get prefix() { return kept() },
    chunks, length: n, complete: done && n <= want, broken,
  }
}

/** Checks the answer to `bytes=0-(size-1)`, learns the file length, returns the prefix to keep.
 * @param {State} state @param {Response} response @param {number} size @param {number} threshold
 * @param {((p: Progress) => void) | undefined} onProgress
 * @returns {Promise<Prefix>} */
async function firstResponse(state, response, size, threshold, onProgress) {
  if (response.status === 206) {
    refuseEncoded(state.href, response)
    const range = contentRange(state.href, response)
    if (range.total === null)
      throw new SafetensorsError('InvalidContentRange', `${state.href}: Content-Range does not give the file length`)
    if (range.start !== 0 || range.end !== Math.min(size, range.total) - 1)
      throw new SafetensorsError('InvalidContentRange', `${state.href}: asked for bytes 0-${size - 1}, ` +
        `the server sent ${range.start}-${range.end} of ${range.total}`)
    remember(state, response, range.total)
    // A body cut short keeps what arrived: later reads fetch the rest.
    const { prefix, complete, broken } = await readBody(response, range.end + 2, undefined,
      (n) => onProgress?.({ loaded: n, total: range.end + 1 }))
    if (prefix.length > range.end + 1)
      throw new SafetensorsError('InvalidContentRange', `${state.href}: the body is longer than its Content-Range`)
    if (prefix.length === 0 && !complete) throw broken
    return prefix
  }
  if (response.status === 416) {
    if (response.headers.get('content-range')?.trim() !== 'bytes */0')
      throw new SafetensorsError('RangeNotSatisfiable', `${state.href}: HTTP 416 for bytes 0-${size - 1}`, { status: 416 })
    remember(state, response, 0)  // an empty file: no byte 0 to send
    return Prefix.of(new Uint8Array(0))
  }
  if (response.status !== 200) throw await (await explainer()).failedStatus(state, response)
  // A server that ignores Range: rare (every Hub, S3 or CDN URL honours it), so its code loads
  // only then.
  const { wholeFileAnswer } = await import('./http-whole.js')
  return Prefix.of(await wholeFileAnswer(state, response, size, threshold, onProgress))
}

/** @param {State} state @param {Response} response @param {number} total */
export function remember(state, response, total) {
  Object.assign(state, {
    byteLength: total, etag: response.headers.get('etag'), lastModified: response.headers.get('last-modified'),
    status: response.status, contentType: response.headers.get('content-type'),
  })
}

/** @param {State} state @param {number} offset @param {number} got @param {number} expected */
export function shortBody(state, offset, got, expected) {
  return new SafetensorsError('ShortRead', `${state.href}: the body for bytes ${offset}-${offset + expected - 1} ` +
    `ended after ${got} of ${expected} bytes`, { offset: offset + got })
}

/** Checks a later answer for [from, to] (inclusive); returns how many body bytes to skip (from,
 * for a whole-file 200 when allowFullDownload lets us read through it).
 * @param {State} state @param {Response} response @param {number} from @param {number} to */
async function checkRangeResponse(state, response, from, to) {
  const status = response.status
  if (status === 206) {
    refuseEncoded(state.href, response)
    const range = contentRange(state.href, response)
    checkValidators(state, response)
    checkTotal(state, range.total, response)
    if (range.start !== from || range.end !== to)
      throw new SafetensorsError('InvalidContentRange', `${state.href}: asked for bytes ${from}-${to}, ` +
        `the server sent ${range.start}-${range.end}`, { offset: from, status })
    return 0
  }
  if (status === 200) {
    checkValidators(state, response)
    const declared = declaredLength(response)
    if (!state.rangeIgnored && useIfRange(state, state.readHref) && isStrong(state.etag))
      throw new SafetensorsError('SourceChanged', `${state.href}: the server answered If-Range with the whole file: it changed`, { status })
    if (!state.allowFullDownload)
      throw new SafetensorsError('RangeNotSupported', `${state.href}: the server answered a Range request with ` +
        'the whole file; pass allowFullDownload: true to read it anyway', { offset: from, status })
    checkTotal(state, declared, response)
    return from
  }
  if (status === 416) {
    const header = response.headers.get('content-range')
    const total = header === null ? null : contentRange(state.href, response).total
    checkTotal(state, total, response)
    throw new SafetensorsError('RangeNotSatisfiable', `${state.href}: HTTP 416 for bytes ${from}-${to} of a ` +
      `${state.byteLength} byte file`, { offset: from, status })
  }
  if (status === 412) throw new SafetensorsError('SourceChanged', `${state.href}: HTTP 412, the file changed`, { status })
  throw await (await explainer()).failedStatus(state, response)
}

/** @param {string | null} etag */
function isStrong(etag) { return etag !== null && !etag.startsWith('W/') }

/** From now on every read of `state` asks its original URL; said once.
 * @param {State} state @param {string} refused the URL that refused a range */
function readPerRequest(state, refused) {
  if (state.perRead) return
  state.perRead = true
  state.onWarning(`${state.href}: the URL it redirects to (${plainUrl(refused)}) refuses byte ranges other than ` +
    'the one it was signed for (HTTP 403); every read now goes through the original URL, one redirect each')
}

/** The bytes [from, end) as they arrive, retried and resumed after the bytes already yielded.
 * @param {State} state @param {number} from @param {number} end @param {AbortSignal | undefined} signal
 * @returns {AsyncGenerator<Uint8Array>} */
async function* fetchRange(state, from, end, signal) {
  let position = from
  let renewed = false
  // A range of another version may be a stale copy (a browser's HTTP cache keeps ranges it
  // deems fresh, and knows nothing of a version validated since): asked again once, from the
  // server, before it counts as a change. (A whole file for If-Range, or a 416 of another
  // length, is the server's own word.)
  let reload = false
  for (let failures = 0; position < end;) {
    throwIfAborted(signal)
    /** @type {ReadableStreamDefaultReader<Uint8Array> | null} */
    let reader = null
    /** @type {Response | null} */
    let response = null
    let midBody = false
    try {
      const target = state.perRead ? state.href : state.readHref
      const extra = /** @type {Record<string, string>} */ ({ Range: `bytes=${position}-${end - 1}` })
      // Where the bytes come from decides (a redirect carries If-Range along).
      if (useIfRange(state, state.readHref) && !state.rangeIgnored && isStrong(state.etag)) extra['If-Range'] = /** @type {string} */ (state.etag)
      response = await request(state, target, extra, signal, reload ? 'reload' : undefined)
      if (EXPIRED.has(response.status) && target !== state.href && !renewed) {
        renewed = true
        await response.body?.cancel().catch(() => {})
        response = null
        // Renewal is rare (a signed URL that expired): its code loads with the failures'.
        await (await import('./http-failures.js')).renew(state, target)
        continue
      }
      if (response.status === 403 && target !== state.href) {
        // The URL just renewed served bytes 0-0 and refuses this range: signed for one range
        // (a Xet bridge's "Auth failed: invalid range"). The original URL sends each read to a
        // URL signed for it.
        await response.body?.cancel().catch(() => {})
        response = null
        readPerRequest(state, target)
        continue
      }
      let skip
      try {
        skip = await checkRangeResponse(state, response, position, end - 1)
      } catch (error) {
        if (reload || position > from || response.status !== 206 || /** @type {any} */ (error)?.code !== 'SourceChanged') throw error
        reload = true
        continue
      }
      // A source restored from the cache made no first request: its first read finds where
      // the URL leads, and later reads go there.
      if (target === state.href && response.url && response.url !== target) state.readHref = response.url
      const whole = skip > 0 || response.status === 200
      if (!response.body) throw shortBody(state, position, 0, end - position)
      reader = response.body.getReader()
      midBody = true
      const start = position
      for (;;) {
        // With every byte in, the answer is still read to its end (a browser's network panel
        // shows it complete, Node keeps the connection), unless the reader leaves meanwhile: an
        // abort then ends the wait, which a body that never ends would otherwise hold forever.
        const { done, value } = position === end ? await endOrAbort(reader, signal) : await reader.read()
        if (done) {
          if (!signal?.aborted) reader = null
          break
        }
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
      await pause(state, error, failures++, signal, `bytes ${position}-${end - 1}`, midBody)
    } finally {
      if (reader) reader.cancel().catch(() => {})
      else if (response && !response.bodyUsed) response.body?.cancel().catch(() => {})
    }
  }
}

/**
 * The reader's next answer, or done as soon as `signal` aborts.
 * @param {ReadableStreamDefaultReader<Uint8Array>} reader @param {AbortSignal | undefined} signal
 * @returns {Promise<ReadableStreamReadResult<Uint8Array>>}
 */
function endOrAbort(reader, signal) {
  if (!signal) return reader.read()
  /** @type {() => void} */
  let onAbort = () => {}
  const aborted = new Promise((resolve) => {
    onAbort = () => resolve(/** @type {ReadableStreamReadResult<Uint8Array>} */ ({ done: true, value: undefined }))
    if (signal.aborted) onAbort()
    else signal.addEventListener('abort', onAbort, { once: true })
  })
  return Promise.race([reader.read(), aborted]).finally(() => signal.removeEventListener('abort', onAbort))
}

/** @param {State} state @param {Prefix} prefix the file's first bytes, kept
 * @param {HttpOptions} options @param {import('./cache.js').Entry | null} [entry] the file's
 *   cache entry: later ranges go through it @returns {UrlSource} */
function makeSource(state, prefix, options, entry = null) {
  let cache = prefix
  const forget = () => { cache = Prefix.of(new Uint8Array(0)) }
  /** @param {number} offset @param {number} length @param {{ signal?: AbortSignal }} [opts] */
  async function* stream(offset, length, opts = {}) {
    checkRange(offset, length, state.byteLength)
    const end = offset + length
    if (offset < cache.length && offset < end) {
      const stop = Math.min(end, cache.length)
      yield* cache.spans(offset, stop)
      offset = stop
    }
    if (offset >= end) return
    const from = offset
    yield* entry ? entry.stream(from, end, () => fetchRange(state, from, end, opts.signal)) : fetchRange(state, from, end, opts.signal)
  }
  return {
    url: state.href,
    /** Where ranges are read from: the URL after the first answer's redirects. */
    get finalUrl() { return state.readHref },
    describe: state.href,
    byteLength: state.byteLength,
    /** What the first answer was: NotSafetensors says it when the bytes are a page, not a file. */
    response: { status: state.status, contentType: state.contentType },
    defaultMergeGap: options.mergeGap ?? MERGE_GAP,
    defaultConcurrency: options.concurrency ?? CONCURRENCY,
    get cachedBytes() { return cache.length },
    /** Forgets the kept prefix (a sharded set keeps the prefixes of its shards within a budget). */
    releaseCache: forget,
    stream,
    async read(offset, length, opts = {}) {
      checkRange(offset, length, state.byteLength)
      if (offset + length <= cache.length) return cache.slice(offset, offset + length)
      const out = new Uint8Array(length)
      let at = 0
      for await (const chunk of stream(offset, length, opts)) {
        out.set(chunk, at)
        at += chunk.length
      }
      return out
    },
    close() {
      forget()
      return cacheOf(options)?.settled()
    },
  }
}

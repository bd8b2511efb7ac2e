/**
 * A test HTTP server on 127.0.0.1 (port 0): serves real bytes and virtual files (bytes made by a
 * function on demand, never stored), with Range, If-Range, ETag, If-None-Match (304) and CORS; counts requests and
 * body bytes; adds latency; limits bandwidth; misbehaves on demand (see Fault). It never keeps the process alive
 * (unref) and closes itself after `lifetime` ms.
 */
import { createServer } from 'node:http'
import { gzipSync } from 'node:zlib'
import { parseRange } from '../../web-demo/serve.js'

/**
 * @typedef {{ size: number, fill: (out: Uint8Array, offset: number) => void }} Content
 * @typedef {{
 *   times?: number,                 // how many requests the fault applies to (default: all)
 *   ignoreRange?: boolean,          // answer 200 with the whole file
 *   status?: number,                // answer this status (e.g. 503, 429, 500, 404)
 *   retryAfter?: string,            // with `status`: a Retry-After header
 *   status416?: boolean,            // answer 416
 *   cut?: number,                   // promise the full range, send this many bytes, reset the socket
 *   short?: number,                 // send this many bytes and end cleanly (Content-Length says so)
 *   reset?: boolean,                // destroy the connection before answering
 *   shiftRange?: number,            // send the range shifted by this many bytes, saying so
 *   wrongTotal?: number,            // claim this total in Content-Range
 *   dropHeaders?: string[],         // remove these response headers (what a browser hides)
 *   noExpose?: boolean,             // omit Access-Control-Expose-Headers
 *   gzipWhole?: boolean,            // a 200 answer without Content-Length, as a compressing proxy would
 *   encoded?: string,               // a 206 whose body is compressed (Content-Encoding), as Apache's force-gzip sends
 *   body?: string,                  // with `status`: this body
 *   headers?: Record<string, string>, // with `status` or `replace`: these headers too
 *   replace?: Uint8Array,           // answer 200 with these bytes instead of the file (a page, a pointer)
 *   total416?: number,              // answer 416 with Content-Range bytes *\/total416
 *   staleEtag?: string,             // answer as usual but with this ETag: a cache's copy of another version
 *   redirect?: string,              // answer 302 with this Location (served with or without a file at the path)
 *   hang?: boolean,                 // never answer (the connection stays open)
 *   stallAfter?: number,            // send the headers and this many body bytes, then nothing more
 * }} Fault
 * @typedef {{ method: string, path: string, range: string | null, ifRange: string | null,
 *   ifNoneMatch: string | null, auth: string | null, acceptEncoding: string | null, status: number,
 *   bytes: number, headers: import('node:http').IncomingHttpHeaders }} LogEntry
 */

/**
 * @param {{ latency?: number, bandwidth?: number, lifetime?: number, maxRequests?: number, auth?: string,
 *   allowHeaders?: string[] }} [options]
 *   bandwidth: bytes a second of every answer's body together, as one link carries them (none by default);
 *   allowHeaders: request headers a preflight allows besides Range, If-Range, If-None-Match and Authorization
 */
export async function startServer(options = {}) {
  const { lifetime = 120_000, maxRequests = 100_000 } = options
  /** @type {Map<string, { content: Content, version: number, changeAfter: number }>} */
  const files = new Map()
  /** @type {Map<string, Fault[]>} */
  const faults = new Map()
  /** @type {{ requests: number, bytes: number, inFlight: number, maxInFlight: number, log: LogEntry[] }} */
  const stats = { requests: 0, bytes: 0, inFlight: 0, maxInFlight: 0, log: [] }
  const state = { latency: options.latency ?? 0, auth: options.auth ?? null }
  // One link shared by every answer: bodies queue on it in the order they are written, each
  // piece sent when the link has carried it (ms on performance.now()). A link idle for less than
  // LINK_SLACK ms counts as busy: a timer fires that late, and one answer's pieces wait on it.
  const LINK_SLACK = 4
  const link = { bytesPerMs: (options.bandwidth ?? 0) / 1000, free: 0 }
  /** @param {number} n @returns {Promise<void> | undefined} */
  const carry = (n) => {
    if (!link.bytesPerMs) return undefined
    const now = performance.now()
    link.free = Math.max(link.free, now - LINK_SLACK) + n / link.bytesPerMs
    return link.free - now >= 1 ? new Promise((r) => setTimeout(r, link.free - now)) : undefined
  }

  /** @param {string} path @returns {Fault | null} takes one use of the path's first active fault */
  function takeFault(path) {
    const list = faults.get(path)
    if (!list || list.length === 0) return null
    const fault = list[0]
    if (fault.times !== undefined && --fault.times <= 0) list.shift()
    return fault
  }

  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x')
    const path = decodeURIComponent(url.pathname)
    const entry = /** @type {LogEntry} */ ({
      method: req.method ?? '', path, range: req.headers.range ?? null,
      ifRange: /** @type {string | null} */ (req.headers['if-range'] ?? null),
      ifNoneMatch: /** @type {string | null} */ (req.headers['if-none-match'] ?? null),
      auth: req.headers.authorization ?? null, acceptEncoding: req.headers['accept-encoding'] ?? null, status: 0, bytes: 0,
      headers: req.headers,
    })
    stats.inFlight++
    stats.maxInFlight = Math.max(stats.maxInFlight, stats.inFlight)
    res.on('close', () => { stats.inFlight-- })
    if (req.method !== 'OPTIONS') {
      stats.requests++
      stats.log.push(entry)
    }
    if (state.latency) await new Promise((r) => setTimeout(r, state.latency))
    const file = files.get(path)
    const fault = req.method === 'OPTIONS' ? null : takeFault(path)
    const cors = {
      'Access-Control-Allow-Origin': '*',
      ...(fault?.noExpose ? {} : { 'Access-Control-Expose-Headers': 'Content-Range, ETag, Content-Length, Last-Modified, Retry-After' }),
    }
    /** @param {number} status @param {Record<string, string | number>} headers */
    const head = (status, headers) => {
      entry.status = status
      const all = /** @type {Record<string, string | number>} */ ({ ...cors, ...headers })
      for (const h of fault?.dropHeaders ?? []) for (const k of Object.keys(all)) if (k.toLowerCase() === h.toLowerCase()) delete all[k]
      res.writeHead(status, all)
    }
    if (req.method === 'OPTIONS') {
      const allowed = ['Range', 'If-Range', 'If-None-Match', 'Authorization', ...options.allowHeaders ?? []].join(', ')
      head(204, { 'Access-Control-Allow-Headers': allowed, 'Access-Control-Max-Age': 600 })
      return void res.end()
    }
    if (stats.requests > maxRequests || fault?.reset) return void req.socket.destroy()
    if (fault?.hang) return
    if (fault?.redirect) return void (head(302, { Location: fault.redirect }), res.end())
    if (state.auth !== null && req.headers.authorization !== state.auth) return void (head(401, {}), res.end())
    if (!file) return void (head(404, { 'X-Error-Code': 'EntryNotFound' }), res.end('not found'))
    if (fault?.status) {
      head(fault.status, { ...(fault.retryAfter ? { 'Retry-After': fault.retryAfter } : {}), ...fault.headers })
      return void res.end(fault.body)
    }
    if (fault?.replace) return void (head(200, { 'Content-Length': fault.replace.length, ...fault.headers }), res.end(fault.replace))
    if (fault?.total416 !== undefined) return void (head(416, { 'Content-Range': `bytes */${fault.total416}` }), res.end())

    const { content, version } = file
    const size = content.size
    const etag = `"v${version}-${size}"`
    const validators = { ETag: fault?.staleEtag ?? etag, 'Last-Modified': new Date(Date.UTC(2024, 0, 1) + version * 1000).toUTCString() }
    if (file.changeAfter > 0 && --file.changeAfter === 0) file.version++
    // If-None-Match comes before Range (RFC 9110 13.2.2), compared weakly; a server that sends
    // no ETag (a dropHeaders fault) has nothing to match.
    const noneMatch = /** @type {string | undefined} */ (req.headers['if-none-match'])
    const weak = (/** @type {string} */ tag) => tag.trim().replace(/^W\//, '')
    const sendsEtag = !(fault?.dropHeaders ?? []).some((h) => h.toLowerCase() === 'etag')
    if (noneMatch !== undefined && sendsEtag && (noneMatch.trim() === '*' || noneMatch.split(',').some((t) => weak(t) === etag))) {
      head(304, validators)
      return void res.end()
    }
    let range = fault?.ignoreRange || fault?.gzipWhole ? null : parseRange(req.headers.range, size)
    if (range && req.headers['if-range'] && req.headers['if-range'] !== etag) range = null
    if (range === 'unsatisfiable' || fault?.status416) {
      head(416, { 'Content-Range': `bytes */${size}` })
      return void res.end()
    }
    const [start, end] = range ?? [0, size]
    const total = fault?.wrongTotal ?? size
    const shift = fault?.shiftRange ?? 0
    const send = fault?.short ?? end - start
    const headers = {
      ...validators, 'Accept-Ranges': 'bytes', 'Content-Type': 'application/octet-stream',
      ...(fault?.gzipWhole ? {} : { 'Content-Length': Math.min(send, end - start) }),
      ...(range ? { 'Content-Range': `bytes ${start + shift}-${end - 1 + shift}/${total}` } : {}),
    }
    if (fault?.cut !== undefined) headers['Content-Length'] = end - start
    if (fault?.encoded && range) {
      // The range is of the compressed body: what Apache with force-gzip sends.
      const whole = new Uint8Array(size)
      content.fill(whole, 0)
      const packed = gzipSync(whole)
      const stop = Math.min(end, packed.length)
      head(206, { ...validators, 'Content-Encoding': fault.encoded, 'Content-Range': `bytes ${start}-${stop - 1}/${packed.length}`,
        'Content-Length': stop - start })
      return void res.end(packed.subarray(start, stop))
    }
    head(range ? 206 : 200, headers)
    if (req.method === 'HEAD') return void res.end()
    const limit = Math.min(end - start, fault?.cut ?? Infinity, fault?.stallAfter ?? Infinity, send)
    await writeBody(res, content, start + shift, limit, (n) => { entry.bytes += n; stats.bytes += n }, version, carry)
    if (fault?.cut !== undefined) req.socket.destroy()
    else if (fault?.stallAfter === undefined) res.end()
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)))
  server.unref()
  const address = /** @type {import('node:net').AddressInfo} */ (server.address())
  const base = `http://127.0.0.1:${address.port}`
  const stopTimer = setTimeout(() => close(), lifetime)
  stopTimer.unref()
  function close() {
    clearTimeout(stopTimer)
    server.closeAllConnections()
    return new Promise((resolve) => server.close(() => resolve(undefined)))
  }

  return {
    base,
    stats,
    /** @param {string} path */
    url(path) { return `${base}${path.split('/').map(encodeURIComponent).join('/')}` },
    /** Serves bytes at `path` ('/a/b.safetensors'). @param {string} path @param {Uint8Array} bytes */
    addFile(path, bytes) { files.set(path, { content: bytesContent(bytes), version: 1, changeAfter: 0 }) },
    /** Serves generated bytes. @param {string} path @param {Content} content */
    addVirtual(path, content) { files.set(path, { content, version: 1, changeAfter: 0 }) },
    /** The file changes (new ETag and Last-Modified, bytes XORed with the version) after `n` more requests. */
    changeAfter(/** @type {string} */ path, /** @type {number} */ n) {
      const file = /** @type {NonNullable<ReturnType<typeof files.get>>} */ (files.get(path))
      file.changeAfter = n
      if (n === 0) file.version++
    },
    /** Queues a misbehaviour for the next requests to `path`. @param {string} path @param {Fault} fault */
    fault(path, fault) { faults.set(path, [...(faults.get(path) ?? []), fault]) },
    clearFaults() { faults.clear() },
    /** @param {number} ms */
    setLatency(ms) { state.latency = ms },
    /** @param {number} bytesPerSecond every body's bytes together; 0: no limit */
    setBandwidth(bytesPerSecond) { link.bytesPerMs = bytesPerSecond / 1000 },
    /** @param {string | null} value required Authorization header */
    setAuth(value) { state.auth = value },
    resetStats() { Object.assign(stats, { requests: 0, bytes: 0, maxInFlight: stats.inFlight, log: [] }) },
    close,
  }
}

/** @param {Uint8Array} bytes @returns {Content} */
export function bytesContent(bytes) {
  return { size: bytes.length, fill: (out, offset) => out.set(bytes.subarray(offset, offset + out.length)) }
}

/**
 * Writes [offset, offset + length) of `content` in 64 KiB pieces, honouring backpressure, and stops
 * when the client goes away. Versions after the first XOR every byte, so a change is visible.
 * Each piece waits for its turn on the link (`carry`).
 * @param {import('node:http').ServerResponse} res @param {Content} content
 * @param {number} offset @param {number} length @param {(n: number) => void} count @param {number} version
 * @param {(n: number) => Promise<void> | undefined} carry
 */
async function writeBody(res, content, offset, length, count, version, carry) {
  const CHUNK = 64 * 1024
  for (let done = 0; done < length && !res.destroyed;) {
    const n = Math.min(CHUNK, length - done)
    const piece = new Uint8Array(n)
    content.fill(piece, offset + done)
    if (version > 1) for (let i = 0; i < n; i++) piece[i] ^= version
    done += n
    const turn = carry(n)
    if (turn) await turn
    if (res.destroyed) break
    count(n)
    if (!res.write(piece)) {
      await new Promise((resolve) => {
        const go = () => { res.off('drain', go); res.off('close', go); resolve(undefined) }
        res.on('drain', go)
        res.on('close', go)
      })
    }
  }
}

#!/usr/bin/env node
/**
 * The inspector's static server: web-demo/, js/, dist/ and the generated samples (build/sample/,
 * served at /sample/) on 127.0.0.1, with what a ranged reader needs: single byte ranges (206,
 * Content-Range, 416), a strong ETag with If-Range and If-None-Match (304), Last-Modified, HEAD,
 * and CORS on data (any origin, Range/If-Range/Authorization allowed in preflights, so If-None-Match
 * only from the same origin; Content-Range and ETag exposed; not
 * on the page's own files, which carry a Content-Security-Policy and a refusal to be framed
 * instead). Every answer carries nosniff.
 *
 *   node web-demo/serve.js [--port 8080] [--host 127.0.0.1] [--quiet]
 *
 * A module too: createStaticHandler is this server's request handler, with hooks for a server
 * built on it (the tests' server, tests/servers/static-server.js, adds in-memory files, per-path
 * quirks and request counts through them); startServer listens with it.
 */
import { open as fsOpen } from 'node:fs/promises'
import { createServer } from 'node:http'
import { extname, join, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'

const REPO = fileURLToPath(new URL('..', import.meta.url))

/** URL prefix -> folder of the repository. The page imports ../js/index.js, which imports
 * ../dist/safetensors_core.mjs: the three keep their relative places. */
export const MOUNTS = Object.freeze({
  '/web-demo/': 'web-demo',
  '/js/': 'js',
  '/dist/': 'dist',
  '/sample/': 'build/sample',
})

/** Where the bundled sample is served (the page's "Open the sample" button). */
export const SAMPLE_PATH = '/sample/tiny-llama.safetensors'
export const SHARDED_SAMPLE_PATH = '/sample/sharded/model.safetensors.index.json'

const TYPES = /** @type {Record<string, string>} */ ({
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.ts': 'text/plain; charset=utf-8',
  '.map': 'application/json',
})

/** The Content-Type of a file by its name. @param {string} path */
export const contentType = (path) => TYPES[extname(path)] ?? 'application/octet-stream'

const EXPOSED = 'Content-Range, Content-Length, ETag, Last-Modified, Accept-Ranges, Retry-After'

/**
 * What the inspector may do: its own scripts, styles and images only (no inline script), wasm
 * compiled from those scripts, fetches anywhere (it reads whatever URL is typed in), and no page
 * may frame it. Sent with the page's own files; the inspector's browser tests fail on any
 * console error, so on anything the policy refuses.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'", "script-src 'self' 'wasm-unsafe-eval'", "style-src 'self'", "img-src 'self' data: blob:",
  'connect-src *', "object-src 'none'", "base-uri 'none'", "form-action 'self'", "frame-ancestors 'none'",
].join('; ')
const SECURITY = Object.freeze({
  'Content-Security-Policy': CONTENT_SECURITY_POLICY,
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
})
/** The page's own files (not data): served without CORS, so no other site can read them. */
const APP_PREFIXES = ['/web-demo/', '/js/', '/dist/']
const CHUNK = 64 * 1024

/**
 * @typedef {{ size: number, mtimeMs: number, type: string, read: (out: Uint8Array, position: number) => Promise<number>,
 *   close: () => Promise<void> }} Body  a file to send: `read` fills the front of `out` from `position`, returning
 *   how many bytes it wrote (fewer than asked is fine; 0 ends the body)
 * @typedef {{ method: string, path: string, range: string | null, status: number, bytes: number }} LogEntry
 *   one request: `bytes` counts the body bytes sent, as they are sent
 * @typedef {{ status: number, headers?: Record<string, string | number>, text?: string }} Answer
 * @typedef {{
 *   data?: boolean,            // served as data (CORS) even under the page's own prefixes
 *   exposeHeaders?: boolean,   // default true: Access-Control-Expose-Headers on data
 *   ranges?: boolean,          // default true; false: Range ignored, 200 with the whole file
 * }} PathPolicy
 * @typedef {{
 *   onRequest?: (entry: LogEntry) => void,
 *   find?: (path: string) => Promise<Body | null>,
 *   policy?: (path: string) => PathPolicy,
 *   admit?: (req: import('node:http').IncomingMessage, entry: LogEntry) => Promise<Answer | null> | Answer | null,
 * }} HandlerOptions
 *   onRequest: each request once answered (the command line's log);
 *   find: where a path's file comes from (default: findFile, the mounts);
 *   policy: how a path is served;
 *   admit: called for each request but preflights before this server answers it; may wait, or
 *   return the answer to give instead
 */

/**
 * A Body over bytes in memory (tests and generated files served as if from disk).
 * @param {Uint8Array} bytes @param {string} path for its content type @param {number} [mtimeMs]
 *   which makes its ETag @returns {Body}
 */
export function bytesBody(bytes, path, mtimeMs = 0) {
  return {
    size: bytes.length, mtimeMs, type: contentType(path), close: async () => {},
    read: async (out, position) => {
      const piece = bytes.subarray(position, position + out.length)
      out.set(piece)
      return piece.length
    },
  }
}

/**
 * The file at `path` under one of the MOUNTS, or null (no mount, outside it, not a file).
 * @param {string} path the URL path, decoded
 * @returns {Promise<Body | null>}
 */
export async function findFile(path) {
  const mount = Object.keys(MOUNTS).find((m) => path.startsWith(m))
  if (!mount) return null
  const root = resolve(REPO, MOUNTS[/** @type {keyof typeof MOUNTS} */ (mount)])
  let rel = path.slice(mount.length)
  if (rel === '' || rel.endsWith('/')) rel += 'index.html'
  const full = resolve(root, rel)
  if (!full.startsWith(root + sep)) return null
  let handle
  try {
    handle = await fsOpen(full, 'r')
    const info = await handle.stat()
    if (!info.isFile()) {
      await handle.close()
      return null
    }
    const fh = handle
    return {
      size: info.size, mtimeMs: info.mtimeMs, type: contentType(full), close: () => fh.close(),
      read: async (out, position) => (await fh.read(out, 0, out.length, position)).bytesRead,
    }
  } catch {
    await handle?.close()
    return null
  }
}

/**
 * The request handler: the page's own files with the security headers, data with CORS, single
 * byte ranges, ETag and If-Range, HEAD, a redirect from / to the inspector.
 * @param {HandlerOptions} [options]
 * @returns {(req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => Promise<void>}
 */
export function createStaticHandler(options = {}) {
  const find = options.find ?? findFile
  return async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost')
    let path
    try {
      path = decodeURIComponent(url.pathname)
    } catch {
      path = url.pathname  // a bare % (100%.safetensors) is not an escape: the name as it is
    }
    const policy = options.policy?.(path) ?? {}
    /** @type {LogEntry} */
    const entry = { method: req.method ?? 'GET', path, range: req.headers.range ?? null, status: 0, bytes: 0 }
    // The page's own files get the security headers and no CORS; data (the samples, and what a
    // server built on this one serves as data) gets CORS, so that any page may read it.
    const isApp = !policy.data && APP_PREFIXES.some((prefix) => path.startsWith(prefix))
    const cors = /** @type {Record<string, string>} */ (isApp ? { ...SECURITY }
      : { 'X-Content-Type-Options': 'nosniff', 'Access-Control-Allow-Origin': '*' })
    if (!isApp && policy.exposeHeaders !== false) cors['Access-Control-Expose-Headers'] = EXPOSED
    /** @param {number} status @param {Record<string, string | number>} [headers] @param {string} [text] */
    const answer = (status, headers = {}, text) => {
      entry.status = status
      res.writeHead(status, { ...cors, 'Cache-Control': 'no-store', ...headers })
      res.end(text)
    }
    res.on('close', () => options.onRequest?.(entry))

    if (req.method === 'OPTIONS') {
      return answer(204, {
        'Access-Control-Allow-Methods': 'GET, HEAD, OPTIONS',
        'Access-Control-Allow-Headers': 'Range, If-Range, Authorization',
        'Access-Control-Max-Age': 600,
      })
    }
    const instead = await options.admit?.(req, entry)
    if (instead) return answer(instead.status, instead.headers, instead.text)
    if (req.method !== 'GET' && req.method !== 'HEAD') return answer(405, { Allow: 'GET, HEAD, OPTIONS' })
    if (path === '/') return answer(302, { Location: '/web-demo/' })
    if (path.includes('\0') || path.split('/').includes('..')) return answer(400, {}, 'bad path\n')
    const body = await find(path)
    if (!body) return answer(404, { 'Content-Type': 'text/plain' }, 'not found\n')
    try {
      await send(req, res, body, policy.ranges !== false, entry, cors)
    } finally {
      await body.close()
    }
  }
}

/**
 * @param {import('node:http').IncomingMessage} req @param {import('node:http').ServerResponse} res
 * @param {Body} body @param {boolean} ranges false: Range is ignored (200, the whole file)
 * @param {LogEntry} entry @param {Record<string, string>} cors
 */
async function send(req, res, body, ranges, entry, cors) {
  const { size } = body
  const etag = `"${size.toString(16)}-${Math.floor(body.mtimeMs).toString(16)}"`
  const headers = /** @type {Record<string, string | number>} */ ({
    ...cors,
    'Cache-Control': 'no-store',
    'Content-Type': body.type,
    'Accept-Ranges': ranges ? 'bytes' : 'none',
    ETag: etag,
    'Last-Modified': new Date(body.mtimeMs).toUTCString(),
  })
  // A client that kept this version (the inspector's cache) is told so, without the body.
  const ifNoneMatch = req.headers['if-none-match']
  if (ifNoneMatch !== undefined && ifNoneMatch.split(',').some((tag) => tag.trim() === etag || tag.trim() === '*')) {
    entry.status = 304
    res.writeHead(304, headers)
    return void res.end()
  }
  let range = ranges ? parseRange(req.headers.range, size) : null
  const ifRange = req.headers['if-range']
  if (range && ifRange !== undefined && ifRange !== etag) range = null  // changed: whole file
  if (range === 'unsatisfiable') {
    entry.status = 416
    res.writeHead(416, { ...headers, 'Content-Range': `bytes */${size}` })
    return void res.end()
  }
  const [start, end] = range ?? [0, size]
  if (range) headers['Content-Range'] = `bytes ${start}-${end - 1}/${size}`
  headers['Content-Length'] = end - start
  entry.status = range ? 206 : 200
  res.writeHead(entry.status, headers)
  if (req.method === 'HEAD') return void res.end()
  await writeBody(res, body, start, end, (n) => { entry.bytes += n })
  res.end()
}

/**
 * Starts the server. `port` 0 picks a free port.
 * @param {{ port?: number, host?: string } & HandlerOptions} [options]
 */
export async function startServer(options = {}) {
  const host = options.host ?? '127.0.0.1'
  const server = createServer(createStaticHandler(options))
  await new Promise((resolveListen, reject) => {
    server.once('error', reject)
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject)
      resolveListen(undefined)
    })
  })
  const address = /** @type {import('node:net').AddressInfo} */ (server.address())
  const origin = `http://${host}:${address.port}`
  return {
    origin,
    port: address.port,
    /** The inspector page, optionally opening `src` (?url=). @param {string} [src] */
    pageUrl(src) {
      const query = src === undefined ? '' : `?url=${encodeURIComponent(src).replace(/%2F/g, '/').replace(/%3A/g, ':')}`
      return `${origin}/web-demo/${query}`
    },
    /** @param {string} path */
    url(path) { return origin + path },
    close() {
      server.closeAllConnections()
      return new Promise((r) => server.close(() => r(undefined)))
    },
  }
}

/**
 * One range of a Range header as [start, end); null means the whole file (no header, a form
 * this server does not do, such as several ranges: RFC 9110 lets it answer 200).
 * @param {string | undefined} header
 * @param {number} size
 * @returns {[number, number] | 'unsatisfiable' | null}
 */
export function parseRange(header, size) {
  const m = header === undefined ? null : /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header)
  if (!m || (m[1] === '' && m[2] === '')) return null
  if (m[1] === '') {
    const n = Math.min(Number(m[2]), size)
    return n === 0 ? 'unsatisfiable' : [size - n, size]
  }
  const start = Number(m[1])
  if (start >= size) return 'unsatisfiable'
  const end = m[2] === '' ? size : Math.min(Number(m[2]) + 1, size)
  return end <= start ? null : [start, end]
}

/**
 * Writes bytes [start, end) of `body` in pieces of up to 64 KiB, honouring backpressure; stops
 * when the client goes away.
 * @param {import('node:http').ServerResponse} res @param {Body} body @param {number} start
 * @param {number} end @param {(n: number) => void} count
 */
async function writeBody(res, body, start, end, count) {
  for (let at = start; at < end && !res.destroyed;) {
    const piece = new Uint8Array(Math.min(CHUNK, end - at))
    const n = await body.read(piece, at)
    if (n <= 0 || res.destroyed) break  // the client may have gone while the read was under way
    at += n
    count(n)
    res.write(piece.subarray(0, n))
    if (res.writableNeedDrain && !res.destroyed) {
      await new Promise((r) => {
        const go = () => {
          res.off('drain', go)
          res.off('close', go)
          r(undefined)
        }
        res.on('drain', go)
        res.on('close', go)
      })
    }
  }
}

/** @param {string[]} argv */
async function main(argv) {
  const value = (/** @type {string} */ flag) => {
    const i = argv.indexOf(flag)
    return i >= 0 ? argv[i + 1] : undefined
  }
  const host = value('--host') ?? '127.0.0.1'
  const quiet = argv.includes('--quiet')
  const wanted = Number(value('--port') ?? process.env.PORT ?? 8080)
  /** @param {LogEntry} e */
  const onRequest = (e) => {
    if (quiet || !/\.(safetensors|json)$/.test(e.path)) return
    const range = e.range ? ` ${e.range}` : ''
    process.stdout.write(`${e.method} ${e.path}${range} -> ${e.status}, ${e.bytes.toLocaleString('en-US')} bytes\n`)
  }
  let server
  // The usual port, or the next free one (another inspector may be running), or any.
  for (const port of [wanted, ...Array.from({ length: 9 }, (_, i) => wanted + 1 + i), 0]) {
    try {
      server = await startServer({ port, host, onRequest })
      break
    } catch (error) {
      if (/** @type {NodeJS.ErrnoException} */ (error).code !== 'EADDRINUSE') throw error
    }
  }
  if (!server) throw new Error('no free port')
  const s = server
  process.stdout.write([
    '',
    'safetensors-wasm inspector',
    `  ${s.pageUrl()}`,
    `  the sample model:   ${s.pageUrl('../sample/tiny-llama.safetensors')}`,
    `  a sharded sample:   ${s.pageUrl('../sample/sharded/model.safetensors.index.json')}`,
    '',
    `Serving web-demo/, js/, dist/ and build/sample/ (as /sample/) from ${join(REPO)} with Range support.`,
    'Press Ctrl-C to stop.',
    '',
  ].join('\n'))
  const stop = async () => {
    await s.close()
    process.exit(0)
  }
  process.on('SIGINT', stop)
  process.on('SIGTERM', stop)
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).catch((error) => {
    process.stderr.write(`serve: ${error?.stack ?? error}\n`)
    process.exitCode = 1
  })
}

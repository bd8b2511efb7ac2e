/**
 * A Hugging Face Hub emulation for tests: two node:http servers on 127.0.0.1, on two ports (so
 * two origins), that answer as huggingface.co and its CDN do.
 *
 * HUB  `GET|HEAD /{org}/{repo}/resolve/{rev}/{path...}` (also `/datasets/...`, `/spaces/...`):
 *      - an LFS file (*.safetensors): 302 to a signed CDN URL `/repos/{sha256}/{path}?Expires=
 *        {unix s}&Signature={hmac}&Key-Pair-Id=...`, with X-Linked-Size, X-Linked-Etag
 *        ("sha256"), ETag, X-Repo-Commit; the signature covers the path and the expiry; the
 *        redirect whatever If-None-Match says (the CDN answers it);
 *      - any other file (an index, config.json): served by the hub itself, 200 or 206 (Range),
 *        304 to a matching If-None-Match;
 *      - 404 EntryNotFound, 404 RevisionNotFound, 401/404 RepositoryNotFound, 401/403 GatedRepo,
 *        each with X-Error-Code and X-Error-Message and a text body, as the Hub answers;
 *      - CORS: `Access-Control-Allow-Origin: *` and exposed headers on every answer, preflights
 *        allowing Range, If-Range, If-None-Match and Authorization.
 *      With `signRange`, as a Xet bridge does, the URL is also signed for the Range the resolve
 *      request asked for (`&X-Range=`), and the CDN refuses any other range: 403 "Auth failed:
 *      invalid range".
 * CDN  `GET|HEAD /repos/{sha256}/...`: the object (content-addressed: a replaced file's old object
 *      stays, as on the real CDN) with Range, ETag `"sha256"`, If-None-Match (304), Last-Modified
 *      and CORS, while the signature is valid and not expired; else 403 with an S3-style XML body
 *      (`<Code>AccessDenied</Code><Message>Request has expired</Message>`).
 *
 * Tests control the clock (advance, expireAll, setTtl), the files (addFile, replaceFile,
 * removeFile), access (gated repos, deny) and read counters and a log of every request on each
 * server with the headers that matter (Authorization, Cookie, Range). The servers never keep
 * the process alive (unref) and close themselves after `lifetime` ms.
 */
import { createHash, createHmac, randomBytes } from 'node:crypto'
import { createServer } from 'node:http'
import { parseRange } from '../../web-demo/serve.js'

/** The token that opens gated repos, unless startHub is given another. */
export const HUB_TOKEN = 'hf_test_token_of_an_authorized_user'
/** A valid token of a user who has not been granted access to gated repos: 403. */
export const OTHER_USER_TOKEN = 'hf_test_token_of_another_user'

const HUB_EXPOSED = 'X-Repo-Commit, X-Request-Id, X-Error-Code, X-Error-Message, X-Total-Count, ETag, Link, ' +
  'Accept-Ranges, Content-Range, Content-Length, Last-Modified, X-Linked-Size, X-Linked-ETag'
const CDN_EXPOSED = 'Content-Range, Content-Length, ETag, Last-Modified, Accept-Ranges'
const ALLOWED_HEADERS = 'Range, If-Range, If-None-Match, Authorization, Content-Type'
const KEY_PAIR_ID = 'KTESTKEYPAIR'
const CHUNK = 64 * 1024

/**
 * @typedef {{ bytes: Uint8Array, sha256: string, oid: string, lfs: boolean, modified: string }} HubFile
 *   sha256: the LFS object's id (the CDN path and ETag); oid: the git blob id (the hub's ETag)
 * @typedef {{ commit: string, files: Map<string, HubFile> }} Revision
 * @typedef {{ gated: boolean, denied: { status: number, message: string } | null,
 *   revisions: Map<string, Revision> }} Repo
 * @typedef {{ server: 'hub' | 'cdn', method: string, path: string, query: string,
 *   repo: string | null, revision: string | null, file: string | null,
 *   range: string | null, ifRange: string | null, authorization: string | null, cookie: string | null,
 *   origin: string | null, status: number, bytes: number }} LogEntry
 *   path: the decoded pathname; repo ('org/name', 'datasets/org/name'), revision and file: what
 *   a hub request named; file: for the CDN, the object's sha256
 * @typedef {{ revision?: string, gated?: boolean, lfs?: boolean }} FileOptions
 */

/**
 * Starts the hub and its CDN.
 * @param {{ token?: string, ttl?: number, lifetime?: number, latency?: number, signRange?: boolean }} [options]
 *   ttl: how long a signed URL is valid (ms, default one hour); latency: ms before each answer
 */
export async function startHub(options = {}) {
  const { token = HUB_TOKEN, lifetime = 300_000 } = options
  const secret = randomBytes(16)
  /** @type {Map<string, Repo>} */
  const repos = new Map()
  /** @type {Map<string, HubFile>} every LFS object ever uploaded, by sha256 */
  const objects = new Map()
  /** @type {{ hub: number, cdn: number, preflights: number, hubLog: LogEntry[], cdnLog: LogEntry[] }} */
  const stats = { hub: 0, cdn: 0, preflights: 0, hubLog: [], cdnLog: [] }
  /** skew: ms added to Date.now(); latestExpiry: the latest expiry (ms) of a URL issued so far */
  const clock = { skew: 0, ttl: options.ttl ?? 3_600_000, latency: options.latency ?? 0, latestExpiry: 0 }
  let commits = 0
  const now = () => Date.now() + clock.skew

  /** @param {Uint8Array} bytes @param {boolean} lfs @returns {HubFile} */
  function makeFile(bytes, lfs) {
    const copy = new Uint8Array(bytes)
    const sha256 = createHash('sha256').update(copy).digest('hex')
    const oid = createHash('sha1').update(`blob ${copy.length}\0`).update(copy).digest('hex')
    const file = { bytes: copy, sha256, oid, lfs, modified: new Date(now()).toUTCString() }
    if (lfs) objects.set(sha256, file)
    return file
  }

  /** @param {string} repo @returns {Repo} */
  function repoOf(repo) {
    if (!/^((datasets|spaces)\/)?[\w.-]+\/[\w.-]+$/.test(repo)) throw new Error(`hub: ${repo} is not org/name or datasets/org/name`)
    let r = repos.get(repo)
    if (!r) repos.set(repo, r = { gated: false, denied: null, revisions: new Map() })
    return r
  }

  /** A new commit on `revision` (created when new). @param {Repo} r @param {string} revision */
  function commitTo(r, revision) {
    let rev = r.revisions.get(revision)
    if (!rev) r.revisions.set(revision, rev = { commit: '', files: new Map() })
    rev.commit = createHash('sha1').update(`commit ${++commits} ${revision}`).digest('hex')
    return rev
  }

  /** The signature of a CDN path valid until `expires` (unix seconds), for one range if given.
   * @param {string} pathname @param {number} expires @param {string | null} [range] */
  const sign = (pathname, expires, range = null) =>
    createHmac('sha256', secret).update(`${pathname}\n${expires}${range === null ? '' : `\n${range}`}`).digest('hex').slice(0, 40)

  /** @param {import('node:http').IncomingMessage} req @param {LogEntry['server']} server @param {URL} url @returns {LogEntry} */
  function logEntry(req, server, url) {
    let path
    try { path = decodeURIComponent(url.pathname) } catch { path = url.pathname }
    return {
      server, method: req.method ?? '', path, query: url.search, repo: null, revision: null, file: null,
      range: req.headers.range ?? null, ifRange: /** @type {string | undefined} */ (req.headers['if-range']) ?? null,
      authorization: req.headers.authorization ?? null, cookie: req.headers.cookie ?? null,
      origin: req.headers.origin ?? null, status: 0, bytes: 0,
    }
  }

  /**
   * Answers a request for `file`: 206 for a satisfiable single range, 416, else 200.
   * @param {import('node:http').IncomingMessage} req @param {import('node:http').ServerResponse} res
   * @param {LogEntry} entry @param {HubFile} file @param {Record<string, string>} headers
   * @param {string} etag @param {string} type
   */
  async function sendFile(req, res, entry, file, headers, etag, type) {
    const size = file.bytes.length
    // If-None-Match before Range (RFC 9110 13.2.2), compared weakly, as S3 and CloudFront do.
    const noneMatch = req.headers['if-none-match']
    const weak = (/** @type {string} */ tag) => tag.trim().replace(/^W\//, '')
    if (noneMatch !== undefined && (noneMatch.trim() === '*' || noneMatch.split(',').some((t) => weak(t) === etag))) {
      entry.status = 304
      res.writeHead(304, { ...headers, ETag: etag, 'Last-Modified': file.modified })
      return void res.end()
    }
    let range = parseRange(req.headers.range, size)
    if (range !== null && req.headers['if-range'] !== undefined && req.headers['if-range'] !== etag) range = null
    const base = { ...headers, ETag: etag, 'Last-Modified': file.modified, 'Accept-Ranges': 'bytes', 'Content-Type': type }
    if (range === 'unsatisfiable') {
      entry.status = 416
      res.writeHead(416, { ...base, 'Content-Range': `bytes */${size}`, 'Content-Length': 0 })
      return void res.end()
    }
    const [start, end] = range ?? [0, size]
    entry.status = range ? 206 : 200
    res.writeHead(entry.status, {
      ...base, 'Content-Length': end - start, ...(range ? { 'Content-Range': `bytes ${start}-${end - 1}/${size}` } : {}),
    })
    if (req.method === 'HEAD') return void res.end()
    for (let at = start; at < end && !res.destroyed;) {
      const piece = file.bytes.subarray(at, Math.min(end, at + CHUNK))
      at += piece.length
      entry.bytes += piece.length
      if (!res.write(piece)) {
        await new Promise((resolve) => {
          const go = () => { res.off('drain', go); res.off('close', go); resolve(undefined) }
          res.on('drain', go)
          res.on('close', go)
        })
      }
    }
    res.end()
  }

  const hubCors = { 'Access-Control-Allow-Origin': '*', 'Access-Control-Expose-Headers': HUB_EXPOSED, Vary: 'Origin' }

  const hub = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://hub')
    if (req.method === 'OPTIONS') {
      stats.preflights++
      res.writeHead(204, { ...hubCors, 'Access-Control-Allow-Methods': 'GET, HEAD, OPTIONS',
        'Access-Control-Allow-Headers': ALLOWED_HEADERS, 'Access-Control-Max-Age': '600' })
      return void res.end()
    }
    const entry = logEntry(req, 'hub', url)
    stats.hub++
    stats.hubLog.push(entry)
    if (clock.latency) await new Promise((resolve) => setTimeout(resolve, clock.latency))
    /** @param {number} status @param {string} code @param {string} message */
    const fail = (status, code, message) => {
      entry.status = status
      res.writeHead(status, { ...hubCors, 'Content-Type': 'text/plain; charset=utf-8', 'X-Error-Code': code, 'X-Error-Message': message })
      res.end(req.method === 'HEAD' ? undefined : message)
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') return fail(405, 'MethodNotAllowed', 'Method not allowed')
    let parts
    try { parts = url.pathname.split('/').slice(1).map(decodeURIComponent) } catch { return fail(400, 'BadRequest', 'Bad request') }
    const prefix = parts[0] === 'datasets' || parts[0] === 'spaces' ? `${parts.shift()}/` : ''
    if (parts.length < 5 || parts[2] !== 'resolve' || parts.slice(4).some((s) => s === '' || s === '.' || s === '..'))
      return fail(404, 'NotFound', 'Sorry, we can\'t find the page you are looking for.')
    const repoId = `${prefix}${parts[0]}/${parts[1]}`
    const revision = parts[3]
    const path = parts.slice(4).join('/')
    Object.assign(entry, { repo: repoId, revision, file: path })
    const repo = repos.get(repoId)
    const auth = req.headers.authorization ?? null
    const bearer = auth?.match(/^Bearer\s+(\S+)$/i)?.[1] ?? null
    if (bearer !== null && bearer !== token && bearer !== OTHER_USER_TOKEN)
      return fail(401, 'Unauthorized', 'Invalid credentials in Authorization header')
    // The Hub does not tell anonymous callers whether a private repo exists.
    if (!repo) return fail(bearer ? 404 : 401, 'RepositoryNotFound', 'Repository not found')
    if (repo.denied) return fail(repo.denied.status, 'Forbidden', repo.denied.message)
    const kind = prefix === 'datasets/' ? 'dataset' : prefix === 'spaces/' ? 'space' : 'model'
    const name = repoId.replace(/^(datasets|spaces)\//, '')
    if (repo.gated && bearer === null) {
      return fail(401, 'GatedRepo', `Access to ${kind} ${name} is restricted. You must have access to it and be ` +
        'authenticated to access it. Please log in.')
    }
    if (repo.gated && bearer !== token) {
      return fail(403, 'GatedRepo', `Access to ${kind} ${name} is restricted and you are not in the authorized ` +
        `list. Visit https://huggingface.co/${repoId} to ask for access.`)
    }
    const rev = repo.revisions.get(revision)
    if (!rev) return fail(404, 'RevisionNotFound', `Invalid rev id: ${revision}`)
    const file = rev.files.get(path)
    if (!file) return fail(404, 'EntryNotFound', 'Entry not found')
    const common = { ...hubCors, 'X-Repo-Commit': rev.commit, 'X-Request-Id': `Root=${randomBytes(6).toString('hex')}` }
    if (!file.lfs) {
      const type = path.endsWith('.json') ? 'application/json; charset=utf-8' : 'text/plain; charset=utf-8'
      return sendFile(req, res, entry, file, common, `"${file.oid}"`, type)
    }
    const cdnPath = `/repos/${file.sha256}/${path.split('/').map(encodeURIComponent).join('/')}`
    const expires = Math.floor((now() + clock.ttl) / 1000)
    clock.latestExpiry = Math.max(clock.latestExpiry, expires * 1000)
    const range = options.signRange ? req.headers.range ?? '' : null
    const location = `${cdn.base}${cdnPath}?Expires=${expires}&Signature=${sign(cdnPath, expires, range)}&Key-Pair-Id=${KEY_PAIR_ID}` +
      (range === null ? '' : `&X-Range=${encodeURIComponent(range)}`)
    const body = `Found. Redirecting to ${location}`
    entry.status = 302
    res.writeHead(302, {
      ...common, Location: location, 'X-Linked-Size': String(file.bytes.length), 'X-Linked-Etag': `"${file.sha256}"`,
      ETag: `"${file.oid}"`, 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': Buffer.byteLength(body),
    })
    res.end(req.method === 'HEAD' ? undefined : body)
  })

  const cdnCors = { 'Access-Control-Allow-Origin': '*', 'Access-Control-Expose-Headers': CDN_EXPOSED }

  const cdnServer = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://cdn')
    if (req.method === 'OPTIONS') {
      stats.preflights++
      res.writeHead(204, { ...cdnCors, 'Access-Control-Allow-Methods': 'GET, HEAD',
        'Access-Control-Allow-Headers': ALLOWED_HEADERS, 'Access-Control-Max-Age': '600' })
      return void res.end()
    }
    const entry = logEntry(req, 'cdn', url)
    stats.cdn++
    stats.cdnLog.push(entry)
    if (clock.latency) await new Promise((resolve) => setTimeout(resolve, clock.latency))
    /** @param {number} status @param {string} code @param {string} message @param {string} [extra] */
    const fail = (status, code, message, extra = '') => {
      entry.status = status
      const xml = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message>${extra}` +
        `<RequestId>${randomBytes(8).toString('hex').toUpperCase()}</RequestId></Error>`
      res.writeHead(status, { ...cdnCors, 'Content-Type': 'application/xml', 'Content-Length': Buffer.byteLength(xml) })
      res.end(req.method === 'HEAD' ? undefined : xml)
    }
    const m = /^\/repos\/([0-9a-f]{64})\/./.exec(url.pathname)
    const object = m ? objects.get(m[1]) : undefined
    if (m) entry.file = m[1]
    const expires = Number(url.searchParams.get('Expires'))
    const signature = url.searchParams.get('Signature')
    const range = url.searchParams.get('X-Range')
    if (!signature || !Number.isSafeInteger(expires) || signature !== sign(url.pathname, expires, range))
      return fail(403, 'AccessDenied', 'Access denied')
    if (range !== null && (req.headers.range ?? '') !== range) {
      entry.status = 403
      return void res.writeHead(403, { ...cdnCors, 'Content-Type': 'text/plain' }).end('Auth failed: invalid range')
    }
    if (now() >= expires * 1000) {
      return fail(403, 'AccessDenied', 'Request has expired',
        `<Expires>${new Date(expires * 1000).toISOString()}</Expires><ServerTime>${new Date(now()).toISOString()}</ServerTime>`)
    }
    if (!object) return fail(404, 'NoSuchKey', 'The specified key does not exist.')
    return sendFile(req, res, entry, object, cdnCors, `"${object.sha256}"`, 'application/octet-stream')
  })

  /** @param {import('node:http').Server} server */
  async function listen(server) {
    await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)))
    server.unref()
    return `http://127.0.0.1:${/** @type {import('node:net').AddressInfo} */ (server.address()).port}`
  }
  const cdn = { base: await listen(cdnServer) }
  const base = await listen(hub)
  const stopTimer = setTimeout(() => close(), lifetime)
  stopTimer.unref()
  function close() {
    clearTimeout(stopTimer)
    return Promise.all([hub, cdnServer].map((server) => {
      server.closeAllConnections()
      return new Promise((resolve) => server.close(() => resolve(undefined)))
    })).then(() => undefined)
  }

  /** @param {string} repo @param {string} path @param {string} revision */
  function existing(repo, path, revision) {
    const file = repos.get(repo)?.revisions.get(revision)?.files.get(path)
    if (!file) throw new Error(`hub: ${repo}@${revision} has no ${path}`)
    return file
  }

  return {
    /** The hub's origin: pass it as the `endpoint` option (or HF_ENDPOINT). */
    base,
    /** The CDN's origin (another port: another origin). */
    cdnBase: cdn.base,
    /** The token that opens gated repos. */
    token,
    stats,
    /**
     * Uploads a file: `repo` is 'org/name' or 'datasets/org/name'. *.safetensors files are LFS
     * (redirected to the CDN), others are served by the hub, unless `lfs` says otherwise.
     * @param {string} repo @param {string} path @param {Uint8Array} bytes @param {FileOptions} [opts]
     */
    addFile(repo, path, bytes, opts = {}) {
      const r = repoOf(repo)
      if (opts.gated !== undefined) r.gated = opts.gated
      commitTo(r, opts.revision ?? 'main').files.set(path, makeFile(bytes, opts.lfs ?? path.endsWith('.safetensors')))
    },
    /**
     * New content at an existing path (a new commit): a new sha256, so a new CDN object and ETag;
     * the hub redirects to the new object from now on, the old object stays on the CDN.
     * @param {string} repo @param {string} path @param {Uint8Array} bytes @param {FileOptions} [opts]
     */
    replaceFile(repo, path, bytes, opts = {}) {
      const old = existing(repo, path, opts.revision ?? 'main')
      this.addFile(repo, path, bytes, { lfs: old.lfs, ...opts })
    },
    /** @param {string} repo @param {string} path @param {{ revision?: string }} [opts] */
    removeFile(repo, path, opts = {}) {
      const revision = opts.revision ?? 'main'
      existing(repo, path, revision)
      commitTo(repoOf(repo), revision).files.delete(path)
    },
    /** An empty repo (no files) or a new empty revision. @param {string} repo @param {{ revision?: string, gated?: boolean }} [opts] */
    addRepo(repo, opts = {}) {
      const r = repoOf(repo)
      if (opts.gated !== undefined) r.gated = opts.gated
      if (!r.revisions.has(opts.revision ?? 'main')) commitTo(r, opts.revision ?? 'main')
    },
    /** @param {string} repo @param {boolean} gated */
    setGated(repo, gated) { repoOf(repo).gated = gated },
    /**
     * The hub answers `status` with `message` (X-Error-Message) for every file of the repo, as
     * when access is revoked; `allow` undoes it.
     * @param {string} repo @param {number} [status] @param {string} [message]
     */
    deny(repo, status = 403, message = `Access to ${repo} has been revoked`) { repoOf(repo).denied = { status, message } },
    /** @param {string} repo */
    allow(repo) { repoOf(repo).denied = null },
    /** The commit a revision points at (X-Repo-Commit). @param {string} repo @param {string} [revision] */
    commit(repo, revision = 'main') { return repos.get(repo)?.revisions.get(revision)?.commit ?? null },
    /** The sha256 of a file (its CDN object and ETag). @param {string} repo @param {string} path @param {string} [revision] */
    sha256(repo, path, revision = 'main') { return existing(repo, path, revision).sha256 },
    /** The emulated clock, in ms since the epoch. */
    now,
    /** Moves the clock on: signatures issued before may expire. @param {number} ms */
    advance(ms) { clock.skew += ms },
    /** Every signed URL issued so far is expired from now on (the clock moves on past the
     * latest expiry issued). */
    expireAll() { clock.skew = Math.max(clock.skew, clock.latestExpiry - Date.now()) },
    /** How long the URLs issued from now on are valid (0 or less: expired at once). @param {number} ms */
    setTtl(ms) { clock.ttl = ms },
    /** @param {number} ms */
    setLatency(ms) { clock.latency = ms },
    /**
     * Hub requests (resolves), all or those for a file path (optionally of one repo).
     * @param {string} [path] @param {string} [repo]
     */
    resolves(path, repo) {
      return stats.hubLog.filter((e) => (path === undefined || e.file === path) && (repo === undefined || e.repo === repo)).length
    },
    /** CDN requests, all or those for one object. @param {string} [sha256] */
    cdnRequests(sha256) { return stats.cdnLog.filter((e) => sha256 === undefined || e.file === sha256).length },
    /** Every logged request of both servers. */
    allRequests() { return [...stats.hubLog, ...stats.cdnLog] },
    resetStats() { Object.assign(stats, { hub: 0, cdn: 0, preflights: 0, hubLog: [], cdnLog: [] }) },
    close,
  }
}

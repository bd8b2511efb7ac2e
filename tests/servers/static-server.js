/**
 * The inspector's static server (web-demo/serve.js, its own handler and headers) with what tests
 * add: files in memory, per-path quirks (added latency, throttled bodies, a server that ignores
 * Range, one that hides Content-Range from scripts, one that wants a token) and a count of the
 * requests and body bytes it sent.
 *
 *   const server = await startServer()
 *   server.addFile('/m/a.safetensors', bytes)          // any path, mounted or not: served as data
 *   server.addQuirks('/slow/', { bytesPerSecond: 400_000 })
 *   await page.goto(server.pageUrl(server.url('/m/a.safetensors')))
 *   server.bytesFor('/m/')                              // body bytes sent for those paths
 *   await server.close()
 */
import { bytesBody, findFile, startServer as startStaticServer } from '../../web-demo/serve.js'

export { SAMPLE_PATH, SHARDED_SAMPLE_PATH } from '../../web-demo/serve.js'

/**
 * @typedef {import('../../web-demo/serve.js').Body} Body
 * @typedef {import('../../web-demo/serve.js').LogEntry} LogEntry
 * @typedef {{
 *   latency?: number,          // ms before answering
 *   bytesPerSecond?: number,   // throttle the body
 *   ignoreRange?: boolean,     // answer 200 with the whole file, as some servers do
 *   noExpose?: boolean,        // omit Access-Control-Expose-Headers (a misconfigured CDN)
 *   auth?: string,             // answer 401 unless Authorization is exactly this
 * }} Quirks
 */

/** Bytes per piece of a throttled body: about a tenth of a second's worth. */
const throttleChunk = (/** @type {number} */ bytesPerSecond) => Math.max(1024, Math.min(64 * 1024, Math.floor(bytesPerSecond / 10)))

/**
 * Starts the server on 127.0.0.1 (`port` 0, the default, picks a free port).
 * @param {{ port?: number, host?: string, quiet?: boolean, exposeHeaders?: boolean,
 *   onRequest?: (entry: LogEntry) => void }} [options]
 *   quiet: accepted for the callers' sake (this server never prints); exposeHeaders: false
 *   omits Access-Control-Expose-Headers everywhere, as the noExpose quirk does for some paths
 */
export async function startServer(options = {}) {
  /** @type {Map<string, Uint8Array>} */
  const memory = new Map()
  /** @type {{ prefix: string, quirks: Quirks }[]} */
  const quirkList = []
  /** @type {LogEntry[]} every request since the start, for `stats.bytes` */
  const every = []
  let bytesBefore = 0  // body bytes sent before the last resetStats
  /** Requests and body bytes since the last resetStats; bytes as the server counts them sent. */
  const stats = {
    requests: 0,
    /** @type {LogEntry[]} */
    log: [],
    get bytes() { return every.reduce((n, e) => n + e.bytes, 0) - bytesBefore },
  }
  const memoryTime = Date.now()

  /** @param {string} path @returns {Quirks} every quirk whose prefix matches, later ones winning */
  const quirksFor = (path) => Object.assign({}, ...quirkList.filter((q) => path.startsWith(q.prefix)).map((q) => q.quirks))

  /** @param {string} path @returns {Body | null} */
  function inMemory(path) {
    const bytes = memory.get(path)
    return bytes ? bytesBody(bytes, path, memoryTime) : null
  }

  /**
   * The body throttled to `bytesPerSecond`: pieces of about a tenth of a second's worth, each
   * read after the time the one before takes at that rate (the server checks between pieces
   * whether the client has gone).
   * @param {Body} body @param {number} bytesPerSecond
   * @returns {Body}
   */
  function throttled(body, bytesPerSecond) {
    let owed = 0  // ms the piece before takes
    return {
      ...body,
      read: async (out, position) => {
        if (owed) await new Promise((r) => setTimeout(r, owed))
        const n = await body.read(out.subarray(0, throttleChunk(bytesPerSecond)), position)
        owed = (n / bytesPerSecond) * 1000
        return n
      },
    }
  }

  const server = await startStaticServer({
    port: options.port,
    host: options.host,
    onRequest: options.onRequest,
    // In-memory files are data wherever they sit, and win over the mounts.
    policy: (path) => {
      const quirks = quirksFor(path)
      return { data: memory.has(path), exposeHeaders: options.exposeHeaders !== false && !quirks.noExpose, ranges: !quirks.ignoreRange }
    },
    find: async (path) => {
      const body = inMemory(path) ?? await findFile(path)
      const bytesPerSecond = quirksFor(path).bytesPerSecond
      return body && bytesPerSecond ? throttled(body, bytesPerSecond) : body
    },
    admit: async (req, entry) => {
      stats.requests++
      stats.log.push(entry)
      every.push(entry)
      if (req.method !== 'GET' && req.method !== 'HEAD') return null
      const quirks = quirksFor(entry.path)
      if (quirks.latency) await new Promise((r) => setTimeout(r, quirks.latency))
      if (quirks.auth !== undefined && req.headers.authorization !== quirks.auth)
        return { status: 401, headers: { 'Content-Type': 'text/plain', 'WWW-Authenticate': 'Bearer' }, text: 'a token is needed\n' }
      return null
    },
  })

  return {
    ...server,
    stats,
    /** Bytes sent for paths starting with `prefix`. @param {string} prefix */
    bytesFor(prefix) { return stats.log.filter((e) => e.path.startsWith(prefix)).reduce((n, e) => n + e.bytes, 0) },
    /** @param {string} prefix */
    requestsFor(prefix) { return stats.log.filter((e) => e.path.startsWith(prefix)).length },
    resetStats() {
      bytesBefore += stats.bytes
      stats.requests = 0
      stats.log = []
    },
    /** Serves `bytes` at `path` (any path, mounted or not). @param {string} path @param {Uint8Array} bytes */
    addFile(path, bytes) { memory.set(path, bytes) },
    /** @param {string} prefix paths it applies to @param {Quirks} quirks */
    addQuirks(prefix, quirks) { quirkList.push({ prefix, quirks }) },
    clearQuirks() { quirkList.length = 0 },
  }
}


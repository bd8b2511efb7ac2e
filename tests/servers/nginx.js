/**
 * A real nginx for a test: Debian's binary, run in the foreground (tests/servers/nginx.conf:
 * no daemon, no master process) on free 127.0.0.1 ports, with its own prefix folder in a temp
 * dir that holds everything it writes (pid file, logs, temp paths) and the folder it serves.
 * `stop()` kills it by its pid and removes the folder.
 *
 *   const server = await startNginx()
 *   await writeFile(join(server.root, 'a.safetensors'), bytes)
 *   await open(server.url('/a.safetensors'))       // or server.gzipUrl(...): gzip on for all
 *   const log = await server.takeLog(1)             // the requests since the last takeLog
 *   await server.stop()
 */
import { spawn } from 'node:child_process'
import { accessSync, constants } from 'node:fs'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { connect, createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { delimiter, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const TEMPLATE = fileURLToPath(new URL('./nginx.conf', import.meta.url))
const START_TIMEOUT = 10_000
/** How long takeLog waits for the entries it expects: nginx writes a request's line after the
 * response has gone out, so the client may see the answer a moment before the line exists. */
const LOG_TIMEOUT = 3_000
/** After the expected entries are there, how long takeLog waits for any unexpected extra one. */
const LOG_SETTLE = 50

/**
 * One request as the access log's `ranged` format writes it; headers not sent are ''.
 * @typedef {{ method: string, uri: string, status: number, range: string, ifRange: string,
 *   acceptEncoding: string, bytes: number, contentEncoding: string, contentRange: string,
 *   etag: string }} LogEntry
 * @typedef {Awaited<ReturnType<typeof startNginx>>} Nginx
 */

/**
 * The nginx binary: $NGINX_PATH, else /usr/sbin/nginx (Debian's, often not on a user's PATH),
 * else `nginx` on PATH; null when there is none.
 * @returns {string | null}
 */
export function findNginx() {
  const candidates = process.env.NGINX_PATH ? [process.env.NGINX_PATH]
    : ['/usr/sbin/nginx', ...(process.env.PATH ?? '').split(delimiter).filter(Boolean).map((dir) => join(dir, 'nginx'))]
  for (const path of candidates) {
    try {
      accessSync(path, constants.X_OK)
      return path
    } catch {
      // not there
    }
  }
  return null
}

/** @param {number} n @returns {Promise<number[]>} n distinct ports free on 127.0.0.1 just now */
async function freePorts(n) {
  const servers = await Promise.all(Array.from({ length: n }, () => new Promise(
    /** @param {(s: import('node:net').Server) => void} resolve @param {(e: Error) => void} reject */
    (resolve, reject) => {
      const s = createServer()
      s.once('error', reject)
      s.listen(0, '127.0.0.1', () => resolve(s))
    })))
  const ports = servers.map((s) => /** @type {import('node:net').AddressInfo} */ (s.address()).port)
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(() => resolve(undefined)))))
  return ports
}

/** @param {number} port @returns {Promise<boolean>} whether something accepts connections */
function accepts(port) {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    socket.once('connect', () => { socket.destroy(); resolve(true) })
    socket.once('error', () => resolve(false))
  })
}

/** @param {number} ms */
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** @param {string} path @returns {Promise<string>} '' when the file does not exist */
async function readText(path) {
  try {
    return await readFile(path, 'utf8')
  } catch {
    return ''
  }
}

/**
 * Starts an nginx; rejects with its error log if it does not come up.
 * @param {{ binary?: string }} [options]
 */
export async function startNginx(options = {}) {
  const binary = options.binary ?? findNginx()
  if (!binary) throw new Error('no nginx binary (bash .ci/bootstrap.sh installs it; NGINX_PATH points elsewhere)')
  const prefix = await mkdtemp(join(tmpdir(), 'st-nginx-'))
  try {
    const root = join(prefix, 'html')
    for (const dir of ['logs', 'temp', 'html']) await mkdir(join(prefix, dir))
    const template = await readFile(TEMPLATE, 'utf8')
    // Another process may take a port between freePorts and nginx's bind: then try new ones.
    for (let attempt = 1; ; attempt++) {
      const [port, gzipPort] = await freePorts(2)
      try {
        const child = await launch(binary, prefix, template, { PREFIX: prefix, ROOT: root, PORT: port, GZIP_PORT: gzipPort })
        return handle(child, prefix, root, port, gzipPort)
      } catch (error) {
        if (attempt >= 3 || !/Address already in use/.test(String(/** @type {Error} */ (error)?.message))) throw error
      }
    }
  } catch (error) {
    await rm(prefix, { recursive: true, force: true })
    throw error
  }
}

/**
 * Writes the config and runs nginx until both ports accept connections.
 * @param {string} binary @param {string} prefix @param {string} template
 * @param {Record<string, string | number>} values
 * @returns {Promise<import('node:child_process').ChildProcess>}
 */
async function launch(binary, prefix, template, values) {
  const conf = template.replace(/\{\{(\w+)\}\}/g, (whole, key) => {
    if (!(key in values)) throw new Error(`nginx.conf: no value for ${whole}`)
    return String(values[key])
  })
  const confPath = join(prefix, 'nginx.conf')
  const errorLog = join(prefix, 'logs', 'error.log')
  await writeFile(confPath, conf)
  await writeFile(errorLog, '')
  // -e: the error log from the start (before the config is read, nginx would open its
  // compiled-in /var/log/nginx/error.log).
  const child = spawn(binary, ['-p', `${prefix}/`, '-c', confPath, '-e', errorLog], { stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  child.stderr?.setEncoding('utf8').on('data', (text) => { stderr += text })
  /** @type {string | null} */
  let exited = null
  child.once('exit', (code, signal) => { exited = `exited (${signal ?? code})` })
  child.once('error', (error) => { exited = `could not start: ${error.message}` })
  const deadline = Date.now() + START_TIMEOUT
  for (;;) {
    if (exited === null && await accepts(Number(values.PORT)) && await accepts(Number(values.GZIP_PORT))) return child
    if (exited !== null || Date.now() > deadline) {
      child.kill('SIGKILL')
      const log = `${stderr}${await readText(errorLog)}`.trim()
      throw new Error(`nginx ${exited ?? `did not listen within ${START_TIMEOUT} ms`}: ${log || '(no error log)'}`)
    }
    await sleep(20)
  }
}

/**
 * @param {import('node:child_process').ChildProcess} child @param {string} prefix
 * @param {string} root @param {number} port @param {number} gzipPort
 */
function handle(child, prefix, root, port, gzipPort) {
  const accessLog = join(prefix, 'logs', 'access.log')
  // If the test process dies without stop(), the nginx goes with it.
  const killOnExit = () => child.kill('SIGKILL')
  process.once('exit', killOnExit)
  let taken = 0
  let stopped = false

  /** @returns {Promise<LogEntry[]>} every complete line from the `taken` entry on */
  async function entriesSinceMark() {
    const lines = (await readText(accessLog)).split('\n')
    lines.pop()  // after the last newline: '' or a line being written
    return lines.slice(taken).map((line) => /** @type {LogEntry} */ (JSON.parse(line)))
  }

  return {
    /** the folder served, inside the prefix */
    root,
    prefix,
    port,
    gzipPort,
    /** @param {string} path absolute, e.g. '/model.safetensors' */
    url: (path) => `http://127.0.0.1:${port}${path}`,
    /** @param {string} path the same file from the server block with gzip on for every type */
    gzipUrl: (path) => `http://127.0.0.1:${gzipPort}${path}`,
    /**
     * The requests logged since the last call (or the start). Waits until there are at least
     * `expected`, then a moment longer for any extra one, so that counts can be asserted exactly.
     * @param {number} [expected]
     * @returns {Promise<LogEntry[]>}
     */
    async takeLog(expected = 0) {
      const deadline = Date.now() + LOG_TIMEOUT
      while ((await entriesSinceMark()).length < expected && Date.now() < deadline) await sleep(10)
      await sleep(LOG_SETTLE)
      const entries = await entriesSinceMark()
      taken += entries.length
      return entries
    },
    /** nginx's error log so far (for failure messages) */
    errorLog: () => readText(join(prefix, 'logs', 'error.log')),
    /** Kills nginx (SIGTERM, then SIGKILL after 5 s) and removes its folder. */
    async stop() {
      if (stopped) return
      stopped = true
      process.removeListener('exit', killOnExit)
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve))
        child.kill('SIGTERM')
        const timer = setTimeout(() => child.kill('SIGKILL'), 5_000)
        await exited
        clearTimeout(timer)
      }
      await rm(prefix, { recursive: true, force: true })
    },
  }
}

/**
 * The preload of the README snippet test (readme.test.js): `node --import <this> snippet.mjs`,
 * run in the snippet's folder. It prepares what a README snippet takes for granted and records
 * what the snippet does, without changing a character of the snippet:
 *
 * - fetch: `https://example.org/*` goes to the local test server (README_TEST_ORIGIN) and its
 *   answer comes back as example.org's (the Response keeps the URL asked for), as a hosts entry
 *   would have it; 127.0.0.1 (the Hub emulation of HF_ENDPOINT and its CDN) is fetched as is;
 *   anything else fails as it would without a network. Every fetch is recorded.
 * - the free variables of the snippets: `token` (README_TEST_TOKEN), `signal` (an AbortSignal),
 *   `indexFile`, `shardFile1`, `shardFile2`, ... and `filesByName` (Files made from the bytes of
 *   the sharded set in the folder, as a page gets them from a dropped folder), and `postMessage`
 *   (a Worker's: it records the message and the transfer list and transfers as a Worker does, by
 *   structured clone with `transfer`, refusing a buffer that cannot be detached, as wasm memory's).
 * - `import ... from 'safetensors-wasm'` in a snippet resolves as Node resolves it (the package's
 *   self-reference); readme-hooks.js then puts a module in between that records the calls of the
 *   package's functions, and this module records the methods and getters of its classes. Only
 *   what the snippet itself calls is recorded, not the package's calls to itself.
 *
 * At exit the record is written as JSON to README_TEST_RECORD.
 */
import { readFileSync, realpathSync, writeFileSync, existsSync } from 'node:fs'
import { register } from 'node:module'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

/**
 * @typedef {{ call: string, args?: unknown[], result?: unknown, error?: unknown, pending?: boolean }} CallEvent
 * @typedef {{ url: string, method: string, range: string | null, authorization: string | null, signal: boolean,
 *   routedTo: string | null }} FetchEvent
 * @typedef {{ message: unknown, transfer: unknown[], transferIsPosted: boolean[], detached: boolean[] }} PostEvent
 * @typedef {{ resolved: string | null, calls: CallEvent[], fetches: FetchEvent[], posts: PostEvent[] }} SnippetRecord
 */

const SELF = import.meta.url
/** The snippet's folder as a URL prefix: calls from files under it are the snippet's. */
const SNIPPETS = `${pathToFileURL(realpathSync(process.cwd())).href}/`
const ORIGIN = process.env.README_TEST_ORIGIN ?? ''
const RECORD = process.env.README_TEST_RECORD ?? ''

/** @type {SnippetRecord} */
const record = { resolved: null, calls: [], fetches: [], posts: [] }
process.on('exit', () => { if (RECORD) writeFileSync(RECORD, JSON.stringify(record)) })

/** While describing a result: the getters it reads are not the snippet's. */
let busy = false

/** True when the nearest caller outside this module is a file in the snippet's folder. */
function fromSnippet() {
  if (busy) return false
  const frames = (new Error().stack ?? '').split('\n').slice(1)
  const caller = frames.find((line) => !line.includes(SELF))
  return caller !== undefined && caller.includes(SNIPPETS)
}

/** Up to this many elements of a typed array are recorded. */
const MAX_VALUES = 4096

/**
 * A JSON-able description of a value: plain objects and arrays as they are; bigints as "5n";
 * typed arrays as { type, length, values }; the package's objects by what identifies them.
 * @param {unknown} value @param {number} [depth] @returns {unknown}
 */
export function describe(value, depth = 0) {
  if (typeof value === 'bigint') return `${value}n`
  if (typeof value === 'function') return { function: value.name }
  if (value === undefined) return { undefined: true }
  if (value === null || typeof value !== 'object') return value
  if (depth > 5) return { deep: true }
  const was = busy
  busy = true
  try {
    if (ArrayBuffer.isView(value) && !(value instanceof DataView)) {
      const array = /** @type {any} */ (value)
      return {
        type: value.constructor.name, length: array.length,
        values: Array.from(array.subarray(0, MAX_VALUES), (v) => (typeof v === 'bigint' ? `${v}n` : v)),
      }
    }
    if (value instanceof ArrayBuffer) return { type: 'ArrayBuffer', byteLength: value.byteLength }
    if (value instanceof Error) {
      return { error: value.name, code: /** @type {any} */ (value).code, message: value.message }
    }
    if (typeof File !== 'undefined' && value instanceof File) return { type: 'File', name: value.name, size: value.size }
    if (value instanceof Blob) return { type: 'Blob', size: value.size }
    if (value instanceof AbortSignal) return { type: 'AbortSignal', aborted: value.aborted }
    if (value instanceof Map) return { type: 'Map', entries: [...value].map((e) => describe(e, depth + 1)) }
    if (value instanceof Promise) return { type: 'Promise' }
    const kind = value.constructor?.name
    const any = /** @type {any} */ (value)
    if (kind === 'Tensor') {
      const small = !any.disposed && any.elementCount <= MAX_VALUES
      return { type: 'Tensor', name: any.name, dtype: any.dtype, shape: describe(any.shape, depth + 1),
        ...(small ? { data: describe(any.data, depth + 1) } : {}) }
    }
    if (kind === 'SafetensorsFile') {
      return { type: kind, names: any.names, metadata: describe(any.metadata, depth + 1), byteLength: any.byteLength }
    }
    if (kind === 'ShardedFile') return { type: kind, names: any.names, shards: any.shards, metadata: describe(any.metadata, depth + 1) }
    if (Array.isArray(value)) return value.map((v) => describe(v, depth + 1))
    if (kind !== 'Object' && kind !== undefined) return { type: kind }
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, describe(v, depth + 1)]))
  } finally {
    busy = was
  }
}

/**
 * Records the outcome of a call in `event` (once settled, for a promise).
 * @param {CallEvent} event @param {unknown} result
 */
function settle(event, result) {
  if (result instanceof Promise) {
    event.pending = true
    result.then((value) => { delete event.pending; event.result = describe(value) },
      (error) => { delete event.pending; event.error = describe(error) })
  } else {
    event.result = describe(result)
  }
}

/**
 * `fn` recording the calls the snippet makes (label, arguments, result or error).
 * @template {(...args: any[]) => any} F
 * @param {string} label @param {F} fn @returns {F}
 */
export function recorded(label, fn) {
  return /** @type {F} */ (function (/** @type {any[]} */ ...args) {
    /** @type {CallEvent | null} */
    const event = fromSnippet() ? { call: label, args: args.map((a) => describe(a)) } : null
    if (event) record.calls.push(event)
    let result
    try {
      // @ts-ignore: `this` is whatever the caller gave (an instance, for a method)
      result = fn.apply(this, args)
    } catch (error) {
      if (event) event.error = describe(error)
      throw error
    }
    if (event) settle(event, result)
    return result
  })
}

/** Called by the hooks' module in between: what 'safetensors-wasm' resolved to. @param {string} url */
export function resolvedAs(url) { record.resolved = url }

/**
 * Records the methods and getters of a class's prototype (`cls.method`, `cls.getter` events).
 * @param {Function} cls
 */
function recordClass(cls) {
  const proto = cls.prototype
  for (const key of Object.getOwnPropertyNames(proto)) {
    if (key === 'constructor') continue
    const d = /** @type {PropertyDescriptor} */ (Object.getOwnPropertyDescriptor(proto, key))
    const label = `${cls.name}.${key}`
    if (d.get) {
      const get = d.get
      Object.defineProperty(proto, key, { ...d, get() {
        const value = get.call(this)
        if (fromSnippet()) record.calls.push({ call: label, result: describe(value) })
        return value
      } })
    } else if (typeof d.value === 'function') {
      Object.defineProperty(proto, key, { ...d, value: recorded(label, d.value) })
    }
  }
}

// fetch: example.org is the local test server; the Hub emulation is on 127.0.0.1; nothing else.
const platformFetch = globalThis.fetch
/** @param {string | URL | Request} input @param {RequestInit} [init] */
async function fetch(input, init) {
  const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url
  const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined))
  const target = new URL(url)
  const local = target.origin === 'https://example.org' ? `${ORIGIN}${target.pathname}${target.search}` : null
  record.fetches.push({ url, method: init?.method ?? (input instanceof Request ? input.method : 'GET'),
    range: headers.get('range'), authorization: headers.get('authorization'),
    signal: init?.signal instanceof AbortSignal, routedTo: local })
  if (local !== null) {
    const response = await platformFetch(input instanceof Request ? new Request(local, input) : local, init)
    Object.defineProperty(response, 'url', { value: url })  // example.org answered, as far as anyone can tell
    return response
  }
  if (target.hostname === '127.0.0.1') return platformFetch(input, init)
  throw new TypeError('fetch failed', { cause: new Error(`no network in the README test: ${url} is neither ` +
    'https://example.org (the local test server) nor 127.0.0.1 (HF_ENDPOINT)') })
}
globalThis.fetch = fetch

// The snippets' free variables.
const g = /** @type {any} */ (globalThis)
g.token = process.env.README_TEST_TOKEN
const controller = new AbortController()
g.signal = controller.signal
const INDEX = 'model.safetensors.index.json'
if (existsSync(INDEX)) {
  const bytes = readFileSync(INDEX)
  const index = JSON.parse(bytes.toString('utf8'))
  const shards = [...new Set(/** @type {string[]} */ (Object.values(index.weight_map)))].sort()
  g.indexFile = new File([bytes], INDEX, { type: 'application/json' })
  g.filesByName = new Map(shards.map((path) => [path, new File([readFileSync(join('.', path))], path)]))
  shards.forEach((path, i) => { g[`shardFile${i + 1}`] = g.filesByName.get(path) })
}

/**
 * A Worker's postMessage: transfers as a browser does (structured clone with `transfer`, and a
 * DataCloneError for a buffer that cannot be detached, such as wasm memory's) and
 * records the message as received, whether each transferred object is the buffer of a typed
 * array in the message, and whether the sender's buffer was detached (moved, not copied).
 * @param {unknown} message @param {Transferable[] | { transfer?: Transferable[] }} [options]
 */
function postMessage(message, options = []) {
  const transfer = Array.isArray(options) ? options : options.transfer ?? []
  /** @type {unknown[]} the buffers of the typed arrays in the message */
  const posted = []
  const walk = (/** @type {unknown} */ v, depth = 0) => {
    if (depth > 5 || v === null || typeof v !== 'object') return
    if (ArrayBuffer.isView(v)) posted.push(v.buffer)
    else Object.values(v).forEach((x) => walk(x, depth + 1))
  }
  walk(message)
  const before = transfer.map((t) => (t instanceof ArrayBuffer ? t.byteLength : -1))
  const described = transfer.map((t) => describe(t))
  const received = structuredClone(message, { transfer })
  // Node's structuredClone leaves a buffer it cannot detach (wasm memory's) attached and copies
  // it; a Worker's postMessage refuses it, as browsers do.
  transfer.forEach((t, i) => {
    if (t instanceof ArrayBuffer && before[i] > 0 && t.byteLength > 0)
      throw new DOMException('postMessage: an ArrayBuffer in the transfer list cannot be detached (wasm memory?)', 'DataCloneError')
  })
  record.posts.push({
    message: describe(received), transfer: described,
    transferIsPosted: transfer.map((t) => posted.includes(t)),
    detached: transfer.map((t, i) => t instanceof ArrayBuffer && before[i] > 0 && t.byteLength === 0),
  })
}
g.postMessage = postMessage

// The package, as the snippets get it: the classes' methods and getters recorded in place (the
// same module instance as the snippets': one URL), its functions by the hooks' module.
const pkg = await import('safetensors-wasm')
for (const cls of [pkg.SafetensorsFile, pkg.ShardedFile, pkg.Tensor, pkg.AwkwardArray]) recordClass(cls)
register('./readme-hooks.js', import.meta.url, { data: { snippets: SNIPPETS, recorder: SELF } })

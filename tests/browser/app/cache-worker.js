/**
 * A module worker that opens a file as an app's worker would with the `cache` option: the
 * package's browser entry, `open(url, { cache: true })` and nothing else. It reads every tensor
 * and sends back their values with what the Cache API then holds (each entry's part, and the
 * ETag its meta names), read here, in the worker's own view of the origin's caches.
 */
import { open } from '../../../js/index.js'
import { errorReport } from './checks.js'

/**
 * @typedef {{ part: string, v: string | null, etag: string | null, ver: string | null }} Stored
 * @typedef {{ kind: 'result', names: string[], values: Record<string, number[]>, stored: Stored[] }
 *   | { kind: 'error', error: import('./checks.js').ErrorReport }} CacheWorkerMessage
 * @typedef {{ postMessage(message: CacheWorkerMessage): void,
 *   onmessage: ((event: MessageEvent<{ url: string }>) => void) | null }} Scope
 */

const scope = /** @type {Scope} */ (/** @type {unknown} */ (self))

/** The Cache API's entries under the package's cache name. @returns {Promise<Stored[]>} */
async function storedEntries() {
  const cache = await caches.open('safetensors-wasm')
  /** @type {Stored[]} */
  const stored = []
  for (const request of await cache.keys()) {
    const url = new URL(request.url)
    const part = url.pathname.split('/').pop() ?? ''
    const meta = part === 'meta' ? await (await cache.match(request))?.json() : null
    stored.push({ part, v: url.searchParams.get('v'), etag: meta?.etag ?? null, ver: meta?.ver ?? null })
  }
  return stored
}

scope.onmessage = async (/** @type {MessageEvent<{ url: string }>} */ event) => {
  try {
    const f = await open(event.data.url, { cache: true })
    /** @type {Record<string, number[]>} */
    const values = {}
    for (const name of f.names) {
      const t = await f.tensor(name)
      values[name] = Array.from(t.toFloat32())
      t.dispose()
    }
    const names = [...f.names]
    await f.close()
    scope.postMessage({ kind: 'result', names, values, stored: await storedEntries() })
  } catch (error) {
    scope.postMessage({ kind: 'error', error: errorReport(error) })
  }
}

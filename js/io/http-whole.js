/**
 * Whole bodies, which no page needs at load: a sharded set's index, fetched whole (sharded.js),
 * and the first answer of a server that ignores Range and sends the whole file (http.js loads
 * this module only then). Requests, retries and checks are http.js's.
 */
import { SafetensorsError } from '../errors.js'
import { Transient, declaredLength } from './http-answers.js'
import { cacheOf, explainer, makeState, readBody, remember, request, retrying, shortBody } from './http.js'
import { concat } from './prefix.js'

/**
 * @typedef {import('./http.js').State} State @typedef {import('./http.js').Progress} Progress
 * @typedef {import('./http.js').HttpOptions} HttpOptions
 */

/**
 * @typedef {{ start(): void, chunk(bytes: Uint8Array): void }} BodySink where fetchBytes pours a
 *   body as it arrives: start() before the first piece (again before a retry starts over)
 */

/**
 * The whole body of a URL (a sharded index), with the same retries and error codes; refused
 * past `maxBytes` before more is read. With `sink`, the body goes to it piece by piece as it
 * arrives and nothing is returned (only the cache, when on, keeps a copy to store).
 * @param {string | URL} url @param {HttpOptions & { maxBytes?: number, sink?: BodySink }} [options]
 * @returns {Promise<Uint8Array>} the body, empty when poured into a sink
 */
export async function fetchBytes(url, options = {}) {
  const state = makeState(String(url), options)
  const max = options.maxBytes ?? Infinity
  const { sink } = options
  const cache = cacheOf(options)
  /** @param {Uint8Array} bytes */
  const kept = (bytes) => {
    if (!sink) return bytes
    sink.start()
    sink.chunk(bytes)
    return new Uint8Array(0)
  }
  let entry = await cache?.lookup('index', state.href) ?? null
  if (entry?.fresh) return kept(entry.bytes)
  const bytes = await retrying(state, options.signal, 'the file', async () => {
    const send = (/** @type {Record<string, string>} */ extra) => request(state, state.href, extra, options.signal)
    let response = await (entry ? entry.request(state.href, send) : send({}))
    const hit = entry ? await entry.answers(response) : false
    if (hit) {
      await response.body?.cancel().catch(() => {})
      return kept(/** @type {NonNullable<typeof entry>} */ (entry).bytes)
    }
    entry = null
    if (hit === null) response = await send({})
    remember(state, response, 0)
    if (response.status !== 200) throw await (await explainer()).failedStatus(state, response)
    const declared = declaredLength(response)
    const tooLarge = (/** @type {number} */ n) => new SafetensorsError('InvalidIndex', `${state.href} is ` +
      `${n} bytes or more, over the ${max} an index may have here (maxIndexBytes): is it a shard?`, { status: 200 })
    if (declared !== null && declared > max) {
      await response.body?.cancel().catch(() => {})
      throw tooLarge(declared)
    }
    const total = declared ?? 0
    sink?.start()
    const { chunks, length, complete, broken } = await readBody(response, max + 1, undefined,
      (n) => options.onProgress?.({ loaded: n, total: Math.max(total, n) }), sink && ((chunk) => sink.chunk(chunk)), !sink || cache !== null)
    if (length > max) throw tooLarge(length)
    if (!complete) throw broken ?? new Transient(shortBody(state, 0, length, total))
    if (declared !== null && length !== declared) throw new Transient(shortBody(state, 0, length, declared))
    if (cache) await cache.storePieces('index', { ...state, byteLength: length }, chunks)
    return sink ? new Uint8Array(0) : concat(chunks, length)
  })
  return bytes
}

/** How many leading bytes hold the length and the header, once the first 8 have arrived.
 * @param {number} size @returns {(chunks: Uint8Array[], n: number) => number | null} */
const headerEnd = (size) => (chunks, n) => {
  if (n < 8) return null
  const length = new DataView(concat(chunks, 8).buffer).getBigUint64(0, true)
  return Math.max(size, 8 + Number(length < 100_000_000n ? length : 100_000_000n))
}

/**
 * The server ignores Range and sends the whole file. A small one is kept whole. Of a large one,
 * with allowFullDownload, the length and the header are kept (each later read streams the file
 * from its start); without a declared length that means reading the body to its end to count it.
 * @param {State} state @param {Response} response @param {number} size @param {number} threshold
 * @param {((p: Progress) => void) | undefined} onProgress
 */
export async function wholeFileAnswer(state, response, size, threshold, onProgress) {
  const declared = declaredLength(response)
  const refuse = () => new SafetensorsError('RangeNotSupported', `${state.href}: the server ignores Range and ` +
    `sends the whole file (${declared === null ? `no length given, over ${threshold}` : declared} bytes); pass ` +
    'allowFullDownload: true to read it anyway (each read streams from the start)', { status: 200 })
  const progress = (/** @type {number} */ n) => onProgress?.({ loaded: n, total: Math.max(n, declared ?? 0) })
  if (declared !== null && declared > threshold) {
    if (!state.allowFullDownload) throw refuse()
    const { bytes, broken } = await readBody(response, Infinity, headerEnd(size), progress)
    if (broken !== null) throw broken
    remember(state, response, declared)
    state.rangeIgnored = true
    return bytes
  }
  const reader = /** @type {ReadableStream<Uint8Array>} */ (response.body ?? new Blob().stream()).getReader()
  /** @type {Uint8Array[]} */
  const chunks = []
  let n = 0
  let keep = Infinity  // all of a small file; past the threshold, the length and the header
  let done = false
  try {
    for (;;) {
      const r = await reader.read()
      if ((done = r.done)) break
      n += r.value.length
      progress(n)
      if (n > threshold && keep === Infinity) {
        if (!state.allowFullDownload) throw refuse()
        keep = Math.max(size, headerEnd(size)(chunks.concat(r.value), n) ?? size)
      }
      if (n - r.value.length < keep) chunks.push(r.value)
    }
  } finally {
    if (!done) reader.cancel().catch(() => {})
  }
  if (declared !== null && n !== declared) throw new Transient(shortBody(state, 0, n, declared))
  remember(state, response, n)
  state.rangeIgnored = keep !== Infinity
  return concat(chunks, Math.min(n, keep))
}

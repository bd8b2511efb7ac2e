/**
 * The `cache` option of `open`: what opening a remote file costs (its header, a sharded set's
 * index) kept between calls, pages and processes, and, with `ranges: true`, the tensor byte
 * ranges read. Reopening the same model then costs one validation request per file, or none
 * within `maxAge` seconds of the last validation.
 *
 * An entry is keyed by the URL as given (a Hub `/resolve/` URL with its revision, never the
 * signed CDN URL it redirects to, which expires) and holds the ETag and the total length it was
 * stored with; a range also names them, so bytes of one version never answer for another.
 * Validation is the usual first request with `If-None-Match`: a 304 serves the entry; a 200 or
 * 206 with the same strong ETag and length serves it too (its body is cancelled); any other
 * answer drops the entry and is read as usual, and what it brings replaces it. Only strong
 * ETags are trusted: a weak one promises equivalent content, not the same bytes, so a URL
 * without a strong ETag is not cached. Nothing of the request is stored (no Authorization, no
 * cookie, no query string in what is written beside the bytes); an entry stored with
 * credentials is validated on every open, whatever `maxAge` says, so the server still decides
 * who may read it.
 *
 * An entry serves only what it stored: its bytes carry a digest, and each range a digest per
 * block of 1 MiB (digest.js: XXH64, seeded with the entry's key (kind and URL, query included),
 * version, offset and block), stored after the range's bytes; its meta must name the URL asked
 * for. A read checks the blocks it touches, one at a time, as it goes: never the whole range
 * first. An entry edited, truncated or copied from another URL's is dropped and what is left to
 * read is fetched from the server instead. Entries of an older format (v) are dropped and
 * fetched again once.
 *
 * A backend stores entries: the Cache API here (browsers, Workers), a folder in Node
 * (node-cache.js, given by the Node entry, so that a page never imports node:fs). A cache that
 * cannot be read or written is skipped: it only ever saves requests. This module is loaded by
 * `open` only when the option is given (a chunk of its own in a bundle); http.js finds the cache
 * in the options under its CACHE symbol.
 */
import { SafetensorsError } from '../errors.js'
import { BLOCK, BlockDigests, DIGEST, blockDigest, blocks, digestOf, same } from './digest.js'
import { contentRange, declaredLength } from './http-answers.js'

/** The Cache API cache's name, and the Node folder's name under the OS cache folder. */
export const CACHE_NAME = 'safetensors-wasm'
/** Seconds an entry is served without a request after its last validation: none by default,
 * so a changed file is never served from the cache. */
export const DEFAULT_MAX_AGE = 0
/** The format of entries: 1 had SHA-256 digests of whole entries and ranges; 2 has XXH64 digests
 * of 1 MiB blocks (entries of 1 are dropped when found). */
const FORMAT = 2
/** The core's limit on a header's length (src/header.hpp). */
const MAX_HEADER = 100_000_000
const OPTION_KEYS = new Set(['dir', 'name', 'maxAge', 'ranges'])
/** Origins whose servers (or CDNs) refused `If-None-Match` in a CORS preflight: validated by
 * comparing the ETag of the usual answer instead, for the rest of the page's life. */
const NO_CONDITIONAL = new Set()

/**
 * @typedef {{ dir?: string, name?: string, maxAge?: number, ranges?: boolean }} CacheOptions
 * @typedef {'header' | 'index'} Kind
 * @typedef {{ v: number, kind: Kind, url: string, etag: string, length: number, size: number,
 *   contentType: string | null, private: boolean, storedAt: number, validatedAt: number,
 *   ver: string, digest?: string }} EntryMeta
 *   url: the URL without its query (for a person reading the folder); length: the file's total
 *   length; size: the stored bytes' length; private: stored from a request with credentials;
 *   ver: names the version (ETag and length) in the names of the entry's bytes; digest: of the
 *   stored bytes (digest.js digestOf, set as they are written)
 * @typedef {[start: number, length: number]} StoredRange  a stored range of the file: its file
 *   holds the bytes, then DIGEST bytes per block of them (digest.js)
 * @typedef {{ write(chunk: Uint8Array): Promise<void>, close(digests: Uint8Array): Promise<void>, abort(): void }} RangeWriter
 *   close: stores the range, with these digests after its bytes (throws when the bytes written
 *   are not the length given)
 * @typedef {{ size: number, stream(at: number, end: number): AsyncIterable<Uint8Array>, close(): Promise<void> }} RangeFile
 *   a stored range's file: size, the whole file's (bytes and digests); stream: its bytes
 *   [at, end), in pieces of any size (fresh arrays), or throws
 * @typedef {{
 *   hash(text: string): Promise<string>,
 *   read(key: string): Promise<{ meta: EntryMeta, bytes: Uint8Array } | null>,
 *   write(key: string, meta: EntryMeta, pieces: Uint8Array[]): Promise<void>,
 *   touch(key: string, meta: EntryMeta): Promise<void>,
 *   drop(key: string): Promise<void>,
 *   ranges(key: string, ver: string): Promise<StoredRange[]>,
 *   openRange(key: string, ver: string, range: StoredRange): Promise<RangeFile>,
 *   writeRange(key: string, ver: string, start: number, length: number): Promise<RangeWriter>,
 * }} CacheBackend
 *   hash: the SHA-256 (hex) of the text's UTF-8 (for names); key: the entry's kind and URL (a
 *   backend hashes it into its names); pieces: the stored bytes, in order; read: null when there
 *   is no entry, throws when there is one that cannot be read; openRange: throws when the range
 *   is gone or not a file of the user's
 * @typedef {(options: CacheOptions) => CacheBackend | null} BackendFactory
 * @typedef {{ byteLength: number, etag: string | null, lastModified: string | null, status: number,
 *   contentType: string | null, href: string, credentialed: boolean }} Known  what http.js learnt
 * @typedef {(extra: Record<string, string>) => Promise<Response>} Send  one request with these headers too
 */

/**
 * The cache an `open` call uses, from its `cache` option; null when off.
 * @param {unknown} option `true`, a CacheOptions object, or false / undefined
 * @param {BackendFactory} [factory] the platform's backend (default: the Cache API)
 * @returns {HttpCache | null} null also where no backend is available (no Cache API: a page
 *   outside a secure context)
 */
export function httpCache(option, factory = cacheApiBackend) {
  if (option === undefined || option === null || option === false) return null
  const bad = (/** @type {string} */ why) => new SafetensorsError('InvalidArgument', `options.cache ${why}: ` +
    'give true, or { dir?: string, name?: string, maxAge?: seconds, ranges?: boolean }')
  if (option !== true && (typeof option !== 'object' || Array.isArray(option))) throw bad(`is ${JSON.stringify(option)}`)
  const o = /** @type {CacheOptions} */ (option === true ? {} : option)
  for (const key of Object.keys(o)) if (!OPTION_KEYS.has(key)) throw bad(`has an unknown key ${JSON.stringify(key)}`)
  for (const key of /** @type {const} */ (['dir', 'name'])) {
    if (o[key] !== undefined && (typeof o[key] !== 'string' || o[key] === '')) throw bad(`.${key} is not a non-empty string`)
  }
  const maxAge = o.maxAge ?? DEFAULT_MAX_AGE
  if (typeof maxAge !== 'number' || Number.isNaN(maxAge) || maxAge < 0) throw bad('.maxAge is not a number of seconds, 0 or more')
  if (o.ranges !== undefined && typeof o.ranges !== 'boolean') throw bad('.ranges is not a boolean')
  const backend = factory(o)
  return backend ? new HttpCache(backend, { maxAge, ranges: o.ranges ?? false }) : null
}

/**
 * Each entry's writes not finished yet, by key, chained so that they reach the backend in order.
 * Writing is off the reader's path (a 46 MB index took 0.6 s to store in a page, all before its
 * names could show); a lookup of the same key waits for them, so a reopen finds what was kept.
 * @type {Map<string, Promise<void>>}
 */
const PENDING = new Map()
/** Milliseconds a page's store waits for an idle moment at most. */
const IDLE_TIMEOUT = 2000

/**
 * Resolves when the thread is next idle: in a page, an idle callback (at most a few seconds
 * late), so that storing waits while a reader has work to do; elsewhere a task of its own.
 * @returns {Promise<void>}
 */
function idle() {
  const whenIdle = /** @type {any} */ (globalThis).requestIdleCallback
  return new Promise((resolve) => (whenIdle ? whenIdle(() => resolve(), { timeout: IDLE_TIMEOUT }) : setTimeout(resolve, 0)))
}

/**
 * Runs `job` after the key's earlier writes; a failure is the cache's only (it saves requests,
 * nothing more). @param {string} key @param {() => Promise<unknown>} job @returns {Promise<void>}
 */
function later(key, job) {
  const done = (PENDING.get(key) ?? Promise.resolve()).then(idle).then(job).then(() => {}, () => {})
  PENDING.set(key, done)
  done.then(() => { if (PENDING.get(key) === done) PENDING.delete(key) })
  return done
}

/**
 * What a digest is seeded with: whose bytes they are and where they go, so that bytes moved from
 * another entry, version or offset do not match.
 * @param {string} key @param {string} ver @param {number | 'body'} start
 */
export const label = (key, ver, start) => `${key}\n${ver}\n${start}\n`

/** @param {string | null} etag @returns {etag is string} */
const isStrong = (etag) => etag !== null && !etag.startsWith('W/')

/** @param {string} url what an entry says of its URL: no query, fragment or user info */
function shown(url) {
  try {
    const u = new URL(url)
    return `${u.origin}${u.pathname}${u.search ? '?...' : ''}`
  } catch {
    return ''
  }
}

export class HttpCache {
  #backend
  /**
   * @param {CacheBackend} backend
   * @param {{ maxAge: number, ranges: boolean }} options
   */
  constructor(backend, options) {
    this.#backend = backend
    /** Seconds an entry is served without a request after its last validation. */
    this.maxAge = options.maxAge
    /** Tensor byte ranges are kept too. */
    this.ranges = options.ranges
  }

  /** Resolves once every write begun so far has ended (a file's close waits for them, so that
   * what it kept is there for the next open, in this process or another). */
  settled() { return Promise.all(PENDING.values()).then(() => {}) }

  /** The same cache with another freshness window (a URL pinned to a commit never changes).
   * @param {number} maxAge */
  withMaxAge(maxAge) { return new HttpCache(this.#backend, { maxAge, ranges: this.ranges }) }

  /**
   * The entry for `url`, if there is a readable one.
   * @param {Kind} kind @param {string} url
   * @returns {Promise<Entry | null>}
   */
  async lookup(kind, url) {
    const key = `${kind} ${url}`
    await PENDING.get(key)
    const found = await this.#backend.read(key).catch(() => undefined)
    if (found === null) return null
    const { meta, bytes } = found ?? {}
    if (meta?.v === FORMAT && meta.kind === kind && meta.url === shown(url) && bytes?.length === meta.size &&
        meta.digest === digestOf(label(key, meta.ver, 'body'), [bytes])) {
      return new Entry(this, this.#backend, key, meta, bytes)
    }
    later(key, () => this.#backend.drop(key))  // not what was stored: read from the server instead
    return null
  }

  /**
   * Stores what an answer brought, when its ETag can be trusted; returns the entry (the write goes
   * on after), or null. @param {Kind} kind @param {Known} known @param {Uint8Array} bytes
   */
  async store(kind, known, bytes) {
    const meta = await this.#meta(kind, known, bytes.length)
    if (!meta) return null
    const key = `${kind} ${known.href}`
    later(key, () => this.#write(key, meta, [bytes]))
    return new Entry(this, this.#backend, key, meta, bytes)
  }

  /**
   * Stores a body that arrived in pieces (an index), as they are: never joined into one array.
   * @param {Kind} kind @param {Known} known @param {Uint8Array[]} pieces
   */
  async storePieces(kind, known, pieces) {
    const size = pieces.reduce((n, p) => n + p.length, 0)
    const meta = await this.#meta(kind, known, size)
    if (!meta) return
    const key = `${kind} ${known.href}`
    later(key, () => this.#write(key, meta, pieces))
  }

  /** Writes an entry with the digest of its bytes (hashed here, off the reader's path).
   * @param {string} key @param {EntryMeta} meta @param {Uint8Array[]} pieces */
  async #write(key, meta, pieces) {
    meta.digest = digestOf(label(key, meta.ver, 'body'), pieces)
    await this.#backend.write(key, meta, pieces)
  }

  /**
   * What is written beside `size` stored bytes; null when the ETag cannot be trusted.
   * @param {Kind} kind @param {Known} known @param {number} size @returns {Promise<EntryMeta | null>}
   */
  async #meta(kind, known, size) {
    if (!isStrong(known.etag)) return null
    const now = Date.now()
    return {
      v: FORMAT, kind, url: shown(known.href), etag: known.etag, length: known.byteLength, size,
      contentType: known.contentType, private: known.credentialed, storedAt: now, validatedAt: now,
      ver: (await this.#backend.hash(`${known.etag}\n${known.byteLength}`)).slice(0, 32),
    }
  }

  /**
   * Keeps a file's header: the first bytes up to the header's end. The first answer brought
   * `prefix`; a header longer than that is fetched here with `more` (the request opening would
   * make next anyway), so the whole header is in hand. Bytes that are not a safetensors header
   * (no length that fits the file, no JSON object) are not stored.
   * @param {Known} known @param {Uint8Array} prefix
   * @param {(from: number, end: number) => AsyncIterable<Uint8Array>} more
   * @param {((p: { loaded: number, total: number }) => void) | undefined} onProgress
   * @returns {Promise<{ prefix: Uint8Array, entry: Entry | null }>} prefix: the first answer's
   *   bytes, with the rest of the header after them when it was fetched
   */
  async keepHeader(known, prefix, more, onProgress) {
    if (!isStrong(known.etag) || prefix.length < 8) return { prefix, entry: null }
    const n = new DataView(prefix.buffer, prefix.byteOffset, 8).getBigUint64(0, true)
    const end = 8 + Number(n)
    if (n > BigInt(MAX_HEADER) || end > known.byteLength) return { prefix, entry: null }
    if (prefix.length < end) {
      const whole = new Uint8Array(end)
      whole.set(prefix)
      let at = prefix.length
      for await (const chunk of more(prefix.length, end)) {
        whole.set(chunk, at)
        at += chunk.length
        onProgress?.({ loaded: at, total: end })
      }
      prefix = whole
    }
    if (prefix[8] !== 0x7b) return { prefix, entry: null }  // '{': a header is a JSON object
    const entry = await this.store('header', known, prefix.subarray(0, end))
    // With ranges, what the first answer brought past the header is a range like any other
    // (a small file is then kept whole).
    if (entry && this.ranges && prefix.length > end) entry.keepRange(end, prefix.subarray(end))
    return { prefix, entry }
  }
}

/** One stored file (a header or an index), and its ranges. */
export class Entry {
  #cache
  #backend
  #key
  /** @type {Promise<StoredRange[]> | null} the ranges stored, listed once */
  #ranges = null
  /** Dropped: nothing more is written for it. */
  #dropped = false

  /**
   * @param {HttpCache} cache @param {CacheBackend} backend @param {string} key
   * @param {EntryMeta} meta @param {Uint8Array} bytes
   */
  constructor(cache, backend, key, meta, bytes) {
    this.#cache = cache
    this.#backend = backend
    this.#key = key
    this.meta = meta
    this.bytes = bytes
  }

  /** Served without a request: validated within maxAge, and stored without credentials. */
  get fresh() {
    return !this.meta.private && this.#cache.maxAge > 0 && Date.now() - this.meta.validatedAt < this.#cache.maxAge * 1000
  }

  /**
   * The first request, conditional on the entry's ETag. In a page, a server or CDN that does not
   * allow If-None-Match in CORS preflights fails the request outright: it is sent again without
   * it (the answer's ETag is compared instead), and that origin is not asked again.
   * @param {string} target @param {Send} send
   */
  async request(target, send) {
    const origin = originOf(target)
    if (NO_CONDITIONAL.has(origin)) return send({})
    try {
      return await send({ 'If-None-Match': this.meta.etag })
    } catch (error) {
      const page = /** @type {{ location?: { origin?: unknown } }} */ (globalThis).location
      if (!(error instanceof TypeError) || typeof page?.origin !== 'string') throw error
      NO_CONDITIONAL.add(origin)
      return send({})
    }
  }

  /**
   * Whether `response` (to `request`) says the entry is still the file: a 304, or the same
   * strong ETag and length. Otherwise the entry is dropped, except on a failure that says
   * nothing about the file (5xx, 429...). A 304 naming another ETag than the one sent is
   * neither: the entry is dropped and null returned, to ask again without it.
   * @param {Response} response
   * @returns {Promise<boolean | null>}
   */
  async answers(response) {
    const etag = response.headers.get('etag')
    if (response.status === 304) {
      if (etag === null || etag === this.meta.etag) return this.#validated()
      await this.drop()
      return null
    }
    let total = null
    if (response.status === 206) {
      try { total = contentRange('', response).total } catch { total = null }
    } else if (response.status === 200) {
      total = declaredLength(response)
    } else {
      if (response.status === 404 || response.status === 410) await this.drop()
      return false
    }
    if (etag === this.meta.etag && total === this.meta.length) return this.#validated()
    await this.drop()
    return false
  }

  #validated() {
    const meta = (this.meta = { ...this.meta, validatedAt: Date.now() })
    later(this.#key, () => this.#backend.touch(this.#key, meta))
    return true
  }

  /** Forgets the entry and its ranges. */
  async drop() {
    this.#dropped = true
    this.#ranges = Promise.resolve([])
    await later(this.#key, () => this.#backend.drop(this.#key))
  }

  /**
   * What `known` becomes when the entry answers for the file.
   * @param {Known} known @param {Response | null} response the validation's answer (null: none made)
   */
  restore(known, response) {
    Object.assign(known, {
      byteLength: this.meta.length, etag: this.meta.etag, lastModified: response?.headers.get('last-modified') ?? null,
      status: response?.status ?? 0, contentType: this.meta.contentType,
    })
  }

  /** Stores `bytes` as the range that starts at `start`, after the entry's other writes (as
   * they are, off the reader's path). @param {number} start @param {Uint8Array} bytes */
  keepRange(start, bytes) {
    return later(this.#key, async () => {
      const writer = this.#dropped ? null : await this.#backend.writeRange(this.#key, this.meta.ver, start, bytes.length).catch(() => null)
      if (!writer) return
      const digests = new BlockDigests(label(this.#key, this.meta.ver, start))
      digests.update(bytes)
      const kept = await writer.write(bytes).then(() => writer.close(digests.finish())).then(() => true, () => { writer.abort(); return false })
      if (kept && this.#ranges) (await this.#ranges).push([start, bytes.length])
    })
  }

  /**
   * The bytes [from, end) of the file: from a stored range that holds them (with `ranges`), else
   * from `fetch`, stored as they pass when `ranges` is on. A read that finds the file changed
   * (SourceChanged) drops the entry, so the next open reads the new file; so does a stored range
   * that is not what was stored (its bytes are then fetched, after those already given).
   * @param {number} from @param {number} end @param {() => AsyncIterable<Uint8Array>} fetch
   * @returns {AsyncGenerator<Uint8Array>}
   */
  async* stream(from, end, fetch) {
    if (!this.#cache.ranges) {
      try {
        yield* fetch()
      } catch (error) {
        if (/** @type {any} */ (error)?.code === 'SourceChanged') await this.drop()
        throw error
      }
      return
    }
    const { ver } = this.meta
    this.#ranges ??= this.#backend.ranges(this.#key, ver).catch(() => [])
    const pieces = cover(await this.#ranges, from, end)
    let skip = 0
    if (pieces) {
      try {
        for (const [range, a, b] of pieces) {
          for await (const chunk of this.#readRange(range, a, b)) {
            yield chunk
            skip += chunk.length
          }
        }
        return
      } catch {
        this.drop()  // not what was stored: the rest is fetched (not waiting for the drop)
      }
    }
    /** @type {RangeWriter | null} */
    let writer = this.#dropped ? null : await this.#backend.writeRange(this.#key, ver, from, end - from).catch(() => null)
    const digests = new BlockDigests(label(this.#key, ver, from))
    let done = false
    try {
      for await (let chunk of fetch()) {
        if (writer) {
          digests.update(chunk)
          await writer.write(chunk).catch(() => { writer?.abort(); writer = null })
        }
        if (skip >= chunk.length) { skip -= chunk.length; continue }
        chunk = chunk.subarray(skip)
        skip = 0
        yield chunk
      }
      done = true
    } catch (error) {
      if (/** @type {any} */ (error)?.code === 'SourceChanged') await this.drop()
      throw error
    } finally {
      if (writer && done) {
        const ranges = this.#ranges
        const kept = await writer.close(digests.finish()).then(() => true, () => false)
        if (kept) (await ranges).push([from, end - from])
      } else {
        writer?.abort()
      }
    }
  }

  /**
   * The bytes [from, to) of a stored range: the blocks that hold them, read and checked one at a
   * time, each given as soon as it is checked (at most one block in hand; at most one more block
   * read at each end than asked). Throws at the first block that is not what was stored, after
   * the blocks before it were given.
   * @param {StoredRange} range @param {number} from @param {number} to
   */
  async* #readRange(range, from, to) {
    const { ver } = this.meta
    const [start, length] = range
    const bad = (/** @type {string} */ why) => new SafetensorsError('IoError', `the cached bytes ${start}-${start + length - 1} ${why}`)
    const file = await this.#backend.openRange(this.#key, ver, range)
    try {
      if (file.size !== length + blocks(length) * DIGEST) throw bad(`are ${file.size} bytes with their digests, not ${length + blocks(length) * DIGEST}`)
      const first = Math.floor((from - start) / BLOCK)
      const last = Math.ceil((to - start) / BLOCK)
      const digests = new Uint8Array((last - first) * DIGEST)
      let n = 0
      for await (const chunk of file.stream(length + first * DIGEST, length + last * DIGEST)) {
        if (n + chunk.length > digests.length) throw bad('are not those stored')
        digests.set(chunk, n)
        n += chunk.length
      }
      if (n !== digests.length) throw bad('are cut short')
      const name = label(this.#key, ver, start)
      // Read as one stream (a Blob slice read per block costs a round trip each in a page), cut
      // into blocks: a piece that holds a whole block is checked as it is, else it is copied in.
      let i = first
      /** @type {Uint8Array | null} */
      let partial = null
      let fill = 0
      for await (const chunk of file.stream(first * BLOCK, Math.min(length, last * BLOCK))) {
        for (let at = 0; at < chunk.length;) {
          if (i >= last) throw bad('are not those stored')
          const a = i * BLOCK
          const size = Math.min(length, a + BLOCK) - a
          let block
          if (fill === 0 && chunk.length - at >= size) {
            block = chunk.subarray(at, at + size)
            at += size
          } else {
            const k = Math.min(size - fill, chunk.length - at)
            ;(partial ??= new Uint8Array(size)).set(chunk.subarray(at, at + k), fill)
            fill += k
            at += k
            if (fill < size) continue
            block = partial
            partial = null
            fill = 0
          }
          const d = (i - first) * DIGEST
          if (!same(blockDigest(name, i, block), digests.subarray(d, d + DIGEST))) throw bad('are not those stored')
          yield block.subarray(Math.max(from - start, a) - a, Math.min(to - start, a + size) - a)
          i++
        }
      }
      if (i !== last) throw bad('are cut short')
    } finally {
      await file.close()
    }
  }
}

/**
 * Stored ranges that together hold [from, end): each with the part of it to read, in order; null
 * when a byte is missing.
 * @param {StoredRange[]} ranges @param {number} from @param {number} end
 * @returns {[StoredRange, number, number][] | null}
 */
function cover(ranges, from, end) {
  /** @type {[StoredRange, number, number][]} */
  const pieces = []
  for (let at = from; at < end;) {
    let best = null
    for (const r of ranges) if (r[0] <= at && r[0] + r[1] > at && (!best || r[0] + r[1] > best[0] + best[1])) best = r
    if (!best) return null
    const stop = Math.min(end, best[0] + best[1])
    pieces.push([best, at, stop])
    at = stop
  }
  return pieces
}

/** @param {string} url */
function originOf(url) {
  try { return new URL(url).origin } catch { return url }
}

/**
 * The Cache API as a backend: entries under made-up URLs of a reserved name (never fetched),
 * `https://safetensors-wasm.invalid/<sha-256 of kind and URL>/`, each with `meta` (JSON),
 * `body?v=<ver>` and `range?v=<ver>&o=<start>&l=<length>` (the bytes, then their digests).
 * @param {CacheOptions} options
 * @returns {CacheBackend | null} null without a Cache API (outside a secure context, or Node)
 */
export function cacheApiBackend(options) {
  const storage = /** @type {CacheStorage | undefined} */ (/** @type {any} */ (globalThis).caches)
  const subtle = globalThis.crypto?.subtle
  if (!storage || !subtle) return null
  /** @type {Promise<Cache> | null} */
  let opened = null
  const cache = () => (opened ??= storage.open(options.name ?? CACHE_NAME))
  /** @param {string} text */
  const hash = async (text) => {
    const digest = new Uint8Array(await subtle.digest('SHA-256', new TextEncoder().encode(text)))
    return Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('')
  }
  /** @param {string} key */
  const base = async (key) => `https://${CACHE_NAME}.invalid/${await hash(key)}/`
  /** Deletes every body and range of the entry whose version is not `keep`.
   * @param {Cache} c @param {string} at @param {string | null} keep */
  const prune = async (c, at, keep) => {
    for (const part of ['body', 'range']) {
      for (const request of await c.keys(`${at}${part}`, { ignoreSearch: true })) {
        if (new URL(request.url).searchParams.get('v') !== keep) await c.delete(request)
      }
    }
  }
  // Through a Blob: Chromium then stores a 46 MB index in two thirds of the time, and keeps the
  // page's thread busy a third as long at a stretch, as when it pipes the bytes themselves.
  /** @param {Uint8Array[]} pieces */
  const body = (pieces) => new Response(new Blob(/** @type {BlobPart[]} */ (pieces)), { headers: { 'Content-Type': 'application/octet-stream' } })
  /** @param {EntryMeta} meta */
  const json = (meta) => new Response(JSON.stringify(meta), { headers: { 'Content-Type': 'application/json' } })
  return {
    hash,
    async read(key) {
      const c = await cache()
      const at = await base(key)
      const metaAnswer = await c.match(`${at}meta`)
      if (!metaAnswer) return null
      const meta = /** @type {EntryMeta} */ (await metaAnswer.json())
      const bytes = await c.match(`${at}body?v=${meta.ver}`)
      if (!bytes) throw new Error('an entry without its bytes')
      return { meta, bytes: new Uint8Array(await bytes.arrayBuffer()) }
    },
    async write(key, meta, pieces) {
      const c = await cache()
      const at = await base(key)
      await c.put(`${at}body?v=${meta.ver}`, body(pieces))
      await c.put(`${at}meta`, json(meta))
      await prune(c, at, meta.ver)
    },
    async touch(key, meta) {
      await (await cache()).put(`${await base(key)}meta`, json(meta))
    },
    async drop(key) {
      const c = await cache()
      const at = await base(key)
      await c.delete(`${at}meta`)
      await prune(c, at, null)
    },
    async ranges(key, ver) {
      const requests = await (await cache()).keys(`${await base(key)}range`, { ignoreSearch: true })
      return requests.map((r) => new URL(r.url).searchParams)
        .filter((p) => p.get('v') === ver)
        .map((p) => /** @type {StoredRange} */ ([Number(p.get('o')), Number(p.get('l'))]))
    },
    async openRange(key, ver, [start, length]) {
      const answer = await (await cache()).match(`${await base(key)}range?v=${ver}&o=${start}&l=${length}`)
      if (!answer) throw new SafetensorsError('IoError', `the cached bytes ${start}-${start + length - 1} are gone`)
      const blob = await answer.blob()  // a handle on the stored bytes: a slice reads its part only
      return {
        size: blob.size,
        async* stream(at, end) {
          const reader = blob.slice(at, end).stream().getReader()
          try {
            for (;;) {
              const { done, value } = await reader.read()
              if (done) return
              yield value
            }
          } finally {
            reader.cancel().catch(() => {})
          }
        },
        async close() {},
      }
    },
    // Kept until the range is whole: its digests follow its bytes (a stored answer's body is
    // given when it is put).
    async writeRange(key, ver, start, length) {
      const at = await base(key)
      /** @type {Uint8Array[]} */
      let chunks = []
      let n = 0
      return {
        async write(chunk) { n += chunk.length; chunks.push(chunk.slice()) },
        async close(digests) {
          if (n !== length) throw new Error('short range')
          await (await cache()).put(`${at}range?v=${ver}&o=${start}&l=${length}`, body([...chunks, digests]))
        },
        abort() { chunks = [] },
      }
    },
  }
}

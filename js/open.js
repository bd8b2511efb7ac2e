/**
 * `open` for every platform, routed once: a Hub address, an index's content with its shards, an
 * http(s) URL (an `*.index.json` opens a sharded set), bytes, a Blob, a ByteSource. A platform
 * adds what only it has: Node, file paths (and index paths) and the HF_* environment; a page,
 * relative URLs resolved against itself.
 */
import { SafetensorsError } from './errors.js'
import { SafetensorsFile, openSource } from './file.js'
import { CACHE, httpUrl, resolveUrl } from './io/http.js'
import { sourceOf } from './io/sources.js'
import { checkOpenOptions } from './options.js'

/**
 * @typedef {import('./io/sources.js').ByteSource} ByteSource
 * @typedef {{ signal?: AbortSignal } & Record<string, any>} OpenOptions
 * @typedef {(src: string | URL, options: OpenOptions) => Promise<{ source: ByteSource, close: boolean } | null>} Resolver
 * @typedef {{
 *   resolvers: Resolver[],
 *   base?: () => string | undefined,
 *   indexAt?: (src: unknown) => string | null,
 *   openIndex?: (path: string, options: OpenOptions) => Promise<any>,
 *   hubDefaults?: () => { endpoint?: string, token?: string },
 *   cacheBackend?: import('./io/cache.js').BackendFactory,
 * }} Platform
 *   resolvers: strings and URLs that are not http(s) (Node: file paths); base: what relative
 *   URLs resolve against (a page); indexAt: where a sharded set's index is, when src names one
 *   (Node: a path ending in .index.json), else null; openIndex: opens the set from there;
 *   hubDefaults: endpoint and token when not given;
 *   cacheBackend: where the `cache` option keeps entries (default: the Cache API; Node: a folder)
 */

/**
 * What `open` gives: 'file', a SafetensorsFile; 'sharded', a ShardedFile.
 * @typedef {'file' | 'sharded'} Kind
 */

/**
 * Opens `src` on a platform. Sharded sets and Hub addresses load their code on first use: a
 * bundler splits it into chunks of their own, which a page downloads only when it needs them.
 * With `kind` (openFile, openSharded), a source whose name says it is the other kind is refused
 * before anything is read, and a bare Hub repo looks for that kind first.
 * @param {unknown} src
 * @param {OpenOptions} options
 * @param {Platform} platform
 * @param {Kind} [kind]
 * @returns {Promise<any>} a SafetensorsFile or a ShardedFile
 */
export function route(src, options, platform, kind) {
  // A rejection, as every other failure of open is, and before anything is requested.
  try { checkOpenOptions(options) } catch (error) { return Promise.reject(error) }
  // The cache's code loads only when it is asked for (a chunk of its own in a bundle).
  if (options.cache !== undefined && options.cache !== false && !(CACHE in options)) {
    return import('./io/cache.js').then((m) => {
      let cache = m.httpCache(options.cache, platform.cacheBackend)
      // A Hub address pinned to a commit names bytes that never change: nothing to validate.
      if (cache && isHfUrl(src) && PINNED.test(src)) cache = cache.withMaxAge(Infinity)
      return route(src, { ...options, [CACHE]: cache }, platform, kind)
    })
  }
  if (isHfUrl(src)) {
    const defaults = platform.hubDefaults?.() ?? {}
    const hub = { ...options, endpoint: options.endpoint ?? defaults.endpoint, token: options.token ?? defaults.token }
    return import('./io/hf.js').then((m) => {
      const { path } = m.parseHfUrl(src)
      if (kind && path !== null) expectKind(kind, path.endsWith('.index.json') ? 'sharded' : 'file', src)
      return m.openHf(src, hub, openUrl, kind)
    })
  }
  if (options.shards !== undefined) {
    if (kind) expectKind(kind, 'sharded', src)
    return import('./sharded.js').then((m) => m.openIndexWith(src, /** @type {any} */ (options), [resolveUrl, ...platform.resolvers]))
  }
  const url = typeof src === 'string' || src instanceof URL ? httpUrl(src, platform.base?.()) : null
  if (url) {
    if (kind) expectKind(kind, url.pathname.endsWith('.index.json') ? 'sharded' : 'file', src)
    return openUrl(url, options)
  }
  const index = platform.indexAt?.(src) ?? null
  if (kind) expectKind(kind, index === null ? 'file' : 'sharded', src)
  return index !== null && platform.openIndex ? platform.openIndex(index, options) : openAny(src, options, platform.resolvers)
}

/**
 * `open` for one kind only (openFile, openSharded): refused by the name when it says, else
 * opened and refused (closed first) when it turns out the other kind, as a bare Hub repo can.
 * @param {Kind} kind @param {unknown} src @param {OpenOptions} options @param {Platform} platform
 */
export async function openKind(kind, src, options, platform) {
  const opened = await route(src, options, platform, kind)
  const found = opened instanceof SafetensorsFile ? 'file' : 'sharded'
  if (found !== kind) {
    await opened.close()
    expectKind(kind, found, src)
  }
  return opened
}

/**
 * Throws KindMismatch when `found` is not the `kind` asked for, naming the function that opens it.
 * @param {Kind} kind @param {Kind} found @param {unknown} src
 */
function expectKind(kind, found, src) {
  if (found === kind) return
  const what = typeof src === 'string' ? src : src instanceof URL ? src.href : 'the source given'
  const message = found === 'sharded'
    ? `openFile opens one safetensors file, and ${what} is a sharded set (an *.index.json and its shards): ` +
      'open it with openSharded, or with open, which takes either'
    : `openSharded opens a sharded set (an *.index.json path or URL, a Hub repo holding one, or an index's ` +
      `content with the shards option), and ${what} is one safetensors file: open it with openFile, or with open, ` +
      'which takes either'
  throw new SafetensorsError('KindMismatch', message)
}

/**
 * @param {unknown} src
 * @param {OpenOptions} options
 * @param {Resolver[]} resolvers tried in order for strings and URLs
 */
export async function openAny(src, options, resolvers) {
  const source = sourceOf(src)
  if (source) return openSource(source, options)
  if (typeof src === 'string' || src instanceof URL) {
    for (const resolve of resolvers) {
      const found = await resolve(src, options)
      if (found) {
        try {
          return await openSource(found.source, { ...options, closeSource: found.close })
        } catch (error) {
          if (found.close) await found.source.close?.()
          throw error
        }
      }
    }
    throw new SafetensorsError('UnsupportedSource', `cannot open ${String(src)}: not a URL this platform can fetch`)
  }
  throw new SafetensorsError('UnsupportedSource',
    'open() takes a URL, a path (Node), a Blob, an ArrayBuffer, a Uint8Array or a ByteSource')
}

/**
 * Opens an http(s) URL: a sharded set when it names an `*.index.json`, else one file. The
 * sharded-set code is loaded on first use (a bundler splits it into a chunk of its own).
 * @param {URL} url @param {OpenOptions} options
 */
export function openUrl(url, options) {
  if (url.pathname.endsWith('.index.json')) return import('./sharded.js').then((m) => m.openIndexUrl(url, options))
  return openAny(url, options, [resolveUrl])
}

/** A Hub address whose revision is a commit id (40 hex digits). */
const PINNED = /^hf:\/\/(?:(?:datasets|spaces)\/)?[^/@]+\/[^/@]+@[0-9a-f]{40}(?:[/?#]|$)/i

/** @param {unknown} src @returns {src is string} a Hub address, hf://... (see hf.js) */
export const isHfUrl = (src) => typeof src === 'string' && /^hf:\/\//i.test(src)

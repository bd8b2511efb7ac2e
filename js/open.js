/**
 * `open` for every platform, routed once: a Hub address, an index's content with its shards, an
 * http(s) URL (an `*.index.json` opens a sharded set), bytes, a Blob, a ByteSource. A platform
 * adds what only it has: Node, file paths (and index paths) and the HF_* environment; a page,
 * relative URLs resolved against itself.
 */
import { SafetensorsError } from './errors.js'
import { openSource } from './file.js'
import { CACHE, httpUrl, resolveUrl } from './io/http.js'
import { sourceOf } from './io/sources.js'

/**
 * @typedef {import('./io/sources.js').ByteSource} ByteSource
 * @typedef {{ signal?: AbortSignal } & Record<string, any>} OpenOptions
 * @typedef {(src: string | URL, options: OpenOptions) => Promise<{ source: ByteSource, close: boolean } | null>} Resolver
 * @typedef {{
 *   resolvers: Resolver[],
 *   base?: () => string | undefined,
 *   openIndexAt?: (src: unknown, options: OpenOptions) => Promise<any> | null,
 *   hubDefaults?: () => { endpoint?: string, token?: string },
 *   cacheBackend?: import('./io/cache.js').BackendFactory,
 * }} Platform
 *   resolvers: strings and URLs that are not http(s) (Node: file paths); base: what relative
 *   URLs resolve against (a page); openIndexAt: a sharded set by where its index is, or null
 *   (Node: a path ending in .index.json); hubDefaults: endpoint and token when not given;
 *   cacheBackend: where the `cache` option keeps entries (default: the Cache API; Node: a folder)
 */

/**
 * Opens `src` on a platform. Sharded sets and Hub addresses load their code on first use: a
 * bundler splits it into chunks of their own, which a page downloads only when it needs them.
 * @param {unknown} src
 * @param {OpenOptions} options
 * @param {Platform} platform
 * @returns {Promise<any>} a SafetensorsFile or a ShardedFile
 */
export function route(src, options, platform) {
  // The cache's code loads only when it is asked for (a chunk of its own in a bundle).
  if (options.cache !== undefined && options.cache !== false && !(CACHE in options)) {
    return import('./io/cache.js').then((m) => {
      let cache = m.httpCache(options.cache, platform.cacheBackend)
      // A Hub address pinned to a commit names bytes that never change: nothing to validate.
      if (cache && isHfUrl(src) && PINNED.test(src)) cache = cache.withMaxAge(Infinity)
      return route(src, { ...options, [CACHE]: cache }, platform)
    })
  }
  if (isHfUrl(src)) {
    const defaults = platform.hubDefaults?.() ?? {}
    const hub = { ...options, endpoint: options.endpoint ?? defaults.endpoint, token: options.token ?? defaults.token }
    return import('./io/hf.js').then((m) => m.openHf(src, hub, openUrl))
  }
  if (options.shards !== undefined)
    return import('./sharded.js').then((m) => m.openIndexWith(src, /** @type {any} */ (options), [resolveUrl, ...platform.resolvers]))
  const url = typeof src === 'string' || src instanceof URL ? httpUrl(src, platform.base?.()) : null
  if (url) return openUrl(url, options)
  return platform.openIndexAt?.(src, options) ?? openAny(src, options, platform.resolvers)
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

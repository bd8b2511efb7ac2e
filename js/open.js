/**
 * `open` for every platform: turns what the user gave into a byte source and parses it.
 * The Node entry (node.js) passes a resolver that adds file paths.
 */
import { SafetensorsError } from './errors.js'
import { openSource } from './file.js'
import { resolveUrl } from './io/http.js'
import { sourceOf } from './io/sources.js'

/**
 * @typedef {import('./io/sources.js').ByteSource} ByteSource
 * @typedef {{ signal?: AbortSignal } & Record<string, any>} OpenOptions
 * @typedef {(src: string | URL, options: OpenOptions) => Promise<{ source: ByteSource, close: boolean } | null>} Resolver
 */

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

/** @param {unknown} src @returns {src is string} a Hub address, hf://... (see hf.js) */
export const isHfUrl = (src) => typeof src === 'string' && /^hf:\/\//i.test(src)

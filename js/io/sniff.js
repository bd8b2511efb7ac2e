/**
 * What a file is when it is not safetensors at all, from its first bytes: an HTML page (a Hub
 * /blob/ page, a login page), a Git LFS pointer (a clone without `git lfs pull`), an XML error
 * (S3, GCS, Azure) or a JSON document. Asked only when the 8-byte header length cannot be right,
 * so a real file is never taken for one of these.
 */
import { SafetensorsError } from '../errors.js'

/** How many leading bytes are looked at. */
export const SNIFF_BYTES = 1024

/** The reference's verdicts on a header length that cannot be right. */
const BAD_LENGTH = new Set(['HeaderTooSmall', 'HeaderTooLarge', 'InvalidHeaderLength'])

/**
 * NotSafetensors, when `head` is one of the known kinds of non-safetensors file; else null.
 * @param {SafetensorsError} verdict the core's error about the header length
 * @param {Uint8Array} head the file's first bytes (up to SNIFF_BYTES)
 * @param {string} where the file's URL or name
 * @param {{ status: number, contentType: string | null }} [response] the HTTP answer, for URLs
 * @returns {SafetensorsError | null}
 */
export function notSafetensors(verdict, head, where, response) {
  if (!BAD_LENGTH.has(verdict.code)) return null
  const text = new TextDecoder().decode(head).replace(/^\uFEFF/, '').trimStart()
  const what = kindOf(text, where)
  if (!what) return null
  const http = response ? ` (HTTP ${response.status}, Content-Type ${response.contentType ?? 'not given'})` : ''
  return new SafetensorsError('NotSafetensors', `${where}${http} is ${what}`, {
    status: response?.status ?? null, cause: verdict,
  })
}

/** @param {string} text @param {string} where @returns {string | null} */
function kindOf(text, where) {
  if (text.startsWith('version https://git-lfs.github.com/spec/')) {
    const oid = /^oid (\S+)/m.exec(text)?.[1]
    const size = /^size (\d+)/m.exec(text)?.[1]
    return `a Git LFS pointer${oid ? ` (${oid}${size ? `, ${size} bytes` : ''})` : ''}, not the file: the file ` +
      'itself was never downloaded. Run "git lfs pull" in the clone (or "git lfs install" before cloning), or ' +
      'download it through its /resolve/ URL'
  }
  if (/^(<!doctype html|<html|<head|<body|<!--)/i.test(text) || (/^</.test(text) && /<html[\s>]/i.test(text))) {
    const title = /<title[^>]*>([^<]{1,120})/i.exec(text)?.[1].trim()
    const page = `an HTML page${title ? ` ("${title}")` : ''}, not a safetensors file`
    if (where.includes('/blob/'))
      return `${page}: a /blob/ URL is the Hub's page about the file; the file itself is at ${where.replace('/blob/', '/resolve/')}`
    return `${page} (a login page, an error page or a file viewer?): open the URL of the file itself`
  }
  if (/^<(\?xml|[A-Za-z][\w:.-]*[\s>/])/.test(text)) {
    const code = /<Code>([^<]*)<\/Code>/.exec(text)?.[1]
    const message = /<Message>([^<]*)<\/Message>/.exec(text)?.[1]
    const said = code || message ? `: ${[code, message].filter(Boolean).join(': ')}` : ''
    return `an XML document, not a safetensors file (often an error from a storage server)${said}`
  }
  if (/^[{[]\s*["{[\]}]/.test(text)) {
    if (/"weight_map"\s*:/.test(text))
      return 'a sharded index (JSON with a "weight_map"), not a safetensors file: open it by a URL or path ending ' +
        'in .index.json, or pass its shards with options.shards'
    return `a JSON document, not a safetensors file: ${text.slice(0, 200).replace(/\s+/g, ' ')}`
  }
  return null
}

/**
 * Secrets in URLs kept out of messages: a signed URL's query (`?X-Amz-Signature=`, `?token=`) or
 * a `user:password@` works for whoever reads it in a log or a bug report.
 */

/** The end of a URL in text: the characters that cannot be in one. */
const URL_REST = /[^\s"'<>`]*/y
/** Punctuation that ends a sentence or a label (`URL: why`) rather than the URL before it. */
const TRAILING = ':.,;!)'

/**
 * `text` with every URL in it (anything after a `://`) masked: a password in its userinfo
 * (`user:***@`; a userinfo without one, which may be a token itself, `***@`), and every value of
 * its query and fragment (`?token=***&revision=***`; a parameter without `=`, `***`): which query
 * parameters carry secrets differs between servers, so none is shown. Linear in the text's length.
 * @param {string} text
 * @returns {string}
 */
export function redactUrl(text) {
  let out = ''
  let from = 0
  for (let at = text.indexOf('://'); at >= 0; at = text.indexOf('://', from)) {
    URL_REST.lastIndex = at + 3
    let end = URL_REST.lastIndex + /** @type {RegExpExecArray} */ (URL_REST.exec(text))[0].length
    while (end > at + 3 && TRAILING.includes(text[end - 1])) end--
    out += text.slice(from, at + 3) + redactAfterScheme(text.slice(at + 3, end))
    from = end
  }
  return from === 0 ? text : out + text.slice(from)
}

/** @param {string} rest  a URL after its `scheme://` */
function redactAfterScheme(rest) {
  const authorityEnd = rest.search(/[/?#]/)
  let authority = authorityEnd < 0 ? rest : rest.slice(0, authorityEnd)
  const tail = authorityEnd < 0 ? '' : rest.slice(authorityEnd)
  const at = authority.lastIndexOf('@')
  if (at >= 0) {
    const colon = authority.indexOf(':')
    authority = `${colon >= 0 && colon < at ? `${authority.slice(0, colon)}:***` : '***'}${authority.slice(at)}`
  }
  const query = tail.search(/[?#]/)
  if (query < 0) return authority + tail
  return authority + tail.slice(0, query) + tail.slice(query).replace(/([?#&;])([^?#&;=]*)(=?)([^?#&;]*)/g,
    (_, sep, key, eq, value) => (eq ? `${sep}${key}=${value ? '***' : ''}` : `${sep}${key ? '***' : ''}`))
}

/**
 * Masks the URLs in an error's message and stack, and in those of its causes, in place: a
 * fetch's TypeError quotes the URL it was given.
 * @param {unknown} error
 */
export function redactError(error) {
  for (let e = error, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    try {
      e.message = redactUrl(e.message)
      if (typeof e.stack === 'string') e.stack = redactUrl(e.stack)
    } catch {
      // A frozen error cannot be masked; it is the caller's.
    }
  }
}

/**
 * Text formatting shared by the CLI and the inspector: sizes, counts, shapes, and names and
 * metadata with their invisible and bidirectional characters made visible (escapeInvisible).
 */

/** @param {number} n */
export function formatCount(n) {
  return n.toLocaleString('en-US')
}

/** @param {number} bytes */
export function formatBytes(bytes) {
  if (bytes < 1000) return `${bytes} B`
  const units = ['kB', 'MB', 'GB', 'TB', 'PB']
  let value = bytes
  let unit = -1
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000
    unit++
  }
  return `${value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1) : value.toFixed(2)} ${units[unit]}`
}

/** @param {ArrayLike<number | bigint>} shape */
export function formatShape(shape) {
  // A loop, not Array.from(...).join: a table of 500,000 rows formats each shape.
  let text = '['
  for (let i = 0; i < shape.length; i++) text += i === 0 ? `${shape[i]}` : `, ${shape[i]}`
  return `${text}]`
}

/**
 * A metadata value for display: JSON-looking strings pretty-printed, others as they are.
 * @param {string} value
 */
export function formatMetadataValue(value) {
  const t = value.trim()
  if ((t.startsWith('{') && t.endsWith('}')) || (t.startsWith('[') && t.endsWith(']'))) {
    try {
      return JSON.stringify(JSON.parse(t), null, 2)
    } catch {
      // not JSON after all
    }
  }
  return value
}

/**
 * A tensor value in a few characters: 4 significant digits, exponent form when very large or
 * small, NaN / Inf / -Inf spelt out.
 * @param {number} x
 */
export function formatValue(x) {
  if (Number.isNaN(x)) return 'NaN'
  if (!Number.isFinite(x)) return x > 0 ? 'Inf' : '-Inf'
  if (x === 0) return '0'
  const a = Math.abs(x)
  if (a >= 1e6 || a < 1e-3) return x.toExponential(3).replace(/\.?0+e/, 'e')
  if (Number.isInteger(x)) return String(x)
  return String(Number(x.toPrecision(4)))
}

/** `part` as a percentage of `whole`: '0%', '<0.01%', '4.50%', '32.7%'. @param {number} part @param {number} whole */
export function formatPercent(part, whole) {
  if (whole === 0 || part === 0) return '0%'
  const p = (100 * part) / whole
  if (p < 0.01) return '<0.01%'
  return `${p < 10 ? p.toFixed(2) : p.toFixed(1)}%`
}

/**
 * Characters that a name or a metadata string must not show as they are: bidirectional controls
 * (U+202A-U+202E, U+2066-U+2069, U+200E, U+200F, U+061C) reorder what follows them, so that
 * `\u202Eexe.txt` reads as `txt.exe`; zero-width and other invisible characters (U+200B-U+200D,
 * U+2060-U+2064, U+FEFF, U+00AD, every other format character, the Hangul fillers) make two
 * different names look the same; control characters (tab and newline included: a name is one line;
 * ESC starts terminal escape sequences), line and paragraph separators and lone surrogates have no
 * honest glyph either. All of Unicode's Cc, Cf, Cs, Zl and Zp categories, plus the fillers.
 */
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}\u115F\u1160\u3164\uFFA0]/u
/** The same, with a literal `\u{` (escaped too in plain text, so that an escape is never ambiguous). */
const INVISIBLE_OR_ESCAPE = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}\u115F\u1160\u3164\uFFA0]|\\(?=u\{)/gu

/** Names of the characters a reader is most likely to meet, for the inspector's tooltips. */
const INVISIBLE_NAMES = /** @type {Record<number, string>} */ ({
  0x09: 'CHARACTER TABULATION', 0x0a: 'LINE FEED', 0x0d: 'CARRIAGE RETURN', 0x1b: 'ESCAPE', 0x00: 'NULL', 0x7f: 'DELETE',
  0xad: 'SOFT HYPHEN', 0x61c: 'ARABIC LETTER MARK', 0x180e: 'MONGOLIAN VOWEL SEPARATOR',
  0x200b: 'ZERO WIDTH SPACE', 0x200c: 'ZERO WIDTH NON-JOINER', 0x200d: 'ZERO WIDTH JOINER',
  0x200e: 'LEFT-TO-RIGHT MARK', 0x200f: 'RIGHT-TO-LEFT MARK', 0x2028: 'LINE SEPARATOR', 0x2029: 'PARAGRAPH SEPARATOR',
  0x202a: 'LEFT-TO-RIGHT EMBEDDING', 0x202b: 'RIGHT-TO-LEFT EMBEDDING', 0x202c: 'POP DIRECTIONAL FORMATTING',
  0x202d: 'LEFT-TO-RIGHT OVERRIDE', 0x202e: 'RIGHT-TO-LEFT OVERRIDE', 0x2060: 'WORD JOINER',
  0x2061: 'FUNCTION APPLICATION', 0x2062: 'INVISIBLE TIMES', 0x2063: 'INVISIBLE SEPARATOR', 0x2064: 'INVISIBLE PLUS',
  0x2066: 'LEFT-TO-RIGHT ISOLATE', 0x2067: 'RIGHT-TO-LEFT ISOLATE', 0x2068: 'FIRST STRONG ISOLATE',
  0x2069: 'POP DIRECTIONAL ISOLATE', 0xfeff: 'ZERO WIDTH NO-BREAK SPACE (byte order mark)',
  0x115f: 'HANGUL CHOSEONG FILLER', 0x1160: 'HANGUL JUNGSEONG FILLER', 0x3164: 'HANGUL FILLER', 0xffa0: 'HALFWIDTH HANGUL FILLER',
})

/** @param {number} cp */
const isBidi = (cp) => cp === 0x61c || cp === 0x200e || cp === 0x200f || (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069)

/**
 * `ch` as the escape that stands for it: `\u{202E}` (upper-case hex, at least 4 digits).
 * @param {string} ch one character (a code point)
 */
export function invisibleEscape(ch) {
  return `\\u{${(ch.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}}`
}

/**
 * What a shown escape stands for, for a tooltip: 'U+202E RIGHT-TO-LEFT OVERRIDE: a bidirectional
 * control, which would reorder the text after it; shown escaped'.
 * @param {string} ch one character (a code point)
 */
export function describeInvisible(ch) {
  const cp = ch.codePointAt(0) ?? 0
  const code = `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`
  const name = INVISIBLE_NAMES[cp]
  const kind = isBidi(cp) ? 'a bidirectional control, which would reorder the text around it; shown escaped'
    : /\p{Cc}/u.test(ch) ? 'a control character, shown escaped'
    : /\p{Cs}/u.test(ch) ? 'a lone UTF-16 surrogate (no character), shown escaped'
    : /[\p{Zl}\p{Zp}]/u.test(ch) ? 'a line break, shown escaped'
    : 'an invisible character, shown escaped'
  return `${code}${name ? ` ${name}` : ''}: ${kind}`
}

/**
 * Whether `text` holds a character that escapeInvisible would escape.
 * @param {string} text
 */
export function hasInvisible(text) {
  return INVISIBLE.test(text)
}

/**
 * `text` with bidirectional controls, invisible, control and separator characters written as
 * escapes (`\u{202E}`), so that what is shown is what is stored: `\u202Eexe.txt` is shown as
 * `\u{202E}exe.txt`, not as `txt.exe`. A backslash that starts `\u{` in the text is escaped too
 * (`\u{005C}u{`), so that every `\u{...}` shown is an escape. `multiline` keeps newlines and tabs
 * (for metadata values, which may be text of several lines). Everything the CLI's text output and
 * the inspector show of names and metadata goes through this (the inspector marks each escape:
 * invisibleParts); JSON output does not (see js/cli/inspect.js).
 * @param {string} text
 * @param {{ multiline?: boolean }} [options]
 */
export function escapeInvisible(text, options = {}) {
  if (!INVISIBLE.test(text) && !text.includes('\\u{')) return text
  return text.replace(INVISIBLE_OR_ESCAPE, (ch) => (options.multiline && (ch === '\n' || ch === '\t') ? ch : invisibleEscape(ch)))
}

/**
 * `text` cut into plain runs (strings) and escaped characters ({ escape, title }), for a page to
 * mark each escape; a literal backslash stays plain there (the marks tell escapes apart).
 * @param {string} text
 * @param {{ multiline?: boolean }} [options]
 * @returns {Array<string | { escape: string, title: string }>}
 */
export function invisibleParts(text, options = {}) {
  if (!INVISIBLE.test(text)) return [text]
  /** @type {Array<string | { escape: string, title: string }>} */
  const parts = []
  let plain = ''
  for (const ch of text) {
    if ((options.multiline && (ch === '\n' || ch === '\t')) || !INVISIBLE.test(ch)) plain += ch
    else {
      if (plain) parts.push(plain)
      plain = ''
      parts.push({ escape: invisibleEscape(ch), title: describeInvisible(ch) })
    }
  }
  if (plain) parts.push(plain)
  return parts
}

/**
 * Name patterns for --only and stats: globs and /regex/es, matched in time that a hostile file's
 * names cannot stretch. A glob compiled to a backtracking regex (`^.*\.layers\..*\.weight$`) took
 * time quadratic in a name's length per star (12 s for one 320 kB name), and a signal handler
 * waits for synchronous work, so Ctrl-C waited too. Matched here, '*.layers.*.weight' over a
 * 640 kB name of '.layers.' repeated takes under a millisecond (36 s before).
 */
import { setFlagsFromString } from 'node:v8'
import { SafetensorsError } from '../errors.js'
import { foldCase } from './case-fold.js'

/** Whether V8's linear-time regex engine was asked for (linearRegex). */
let linearEngine = false

/**
 * A name filter. `/source/flags` is a JavaScript regular expression, searched anywhere in the
 * name (anchor it with ^ and $ to match whole names); anything else is a glob matched against
 * the whole name, where `*` is any run of characters (dots included) and `?` any one character.
 * A glob takes time linear in the name's length (times the pattern's). A regex runs on V8's
 * linear-time engine (with the i flag, rewritten to match both cases itself: case-fold.js); one
 * that engine cannot run (backreferences, lookarounds, the u flag, counts over 16) is an
 * InvalidArgument error, rather than a hang on a hostile name.
 * @param {string} pattern
 * @returns {(name: string) => boolean}
 */
export function namePattern(pattern) {
  const regex = /^\/(.*)\/([a-z]*)$/s.exec(pattern)
  if (regex) return regexFilter(pattern, regex[1], regex[2].replace(/[gy]/g, ''))
  return globFilter(pattern)
}

/** @typedef {{ points: number[], text: string | null }} Segment  a glob's part between stars: its code points, -1 for `?`; `text` when it has no `?` */

/** @param {string} pattern */
function globFilter(pattern) {
  const segments = pattern.split('*').map((s) => /** @type {Segment} */ ({
    points: Array.from(s, (c) => (c === '?' ? -1 : /** @type {number} */ (c.codePointAt(0)))),
    text: s.includes('?') ? null : s,
  }))
  const first = segments[0]
  if (segments.length === 1) return (/** @type {string} */ name) => matchAt(first, name, 0) === name.length
  const last = segments[segments.length - 1]
  // Consecutive stars are one star; each middle segment is taken where it first occurs, which
  // leaves the most room for the rest (a star takes whatever lies between).
  const middle = segments.slice(1, -1).filter((s) => s.points.length > 0)
  return (/** @type {string} */ name) => {
    let at = matchAt(first, name, 0)
    for (let i = 0; i < middle.length && at >= 0; i++) at = find(middle[i], name, at)
    if (at < 0) return false
    const start = backFrom(name, name.length, last.points.length)
    return start >= at && matchAt(last, name, start) === name.length
  }
}

/** Where `segment` ends when it starts at `at` in `name`, or -1. @param {Segment} segment @param {string} name @param {number} at */
function matchAt(segment, name, at) {
  if (segment.text !== null) return name.startsWith(segment.text, at) ? at + segment.text.length : -1
  for (const point of segment.points) {
    if (at >= name.length) return -1
    const c = /** @type {number} */ (name.codePointAt(at))
    if (point !== -1 && point !== c) return -1
    at += c > 0xffff ? 2 : 1
  }
  return at
}

/** Where the first occurrence of `segment` at or after `from` ends, or -1. @param {Segment} segment @param {string} name @param {number} from */
function find(segment, name, from) {
  if (segment.text !== null) {
    const i = name.indexOf(segment.text, from)
    return i < 0 ? -1 : i + segment.text.length
  }
  for (let at = from; at < name.length; at += /** @type {number} */ (name.codePointAt(at)) > 0xffff ? 2 : 1) {
    const end = matchAt(segment, name, at)
    if (end >= 0) return end
  }
  return -1
}

/** The index `count` code points before `end`, or -1. @param {string} name @param {number} end @param {number} count */
function backFrom(name, end, count) {
  let at = end
  for (let i = 0; i < count; i++) {
    if (at <= 0) return -1
    const low = name.charCodeAt(at - 1)
    at -= at >= 2 && low >= 0xdc00 && low <= 0xdfff && (name.charCodeAt(at - 2) & 0xfc00) === 0xd800 ? 2 : 1
  }
  return at
}

/**
 * @param {string} pattern  as given, for messages
 * @param {string} source
 * @param {string} flags
 * @returns {(name: string) => boolean}
 */
function regexFilter(pattern, source, flags) {
  // A syntax error is told as such, before the linear engine's verdict.
  void new RegExp(source, flags)
  // The linear engine takes no i flag: the source is rewritten to match both cases itself.
  const folded = flags.includes('i') ? foldCase(source) : source
  const linear = folded === null ? null : linearRegex(folded, flags.replace('i', ''))
  // The ordinary engine backtracks without bound (2^n steps for /(a+)+$/i on n a's), and a
  // timeout for it (node:vm) costs a thread a name: a millisecond a name on a busy machine.
  if (!linear) {
    throw new SafetensorsError('InvalidArgument', `${pattern} cannot be matched in linear time: backreferences, ` +
      'lookarounds, the u flag and counts over 16 ({17}) are not taken, nor with the i flag letters or digits ' +
      'escaped (\\1, \\p, \\k)')
  }
  return (name) => linear.test(name)
}

/**
 * The regex on V8's linear-time engine (the `l` flag, behind a V8 flag that is turned on here:
 * the CLI's process is ours), or null when that engine cannot run it or this V8 has none.
 * @param {string} source
 * @param {string} flags
 */
function linearRegex(source, flags) {
  // Once: a V8 without the flag says so on stderr each time it is set.
  if (!linearEngine) {
    setFlagsFromString('--enable-experimental-regexp-engine')
    linearEngine = true
  }
  try {
    return new RegExp(source, `${flags}l`)
  } catch {
    return null
  }
}

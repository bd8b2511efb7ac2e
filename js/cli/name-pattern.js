/**
 * Name patterns for --only and stats: globs and /regex/es, matched in time that a hostile file's
 * names cannot stretch. A glob compiled to a backtracking regex (`^.*\.layers\..*\.weight$`) took
 * time quadratic in a name's length per star (12 s for one 320 kB name), and a signal handler
 * waits for synchronous work, so Ctrl-C waited too. Matched here, '*.layers.*.weight' over a
 * 640 kB name of '.layers.' repeated takes under a millisecond (36 s before).
 */
import { setFlagsFromString } from 'node:v8'
import vm from 'node:vm'
import { SafetensorsError } from '../errors.js'

/** How long one name may take against a regex the linear-time engine cannot run. */
const REGEX_NAME_MS = 250
/** How long all names together may take against such a regex. */
const REGEX_TOTAL_MS = 10_000
/** Whether V8's linear-time regex engine was asked for (linearRegex). */
let linearEngine = false

/**
 * A name filter. `/source/flags` is a JavaScript regular expression, searched anywhere in the
 * name (anchor it with ^ and $ to match whole names); anything else is a glob matched against
 * the whole name, where `*` is any run of characters (dots included) and `?` any one character.
 * A glob takes time linear in the name's length (times the pattern's). A regex runs on V8's
 * linear-time engine when that engine can run it; one it cannot (backreferences, lookarounds,
 * the i and u flags) runs on the ordinary engine with a time limit, and a name that takes longer
 * is an InvalidArgument error rather than a hang.
 * @param {string} pattern
 * @param {{ regexNameMs?: number }} [options]  regexNameMs: that time limit per name (tests)
 * @returns {(name: string) => boolean}
 */
export function namePattern(pattern, options = {}) {
  const regex = /^\/(.*)\/([a-z]*)$/s.exec(pattern)
  if (regex) return regexFilter(pattern, regex[1], regex[2].replace(/[gy]/g, ''), options.regexNameMs ?? REGEX_NAME_MS)
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
 * @param {number} nameMs
 * @returns {(name: string) => boolean}
 */
function regexFilter(pattern, source, flags, nameMs) {
  const re = new RegExp(source, flags)
  const linear = linearRegex(source, flags)
  if (linear) return (name) => linear.test(name)
  // A script run with a timeout is the one way to stop a regex mid-match; it costs tens of
  // microseconds a name, which is why it is the fallback.
  const context = vm.createContext({ re, name: '' })
  const script = new vm.Script('re.test(name)')
  let spent = 0
  return (name) => {
    const tooLong = () => new SafetensorsError('InvalidArgument', `${pattern} took too long to match a ${name.length}-character name: ` +
      'a regex with backreferences, lookarounds or the i or u flag is stopped after ' +
      `${nameMs} ms a name (${REGEX_TOTAL_MS / 1000} s in all); use a glob or a regex without them`)
    const timeout = Math.floor(Math.min(nameMs, REGEX_TOTAL_MS - spent))
    if (timeout < 1) throw tooLong()
    context.name = name
    const started = performance.now()
    try {
      return script.runInContext(context, { timeout })
    } catch (error) {
      if (/** @type {{ code?: string }} */ (error).code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') throw tooLong()
      throw error
    } finally {
      spent += performance.now() - started
    }
  }
}

/**
 * The regex on V8's linear-time engine (the `l` flag, behind a V8 flag that is turned on here),
 * or null when that engine cannot run it or this V8 has no such engine.
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

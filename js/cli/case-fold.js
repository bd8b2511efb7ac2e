/**
 * The i flag without the i flag: V8's linear-time regex engine does not take it, so a regex
 * source is rewritten to match, case-sensitively, what it matched case-insensitively. Every
 * literal character becomes the class of the characters JavaScript's ignoreCase takes as equal
 * to it (Canonicalize, for non-unicode patterns: ECMA-262 22.2.2.7.3); classes are closed the
 * same way ([^...] too: ignoreCase tests the canonical form against the class). \d \w \s and
 * their negations are closed already. What is not understood here is refused (null).
 */

/** @type {{ canon: Uint16Array, group: Map<number, number[]> } | null} */
let table = null

/** The canonical form of each UTF-16 unit, and the units of each canonical form. */
function folding() {
  if (table) return table
  const canon = new Uint16Array(65536)
  /** @type {Map<number, number[]>} */
  const group = new Map()
  for (let c = 0; c < 65536; c++) {
    const upper = String.fromCharCode(c).toUpperCase()
    const u = upper.length === 1 ? upper.charCodeAt(0) : c
    canon[c] = c >= 128 && u < 128 ? c : u
    const members = group.get(canon[c])
    if (members) members.push(c)
    else group.set(canon[c], [c])
  }
  return (table = { canon, group })
}

const hex = (/** @type {number} */ c) => `\\u${c.toString(16).padStart(4, '0')}`

/** Marks in `set` every unit ignoreCase takes as equal to `c`. @param {Uint8Array} set @param {number} c */
function close(set, c) {
  const { canon, group } = folding()
  for (const d of /** @type {number[]} */ (group.get(canon[c]))) set[d] = 1
}

/** A class of the marked units, as runs. @param {Uint8Array} set */
function runs(set) {
  let out = ''
  for (let c = 0; c < 65536; c++) {
    if (!set[c]) continue
    let end = c
    while (end + 1 < 65536 && set[end + 1]) end++
    out += end === c ? hex(c) : `${hex(c)}-${hex(end)}`
    c = end
  }
  return out
}

/**
 * The escape at `src[at]` (just past the backslash): a class escape (\d \w \s and negations, kept
 * as written), the unit it stands for, or null when it is not one of those.
 * @param {string} src @param {number} at @param {boolean} inClass
 * @returns {{ kind: 'class', text: string, end: number } | { kind: 'unit', unit: number, end: number } | null}
 */
function escape(src, at, inClass) {
  const e = src[at]
  if (e === undefined) return null
  if ('dDwWsS'.includes(e)) return { kind: 'class', text: `\\${e}`, end: at + 1 }
  const simple = { t: 9, n: 10, v: 11, f: 12, r: 13 }
  if (e in simple) return { kind: 'unit', unit: simple[/** @type {keyof typeof simple} */ (e)], end: at + 1 }
  if (e === 'b' && inClass) return { kind: 'unit', unit: 8, end: at + 1 }
  if (e === '0' && !/[0-9]/.test(src[at + 1] ?? '')) return { kind: 'unit', unit: 0, end: at + 1 }
  const digits = e === 'x' ? 2 : e === 'u' ? 4 : 0
  if (digits) {
    const h = src.slice(at + 1, at + 1 + digits)
    return h.length === digits && /^[0-9a-f]+$/i.test(h) ? { kind: 'unit', unit: parseInt(h, 16), end: at + 1 + digits } : null
  }
  if (e === 'c' && /[a-z]/i.test(src[at + 1] ?? '')) return { kind: 'unit', unit: src.charCodeAt(at + 1) % 32, end: at + 2 }
  // Identity escapes of what is not a letter or digit (\. \* \\ \/ \-); \b \B are assertions.
  if (/[\p{L}\p{N}_]/u.test(e)) return null
  return { kind: 'unit', unit: e.charCodeAt(0), end: at + 1 }
}

/**
 * The class at `src[at]` (just past the `[`), closed under ignoreCase, and where it ends; null
 * when something in it is not understood.
 * @param {string} src @param {number} at
 */
function foldClass(src, at) {
  let i = at
  const negated = src[i] === '^'
  if (negated) i++
  const set = new Uint8Array(65536)
  let escapes = ''
  /** @returns {{ kind: 'class', text: string, end: number } | { kind: 'unit', unit: number, end: number } | null} */
  const atom = () => {
    if (src[i] === '\\') return escape(src, i + 1, true)
    return { kind: 'unit', unit: src.charCodeAt(i), end: i + 1 }
  }
  while (i < src.length && src[i] !== ']') {
    const a = atom()
    if (!a) return null
    i = a.end
    const members = [a]
    if (src[i] === '-' && i + 1 < src.length && src[i + 1] !== ']') {
      i++
      const b = atom()
      if (!b) return null
      i = b.end
      if (a.kind === 'unit' && b.kind === 'unit') {
        for (let c = a.unit; c <= b.unit; c++) close(set, c)
        continue
      }
      // A class escape as an end makes the dash a character (Annex B).
      close(set, 45)
      members.push(b)
    }
    for (const x of members) {
      if (x.kind === 'class') escapes += x.text
      else close(set, x.unit)
    }
  }
  if (i >= src.length) return null
  return { text: `[${negated ? '^' : ''}${escapes}${runs(set)}]`, end: i + 1 }
}

/**
 * `source` rewritten to match without the i flag what it matched with it, or null when it holds
 * what is not understood here (backreferences, \p, unusual escapes).
 * @param {string} source
 * @returns {string | null}
 */
export function foldCase(source) {
  let out = ''
  for (let i = 0; i < source.length;) {
    const c = source[i]
    if (c === '[') {
      const k = foldClass(source, i + 1)
      if (!k) return null
      out += k.text
      i = k.end
    } else if (c === '\\') {
      const e = source[i + 1]
      if (e === 'b' || e === 'B') {
        out += `\\${e}`
        i += 2
        continue
      }
      const x = escape(source, i + 1, false)
      if (!x) return null
      out += x.kind === 'class' ? x.text : unit(x.unit)
      i = x.end
    } else if (source.startsWith('(?<', i) && source[i + 3] !== '=' && source[i + 3] !== '!') {
      // A group's name, as written.
      const close = source.indexOf('>', i)
      if (close < 0) return null
      out += source.slice(i, close + 1)
      i = close + 1
    } else {
      out += unit(c.charCodeAt(0), c)
      i++
    }
  }
  return out
}

/** A unit outside a class: as written when ignoreCase takes it as itself alone, else its class. @param {number} c @param {string} [asWritten] */
function unit(c, asWritten) {
  const { canon, group } = folding()
  const members = /** @type {number[]} */ (group.get(canon[c]))
  if (members.length === 1) return asWritten ?? hex(c)
  return `[${members.map(hex).join('')}]`
}

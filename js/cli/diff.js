/**
 * `diff <a> <b> [--json] [--only PATTERN]... [--chunk-bytes N]`: what changed from checkpoint A to
 * checkpoint B (each a path, URL, hf:// address or sharded set's index, as the other commands take).
 *
 * The comparison is js/compare.js's (compareFiles: what is compared, how, and what the numbers
 * mean); this is its command line: the options, the text and JSON forms, the exit code.
 *
 * Exit codes: 0 the same tensors with the same bytes, 1 they differ, 2 an error (a usage mistake,
 * a source that cannot be read).
 */
import { DEFAULT_CHUNK_BYTES, compareFiles, differs } from '../compare.js'
import { escapeInvisible, formatCount, formatShape, formatValue } from '../format.js'
import { onlyFilter, openForCli, parseCommand, progressBar, usageError } from './common.js'
import { redactUrl } from '../redact.js'

export { differs }
/** The comparison itself (js/compare.js), by the name the command has long exported it under. */
export const diffFiles = compareFiles

export const usage = 'diff <a> <b> [--only PATTERN]... [--chunk-bytes N] [--json]   tensors only in A or B, changed (dtype, shape, values: max and mean |B-A|, ||B-A||/||A||), identical; exit 0 same, 1 differ, 2 error'

/** Exit code of a diff that could not be made: 1 means "they differ". */
export const FAILURE = 2

export const options = /** @type {const} */ ({
  only: { type: 'string', multiple: true },
  'chunk-bytes': { type: 'string' },
})

/** A line each for --help. @type {import('./common.js').OptionHelp[]} */
export const optionHelp = [
  ['--only PATTERN', 'compare the tensors matching a glob or a /regex/ (repeatable)'],
  ['--chunk-bytes N', 'bytes read at a time from each side (default 4m; k, m, g suffixes)'],
]

/** What --help adds. */
export const help = `A tensor in both files with the same dtype and shape is read from both, piece by piece, and
compared byte for byte; when its bytes differ, its values: the max and mean |b - a| over the
elements where both are finite, and ||B - A|| / ||A||. NaN equals NaN, +0 equals -0; a value that
is NaN or Inf on one side only is counted apart (nonFiniteChanges). A changed dtype or shape is
reported without reading the values (its numbers are null in --json).

--json: { onlyInA: [names], onlyInB: [names], changed: [{ name, kind: 'dtype' | 'shape' | 'values',
maxAbsDiff, meanAbsDiff, relativeChange, a: { dtype, shape }, b: { dtype, shape }, values,
changedValues, nonFiniteChanges }], identical: count }

exit codes: 0 the same tensors with the same bytes; 1 they differ; ${FAILURE} an error (a usage mistake, or
a source that cannot be read: the error on stderr)`


/**
 * @typedef {import('../compare.js').CompareResult} DiffResult
 * @typedef {import('../compare.js').Side} Side
 */

/**
 * The command: `argv` is what follows its name. Returns the exit code.
 * @param {string[]} argv
 * @param {import('./common.js').Io} io
 */
export async function main(argv, io) {
  const { args, flags } = parseCommand(argv, options)
  if (args.length !== 2) throw usageError('diff takes two files, URLs or indexes: A and B')
  const chunkBytes = flags['chunk-bytes'] === undefined ? DEFAULT_CHUNK_BYTES : parseByteCount(flags['chunk-bytes'])
  const only = onlyFilter(flags.only)
  // --token and --endpoint go to the hf:// sources among the two (refused when neither is one).
  const hub = args.filter((src) => /^hf:\/\//i.test(src))
  /** @param {string} src */
  const flagsFor = (src) => ({ ...flags, 'no-config': true,
    ...(hub.length > 0 && !hub.includes(src) ? { token: undefined, endpoint: undefined } : {}) })
  const a = await openForCli(args[0], flagsFor(args[0]), io)
  try {
    const b = await openForCli(args[1], flagsFor(args[1]), io)
    try {
      const bar = progressBar(io, flags, 'comparing')
      let result
      try {
        result = await diffFiles(a.file, b.file, {
          chunkBytes, only,
          onProgress: (p) => bar.update(p.loaded, p.total),
        })
      } finally {
        bar.done()
      }
      io.stdout.write(flags.json ? `${JSON.stringify(result, null, 2)}\n` : `${diffText(result, redactUrl(args[0]), redactUrl(args[1]))}\n`)
      return differs(result) ? 1 : 0
    } finally {
      await b.close()
    }
  } finally {
    await a.close()
  }
}

/**
 * `4194304`, `64k`, `4m`, `1g` (KiB, MiB, GiB) as a number of bytes, from 1 to 1 GiB.
 * @param {string} text
 */
export function parseByteCount(text) {
  const m = /^\s*(\d+)\s*([kmg]?)i?b?\s*$/i.exec(text)
  const n = m ? Number(m[1]) * 1024 ** ' kmg'.indexOf((m[2] || ' ').toLowerCase()) : NaN
  if (!Number.isSafeInteger(n) || n < 1 || n > 2 ** 30)
    throw usageError(`--chunk-bytes takes a number of bytes from 1 to 1g (k, m, g: KiB, MiB, GiB), got ${JSON.stringify(text)}`)
  return n
}

/** Relative change in a few characters: `3.1e-3`, `0.5`, `Inf` (A all zeros). @param {number | null} r */
function formatRelative(r) {
  return r === null ? 'Inf (A is all zeros)' : formatValue(r)
}

/**
 * The text form: a line per difference (only in A, only in B, dtype, shape, values), then a
 * summary line.
 * @param {DiffResult} r @param {string} labelA @param {string} labelB
 */
export function diffText(r, labelA, labelB) {
  /** @type {string[][]} */
  const rows = []
  const side = (/** @type {Side} */ s) => `${s.dtype} ${formatShape(s.shape)}`
  for (const name of r.onlyInA) rows.push(['only in A', escapeInvisible(name), ''])
  for (const name of r.onlyInB) rows.push(['only in B', escapeInvisible(name), ''])
  for (const c of r.changed) {
    if (c.kind !== 'values') {
      rows.push([c.kind, escapeInvisible(c.name), `${side(c.a)} -> ${side(c.b)}`])
      continue
    }
    if (c.changedValues === null) {
      rows.push(['values', escapeInvisible(c.name), `${side(c.a)}: the bytes differ (${c.a.dtype} has no values to compare)`])
      continue
    }
    const parts = []
    if (c.maxAbsDiff !== null && c.changedValues > 0) {
      parts.push(`max |B-A| ${formatValue(c.maxAbsDiff)}`, `mean ${formatValue(/** @type {number} */ (c.meanAbsDiff))}`,
        `relative ${formatRelative(c.relativeChange)}`)
    }
    const nonFinite = c.nonFiniteChanges ? `, ${formatCount(c.nonFiniteChanges)} NaN or Inf on one side` : ''
    const what = c.changedValues === 0 ? 'no value differs: NaN payloads or the sign of zero'
      : `${formatCount(/** @type {number} */ (c.changedValues))} of ${formatCount(c.values)} values changed${nonFinite}`
    rows.push(['values', escapeInvisible(c.name), `${parts.join('  ')}${parts.length ? '  ' : ''}(${what})`])
  }
  const lines = []
  if (rows.length) {
    const widths = [0, 1].map((k) => Math.min(60, Math.max(...rows.map((row) => row[k].length))))
    for (const row of rows) lines.push(`${row[0].padEnd(widths[0])}  ${row[1].padEnd(widths[1])}  ${row[2]}`.trimEnd())
    lines.push('')
  }
  const kinds = ['dtype', 'shape', 'values'].map((k) => [k, r.changed.filter((c) => c.kind === k).length])
    .filter(([, n]) => n).map(([k, n]) => `${n} ${k}`).join(', ')
  const counts = [
    `${formatCount(r.identical)} identical`,
    ...(r.changed.length ? [`${formatCount(r.changed.length)} changed (${kinds})`] : []),
    ...(r.onlyInA.length ? [`${formatCount(r.onlyInA.length)} only in A`] : []),
    ...(r.onlyInB.length ? [`${formatCount(r.onlyInB.length)} only in B`] : []),
  ]
  const a = escapeInvisible(labelA)
  const b = escapeInvisible(labelB)
  lines.push(differs(r) ? `A ${a} and B ${b} differ: ${counts.join(', ')}`
    : `A ${a} and B ${b} hold the same ${formatCount(r.identical)} ${r.identical === 1 ? 'tensor' : 'tensors'}, byte for byte`)
  return lines.join('\n')
}

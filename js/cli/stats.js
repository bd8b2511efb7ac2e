/**
 * `stats <src> <tensor>... [--bins N] [--slice SPEC] [--json]`: min, max, mean, std, NaN, Inf
 * and zero counts and a histogram of each tensor, read one at a time (only its bytes). A name
 * may be a pattern as for convert --only: a glob (`'model.layers.*.mlp.down_proj.weight'`) or
 * a /regex/.
 */
import { SafetensorsError } from '../node.js'
import { openForCli, parseCommand, progressBar, shapeJson, tensorRows, usageError } from './common.js'
import { namePattern } from './convert.js'
import { escapeInvisible, formatBytes, formatCount, formatPercent, formatShape, formatValue } from '../format.js'

export const usage = 'stats <file|url|index.json> <tensor>... [--bins N] [--slice SPEC] [--json]   value statistics and a histogram'

const options = /** @type {const} */ ({
  bins: { type: 'string' },
  slice: { type: 'string' },
})

const DEFAULT_BINS = 20
const BAR_WIDTH = 40

/**
 * The command: `argv` is what follows its name. Returns the exit code.
 * @param {string[]} argv
 * @param {import('./common.js').Io} io
 */
export async function main(argv, io) {
  const { args, flags } = parseCommand(argv, options)
  return run(args, /** @type {any} */ (flags), io)
}

/**
 * @param {string[]} args
 * @param {import('./common.js').CommonFlags & { bins?: string, slice?: string }} flags
 * @param {import('./common.js').Io} io
 */
async function run(args, flags, io) {
  if (args.length < 2) throw usageError('stats takes a source and at least one tensor name')
  const bins = flags.bins === undefined ? DEFAULT_BINS : Number(flags.bins)
  if (!Number.isInteger(bins) || bins < 1 || bins > 10_000) throw usageError('--bins takes a whole number from 1 to 10000')
  const [src, ...patterns] = args
  const { file, close } = await openForCli(src, flags, io)
  try {
    const rows = await tensorRows(file)
    /** @type {string[]} */
    const names = []
    for (const pattern of patterns) {
      // A name as it is, else a pattern: a glob with * and ?, or /regex/ (as convert --only).
      const exact = rows.some((r) => r.name === pattern)
      const matches = exact ? null : namePattern(pattern)
      const found = exact ? [pattern] : rows.filter((r) => /** @type {(n: string) => boolean} */ (matches)(r.name)).map((r) => r.name)
      if (found.length === 0)
        throw new SafetensorsError('TensorNotFound', `no tensor is named or matches ${JSON.stringify(pattern)} in ${src}`, { tensor: pattern })
      for (const n of found) if (!names.includes(n)) names.push(n)
    }
    const bar = progressBar(io, flags, 'reading')
    const results = []
    for (const [i, name] of names.entries()) {
      const onProgress = (/** @type {{ loaded: number, total: number }} */ p) => bar.update(p.loaded, p.total)
      const t = flags.slice === undefined ? await file.tensor(name, { onProgress }) : await file.slice(name, flags.slice, { onProgress })
      try {
        const s = t.stats({ bins })
        const result = { name, dtype: t.dtype, shape: shapeJson(t.shape), byteLength: t.byteLength, ...(flags.slice === undefined ? {} : { slice: flags.slice }), ...s }
        if (flags.json) results.push(result)
        else {
          bar.done()
          io.stdout.write(`${i ? '\n' : ''}${statsText(result)}\n`)
        }
      } finally {
        t.dispose()
      }
    }
    bar.done()
    if (flags.json) io.stdout.write(`${JSON.stringify({ tensors: results }, null, 2)}\n`)
  } finally {
    await close()
  }
  return 0
}

/** ` (4.50%)`, or nothing for 0. @param {number} part @param {number} whole */
function percent(part, whole) {
  return part === 0 || whole === 0 ? '' : ` (${formatPercent(part, whole)})`
}

/**
 * @param {{ name: string, dtype: string, shape: any[], byteLength: number, slice?: string } &
 *   import('../index.js').Stats} s
 */
export function statsText(s) {
  const lines = []
  // The name with its invisible characters escaped (--json keeps it as stored).
  lines.push(`${escapeInvisible(s.name)}${s.slice === undefined ? '' : ` [${escapeInvisible(s.slice)}]`}  ${s.dtype} ${formatShape(s.shape)}  ${formatCount(s.count)} values, ${formatBytes(s.byteLength)}`)
  const pairs = [['min', formatValue(s.min)], ['max', formatValue(s.max)], ['mean', formatValue(s.mean)], ['std', formatValue(s.std)]]
  lines.push(`  ${pairs.map(([k, v]) => `${k} ${v}`).join('   ')}`)
  lines.push(`  NaN ${formatCount(s.nanCount)}${percent(s.nanCount, s.count)}   Inf ${formatCount(s.infCount)}${percent(s.infCount, s.count)}   zeros ${formatCount(s.zeroCount)}${percent(s.zeroCount, s.count)}`)
  if (s.finiteCount > 0 && s.histogram.counts.length > 0) lines.push(...histogramLines(s.histogram))
  else lines.push('  (no finite values: no histogram)')
  return lines.join('\n')
}

/**
 * The histogram as one line per bin: `  [lo, hi)  ████▍  123`.
 * @param {{ min: number, max: number, counts: number[] }} h
 */
export function histogramLines(h) {
  if (h.min === h.max) return [`  histogram: every finite value is ${formatValue(h.min)}`]
  const n = h.counts.length
  const width = (h.max - h.min) / n
  const edges = h.counts.map((_, i) => [formatValue(h.min + i * width), formatValue(i === n - 1 ? h.max : h.min + (i + 1) * width)])
  const labels = edges.map(([lo, hi], i) => `[${lo}, ${hi}${i === n - 1 ? ']' : ')'}`)
  const labelWidth = Math.max(...labels.map((l) => l.length))
  const most = Math.max(...h.counts)
  const countWidth = formatCount(most).length
  const lines = [`  histogram: ${n} ${n === 1 ? 'bin' : 'bins'} of ${formatValue(width)}`]
  h.counts.forEach((c, i) => {
    lines.push(`  ${labels[i].padEnd(labelWidth)}  ${bar(most === 0 ? 0 : c / most).padEnd(BAR_WIDTH)}  ${formatCount(c).padStart(countWidth)}`)
  })
  return lines
}

const EIGHTHS = ['', '▏', '▎', '▍', '▌', '▋', '▊', '▉']

/** A bar of `fraction` x BAR_WIDTH cells, in eighths; any non-zero count shows. @param {number} fraction */
function bar(fraction) {
  const eighths = fraction > 0 ? Math.max(1, Math.round(fraction * BAR_WIDTH * 8)) : 0
  return '█'.repeat(Math.floor(eighths / 8)) + EIGHTHS[eighths % 8]
}

/**
 * `stats <src> <tensor>... [--bins N] [--slice SPEC] [--raw] [--json]`: min, max, mean, std, NaN,
 * Inf and zero counts and a histogram of each tensor, read one at a time (only its bytes). A
 * name may be a pattern as for convert --only: a glob (`'model.layers.*.mlp.down_proj.weight'`)
 * or a /regex/. Each is streamed through the heap (f.stats, js/stream/stats.js), so a tensor
 * larger than the heap is summarised too. A quantized weight is named by its logical name and
 * summarised dequantized (by pieces of rows); --raw summarises stored tensors as they are.
 */
import { SafetensorsError } from '../node.js'
import { CONFIG_NOTE, CONFIG_OPTIONS, CONFIG_OPTION_HELP, namePattern, openForCli, parseCommand, progressBar, shapeJson, usageError } from './common.js'
import { leadingRange } from './quant.js'
import { planSlice } from '../core/index.js'
import { loadCore } from '../wasm.js'
import { overview } from '../overview.js'
import { escapeInvisible, formatBytes, formatCount, formatPercent, formatShape, formatValue } from '../format.js'

export const usage = 'stats <file|url|index.json> <tensor>... [--bins N] [--slice SPEC] [--raw] [--config FILE] [--json]   value statistics and a histogram (quantized weights: by logical name, dequantized)'

export const options = /** @type {const} */ ({
  bins: { type: 'string' },
  slice: { type: 'string' },
  raw: { type: 'boolean' },
  ...CONFIG_OPTIONS,
})

const DEFAULT_BINS = 20

/** A line each for --help. @type {import('./common.js').OptionHelp[]} */
export const optionHelp = [
  ['--bins N', `histogram bins, 1 to 10000 (default ${DEFAULT_BINS})`],
  ['--slice SPEC', "a slice only, numpy-style: '0:16', '-1', ':, 3:5'"],
  ['--raw', 'quantized weights: the stored tensors, not dequantized'],
  ...CONFIG_OPTION_HELP,
]

/** What --help adds. */
export const help = `a tensor name may be a glob ('model.layers.*.mlp.down_proj.weight') or a /regex/. A quantized
weight is named by its logical name and summarised dequantized; its --slice is a range of rows
of its leading dimension (START:STOP, or one row I).

${CONFIG_NOTE}`
/** Dequantized float32 per piece of a quantized weight: 16 MiB (js/cli/quant.js's pieces). */
const QUANTIZED_PIECE_BYTES = 16 << 20
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
 * @param {import('./common.js').CommonFlags & { bins?: string, slice?: string, raw?: boolean }} flags
 * @param {import('./common.js').Io} io
 */
async function run(args, flags, io) {
  if (args.length < 2) throw usageError('stats takes a source and at least one tensor name')
  const bins = flags.bins === undefined ? DEFAULT_BINS : Number(flags.bins)
  if (!Number.isInteger(bins) || bins < 1 || bins > 10_000) throw usageError('--bins takes a whole number from 1 to 10000')
  const [src, ...patterns] = args
  const { file, close } = await openForCli(src, flags, io)
  try {
    const o = await overview(file)
    const { rows } = o
    // Quantized weights are read by their logical names; an inconsistent checkpoint cannot be.
    if (o.quantizedError && !flags.raw) throw o.quantizedError
    const quantized = new Map(flags.raw ? [] : o.quantized.map((q) => [q.name, q]))
    const candidates = [...new Set([...rows.map((r) => r.name), ...quantized.keys()])]
    /** @type {string[]} */
    const names = []
    for (const pattern of patterns) {
      // A name as it is, else a pattern: a glob with * and ?, or /regex/ (as convert --only).
      const exact = quantized.has(pattern) || rows.some((r) => r.name === pattern)
      const matches = exact ? null : namePattern(pattern)
      const found = exact ? [pattern] : candidates.filter((n) => /** @type {(n: string) => boolean} */ (matches)(n))
      if (found.length === 0)
        throw new SafetensorsError('TensorNotFound', `no tensor is named or matches ${JSON.stringify(pattern)} in ${src}`, { tensor: pattern })
      for (const n of found) if (!names.includes(n)) names.push(n)
    }
    const stored = new Map(rows.map((r) => [r.name, r.byteLength]))
    const bar = progressBar(io, flags, 'reading')
    const results = []
    for (const [i, name] of names.entries()) {
      const onProgress = (/** @type {{ loaded: number, total: number }} */ p) => bar.update(p.loaded, p.total)
      const slice = flags.slice === undefined ? {} : { slice: flags.slice }
      /** @type {StatsResult} */
      let result
      const q = quantized.get(name)
      if (q) {
        const range = flags.slice === undefined ? undefined : leadingRange(flags.slice, q.shape[0] ?? 0, name)
        if (range && q.shape.length === 0) throw new SafetensorsError('InvalidSlice', `${JSON.stringify(name)} is a scalar: no --slice`, { tensor: name })
        // Streamed by ranges of rows of its dequantized values (js/stream/stats.js).
        const s = await file.stats(name, { bins, onProgress, chunkBytes: QUANTIZED_PIECE_BYTES, ...(range ? { slice: range } : {}) })
        const shape = range ? [range[1] - range[0], ...q.shape.slice(1)] : q.shape.slice()
        const storedByteLength = Object.values(q.parts).reduce((n, part) => n + (stored.get(part) ?? 0), 0)
        result = { name, scheme: q.scheme, dtype: 'F32', shape, byteLength: s.count * 4, storedByteLength, ...slice, ...s }
      } else {
        // Streamed through the heap (f.stats), so a tensor larger than the heap is summarised too.
        const info = await file.info(name)
        const plan = flags.slice === undefined ? { shape: info.shape, byteLength: info.byteLength }
          : planSlice(await loadCore(), name, info.dtype, info.shape, info.byteOffset, flags.slice)
        const s = await file.stats(name, { bins, onProgress, ...(flags.slice === undefined ? {} : { slice: flags.slice }) })
        result = { name, dtype: info.dtype, shape: shapeJson(plan.shape), byteLength: plan.byteLength, ...slice, ...s }
      }
      if (flags.json) results.push(result)
      else {
        bar.done()
        io.stdout.write(`${i ? '\n' : ''}${statsText(result)}\n`)
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
 * One tensor's summary; a quantized weight's has its scheme and the bytes its parts take.
 * @typedef {{ name: string, dtype: string, shape: any[], byteLength: number, slice?: string,
 *   scheme?: string, storedByteLength?: number } & import('../index.js').Stats} StatsResult
 */

/** @param {StatsResult} s */
export function statsText(s) {
  const lines = []
  // The name with its invisible characters escaped (--json keeps it as stored).
  const what = s.scheme === undefined ? `${s.dtype} ${formatShape(s.shape)}  ${formatCount(s.count)} values, ${formatBytes(s.byteLength)}`
    : `${s.scheme}, dequantized to ${s.dtype} ${formatShape(s.shape)}  ${formatCount(s.count)} values, ${formatBytes(s.storedByteLength ?? 0)} stored`
  lines.push(`${escapeInvisible(s.name)}${s.slice === undefined ? '' : ` [${escapeInvisible(s.slice)}]`}  ${what}`)
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

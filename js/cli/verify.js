/**
 * `verify <src> [--full] [--finite] [--sha256 HEX] [--json]`: runs every check and exits 1 when one
 * fails. The report is on stdout, each problem once (a FAIL line, or a check with its error in
 * --json); --quiet prints the FAIL lines alone. stderr is left to the command's own failures
 * (usage mistakes, a bug).
 *
 * Always: the header (rules 1-5 of docs/format.md: length, UTF-8, JSON, fields, dtypes) and the
 * layout (rules 6-10: tensors tile the data buffer exactly, sizes match shapes and dtypes, the
 * buffer ends at the end of the file). For a sharded set: the index, every shard's header and
 * layout (each shard is checked even when another fails), and that the index and the shards
 * name the same tensors. With --full: every byte of every tensor is read (large tensors in
 * pieces, so any size fits in memory), each read's size is checked, and NaN and Inf values are
 * counted: reported as a warning, or as a failure with --finite. With --sha256: the whole file's
 * SHA-256 (streamed through the core, f.digest()) must be HEX, the hash the Hub lists for it (its
 * LFS oid); a single file only, as the hash is per file.
 */
import { SafetensorsError, ShardedFile, open } from '../node.js'
import { describeFailure, errorJson, loadShardHeaders, openOptions, parseCommand, progressBar, usageError } from './common.js'
import { DTYPE_BITS } from '../dtypes.js'
import { escapeInvisible, formatBytes, formatCount } from '../format.js'
import { redactUrl } from '../redact.js'

export const usage = 'verify <file|url|index.json> [--full] [--finite] [--sha256 HEX] [--json]   check everything; exit 1 on any problem'

export const options = /** @type {const} */ ({
  full: { type: 'boolean' },
  finite: { type: 'boolean' },
  sha256: { type: 'string' },
})

/** A line each for --help. @type {import('./common.js').OptionHelp[]} */
export const optionHelp = [
  ['--full', 'read every byte of every tensor; count NaN and Inf (a warning)'],
  ['--finite', 'with --full: NaN or Inf values are a failure'],
  ['--sha256 HEX', "the file's SHA-256 must be HEX (the Hub's LFS oid); one file only"],
]

/** What --help adds. */
export const help = `the report is on stdout, a line per check (--json: { source, ok, checks }), each problem
once; --quiet prints the failed checks alone. exit codes: 0 every check passed (warnings allowed);
1 a check failed; 2 a usage mistake. stderr is for the command's own failures only.`

/** Tensors are read in pieces of at most this many bytes (and small ones together up to it). */
export const PIECE_BYTES = 64 * 1024 * 1024

/** Codes of rules 1-5 in docs/format.md, "Reader rules" (the header); 6-10 are the layout's. */
const HEADER_CODES = new Set(['HeaderTooSmall', 'HeaderTooLarge', 'InvalidHeaderLength', 'InvalidHeader', 'InvalidHeaderDeserialization'])
const LAYOUT_CODES = new Set(['InvalidOffset', 'ValidationOverflow', 'MisalignedSlice', 'TensorInvalidInfo', 'MetadataIncompleteBuffer'])

/**
 * @typedef {import('../node.js').SafetensorsFile} SafetensorsFile
 * @typedef {{ name: string, status: 'ok' | 'warn' | 'fail', detail: string,
 *   error?: ReturnType<typeof errorJson>, expected?: string, actual?: string, problems?: Problem[] }} Check
 *   expected, actual: the sha256 check's hashes (actual: absent when the file could not be read);
 *   problems: every disagreement of one kind between a sharded set's index and its shards
 * @typedef {import('./common.js').CommonFlags & { full: boolean, finite: boolean, sha256?: string }} Flags
 * @typedef {{ file: SafetensorsFile, names: string[], label: string }} Part  one file to read
 */

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
 * @param {Flags} flags
 * @param {import('./common.js').Io} io
 */
async function run(args, flags, io) {
  if (args.length !== 1) throw usageError('verify takes one file, URL or index')
  const src = args[0]
  const expected = flags.sha256 === undefined ? null : expectedHash(flags.sha256)
  /** @type {Check[]} */
  const checks = []
  /** @type {unknown[]} */
  const errors = []
  /** @param {string} name @param {unknown} error @param {string} [label] */
  const fail = (name, error, label) => {
    errors.push(error)
    checks.push({ name, status: 'fail', detail: `${label ? `${label}: ` : ''}${describeFailure(error)}`, error: errorJson(error) })
  }

  const opening = openOptions(src, flags)
  let f = null
  try {
    f = await open(src, opening)
  } catch (error) {
    if (!(error instanceof SafetensorsError)) throw error
    fail(checkOf(error), error)
  }
  try {
    if (expected !== null && f instanceof ShardedFile) {
      throw usageError('--sha256 checks one file, and a sharded set is several: the hash is per file (each shard has ' +
        'its own on the Hub); verify each shard with its own --sha256')
    }
    /** @type {Part[]} */
    let parts = []
    if (f instanceof ShardedFile) parts = await checkSharded(f, checks, fail, flags, io)
    else if (f) parts = [checkSingle(f, checks)]
    if (expected !== null && f && !(f instanceof ShardedFile)) await checkHash(f, expected, flags, io, checks, fail)
    else if (expected !== null) checks.push({ name: 'sha256', status: 'warn', detail: 'not checked: the file did not open', expected })
    if (flags.full && errors.length === 0) await checkData(parts, flags, io, checks, fail)
  } finally {
    await f?.close()
  }

  const ok = errors.length === 0
  // Details name tensors, shards and paths: the text shows their invisible and bidirectional
  // characters escaped, newlines too (a check is one line: a name cannot forge another); --json
  // keeps the strings as stored, for programs.
  // Each problem once, in the report on stdout; stderr is for the command's own failures.
  if (flags.json) {
    io.stdout.write(`${JSON.stringify({ source: redactUrl(src), ok, checks }, null, 2)}\n`)
  } else {
    const shown = flags.quiet ? checks.filter((c) => c.status === 'fail') : checks
    const width = Math.max(0, ...shown.map((c) => c.name.length))
    for (const c of shown) io.stdout.write(`${c.status === 'fail' ? 'FAIL' : c.status.padEnd(4)}  ${c.name.padEnd(width)}  ${escapeInvisible(c.detail)}\n`)
    const warnings = checks.filter((c) => c.status === 'warn').length
    if (!flags.quiet) {
      io.stdout.write(ok ? `verified ${escapeInvisible(redactUrl(src))}: ${checks.length - warnings} checks passed${warnings ? `, ${warnings} ${warnings === 1 ? 'warning' : 'warnings'}` : ''}\n`
        : `verify failed: ${escapeInvisible(redactUrl(src))}\n`)
    }
  }
  return ok ? 0 : 1
}

/**
 * The --sha256 value as 64 lowercase hex digits (a `sha256:` prefix, as in an LFS pointer's oid
 * line, is allowed); anything else is a usage error.
 * @param {string} text
 */
function expectedHash(text) {
  const hex = text.trim().replace(/^sha256:/i, '')
  if (!/^[0-9a-f]{64}$/i.test(hex))
    throw usageError(`--sha256 takes the file's SHA-256 as 64 hex digits (the Hub's LFS oid), got ${JSON.stringify(text)}`)
  return hex.toLowerCase()
}

/**
 * The whole file's SHA-256 against `expected`, streamed through the core.
 * @param {SafetensorsFile} f @param {string} expected @param {Flags} flags @param {import('./common.js').Io} io
 * @param {Check[]} checks @param {(name: string, error: unknown, label?: string) => void} fail
 */
async function checkHash(f, expected, flags, io, checks, fail) {
  const bar = progressBar(io, flags, 'sha256')
  let actual
  try {
    actual = await f.digest(undefined, { onProgress: ({ loaded, total }) => bar.update(loaded, total) })
  } catch (error) {
    if (!(error instanceof SafetensorsError)) throw error
    fail('sha256', error)
    Object.assign(/** @type {Check} */ (checks.at(-1)), { expected })
    return
  } finally {
    bar.done()
  }
  if (actual === expected) {
    checks.push({ name: 'sha256', status: 'ok', detail: `the file's SHA-256 is ${actual}, as expected`, expected, actual })
    return
  }
  fail('sha256', new SafetensorsError('DigestMismatch', `the file's SHA-256 is ${actual}, not the expected ${expected}: ` +
    'these are not the bytes the hash is of (a corrupt or partial download, another revision, or the hash of another file)'))
  Object.assign(/** @type {Check} */ (checks.at(-1)), { expected, actual })
}

/** Which check an opening error belongs to. @param {SafetensorsError} error */
function checkOf(error) {
  if (HEADER_CODES.has(error.code)) return 'header'
  if (LAYOUT_CODES.has(error.code)) return 'layout'
  return error.code === 'InvalidIndex' || error.code === 'UnsafeShardPath' ? 'index' : 'open'
}

/**
 * A single file that opened: its header and layout passed every rule.
 * @param {SafetensorsFile} f @param {Check[]} checks @returns {Part}
 */
function checkSingle(f, checks) {
  const names = f.names
  const entries = f.metadata === null ? 'no metadata' : `${formatCount(Object.keys(f.metadata).length)} metadata ${Object.keys(f.metadata).length === 1 ? 'entry' : 'entries'}`
  checks.push({ name: 'header', status: 'ok', detail: `${formatCount(f.headerLength)} bytes of JSON: ${formatCount(names.length)} tensors, ${entries}` })
  const data = f.byteLength - 8 - f.headerLength
  checks.push({ name: 'layout', status: 'ok', detail: `${formatCount(names.length)} tensors tile the ${formatCount(data)}-byte data buffer exactly, to the end of the file` })
  return { file: f, names, label: '' }
}

/**
 * The index opened; checks every shard (headers read as `inspect` reads them: bounded
 * concurrency, a progress bar), then that the index and the shards agree.
 * @param {ShardedFile} f @param {Check[]} checks
 * @param {(name: string, error: unknown, label?: string) => void} fail
 * @param {Flags} flags @param {import('./common.js').Io} io
 * @returns {Promise<Part[]>}
 */
async function checkSharded(f, checks, fail, flags, io) {
  const paths = f.shards
  checks.push({ name: 'index', status: 'ok', detail: `${formatCount(f.names.length)} tensors in ${formatCount(paths.length)} ${paths.length === 1 ? 'shard' : 'shards'}` })
  const bar = progressBar(io, flags, 'shard headers', 'count')
  let failures
  try {
    failures = await loadShardHeaders(f, bar, true)
  } finally {
    bar.done()
  }
  const failed = new Map(failures.map((x) => [x.shard, x.error]))
  /** @type {Part[]} */
  const parts = []
  let headerBytes = 0
  let fileBytes = 0
  for (const path of paths) {
    const error = failed.get(path)
    if (error) {
      fail(checkOf(error), error, path)
      continue
    }
    const file = await f.shard(path)  // loaded: no request
    headerBytes += file.headerLength
    fileBytes += file.byteLength
    parts.push({ file, names: [], label: path })
  }
  if (parts.length === paths.length) {
    checks.push({ name: 'header', status: 'ok', detail: `${formatCount(paths.length)} shard headers, ${formatCount(headerBytes)} bytes of JSON` })
    checks.push({ name: 'layout', status: 'ok', detail: `every shard's tensors tile its data buffer exactly (${formatCount(fileBytes)} bytes in all)` })
  }
  const problems = indexProblems(f, parts)
  for (const kind of PROBLEM_KINDS) {
    const list = problems[kind.key]
    if (list.length === 0) continue
    fail('index', new SafetensorsError('IndexMismatch', kind.message(list.length) + listSome(list.map(kind.item))))
    const check = /** @type {Check} */ (checks.at(-1))
    check.problems = list
  }
  if (PROBLEM_KINDS.every((k) => problems[k.key].length === 0) && parts.length === paths.length)
    checks.push({ name: 'index', status: 'ok', detail: 'the index and the shard headers name the same tensors' })
  const totalSize = /** @type {any} */ (f.metadata)?.total_size
  if (parts.length === paths.length && typeof totalSize === 'number') {
    const tensorBytes = parts.reduce((n, p) => n + p.names.reduce((m, name) => m + p.file.info(name).byteLength, 0), 0)
    if (tensorBytes !== totalSize)
      checks.push({ name: 'index', status: 'warn', detail: `metadata.total_size is ${formatCount(totalSize)}, the tensors hold ${formatCount(tensorBytes)} bytes` })
  }
  return parts
}

/**
 * @typedef {{ tensor: string | null, shard: string, indexShard?: string }} Problem
 *   tensor: the tensor (null for a shard the numbering implies); shard: where it is (or, for
 *   `missing` and `unused`, the shard that should hold it); indexShard: where the index puts it
 * @typedef {{ missing: Problem[], moved: Problem[], unnamed: Problem[], copied: Problem[],
 *   unused: Problem[] }} Problems
 */

/** The ways an index and its shards disagree, each problem reported once, in this order. */
const PROBLEM_KINDS = /** @type {const} */ ([
  { key: 'missing', message: (/** @type {number} */ n) => `the index names ${n} ${n === 1 ? 'tensor' : 'tensors'} its shard does not hold: `,
    item: (/** @type {Problem} */ p) => `${p.tensor} (in ${p.shard})` },
  { key: 'moved', message: (/** @type {number} */ n) => `the index maps ${n} ${n === 1 ? 'tensor' : 'tensors'} to a shard that does not hold ${n === 1 ? 'it' : 'them'}, while another shard does: `,
    item: (/** @type {Problem} */ p) => `${p.tensor} (the index says ${p.indexShard}, it is in ${p.shard})` },
  { key: 'unnamed', message: (/** @type {number} */ n) => `${n} ${n === 1 ? 'tensor is' : 'tensors are'} in a shard the index does not map ${n === 1 ? 'it' : 'them'} to: `,
    item: (/** @type {Problem} */ p) => `${p.tensor} (in ${p.shard}, not named in the index)` },
  { key: 'copied', message: (/** @type {number} */ n) => `${n} ${n === 1 ? 'tensor is' : 'tensors are'} also in a shard besides the one the index maps ${n === 1 ? 'it' : 'them'} to: `,
    item: (/** @type {Problem} */ p) => `${p.tensor} (in ${p.shard}; the index maps it to ${p.indexShard})` },
  { key: 'unused', message: (/** @type {number} */ n) => `${n} ${n === 1 ? 'shard is' : 'shards are'} missing from the numbering of the shard names: the index maps no tensor to `,
    item: (/** @type {Problem} */ p) => p.shard },
])

/**
 * How the index and the shard headers (of the shards that could be read) disagree:
 * - missing: the index maps a tensor to a shard whose header lacks it (and no shard holds it);
 * - moved: the same, but another shard holds it (one problem, not a missing and an unnamed one);
 * - unnamed: a shard holds a tensor the index does not name;
 * - copied: a shard holds a tensor the index maps to another shard (a second copy);
 * - unused: the shard names say `-of-00005` and no tensor is mapped to shard 3 (numberingGaps).
 * Fills each part's `names` with the index's names its shard holds.
 * @param {ShardedFile} f @param {Part[]} parts
 * @returns {Problems}
 */
function indexProblems(f, parts) {
  const byPath = new Map(parts.map((p) => [p.label, { part: p, held: new Set(p.file.names) }]))
  /** @type {Map<string, string>} where each tensor of a read shard is; the first shard, if several */
  const where = new Map()
  for (const p of parts) for (const n of p.file.names) if (!where.has(n)) where.set(n, p.label)
  /** @type {Problems} */
  const problems = { missing: [], moved: [], unnamed: [], copied: [], unused: numberingGaps(f.shards) }
  const indexed = new Set()
  for (const name of f.names) {
    indexed.add(name)
    const shard = f.shardOf(name)
    const s = byPath.get(shard)
    if (!s) continue  // an unreadable shard: reported as such
    if (s.held.has(name)) {
      s.part.names.push(name)
      continue
    }
    const found = where.get(name)
    if (found === undefined) problems.missing.push({ tensor: name, shard })
    else problems.moved.push({ tensor: name, shard: found, indexShard: shard })
  }
  for (const p of parts) {
    for (const name of p.file.names) {
      if (!indexed.has(name)) {
        problems.unnamed.push({ tensor: name, shard: p.label })
        continue
      }
      const shard = f.shardOf(name)
      const home = byPath.get(shard)
      // Not a problem of its own: in its shard; its shard unreadable (reported as such); or the
      // shard a moved tensor was found in (reported as moved).
      if (shard === p.label || !home || (!home.held.has(name) && where.get(name) === p.label)) continue
      problems.copied.push({ tensor: name, shard: p.label, indexShard: shard })
    }
  }
  return problems
}

/**
 * Shards the numbering of the shard names implies but the index never maps a tensor to: names
 * `<prefix><i>-of-<n><suffix>` (zero-padded like model-00001-of-00005, or not like model-1-of-61)
 * with some i from 1 to n absent. Each set of names sharing prefix, n and suffix is one numbering.
 * @param {string[]} paths
 * @returns {Problem[]}
 */
function numberingGaps(paths) {
  /** @type {Map<string, { prefix: string, total: string, suffix: string, seen: Map<number, string> }>} */
  const groups = new Map()
  for (const path of paths) {
    const m = /^(.*?)(\d+)-of-(\d+)(\.[^/]*)$/.exec(path)
    if (!m) continue
    const key = JSON.stringify([m[1], m[3], m[4]])
    let group = groups.get(key)
    if (!group) groups.set(key, (group = { prefix: m[1], total: m[3], suffix: m[4], seen: new Map() }))
    group.seen.set(Number(m[2]), m[2])
  }
  /** @type {Problem[]} */
  const gaps = []
  for (const g of groups.values()) {
    const total = Number(g.total)
    // A count past the shards a set can have is not a numbering (and is not looped over).
    if (!Number.isSafeInteger(total) || total > MAX_NUMBERED_SHARDS || total < g.seen.size) continue
    // Padded when every seen number has one width and some number is written with leading zeros.
    const widths = new Set([...g.seen.values()].map((d) => d.length))
    const padded = widths.size === 1 && [...g.seen].some(([n, d]) => String(n).length < d.length)
    const width = padded ? [...widths][0] : 0
    for (let i = 1; i <= total; i++) {
      if (!g.seen.has(i)) gaps.push({ tensor: null, shard: `${g.prefix}${String(i).padStart(width, '0')}-of-${g.total}${g.suffix}` })
    }
  }
  return gaps
}

/** Shard numberings up to this count are checked for gaps (real sets: a few hundred). */
const MAX_NUMBERED_SHARDS = 100_000

/** @param {string[]} items */
function listSome(items) {
  return items.length <= 5 ? items.join(', ') : `${items.slice(0, 5).join(', ')} and ${items.length - 5} more`
}

/**
 * Reads every tensor's bytes (small ones together, big ones in pieces) and counts NaN and Inf.
 * @param {Part[]} parts @param {Flags} flags @param {import('./common.js').Io} io
 * @param {Check[]} checks @param {(name: string, error: unknown, label?: string) => void} fail
 */
async function checkData(parts, flags, io, checks, fail) {
  const total = parts.reduce((n, p) => n + p.names.reduce((m, name) => m + p.file.info(name).byteLength, 0), 0)
  const count = parts.reduce((n, p) => n + p.names.length, 0)
  const bar = progressBar(io, flags, 'reading')
  let done = 0
  /** @type {Map<string, { nan: number, inf: number }>} */
  const nonFinite = new Map()
  /** @param {import('../node.js').Tensor} t @param {string} name @param {number} expected */
  const examine = (t, name, expected) => {
    if (t.byteLength !== expected)
      throw new SafetensorsError('ShortRead', `read ${t.byteLength} bytes of ${name}, expected ${expected}`, { tensor: name })
    if (t.dtype.startsWith('F6')) return  // no value form: the bytes were read, that is all
    const s = t.stats({ bins: 0 })
    if (s.nanCount || s.infCount) {
      const seen = nonFinite.get(name) ?? { nan: 0, inf: 0 }
      nonFinite.set(name, { nan: seen.nan + s.nanCount, inf: seen.inf + s.infCount })
    }
  }
  try {
    for (const part of parts) {
      /** @type {string[]} */
      let batch = []
      let batchBytes = 0
      const flush = async () => {
        if (!batch.length) return
        const base = done
        const map = await part.file.load(batch, { onProgress: (p) => bar.update(base + p.loaded, total) })
        try {
          for (const [name, t] of map) examine(t, name, part.file.info(name).byteLength)
        } finally {
          for (const t of map.values()) t.dispose()
        }
        done = base + batchBytes
        batch = []
        batchBytes = 0
      }
      for (const name of part.names) {
        const info = part.file.info(name)
        // Sub-byte dtypes are read whole: a piece would have to start and end on byte boundaries.
        if (info.byteLength <= PIECE_BYTES || DTYPE_BITS[info.dtype] % 8 !== 0) {
          if (batchBytes + info.byteLength > PIECE_BYTES) await flush()
          batch.push(name)
          batchBytes += info.byteLength
          continue
        }
        await flush()
        for (const spec of pieceSpecs(info.shape.map(Number), DTYPE_BITS[info.dtype] / 8, PIECE_BYTES)) {
          const base = done
          const t = await part.file.slice(name, spec, { onProgress: (p) => bar.update(base + p.loaded, total) })
          try {
            examine(t, name, pieceBytes(spec, info.shape.map(Number), DTYPE_BITS[info.dtype] / 8))
            done = base + t.byteLength
          } finally {
            t.dispose()
          }
        }
      }
      await flush()
    }
  } catch (error) {
    bar.done()
    if (!(error instanceof SafetensorsError)) throw error
    fail('data', error)
    return
  }
  bar.done()
  checks.push({ name: 'data', status: 'ok', detail: `read all ${formatCount(done)} bytes (${formatBytes(done)}) of ${formatCount(count)} tensors` })
  if (nonFinite.size === 0) {
    checks.push({ name: 'values', status: 'ok', detail: `no NaN or Inf in ${formatCount(count)} tensors` })
    return
  }
  const list = [...nonFinite].map(([name, c]) => `${name} (${[c.nan ? `${formatCount(c.nan)} NaN` : '', c.inf ? `${formatCount(c.inf)} Inf` : ''].filter(Boolean).join(', ')})`)
  const detail = `${nonFinite.size} ${nonFinite.size === 1 ? 'tensor holds' : 'tensors hold'} NaN or Inf: ${listSome(list)}`
  if (flags.finite) fail('values', new SafetensorsError('NonFinite', detail))
  else checks.push({ name: 'values', status: 'warn', detail })
}

/**
 * Slices covering a tensor in row-major order, each at most `limit` bytes: whole steps along the
 * first dimension whose step fits, with single indices for the dimensions before it.
 * @param {number[]} shape @param {number} elementBytes @param {number} limit
 * @returns {Generator<Array<number | [number, number]>>}
 */
export function* pieceSpecs(shape, elementBytes, limit) {
  if (shape.length === 0 || shape.some((d) => d === 0)) {
    yield []
    return
  }
  const inner = shape.map((_, d) => shape.slice(d + 1).reduce((a, b) => a * b, 1) * elementBytes)
  let d = 0
  while (d < shape.length - 1 && inner[d] > limit) d++
  const step = Math.max(1, Math.floor(limit / inner[d]))
  const index = new Array(d).fill(0)
  for (;;) {
    for (let s = 0; s < shape[d]; s += step) yield [...index, [s, Math.min(shape[d], s + step)]]
    let k = d - 1
    while (k >= 0 && ++index[k] === shape[k]) index[k--] = 0
    if (k < 0) return
  }
}

/** @param {Array<number | [number, number]>} spec @param {number[]} shape @param {number} elementBytes */
function pieceBytes(spec, shape, elementBytes) {
  let n = elementBytes
  shape.forEach((dim, i) => {
    const s = spec[i]
    n *= s === undefined ? dim : Array.isArray(s) ? s[1] - s[0] : 1
  })
  return n
}

/**
 * `verify <src> [--full] [--finite] [--sha256 HEX] [--json]`: runs every check and exits 1 when one
 * fails.
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
import { describeFailure, errorJson, openOptions, parseCommand, progressBar, usageError } from './common.js'
import { DTYPE_BITS } from '../dtypes.js'
import { escapeInvisible, formatBytes, formatCount } from '../format.js'

export const usage = 'verify <file|url|index.json> [--full] [--finite] [--sha256 HEX] [--json]   check everything; exit 1 on any problem'

const options = /** @type {const} */ ({
  full: { type: 'boolean' },
  finite: { type: 'boolean' },
  sha256: { type: 'string' },
})

/** Tensors are read in pieces of at most this many bytes (and small ones together up to it). */
export const PIECE_BYTES = 64 * 1024 * 1024

/** Codes of rules 1-5 in docs/format.md, "Reader rules" (the header); 6-10 are the layout's. */
const HEADER_CODES = new Set(['HeaderTooSmall', 'HeaderTooLarge', 'InvalidHeaderLength', 'InvalidHeader', 'InvalidHeaderDeserialization'])
const LAYOUT_CODES = new Set(['InvalidOffset', 'ValidationOverflow', 'MisalignedSlice', 'TensorInvalidInfo', 'MetadataIncompleteBuffer'])

/**
 * @typedef {import('../node.js').SafetensorsFile} SafetensorsFile
 * @typedef {{ name: string, status: 'ok' | 'warn' | 'fail', detail: string,
 *   error?: ReturnType<typeof errorJson>, expected?: string, actual?: string }} Check
 *   expected, actual: the sha256 check's hashes (actual: absent when the file could not be read)
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
    if (f instanceof ShardedFile) parts = await checkSharded(f, checks, fail)
    else if (f) parts = [checkSingle(f, checks)]
    if (expected !== null && f && !(f instanceof ShardedFile)) await checkHash(f, expected, flags, io, checks, fail)
    else if (expected !== null) checks.push({ name: 'sha256', status: 'warn', detail: 'not checked: the file did not open', expected })
    if (flags.full && errors.length === 0) await checkData(parts, flags, io, checks, fail)
  } finally {
    await f?.close()
  }

  const ok = errors.length === 0
  // Details name tensors and shards: the text shows their invisible and bidirectional characters
  // escaped; --json keeps the strings as stored, for programs.
  if (flags.json) {
    io.stdout.write(`${JSON.stringify({ source: src, ok, checks }, null, 2)}\n`)
  } else if (!flags.quiet) {
    const width = Math.max(...checks.map((c) => c.name.length))
    for (const c of checks) io.stdout.write(`${c.status === 'fail' ? 'FAIL' : c.status.padEnd(4)}  ${c.name.padEnd(width)}  ${escapeInvisible(c.detail, { multiline: true })}\n`)
    const warnings = checks.filter((c) => c.status === 'warn').length
    io.stdout.write(ok ? `verified ${escapeInvisible(src)}: ${checks.length - warnings} checks passed${warnings ? `, ${warnings} ${warnings === 1 ? 'warning' : 'warnings'}` : ''}\n`
      : `verify failed: ${escapeInvisible(src)}\n`)
  }
  for (const error of errors) io.stderr.write(`error: ${escapeInvisible(describeFailure(error), { multiline: true })}\n`)
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
 * The index opened; checks every shard, then that index and shards agree.
 * @param {ShardedFile} f @param {Check[]} checks
 * @param {(name: string, error: unknown, label?: string) => void} fail
 * @returns {Promise<Part[]>}
 */
async function checkSharded(f, checks, fail) {
  const paths = f.shards
  checks.push({ name: 'index', status: 'ok', detail: `${formatCount(f.names.length)} tensors in ${formatCount(paths.length)} ${paths.length === 1 ? 'shard' : 'shards'}` })
  const opened = await Promise.all(paths.map((path) => f.shard(path).then((file) => ({ path, file }), (error) => ({ path, error }))))
  /** @type {Part[]} */
  const parts = []
  let headerBytes = 0
  let fileBytes = 0
  for (const s of opened) {
    if ('error' in s) {
      if (!(s.error instanceof SafetensorsError)) throw s.error
      fail(checkOf(s.error), s.error, s.path)
      continue
    }
    headerBytes += s.file.headerLength
    fileBytes += s.file.byteLength
    parts.push({ file: s.file, names: [], label: s.path })
  }
  if (parts.length === paths.length) {
    checks.push({ name: 'header', status: 'ok', detail: `${formatCount(paths.length)} shard headers, ${formatCount(headerBytes)} bytes of JSON` })
    checks.push({ name: 'layout', status: 'ok', detail: `every shard's tensors tile its data buffer exactly (${formatCount(fileBytes)} bytes in all)` })
  }
  // Index and shards must name the same tensors, each in the shard the index says.
  const byPath = new Map(parts.map((p) => [p.label, p]))
  const missing = []
  for (const name of f.names) {
    const part = byPath.get(f.shardOf(name))
    if (!part) continue
    try {
      part.file.info(name)
      part.names.push(name)
    } catch {
      missing.push(`${name} (in ${part.label})`)
    }
  }
  const indexed = new Set(f.names)
  const extra = parts.flatMap((p) => p.file.names.filter((n) => !indexed.has(n) || f.shardOf(n) !== p.label).map((n) => `${n} (in ${p.label})`))
  if (missing.length) fail('index', new SafetensorsError('IndexMismatch', `the index names ${missing.length} ${missing.length === 1 ? 'tensor' : 'tensors'} its shard does not hold: ${listSome(missing)}`))
  if (extra.length) fail('index', new SafetensorsError('IndexMismatch', `${extra.length} ${extra.length === 1 ? 'tensor is' : 'tensors are'} in a shard the index does not map it to: ${listSome(extra)}`))
  if (!missing.length && !extra.length && parts.length === paths.length)
    checks.push({ name: 'index', status: 'ok', detail: 'the index and the shard headers name the same tensors' })
  const totalSize = /** @type {any} */ (f.metadata)?.total_size
  if (parts.length === paths.length && typeof totalSize === 'number') {
    const tensorBytes = parts.reduce((n, p) => n + p.names.reduce((m, name) => m + p.file.info(name).byteLength, 0), 0)
    if (tensorBytes !== totalSize)
      checks.push({ name: 'index', status: 'warn', detail: `metadata.total_size is ${formatCount(totalSize)}, the tensors hold ${formatCount(tensorBytes)} bytes` })
  }
  return parts
}

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

/**
 * `inspect <src> [--json] [--tree [--depth N]]`: the header of a file (a path, a URL, or a
 * sharded set's `*.index.json`), as a readable summary, as JSON, or as a tree of name prefixes.
 * Quantized weights are shown by their logical names, with scheme and logical shape, their
 * parts indented under them (the tree: the weight alone); parameter counts are logical.
 *
 * A sharded set whose shards cannot all be read (not there, unreachable, not safetensors) is
 * shown as far as the index and the readable shards go (names, shards, total_size), each
 * unreadable shard is named on stderr with its error, and the exit code is 2 (PARTIAL).
 */
import { CONFIG_NOTE, CONFIG_OPTIONS, CONFIG_OPTION_HELP, describeFailure, errorJson, openForCli, parseCommand, shapeJson, usageError } from './common.js'
import { overview } from '../overview.js'
import { buildTree, foldRepeats, sortByName, treeJson, treeText } from '../name-tree.js'
import { escapeInvisible, formatBytes, formatCount, formatMetadataValue, formatShape } from '../format.js'
import { elementCount } from '../dtypes.js'
import { redactUrl } from '../redact.js'

export const usage = 'inspect <file|url|index.json> [--json] [--tree [--depth N] [--unfold]] [--sort size|name|offset] [--config FILE]   sizes, parameters, metadata, tensors, quantized weights'

/** Exit code of an inspect that could read the index but not every shard. */
export const PARTIAL = 2

/** What --help adds. */
export const help = `--sort orders the table and --json's tensors: size, largest first; name, with numbers in numeric
order (layers.2 before layers.10); offset, the file's order (a sharded set: shard by shard, in the
index's order). A quantized weight's parts stay together under it.

${CONFIG_NOTE}

exit codes: 0 done; 1 a failure (the error on stderr); ${PARTIAL} a usage mistake, or a
sharded set whose index was read but not every shard (missing, unreachable, not safetensors): what
the index gives is shown (names, shards, total_size from its metadata, and what the readable shards
hold), then each shard that failed and why, on stderr`

/** Unreadable shards listed one per line up to this many; past it, a few and a count by code. */
const LISTED_FAILURES = 10

export const options = /** @type {const} */ ({
  tree: { type: 'boolean', },
  depth: { type: 'string' },
  unfold: { type: 'boolean' },
  sort: { type: 'string' },
  ...CONFIG_OPTIONS,
})

/** A line each for --help. @type {import('./common.js').OptionHelp[]} */
export const optionHelp = [
  ['--tree', 'the names as a tree of dotted prefixes, with counts and sizes'],
  ['--depth N', 'with --tree: the levels below N folded'],
  ['--unfold', 'with --tree: each numbered group, not alike runs once (layers.{0..60})'],
  ['--sort size|name|offset', 'the order of the tensors: largest first, by name, by place (default)'],
  ...CONFIG_OPTION_HELP,
]

/** The orders --sort takes. */
const SORTS = ['size', 'name', 'offset']

/**
 * @typedef {import('./common.js').Row} Row
 * @typedef {import('../overview.js').Overview} Overview
 * @typedef {import('../node.js').SafetensorsFile} SafetensorsFile
 * @typedef {import('../node.js').ShardedFile} ShardedFile
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
 * @param {import('./common.js').CommonFlags & { tree: boolean, depth?: string, sort?: string, unfold?: boolean }} flags
 * @param {import('./common.js').Io} io
 */
async function run(args, flags, io) {
  if (args.length !== 1) throw usageError('inspect takes one file, URL or index')
  const depth = flags.depth === undefined ? undefined : Number(flags.depth)
  if (depth !== undefined && !(Number.isInteger(depth) && depth >= 1)) throw usageError('--depth takes a whole number from 1')
  const sort = flags.sort
  if (sort !== undefined && !SORTS.includes(sort)) throw usageError(`--sort takes size, name or offset, got ${JSON.stringify(sort)}`)
  if (sort !== undefined && flags.tree) throw usageError('--sort orders the table of tensors; --tree is ordered by name')
  if (flags.unfold && !flags.tree) throw usageError('--unfold goes with --tree')
  /** Runs of alike numbered groups once (foldRepeats), unless --unfold. @param {import('../name-tree.js').TreeNode} t */
  const folded = (t) => (flags.unfold ? t : foldRepeats(t))
  const { file, close, config, failures } = await openForCli(args[0], flags, io, { partial: true })
  // The source as shown: a URL's password and query values masked.
  const source = redactUrl(args[0])
  try {
    if (failures.length > 0) {
      const sharded = /** @type {ShardedFile} */ (file)
      const p = await partialOverview(sharded, failures)
      if (sort) p.rows = sortedPartialRows(p, sort)
      if (flags.tree) {
        const tree = folded(buildTree(p.rows.map((r) => r.info ? Object.assign({}, r.info, { name: r.name, elements: elementCount(r.info.shape) })
          : { name: r.name, dtype: 'unread', shape: /** @type {any[]} */ (['?']), byteLength: NaN, elements: NaN })))
        const total = p.totalSize === null ? '' : `; the index's total_size ${formatBytes(p.totalSize)}`
        const label = `${source} (${p.unread} of ${p.shards.length} shards unread${total})`
        io.stdout.write(flags.json ? `${JSON.stringify(treeJson(tree), null, 2)}\n` : `${treeText(tree, { label, depth })}\n`)
      } else {
        io.stdout.write(flags.json ? `${JSON.stringify(partialJson(p), null, 2)}\n` : `${partialText(p, source)}\n`)
      }
      io.stderr.write(`${failureLines(failures, p.shards.length).map((l) => escapeInvisible(l, { multiline: true })).join('\n')}\n`)
      return PARTIAL
    }
    const o = await overview(file)
    if (sort) o.rows = sortedRows(o, sort)
    // Text output shows names and metadata with invisible and bidirectional characters escaped
    // (escapeInvisible: `\u{202E}`); --json keeps them as stored, since a JSON reader wants the
    // real string (JSON.stringify escapes only quotes, backslashes and C0 controls).
    if (flags.tree) {
      const tree = folded(buildTree(logicalRows(o)))
      io.stdout.write(flags.json ? `${JSON.stringify(treeJson(tree), null, 2)}\n` : `${treeText(tree, { label: source, depth })}\n`)
    } else if (flags.json) {
      io.stdout.write(`${JSON.stringify(inspectJson(o), null, 2)}\n`)
    } else {
      io.stdout.write(`${inspectText(o, source, config)}\n`)
    }
    // An inconsistent quantized checkpoint: listed as stored, then the error (exit 1).
    if (o.quantizedError) {
      io.stderr.write(`error: ${escapeInvisible(describeFailure(o.quantizedError), { multiline: true })}\n`)
      return 1
    }
  } finally {
    await close()
  }
  return 0
}

/**
 * The rows in the order --sort names. A quantized weight's parts stay together under it, the
 * weight placed by its logical name, its parts' bytes together, or its first part's offset;
 * ties keep the file's order.
 * @param {Overview} o @param {string} sort size, name or offset
 * @returns {Row[]}
 */
export function sortedRows(o, sort) {
  const shardIndex = new Map((o.shards ?? []).map((s, i) => [s.path, i]))
  const bytes = partBytes(o)
  /** @type {Map<string, { name: string, size: number, shard: number, offset: number, order: number, rows: Row[] }>} */
  const units = new Map()
  for (const r of o.rows) {
    const key = r.part ? `\u0000${r.part.weight}` : r.name
    const unit = units.get(key)
    if (unit) {
      unit.rows.push(r)
      continue
    }
    units.set(key, { name: r.part ? r.part.weight : r.name, size: r.part ? bytes.get(r.part.weight) ?? 0 : r.byteLength,
      shard: shardIndex.get(r.shard ?? '') ?? 0, offset: r.byteOffset, order: r.order, rows: [r] })
  }
  const list = [...units.values()]
  const byPlace = (/** @type {typeof list[number]} */ a, /** @type {typeof list[number]} */ b) => a.shard - b.shard || a.offset - b.offset || a.order - b.order
  if (sort === 'size') list.sort((a, b) => b.size - a.size || byPlace(a, b))
  else if (sort === 'name') sortByName(list, (u) => u.name, byPlace)
  else list.sort(byPlace)
  return list.flatMap((u) => u.rows)
}

/**
 * The rows of a partial inspect in the order --sort names (rows of unread shards, whose sizes
 * and offsets are unknown, after the others for size; by shard for offset).
 * @param {Partial} p @param {string} sort
 * @returns {PartialRow[]}
 */
function sortedPartialRows(p, sort) {
  const shardIndex = new Map(p.shards.map((s, i) => [s.path, i]))
  const rows = p.rows.map((r, order) => ({ r, order, shard: shardIndex.get(r.shard) ?? 0 }))
  const byPlace = (/** @type {typeof rows[number]} */ a, /** @type {typeof rows[number]} */ b) =>
    a.shard - b.shard || (a.r.info?.byteOffset ?? 0) - (b.r.info?.byteOffset ?? 0) || a.order - b.order
  if (sort === 'size') rows.sort((a, b) => (b.r.info?.byteLength ?? -1) - (a.r.info?.byteLength ?? -1) || byPlace(a, b))
  else if (sort === 'name') sortByName(rows, (x) => x.r.name, byPlace)
  else rows.sort(byPlace)
  return rows.map((x) => x.r)
}

/**
 * The rows with each quantized weight in place of its parts (where its first part is): its
 * logical name, scheme (as dtype), logical shape and elements, and its parts' bytes together.
 * @param {Overview} o
 * @returns {import('../name-tree.js').NamedTensor[]}
 */
export function logicalRows(o) {
  const byName = new Map(o.quantized.map((q) => [q.name, q]))
  const bytes = partBytes(o)
  const seen = new Set()
  /** @type {import('../name-tree.js').NamedTensor[]} */
  const out = []
  for (const r of o.rows) {
    if (!r.part) out.push(r)
    else if (!seen.has(r.part.weight)) {
      seen.add(r.part.weight)
      const q = /** @type {import('../overview.js').QuantizedWeight} */ (byName.get(r.part.weight))
      out.push({ name: q.name, dtype: q.scheme, shape: q.shape, byteLength: bytes.get(q.name) ?? 0, elements: elementCount(q.shape) })
    }
  }
  return out
}

/** Bytes of each quantized weight's parts together. @param {Overview} o */
function partBytes(o) {
  /** @type {Map<string, number>} */
  const bytes = new Map()
  for (const r of o.rows) if (r.part) bytes.set(r.part.weight, (bytes.get(r.part.weight) ?? 0) + r.byteLength)
  return bytes
}

/**
 * The JSON form: { byteLength, headerLength, metadata, tensors: [...] }. A sharded set adds
 * `shards` ({ path, byteLength, headerLength, metadata } each) and each tensor's `shard` (its
 * byteOffset is within that shard); its byteLength and headerLength are sums and its metadata is
 * the index's. A checkpoint with quantized weights adds `quantized` (f.quantized(): { name,
 * scheme, shape, parts, details } each) and `parameters` ({ total, byDtype, byScheme }, logical);
 * one whose quantized weights are inconsistent adds `quantizedError` ({ code, message, tensor,
 * offset }) instead of `quantized`. `tensors` lists every stored tensor, parts included.
 * @param {Overview} o
 */
export function inspectJson(o) {
  const tensors = o.rows.map((r) => ({
    name: r.name, dtype: r.dtype, shape: shapeJson(r.shape), byteOffset: r.byteOffset, byteLength: r.byteLength,
    ...(r.shard === null ? {} : { shard: r.shard }),
  }))
  const quantized = o.quantizedError ? { parameters: o.parameters, quantizedError: errorJson(o.quantizedError) }
    : o.quantized.length ? {
      parameters: o.parameters,
      quantized: o.quantized.map((q) => ({ name: q.name, scheme: q.scheme, shape: q.shape, parts: q.parts, details: q.details })),
    } : {}
  if (!o.shards) return { byteLength: o.byteLength, headerLength: o.headerLength, metadata: o.metadata, tensors, ...quantized }
  return {
    byteLength: o.byteLength, headerLength: o.headerLength, metadata: o.metadata,
    shards: o.shards.map((s) => ({ path: s.path, byteLength: s.byteLength, headerLength: s.headerLength, metadata: s.metadata })),
    tensors, ...quantized,
  }
}

/** Cells longer than this do not widen their column (they push the rest of their own line). */
const COLUMN_CAP = 100

/**
 * @param {string[][]} rows
 * @param {boolean[]} rightAlign
 */
function table(rows, rightAlign) {
  // A loop, not Math.max(...column): a spread of 130,000 values overflows the stack.
  const widths = rows[0].map(() => 0)
  for (const r of rows) r.forEach((cell, c) => { if (cell.length <= COLUMN_CAP) widths[c] = Math.max(widths[c], cell.length) })
  return rows.map((r) => r.map((cell, c) => {
    if (c === r.length - 1 && !rightAlign[c]) return cell
    return rightAlign[c] ? cell.padStart(widths[c]) : cell.padEnd(widths[c])
  }).join('  ')).join('\n')
}

/**
 * @param {Record<string, unknown>} metadata
 * @param {string} indent
 */
function metadataLines(metadata, indent) {
  return Object.entries(metadata).map(([k, v]) => {
    const text = escapeInvisible(typeof v === 'string' ? formatMetadataValue(v) : JSON.stringify(v, null, 2), { multiline: true })
    return `${indent}${escapeInvisible(k)}: ${text.split('\n').join(`\n${indent}    `)}`
  })
}

/**
 * @param {Overview} o
 * @param {string} label what was opened
 * @param {string | null} [config] the config.json read for the quantized weights, if any
 */
export function inspectText(o, label, config = null) {
  const { shards, rows, byteLength, headerLength } = o
  const { total, byDtype, byScheme = {} } = o.parameters
  const lines = []
  lines.push(`file        ${escapeInvisible(label)}${shards ? ` (sharded: ${shards.length} ${shards.length === 1 ? 'shard' : 'shards'})` : ''}`)
  lines.push(`size        ${formatBytes(byteLength)} (${formatCount(byteLength)} bytes)`)
  lines.push(`header      ${formatCount(headerLength)} bytes${shards ? ' (all shards)' : ''}`)
  lines.push(`tensors     ${formatCount(rows.length)}`)
  // Quantized weights count their logical elements, under their scheme; their parts count zero.
  const parts = [...Object.entries(byScheme), ...Object.entries(byDtype)].filter(([, n]) => n > 0 || !Object.keys(byScheme).length)
    .sort((a, b) => b[1] - a[1]).map(([d, n]) => `${d} ${formatCount(n)}`)
  lines.push(`parameters  ${formatCount(total)}${parts.length ? ` (${parts.join(', ')})` : ''}`)
  if (o.quantized.length) {
    /** @type {Record<string, number>} */
    const schemes = {}
    for (const q of o.quantized) schemes[q.scheme] = (schemes[q.scheme] ?? 0) + 1
    const list = Object.entries(schemes).sort((a, b) => b[1] - a[1]).map(([k, n]) => `${k} ${formatCount(n)}`).join(', ')
    lines.push(`quantized   ${formatCount(o.quantized.length)} ${o.quantized.length === 1 ? 'weight' : 'weights'} (${list})` +
      `${config ? `, config ${escapeInvisible(config)}` : ''}`)
  } else if (o.quantizedError) {
    lines.push('quantized   unreadable (see the error below): tensors listed as stored')
  }
  const metadata = o.metadata
  if (metadata === null) {
    lines.push('metadata    none')
  } else {
    const n = Object.keys(metadata).length
    lines.push(`metadata    ${n} ${n === 1 ? 'entry' : 'entries'}${shards ? ' (index)' : ''}`)
    lines.push(...metadataLines(metadata, '  '))
  }
  if (shards) {
    // Shards written by one save share their __metadata__: shown once when so.
    const same = o.shardMetadata !== null || shards.every((s) => s.metadata === null)
    if (o.shardMetadata) {
      lines.push('shard metadata (the same in every shard)')
      lines.push(...metadataLines(o.shardMetadata, '  '))
    }
    lines.push('')
    const shardRows = [['shard', 'size', 'header', 'tensors']]
    for (const s of shards)
      shardRows.push([escapeInvisible(s.path), formatBytes(s.byteLength), `${formatCount(s.headerLength)} B`, formatCount(s.tensors)])
    lines.push(table(shardRows, [false, true, true, true]))
    if (!same) {
      for (const s of shards) {
        if (!s.metadata) continue
        lines.push(`metadata of ${escapeInvisible(s.path)}`)
        lines.push(...metadataLines(s.metadata, '  '))
      }
    }
  }
  if (rows.length) {
    lines.push('')
    // A quantized weight's row (its scheme in the dtype column, its logical shape, its parts'
    // bytes together) stands where its first part is, its parts indented under it with their roles.
    const quantized = o.quantized.length > 0
    const head = ['name', 'dtype', 'shape', 'size', 'offset', ...(shards ? ['shard'] : []), ...(quantized ? ['part'] : [])]
    const cells = [head]
    /** @param {Row} r @param {string} indent @param {string[]} role */
    const stored = (r, indent, role) => [indent + escapeInvisible(r.name), r.dtype, formatShape(r.shape), formatBytes(r.byteLength),
      String(r.byteOffset), ...(shards ? [escapeInvisible(r.shard ?? '')] : []), ...role]
    const byName = new Map(o.quantized.map((q) => [q.name, q]))
    const partsOf = new Map(o.quantized.map((q) => [q.name, /** @type {Row[]} */ ([])]))
    for (const r of rows) if (r.part) partsOf.get(r.part.weight)?.push(r)
    const bytes = partBytes(o)
    for (const r of rows) {
      if (!r.part) {
        cells.push(stored(r, '', quantized ? [''] : []))
        continue
      }
      const list = /** @type {Row[]} */ (partsOf.get(r.part.weight))
      if (list[0] !== r) continue
      const q = /** @type {import('../overview.js').QuantizedWeight} */ (byName.get(r.part.weight))
      cells.push([escapeInvisible(q.name), q.scheme, formatShape(q.shape), formatBytes(bytes.get(q.name) ?? 0), '', ...(shards ? [''] : []), ''])
      for (const p of list) cells.push(stored(p, '  ', [/** @type {{ role: string }} */ (p.part).role]))
    }
    lines.push(table(cells, [false, false, false, true, true, false, false]))
  }
  return lines.join('\n')
}

/**
 * @typedef {{ name: string, shard: string, info: import('../node.js').TensorInfo | null }} PartialRow
 *   info: from the shard's header, or null when the shard could not be read
 * @typedef {{ path: string, tensors: number, file: SafetensorsFile | null,
 *   error: import('./common.js').ShardFailure['error'] | null }} PartialShard
 * @typedef {{ metadata: Record<string, unknown> | null, totalSize: number | null, shards: PartialShard[],
 *   rows: PartialRow[], unread: number }} Partial
 */

/**
 * What a sharded set gives when some shards cannot be read: the index's names, shards and
 * metadata, and the tensors' entries from the shards that could be read.
 * @param {ShardedFile} f
 * @param {import('./common.js').ShardFailure[]} failures
 * @returns {Promise<Partial>}
 */
async function partialOverview(f, failures) {
  const failed = new Map(failures.map((x) => [x.shard, x.error]))
  /** @type {Map<string, PartialShard>} */
  const shards = new Map()
  for (const path of f.shards) {
    const error = failed.get(path) ?? null
    shards.set(path, { path, tensors: 0, error, file: error ? null : await f.shard(path) })  // loaded: no request
  }
  const rows = f.names.map((name) => {
    const shard = f.shardOf(name)
    const s = /** @type {PartialShard} */ (shards.get(shard))
    s.tensors++
    let info = null
    try {
      info = s.file?.info(name) ?? null
    } catch {
      info = null  // the shard lacks it: verify reports that
    }
    return { name, shard, info }
  })
  const total = /** @type {any} */ (f.metadata)?.total_size
  return {
    metadata: f.metadata, totalSize: typeof total === 'number' && Number.isSafeInteger(total) && total >= 0 ? total : null,
    shards: [...shards.values()], rows, unread: failures.length,
  }
}

/**
 * The --json form of a partial inspect: `partial: true`, the index's `metadata` and `totalSize`
 * (its total_size, or null), `shards` ({ path, tensors } plus byteLength, headerLength and
 * metadata when read, else `error`: { code, message, tensor, offset }) and `tensors` ({ name,
 * shard } plus dtype, shape, byteOffset, byteLength from a readable shard).
 * @param {Partial} p
 */
export function partialJson(p) {
  return {
    partial: true, metadata: p.metadata, totalSize: p.totalSize,
    shards: p.shards.map((s) => (s.file
      ? { path: s.path, tensors: s.tensors, byteLength: s.file.byteLength, headerLength: s.file.headerLength, metadata: s.file.metadata }
      : { path: s.path, tensors: s.tensors, error: errorJson(s.error) })),
    tensors: p.rows.map((r) => (r.info
      ? { name: r.name, shard: r.shard, dtype: r.info.dtype, shape: shapeJson(r.info.shape), byteOffset: r.info.byteOffset, byteLength: r.info.byteLength }
      : { name: r.name, shard: r.shard })),
  }
}

/**
 * The text form of a partial inspect: the summary the index gives, the shards (size and header
 * of those read), the tensors (entries of those in read shards).
 * @param {Partial} p @param {string} label
 */
export function partialText(p, label) {
  const n = p.shards.length
  const lines = []
  lines.push(`file        ${escapeInvisible(label)} (sharded: ${n} ${n === 1 ? 'shard' : 'shards'}, ${p.unread} unreadable)`)
  lines.push(`size        ${p.totalSize === null ? 'unknown (the index has no total_size)' : `${formatBytes(p.totalSize)} (${formatCount(p.totalSize)} bytes of tensors, the index's total_size)`}`)
  lines.push(`tensors     ${formatCount(p.rows.length)} (from the index)`)
  if (p.metadata === null) {
    lines.push('metadata    none')
  } else {
    const count = Object.keys(p.metadata).length
    lines.push(`metadata    ${count} ${count === 1 ? 'entry' : 'entries'} (index)`)
    lines.push(...metadataLines(p.metadata, '  '))
  }
  lines.push('')
  const shardRows = [['shard', 'tensors', 'size', 'header', '']]
  for (const s of p.shards) {
    shardRows.push([escapeInvisible(s.path), formatCount(s.tensors), ...(s.file
      ? [formatBytes(s.file.byteLength), `${formatCount(s.file.headerLength)} B`, '']
      : ['?', '?', `unreadable (${/** @type {any} */ (s.error).code})`])])
  }
  lines.push(table(shardRows, [false, true, true, true, false]).split('\n').map((l) => l.trimEnd()).join('\n'))
  if (p.rows.length) {
    lines.push('')
    const cells = [['name', 'dtype', 'shape', 'size', 'shard']]
    for (const r of p.rows) {
      cells.push([escapeInvisible(r.name), ...(r.info ? [r.info.dtype, formatShape(r.info.shape), formatBytes(r.info.byteLength)] : ['?', '?', '?']),
        escapeInvisible(r.shard)])
    }
    lines.push(table(cells, [false, false, false, true, false]))
  }
  return lines.join('\n')
}

/**
 * The stderr lines of a partial inspect: what happened, then each unreadable shard and why (a
 * few and a count by error code when there are many).
 * @param {import('./common.js').ShardFailure[]} failures @param {number} total shards in the index
 */
export function failureLines(failures, total) {
  const lines = [`error: ${failures.length} of ${total} ${total === 1 ? 'shard' : 'shards'} could not be read; shown is what the ` +
    'index gives (and the shards that could be read):']
  const listed = failures.length <= LISTED_FAILURES ? failures : failures.slice(0, LISTED_FAILURES / 2)
  for (const { shard, error } of listed) lines.push(`  ${shard}: ${describeFailure(error)}`)
  if (listed.length < failures.length) {
    /** @type {Map<string, number>} */
    const codes = new Map()
    for (const { error } of failures.slice(listed.length)) codes.set(error.code, (codes.get(error.code) ?? 0) + 1)
    lines.push(`  and ${failures.length - listed.length} more: ${[...codes].sort((a, b) => b[1] - a[1]).map(([code, k]) => `${code} ${formatCount(k)}`).join(', ')}`)
  }
  return lines
}

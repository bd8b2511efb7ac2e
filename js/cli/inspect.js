/**
 * `inspect <src> [--json] [--tree [--depth N]]`: the header of a file (a path, a URL, or a
 * sharded set's `*.index.json`), as a readable summary, as JSON, or as a tree of name prefixes.
 * Quantized weights are shown by their logical names, with scheme and logical shape, their
 * parts indented under them (the tree: the weight alone); parameter counts are logical.
 */
import { CONFIG_OPTIONS, describeFailure, errorJson, openForCli, parseCommand, shapeJson, usageError } from './common.js'
import { overview } from '../overview.js'
import { buildTree, treeJson, treeText } from '../name-tree.js'
import { escapeInvisible, formatBytes, formatCount, formatMetadataValue, formatShape } from '../format.js'
import { elementCount } from '../dtypes.js'

export const usage = 'inspect <file|url|index.json> [--json] [--tree [--depth N]] [--config FILE]   sizes, parameters, metadata, tensors, quantized weights'

const options = /** @type {const} */ ({
  tree: { type: 'boolean', },
  depth: { type: 'string' },
  ...CONFIG_OPTIONS,
})

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
 * @param {import('./common.js').CommonFlags & { tree: boolean, depth?: string }} flags
 * @param {import('./common.js').Io} io
 */
async function run(args, flags, io) {
  if (args.length !== 1) throw usageError('inspect takes one file, URL or index')
  const depth = flags.depth === undefined ? undefined : Number(flags.depth)
  if (depth !== undefined && !(Number.isInteger(depth) && depth >= 1)) throw usageError('--depth takes a whole number from 1')
  const { file, close, config } = await openForCli(args[0], flags, io)
  try {
    const o = await overview(file)
    // Text output shows names and metadata with invisible and bidirectional characters escaped
    // (escapeInvisible: `\u{202E}`); --json keeps them as stored, since a JSON reader wants the
    // real string (JSON.stringify escapes only quotes, backslashes and C0 controls).
    if (flags.tree) {
      const tree = buildTree(logicalRows(o))
      io.stdout.write(flags.json ? `${JSON.stringify(treeJson(tree), null, 2)}\n` : `${treeText(tree, { label: args[0], depth })}\n`)
    } else if (flags.json) {
      io.stdout.write(`${JSON.stringify(inspectJson(o), null, 2)}\n`)
    } else {
      io.stdout.write(`${inspectText(o, args[0], config)}\n`)
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

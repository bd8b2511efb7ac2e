/**
 * `inspect <src> [--json] [--tree [--depth N]]`: the header of a file (a path, a URL, or a
 * sharded set's `*.index.json`), as a readable summary, as JSON, or as a tree of name prefixes.
 */
import { openForCli, parseCommand, shapeJson, usageError } from './common.js'
import { overview } from '../overview.js'
import { buildTree, treeJson, treeText } from '../name-tree.js'
import { escapeInvisible, formatBytes, formatCount, formatMetadataValue, formatShape } from '../format.js'

export const usage = 'inspect <file|url|index.json> [--json] [--tree [--depth N]]   sizes, parameters, metadata, tensors'

const options = /** @type {const} */ ({
  tree: { type: 'boolean', },
  depth: { type: 'string' },
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
  const { file, close } = await openForCli(args[0], flags, io)
  try {
    const o = await overview(file)
    const { rows } = o
    // Text output shows names and metadata with invisible and bidirectional characters escaped
    // (escapeInvisible: `\u{202E}`); --json keeps them as stored, since a JSON reader wants the
    // real string (JSON.stringify escapes only quotes, backslashes and C0 controls).
    if (flags.tree) {
      const tree = buildTree(rows)
      io.stdout.write(flags.json ? `${JSON.stringify(treeJson(tree), null, 2)}\n` : `${treeText(tree, { label: args[0], depth })}\n`)
    } else if (flags.json) {
      io.stdout.write(`${JSON.stringify(inspectJson(o), null, 2)}\n`)
    } else {
      io.stdout.write(`${inspectText(o, args[0])}\n`)
    }
  } finally {
    await close()
  }
  return 0
}

/**
 * The JSON form: { byteLength, headerLength, metadata, tensors: [...] }. A sharded set adds
 * `shards` ({ path, byteLength, headerLength, metadata } each) and each tensor's `shard` (its
 * byteOffset is within that shard); its byteLength and headerLength are sums and its metadata is
 * the index's.
 * @param {Overview} o
 */
export function inspectJson(o) {
  const tensors = o.rows.map((r) => ({
    name: r.name, dtype: r.dtype, shape: shapeJson(r.shape), byteOffset: r.byteOffset, byteLength: r.byteLength,
    ...(r.shard === null ? {} : { shard: r.shard }),
  }))
  if (!o.shards) return { byteLength: o.byteLength, headerLength: o.headerLength, metadata: o.metadata, tensors }
  return {
    byteLength: o.byteLength, headerLength: o.headerLength, metadata: o.metadata,
    shards: o.shards.map((s) => ({ path: s.path, byteLength: s.byteLength, headerLength: s.headerLength, metadata: s.metadata })),
    tensors,
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
 */
export function inspectText(o, label) {
  const { shards, rows, byteLength, headerLength } = o
  const { total, byDtype } = o.parameters
  const lines = []
  lines.push(`file        ${escapeInvisible(label)}${shards ? ` (sharded: ${shards.length} ${shards.length === 1 ? 'shard' : 'shards'})` : ''}`)
  lines.push(`size        ${formatBytes(byteLength)} (${formatCount(byteLength)} bytes)`)
  lines.push(`header      ${formatCount(headerLength)} bytes${shards ? ' (all shards)' : ''}`)
  lines.push(`tensors     ${formatCount(rows.length)}`)
  const parts = Object.entries(byDtype).sort((a, b) => b[1] - a[1]).map(([d, n]) => `${d} ${formatCount(n)}`)
  lines.push(`parameters  ${formatCount(total)}${parts.length ? ` (${parts.join(', ')})` : ''}`)
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
    const head = ['name', 'dtype', 'shape', 'size', 'offset', ...(shards ? ['shard'] : [])]
    const cells = [head]
    for (const r of rows)
      cells.push([escapeInvisible(r.name), r.dtype, formatShape(r.shape), formatBytes(r.byteLength), String(r.byteOffset), ...(shards ? [escapeInvisible(r.shard ?? '')] : [])])
    lines.push(table(cells, [false, false, false, true, true, false]))
  }
  return lines.join('\n')
}

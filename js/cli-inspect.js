/**
 * `inspect <src> [--json]`: the header of a file, as a readable summary or as JSON.
 */
import { formatBytes, formatCount, formatMetadataValue, formatShape } from './format.js'

/**
 * The JSON form (DESIGN.md): { byteLength, headerLength, metadata, tensors: [...] }.
 * @param {import('./file.js').SafetensorsFile} f
 */
export function inspectJson(f) {
  return {
    byteLength: f.byteLength,
    headerLength: f.headerLength,
    metadata: f.metadata,
    tensors: f.names.map((name) => {
      const i = f.info(name)
      return { name, dtype: i.dtype, shape: i.shape.map((d) => (typeof d === 'bigint' ? d.toString() : d)), byteOffset: i.byteOffset, byteLength: i.byteLength }
    }),
  }
}

/**
 * @param {string[][]} rows
 * @param {boolean[]} rightAlign
 */
function table(rows, rightAlign) {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)))
  return rows.map((r) => r.map((cell, c) => {
    if (c === r.length - 1 && !rightAlign[c]) return cell
    return rightAlign[c] ? cell.padStart(widths[c]) : cell.padEnd(widths[c])
  }).join('  ')).join('\n')
}

/**
 * @param {import('./file.js').SafetensorsFile} f
 * @param {string} label what was opened
 */
export function inspectText(f, label) {
  const { total, byDtype } = f.parameterCount()
  const lines = []
  lines.push(`file        ${label}`)
  lines.push(`size        ${formatBytes(f.byteLength)} (${formatCount(f.byteLength)} bytes)`)
  lines.push(`header      ${formatCount(f.headerLength)} bytes`)
  lines.push(`tensors     ${formatCount(f.names.length)}`)
  const parts = Object.entries(byDtype).sort((a, b) => b[1] - a[1]).map(([d, n]) => `${d} ${formatCount(n)}`)
  lines.push(`parameters  ${formatCount(total)}${parts.length ? ` (${parts.join(', ')})` : ''}`)
  if (f.metadata === null) {
    lines.push('metadata    none')
  } else {
    lines.push(`metadata    ${Object.keys(f.metadata).length} ${Object.keys(f.metadata).length === 1 ? 'entry' : 'entries'}`)
    for (const [k, v] of Object.entries(f.metadata)) {
      const shown = formatMetadataValue(v).split('\n').join('\n      ')
      lines.push(`  ${k}: ${shown}`)
    }
  }
  if (f.names.length) {
    lines.push('')
    const rows = [['name', 'dtype', 'shape', 'size', 'offset']]
    for (const name of f.names) {
      const i = f.info(name)
      rows.push([name, i.dtype, formatShape(i.shape), formatBytes(i.byteLength), String(i.byteOffset)])
    }
    lines.push(table(rows, [false, false, false, true, true]))
  }
  return lines.join('\n')
}

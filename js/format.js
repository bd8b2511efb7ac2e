/**
 * Text formatting shared by the CLI and the inspector: sizes, counts, shapes.
 */

/** @param {number} n */
export function formatCount(n) {
  return n.toLocaleString('en-US')
}

/** @param {number} bytes */
export function formatBytes(bytes) {
  if (bytes < 1000) return `${bytes} B`
  const units = ['kB', 'MB', 'GB', 'TB', 'PB']
  let value = bytes
  let unit = -1
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000
    unit++
  }
  return `${value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1) : value.toFixed(2)} ${units[unit]}`
}

/** @param {ArrayLike<number | bigint>} shape */
export function formatShape(shape) {
  return `[${Array.from(shape, String).join(', ')}]`
}

/**
 * A metadata value for display: JSON-looking strings pretty-printed, others as they are.
 * @param {string} value
 */
export function formatMetadataValue(value) {
  const t = value.trim()
  if ((t.startsWith('{') && t.endsWith('}')) || (t.startsWith('[') && t.endsWith(']'))) {
    try {
      return JSON.stringify(JSON.parse(t), null, 2)
    } catch {
      // not JSON after all
    }
  }
  return value
}

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

/**
 * A tensor value in a few characters: 4 significant digits, exponent form when very large or
 * small, NaN / Inf / -Inf spelt out.
 * @param {number} x
 */
export function formatValue(x) {
  if (Number.isNaN(x)) return 'NaN'
  if (!Number.isFinite(x)) return x > 0 ? 'Inf' : '-Inf'
  if (x === 0) return '0'
  const a = Math.abs(x)
  if (a >= 1e6 || a < 1e-3) return x.toExponential(3).replace(/\.?0+e/, 'e')
  if (Number.isInteger(x)) return String(x)
  return String(Number(x.toPrecision(4)))
}

/** `part` as a percentage of `whole`: '0%', '<0.01%', '4.50%', '32.7%'. @param {number} part @param {number} whole */
export function formatPercent(part, whole) {
  if (whole === 0 || part === 0) return '0%'
  const p = (100 * part) / whole
  if (p < 0.01) return '<0.01%'
  return `${p < 10 ? p.toFixed(2) : p.toFixed(1)}%`
}

/**
 * Formatting for the page: the helpers the CLI uses too (js/format.js), plus a few for the UI.
 */
export { escapeInvisible, formatBytes, formatCount, formatMetadataValue, formatPercent, formatShape, formatValue } from '../../js/format.js'

/** Elements of a shape (dimensions may be BigInt when a dimension is 0). @param {ArrayLike<number | bigint>} shape */
export function elementCount(shape) {
  let n = 1
  for (const d of Array.from(shape)) n *= Number(d)
  return n
}

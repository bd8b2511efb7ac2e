/**
 * Formatting for the page: the helpers the CLI uses too (js/format.js), plus a few for the UI.
 */
export { escapeInvisible, formatBytes, formatCount, formatMetadataValue, formatPercent, formatShape, formatValue } from '../../js/format.js'

export { elementCount } from '../../js/dtypes.js'

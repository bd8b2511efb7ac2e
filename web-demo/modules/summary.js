/**
 * The file summary: size, header, tensor and parameter counts, parameters by dtype (and by
 * quantization scheme: a quantized weight counts its logical values once, under its scheme),
 * the quantized weights by scheme, metadata (JSON-looking values pretty-printed) and, for a
 * sharded set, its shards. While a sharded set's shard headers are being read, what needs them
 * shows … (the file size from the index's total_size where it has one); once the reading is
 * over with some unread (stopped, or failed), how many were read and that the rest is not counted.
 */
import { el, visible } from './dom.js'
import { escapeInvisible, formatBytes, formatCount, formatMetadataValue, formatPercent } from './format.js'
import { UNKNOWN, schemeBadge } from './table.js'

/** A colour per dtype family, for the parameters-by-dtype bar. */
const DTYPE_COLOURS = /** @type {Record<string, string>} */ ({
  F64: '#5b3cc4', F32: '#3b5bdb', C64: '#7048e8', BF16: '#1c9a8a', F16: '#2f9e44', F8_E4M3: '#e8590c',
  F8_E5M2: '#f08c00', F8_E8M0: '#d9480f', F8_E4M3FNUZ: '#e67700', F8_E5M2FNUZ: '#fab005', F4: '#c2255c',
  F6_E2M3: '#a61e4d', F6_E3M2: '#862e9c', I64: '#495057', I32: '#5c677d', I16: '#748094', I8: '#8d99ae',
  U64: '#495057', U32: '#5c677d', U16: '#748094', U8: '#8d99ae', BOOL: '#adb5bd',
})
/** A colour per quantization scheme, in the same bar. */
const SCHEME_COLOURS = /** @type {Record<string, string>} */ ({
  'fp8-block': '#d9480f', fp8: '#e8590c', int8: '#8d99ae', mxfp4: '#c2255c', nvfp4: '#9c36b5', gptq: '#0c8599', awq: '#2b8a3e',
  'bnb-nf4': '#e67700', 'ct-pack': '#5f3dc4',
})

/** What a count shows that cannot be made (a sharded set's headers not all read, none being read). */
const NOT_COUNTED = '—'

/**
 * @param {HTMLElement} section
 * @param {import('./model.js').Model} model
 */
export function renderSummary(section, model) {
  const sharded = model.kind === 'sharded'
  const headers = model.headers
  const partial = headers !== null && headers !== undefined && !headers.complete
  const read = partial ? `${formatCount(headers.read.size)} of ${formatCount(headers.total)} shard headers read` : ''
  const ended = partial && headers.ended
  const unread = ended ? headers.failed.size ? `${formatCount(headers.failed.size)} could not be read` : 'stopped' : ''
  const total = Number(model.metadata?.total_size)
  const sizeTile = !partial ? [formatBytes(model.byteLength), `${formatCount(model.byteLength)} bytes`]
    : Number.isFinite(total) && total >= 0 ? [formatBytes(total), 'of tensor data, as the index says'] : [UNKNOWN, read]
  const tile = (/** @type {string} */ label, /** @type {string} */ value, /** @type {string} */ sub = '') =>
    el('div', { class: 'tile' }, el('dt', { text: label }), el('dd', {}, el('span', { class: 'tile-value', text: value }), sub ? el('span', { class: 'tile-sub', text: sub }) : null))
  const { total: params, byDtype } = model.parameters
  const byScheme = model.parameters.byScheme ?? {}
  const colour = (/** @type {string} */ d) => (d in byScheme && !(d in byDtype) ? SCHEME_COLOURS[d] : DTYPE_COLOURS[d]) ?? '#868e96'
  const dtypes = [...Object.entries(byDtype), ...Object.entries(byScheme)].filter(([, n]) => n > 0 || params === 0).sort((a, b) => b[1] - a[1])
  const quantized = model.quantized ?? []
  section.replaceChildren(...[
    el('div', { class: 'summary-head' },
      el('h2', { id: 'summary-title', class: 'file-name', title: escapeInvisible(model.label) }, ...visible(model.label)),
      el('span', { class: 'badge', text: sharded ? `sharded · ${model.shards?.length} ${model.source === 'local' ? 'local ' : ''}shards` : model.source === 'local' ? 'local file' : model.source === 'hub' ? 'Hugging Face Hub file' : 'remote file' })),
    el('dl', { class: 'tiles' },
      tile('File size', sizeTile[0], sizeTile[1]),
      ended ? tile('Headers', `${formatCount(headers.read.size)} of ${formatCount(headers.total)}`, `shard headers read; ${unread}`)
        : partial ? tile('Headers', UNKNOWN, read)
        : tile(sharded ? 'Headers' : 'Header', formatBytes(model.headerLength), `${formatCount(model.headerLength)} bytes${sharded ? ' in all' : ''}`),
      tile('Tensors', formatCount(model.stored?.length ?? model.rows.length), quantized.length ? `${formatCount(quantized.length)} quantized ${quantized.length === 1 ? 'weight' : 'weights'}` : ''),
      ended ? tile('Parameters', NOT_COUNTED, `not counted: ${formatCount(headers.total - headers.read.size)} of the shard headers unread`)
        : partial ? tile('Parameters', UNKNOWN, 'counted once every shard header is read') : tile('Parameters', compactCount(params), formatCount(params))),
    dtypes.length ? el('div', { class: 'dtype-breakdown' },
      el('h3', { text: Object.keys(byScheme).length ? 'Parameters by dtype and quantization scheme' : 'Parameters by dtype' }),
      el('div', { class: 'dtype-bar', role: 'img', 'aria-label': dtypes.map(([d, n]) => `${d} ${formatPercent(n, params)}`).join(', ') },
        dtypes.map(([d, n]) => el('span', { style: `flex-grow: ${n}; background: ${colour(d)}`, title: `${d}: ${formatCount(n)}` }))),
      el('ul', { class: 'dtype-legend' }, dtypes.map(([d, n]) => el('li', { class: d in byScheme ? 'legend-scheme' : undefined },
        el('span', { class: 'swatch', style: `background: ${colour(d)}` }),
        d in byScheme ? schemeBadge(d) : el('span', { class: 'mono', text: d }),
        el('span', { class: 'muted', text: `${formatCount(n)} · ${formatPercent(n, params)}` }))))) : null,
    quantized.length || model.config?.from ? quantizationBlock(quantized, model.config) : null,
    metadataBlock(sharded ? 'Index metadata' : 'Metadata', model.metadata),
    sharded ? metadataBlock('Shard metadata (the same in every shard)', model.shardMetadata, true) : null,
    sharded && model.shards ? shardTable(model.shards) : null,
  ].filter((node) => node !== null))
  section.hidden = false
}

/**
 * The quantized weights by scheme, and where the quantization settings came from.
 * @param {NonNullable<import('./model.js').Model['quantized']>} quantized
 * @param {import('./model.js').Model['config'] | undefined} config
 */
function quantizationBlock(quantized, config) {
  /** @type {Map<string, number>} */
  const counts = new Map()
  for (const q of quantized) counts.set(q.scheme, (counts.get(q.scheme) ?? 0) + 1)
  const source = config?.from
    ? config.used ? `Settings from ${config.from}.` : `${config.from} was read; it has no quantization settings that apply.`
    : 'No config.json: settings inferred from the tensors.'
  return el('div', { class: 'quantization' },
    el('h3', { text: 'Quantized weights' }),
    quantized.length
      ? el('ul', { class: 'scheme-list' }, [...counts].map(([scheme, n]) => el('li', {},
        schemeBadge(scheme), el('span', { class: 'muted', text: ` ${formatCount(n)} ${n === 1 ? 'weight' : 'weights'}` }))))
      : el('p', { class: 'muted', text: 'None.' }),
    el('p', { class: 'hint config-source' }, ...visible(source)))
}

/** 1,234,567,890 as "1.23 B". @param {number} n */
function compactCount(n) {
  if (n < 10_000) return formatCount(n)
  const units = [[1e12, 'T'], [1e9, 'B'], [1e6, 'M'], [1e3, 'k']]
  for (const [size, unit] of units) {
    if (n >= /** @type {number} */ (size)) {
      const v = n / /** @type {number} */ (size)
      return `${v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2)} ${unit}`
    }
  }
  return formatCount(n)
}

/**
 * @param {string} title
 * @param {Record<string, unknown> | null} metadata
 * @param {boolean} [hideWhenEmpty]
 */
function metadataBlock(title, metadata, hideWhenEmpty = false) {
  const entries = Object.entries(metadata ?? {})
  if (entries.length === 0 && hideWhenEmpty) return null
  // Open only when it is a few short lines: a long config would push the tensors below the fold.
  const short = entries.length > 0 && entries.length <= 4 &&
    entries.every(([, v]) => typeof v === 'string' && v.length <= 80 && !v.includes('\n') && !/^\s*[[{]/.test(v))
  return el('details', { class: 'metadata', open: short },
    el('summary', {}, el('h3', { text: title }), el('span', { class: 'muted', text: entries.length ? `${entries.length} ${entries.length === 1 ? 'entry' : 'entries'}` : 'none' })),
    entries.length ? el('dl', { class: 'metadata-list' }, entries.map(([key, value]) => {
      const text = typeof value === 'string' ? formatMetadataValue(value) : JSON.stringify(value, null, 2)
      const multiline = text.includes('\n') || text.length > 80
      // Keys and values from the file: invisible and bidirectional characters as marked escapes.
      const shown = visible(text, { multiline: true })
      return el('div', { class: 'metadata-entry' },
        el('dt', { class: 'mono' }, ...visible(key)),
        el('dd', {}, multiline ? el('pre', { class: 'metadata-value', tabindex: 0 }, ...shown) : el('span', { class: 'mono' }, ...shown)))
    })) : el('p', { class: 'muted', text: 'This file has no __metadata__.' }))
}

/** @param {import('./model.js').ShardSummary[]} shards */
function shardTable(shards) {
  return el('details', { class: 'shards', open: shards.length <= 8 },
    el('summary', {}, el('h3', { text: 'Shards' }), el('span', { class: 'muted', text: `${shards.length}` })),
    el('div', { class: 'table-scroll' }, el('table', { class: 'plain-table' },
      el('thead', {}, el('tr', {}, ['file', 'size', 'header', 'tensors'].map((h, i) => el('th', { scope: 'col', class: i ? 'num' : '', text: h })))),
      el('tbody', {}, shards.map((s) => el('tr', {},
        el('td', { class: 'mono' }, ...visible(s.path)),
        el('td', { class: 'num', text: Number.isNaN(s.byteLength) ? UNKNOWN : formatBytes(s.byteLength) }),
        el('td', { class: 'num', text: Number.isNaN(s.headerLength) ? UNKNOWN : formatBytes(s.headerLength) }),
        el('td', { class: 'num', text: formatCount(s.tensors) })))))))
}

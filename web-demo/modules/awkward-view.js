/**
 * Files written by awkward-array's ak.to_safetensors, shown as what they are: the array's type,
 * its form as a tree of nodes (with the buffers each one reads) and its first entries as values.
 * Everything comes from the public API (f.awkward()), which reads only the byte ranges that the
 * first entries need.
 */
import { el } from './dom.js'
import { escapeInvisible } from './format.js'

const FIRST_ENTRIES = 10

/**
 * True when the file's metadata says it holds an awkward array.
 * @param {Record<string, unknown> | null} metadata
 */
export function isAwkward(metadata) {
  return typeof metadata?.form === 'string' && typeof metadata?.length === 'string'
}

/**
 * Fills `section` for an awkward file, or hides it.
 * @param {HTMLElement} section
 * @param {import('../../js/index.js').SafetensorsFile} file
 * @param {AbortSignal} signal
 */
export async function renderAwkward(section, file, signal) {
  const array = await file.awkward()
  try {
    const first = await array.slice(0, FIRST_ENTRIES).toList({ signal })
    const nodes = array.nodes
    section.replaceChildren(
      el('h2', { id: 'awkward-title', text: 'Awkward array' }),
      el('p', {}, el('span', { class: 'muted', text: 'type ' }), el('code', { class: 'awkward-type mono', text: escapeInvisible(array.type) })),
      el('div', { class: 'awkward-columns' },
        el('div', {},
          el('h3', { text: 'Form' }),
          el('ul', { class: 'awkward-form', role: 'tree', 'aria-label': 'Form nodes' }, formNode(nodes, 0))),
        el('div', {},
          el('h3', { text: `First ${Math.min(FIRST_ENTRIES, array.length)} of ${array.length} entries` }),
          el('ol', { class: 'awkward-entries mono', start: '0' },
            first.map((value) => el('li', { text: escapeInvisible(show(value)) }))))))
    section.hidden = false
  } finally {
    array.dispose()
  }
}

/**
 * One form node and its contents, as nested list items.
 * @param {import('../../js/awkward/read.js').AkNode[]} nodes
 * @param {number} i
 * @returns {HTMLElement}
 */
function formNode(nodes, i) {
  const n = nodes[i]
  const details = []
  if (n.primitive) details.push(n.primitive)
  if (n.fields) details.push(`fields: ${n.fields.join(', ')}`)
  if (n.size !== undefined) details.push(`size ${n.size}`)
  const array = n.parameters?.__array__
  if (array) details.push(`__array__: ${array}`)
  const buffers = Object.values(n.buffers ?? {})
  // Form keys, fields and buffer names come from the file's metadata: escaped (js/format.js).
  return el('li', { role: 'treeitem', 'aria-expanded': n.contents.length ? 'true' : null },
    el('span', { class: 'awkward-class', text: escapeInvisible(n.class) }),
    n.form_key ? el('span', { class: 'muted mono', text: ` ${escapeInvisible(n.form_key)}` }) : null,
    details.length ? el('span', { class: 'muted', text: ` · ${escapeInvisible(details.join(' · '))}` }) : null,
    buffers.length ? el('span', { class: 'awkward-buffers mono', text: ` [${escapeInvisible(buffers.join(', '))}]` }) : null,
    n.contents.length ? el('ul', { role: 'group' }, n.contents.map((c) => formNode(nodes, c))) : null)
}

/** A value as ak.to_list shows it, on one line. @param {unknown} value */
function show(value) {
  return JSON.stringify(value, (_, v) => (typeof v === 'bigint' ? v.toString() : v instanceof Uint8Array ? `b'${Array.from(v, (b) => String.fromCharCode(b)).join('')}'` : v))
}

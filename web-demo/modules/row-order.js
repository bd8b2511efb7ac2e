/**
 * The tensor table's orders and filters, made for 500,000 rows: no row objects are sorted and no
 * comparator sees a row. A column's order is a Uint32Array of row positions, computed once per
 * column (and again when shard headers fill in values): each row's value becomes a dense rank
 * (the distinct values alone are compared, and there are few: dtypes, shapes, sizes, shards),
 * and a counting sort by rank places the positions in one linear pass, ties in row order; names
 * are sorted as positions by js/name-tree.js's sortByName. A filter is one tight loop over
 * lower-cased names.
 *
 * Rows whose value is not known yet (`pending`: their shard's header has not arrived) come last
 * in either direction, in row order.
 */
import { nameKeys, sortByName } from '../../js/name-tree.js'

/**
 * @typedef {import('./model.js').Row} Row
 * @typedef {{ order: Uint32Array, known: number }} ColumnOrder  row positions ascending, ties in
 *   row order; the `known` first are the rows whose value is known
 */

const collator = new Intl.Collator('en', { numeric: true })

/**
 * Sort keys of rows' names made beforehand (prepareNameOrder), by rows array: a row's name never
 * changes, and a new set of rows is a new array.
 * @type {WeakMap<Row[], import('../../js/name-tree.js').NameKeys | null>}
 */
const PREPARED = new WeakMap()
/** @type {WeakSet<Row[]>} rows whose keys are no longer wanted (forgetNameOrder): never made again */
const FORGOTTEN = new WeakSet()

/**
 * Makes the sort keys of the rows' names a block at a time, awaiting `pause()` between blocks,
 * so that sorting them by name later (columnOrder) costs only the sort: about half of it at
 * 500,000 names. A page calls it once the rows are all in, while it waits for input.
 * @param {Row[]} rows @param {() => Promise<void>} pause may throw to stop
 */
export async function prepareNameOrder(rows, pause) {
  if (PREPARED.has(rows) || FORGOTTEN.has(rows)) return
  // Not even the first block in the caller's task: that one shows the rows.
  await pause()
  if (FORGOTTEN.has(rows)) return
  const keyed = await nameKeys(rows.map((r) => r.name), () => {
    if (FORGOTTEN.has(rows)) throw new Error('the keys are no longer wanted')
    return pause()
  })
  if (!FORGOTTEN.has(rows)) PREPARED.set(rows, keyed)
}

/**
 * Drops the keys prepareNameOrder made or is making for these rows (about 100 bytes a name) and
 * makes none again: when other rows are shown, or once the table holds their order by name.
 * @param {Row[]} rows
 */
export function forgetNameOrder(rows) {
  PREPARED.delete(rows)
  FORGOTTEN.add(rows)
}

/**
 * The keys prepareNameOrder made for these rows (null: the names have none), undefined if it has
 * not. @param {Row[]} rows
 */
export const preparedNameKeys = (rows) => PREPARED.get(rows)

/** Columns whose values come from the shard headers (unknown while a row is pending). */
export const FROM_HEADERS = new Set(['dtype', 'shape', 'byteLength'])

/**
 * The rows in ascending order of a column (name, dtype, shape, byteLength, byteOffset, shard), as
 * the table used to compare rows: dtype and shard names in the collator's order, shapes by their
 * number of dimensions then of elements, offsets in file (or index) order.
 * @param {Row[]} rows @param {string} key
 * @returns {ColumnOrder}
 */
export function columnOrder(rows, key) {
  const n = rows.length
  if (key === 'name') {
    const positions = Array.from({ length: n }, (_, i) => i)
    sortByName(positions, (i) => rows[i].name, undefined, PREPARED.get(rows))
    return { order: Uint32Array.from(positions), known: n }
  }
  if (key === 'byteOffset') {
    // Rows come in file (index) order: then that order is theirs, with no table of 500,000 values.
    let ascending = true
    for (let i = 1; i < n && ascending; i++) ascending = rows[i - 1].order < rows[i].order
    if (ascending) return { order: identity(n), known: n }
    return byRank(denseRanks(rows, (r) => r.order, (a, b) => a - b))
  }
  if (key === 'shard') return byRank(denseRanks(rows, (r) => r.shard ?? '', (a, b) => collator.compare(a, b)))
  if (key === 'dtype') return byRank(denseRanks(rows, (r) => (r.pending ? undefined : r.dtype), (a, b) => collator.compare(a, b)))
  if (key === 'byteLength') return byRank(denseRanks(rows, (r) => (r.pending ? undefined : r.byteLength), (a, b) => a - b))
  if (key === 'shape') {
    // Dimensions then elements as one number where it is exact (any real tensor), else pairs.
    const exact = rows.every((r) => r.pending || (r.shape.length < 4096 && r.elements < 2 ** 40))
    return byRank(exact ? denseRanks(rows, (r) => (r.pending ? undefined : r.shape.length * 2 ** 40 + r.elements), (a, b) => a - b) : shapeRanks(rows))
  }
  throw new Error(`no column ${key}`)
}

/**
 * Row positions by rank, ties in position order, rows ranked -1 (unknown) last: a counting sort,
 * linear in the rows and the ranks.
 * @param {{ rank: Int32Array, ranks: number }} ranked each row's rank (0 to ranks - 1, or -1)
 * @returns {ColumnOrder}
 */
function byRank({ rank, ranks }) {
  const n = rank.length
  // starts[r + 1]: rows of rank r; the unknown ones (rank -1) are counted at starts[0].
  const starts = new Uint32Array(ranks + 2)
  for (let i = 0; i < n; i++) starts[rank[i] + 1]++
  const unknown = starts[0]
  starts[0] = 0
  for (let r = 1; r < starts.length; r++) starts[r] += starts[r - 1]
  const known = n - unknown
  const order = new Uint32Array(n)
  let u = known
  for (let i = 0; i < n; i++) {
    const r = rank[i]
    if (r < 0) order[u++] = i
    else order[starts[r]++] = i
  }
  return { order, known }
}

/**
 * Each row's value as its rank among the distinct values (0 the least), -1 where `valueOf` gives
 * undefined: only the distinct values are sorted.
 * @template V
 * @param {Row[]} rows @param {(r: Row) => V | undefined} valueOf @param {(a: V, b: V) => number} compare
 * @returns {{ rank: Int32Array, ranks: number }}
 */
function denseRanks(rows, valueOf, compare) {
  /** @type {Map<V, number>} */
  const ids = new Map()
  const rank = new Int32Array(rows.length)
  /** @type {V | undefined} */
  let last
  let lastId = -1
  for (let i = 0; i < rows.length; i++) {
    const v = valueOf(rows[i])
    if (v === undefined) {
      rank[i] = -1
      continue
    }
    // Neighbours often share a value (a layer's tensors, a shard): no lookup then.
    if (v !== last || lastId < 0) {
      let id = ids.get(v)
      if (id === undefined) ids.set(v, (id = ids.size))
      last = v
      lastId = id
    }
    rank[i] = lastId
  }
  // Ids in order of first sight, turned into ranks: only the distinct values are sorted.
  const distinct = [...ids.keys()]
  const toRank = new Int32Array(distinct.length)
  distinct.map((v, id) => ({ v, id })).sort((a, b) => compare(a.v, b.v)).forEach(({ id }, r) => { toRank[id] = r })
  for (let i = 0; i < rank.length; i++) if (rank[i] >= 0) rank[i] = toRank[rank[i]]
  return { rank, ranks: distinct.length }
}

/**
 * Ranks of (dimensions, elements) pairs, by dimensions then elements; -1 while pending.
 * @param {Row[]} rows @returns {{ rank: Int32Array, ranks: number }}
 */
function shapeRanks(rows) {
  /** @type {Map<number, Map<number, number>>} */
  const pairs = new Map()
  for (const r of rows) {
    if (r.pending) continue
    let inner = pairs.get(r.shape.length)
    if (!inner) pairs.set(r.shape.length, (inner = new Map()))
    inner.set(r.elements, 0)
  }
  let ranks = 0
  for (const dims of [...pairs.keys()].sort((a, b) => a - b)) {
    const inner = /** @type {Map<number, number>} */ (pairs.get(dims))
    for (const elements of [...inner.keys()].sort((a, b) => a - b)) inner.set(elements, ranks++)
  }
  const rank = new Int32Array(rows.length)
  rows.forEach((r, i) => { rank[i] = r.pending ? -1 : /** @type {number} */ (pairs.get(r.shape.length)?.get(r.elements)) })
  return { rank, ranks }
}

/**
 * 0, 1, ... n - 1, by a loop: a typed array's `from` with a map function costs tens of
 * milliseconds at 500,000 rows. @param {number} n
 */
function identity(n) {
  const out = new Uint32Array(n)
  for (let i = 0; i < n; i++) out[i] = i
  return out
}

/**
 * The positions to show, in display order: the column's order (its known rows reversed when
 * descending, the unknown ones after them either way) without the rows `mask` leaves out.
 * @param {ColumnOrder} column @param {number} direction 1 ascending, -1 descending
 * @param {Uint8Array | null} mask 1 at the `order` of each row to show (null: all)
 * @param {Uint32Array} orders each row's `order`, by position
 * @returns {Uint32Array}
 */
export function visibleOrder(column, direction, mask, orders) {
  const { order, known } = column
  if (!mask && direction > 0) return order
  const n = order.length
  let count = n
  if (mask) {
    count = 0
    for (let k = 0; k < n; k++) count += mask[orders[order[k]]]
  }
  const out = new Uint32Array(count)
  let at = 0
  const take = (/** @type {number} */ k) => {
    const i = order[k]
    if (!mask || mask[orders[i]] === 1) out[at++] = i
  }
  if (direction > 0) for (let k = 0; k < known; k++) take(k)
  else for (let k = known - 1; k >= 0; k--) take(k)
  for (let k = known; k < n; k++) take(k)
  return out
}

/**
 * The names, shards and dtypes of the rows lower-cased for the filter, once per file (a name
 * already lower-case is kept as it is, not copied); a quantized weight's name carries its parts'
 * names. `size` is the length of a mask by `order`.
 * @typedef {{ names: string[], shards: string[], size: number }} Lowered
 * @param {Row[]} rows
 * @returns {Lowered}
 */
export function lowered(rows) {
  let size = 0
  /** @type {Map<string, string>} */
  const shardNames = new Map()
  const names = new Array(rows.length)
  const shards = new Array(rows.length)
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i]
    size = Math.max(size, r.order + 1)
    names[i] = (r.quant ? [r.name, ...r.quant.parts.map((p) => p.name)].join('\n') : r.name).toLowerCase()
    const shard = r.shard ?? ''
    let lower = shardNames.get(shard)
    if (lower === undefined) shardNames.set(shard, (lower = shard.toLowerCase()))
    shards[i] = lower
  }
  return { names, shards, size }
}

/**
 * The rows that match every word of a filter, as a mask by `order`: a word matches a name or
 * shard containing it, or a dtype equal to it, case aside (a quantized weight's name counts its
 * parts' names; its dtype is its scheme's name). Dtypes are read from the rows as they are now
 * (a pending row has none yet).
 * @param {Row[]} rows @param {Lowered} lower @param {string[]} words lower-case, at least one
 * @returns {{ mask: Uint8Array, count: number }}
 */
export function matching(rows, lower, words) {
  const mask = new Uint8Array(lower.size)
  const upper = words.map((w) => w.toUpperCase())
  const { names, shards } = lower
  let count = 0
  for (let i = 0; i < rows.length; i++) {
    const name = names[i]
    const shard = shards[i]
    const dtype = rows[i].dtype
    let all = true
    for (let w = 0; w < words.length && all; w++) {
      const word = words[w]
      all = name.includes(word) || (shard !== '' && shard.includes(word)) ||
        (dtype.length === word.length && (dtype === upper[w] || dtype.toLowerCase() === word))
    }
    if (all) {
      mask[rows[i].order] = 1
      count++
    }
  }
  return { mask, count }
}

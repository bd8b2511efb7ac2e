/**
 * Finding where names sit in a long list of rows without a table of every name: at 500,000
 * names, making a Map of them and looking each up cost about a microsecond an operation on the
 * machines this was measured on, which was most of the time spent marking or folding the parts
 * of a set's quantized weights.
 */

/** How far past the last row found a name is looked for first. */
const NEAR_ROWS = 16
/** Binary searches in the sorted runs of rows (one per run a lookup) before a table is made. */
const RUN_SEARCHES = 1 << 16

/**
 * A function from a name to its row's position in `rows`, -1 if none. Callers ask in row order
 * for names that sit together once names are sorted (a quantized weight's parts, listed in the
 * order detection met them; an index is written with its keys sorted), so a name is first looked
 * for just past the last one found; then by a binary search in each ascending run of names (a
 * shard's rows, a file's rows of one dtype); and only once those searches add up, in a table of
 * every name. `rows` must not change while the function is in use.
 * @param {readonly { name: string }[]} rows
 * @returns {(name: string) => number}
 */
export function nameFinder(rows) {
  let cursor = 0
  /** @type {number[] | null} where each ascending run of names starts */
  let runs = null
  let searches = 0
  /** @type {Map<string, number> | null} */
  let byName = null
  return (name) => {
    for (let i = Math.max(0, cursor - 2); i < Math.min(rows.length, cursor + NEAR_ROWS); i++) {
      if (rows[i].name === name) return (cursor = i)
    }
    if (!byName && searches + (runs?.length ?? 0) <= RUN_SEARCHES) {
      runs ??= ascendingRuns(rows)
      searches += runs.length
      for (let r = 0; r < runs.length; r++) {
        const end = r + 1 < runs.length ? runs[r + 1] : rows.length
        const at = lowerBound(runs[r], end, (i) => rows[i].name, name)
        if (at < end && rows[at].name === name) return (cursor = at)
      }
      // Each run is strictly ascending as JS compares strings, the order the search used.
      return -1
    }
    byName ??= new Map(rows.map((r, i) => [r.name, i]))
    const i = byName.get(name) ?? -1
    if (i >= 0) cursor = i
    return i
  }
}

/**
 * The first position in [lo, hi) whose name is not below `name` as JS compares strings, hi if
 * none: a binary search over names ascending there, each reached through `nameAt`.
 * @param {number} lo @param {number} hi @param {(i: number) => string} nameAt @param {string} name
 * @returns {number}
 */
export function lowerBound(lo, hi, nameAt, name) {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (nameAt(mid) < name) lo = mid + 1
    else hi = mid
  }
  return lo
}

/** @param {readonly { name: string }[]} rows @returns {number[]} where each run of strictly ascending names starts */
function ascendingRuns(rows) {
  const starts = rows.length ? [0] : []
  for (let i = 1; i < rows.length; i++) if (!(rows[i - 1].name < rows[i].name)) starts.push(i)
  return starts
}

/**
 * The comparison of two tensors' values as `diff` (js/compare.js) documents it, worked out plainly
 * for the tests, from nothing in js/: over the elements where both values are finite, the max
 * and mean |b - a| and ||b - a|| / ||a||, in float64; NaN equals NaN; a value NaN or infinite
 * on one side only is counted apart. Used by the CLI's diff tests and the inspector's compare card.
 * @param {ArrayLike<number>} a @param {ArrayLike<number>} b the values, element by element
 * @returns {{ maxAbsDiff: number, meanAbsDiff: number, relativeChange: number, changedValues: number,
 *   nonFiniteChanges: number }} changedValues: elements that differ (NaN against NaN does not)
 */
export function expectedChange(a, b) {
  let max = 0
  let sum = 0
  let count = 0
  let d2 = 0
  let a2 = 0
  let changed = 0
  let nonFinite = 0
  for (let i = 0; i < a.length; i++) {
    const [x, y] = [a[i], b[i]]
    if (Number.isNaN(x) && Number.isNaN(y)) continue
    if (x !== y) changed++
    if (!Number.isFinite(x) || !Number.isFinite(y)) {
      if (x !== y) nonFinite++
      continue
    }
    count++
    sum += Math.abs(y - x)
    max = Math.max(max, Math.abs(y - x))
    d2 += (y - x) ** 2
    a2 += x ** 2
  }
  return { maxAbsDiff: max, meanAbsDiff: sum / count, relativeChange: Math.sqrt(d2) / Math.sqrt(a2), changedValues: changed, nonFiniteChanges: nonFinite }
}

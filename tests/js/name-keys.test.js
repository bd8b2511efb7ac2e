// Sort keys of names made beforehand, a block of names at a time (js/name-tree.js nameKeys), as
// the inspector makes them while the page is idle (web-demo/modules/row-order.js
// prepareNameOrder): sorting with them gives the order sorting without them gives, they are
// used (keys of other names give another order, in sortByName and in the table's sort), left as
// they were, and made in blocks.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { nameKeys, sortByName } from '../../js/name-tree.js'
import { columnOrder, forgetNameOrder, prepareNameOrder, preparedNameKeys } from '../../web-demo/modules/row-order.js'

/** `count` names over three blocks of keys, upper case and leading zeros among them. @param {number} count */
function names(count) {
  return Array.from({ length: count }, (_, k) =>
    `model.${k % 5 === 0 ? 'Layers' : 'layers'}.${k % 7 === 0 ? '0' : ''}${(k * 7919) % 251}.mlp.experts.${k % 384}.${['gate', 'up', 'down'][k % 3]}_proj.weight`)
}

const noPause = () => Promise.resolve()

test('nameKeys: made a block at a time, they sort as sortByName sorts without them, and are used and kept', async () => {
  const all = names(40_000)
  let pauses = 0
  const keyed = await nameKeys(all, async () => { pauses++ })
  assert.ok(keyed, 'these names have keys')
  assert.ok(pauses >= 2, `${pauses} pauses: more than one block`)
  assert.equal(keyed.folded, true, 'upper case and leading zeros were folded')
  const keys = keyed.keys.slice()
  const positions = () => all.map((_, i) => i)
  const plain = sortByName(positions(), (i) => all[i])
  assert.deepEqual(sortByName(positions(), (i) => all[i], undefined, keyed), plain)
  assert.deepEqual(keyed.keys, keys, 'the keys are left as they were')
  assert.deepEqual(sortByName(positions(), (i) => all[i], undefined, keyed), plain, 'and serve again')
  // Keys of the names reversed give the reversed names' order: the keys decide.
  const reversed = await nameKeys(all.slice().reverse(), noPause)
  const other = sortByName(positions(), (i) => all[i], undefined, reversed)
  assert.notDeepEqual(other, plain)
  // Names without keys: null, and sortByName then orders by the collator.
  const odd = [...names(100), 'layers.é.w']
  assert.equal(await nameKeys(odd, noPause), null)
  assert.deepEqual(sortByName(odd.map((_, i) => i), (i) => odd[i], undefined, null), sortByName(odd.map((_, i) => i), (i) => odd[i]))
})

test('prepareNameOrder: a table sorted by name with prepared keys as without; a pause that throws stops it', async () => {
  const rows = /** @type {import('../../web-demo/modules/model.js').Row[]} */ (names(20_000).map((name, order) => ({
    name, dtype: 'BF16', shape: [2], byteOffset: order, byteLength: 4, elements: 2, shard: null, order, part: null,
  })))
  const copy = rows.slice()
  await assert.rejects(prepareNameOrder(copy, () => Promise.reject(new Error('other rows'))), /other rows/)
  assert.equal(preparedNameKeys(copy), undefined)
  await prepareNameOrder(rows, noPause)
  const prepared = preparedNameKeys(rows)
  assert.ok(prepared)
  const plain = columnOrder(copy, 'name')
  assert.deepEqual(columnOrder(rows, 'name'), plain)
  // The table's sort takes them: keys of other names (the rows' reversed) give another order.
  const reversed = /** @type {import('../../js/name-tree.js').NameKeys} */ (await nameKeys(rows.map((r) => r.name).reverse(), noPause))
  prepared.keys = reversed.keys
  assert.notDeepEqual(columnOrder(rows, 'name'), plain)
  // Forgotten (other rows are shown), they are gone and the sort makes its own.
  forgetNameOrder(rows)
  assert.equal(preparedNameKeys(rows), undefined)
  assert.deepEqual(columnOrder(rows, 'name'), plain)
  // And never made again for them (the table keeps its order by name).
  await prepareNameOrder(rows, noPause)
  assert.equal(preparedNameKeys(rows), undefined)
})

test('forgetNameOrder while the keys are being made stops them, and none are kept', async () => {
  const rows = /** @type {import('../../web-demo/modules/model.js').Row[]} */ (names(40_000).map((name, order) => ({
    name, dtype: 'BF16', shape: [2], byteOffset: order, byteLength: 4, elements: 2, shard: null, order, part: null,
  })))
  // The first pause comes before any block (the caller's task shows the rows); forgotten in the
  // second, after the first block, the making stops before pausing again.
  let pauses = 0
  const making = prepareNameOrder(rows, async () => {
    if (++pauses === 2) forgetNameOrder(rows)
  })
  await assert.rejects(making, /no longer wanted/)
  assert.equal(pauses, 2, 'no pause asked for after the keys were forgotten')
  assert.equal(preparedNameKeys(rows), undefined)
  // Forgotten during the first pause: nothing is made at all.
  const others = rows.map((r) => ({ ...r }))
  let early = 0
  await prepareNameOrder(others, async () => {
    if (++early === 1) forgetNameOrder(others)
  })
  assert.equal(early, 1)
  assert.equal(preparedNameKeys(others), undefined)
})

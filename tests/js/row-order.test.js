// The inspector's order by offset (web-demo/modules/row-order.js columnOrder 'byteOffset'): the
// rows' file (index) order, which rows in that order already have (taken as it is) and rows in
// any other order get by ranking.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { columnOrder } from '../../web-demo/modules/row-order.js'

/** @param {number[]} orders @returns {import('../../web-demo/modules/model.js').Row[]} */
const rowsOf = (orders) => orders.map((order) => ({
  name: `t${order}`, dtype: 'F32', shape: [1], byteOffset: order * 4, byteLength: 4, elements: 1, shard: null, order, part: null,
}))

/** The positions of `rows` by `order`, worked out plainly. @param {import('../../web-demo/modules/model.js').Row[]} rows */
const byOrder = (rows) => rows.map((r, i) => ({ o: r.order, i })).sort((a, b) => a.o - b.o).map((x) => x.i)

test("columnOrder by offset: rows in file order as they are, others ranked by it", () => {
  const cases = {
    'file order': [0, 1, 2, 3, 4, 5],
    'file order with gaps (weights folded where their first part was)': [0, 2, 3, 7, 8, 20],
    'another order': [5, 0, 3, 1, 4, 2],
    'ascending but one': [0, 1, 2, 4, 3, 5],
    'one row': [7],
    'none': [],
  }
  for (const [what, orders] of Object.entries(cases)) {
    const rows = rowsOf(orders)
    const { order, known } = columnOrder(rows, 'byteOffset')
    assert.deepEqual([...order], byOrder(rows), what)
    assert.equal(known, rows.length, what)
  }
})

// names, has and shardOf as apps call them, on a single file and on sharded sets from their
// indexes (zero-padded, unpadded and six-digit shard names), against what the generator put where.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { open, serialize, SafetensorsError } from '../../js/node.js'
import { deepseek163, kimiK2, makeShardedSet } from './sharded-fixtures.js'

test('a single file: has() and shardOf() (null: no shards), TensorNotFound for a name it lacks', async () => {
  const f = await open(await serialize({ a: { dtype: 'U8', shape: [1], data: new Uint8Array([1]) } }))
  assert.equal(f.has('a'), true)
  assert.equal(f.has('b'), false)
  assert.equal(f.has(''), false)
  assert.equal(f.shardOf('a'), null)
  assert.throws(() => f.shardOf('b'), (e) => e instanceof SafetensorsError && e.code === 'TensorNotFound' && e.tensor === 'b')
  await f.close()
})

for (const [label, make] of /** @type {const} */ ([
  ['zero-padded names', () => makeShardedSet({ tensors: 5000, shards: 17 })],
  ['model-1-of-61 (no padding)', () => kimiK2({ tensors: 6100 })],
  ['-of-000163 (six digits)', () => deepseek163({ tensors: 1630 })],
])) {
  test(`a sharded set, ${label}: names grouped by shard in path order, has and shardOf of every name`, async () => {
    const set = make()
    const shards = Object.fromEntries(set.shardPaths.map((p) => [p, set.shardBytes(set.allShardPaths.indexOf(p))]))
    const f = await open(set.indexBytes, { shards })
    const sorted = [...set.shardPaths].sort()
    assert.deepEqual(f.shards, sorted)
    const names = f.names
    assert.equal(names.length, set.names.length)
    assert.deepEqual(new Set(names), new Set(set.names))
    // Grouped by shard, shards in path order, index order within each.
    const rank = new Map(sorted.map((p, i) => [p, i]))
    for (let k = 1; k < names.length; k++)
      assert.ok(/** @type {number} */ (rank.get(f.shardOf(names[k - 1]))) <= /** @type {number} */ (rank.get(f.shardOf(names[k]))))
    for (const name of set.names) {
      assert.equal(f.shardOf(name), set.shardOfName(name))
      assert.equal(f.has(name), true)
    }
    assert.equal(f.has('model.layers.0.nope'), false)
    assert.equal(f.has(`${set.names[0]} `), false)
    assert.throws(() => f.shardOf('nope'), (e) => e instanceof SafetensorsError && e.code === 'TensorNotFound')
    await f.close()
  })
}

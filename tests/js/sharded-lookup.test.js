// How a sharded set finds a tensor's info in its shard's header when it counts and detects
// (js/sharded.js #aligned and the view's get): by position when the shard's header holds exactly
// the names the index gives it, in the same order once sorted by bytes; by looking each name up
// otherwise. Whatever the path, parameterCount(), quantized() and info() must equal what the
// same tensors give as one file. The sets here take every path: an index with its keys sorted
// (positions), weights whose scales sit in the next shard (found by a search in that shard's
// names), names whose UTF-16 order is not their byte order, an index in another order, and a
// shard whose header holds a tensor the index does not name.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { open, serialize } from '../../js/node.js'

/** @typedef {{ dtype: string, shape: number[], data: Uint8Array }} Stored */

const PATHS = ['model-00001-of-00003.safetensors', 'model-00002-of-00003.safetensors', 'model-00003-of-00003.safetensors']

/** @param {string} dtype @param {number[]} shape @returns {Stored} */
function tensor(dtype, shape) {
  const size = { F8_E4M3: 1, F32: 4, BF16: 2 }[dtype] ?? 1
  return { dtype, shape, data: new Uint8Array(shape.reduce((a, b) => a * b, 1) * size) }
}

/**
 * Tensors by shard: FP8 block weights of distinct shapes (so a wrong row gives a wrong count) and
 * plain tensors; the weights of `crossing` keep their scales in the next shard.
 * @param {string[]} crossing
 * @returns {Record<string, Stored>[]}
 */
function shardsOf(crossing) {
  /** @type {Record<string, Stored>[]} */
  const shards = PATHS.map(() => ({}))
  // ASCII names, and two whose UTF-16 order is not their byte order: U+FF01 sorts after
  // U+1F600 by bytes (EF < F0) but before it in UTF-16 (FF01 > D83D: the surrogate first).
  const modules = ['model.layers.12.x\uFF01', 'model.layers.12.x\u{1F600}']
  for (let layer = 0; layer < 12; layer++) for (const p of ['gate', 'up', 'down']) modules.push(`model.layers.${layer}.mlp.${p}_proj`)
  modules.forEach((m, k) => {
    const shard = Math.min(PATHS.length - 1, Math.floor((k * PATHS.length) / modules.length))
    const out = 128 + 17 * k
    const inF = 256 + 9 * (k % 5)
    shards[shard][`${m}.weight`] = tensor('F8_E4M3', [out, inF])
    const scales = crossing.includes(m) ? Math.min(PATHS.length - 1, shard + 1) : shard
    shards[scales][`${m}.weight_scale_inv`] = tensor('F32', [Math.ceil(out / 128), Math.ceil(inF / 128)])
    shards[shard][`${m}.input_layernorm.weight`] = tensor('BF16', [out + 1])
  })
  shards[0]['model.embed_tokens.weight'] = tensor('BF16', [1000, 64])
  return shards
}

/**
 * @param {Record<string, Stored>[]} shards
 * @param {{ order?: 'sorted' | 'reversed', extra?: boolean, drop?: string }} [how] the index's key order;
 *   extra: shard 0's header also holds a tensor the index does not name; drop: a name the index
 *   gives and its shard's header lacks
 */
async function openSet(shards, how = {}) {
  /** @type {[string, string][]} */
  const entries = shards.flatMap((s, i) => Object.keys(s).map((n) => /** @type {[string, string]} */ ([n, PATHS[i]])))
  // Sorted by bytes, as transformers writes (Python sorts by code point: the same order).
  const bytes = (/** @type {string} */ s) => Buffer.from(s, 'utf8')
  entries.sort((a, b) => Buffer.compare(bytes(a[0]), bytes(b[0])))
  if (how.order === 'reversed') entries.reverse()
  const index = new TextEncoder().encode(JSON.stringify({ metadata: { total_size: 1 }, weight_map: Object.fromEntries(entries) }))
  /** @type {Record<string, Uint8Array>} */
  const files = {}
  for (const [i, s] of shards.entries()) {
    const own = how.extra && i === 0 ? { ...s, 'model.unlisted': tensor('F32', [3, 3]) } : { ...s }
    if (how.drop) delete own[how.drop]
    files[PATHS[i]] = await serialize(own)
  }
  return /** @type {import('../../js/node.js').ShardedFile} */ (/** @type {unknown} */ (await open(index, { shards: files })))
}

/** What the same tensors give as one file. @param {Record<string, Stored>[]} shards */
async function asOneFile(shards) {
  const f = await open(await serialize(Object.assign({}, ...shards)))
  try {
    return { count: f.parameterCount(), quantized: f.quantized(), infos: new Map(f.names.map((n) => [n, f.info(n)])) }
  } finally {
    await f.close()
  }
}

const CROSSING = ['model.layers.3.mlp.down_proj', 'model.layers.6.mlp.gate_proj', 'model.layers.12.x\u{1F600}']

for (const [what, how] of /** @type {[string, { order?: 'sorted' | 'reversed', extra?: boolean }][]} */ ([
  ['an index with its keys sorted', {}],
  ['an index in another order', { order: 'reversed' }],
  ['a shard holding a tensor the index does not name', { extra: true }],
])) {
  test(`a sharded FP8 set, ${what}: parameterCount, quantized and info as one file gives them`, async () => {
    const shards = shardsOf(CROSSING)
    // The crossing weights really cross, and one of them has a name JS and bytes order apart.
    for (const m of CROSSING) {
      const of = (/** @type {string} */ n) => shards.findIndex((s) => n in s)
      assert.notEqual(of(`${m}.weight`), of(`${m}.weight_scale_inv`), m)
    }
    const one = await asOneFile(shards)
    assert.ok(one.quantized.length >= 38, 'every module is an FP8 weight')
    const f = await openSet(shards, how)
    try {
      assert.deepEqual(await f.parameterCount(), one.count)
      // The same weights (listed in index order here, in file order there)
      const byName = (/** @type {import('../../js/node.js').QuantizedWeight[]} */ list) =>
        list.map((q) => [q.name, q.shape, q.parts]).sort((a, b) => (a[0] < b[0] ? -1 : 1))
      assert.deepEqual(byName(await f.quantized()), byName(one.quantized))
      for (const name of f.names) {
        const { dtype, shape, byteLength } = await f.info(name)
        const want = /** @type {import('../../js/node.js').TensorInfo} */ (one.infos.get(name))
        assert.deepEqual({ dtype, shape, byteLength }, { dtype: want.dtype, shape: want.shape, byteLength: want.byteLength }, name)
      }
    } finally {
      await f.close()
    }
  })
}

// The first name of a shard, a middle one and its last (by bytes: the same count of names but
// one would line up with the index's otherwise).
for (const where of ['first', 'middle', 'last']) {
  test(`a sharded FP8 set whose index names a tensor its shard lacks (its ${where} name): TensorNotFound`, async () => {
    const shards = shardsOf([])
    const names = Object.keys(shards[1]).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)))
    const lost = names[{ first: 0, middle: names.length >> 1, last: names.length - 1 }[where] ?? 0]
    const f = await openSet(shards, { drop: lost })
    try {
      await assert.rejects(f.parameterCount(), (e) => /** @type {any} */ (e).code === 'TensorNotFound' && /** @type {any} */ (e).tensor === lost)
    } finally {
      await f.close()
    }
  })
}

// js/core/index-map.js: a sharded index parsed by the sharded-index module, fed in chunks of
// random sizes, against the JS reference's parseIndex (index-reference.js: JSON.parse) on the same bytes: metadata,
// sorted shards, names grouped by shard, shardOf and has of every name and of names it lacks;
// the same error codes (and what the module adds: offsets, tensors, the checks JSON.parse cannot
// make); a 500,000-name index; the module's heap given back on dispose.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { CoreIndex, INDEX_LAYOUT, loadIndexModule, openIndexParser, parseIndexCore } from '../../js/core/index-map.js'
import { parseIndex } from './index-reference.js'
import { SafetensorsError, serialize } from '../../js/node.js'
import { kimiK2, kimiK3 } from './sharded-fixtures.js'

const encode = (/** @type {string} */ s) => new TextEncoder().encode(s)

/** A generator of chunk sizes from a seed: 0 to 2 * mean bytes, sometimes empty. */
function chunker(seed = 1, mean = 7) {
  let x = seed
  return () => {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0
    return (x >>> 16) % (2 * mean + 1)
  }
}

/** @param {Uint8Array} bytes @param {() => number} size */
function* chunks(bytes, size) {
  for (let at = 0; at < bytes.length;) {
    const n = size()
    yield bytes.subarray(at, at + n)
    at += n
  }
}

/** Ours and parseIndex's on the same bytes, fed in random chunks; compares every answer. */
async function compare(/** @type {Uint8Array} */ bytes, seed = 1, mean = 7) {
  const expected = parseIndex(bytes, 'x')
  const index = await parseIndexCore(chunks(bytes, chunker(seed, mean)), 'x')
  try {
    assert.deepEqual(index.metadata, expected.metadata)
    assert.deepEqual(index.shards, expected.shards)
    assert.deepEqual(index.names, expected.names)
    assert.equal(index.count, expected.names.length)
    for (const name of expected.names) assert.equal(index.shardOf(name), expected.shardOf(name), name)
    for (const name of ['', 'nope', `${expected.names[0] ?? ''}x`, 'toString', '__proto__', 'hasOwnProperty'])
      assert.equal(index.has(name), expected.shardOf(name) !== undefined, name)
    let first = 0
    index.ranges.forEach((range, i) => {
      assert.equal(range.first, first)
      for (const name of index.names.slice(range.first, range.first + range.count)) assert.equal(index.shardOf(name), i)
      first += range.count
    })
    assert.equal(first, index.count)
    return index
  } finally {
    index.dispose()
  }
}

/** @param {Record<string, unknown>} weightMap @param {Record<string, unknown>} [rest] */
const indexOf = (weightMap, rest = {}) => encode(JSON.stringify({ metadata: { total_size: 12 }, ...rest, weight_map: weightMap }))

test("INDEX_LAYOUT is the module's layout", async () => {
  const mod = await loadIndexModule()
  const reported = [...new Uint32Array(mod.HEAPU8.buffer, mod._indexLayout() >>> 0, mod._indexLayoutLength())]
  assert.deepEqual(Object.values(INDEX_LAYOUT), reported)
})

test('the same index as parseIndex, chunked at random: escapes, Unicode, metadata, other keys', async () => {
  const tricky = [
    indexOf({ 'model.layers.1.w': 'model-00002-of-00002.safetensors', 'model.layers.0.w': 'model-00001-of-00002.safetensors',
      'lm_head.weight': 'model-00002-of-00002.safetensors', 'model.embed': 'model-00001-of-00002.safetensors' }),
    indexOf({ 'q"\\/\b\f\n\r\t': 'a.st', 'Aé日😀': 'b.st', 'nul\u0000': 'b.st', '': 'a.st', __proto__: 'c.st', constructor: 'a.st' }),
    indexOf({ a: 'model-2-of-61.safetensors', b: 'model-10-of-61.safetensors', c: 'model-1-of-61.safetensors' }),
    indexOf({ a: '\uff5e.st', b: '😀.st', c: 'z.st', d: 'sub/dir/x.st' }),
    indexOf({}),
    encode('\ufeff{"weight_map": {"a": "s"}, "metadata": null}'),
    encode('{"format": [1, -2.5e+3, true, null, {"k": "\\ud800"}], "weight\\u005fmap": {"\\u0041": "\\u0073"}, "x": {}}'),
    encode(`{"weight_map": {${Array.from({ length: 3000 }, (_, i) => `"t.${i % 7}.${i}": "shard-${i % 300}.st"`).join(',')}}}`),
  ]
  for (const [k, bytes] of tricky.entries()) {
    await compare(bytes, k + 1, 3)
    await compare(bytes, k + 11, 200)
  }
  const index = await compare(tricky[0])
  assert.deepEqual(index.metadata, { total_size: 12 })
  assert.deepEqual(index.ranges, [{ first: 0, count: 2 }, { first: 2, count: 2 }])
})

test('errors: the codes parseIndex gives, with offsets and tensors', async () => {
  const bad = [
    ['', 'InvalidIndex'], ['   ', 'InvalidIndex'], ['{"weight_map": {}', 'InvalidIndex'], ['[]', 'InvalidIndex'],
    ['{"weight_map": []}', 'InvalidIndex'], ['{"metadata": {}}', 'InvalidIndex'], ['{"weight_map": {}, "metadata": 3}', 'InvalidIndex'],
    ['{"weight_map": {"a": 3}}', 'InvalidIndex'], ['{"weight_map": {"a": "s"}} x', 'InvalidIndex'], ['{"weight_map": {"a": "s",}}', 'InvalidIndex'],
    ['{"weight_map": {"a": "../up.st"}}', 'UnsafeShardPath'], ['{"weight_map": {"a": "/abs.st"}}', 'UnsafeShardPath'],
    ['{"weight_map": {"a": "http://h/x.st"}}', 'UnsafeShardPath'], ['{"weight_map": {"a": ""}}', 'UnsafeShardPath'],
    ['{"weight_map": {"a": "%2e%2e/x"}}', 'UnsafeShardPath'], ['{"weight_map": {"a": "../x", "b": 1}}', 'UnsafeShardPath'],
    ['{"weight_map": {"b": 1, "a": "../x"}}', 'InvalidIndex'], ['{"weight_map": {"a": "../x"}, "metadata": []}', 'InvalidIndex'],
    ['{"weight_map": {"a": "../x"}, ]', 'InvalidIndex'], ['{"a": 01, "weight_map": {}}', 'InvalidIndex'],
  ]
  for (const [text, code] of bad) {
    const bytes = encode(text)
    assert.throws(() => parseIndex(bytes, 'x'), (e) => e instanceof SafetensorsError && e.code === code, text)
    await assert.rejects(parseIndexCore(chunks(bytes, chunker(5, 2)), 'x'),
      (e) => e instanceof SafetensorsError && e.code === code && e.message.startsWith('x: '), text)
  }
  // Invalid UTF-8, which a fatal TextDecoder refuses.
  const utf8 = Uint8Array.from([...encode('{"weight_map": {"a'), 0xc3, 0x28, ...encode('": "s"}}')])
  assert.throws(() => parseIndex(utf8, 'x'), (e) => e instanceof SafetensorsError && e.code === 'InvalidIndex')
  await assert.rejects(parseIndexCore(utf8, 'x'), (e) => e instanceof SafetensorsError && e.code === 'InvalidIndex' &&
    e.offset === 19 && /UTF-8/.test(e.message))
  // Offsets and tensors.
  await assert.rejects(parseIndexCore(encode('{"weight_map": {"x": "s", "model.w": [1]}}'), 'm.json'),
    (e) => e instanceof SafetensorsError && e.tensor === 'model.w' && e.offset === 26 &&
      e.message === 'm.json: the shard of "model.w" is not a string (it starts with \'[\'): weight_map\'s values are shard file names')
  await assert.rejects(parseIndexCore(encode('{"weight_map": {"a": "ok.st", "b": "../up.st"}}'), 'x'),
    (e) => e instanceof SafetensorsError && e.code === 'UnsafeShardPath' && e.offset === 35)
})

test('what JSON.parse lets through and the module refuses: a name mapped twice, a lone surrogate in a name', async () => {
  const twice = encode('{"weight_map": {"a": "s1", "b": "s1", "a": "s2"}}')
  assert.deepEqual(parseIndex(twice, 'x').names, ['b', 'a'])  // the last "a" wins
  await assert.rejects(parseIndexCore(twice, 'x'), (e) => e instanceof SafetensorsError && e.code === 'InvalidIndex' &&
    e.tensor === 'a' && e.offset === 38 && /mapped twice in weight_map: entry 1 gives "s1", entry 3/.test(e.message))
  const lone = encode('{"weight_map": {"a\\ud800": "s"}}')
  assert.equal(parseIndex(lone, 'x').names.length, 1)
  await assert.rejects(parseIndexCore(lone, 'x'), (e) => e instanceof SafetensorsError && e.code === 'InvalidIndex' &&
    /lone surrogate \\ud800 in the tensor name/.test(e.message))
  await assert.rejects(parseIndexCore(encode('{"weight_map": {}, "weight_map": {}}'), 'x'), /appears twice/)
})

test('a .safetensors shard given as the index is refused on its first chunk', async () => {
  const shard = await serialize({ w: { dtype: 'F32', shape: [2], data: new Float32Array([1, 2]) } })
  const parser = await openIndexParser('model-00001-of-00002.safetensors')
  assert.throws(() => parser.feed(shard.subarray(0, 4096)), (e) => e instanceof SafetensorsError && e.code === 'InvalidIndex' &&
    e.offset === 0 && /looks like a \.safetensors shard \(an 8-byte header length, \d+, then '\{'\)/.test(e.message))
  assert.throws(() => parser.feed(encode('{}')), (e) => e instanceof SafetensorsError && e.code === 'Closed')
  parser.dispose()
})

test('maxBytes refuses a longer index before feeding it', async () => {
  const parser = await openIndexParser('big.json', { maxBytes: 10 })
  parser.feed(encode('{"weight_m'))
  assert.equal(parser.bytesRead, 10)
  assert.throws(() => parser.feed(encode('a')), (e) => e instanceof SafetensorsError && e.code === 'InvalidIndex' && /over 10 bytes/.test(e.message))
})

test('dispose gives the heap back; a disposed index refuses lookups, decoded names stay', async () => {
  const mod = await loadIndexModule()
  const bytes = kimiK2({ tensors: 20000 }).indexBytes
  const before = mod._heapInUse()
  const index = await parseIndexCore(bytes, 'x')
  assert.ok(index instanceof CoreIndex)
  assert.ok(mod._heapInUse() - before >= index.byteSize * 0.9, 'byteSize is what the heap holds')
  assert.ok(index.byteSize < 24 * index.count, `${index.byteSize / index.count} bytes per name`)
  const names = index.names
  assert.equal(index.shardOf(names[0]), 0)
  index.dispose()
  index.dispose()
  assert.equal(mod._heapInUse(), before)
  assert.equal(index.names, names)
  assert.throws(() => index.shardOf(names[0]), (e) => e instanceof SafetensorsError && e.code === 'Closed')
  // A parser that failed has freed everything too.
  await assert.rejects(parseIndexCore(Uint8Array.from([...bytes.subarray(0, 5000), 0xff]), 'x'))
  assert.equal(mod._heapInUse(), before)
})

test('500,000 names over 96 shards: names in order and the shard of every one, as parseIndex gives them', async () => {
  const set = kimiK3()
  const bytes = set.indexBytes
  const expected = parseIndex(bytes, 'x')
  const index = await parseIndexCore(chunks(bytes, chunker(9, 40000)), 'x')
  try {
    assert.equal(index.count, 500000)
    assert.deepEqual(index.shards, expected.shards)
    assert.deepEqual(index.metadata, expected.metadata)
    const names = index.names
    assert.deepEqual(names, expected.names)
    for (const name of names) if (index.shardOf(name) !== expected.shardOf(name)) assert.fail(`shardOf(${name})`)
    for (const name of set.names.slice(0, 1000)) assert.equal(index.shards[/** @type {number} */ (index.shardOf(name))], set.shardOfName(name))
    assert.ok(index.byteSize / index.count < 24, `${(index.byteSize / index.count).toFixed(1)} bytes per name`)
  } finally {
    index.dispose()
  }
})

test('a module whose heap grew is let go once no index holds tables in it; the next index is read in a new one', async () => {
  const small = kimiK2({ tensors: 2000 }).indexBytes
  const first = await loadIndexModule()
  const before = first.HEAPU8.byteLength
  const kept = await parseIndexCore(small, 'kept')
  const large = await parseIndexCore(kimiK3().indexBytes, 'large')
  assert.equal(await loadIndexModule(), first)
  assert.ok(first.HEAPU8.byteLength > before, 'the large index grew the heap')
  large.dispose()
  assert.equal(await loadIndexModule(), first, 'kept while another index holds tables in it')
  assert.equal(kept.shardOf(kept.names[0]), 0)
  kept.dispose()
  const next = await loadIndexModule()
  assert.notEqual(next, first, 'a new module once none holds tables in the grown one')
  assert.ok(next.HEAPU8.byteLength < first.HEAPU8.byteLength, `${next.HEAPU8.byteLength} < ${first.HEAPU8.byteLength}`)
  // The new module reads; one that did not grow is kept for the next index.
  const again = await parseIndexCore(small, 'again')
  assert.deepEqual(again.names, kept.names)
  again.dispose()
  assert.equal(await loadIndexModule(), next)
})

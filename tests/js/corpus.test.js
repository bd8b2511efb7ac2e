// Real-world files (../shared/corpus, outside the repository): each must open from a path, from
// bytes and from a Blob with exactly the table a plain JSON.parse of its header gives, and every
// tensor's bytes must be the file's bytes at its offsets.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { readdir, readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { open } from '../../js/node.js'

const corpusUrl = new URL('../../../shared/corpus/', import.meta.url)
const referenceUrl = new URL('reference/', corpusUrl)
const SKIP = '../shared/corpus not found: corpus tests skipped'
const SHARDED = 'FluxML__SafeTensors.jl__test_sharded_'

/** @param {URL} dir */
async function safetensorsIn(dir) {
  if (!existsSync(dir)) return []
  return (await readdir(dir)).filter((n) => n.endsWith('.safetensors')).sort()
    .map((n) => new URL(n, dir))
}

/**
 * The table as a plain JSON.parse of the header describes it: independent of the library.
 * @param {Uint8Array} bytes
 */
function expectedTable(bytes) {
  const n = Number(new DataView(bytes.buffer, bytes.byteOffset, 8).getBigUint64(0, true))
  const header = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(8, 8 + n)))
  const tensors = new Map()
  for (const [name, entry] of Object.entries(header)) {
    if (name === '__metadata__') continue
    const [begin, end] = entry.data_offsets
    tensors.set(name, { name, dtype: entry.dtype, shape: entry.shape, byteOffset: 8 + n + begin, byteLength: end - begin })
  }
  return { headerLength: n, metadata: header.__metadata__ ?? null, tensors }
}

/**
 * @param {import('../../js/file.js').SafetensorsFile} f
 * @param {Uint8Array} bytes the whole file
 */
async function checkFile(f, bytes) {
  const want = expectedTable(bytes)
  assert.equal(f.byteLength, bytes.length)
  assert.equal(f.headerLength, want.headerLength)
  assert.deepEqual(f.metadata, want.metadata)
  const names = f.names
  assert.equal(names.length, want.tensors.size)
  assert.deepEqual(new Set(names), new Set(want.tensors.keys()))
  let lastOffset = 0
  for (const name of names) {
    const info = f.info(name)
    assert.deepEqual(info, want.tensors.get(name), `info(${JSON.stringify(name)})`)
    assert.ok(info.byteOffset >= lastOffset, `names are in offset order (at ${JSON.stringify(name)})`)
    lastOffset = info.byteOffset
  }
  const loaded = await f.load(names)
  try {
    assert.equal(loaded.size, names.length)
    for (const name of names) {
      const { byteOffset, byteLength } = want.tensors.get(name)
      const t = /** @type {import('../../js/tensor.js').Tensor} */ (loaded.get(name))
      assert.equal(t.byteLength, byteLength)
      assert.deepEqual(t.bytes, bytes.subarray(byteOffset, byteOffset + byteLength), `bytes of ${JSON.stringify(name)}`)
    }
  } finally {
    for (const t of loaded.values()) t.dispose()
  }
}

/** @param {URL[]} urls */
function corpusTests(urls) {
  for (const url of urls) {
    const label = fileURLToPath(url).split('/shared/corpus/')[1]
    test(label, async (t) => {
      const bytes = new Uint8Array(await readFile(url))
      await t.test('open(path)', async () => {
        const f = await open(fileURLToPath(url))
        try { await checkFile(f, bytes) } finally { await f.close() }
      })
      await t.test('open(Uint8Array)', async () => {
        const f = await open(bytes)
        try { await checkFile(f, bytes) } finally { await f.close() }
      })
      await t.test('open(Blob)', async () => {
        const f = await open(new Blob([bytes]))
        try { await checkFile(f, bytes) } finally { await f.close() }
      })
    })
  }
}

const files = await safetensorsIn(corpusUrl)
if (files.length === 0) {
  test('corpus', (t) => { t.skip(SKIP) })
} else {
  corpusTests(files)
  corpusTests(await safetensorsIn(referenceUrl))

  test('the sharded FluxML set: every weight_map entry names a tensor of its shard, and back', async (t) => {
    const indexUrl = new URL(`${SHARDED}model.safetensors.index.json`, corpusUrl)
    if (!existsSync(indexUrl)) return t.skip('FluxML sharded index not in the corpus')
    const index = JSON.parse(await readFile(indexUrl, 'utf8'))
    const weightMap = /** @type {Record<string, string>} */ (index.weight_map)
    const shardNames = [...new Set(Object.values(weightMap))].sort()
    assert.equal(shardNames.length, 6)
    let totalBytes = 0
    const seen = new Set()
    for (const shard of shardNames) {
      const f = await open(fileURLToPath(new URL(SHARDED + shard, corpusUrl)))
      try {
        const names = new Set(f.names)
        for (const [tensor, file] of Object.entries(weightMap))
          if (file === shard) assert.ok(names.has(tensor), `${tensor} is in ${shard}`)
        for (const name of names) {
          assert.equal(weightMap[name], shard, `${name} of ${shard} is mapped to it`)
          seen.add(name)
          totalBytes += f.info(name).byteLength
        }
      } finally {
        await f.close()
      }
    }
    assert.equal(seen.size, Object.keys(weightMap).length)
    assert.equal(totalBytes, index.metadata.total_size)
  })
}

#!/usr/bin/env node
/**
 * Splits the sample model into a sharded checkpoint, as Hugging Face writes one:
 *
 *   node web-demo/make-sharded-sample.js <sample.safetensors> <out folder>
 *
 * writes <out>/model-0000k-of-00003.safetensors (the embeddings and layers 0-1; layers 2-3; the
 * rest) and <out>/model.safetensors.index.json ({ metadata: { total_size }, weight_map }), with
 * the project's own writer. Every shard keeps the sample's __metadata__.
 */
import { mkdir, writeFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { open, serialize } from '../js/node.js'

const SHARDS = 3
export const INDEX_NAME = 'model.safetensors.index.json'

/** @param {string} name @returns {number} 0-based shard */
function shardOf(name) {
  if (name.startsWith('model.embed_tokens.')) return 0
  const layer = /\.layers\.(\d+)\./.exec(name)
  if (!layer) return SHARDS - 1
  return Number(layer[1]) < 2 ? 0 : 1
}

/**
 * The sharded set's files: file name -> bytes, the index included.
 * @param {import('../js/index.js').SafetensorsFile} f the sample, opened
 * @returns {Promise<Map<string, Uint8Array>>}
 */
export async function shardSample(f) {
  const tensors = await f.load(f.names)
  try {
    /** @type {Map<string, Uint8Array>} */
    const files = new Map()
    /** @type {Record<string, string>} */
    const weightMap = {}
    let totalSize = 0
    for (let k = 0; k < SHARDS; k++) {
      const file = `model-${String(k + 1).padStart(5, '0')}-of-${String(SHARDS).padStart(5, '0')}.safetensors`
      const part = [...tensors].filter(([name]) => shardOf(name) === k)
      for (const [name, t] of part) {
        weightMap[name] = file
        totalSize += t.byteLength
      }
      files.set(file, await serialize(new Map(part), { metadata: f.metadata }))
    }
    const sorted = Object.fromEntries(Object.keys(weightMap).sort().map((name) => [name, weightMap[name]]))
    const index = { metadata: { total_size: totalSize }, weight_map: sorted }
    files.set(INDEX_NAME, new TextEncoder().encode(`${JSON.stringify(index, null, 2)}\n`))
    return files
  } finally {
    for (const t of tensors.values()) t.dispose()
  }
}

async function main() {
  const [input, out] = process.argv.slice(2)
  if (!input || !out) {
    process.stderr.write('usage: make-sharded-sample.js <sample.safetensors> <out folder>\n')
    return 2
  }
  const f = await open(input)
  try {
    if (!('headerLength' in f)) throw new Error(`${input} is already sharded`)
    await mkdir(out, { recursive: true })
    for (const [name, bytes] of await shardSample(f)) await writeFile(join(out, name), bytes)
  } finally {
    await f.close()
  }
  return 0
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().then((code) => { process.exitCode = code }, (error) => {
    process.stderr.write(`make-sharded-sample: ${error?.stack ?? error}\n`)
    process.exitCode = 1
  })
}

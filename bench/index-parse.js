#!/usr/bin/env node
/**
 * Opening a frontier-scale sharded index (issue 17): a generated index of 500,000 names over 96
 * shards, written as transformers writes one (keys sorted, two-space indent; Kimi-style names,
 * about 56 MB), parsed by the sharded-index module (js/core/index-map.js, fed in 64 KiB chunks as
 * a download arrives) against JSON.parse of the same text, already a string. Time: the median of
 * interleaved runs. Memory: what each keeps after a full GC, the JS heap plus, for ours, the
 * module's heap bytes in use (the strings of `names`, decoded only on demand, are reported apart).
 *   node bench/index-parse.js [--names 500000] [--rounds 5]
 */
import { parseArgs } from 'node:util'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { loadIndexModule, parseIndexCore } from '../js/core/index-map.js'
import { emitFigures, figure, fmtMs, fmtX, machine, median } from './common.js'

const { values } = parseArgs({ options: { names: { type: 'string', default: '500000' }, rounds: { type: 'string', default: '5' } } })
setFlagsFromString('--expose-gc')
const gc = /** @type {() => void} */ (runInNewContext('gc'))

/**
 * Kimi-K3-like names (layers x 384 experts x 3 projections x 6 parts, plus attention and norms)
 * given to shards in model order, listed sorted.
 * @param {number} count @param {number} shards
 */
export function kimiIndexText(count, shards) {
  const names = []
  const parts = ['weight', 'weight_scale_inv', 'input_scale', 'weight_scale_2', 'weight_packed', 'weight_shape']
  for (let layer = 0; names.length < count; layer++) {
    const p = `language_model.model.layers.${layer}`
    names.push(`${p}.input_layernorm.weight`, `${p}.post_attention_layernorm.weight`, `${p}.mlp.gate.weight`)
    for (const a of ['q_a_proj', 'q_b_proj', 'kv_a_proj_with_mqa', 'kv_b_proj', 'o_proj']) names.push(`${p}.self_attn.${a}.weight`)
    for (let e = 0; e < 384; e++) for (const proj of ['gate_proj', 'up_proj', 'down_proj']) for (const part of parts) names.push(`${p}.mlp.experts.${e}.${proj}.${part}`)
  }
  names.length = count
  const pad = (/** @type {number} */ i) => String(i).padStart(5, '0')
  const lines = names.map((n, k) => `    "${n}": "model-${pad(Math.floor((k * shards) / count) + 1)}-of-${pad(shards)}.safetensors"`).sort()
  return `{\n  "metadata": {\n    "total_size": 1031024834560\n  },\n  "weight_map": {\n${lines.join(',\n')}\n  }\n}\n`
}

/** @param {Uint8Array} bytes */
async function ours(bytes) {
  const chunks = []
  for (let at = 0; at < bytes.length; at += 65536) chunks.push(bytes.subarray(at, at + 65536))
  return parseIndexCore(chunks, 'the index')
}

async function main() {
  const count = Number(values.names)
  const text = kimiIndexText(count, 96)
  const bytes = new TextEncoder().encode(text)
  const mod = await loadIndexModule()
  console.log(`index open: ${count} names, ${(bytes.length / 1e6).toFixed(1)} MB; the sharded-index module vs JSON.parse; ${machine()}`)

  /** @type {number[]} */
  const parseMs = []
  /** @type {number[]} */
  const oursMs = []
  for (let r = 0; r < Number(values.rounds); r++) {
    let t0 = performance.now()
    const json = JSON.parse(text)
    parseMs.push(performance.now() - t0)
    if (Object.keys(json.weight_map).length !== count) throw new Error('JSON.parse lost names')
    t0 = performance.now()
    const index = await ours(bytes)
    oursMs.push(performance.now() - t0)
    if (index.count !== count) throw new Error('the module lost names')
    index.dispose()
  }

  // Retained memory: after a full GC, with the result kept, less before (the text is held throughout).
  const heap = () => (gc(), gc(), process.memoryUsage().heapUsed)
  let before = heap()
  let kept = JSON.parse(text)
  const parseBytes = heap() - before
  kept = null
  before = heap() + mod._heapInUse()
  const index = await ours(bytes)
  const oursBytes = heap() + mod._heapInUse() - before
  before = heap()
  let t0 = performance.now()
  const names = index.names
  const namesMs = performance.now() - t0
  const namesBytes = heap() - before
  t0 = performance.now()
  let found = 0
  for (const name of names) if (index.shardOf(name) !== undefined) found++
  const shardOfUs = ((performance.now() - t0) * 1000) / names.length
  if (found !== count || kept !== null) throw new Error('a name the index lost')

  const mb = (/** @type {number} */ n) => `${(n / 1e6).toFixed(1)} MB`
  const time = median(oursMs) / median(parseMs)
  figure({ area: 'index-parse', figure: `open a ${mb(bytes.length)} index of ${count} names: time`, ours: fmtMs(median(oursMs)),
    baselineName: 'JSON.parse', baseline: fmtMs(median(parseMs)), ratio: time, ratioText: `${fmtX(time)} the time`,
    target: '<= 0.5x', met: time <= 0.5 })
  const memory = oursBytes / parseBytes
  figure({ area: 'index-parse', figure: `open a ${mb(bytes.length)} index of ${count} names: retained memory (JS heap + wasm heap)`,
    ours: mb(oursBytes), baselineName: 'JSON.parse', baseline: mb(parseBytes), ratio: memory, ratioText: `${fmtX(memory)} the memory`,
    target: '<= 0.25x', met: memory <= 0.25 })
  console.log(`  the index's tables: ${(index.byteSize / count).toFixed(1)} bytes per name; names decoded on demand in ` +
    `${fmtMs(namesMs)} (${mb(namesBytes)} of JS strings); shardOf ${shardOfUs.toFixed(2)} µs per name`)
  index.dispose()
  emitFigures()
}

await main()

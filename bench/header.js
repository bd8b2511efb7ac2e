#!/usr/bin/env node
/**
 * Header parse and validation: `open` of in-memory bytes up to the point where `names` and
 * `info` are usable, for headers of 10, 1,000 and 10,000 tensors (the last about 1.2 MB, like a
 * large MoE shard), against the floor of any JS reader: JSON.parse(new TextDecoder().decode(h))
 * of the same header bytes (no validation at all).
 *   node bench/header.js [--rounds 11]
 */
import { parseArgs } from 'node:util'
import { open } from '../js/index.js'
import { emitFigures, figure, fmtMs, fmtX, machine } from './common.js'

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '11' } } })
const ROUNDS = Number(values.rounds)

/**
 * A MoE-like shard: experts' projections in BF16, norms in F32; `count` tensors. The data is
 * small (every tensor is 64 x 8 BF16 = 1 KiB) but the offsets are written as in a real file.
 * @param {number} count
 */
export function moeFile(count) {
  const tensors = []
  let offset = 0
  for (let layer = 0; tensors.length < count; layer++) {
    const p = `model.layers.${layer}.`
    const names = [`${p}input_layernorm.weight`, `${p}post_attention_layernorm.weight`,
      `${p}mlp.gate.weight`]
    for (let e = 0; e < 64; e++)
      for (const w of ['down_proj', 'gate_proj', 'up_proj']) names.push(`${p}mlp.experts.${e}.${w}.weight`)
    for (const name of names) {
      if (tensors.length === count) break
      const norm = name.endsWith('norm.weight')
      const dtype = norm ? 'F32' : 'BF16'
      const shape = norm ? [256] : [64, 8]
      const bytes = norm ? 1024 : 1024
      tensors.push([name, { dtype, shape, data_offsets: [offset, offset + bytes] }])
      offset += bytes
    }
  }
  const header = { __metadata__: { format: 'pt' }, ...Object.fromEntries(tensors) }
  let json = JSON.stringify(header)
  // Real writers (the reference) pad with spaces to a multiple of 8.
  json += ' '.repeat((8 - (json.length % 8)) % 8)
  const jsonBytes = new TextEncoder().encode(json)
  const file = new Uint8Array(8 + jsonBytes.length + offset)
  new DataView(file.buffer).setBigUint64(0, BigInt(jsonBytes.length), true)
  file.set(jsonBytes, 8)
  return { file, headerBytes: file.subarray(8, 8 + jsonBytes.length) }
}

async function main() {
  console.log(`header parse: open(bytes) until names and info are usable, vs JSON.parse(TextDecoder.decode(header)); ${machine()}`)
  for (const count of [10, 1000, 10000]) {
    const { file, headerBytes } = moeFile(count)
    // open is async (it awaits the core and the source); measure it as users call it, by
    // running each contender for a fixed number of calls inside an async loop, interleaved.
    const calls = Math.max(1, Math.round(2000 / count))
    const decoder = new TextDecoder()
    let sink = 0
    /** @type {Record<string, () => Promise<void>>} */
    const contenders = {
      'JSON.parse': async () => {
        for (let i = 0; i < calls; i++) {
          const h = JSON.parse(decoder.decode(headerBytes))
          sink += Object.keys(h).length
        }
      },
      'open + names': async () => {
        for (let i = 0; i < calls; i++) {
          const f = await open(file)
          sink += f.names.length
          await f.close()
        }
      },
      'open + names + info(every tensor)': async () => {
        for (let i = 0; i < calls; i++) {
          const f = await open(file)
          for (const name of f.names) sink += f.info(name).byteLength
          await f.close()
        }
      },
    }
    const times = await timeAsyncInterleaved(contenders, ROUNDS)
    const per = (/** @type {string} */ k) => times[k] / calls
    const floor = per('JSON.parse')
    const label = `${count.toLocaleString('en-US')} tensors, ${(headerBytes.length / 1e6).toFixed(3)} MB`
    const ratio = per('open + names') / floor
    figure({
      area: 'header', figure: `open + names, ${label}`, ours: fmtMs(per('open + names')),
      baselineName: 'JSON.parse(decode)', baseline: fmtMs(floor), ratio, ratioText: `${fmtX(ratio)} the floor`,
      target: count === 10000 ? '<= 1.1x' : '', met: count === 10000 ? ratio <= 1.1 : null,
    })
    const ratioInfo = per('open + names + info(every tensor)') / floor
    figure({
      area: 'header', figure: `open + names + info() of every tensor, ${label}`,
      ours: fmtMs(per('open + names + info(every tensor)')), baselineName: 'JSON.parse(decode)', baseline: fmtMs(floor),
      ratio: ratioInfo, ratioText: `${fmtX(ratioInfo)} the floor`, target: '', met: null,
    })
    if (sink < 0) console.log(sink)
  }
  emitFigures()
}

/**
 * @param {Record<string, () => Promise<void>>} fns
 * @param {number} rounds
 */
async function timeAsyncInterleaved(fns, rounds) {
  const names = Object.keys(fns)
  for (const n of names) for (let i = 0; i < 5; i++) await fns[n]()
  /** @type {Record<string, number[]>} */
  const times = Object.fromEntries(names.map((n) => [n, []]))
  for (let r = 0; r < rounds; r++) {
    for (const n of names) {
      // Each sample: enough calls for ~20 ms.
      let reps = 0
      const t0 = performance.now()
      do { await fns[n](); reps++ } while (performance.now() - t0 < 20)
      times[n].push((performance.now() - t0) / reps)
    }
  }
  /** @type {Record<string, number>} */
  const out = {}
  for (const n of names) out[n] = times[n].sort((a, b) => a - b)[times[n].length >> 1]
  return out
}

if (import.meta.url === `file://${process.argv[1]}`) await main()

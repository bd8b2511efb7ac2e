/**
 * Sharded checkpoints at the scale of the largest public models, generated on demand (nothing
 * stored): an index of up to hundreds of thousands of names and its shards, each a real
 * .safetensors file (header + a few bytes per tensor) built when first asked for.
 *
 *   makeShardedSet({ tensors, shards, headerBytes, naming, dtype, plant })
 *
 * Names follow the models' layout (embed_tokens, per layer the attention, norms, router and
 * experts' projections, then norm and lm_head); with dtype F8_E4M3 every projection has a
 * `.weight_scale_inv`, as DeepSeek-V3 and Kimi-K2 store FP8 blocks. Names are given to shards in
 * model order, so a shard holds consecutive layers; the index lists them sorted, as
 * transformers writes it. Every tensor is tiny (2 to 8 elements) and holds one value,
 * `valueOf(name)`, exact in every dtype here.
 *
 * Presets mirror real sets: kimiK3 (500,000 names, 96 shards), glm282 (282 shards with
 * 100,000-byte headers), deepseek163 (`-of-000163`), kimiK2 (`model-1-of-61`, no padding).
 */
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/**
 * @typedef {'padded' | 'unpadded' | '163'} Naming
 * @typedef {'BF16' | 'F16' | 'F32' | 'F8_E4M3'} Dtype
 * @typedef {{
 *   notInShard?: string[],                        // the index names them, their shard's header lacks them
 *   notInIndex?: { shard: number, name: string }[], // added to shard `shard`'s header (BF16 [2]): a name the
 *                                                 // index lacks, or one it maps elsewhere (a copy, or moved with notInShard)
 *   unusedShards?: number[],                      // numbered (0-based) but given no names, no file
 *   duplicates?: { name: string, shard: number }[], // the index lists `name` a second time, mapped to `shard`
 * }} Plant
 * @typedef {{ tensors: number, shards: number, headerBytes?: number, naming?: Naming,
 *   dtype?: Dtype, experts?: number, plant?: Plant }} SetOptions
 * @typedef {{ dtype: string, shape: number[], value: number }} Spec
 * @typedef {ReturnType<typeof makeShardedSet>} ShardedSet
 */

const INDEX_NAME = 'model.safetensors.index.json'
const PROJECTIONS = ['gate_proj', 'up_proj', 'down_proj']
const ATTENTION = ['q_a_proj', 'q_b_proj', 'kv_a_proj_with_mqa', 'kv_b_proj', 'o_proj']
const BYTES = { BF16: 2, F16: 2, F32: 4, F8_E4M3: 1 }

/** The path of shard `i` (0-based) of `n`. @param {Naming} naming @param {number} i @param {number} n */
export function shardName(naming, i, n) {
  if (naming === 'unpadded') return `model-${i + 1}-of-${n}.safetensors`
  if (naming === '163') return `model-${String(i + 1).padStart(5, '0')}-of-${String(n).padStart(6, '0')}.safetensors`
  return `model-${String(i + 1).padStart(5, '0')}-of-${String(n).padStart(5, '0')}.safetensors`
}

/**
 * Exactly `count` names in model order, each with its dtype, shape and value.
 * @param {number} count @param {Dtype} dtype @param {number} experts
 * @returns {{ names: string[], specs: Spec[] }}
 */
function modelNames(count, dtype, experts) {
  const names = []
  /** @type {Spec[]} */
  const specs = []
  /** @param {string} name @param {string} type @param {number[]} shape */
  const add = (name, type, shape) => {
    specs.push({ dtype: type, shape, value: 1 + (names.length % 7) / 8 })
    names.push(name)
  }
  const head = [['model.embed_tokens.weight', 'BF16', [4, 2]]]
  const tail = [['model.norm.weight', 'BF16', [2]], ['lm_head.weight', 'BF16', [4, 2]]]
  const ends = [...head, ...tail]
  if (count <= ends.length) {
    for (const [name, type, shape] of ends.slice(0, count)) add(/** @type {any} */ (name), /** @type {any} */ (type), /** @type {any} */ (shape))
    return { names, specs }
  }
  for (const [name, type, shape] of head) add(/** @type {any} */ (name), /** @type {any} */ (type), /** @type {any} */ (shape))
  const fp8 = dtype === 'F8_E4M3'
  const body = count - tail.length
  /** A weight (and its scale_inv), or nothing if it does not fit. @param {string} module */
  const weight = (module) => {
    if (names.length + (fp8 ? 2 : 1) > body) return false
    add(`${module}.weight`, dtype, [2, 2])
    if (fp8) add(`${module}.weight_scale_inv`, 'F32', [1, 1])
    return true
  }
  /** @param {string} name */
  const norm = (name) => names.length < body && (add(name, 'BF16', [2]), true)
  for (let layer = 0; names.length < body; layer++) {
    const p = `model.layers.${layer}`
    norm(`${p}.input_layernorm.weight`)
    for (const a of ATTENTION) weight(`${p}.self_attn.${a}`)
    norm(`${p}.post_attention_layernorm.weight`)
    norm(`${p}.mlp.gate.weight`)
    for (let e = 0; e < experts && names.length < body; e++) for (const proj of PROJECTIONS) weight(`${p}.mlp.experts.${e}.${proj}`)
    for (const proj of PROJECTIONS) weight(`${p}.mlp.shared_experts.${proj}`)
    // One slot left that a weight and its scale cannot fill: a router bias, as DeepSeek-V3 has.
    if (body - names.length === 1) add(`${p}.mlp.gate.e_score_correction_bias`, 'F32', [2])
  }
  for (const [name, type, shape] of tail) add(/** @type {any} */ (name), /** @type {any} */ (type), /** @type {any} */ (shape))
  return { names, specs }
}

/** @param {Spec} spec */
const byteSize = (spec) => spec.shape.reduce((a, b) => a * b, 1) * BYTES[/** @type {Dtype} */ (spec.dtype)]

/** Writes `value` (1 + k/8, exact in each dtype) `n` times. @param {Uint8Array} out @param {number} at @param {Spec} spec */
function fill(out, at, spec) {
  const k = Math.round((spec.value - 1) * 8)
  const n = spec.shape.reduce((a, b) => a * b, 1)
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength)
  for (let j = 0; j < n; j++) {
    if (spec.dtype === 'F32') view.setFloat32(at + 4 * j, spec.value, true)
    else if (spec.dtype === 'BF16') view.setUint16(at + 2 * j, 0x3f80 | (k << 4), true)
    else if (spec.dtype === 'F16') view.setUint16(at + 2 * j, 0x3c00 | (k << 7), true)
    else out[at + j] = 0x38 | k
  }
}

/**
 * A generated sharded set. Shard bytes are built on first use and kept.
 * @param {SetOptions} options
 */
export function makeShardedSet(options) {
  const { tensors, shards, headerBytes, naming = 'padded', dtype = 'BF16', experts = 256, plant = {} } = options
  if (!Number.isInteger(tensors) || tensors < 1) throw new Error(`tensors ${tensors} is not a positive integer`)
  const unused = new Set(plant.unusedShards ?? [])
  const used = Array.from({ length: shards }, (_, i) => i).filter((i) => !unused.has(i))
  if (tensors < used.length) throw new Error(`${tensors} tensors cannot fill ${used.length} shards`)
  const { names, specs } = modelNames(tensors, dtype, experts)
  const paths = Array.from({ length: shards }, (_, i) => shardName(naming, i, shards))
  // Consecutive names per shard, as many in each as can be (later shards get the extra ones).
  const shardIds = new Uint32Array(tensors)
  /** @type {number[][]} */
  const members = Array.from({ length: shards }, () => [])
  used.forEach((shard, u) => {
    const from = Math.floor((u * tensors) / used.length)
    const to = Math.floor(((u + 1) * tensors) / used.length)
    for (let k = from; k < to; k++) {
      shardIds[k] = shard
      members[shard].push(k)
    }
  })
  /** @type {Map<string, number> | null} built on first lookup: 500,000 keys take a while */
  let ids = null
  const idOf = (/** @type {string} */ name) => {
    if (!ids) {
      ids = new Map()
      for (let k = 0; k < names.length; k++) ids.set(names[k], k)
    }
    return ids.get(name)
  }
  const lacking = new Set(plant.notInShard ?? [])
  for (const name of lacking) if (idOf(name) === undefined) throw new Error(`plant.notInShard: no tensor ${name}`)
  const extras = plant.notInIndex ?? []
  const totalSize = specs.reduce((sum, spec) => sum + byteSize(spec), 0)

  let indexText = /** @type {string | null} */ (null)
  let indexBytes = /** @type {Uint8Array | null} */ (null)
  /** @type {Map<number, Uint8Array>} */
  const built = new Map()

  /** The index as transformers writes it: keys sorted, two-space indent. */
  function makeIndex() {
    // Sorting the lines sorts the names: they need no escaping, and the closing quote sorts
    // before any character that continues a longer name.
    const lines = names.map((name, k) => `    "${name}": "${paths[shardIds[k]]}"`).sort()
    for (const { name, shard } of plant.duplicates ?? []) lines.push(`    ${JSON.stringify(name)}: ${JSON.stringify(paths[shard])}`)
    return `{\n  "metadata": {\n    "total_size": ${totalSize}\n  },\n  "weight_map": {\n${lines.join(',\n')}\n  }\n}\n`
  }

  /** Shard `i`'s file: 8-byte length, header (padded with spaces), data. @param {number} i */
  function makeShard(i) {
    if (unused.has(i)) throw new Error(`shard ${i} is planted as unused: it has no file`)
    /** @type {[string, Spec][]} */
    const entries = []
    for (const k of members[i]) if (!lacking.has(names[k])) entries.push([names[k], specs[k]])
    for (const extra of extras) if (extra.shard === i) entries.push([extra.name, { dtype: 'BF16', shape: [2], value: 1 }])
    const parts = ['{"__metadata__":{"format":"pt"}']
    let offset = 0
    for (const [name, spec] of entries) {
      const size = byteSize(spec)
      parts.push(`${JSON.stringify(name)}:{"dtype":"${spec.dtype}","shape":[${spec.shape}],"data_offsets":[${offset},${offset + size}]}`)
      offset += size
    }
    const json = new TextEncoder().encode(`${parts.join(',')}}`)
    const length = headerBytes ?? Math.ceil(json.length / 8) * 8
    if (json.length > length) throw new Error(`shard ${i}'s header is ${json.length} bytes, over headerBytes ${length}`)
    const out = new Uint8Array(8 + length + offset)
    new DataView(out.buffer).setBigUint64(0, BigInt(length), true)
    out.set(json, 8)
    out.fill(0x20, 8 + json.length, 8 + length)
    let at = 8 + length
    for (const [, spec] of entries) {
      fill(out, at, spec)
      at += byteSize(spec)
    }
    return out
  }

  return {
    /** The index file's name. */
    indexName: INDEX_NAME,
    /** The index's JSON text (built on first use). */
    get indexText() { return (indexText ??= makeIndex()) },
    /** The index's UTF-8 bytes. */
    get indexBytes() { return (indexBytes ??= new TextEncoder().encode(this.indexText)) },
    /** Every numbered shard path, in order (unused ones included). */
    allShardPaths: paths,
    /** The shard paths the index uses, in order. */
    shardPaths: used.map((i) => paths[i]),
    /** @param {number} i 0-based over allShardPaths @returns {Uint8Array} shard i's file */
    shardBytes(i) {
      let bytes = built.get(i)
      if (!bytes) built.set(i, (bytes = makeShard(i)))
      return bytes
    },
    /** Names in model order (also the order within each shard). */
    names,
    /** @param {string} name @returns {string | undefined} the shard path the index gives `name` */
    shardOfName(name) {
      const k = idOf(name)
      return k === undefined ? undefined : paths[shardIds[k]]
    },
    /** @param {string} name @returns {Spec | undefined} */
    specOf(name) {
      const k = idOf(name)
      return k === undefined ? undefined : specs[k]
    },
    /** @param {string} name the value every element of `name` holds */
    valueOf(name) { return this.specOf(name)?.value },
    /** The index metadata's total_size: every tensor's bytes. */
    totalSize,
    /** The parameters of the whole set: elements, fp8 weights' scales not counted (they are parts). */
    parameters: specs.reduce((sum, spec, k) => sum + (names[k].endsWith('_scale_inv') ? 0 : spec.shape.reduce((a, b) => a * b, 1)), 0),
  }
}

/** @param {Partial<SetOptions>} [o] Kimi-K3: 500,000 names over 96 shards, FP8. */
export const kimiK3 = (o = {}) => makeShardedSet({ tensors: 500_000, shards: 96, dtype: 'F8_E4M3', experts: 384, ...o })
/** @param {Partial<SetOptions>} [o] GLM-5-NVFP4: 282 shards whose headers are 100,000 bytes. */
export const glm282 = (o = {}) => makeShardedSet({ tensors: 60_000, shards: 282, headerBytes: 100_000, experts: 256, ...o })
/** @param {Partial<SetOptions>} [o] DeepSeek-V3: 163 shards named -of-000163, about 92,000 tensors, FP8. */
export const deepseek163 = (o = {}) => makeShardedSet({ tensors: 91_991, shards: 163, naming: '163', dtype: 'F8_E4M3', experts: 256, ...o })
/** @param {Partial<SetOptions>} [o] Kimi-K2: 61 shards named model-1-of-61, FP8. */
export const kimiK2 = (o = {}) => makeShardedSet({ tensors: 138_000, shards: 61, naming: 'unpadded', dtype: 'F8_E4M3', experts: 384, ...o })

/**
 * Serves a set from a tests/js/http-server.js server under `folder`: the index and every shard
 * but those in `skip` (0-based, which then answer 404). Shards are virtual: built on first request.
 * @param {Awaited<ReturnType<typeof import('./http-server.js').startServer>>} server
 * @param {ShardedSet} set
 * @param {{ folder?: string, skip?: number[] }} [options]
 * @returns {string} the index's URL
 */
export function serveSet(server, set, options = {}) {
  const folder = options.folder ?? '/model'
  const skip = new Set(options.skip ?? [])
  server.addVirtual(`${folder}/${set.indexName}`, {
    get size() { return set.indexBytes.length },
    fill: (out, offset) => out.set(set.indexBytes.subarray(offset, offset + out.length)),
  })
  set.allShardPaths.forEach((path, i) => {
    if (skip.has(i) || !set.shardPaths.includes(path)) return
    server.addVirtual(`${folder}/${path}`, {
      get size() { return set.shardBytes(i).length },
      fill: (out, offset) => out.set(set.shardBytes(i).subarray(offset, offset + out.length)),
    })
  })
  return server.url(`${folder}/${set.indexName}`)
}

/**
 * Writes a set to a new temp folder (or `dir`): the index and every shard but those in `skip`.
 * @param {ShardedSet} set
 * @param {{ dir?: string, skip?: number[] }} [options]
 * @returns {Promise<{ dir: string, indexPath: string, remove: () => Promise<void> }>}
 */
export async function writeSet(set, options = {}) {
  const dir = options.dir ?? await mkdtemp(join(tmpdir(), 'st-sharded-set-'))
  await mkdir(dir, { recursive: true })
  const skip = new Set(options.skip ?? [])
  const indexPath = join(dir, set.indexName)
  await writeFile(indexPath, set.indexBytes)
  for (const [i, path] of set.allShardPaths.entries()) {
    if (!skip.has(i) && set.shardPaths.includes(path)) await writeFile(join(dir, path), set.shardBytes(i))
  }
  return { dir, indexPath, remove: () => rm(dir, { recursive: true, force: true }) }
}

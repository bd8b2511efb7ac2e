// The JS reference for sharded indexes: JSON.parse of the (fatally) decoded text, then the
// checks js/sharded.js made before the core's parser (src/index_map.cpp) took over. The index
// tests compare the core's answers and verdicts with these on the same bytes.
import { SafetensorsError } from '../../js/node.js'

/**
 * @typedef {{ metadata: Record<string, unknown> | null, shards: string[], names: string[],
 *   shardOf(name: string): number | undefined }} ShardIndex
 */

/** @param {unknown} v @returns {v is Record<string, unknown>} */
const isObject = (v) => typeof v === 'object' && v !== null && !Array.isArray(v)

/**
 * Parses an index. Names are grouped by shard (shards in path order), in weight_map order within
 * a shard, so that reading them in order visits each shard once.
 * @param {Uint8Array | string} bytes
 * @param {string} where the index's path or URL, for messages
 * @returns {ShardIndex}
 */
export function parseIndex(bytes, where) {
  let json
  try {
    json = JSON.parse(typeof bytes === 'string' ? bytes : new TextDecoder('utf-8', { fatal: true }).decode(bytes))
  } catch (error) {
    throw new SafetensorsError('InvalidIndex', `${where} is not a JSON index: ${/** @type {Error} */ (error).message}`, { cause: error })
  }
  if (!isObject(json) || !isObject(json.weight_map))
    throw new SafetensorsError('InvalidIndex', `${where} has no "weight_map" object`)
  const metadata = json.metadata ?? null
  if (metadata !== null && !isObject(metadata))
    throw new SafetensorsError('InvalidIndex', `${where}: "metadata" is not an object`)
  // Objects with 10^5 keys are slow in JS engines: one pass over the keys, no second map.
  const weightMap = /** @type {Record<string, unknown>} */ (json.weight_map)
  const keys = Object.keys(weightMap)
  /** @type {Map<string, number>} */
  const ids = new Map()
  for (const name of keys) {
    const shard = weightMap[name]
    if (typeof shard !== 'string')
      throw new SafetensorsError('InvalidIndex', `${where}: the shard of ${JSON.stringify(name)} is not a string`, { tensor: name })
    if (!ids.has(shard)) {
      checkShardPath(shard, where)
      ids.set(shard, 0)
    }
  }
  const shards = [...ids.keys()].sort()
  shards.forEach((shard, i) => ids.set(shard, i))
  const shardIds = new Uint32Array(keys.length)
  const starts = new Uint32Array(shards.length + 1)
  keys.forEach((name, k) => { starts[(shardIds[k] = /** @type {number} */ (ids.get(/** @type {string} */ (weightMap[name])))) + 1]++ })
  for (let i = 1; i < starts.length; i++) starts[i] += starts[i - 1]
  const names = new Array(keys.length)
  keys.forEach((name, k) => { names[starts[shardIds[k]]++] = name })
  /** @param {string} name */
  const shardOf = (name) => (Object.hasOwn(weightMap, name) ? ids.get(/** @type {string} */ (weightMap[name])) : undefined)
  return { metadata, shards, names, shardOf }
}

/**
 * Throws UnsafeShardPath unless `path` is a plain relative path inside the index's folder.
 * @param {string} path
 * @param {string} where
 */
export function checkShardPath(path, where) {
  const unsafe = path === '' || /^[a-z][a-z0-9+.-]*:/i.test(path) || path.startsWith('/') ||
    /[\\?#\0]/.test(path) || path.split('/').some((s) => s === '' || /^(\.|%2e){1,2}$/i.test(s))
  if (unsafe)
    throw new SafetensorsError('UnsafeShardPath', `${where}: shard path ${JSON.stringify(path)} is not a relative ` +
      "path inside the index's folder")
}


/**
 * What a file holds, as the CLI's `inspect` and the inspector show it: one object for a single
 * file and a sharded set alike. For a sharded set every shard's header is read first
 * (loadHeaders, `onProgress` counting shards), so sizes, rows and counts are whole.
 * Quantized weights (f.quantized()) are listed beside the stored rows, and each row that is a
 * part of one says so (`part`); a checkpoint whose quantized weights are inconsistent still has
 * its overview, with `quantized` empty and the error in `quantizedError`.
 */
import { elementCount } from './dtypes.js'
import { nameFinder } from './name-finder.js'
import { ShardedFile } from './sharded.js'

/**
 * @typedef {import('./index.js').SafetensorsFile} SafetensorsFile
 * @typedef {import('./index.js').ShardedFile} Sharded
 * @typedef {import('./index.js').TensorInfo & { elements: number, shard: string | null, order: number,
 *   part: { weight: string, role: string } | null }} Row
 *   order: position in the file, or in the index for a sharded set; shard: its path, or null;
 *   part: the quantized weight (its logical name) this tensor is a part of, and its role there
 * @typedef {import('./quant/detect.js').QuantizedWeight} QuantizedWeight  an entry of f.quantized()
 * @typedef {{ path: string, byteLength: number, headerLength: number, tensors: number,
 *   metadata: Record<string, string> | null }} ShardSummary
 * @typedef {{
 *   kind: 'file' | 'sharded',
 *   byteLength: number, headerLength: number,
 *   metadata: Record<string, unknown> | null,
 *   shardMetadata: Record<string, string> | null,
 *   shards: ShardSummary[] | null,
 *   rows: Row[],
 *   parameters: { total: number, byDtype: Record<string, number>, byScheme?: Record<string, number> },
 *   quantized: QuantizedWeight[],
 *   quantizedError: unknown,
 * }} Overview
 *   metadata: the file's, or the index's; shardMetadata: the shards' own, when every shard has
 *   the same (shards written by one save do), else null and each shard's is on `shards`;
 *   byteLength and headerLength of a sharded set: sums over its shards; parameters: logical
 *   (a quantized weight counts its logical elements once, under byScheme, its parts zero);
 *   quantized: f.quantized(), or [] when it threw, the error then in quantizedError (else null)
 */

/**
 * @param {SafetensorsFile | Sharded} f
 * @param {{ signal?: AbortSignal, concurrency?: number,
 *   onProgress?: (p: { loaded: number, total: number }) => void }} [options]
 * @returns {Promise<Overview>}
 */
export async function overview(f, options = {}) {
  if (!(f instanceof ShardedFile)) {
    const file = /** @type {SafetensorsFile} */ (f)
    const rows = file.names.map((name, order) => row(file.info(name), null, order))
    return {
      kind: 'file', byteLength: file.byteLength, headerLength: file.headerLength, metadata: file.metadata, shardMetadata: null,
      shards: null, rows, parameters: file.parameterCount(), ...await quantizedOf(file, rows),
    }
  }
  return shardedOverview(/** @type {Sharded} */ (/** @type {unknown} */ (f)), options)
}

/**
 * The quantized weights, and each row's `part` set from them; an inconsistent checkpoint (a
 * coded error from quantized()) gives none and the error. Other failures (I/O) are thrown.
 * @param {SafetensorsFile | Sharded} f
 * @param {Row[]} rows
 * @returns {Promise<{ quantized: QuantizedWeight[], quantizedError: unknown }>}
 */
async function quantizedOf(f, rows) {
  /** @type {QuantizedWeight[]} */
  let quantized
  try {
    quantized = await f.quantized()
  } catch (error) {
    if (!/^(Quant|UnsupportedQuantization$)/.test(/** @type {any} */ (error)?.code ?? '')) throw error
    return { quantized: [], quantizedError: error }
  }
  // Rows start with `part` null; a part two weights name (detection makes none) gets the later.
  const find = nameFinder(rows)
  for (const q of quantized) {
    for (const role in q.parts) {
      const i = find(q.parts[role])
      if (i >= 0) rows[i].part = { weight: q.name, role }
    }
  }
  return { quantized, quantizedError: null }
}

/**
 * @param {Sharded} f
 * @param {NonNullable<Parameters<typeof overview>[1]>} options
 * @returns {Promise<Overview>}
 */
async function shardedOverview(f, options) {
  await f.loadHeaders(options)
  const files = await Promise.all(f.shards.map((path) => f.shard(path, options)))  // loaded: no request
  /** @type {Row[]} */
  const rows = []
  // Shard by shard, as `names` groups them, from each shard's own file: no lookup of each
  // name's shard, no await a name.
  for (const [i, path] of f.shards.entries()) {
    for (const name of f.namesIn(path)) {
      let info
      try {
        info = files[i].info(name)
      } catch (error) {
        // The set says it in its own words (the index puts it in a shard that lacks it).
        if (/** @type {any} */ (error)?.code === 'TensorNotFound') await f.info(name, options)
        throw error
      }
      rows.push(row(info, path, rows.length))
    }
  }
  const counts = new Map()
  for (const r of rows) counts.set(r.shard, (counts.get(r.shard) ?? 0) + 1)
  const shards = f.shards.map((path, i) => ({
    path, byteLength: files[i].byteLength, headerLength: files[i].headerLength,
    tensors: counts.get(path) ?? 0, metadata: files[i].metadata,
  }))
  const first = JSON.stringify(files[0]?.metadata ?? null)
  const same = files.every((s) => JSON.stringify(s.metadata) === first)
  return {
    kind: 'sharded',
    byteLength: shards.reduce((n, s) => n + s.byteLength, 0),
    headerLength: shards.reduce((n, s) => n + s.headerLength, 0),
    metadata: f.metadata, shardMetadata: same ? files[0]?.metadata ?? null : null, shards, rows,
    parameters: await f.parameterCount(options), ...await quantizedOf(f, rows),
  }
}

/**
 * Written out, not spread: `{ ...info, more }` costs about 7 µs a row in Node 20 (seconds at
 * 500,000 rows), a literal a tenth of a microsecond.
 * @param {import('./index.js').TensorInfo} info @param {string | null} shard @param {number} order @returns {Row}
 */
function row(info, shard, order) {
  const { name, dtype, shape, byteOffset, byteLength } = info
  return { name, dtype, shape, byteOffset, byteLength, elements: elementCount(shape), shard, order, part: null }
}

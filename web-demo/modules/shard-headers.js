/**
 * A sharded set's shard headers, read after its names are shown: a few at a time (the library's
 * bounded pool), each filling in its rows (dtype, shape, offset, size) as it arrives. A shard
 * that cannot be read is kept aside with its error and the others go on: its rows keep their
 * names. Selecting a tensor of a shard not read yet reads that shard first (readShard); a shard
 * is fetched once however it is asked for (ShardedFile.shard shares it).
 */
import { SafetensorsError } from '../../js/index.js'
import { pool } from '../../js/io/pool.js'
import { elementCount } from './format.js'
import { breathe } from './model.js'

/**
 * @typedef {import('./model.js').Model} Model
 * @typedef {import('./model.js').Row} Row
 * @typedef {import('./model.js').HeaderState} HeaderState
 */

/** Shard headers read at once: a browser opens about six connections per server anyway. */
export const CONCURRENCY = 8
/** Names of tensors a shard lacks quoted in its error, at most. */
const QUOTED = 3

/** Each set's header bytes read so far (length prefixes included), for the network panel. @type {WeakMap<HeaderState, number>} */
const HEADER_BYTES = new WeakMap()

/**
 * The header bytes of a sharded set's shards read so far (each one's 8-byte length and JSON).
 * @param {HeaderState} state @returns {number}
 */
export function headerBytesRead(state) {
  return HEADER_BYTES.get(state) ?? 0
}

/**
 * Reads one shard's header (if not yet) and fills in its rows. Throws what reading it threw,
 * and TensorNotFound, every time, when its header lacks tensors the index puts in it (those rows
 * stay pending, marked `missing`; the others are filled in).
 * @param {Model} model a sharded set's @param {string} path @param {AbortSignal} [signal]
 */
export async function readShard(model, path, signal) {
  const state = /** @type {HeaderState} */ (model.headers)
  const f = /** @type {import('../../js/index.js').ShardedFile} */ (model.file)
  const file = await f.shard(path, { signal })
  // Parsed in the task its last bytes arrived in; its rows filled in a task of their own, so
  // that several headers arriving together do not hold the page for all of them.
  await breathe(signal)
  if (state.read.has(path)) return
  /** @type {string[]} */
  const lacking = []
  for (const r of model.shardRows?.get(path) ?? []) {
    if (!r.pending) continue
    let info
    try {
      info = file.info(r.name)
    } catch (error) {
      if (!(error instanceof SafetensorsError) || error.code !== 'TensorNotFound') throw error
      r.missing = true
      lacking.push(r.name)
      continue
    }
    r.dtype = info.dtype
    r.shape = info.shape
    r.byteOffset = info.byteOffset
    r.byteLength = info.byteLength
    r.elements = elementCount(info.shape)
    r.pending = false
  }
  // A shard that lacks some of its tensors stays unread: the set cannot be made whole.
  if (lacking.length === 0) {
    state.read.add(path)
    HEADER_BYTES.set(state, headerBytesRead(state) + 8 + file.headerLength)
  } else {
    const quoted = lacking.slice(0, QUOTED).map((name) => JSON.stringify(name)).join(', ')
    throw new SafetensorsError('TensorNotFound', `the index puts ${lacking.length} ${lacking.length === 1 ? 'tensor' : 'tensors'} ` +
      `in ${path}, whose header lacks ${lacking.length === 1 ? 'it' : 'them'}: ${quoted}${lacking.length > QUOTED ? ', ...' : ''}`)
  }
}

/**
 * Reads every shard header not read yet (failed ones again), CONCURRENCY at a time, calling
 * `onShard` after each (read or failed). Resolves when all were tried, whatever failed; rejects
 * only when `signal` aborts.
 * @param {Model} model a sharded set's
 * @param {{ signal: AbortSignal, onShard: (path: string) => void, concurrency?: number }} options
 */
export async function readHeaders(model, options) {
  const state = /** @type {HeaderState} */ (model.headers)
  const todo = (model.shards ?? []).map((s) => s.path).filter((path) => !state.read.has(path))
  await pool(todo, options.concurrency ?? CONCURRENCY, options.signal, async (path, signal) => {
    try {
      await readShard(model, path, signal)
      state.failed.delete(path)
    } catch (error) {
      if (signal.aborted) throw error
      state.failed.set(path, error)
      for (const r of model.shardRows?.get(path) ?? []) if (r.pending) r.unreadable = true
    }
    options.onShard(path)
  })
}

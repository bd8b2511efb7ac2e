/**
 * `safetensors-wasm convert <in> <out> --dtype bf16|f16|f32 [--only PATTERN]... [-H 'Name: value']`
 * `safetensors-wasm convert <in> <out> --dequantize --dtype bf16|f16|f32 [--config FILE]`
 *
 * Streams tensor by tensor, so a file larger than memory converts in bounded memory: the
 * output's header is planned from the input's table alone, then each tensor, in the output's
 * order, is read into the wasm heap, cast chunk by chunk into a small scratch buffer, written,
 * and freed. Peak memory: the largest tensor plus a few MiB of scratch, whatever the file size.
 * The output goes through a temporary file renamed over <out> at the end (as writeFile does).
 *
 * --dequantize writes a plain checkpoint (as DeepSeek's fp8_cast_bf16.py does for FP8): each
 * quantized weight becomes one tensor under its logical name, its dequantized values cast to
 * the dtype, its parts left out; the other tensors are copied as they are. A weight is read by
 * pieces of rows (js/cli/quant.js: 16 MiB of float32 at a time), so memory stays bounded by a
 * piece plus the largest plain tensor.
 *
 * A sharded input (its index) gives a new sharded set, with or without --dequantize: the shards
 * no larger than the input's largest, and their own model.safetensors.index.json. The set is
 * written whole in a staging folder inside the output folder, then moved in (js/cli/staging.js):
 * an older set there is replaced as a whole, never mixed with the new one; the older set's shards
 * the new one does not replace (it had more) are removed once the new index is in.
 */
import { mkdir, stat } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import { castChunks } from '../cast.js'
import { CONFIG_NOTE, CONFIG_OPTIONS, CONFIG_OPTION_HELP, onlyFilter, openOptions, parseCommand, progressBar, quantizationConfig, usageError } from './common.js'
import { dequantizedPieces } from './quant.js'
import { readAhead } from './read-ahead.js'
import { SafetensorsError, throwIfAborted } from '../errors.js'
import { ShardedFile, open } from '../node.js'
import { removeTempFilesSync, writePlanned } from '../io/node-write.js'
import { commitSet, makeStaging, oldShards, refuseLinks, removeOldShards, removeStaging, removeStagingSync, removeStaleStaging, writeSynced } from './staging.js'
import { loadCore } from '../wasm.js'
import { DTYPE_BITS, elementCount } from '../dtypes.js'
import { escapeInvisible } from '../format.js'
import { planFile } from '../writer.js'
import { redactUrl } from '../redact.js'

/** The float dtypes convert casts; every other tensor (ints, BOOL, C64, F8, F6, F4) is copied. */
export const CONVERTED_DTYPES = new Set(['F64', 'F32', 'F16', 'BF16'])

export { namePattern } from './common.js'

/**
 * Converts a safetensors file (a path or a URL) to a new file at `output`. A sharded set (its
 * index) gives a new sharded set, as dequantizeCheckpoint writes one: `output` is a folder or the
 * `*.index.json` to write.
 * @param {string | URL} input
 * @param {string} output
 * @param {{ dtype: 'F32' | 'BF16' | 'F16', only?: (name: string) => boolean, signal?: AbortSignal,
 *   onProgress?: (p: { loaded: number, total: number }) => void, openOptions?: import('../open.js').OpenOptions,
 *   overwrite?: boolean, onHeaders?: (p: { loaded: number, total: number }) => void,
 *   readAhead?: { bytes?: number, batches?: number, batchBytes?: number } | false }} options
 *   only: which tensors to keep (default: all); onProgress: after the header and every chunk written;
 *   overwrite: false to refuse an output that exists (default true; never the input); onHeaders: a
 *   sharded input's shard headers read so far (loadHeaders's onProgress); readAhead: from a URL,
 *   the bounds of the reads ahead of the writer (read-ahead.js: 64 MiB, 4 batches of 8 MiB), or
 *   false for one tensor at a time
 * @returns {Promise<{ tensors: number, cast: number, copied: number, dropped: number, byteLength: number,
 *   shards?: string[], index?: string }>} shards, index: the files of a sharded output
 */
export async function convertFile(input, output, options) {
  const { dtype, only = () => true, signal } = options
  if (!['F32', 'BF16', 'F16'].includes(dtype))
    throw new SafetensorsError('InvalidArgument', `cannot convert to ${JSON.stringify(dtype)}: the targets are F32, BF16, F16`)
  const core = await loadCore()
  const f = await open(input, { ...options.openOptions, signal })
  const reads = writerReads(f, input, options)
  try {
    const sharded = f instanceof ShardedFile
    if (!sharded) {
      if (await sameFile(input, output))
        throw new SafetensorsError('InvalidArgument', `${output} is the input file: convert writes a new file, choose another output`)
      if (options.overwrite === false) await refuseExisting([output])
    }
    const names = f.names.filter((name) => only(name))
    if (names.length === 0 && f.names.length > 0)
      throw new SafetensorsError('InvalidArgument', `--only keeps none of the ${f.names.length} tensors of ${String(input)}`)
    if (sharded) await f.loadHeaders({ signal, onProgress: options.onHeaders })
    // The parts of quantized weights (scales, zero points...) are copied as they are: a cast
    // would change what the weights decode to (convert --dequantize decodes them instead).
    const parts = new Set()
    try {
      for (const q of await f.quantized({ signal })) for (const part of Object.values(q.parts)) parts.add(part)
    } catch (error) {
      // An inconsistent quantized checkpoint: its tensors are cast as plain ones.
      if (signal?.aborted) throw error
    }
    const infos = sharded ? await Promise.all(names.map((name) => f.info(name, { signal }))) : names.map((name) => f.info(name))
    for (const info of infos) reads.stored.set(info.name, info.byteLength)
    let cast = 0
    const entries = infos.map(({ name, dtype: from, shape, byteLength: inLength }) => {
      const to = CONVERTED_DTYPES.has(from) && !parts.has(name) ? dtype : from
      if (to !== from) cast++
      const elements = elementCount(shape)
      const byteLength = to === from ? inLength : (elements * DTYPE_BITS[to]) / 8
      return {
        name, dtype: to, shape, byteLength,
        /** @returns {AsyncGenerator<Uint8Array, void, void>} */
        async *chunks() {
          const t = await reads.take(name)
          if (t) {
            try {
              if (to === from) yield t.bytes
              else yield* castChunks(core, t.bytes, from, to, elements)
            } finally {
              t.dispose()
            }
            return
          }
          // Streamed through two heap buffers: a tensor larger than the heap converts too.
          for await (const { data } of f.chunks(name, { signal })) {
            const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
            if (to === from) yield bytes
            else yield* castChunks(core, bytes, from, to, (bytes.byteLength * 8) / DTYPE_BITS[from])
          }
        },
      }
    })
    throwIfAborted(signal)
    const summary = { tensors: names.length, cast, copied: names.length - cast, dropped: f.names.length - names.length }
    if (sharded) return { ...summary, ...await writeShardedSet(f, input, output, entries, options, reads.start) }
    const plan = await planFile(entries, f.metadata)
    reads.start(plan.order)
    await writePlanned(output, plan, { signal, onProgress: options.onProgress })
    return { ...summary, byteLength: plan.fileLength }
  } finally {
    reads.dispose()
    await f.close()
  }
}

/**
 * The reads ahead of a convert's writer (read-ahead.js), from a URL unless options.readAhead is
 * false: over HTTP each tensor read alone is a round trip. `stored` holds the tensors read as
 * they are stored (name to byteLength: the ones take() may give); start() takes the write order.
 * @param {import('./read-ahead.js').Reader} f @param {string | URL} input
 * @param {{ signal?: AbortSignal, readAhead?: { bytes?: number, batches?: number, batchBytes?: number } | false }} options
 */
function writerReads(f, input, options) {
  /** @type {ReturnType<typeof readAhead> | null} */
  let ahead = null
  /** @type {Map<string, number>} */
  const stored = new Map()
  return {
    stored,
    /** @param {OutEntry[]} order */
    start(order) {
      if (options.readAhead === false || !isRemote(input)) return
      const wanted = order.flatMap((e) => (stored.has(e.name) ? [{ name: e.name, byteLength: /** @type {number} */ (stored.get(e.name)) }] : []))
      ahead = readAhead(f, wanted, { ...options.readAhead, signal: options.signal })
    },
    /** @param {string} name @returns {Promise<import('../index.js').Tensor | null>} */
    take(name) { return ahead ? ahead.take(name) : Promise.resolve(null) },
    dispose() { ahead?.dispose() },
  }
}

/** Whether the input is read over the network (a URL or a Hub address), a round trip a read. @param {string | URL} input */
function isRemote(input) {
  return /^(https?|hf):/i.test(String(input))
}

/**
 * @typedef {{ name: string, dtype: string, shape: (number | bigint)[], byteLength: number,
 *   chunks: () => AsyncGenerator<Uint8Array, void, void> }} OutEntry
 */

/**
 * Writes a plain checkpoint from a quantized one: each quantized weight as its logical name,
 * dequantized and cast to `dtype`, its parts left out; every other tensor copied as it is.
 * A single file gives a file at `output`. A sharded set (its index) gives a new sharded set:
 * `output` is a folder (the index written there as model.safetensors.index.json) or the path
 * of the index to write (`*.index.json`); shards `<prefix>-0000i-of-0000n.safetensors` beside
 * it (prefix: the index's name before `.safetensors.index.json`), each at most as large as the
 * input's largest shard (a tensor larger than that alone in its shard), in the input's order;
 * the index (`metadata.total_size`: the tensors' bytes, `weight_map`) with them, the set moved in whole.
 * @param {string | URL} input
 * @param {string} output
 * @param {{ dtype: 'F32' | 'BF16' | 'F16', only?: (name: string) => boolean, signal?: AbortSignal,
 *   onProgress?: (p: { loaded: number, total: number }) => void, openOptions?: import('../open.js').OpenOptions,
 *   maxElements?: number, overwrite?: boolean, onHeaders?: (p: { loaded: number, total: number }) => void,
 *   readAhead?: { bytes?: number, batches?: number, batchBytes?: number } | false }} options
 *   only: which output tensors (by output name) to keep; maxElements: float32 values per piece read;
 *   overwrite: false to refuse an output file (the file, the index or a shard) that exists (default true);
 *   onHeaders, readAhead: as convertFile's (the tensors copied are read ahead, not the quantized weights)
 * @returns {Promise<{ tensors: number, dequantized: number, copied: number, parts: number, dropped: number,
 *   byteLength: number, shards: string[] | null, index: string | null }>}
 *   parts: stored tensors left out as parts; dropped: left out by `only`; shards, index: the files of a sharded output
 */
export async function dequantizeCheckpoint(input, output, options) {
  const { dtype, only = () => true, signal } = options
  if (!['F32', 'BF16', 'F16'].includes(dtype))
    throw new SafetensorsError('InvalidArgument', `cannot dequantize to ${JSON.stringify(dtype)}: the targets are F32, BF16, F16`)
  const core = await loadCore()
  const f = await open(input, { ...options.openOptions, signal })
  const reads = writerReads(f, input, options)
  try {
    const sharded = f instanceof ShardedFile
    if (sharded) await f.loadHeaders({ signal, onProgress: options.onHeaders })
    /** @type {import('../overview.js').QuantizedWeight[]} */
    const quantized = await f.quantized()
    /** @type {Map<string, import('../overview.js').QuantizedWeight>} */
    const partOf = new Map()
    for (const q of quantized) for (const part of Object.values(q.parts)) partOf.set(part, q)
    const infos = sharded ? await Promise.all(f.names.map((name) => f.info(name, { signal }))) : f.names.map((name) => f.info(name))
    /** @type {OutEntry[]} */
    const entries = []
    let parts = 0
    let dropped = 0
    let dequantized = 0
    const seen = new Set()
    for (const info of infos) {
      const q = partOf.get(info.name)
      if (q && seen.has(q.name)) {
        parts++
        continue
      }
      const name = q ? q.name : info.name
      if (q) {
        seen.add(q.name)
        parts++
      }
      if (!only(name)) {
        dropped++
        continue
      }
      if (q) {
        dequantized++
        entries.push({
          name, dtype, shape: q.shape, byteLength: (elementCount(q.shape) * DTYPE_BITS[dtype]) / 8,
          async *chunks() {
            for await (const t of dequantizedPieces(f, q, { signal, maxElements: options.maxElements })) {
              try {
                yield* castChunks(core, t.bytes, 'F32', dtype, t.elementCount)
              } finally {
                t.dispose()
              }
            }
          },
        })
      } else {
        reads.stored.set(name, info.byteLength)
        entries.push({
          name, dtype: info.dtype, shape: info.shape, byteLength: info.byteLength,
          async *chunks() {
            const t = (await reads.take(name)) ?? await f.tensor(name, { signal })
            try {
              yield t.bytes
            } finally {
              t.dispose()
            }
          },
        })
      }
    }
    if (entries.length === 0 && infos.length > 0)
      throw new SafetensorsError('InvalidArgument', `--only keeps none of the tensors of ${String(input)}`)
    const names = new Set()
    for (const e of entries) {
      // A logical name the checkpoint also stores as a plain tensor: two tensors of one name.
      if (names.has(e.name))
        throw new SafetensorsError('InvalidArgument', `the dequantized weight ${JSON.stringify(e.name)} has the name of another tensor of ${String(input)}`, { tensor: e.name })
      names.add(e.name)
    }
    const summary = { tensors: entries.length, dequantized, copied: entries.length - dequantized, parts, dropped }
    if (!sharded) {
      if (await sameFile(input, output))
        throw new SafetensorsError('InvalidArgument', `${output} is the input file: convert writes a new file, choose another output`)
      if (options.overwrite === false) await refuseExisting([output])
      throwIfAborted(signal)
      const plan = await planFile(entries, f.metadata)
      reads.start(plan.order)
      await writePlanned(output, plan, { signal, onProgress: options.onProgress })
      return { ...summary, byteLength: plan.fileLength, shards: null, index: null }
    }
    return { ...summary, ...await writeShardedSet(/** @type {ShardedFile} */ (f), input, output, entries, options, reads.start) }
  } finally {
    reads.dispose()
    await f.close()
  }
}

/**
 * The sharded half of convertFile and dequantizeCheckpoint: groups `entries` into shards, each at
 * most as large as the input's largest, writes them and the index in a staging folder, then moves
 * the set in whole (staging.js). A shard or index of the output that is a symbolic link: refused.
 * @param {ShardedFile} f
 * @param {string | URL} input
 * @param {string} output
 * @param {OutEntry[]} entries
 * @param {{ signal?: AbortSignal, onProgress?: (p: { loaded: number, total: number }) => void, overwrite?: boolean }} options
 * @param {(order: OutEntry[]) => void} [beforeWrite] told the order the entries are written in
 * @returns {Promise<{ byteLength: number, shards: string[], index: string }>}
 */
async function writeShardedSet(f, input, output, entries, options, beforeWrite) {
  const { signal } = options
  if (/\.safetensors$/i.test(output))
    throw new SafetensorsError('InvalidArgument', `${String(input)} is a sharded set: its output is a folder or a *.index.json path, not ${output}`)
  const index = /\.index\.json$/i.test(output) ? output : join(output, 'model.safetensors.index.json')
  const folder = dirname(index)
  const prefix = basename(index).replace(/(\.safetensors)?\.index\.json$/i, '') || 'model'
  const inputShards = await Promise.all(f.shards.map((path) => f.shard(path, { signal })))
  const limit = Math.max(1, ...inputShards.map((s) => s.byteLength))
  /** @type {OutEntry[][]} */
  const groups = []
  let size = 0
  for (const e of entries) {
    if (groups.length === 0 || (size > 0 && size + e.byteLength > limit)) {
      groups.push([])
      size = 0
    }
    groups[groups.length - 1].push(e)
    size += e.byteLength
  }
  const width = Math.max(5, String(groups.length).length)
  const shardNames = groups.map((_, i) => `${prefix}-${String(i + 1).padStart(width, '0')}-of-${String(groups.length).padStart(width, '0')}.safetensors`)
  // Never over the input: not its index, not one of its shards (the same name in the same
  // folder, a link to one, a hard link).
  const local = typeof input === 'string' && !/^[a-z][a-z0-9+.-]*:\/\//i.test(input)
  const inputs = local ? [input, ...f.shards.map((path) => join(dirname(input), path))] : []
  if (local) {
    for (const out of [index, ...shardNames.map((name) => join(folder, name))]) {
      for (const file of inputs) {
        if (await sameFile(file, out))
          throw new SafetensorsError('InvalidArgument', `${out} is a file of the input set: convert writes a new set, choose another output folder`)
      }
    }
  }
  if (options.overwrite === false) await refuseExisting([index, ...shardNames.map((name) => join(folder, name))])
  const first = JSON.stringify(inputShards[0]?.metadata ?? null)
  const metadata = inputShards.every((s) => JSON.stringify(s.metadata) === first) ? inputShards[0]?.metadata ?? null : null
  const plans = await Promise.all(groups.map((group) => planFile(group, metadata)))
  const total = plans.reduce((n, p) => n + p.fileLength, 0)
  /** @type {Record<string, string>} */
  const weightMap = {}
  const all = groups.flatMap((group, i) => group.map((e) => /** @type {[string, string]} */ ([e.name, shardNames[i]])))
  for (const [name, shard] of all.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))) weightMap[name] = shard
  const totalSize = entries.reduce((n, e) => n + e.byteLength, 0)
  const doc = { metadata: { ...(f.metadata ?? {}), total_size: totalSize }, weight_map: weightMap }
  /** @param {Error} error @returns {never} */
  const cannotWrite = (error) => {
    throw new SafetensorsError('IoError', `cannot write in ${folder}: ${error.message}`, { cause: error })
  }
  await mkdir(folder, { recursive: true }).catch(cannotWrite)
  await refuseLinks([index, ...shardNames.map((name) => join(folder, name))])
  await removeStaleStaging(folder)
  // The whole set is written in a staging folder beside it, then moved in (commitSet): until
  // then an older set there is untouched, and a failure or a kill leaves no shard of this one.
  const stage = await makeStaging(folder).catch(cannotWrite)
  try {
    beforeWrite?.(plans.flatMap((plan) => plan.order))
    let before = 0
    for (const [i, plan] of plans.entries()) {
      throwIfAborted(signal)
      const at = before
      await writePlanned(join(stage, shardNames[i]), plan, {
        signal, onProgress: options.onProgress && (({ loaded }) => options.onProgress?.({ loaded: at + loaded, total })),
      })
      before += plan.fileLength
    }
    throwIfAborted(signal)
    await writeSynced(join(stage, basename(index)), `${JSON.stringify(doc, null, 2)}\n`)
    // The old set's shards, read from its index before the new one replaces it: those the new
    // set does not replace are removed once it is in (a kill in between leaves them, unnamed).
    const old = await oldShards(index)
    await commitSet(stage, index, shardNames)
    await removeOldShards(index, old, shardNames, inputs)
  } catch (error) {
    if (error instanceof SafetensorsError) throw error
    throw new SafetensorsError('IoError', `cannot write ${index}: ${/** @type {Error} */ (error).message}`, { cause: error })
  } finally {
    await removeStaging(stage)
  }
  return { byteLength: total, shards: shardNames, index }
}

/**
 * Refuses to write where a file is (through a link: where its target is; a link to nothing is
 * written through, as writeFile does): InvalidArgument naming the first, and --force.
 * @param {string[]} paths
 */
async function refuseExisting(paths) {
  for (const path of paths) {
    if (await stat(path).then(() => true, () => false)) {
      throw new SafetensorsError('InvalidArgument', `${path} exists: convert does not replace a file unless --force ` +
        '(choose another output, or pass --force to replace it)')
    }
  }
}

/** Whether `output` is the file `input` names (the same path, a link to it, a hard link).
 * @param {string | URL} input @param {string} output */
async function sameFile(input, output) {
  if (typeof input !== 'string' || /^[a-z][a-z0-9+.-]*:\/\//i.test(input)) return false
  const [a, b] = await Promise.all([stat(input).catch(() => null), stat(output).catch(() => null)])
  return a !== null && b !== null && a.dev === b.dev && a.ino === b.ino
}

export const usage = 'convert <in> <out> --dtype bf16|f16|f32 [--only PATTERN]... [--dequantize [--config FILE]] [--force]   cast F64/F32/F16/BF16 tensors, copy the others, one at a time;\n' +
  '      --dequantize: quantized weights by logical name, dequantized to the dtype (parts left out), the rest copied;\n' +
  '      a sharded input (index.json) gives a new sharded set in <out> (a folder, or the *.index.json to write)'

export const options = /** @type {const} */ ({
  dtype: { type: 'string' },
  only: { type: 'string', multiple: true },
  dequantize: { type: 'boolean' },
  force: { type: 'boolean' },
  ...CONFIG_OPTIONS,
})

/** A line each for --help. @type {import('./common.js').OptionHelp[]} */
export const optionHelp = [
  ['--dtype bf16|f16|f32', 'the dtype of F64, F32, F16 and BF16 tensors (required)'],
  ['--only PATTERN', 'keep the tensors matching a glob or a /regex/ (repeatable)'],
  ['--dequantize', 'quantized weights dequantized, by logical name'],
  ['--force', 'replace an output that exists (never the input)'],
  ...CONFIG_OPTION_HELP,
]

/** What --help adds. */
export const help = `a glob's * is any run of characters (dots included), ? one character; a /regex/ is searched
anywhere in the name, in linear time: backreferences, lookarounds, the u flag and counts over 16
are refused. Tensors of other dtypes (ints, BOOL, C64, F8, F6, F4), and the parts of
quantized weights, are copied as they are. The input is never written over (by its path, a link
or a hard link), nor an existing output without --force.

${CONFIG_NOTE}

the output is written to a temporary file beside it and renamed at the end: an interrupted
or failed convert leaves no partial file, and an existing output (with --force) is replaced whole.
a sharded output is written whole in a staging folder inside <out> and moved in at the end:
killed at any moment, <out> holds the old set, the new one, or no index, never a mix.
an older set's shards the new one does not replace are removed once its index is in.
exit codes: 0 written; 1 a failure (the error on stderr; nothing written); 2 a usage mistake;
130 interrupted`

/**
 * The command: `argv` is what follows its name. Prints a one-line summary (or, with --json,
 * `{ output, tensors, cast, copied, dropped, byteLength }`). Returns the exit code; usage
 * mistakes are thrown as usage errors (exit 2), failures propagate (exit 1); an interrupt
 * (SIGINT, SIGTERM) removes the partial output and gives 130.
 * @param {string[]} argv
 * @param {import('./common.js').Io} io
 */
export async function main(argv, io) {
  const { args, flags } = parseCommand(argv, options)
  if (args.length !== 2) throw usageError('convert takes an input and an output')
  const dtype = /** @type {string | undefined} */ (flags.dtype)
  if (dtype === undefined) throw usageError('convert needs --dtype bf16, f16 or f32')
  const target = dtype.toUpperCase()
  if (target !== 'BF16' && target !== 'F16' && target !== 'F32') throw usageError(`--dtype ${dtype}: use bf16, f16 or f32`)
  const only = onlyFilter(flags.only)
  const [input, output] = args
  const { quantization } = await quantizationConfig(input, flags)
  const opening = { ...openOptions(input, flags), ...(quantization === undefined ? {} : { quantization }) }
  const controller = new AbortController()
  // The first interrupt stops the conversion where it is, which removes the partial output; a
  // second one (the flush of a large file can take a while) removes it at once and exits.
  let interrupts = 0
  const interrupt = () => {
    if (interrupts++ === 0) return void controller.abort()
    removeTempFilesSync()
    removeStagingSync()
    io.stderr.write(`interrupted: ${escapeInvisible(output)} was not written\n`)
    process.exit(130)
  }
  process.on('SIGINT', interrupt)
  process.on('SIGTERM', interrupt)
  const headerBar = progressBar(io, flags, 'shard headers', 'count')
  const bar = progressBar(io, flags, 'converting')
  try {
    const common = {
      dtype: /** @type {'F32' | 'BF16' | 'F16'} */ (target), signal: controller.signal, openOptions: opening, overwrite: Boolean(flags.force),
      only,
      onHeaders: (/** @type {{ loaded: number, total: number }} */ p) => {
        headerBar.update(p.loaded, p.total)
        if (p.loaded === p.total) headerBar.done()
      },
      onProgress: (/** @type {{ loaded: number, total: number }} */ p) => bar.update(p.loaded, p.total),
    }
    if (flags.dequantize) {
      const r = await dequantizeCheckpoint(input, output, common)
      bar.done()
      if (flags.json) io.stdout.write(`${JSON.stringify({ output, ...r }, null, 2)}\n`)
      else {
        const where = `${escapeInvisible(r.index ?? output)}: ${r.shards ? `${r.shards.length} ${r.shards.length === 1 ? 'shard' : 'shards'}, ` : ''}`
        io.stdout.write(`${where}${r.tensors} tensors (${r.dequantized} quantized ${r.dequantized === 1 ? 'weight' : 'weights'} ` +
          `dequantized to ${target} from their ${r.parts} stored parts, ${r.copied} copied${r.dropped ? `, ${r.dropped} left out by --only` : ''}), ${r.byteLength} bytes\n`)
        if (r.dequantized === 0) io.stderr.write(`note: ${escapeInvisible(redactUrl(input))} has no quantized weights: every tensor was copied\n`)
      }
      return 0
    }
    const r = await convertFile(input, output, common)
    bar.done()
    if (flags.json) io.stdout.write(`${JSON.stringify({ output, ...r }, null, 2)}\n`)
    else {
      const where = `${escapeInvisible(r.index ?? output)}: ${r.shards ? `${r.shards.length} ${r.shards.length === 1 ? 'shard' : 'shards'}, ` : ''}`
      io.stdout.write(`${where}${r.tensors} tensors (${r.cast} cast to ${target}, ${r.copied} copied${r.dropped ? `, ${r.dropped} left out` : ''}), ${r.byteLength} bytes\n`)
    }
    return 0
  } catch (error) {
    headerBar.done()
    bar.done()
    if (!controller.signal.aborted) throw error
    io.stderr.write(`interrupted: ${escapeInvisible(output)} was not written\n`)
    return 130
  } finally {
    process.off('SIGINT', interrupt)
    process.off('SIGTERM', interrupt)
  }
}

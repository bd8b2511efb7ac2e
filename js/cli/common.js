/**
 * What the CLI commands share: argument parsing, opening a source (path, URL, hf:// address or
 * index, with -H headers, --token and --endpoint), the tensor list of a single or sharded file,
 * the progress bar, error lines.
 */
import { readFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { parseArgs } from 'node:util'
import { SafetensorsError, ShardedFile, open } from '../node.js'
import { formatBytes } from '../format.js'
import { pool } from '../io/pool.js'
import { overview } from '../overview.js'
import { namePattern } from './name-pattern.js'

export { namePattern }

/**
 * @typedef {import('../node.js').SafetensorsFile} SafetensorsFile
 * @typedef {import('../overview.js').Row} Row  a tensor (byteOffset: within its shard when sharded)
 * @typedef {{ json: boolean, quiet: boolean, header: string[], token?: string, endpoint?: string, cache?: boolean,
 *   config?: string, 'no-config'?: boolean }} CommonFlags  config, no-config: for the commands taking CONFIG_OPTIONS
 * @typedef {{ stdout: NodeJS.WritableStream & { isTTY?: boolean },
 *   stderr: NodeJS.WritableStream & { isTTY?: boolean, columns?: number } }} Io
 */

/**
 * Shard headers read at once: what loadHeaders reads at once in Node (js/sharded.js), given to
 * it, and used when finding which shards fail.
 */
export const SHARD_CONCURRENCY = 256

/** Options every command takes (node:util parseArgs form). */
export const COMMON_OPTIONS = /** @type {const} */ ({
  json: { type: 'boolean' },
  quiet: { type: 'boolean', short: 'q' },
  header: { type: 'string', short: 'H', multiple: true },
  token: { type: 'string' },
  endpoint: { type: 'string' },
  cache: { type: 'boolean' },
})

/** The options of the commands that read quantized weights (inspect, stats, convert). */
export const CONFIG_OPTIONS = /** @type {const} */ ({
  config: { type: 'string' },
  'no-config': { type: 'boolean' },
})

/**
 * @typedef {[string, string]} OptionHelp  an option as --help shows it, and what it does
 */

/** What --help says of the options every command takes, a line each. @type {OptionHelp[]} */
export const COMMON_OPTION_HELP = [
  ['--json', 'output for scripts, on stdout (progress and errors stay on stderr)'],
  ['--quiet, -q', 'no progress bar'],
  ["-H, --header 'Name: value'", 'an HTTP header for URL sources (repeatable), e.g. Authorization'],
  ['--token TOKEN', 'a Hub access token for hf:// sources (default: $HF_TOKEN)'],
  ['--endpoint URL', 'the Hub for hf:// sources (default: $HF_ENDPOINT, else huggingface.co)'],
  ['--cache', 'keep remote headers and indexes; a next run revalidates them (304)'],
  ['--help, -h', 'this help'],
]

/** What --help says of CONFIG_OPTIONS. @type {OptionHelp[]} */
export const CONFIG_OPTION_HELP = [
  ['--config FILE', "the model's config.json, for quantized weights (default: see below)"],
  ['--no-config', 'do not read the config.json beside the file'],
]

/** What they do, in more words. */
export const CONFIG_NOTE = `--config: the model's config.json (or its quantization_config alone): the block size, bits,
group size and format it fixes are used and checked. Default: the config.json beside a local
file or index, when it has a quantization_config; URLs and hf:// addresses: none.`

/**
 * Options as --help lists them: a line each, the descriptions in one column.
 * @param {OptionHelp[]} list
 */
export function optionLines(list) {
  return list.map(([flag, text]) => `${`  ${flag}`.padEnd(29)} ${text}`).join('\n')
}

/** What the global --help says of the quantization options. */
export const CONFIG_HELP = `quantized checkpoints (inspect, stats, convert):\n${optionLines(CONFIG_OPTION_HELP)}\n\n${CONFIG_NOTE}`

/**
 * Parses a command's arguments: its own options plus --json, --quiet and -H/--header. Unknown
 * options and missing values are usage errors.
 * @param {string[]} argv what follows the command's name
 * @param {Record<string, { type: 'string' | 'boolean', short?: string, multiple?: boolean }>} options
 * @returns {{ args: string[], flags: Record<string, any> & CommonFlags }}
 */
export function parseCommand(argv, options) {
  let parsed
  try {
    parsed = parseArgs({ args: argv, options: { ...COMMON_OPTIONS, ...options }, allowPositionals: true, strict: true })
  } catch (error) {
    throw usageError(/** @type {Error} */ (error).message)
  }
  const v = /** @type {Record<string, any>} */ (parsed.values)
  return { args: parsed.positionals, flags: { ...v, json: v.json ?? false, quiet: v.quiet ?? false, header: v.header ?? [] } }
}

/**
 * `-H 'Name: value'` flags as a headers object (for URL sources).
 * @param {string[]} list
 * @returns {Record<string, string>}
 */
export function parseHeaders(list) {
  /** @type {Record<string, string>} */
  const headers = {}
  for (const h of list) {
    const colon = h.indexOf(':')
    if (colon <= 0) throw usageError(`--header takes "Name: value", got ${JSON.stringify(h)}`)
    headers[h.slice(0, colon).trim()] = h.slice(colon + 1).trim()
  }
  return headers
}

/**
 * What `open` takes from the common flags: the -H headers and, for an hf:// address, --token and
 * --endpoint (when absent, open itself falls back on HF_TOKEN and HF_ENDPOINT). Those two are
 * refused for other sources rather than ignored: a token given for a URL would not be sent.
 * @param {string} src
 * @param {CommonFlags} flags
 * @returns {import('../open.js').OpenOptions}
 */
export function openOptions(src, flags) {
  /** @type {import('../open.js').OpenOptions} */
  const options = { headers: parseHeaders(flags.header) }
  // The open option's default folder ($XDG_CACHE_HOME/safetensors-wasm, ...), as a script's `cache: true`.
  if (flags.cache) options.cache = true
  if (flags.token === undefined && flags.endpoint === undefined) return options
  if (!/^hf:\/\//i.test(src)) {
    throw usageError(`--token and --endpoint are for hf:// addresses, not ${JSON.stringify(src)}; ` +
      "for a URL, pass -H 'Authorization: Bearer ...'")
  }
  if (flags.endpoint !== undefined) {
    let url = null
    try { url = new URL(flags.endpoint) } catch { url = null }
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:'))
      throw usageError(`--endpoint takes the Hub's http(s) URL, such as https://huggingface.co, got ${JSON.stringify(flags.endpoint)}`)
    options.endpoint = flags.endpoint
  }
  if (flags.token !== undefined) options.token = flags.token
  return options
}

/**
 * The `quantization` option of open: the JSON of --config, else for a local path (a file or an
 * index) the config.json in its folder when there is one with a `quantization_config`, else
 * none. `path` says which file it came from. An unreadable --config fails (NotFound, or
 * InvalidArgument for bad JSON); an unreadable config.json found beside the file is ignored.
 * @param {string} src
 * @param {CommonFlags} flags
 * @returns {Promise<{ quantization?: Record<string, unknown>, path: string | null }>}
 */
export async function quantizationConfig(src, flags) {
  if (flags.config !== undefined) {
    if (flags['no-config']) throw usageError('--config and --no-config together')
    let text
    try {
      text = await readFile(flags.config, 'utf8')
    } catch (error) {
      const code = /** @type {any} */ (error)?.code === 'ENOENT' ? 'NotFound' : 'IoError'
      throw new SafetensorsError(code, `--config ${flags.config}: ${/** @type {Error} */ (error).message}`, { cause: error })
    }
    let config
    try {
      config = JSON.parse(text)
    } catch (error) {
      throw new SafetensorsError('InvalidArgument', `--config ${flags.config} is not JSON: ${/** @type {Error} */ (error).message}`)
    }
    if (config === null || typeof config !== 'object' || Array.isArray(config))
      throw new SafetensorsError('InvalidArgument', `--config ${flags.config} holds no JSON object (a config.json or its quantization_config)`)
    return { quantization: config, path: flags.config }
  }
  if (flags['no-config'] || /^[a-z][a-z0-9+.-]*:\/\//i.test(src)) return { path: null }
  const path = join(dirname(src), 'config.json')
  try {
    const config = JSON.parse(await readFile(path, 'utf8'))
    if (config && typeof config === 'object' && config.quantization_config && typeof config.quantization_config === 'object')
      return { quantization: config, path }
  } catch {
    // None there, or not JSON: a checkpoint is read without it.
  }
  return { path: null }
}

/**
 * The tensors the --only flags keep (a tensor matching any of the patterns), or undefined for
 * all of them when none is given. A pattern that is no valid /regex/ is a usage error.
 * @param {string[] | undefined} patterns
 * @returns {((name: string) => boolean) | undefined}
 */
export function onlyFilter(patterns) {
  /** @type {((name: string) => boolean)[]} */
  const filters = []
  for (const p of patterns ?? []) {
    try {
      filters.push(namePattern(p))
    } catch (error) {
      throw usageError(`--only ${p}: ${/** @type {Error} */ (error).message}`)
    }
  }
  return filters.length ? (name) => filters.some((match) => match(name)) : undefined
}

/** @param {string} message */
export function usageError(message) {
  return Object.assign(new Error(message), { usage: true })
}

/**
 * Opens a path, URL, hf:// address or `*.index.json`, with the quantization config of --config
 * or the config.json beside it (quantizationConfig; `config` is its path, or null). For a
 * sharded set, every shard header is read (loadHeaders: bounded concurrency, a progress line
 * counting shards when stderr is a terminal) so that the whole table is known. A shard that
 * cannot be read fails the open, unless `options.partial`: then the index is kept, and
 * `failures` lists each shard that could not be read with its error (the others are loaded).
 * @param {string} src
 * @param {CommonFlags} flags
 * @param {Io} io
 * @param {{ partial?: boolean }} [options]
 * @returns {Promise<{ file: SafetensorsFile | ShardedFile, close: () => Promise<void>, config: string | null,
 *   failures: ShardFailure[] }>}
 */
export async function openForCli(src, flags, io, options = {}) {
  const { quantization, path: config } = await quantizationConfig(src, flags)
  const f = await open(src, { ...openOptions(src, flags), ...(quantization === undefined ? {} : { quantization }) })
  if (!(f instanceof ShardedFile)) return { file: f, close: () => f.close(), config, failures: [] }
  const bar = progressBar(io, flags, 'shard headers', 'count')
  try {
    const failures = await loadShardHeaders(f, bar, options.partial ?? false)
    return { file: f, close: () => f.close(), config, failures }
  } catch (error) {
    await f.close()
    throw error
  } finally {
    bar.done()
  }
}

/**
 * @typedef {{ shard: string, error: SafetensorsError }} ShardFailure  a shard that could not be read
 */

/**
 * A failure that belongs to one shard (not there, unreachable, not a safetensors file), as
 * opposed to the whole command's (aborted, closed, a bug).
 * @param {unknown} error
 * @returns {error is SafetensorsError}
 */
function isShardFailure(error) {
  return error instanceof SafetensorsError && error.code !== 'Aborted' && error.code !== 'Closed'
}

/**
 * Every shard header, through loadHeaders. When a shard fails and `partial` is set, each shard
 * not yet loaded is then opened on its own (the loaded ones answer at once), so that every
 * failing shard is known, not only the first: those are returned, in index order.
 * @param {ShardedFile} f
 * @param {ReturnType<typeof progressBar>} bar
 * @param {boolean} partial
 * @returns {Promise<ShardFailure[]>}
 */
export async function loadShardHeaders(f, bar, partial) {
  try {
    await f.loadHeaders({ concurrency: SHARD_CONCURRENCY, onProgress: ({ loaded, total }) => bar.update(loaded, total) })
    return []
  } catch (error) {
    if (!partial || !isShardFailure(error)) throw error
  }
  const paths = f.shards
  /** @type {(SafetensorsError | null)[]} */
  const errors = paths.map(() => null)
  let done = 0
  await pool(paths.map((_, i) => i), SHARD_CONCURRENCY, undefined, async (i) => {
    try {
      await f.shard(paths[i])
    } catch (error) {
      if (!isShardFailure(error)) throw error
      errors[i] = error
    }
    bar.update(++done, paths.length)
  })
  return paths.flatMap((shard, i) => {
    const error = errors[i]
    return error ? [{ shard, error }] : []
  })
}

/**
 * Every tensor with its table entry: in file order, or for a sharded set in index order (grouped
 * by shard, `shard` set). A name the index puts in a shard whose header lacks it is TensorNotFound.
 * @param {SafetensorsFile | ShardedFile} f
 * @returns {Promise<Row[]>}
 */
export async function tensorRows(f) {
  return (await overview(f)).rows
}

/**
 * The progress line shown on a terminal's stderr during long reads: nothing when stderr is not
 * a terminal, or with --quiet or --json. It appears only after 200 ms, so quick reads never
 * flicker, and is erased when done.
 * @param {Io} io
 * @param {{ quiet: boolean, json: boolean }} flags
 * @param {string} label
 * @param {'bytes' | 'count'} [unit]
 */
export function progressBar(io, flags, label, unit = 'bytes') {
  const stream = io.stderr
  const enabled = Boolean(stream.isTTY) && !flags.quiet && !flags.json
  const start = Date.now()
  let last = 0
  let shown = false
  return {
    /** @param {number} loaded @param {number} total */
    update(loaded, total) {
      if (!enabled) return
      const now = Date.now()
      if (now - start < 200 || (now - last < 80 && loaded < total)) return
      last = now
      shown = true
      stream.write(`\r\x1b[K${renderProgress(label, loaded, total, stream.columns || 80, unit, now - start)}`)
    },
    done() {
      if (shown) stream.write('\r\x1b[K')
      shown = false
    },
  }
}

/**
 * One progress line, at most `columns` wide:
 * `label [#####-----]  42%  1.20 MB / 2.86 MB  3.10 MB/s  1s left`. The rate (the average since
 * the start) and the time left are shown once `elapsed` (ms) is known and something was read;
 * they are left out first when the terminal is narrow.
 * @param {string} label @param {number} loaded @param {number} total @param {number} columns
 * @param {'bytes' | 'count'} [unit]
 * @param {number} [elapsed] ms since the start
 */
export function renderProgress(label, loaded, total, columns, unit = 'bytes', elapsed = 0) {
  const fraction = total > 0 ? Math.min(1, loaded / total) : 1
  const amounts = unit === 'bytes' ? `${formatBytes(loaded)} / ${formatBytes(total)}` : `${loaded} / ${total}`
  let tail = ` ${String(Math.floor(fraction * 100)).padStart(3)}%  ${amounts}`
  if (elapsed > 0 && loaded > 0) {
    const rate = (loaded * 1000) / elapsed
    const speed = unit === 'bytes' ? `${formatBytes(Math.round(rate))}/s` : `${rate >= 10 ? Math.round(rate) : rate.toFixed(1)}/s`
    const left = loaded < total ? `  ${formatDuration((total - loaded) / rate)} left` : ''
    const full = `${tail}  ${speed}${left}`
    if (label.length + full.length + 14 <= columns) tail = full
  }
  const width = Math.max(10, Math.min(40, columns - label.length - tail.length - 4))
  const filled = Math.round(fraction * width)
  return `${label} [${'#'.repeat(filled)}${'-'.repeat(width - filled)}]${tail}`.slice(0, Math.max(1, columns - 1))
}

/** `45s`, `3m 05s`, `2h 07m`. @param {number} seconds */
export function formatDuration(seconds) {
  const s = Math.max(0, Math.ceil(seconds))
  if (s < 60) return `${s}s`
  if (s < 3600) return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`
  return `${Math.floor(s / 3600)}h ${String(Math.floor(s / 60) % 60).padStart(2, '0')}m`
}

/**
 * The one-line description of a failure: `InvalidOffset (tensor "x", byte 12): message`.
 * @param {unknown} error
 */
export function describeFailure(error) {
  if (!(error instanceof SafetensorsError)) return `${/** @type {Error} */ (error)?.message ?? error}`
  const where = [error.tensor !== null ? `tensor ${JSON.stringify(error.tensor)}` : '',
    error.offset !== null ? `byte ${error.offset}` : ''].filter(Boolean).join(', ')
  return `${error.code}${where ? ` (${where})` : ''}: ${error.message}`
}

/** @param {unknown} error @returns {{ code: string, message: string, tensor: string | null, offset: number | null }} */
export function errorJson(error) {
  if (error instanceof SafetensorsError) return { code: error.code, message: error.message, tensor: error.tensor, offset: error.offset }
  return { code: 'Error', message: String(/** @type {Error} */ (error)?.message ?? error), tensor: null, offset: null }
}

/** Shapes as JSON: dimensions above 2^53 (BigInt) as strings. @param {any[]} shape */
export function shapeJson(shape) {
  return shape.map((d) => (typeof d === 'bigint' ? d.toString() : d))
}

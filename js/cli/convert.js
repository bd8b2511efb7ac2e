/**
 * `safetensors-wasm convert <in> <out> --dtype bf16|f16|f32 [--only PATTERN]... [-H 'Name: value']`
 *
 * Streams tensor by tensor, so a file larger than memory converts in bounded memory: the
 * output's header is planned from the input's table alone, then each tensor, in the output's
 * order, is read into the wasm heap, cast chunk by chunk into a small scratch buffer, written,
 * and freed. Peak memory: the largest tensor plus a few MiB of scratch, whatever the file size.
 * The output goes through a temporary file renamed over <out> at the end (as writeFile does).
 */
import { stat } from 'node:fs/promises'
import { castChunks } from '../cast.js'
import { openOptions, parseCommand, progressBar, usageError } from './common.js'
import { SafetensorsError, throwIfAborted } from '../errors.js'
import { SafetensorsFile, open } from '../node.js'
import { removeTempFilesSync, writePlanned } from '../io/node-write.js'
import { loadCore } from '../wasm.js'
import { DTYPE_BITS, elementCount } from '../dtypes.js'
import { planFile } from '../writer.js'

/** The float dtypes convert casts; every other tensor (ints, BOOL, C64, F8, F6, F4) is copied. */
export const CONVERTED_DTYPES = new Set(['F64', 'F32', 'F16', 'BF16'])

/**
 * A name filter. `/source/flags` is a JavaScript regular expression, searched anywhere in the
 * name (anchor it with ^ and $ to match whole names); anything else is a glob matched against
 * the whole name, where `*` is any run of characters (dots included) and `?` any one character.
 * @param {string} pattern
 * @returns {(name: string) => boolean}
 */
export function namePattern(pattern) {
  const regex = /^\/(.*)\/([a-z]*)$/s.exec(pattern)
  if (regex) {
    const re = new RegExp(regex[1], regex[2].replace(/[gy]/g, ''))
    return (name) => re.test(name)
  }
  const source = Array.from(pattern, (c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[\\^$.|+(){}[\]]/g, '\\$&'))).join('')
  const re = new RegExp(`^${source}$`, 'su')
  return (name) => re.test(name)
}

/**
 * Converts a safetensors file (a path or a URL) to a new file at `output`.
 * @param {string | URL} input
 * @param {string} output
 * @param {{ dtype: 'F32' | 'BF16' | 'F16', only?: (name: string) => boolean, signal?: AbortSignal,
 *   onProgress?: (p: { loaded: number, total: number }) => void, openOptions?: import('../open.js').OpenOptions }} options
 *   only: which tensors to keep (default: all); onProgress: after the header and every chunk written
 * @returns {Promise<{ tensors: number, cast: number, copied: number, dropped: number, byteLength: number }>}
 */
export async function convertFile(input, output, options) {
  const { dtype, only = () => true, signal } = options
  if (!['F32', 'BF16', 'F16'].includes(dtype))
    throw new SafetensorsError('InvalidArgument', `cannot convert to ${JSON.stringify(dtype)}: the targets are F32, BF16, F16`)
  if (await sameFile(input, output))
    throw new SafetensorsError('InvalidArgument', `${output} is the input file: convert writes a new file, choose another output`)
  const core = await loadCore()
  const f = await open(input, { ...options.openOptions, signal })
  try {
    if (!(f instanceof SafetensorsFile))
      throw new SafetensorsError('InvalidArgument', `${String(input)} is a sharded index: convert its shards one by one`)
    const names = f.names.filter((name) => only(name))
    if (names.length === 0 && f.names.length > 0)
      throw new SafetensorsError('InvalidArgument', `--only keeps none of the ${f.names.length} tensors of ${String(input)}`)
    let cast = 0
    const entries = names.map((name) => {
      const { dtype: from, shape, byteLength: inLength } = f.info(name)
      const to = CONVERTED_DTYPES.has(from) ? dtype : from
      if (to !== from) cast++
      const elements = elementCount(shape)
      const byteLength = to === from ? inLength : (elements * DTYPE_BITS[to]) / 8
      return {
        name, dtype: to, shape, byteLength,
        /** @returns {AsyncGenerator<Uint8Array, void, void>} */
        async *chunks() {
          const t = await f.tensor(name, { signal })
          try {
            if (to === from) yield t.bytes
            else yield* castChunks(core, t.bytes, from, to, elements)
          } finally {
            t.dispose()
          }
        },
      }
    })
    throwIfAborted(signal)
    const plan = await planFile(entries, f.metadata)
    await writePlanned(output, plan, { signal, onProgress: options.onProgress })
    return { tensors: names.length, cast, copied: names.length - cast, dropped: f.names.length - names.length, byteLength: plan.fileLength }
  } finally {
    await f.close()
  }
}

/** Whether `output` is the file `input` names (the same path, a link to it, a hard link).
 * @param {string | URL} input @param {string} output */
async function sameFile(input, output) {
  if (typeof input !== 'string' || /^[a-z][a-z0-9+.-]*:\/\//i.test(input)) return false
  const [a, b] = await Promise.all([stat(input).catch(() => null), stat(output).catch(() => null)])
  return a !== null && b !== null && a.dev === b.dev && a.ino === b.ino
}

export const usage = 'convert <in> <out> --dtype bf16|f16|f32 [--only PATTERN]...   cast F64/F32/F16/BF16 tensors, copy the others, one at a time'

const options = /** @type {const} */ ({
  dtype: { type: 'string' },
  only: { type: 'string', multiple: true },
})

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
  /** @type {((name: string) => boolean)[]} */
  const filters = []
  for (const p of /** @type {string[]} */ (flags.only ?? [])) {
    try {
      filters.push(namePattern(p))
    } catch (error) {
      throw usageError(`--only ${p}: ${/** @type {Error} */ (error).message}`)
    }
  }
  const [input, output] = args
  const opening = openOptions(input, flags)
  const controller = new AbortController()
  // The first interrupt stops the conversion where it is, which removes the partial output; a
  // second one (the flush of a large file can take a while) removes it at once and exits.
  let interrupts = 0
  const interrupt = () => {
    if (interrupts++ === 0) return void controller.abort()
    removeTempFilesSync()
    io.stderr.write(`interrupted: ${output} was not written\n`)
    process.exit(130)
  }
  process.on('SIGINT', interrupt)
  process.on('SIGTERM', interrupt)
  const bar = progressBar(io, flags, 'converting')
  try {
    const r = await convertFile(input, output, {
      dtype: target, signal: controller.signal, openOptions: opening,
      only: filters.length ? (name) => filters.some((match) => match(name)) : undefined,
      onProgress: (p) => bar.update(p.loaded, p.total),
    })
    bar.done()
    if (flags.json) io.stdout.write(`${JSON.stringify({ output, ...r }, null, 2)}\n`)
    else io.stdout.write(`${output}: ${r.tensors} tensors (${r.cast} cast to ${target}, ${r.copied} copied${r.dropped ? `, ${r.dropped} left out` : ''}), ${r.byteLength} bytes\n`)
    return 0
  } catch (error) {
    bar.done()
    if (!controller.signal.aborted) throw error
    io.stderr.write(`interrupted: ${output} was not written\n`)
    return 130
  } finally {
    process.off('SIGINT', interrupt)
    process.off('SIGTERM', interrupt)
  }
}

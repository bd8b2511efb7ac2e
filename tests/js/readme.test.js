// "Every README snippet runs as written in a test": this is that test. It parses README.md,
// takes every fenced code block and either runs it or names it as not runnable with the reason;
// a block it does not know (a new snippet, or one moved to another section) fails the test until
// a check is written for it here.
//
// A ```js block runs unchanged as a module in a child process: `node --import readme-preload.js
// snippet-L<line>.mjs`, the file in a temporary folder under build/ (git-ignored) and that folder
// its cwd. Inside the package's folder, `import ... from 'safetensors-wasm'` resolves to this
// package by Node's own rule (a package's self-reference), to js/node.js. What the snippet takes
// for granted is prepared around it: the files it names are made here with the project's writer,
// HF_ENDPOINT points at the Hub emulation (hub-server.js), and the preload routes
// https://example.org to a local test server (http-server.js) and defines the free variables
// (token, signal, indexFile, shardFile1, shardFile2, postMessage). The preload also records what
// the snippet calls and gets; each check below asserts on that record and on the servers' logs
// that the snippet does what the README says it does.
//
// The "Command line" ```sh block is a synopsis: each line is expanded into real command lines
// (optional [...] parts left out, then put in; each `a|b` alternative once), placeholders given
// values (PLACEHOLDERS), and `npx safetensors-wasm` is run as `node js/cli/main.js`, the package's
// "bin" (asserted), which is what npx runs once the package is installed; npx itself is not used
// here since from this folder it would look the name up on the registry.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdir, mkdtemp, readFile, rm, writeFile as writeBytes } from 'node:fs/promises'
import { readFileSync, readdirSync, realpathSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { open, serialize, writeFile } from '../../js/node.js'
import { startServer } from './http-server.js'
import { startHub } from './hub-server.js'

const ROOT = realpathSync(fileURLToPath(new URL('../../', import.meta.url)))
const PRELOAD = new URL('./readme-preload.js', import.meta.url).href
const CLI = join(ROOT, 'js', 'cli', 'main.js')
const README = readFileSync(join(ROOT, 'README.md'), 'utf8')

/**
 * @typedef {{ lang: string, code: string, line: number, heading: string, key: string }} Block
 *   line: 1-based line of the opening fence; key: "<heading> #<n>", the n-th block under it
 * @typedef {{ call: string, args?: any[], result?: any, error?: any, pending?: boolean }} CallEvent
 * @typedef {{ url: string, method: string, range: string | null, authorization: string | null,
 *   signal: boolean, routedTo: string | null }} FetchEvent
 * @typedef {{ message: any, transfer: any[], transferIsPosted: boolean[], detached: boolean[] }} PostEvent
 * @typedef {{ resolved: string | null, calls: CallEvent[], fetches: FetchEvent[], posts: PostEvent[] }} SnippetRecord
 * @typedef {{ code: number, stdout: string, stderr: string }} Run
 * @typedef {{ lang: string, run: (block: Block, t: import('node:test').TestContext) => Promise<void> } |
 *   { lang: string, notRunnable: string }} Check
 */

/**
 * The fenced code blocks of a CommonMark document (``` or ~~~ fences, indented up to three
 * spaces, closed by a fence of the same character at least as long, or by the end of the
 * document), each with the ATX heading it falls under.
 * @param {string} markdown @returns {Block[]}
 */
function codeBlocks(markdown) {
  const lines = markdown.split(/\r?\n/)
  /** @type {Block[]} */
  const blocks = []
  /** @type {Map<string, number>} */
  const perHeading = new Map()
  let heading = ''
  for (let i = 0; i < lines.length; i++) {
    const h = /^ {0,3}#{1,6}(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/.exec(lines[i])
    if (h) { heading = (h[1] ?? '').trim(); continue }
    const open = /^( {0,3})(`{3,}|~{3,})(.*)$/.exec(lines[i])
    if (!open || (open[2][0] === '`' && open[3].includes('`'))) continue
    const [, indent, fence, info] = open
    const start = i
    const body = []
    for (i++; i < lines.length; i++) {
      const close = /^ {0,3}(`{3,}|~{3,})[ \t]*$/.exec(lines[i])
      if (close && close[1][0] === fence[0] && close[1].length >= fence.length) break
      body.push(lines[i].replace(new RegExp(`^ {0,${indent.length}}`), ''))
    }
    const n = (perHeading.get(heading) ?? 0) + 1
    perHeading.set(heading, n)
    blocks.push({ lang: info.trim().split(/\s+/)[0] ?? '', code: `${body.join('\n')}\n`, line: start + 1, heading, key: `${heading} #${n}` })
  }
  return blocks
}

// ---- the files the snippets name, made with the project's writer ----

/** @param {number} n @param {(i: number) => number} f */
const f32 = (n, f) => Float32Array.from({ length: n }, (_, i) => f(i))
/** BF16 bits of values exact in BF16. @param {Float32Array} values */
const bf16 = (values) => Uint16Array.from(new Uint32Array(values.buffer, values.byteOffset, values.length), (b) => b >>> 16)

const LM_HEAD = f32(32, (i) => (i - 12) / 4)   // -3 .. 4.75, exact in BF16
const EMBED = f32(16 * 12, (i) => i / 2)
/** @typedef {Record<string, import('../../js/index.js').TensorLike>} Tensors */
/** model.safetensors: what the Use and Worker snippets read, and the CLI's inspect and stats. @type {Tensors} */
const MODEL = {
  'lm_head.weight': { dtype: 'BF16', shape: [4, 8], data: bf16(LM_HEAD) },
  'model.embed_tokens.weight': { dtype: 'F32', shape: [16, 12], data: EMBED },
  'model.layers.0.mlp.down_proj.weight': { dtype: 'F32', shape: [32, 8], data: f32(256, (i) => Math.sin(i)) },
  'model.layers.1.mlp.down_proj.weight': { dtype: 'BF16', shape: [32, 8], data: bf16(f32(256, (i) => (i % 17) - 8)) },
}
const MODEL_METADATA = { format: 'pt', note: 'README test' }
/** base.safetensors, for the CLI's diff: model.safetensors before a fine-tune changed lm_head.weight's first value. */
const BASE_LM_HEAD = LM_HEAD.slice()
BASE_LM_HEAD[0] = -2.5  // model.safetensors has -3: a change of 0.5, exact in BF16
/** @type {Tensors} */
const BASE = { ...MODEL, 'lm_head.weight': { dtype: 'BF16', shape: [4, 8], data: bf16(BASE_LM_HEAD) } }
/** in.safetensors, for the CLI's convert: floats to cast, an integer tensor to copy. @type {Tensors} */
const INPUT = {
  'lm_head.weight': { dtype: 'F64', shape: [4, 4], data: Float64Array.from({ length: 16 }, (_, i) => i / 8) },
  'model.layers.0.self_attn.q_proj.weight': { dtype: 'F32', shape: [8, 8], data: f32(64, (i) => Math.cos(i)) },
  'model.layers.1.self_attn.q_proj.weight': { dtype: 'BF16', shape: [8, 8], data: bf16(f32(64, (i) => i - 32)) },
  position_ids: { dtype: 'I64', shape: [8], data: BigInt64Array.from({ length: 8 }, (_, i) => BigInt(i)) },
}
/** fp8-model.safetensors and its config.json, for the quantized snippet: E4M3 codes of exact values,
 * scales per 128 x 128 block; the expected values computed here by hand. */
const FP8_CODES = Uint8Array.from({ length: 256 * 192 }, (_, i) => [0x38, 0x40, 0xb8, 0x30, 0x00, 0x44][i % 6])
const FP8_VALUES = [1, 2, -1, 0.5, 0, 3]  // the codes above, decoded
const FP8_SCALES = Float32Array.from([0.5, 2, 4, 0.25])  // [2, 2] blocks over [256, 192]
const FP8_MODEL = {
  'mlp.down_proj.weight': { dtype: 'F8_E4M3', shape: [256, 192], data: FP8_CODES },
  'mlp.down_proj.weight_scale_inv': { dtype: 'F32', shape: [2, 2], data: FP8_SCALES },
  'norm.weight': { dtype: 'BF16', shape: [192], data: bf16(f32(192, () => 1)) },
}
const FP8_CONFIG = { architectures: ['Demo'], quantization_config: { quant_method: 'fp8', weight_block_size: [128, 128] } }
const INDEX = 'model.safetensors.index.json'
/** A sharded set: on disk for `verify`, as Files for the local-shards snippet, on the Hub for hf://Qwen/... @type {Record<string, Tensors>} */
const SHARDS = {
  'model-00001-of-00002.safetensors': {
    'model.embed_tokens.weight': { dtype: 'F32', shape: [4, 4], data: f32(16, (i) => i) },
    'model.layers.0.mlp.down_proj.weight': { dtype: 'F32', shape: [4, 4], data: f32(16, (i) => -i) },
  },
  'model-00002-of-00002.safetensors': {
    'lm_head.weight': { dtype: 'BF16', shape: [4, 4], data: bf16(f32(16, (i) => i / 2)) },
  },
}
const SHARD_NAMES = Object.values(SHARDS).flatMap((tensors) => Object.keys(tensors))

/** @type {string} the snippets' cwd, under build/ inside the package (self-reference) */
let dir
/** @type {Awaited<ReturnType<typeof startServer>>} serves https://example.org/* */
let server
/** @type {Awaited<ReturnType<typeof startHub>>} HF_ENDPOINT */
let hub
/** @type {Uint8Array} */
let modelBytes
/** @type {string[]} model.safetensors's names in file order, as open() reads them */
let modelNames

before(async () => {
  await mkdir(join(ROOT, 'build'), { recursive: true })
  dir = await mkdtemp(join(ROOT, 'build', 'readme-test-'))
  modelBytes = await serialize(MODEL, { metadata: MODEL_METADATA })
  await writeFile(join(dir, 'model.safetensors'), MODEL, { metadata: MODEL_METADATA })
  PLACEHOLDERS['--sha256 HEX'] = createHash('sha256').update(await readFile(join(dir, 'model.safetensors'))).digest('hex')
  await writeFile(join(dir, 'in.safetensors'), INPUT, { metadata: { format: 'pt' } })
  await writeFile(join(dir, 'base.safetensors'), BASE, { metadata: MODEL_METADATA })
  await writeFile(join(dir, 'fp8-model.safetensors'), FP8_MODEL)
  await writeBytes(join(dir, 'config.json'), JSON.stringify(FP8_CONFIG))
  /** @type {Record<string, string>} */
  const weightMap = {}
  let totalSize = 0
  /** @type {Record<string, Uint8Array>} */
  const shardBytes = {}
  for (const [path, tensors] of Object.entries(SHARDS)) {
    shardBytes[path] = await serialize(tensors)
    await writeBytes(join(dir, path), shardBytes[path])
    for (const [name, t] of Object.entries(tensors)) { weightMap[name] = path; totalSize += t.data.byteLength }
  }
  const index = new TextEncoder().encode(JSON.stringify({ metadata: { total_size: totalSize }, weight_map: weightMap }, null, 2))
  await writeBytes(join(dir, INDEX), index)

  const f = await open(join(dir, 'model.safetensors'))
  modelNames = f.names
  await f.close()

  server = await startServer()
  server.addFile('/model.safetensors', modelBytes)
  hub = await startHub()
  hub.addFile('meta-llama/Llama-3.2-1B', 'model.safetensors', modelBytes, { gated: true })
  hub.addFile('Qwen/Qwen3-0.6B', INDEX, index)   // no model.safetensors: the index is the fallback
  for (const [path, bytes] of Object.entries(shardBytes)) hub.addFile('Qwen/Qwen3-0.6B', path, bytes)
  hub.addFile('datasets/org/repo', 'data.safetensors',
    await serialize({ x: { dtype: 'I64', shape: [3], data: new BigInt64Array([1n, 2n, 3n]) } }))
})

after(async () => {
  await server?.close()
  await hub?.close()
  if (dir) await rm(dir, { recursive: true, force: true })
})

/**
 * Runs `file` with `args` in the snippets' folder, over an environment without HF_* variables.
 * @param {string[]} args @param {Record<string, string>} [env] @returns {Promise<Run>}
 */
function run(args, env = {}) {
  const base = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('HF_') && !key.startsWith('README_TEST_')))
  return new Promise((resolve) => {
    // XDG_CACHE_HOME: what `cache: true` writes stays in the test's folder.
    execFile(process.execPath, args, { cwd: dir, encoding: 'utf8', timeout: 30_000, env: { ...base, XDG_CACHE_HOME: join(dir, 'xdg-cache'), ...env } },
      (error, stdout, stderr) => resolve({ code: error ? Number(/** @type {any} */ (error).code ?? 1) : 0, stdout, stderr }))
  })
}

/**
 * Runs a js block as it is written, as a module, with the preload; returns what it recorded.
 * @param {Block} block @returns {Promise<Run & { record: SnippetRecord }>}
 */
async function runSnippet(block) {
  const file = join(dir, `snippet-L${block.line}.mjs`)
  const recordFile = join(dir, `record-L${block.line}.json`)
  await writeBytes(file, block.code)
  server.resetStats()
  hub.resetStats()
  const result = await run(['--import', PRELOAD, file], {
    README_TEST_ORIGIN: server.base, README_TEST_RECORD: recordFile, README_TEST_TOKEN: hub.token, HF_ENDPOINT: hub.base,
  })
  assert.equal(result.code, 0, `the snippet at README.md:${block.line} failed:\n${block.code}\n${result.stderr}`)
  const record = /** @type {SnippetRecord} */ (JSON.parse(await readFile(recordFile, 'utf8')))
  assert.equal(record.resolved, pathToFileURL(join(ROOT, 'js', 'node.js')).href,
    "'safetensors-wasm' resolves to the package's Node entry")
  assert.ok(record.calls.every((c) => !c.pending), `every call the snippet made settled: ${JSON.stringify(record.calls.filter((c) => c.pending))}`)
  return { ...result, record }
}

/**
 * The recorded calls named `label`, where the first argument, if given, matches.
 * @param {SnippetRecord} record @param {string} label @param {unknown[]} [args] @returns {CallEvent[]}
 */
function calls(record, label, args) {
  return record.calls.filter((c) => c.call === label && (args === undefined || isDeepEqual(c.args, args)))
}

/** The one recorded call `label` (with `args`, if given). @param {SnippetRecord} record @param {string} label @param {unknown[]} [args] */
function only(record, label, args) {
  const found = calls(record, label, args)
  assert.equal(found.length, 1, `one call ${label}(${args ? JSON.stringify(args).slice(1, -1) : '...'}) in ${JSON.stringify(record.calls.map((c) => c.call))}`)
  assert.equal(found[0].error, undefined, `${label} threw ${JSON.stringify(found[0].error)}`)
  return found[0]
}

/** @param {unknown} a @param {unknown} b */
function isDeepEqual(a, b) {
  try { assert.deepStrictEqual(a, b); return true } catch { return false }
}

/** A typed array as the preload records it. @param {string} type @param {ArrayLike<number>} values */
const typed = (type, values) => ({ type, length: values.length, values: Array.from(values) })

/** @param {Float32Array} values @param {number[]} shape @param {(row: number, col: number) => boolean} keep */
function pick(values, shape, keep) {
  const out = []
  for (let r = 0; r < shape[0]; r++) for (let c = 0; c < shape[1]; c++) if (keep(r, c)) out.push(values[r * shape[1] + c])
  return out
}

/** The metadata and tensors of safetensors bytes or a file, by the project's reader. @param {string | Uint8Array} src */
async function contents(src) {
  const f = /** @type {import('../../js/file.js').SafetensorsFile} */ (/** @type {unknown} */ (await open(src)))
  try {
    const tensors = Object.fromEntries(f.names.map((name) => [name, f.info(name)]))
    return { names: f.names, metadata: f.metadata, tensors }
  } finally {
    await f.close()
  }
}

// ---- the command line ----

/** Values for the synopsis' placeholders, by the word before them (or by themselves). */
const PLACEHOLDERS = /** @type {Record<string, string>} */ ({
  '--depth N': '2',
  '--bins N': '16',
  '/regex/': '/^model\\.layers\\.1\\./',
})

/** @typedef {{ words: string[] } | { optional: Node[][] }} Node  an optional part: its alternatives */

/**
 * Parses a synopsis line: `[...]` optional (nested), ` | ` between alternatives of a group,
 * `a|b` alternatives of one word, '...' quoted words.
 * @param {string} line @returns {Node[]}
 */
function parseSynopsis(line) {
  const tokens = line.match(/\[|\]|'[^']*'|"[^"]*"|[^\s[\]'"]+/g) ?? []
  const pos = { i: 0 }
  /** @param {boolean} inner @returns {Node[][]} */
  const group = (inner) => {
    /** @type {Node[][]} */
    const alts = [[]]
    while (pos.i < tokens.length) {
      const t = tokens[pos.i++]
      if (t === ']') { if (inner) return alts; throw new Error(`${line}: unbalanced ]`) }
      const seq = alts[alts.length - 1]
      if (t === '[') seq.push({ optional: group(true) })
      else if (t === '|') alts.push([])
      else if (/^['"]/.test(t)) seq.push({ words: [t.slice(1, -1)] })
      else seq.push({ words: t.split('|') })
    }
    if (inner) throw new Error(`${line}: unbalanced [`)
    return alts
  }
  const alts = group(false)
  assert.equal(alts.length, 1, `${line}: alternatives outside brackets`)
  return alts[0]
}

/** How many variants cover every choice of a sequence. @param {Node[]} seq @returns {number} */
function variants(seq) {
  return Math.max(1, ...seq.map((node) => ('words' in node ? node.words.length
    : Math.max(1 + node.optional.length, ...node.optional.map(variants)))))
}

/**
 * Variant k: each choice point takes its (k mod n)-th choice; an optional part's choice 0 leaves
 * it out. Variant 0 is the shortest command; together the variants use every word.
 * @param {Node[]} seq @param {number} k @returns {string[]}
 */
function expand(seq, k) {
  return seq.flatMap((node) => {
    if ('words' in node) return [node.words[k % node.words.length]]
    const choice = k % (1 + node.optional.length)
    return choice === 0 ? [] : expand(node.optional[choice - 1], k)
  })
}

/** The placeholders of a command given values. @param {string[]} words */
function fillPlaceholders(words) {
  return words.map((word, i) => {
    const value = PLACEHOLDERS[`${words[i - 1]} ${word}`] ?? PLACEHOLDERS[word]
    if (value !== undefined) return value
    assert.doesNotMatch(word, /^[A-Z]+$/, `placeholder ${word} after ${words[i - 1]} has no value in PLACEHOLDERS`)
    return word
  })
}

/** @param {string} pattern a --only pattern, as the README defines it @returns {(name: string) => boolean} */
function nameFilter(pattern) {
  const regex = /^\/(.*)\/$/.exec(pattern)
  if (regex) return (name) => new RegExp(regex[1]).test(name)
  return (name) => new RegExp(`^${pattern.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`).test(name)
}

/** @param {string[]} args @param {string} flag */
const flagValue = (args, flag) => (args.includes(flag) ? args[args.indexOf(flag) + 1] : undefined)

/** The tensors `diff base.safetensors model.safetensors` compares, and those of them that changed. @param {string[]} args */
function diffNames(args) {
  const only = flagValue(args, '--only')
  const names = Object.keys(MODEL).filter(only === undefined ? () => true : nameFilter(only))
  return { names, changed: names.filter((name) => name === 'lm_head.weight') }
}

/** A command's exit code when it is not 0: diff's is 1 when the files differ. @type {Record<string, (args: string[]) => number>} */
const CLI_EXIT_CODES = {
  diff: (args) => (diffNames(args).changed.length > 0 ? 1 : 0),
}

/**
 * What each command must do with the files made for it, beyond exiting 0 (or CLI_EXIT_CODES's code).
 * @type {Record<string, (args: string[], result: Run) => Promise<void>>}
 */
const CLI_CHECKS = {
  async inspect(args, { stdout }) {
    assert.equal(args[1], 'model.safetensors')
    const text = args.includes('--json') ? JSON.stringify(JSON.parse(stdout)) : stdout
    for (const name of args.includes('--tree') ? ['lm_head', 'embed_tokens'] : Object.keys(MODEL)) assert.ok(text.includes(name), `${name} in ${stdout}`)
  },
  async convert(args) {
    const dtype = /** @type {string} */ (flagValue(args, '--dtype')).toUpperCase()
    const pattern = flagValue(args, '--only')
    const expected = Object.keys(INPUT).filter(pattern === undefined ? () => true : nameFilter(pattern))
    assert.ok(expected.length > 0)
    const input = await contents(join(dir, args[1]))
    const output = await contents(join(dir, args[2]))
    assert.deepEqual([...output.names].sort(), [...expected].sort(), `convert ${args.slice(3).join(' ')} keeps these tensors`)
    assert.deepEqual(output.metadata, input.metadata, 'the metadata is kept')
    for (const name of expected) {
      const from = input.tensors[name].dtype
      assert.equal(output.tensors[name].dtype, ['F64', 'F32', 'F16', 'BF16'].includes(from) ? dtype : from, name)
      assert.deepEqual(output.tensors[name].shape, input.tensors[name].shape, name)
    }
    await rm(join(dir, args[2]))
  },
  async stats(args, { stdout }) {
    const names = Object.keys(MODEL).filter(nameFilter(args[2]))
    assert.equal(names.length, 2, `${args[2]} matches both down_proj tensors`)
    if (!args.includes('--json')) return void names.forEach((name) => assert.ok(stdout.includes(name), `${name} in ${stdout}`))
    const { tensors } = JSON.parse(stdout)
    assert.deepEqual(tensors.map((/** @type {any} */ t) => t.name), names)
    const slice = flagValue(args, '--slice')
    for (const t of tensors) {
      assert.equal(t.count, slice === undefined ? 256 : 16 * 8, `${t.name}: ${slice ?? 'all'} values`)
      assert.equal(t.histogram.counts.length, Number(flagValue(args, '--bins') ?? 64))
    }
  },
  async verify(args, { stdout }) {
    if (args.includes('--sha256')) {
      assert.equal(args[1], 'model.safetensors')
      const hash = flagValue(args, '--sha256')
      if (!args.includes('--json')) return void assert.match(stdout, new RegExp(`^ok\\s+sha256\\s+the file's SHA-256 is ${hash}`, 'm'))
      const report = JSON.parse(stdout)
      assert.deepEqual(report.checks.find((/** @type {any} */ c) => c.name === 'sha256')?.actual, hash, stdout)
      return
    }
    assert.equal(args[1], INDEX)
    if (!args.includes('--json')) return void assert.match(stdout, /verified .*checks passed/)
    const report = JSON.parse(stdout)
    assert.equal(report.ok, true, stdout)
    if (args.includes('--full')) assert.ok(report.checks.length > 2, stdout)
  },
  async diff(args, { stdout }) {
    assert.deepEqual(args.slice(1, 3), ['base.safetensors', 'model.safetensors'])
    const { names, changed } = diffNames(args)
    if (!args.includes('--json')) {
      for (const name of changed) assert.match(stdout, new RegExp(`^values +${name.replace(/\./g, '\\.')} +max \\|B-A\\| 0\\.5 `, 'm'))
      return void assert.match(stdout, changed.length ? / differ: / : /hold the same \d+ tensors, byte for byte/)
    }
    const doc = JSON.parse(stdout)
    assert.deepEqual([doc.onlyInA, doc.onlyInB, doc.identical], [[], [], names.length - changed.length])
    assert.deepEqual(doc.changed.map((/** @type {any} */ c) => [c.name, c.kind, c.changedValues]), changed.map((name) => [name, 'values', 1]))
    if (changed.length === 0) return
    // One value of 32 moved by 0.5: max 0.5, mean 0.5 / 32, relative 0.5 / ||base||.
    const norm = Math.sqrt(BASE_LM_HEAD.reduce((n, x) => n + x * x, 0))
    const [c] = doc.changed
    assert.equal(c.maxAbsDiff, 0.5)
    assert.equal(c.meanAbsDiff, 0.5 / 32)
    assert.ok(Math.abs(c.relativeChange - 0.5 / norm) < 1e-15, `relativeChange ${c.relativeChange}`)
  },
}

// ---- every block of README.md: run, or not runnable and why ----

/** @type {Record<string, Check>} */
const CHECKS = {
  'safetensors-wasm #1': {
    lang: 'sh',
    notRunnable: '`npm start` builds, then serves the inspector until Ctrl-C; `npm test` runs every suite of the ' +
      'project, this test included (minutes, and it would run itself). They run .ci/start.sh and .ci/test.sh.',
  },

  'Use #1': {
    lang: 'js',
    async run(block) {
      const { record } = await runSnippet(block)
      const opened = only(record, 'open', ['model.safetensors'])
      assert.equal(opened.result.type, 'SafetensorsFile')
      assert.deepEqual([...modelNames].sort(), Object.keys(MODEL).sort())
      assert.deepEqual(only(record, 'SafetensorsFile.names').result, modelNames, 'f.names: tensor names in file order')
      const info = (await contents(join(dir, 'model.safetensors'))).tensors['lm_head.weight']
      assert.deepEqual(only(record, 'SafetensorsFile.info', ['lm_head.weight']).result, {
        name: 'lm_head.weight', dtype: 'BF16', shape: [4, 8], byteOffset: info.byteOffset, byteLength: 64,
      })
      assert.deepEqual(only(record, 'SafetensorsFile.metadata').result, MODEL_METADATA)
      assert.deepEqual(only(record, 'SafetensorsFile.parameterCount').result, { total: 32 + 192 + 256 + 256, byDtype: { BF16: 32 + 256, F32: 192 + 256 }, byScheme: {} })
      const t = only(record, 'SafetensorsFile.tensor', ['lm_head.weight']).result
      assert.deepEqual([t.type, t.name, t.dtype, t.shape], ['Tensor', 'lm_head.weight', 'BF16', [4, 8]])
      assert.deepEqual(only(record, 'Tensor.data').result, typed('Uint16Array', bf16(LM_HEAD)), 't.data: a Uint16Array for BF16')
      assert.deepEqual(only(record, 'Tensor.toFloat32').result, typed('Float32Array', LM_HEAD))
      const stats = only(record, 'Tensor.stats', [{ bins: 32 }]).result
      const mean = LM_HEAD.reduce((a, b) => a + b) / 32
      assert.deepEqual([stats.count, stats.nanCount, stats.infCount, stats.zeroCount, stats.min, stats.max, stats.mean], [32, 0, 0, 1, -3, 4.75, mean])
      assert.ok(Math.abs(stats.std - Math.sqrt(LM_HEAD.reduce((a, b) => a + (b - mean) ** 2, 0) / 32)) < 1e-9, `std ${stats.std}`)
      assert.equal(stats.histogram.counts.length, 32)
      assert.equal(stats.histogram.counts.reduce((/** @type {number} */ a, /** @type {number} */ b) => a + b), 32)
      only(record, 'Tensor.dispose')
      const rows = only(record, 'SafetensorsFile.slice', ['model.embed_tokens.weight', '0:4']).result
      assert.deepEqual([rows.shape, rows.data], [[4, 12], typed('Float32Array', pick(EMBED, [16, 12], (r) => r < 4))])
      const cols = only(record, 'SafetensorsFile.slice', ['model.embed_tokens.weight', [null, [0, 8]]]).result
      assert.deepEqual([cols.shape, cols.data], [[16, 8], typed('Float32Array', pick(EMBED, [16, 12], (_, c) => c < 8))])
      only(record, 'SafetensorsFile.close')
      const written = only(record, 'serialize').result
      /** @type {Tensors} */
      const input = { w: { dtype: 'F32', shape: [2, 2], data: new Float32Array(4) } }
      assert.deepEqual(written, typed('Uint8Array', await serialize(input, { metadata: { format: 'pt' } })), 'serialize: one exact-size Uint8Array')
      const back = await contents(Uint8Array.from(written.values))
      assert.deepEqual([back.names, back.metadata, back.tensors.w.dtype, back.tensors.w.shape], [['w'], { format: 'pt' }, 'F32', [2, 2]])
    },
  },

  'Use #2': {
    lang: 'js',
    // A Worker's module, run in Node as a module (postMessage is the preload's, a Worker's
    // transfer by structured clone): in Node the package resolves to js/node.js, whose open()
    // takes URLs down the same path as the browser entry's.
    async run(block) {
      const { record } = await runSnippet(block)
      assert.equal(only(record, 'open', ['https://example.org/model.safetensors']).result.type, 'SafetensorsFile')
      assert.ok(record.fetches.length > 0 && record.fetches.every((f) => f.url === 'https://example.org/model.safetensors'), JSON.stringify(record.fetches))
      assert.ok(server.stats.log.length > 0 && server.stats.log.every((e) => e.path === '/model.safetensors' && e.status === 206))
      only(record, 'SafetensorsFile.tensor', ['lm_head.weight'])
      only(record, 'Tensor.toFloat32')
      only(record, 'Tensor.dispose')
      assert.equal(record.posts.length, 1, 'one message posted')
      const [post] = record.posts
      assert.deepEqual(post.message, { shape: [4, 8], values: typed('Float32Array', LM_HEAD) }, 'the page receives the shape and the values')
      assert.deepEqual(post.transfer, [{ type: 'ArrayBuffer', byteLength: 32 * 4 }])
      assert.deepEqual(post.transferIsPosted, [true], "the transfer list holds the posted array's buffer")
      assert.deepEqual(post.detached, [true], 'the buffer moved: the sender no longer has it (no second copy)')
    },
  },

  'Remote files and sharded checkpoints #1': {
    lang: 'js',
    async run(block) {
      const { record } = await runSnippet(block)
      const [opened] = calls(record, 'open')
      assert.equal(calls(record, 'open').length, 1)
      assert.equal(opened.error, undefined, JSON.stringify(opened.error))
      const [url, options] = /** @type {any[]} */ (opened.args)
      assert.equal(url, 'https://example.org/model.safetensors')
      assert.deepEqual(options.headers, { Authorization: `Bearer ${hub.token}` })
      assert.deepEqual(options.signal, { type: 'AbortSignal', aborted: false })
      assert.deepEqual(options.onProgress, { function: 'onProgress' })
      assert.deepEqual(opened.result.names, modelNames)
      assert.ok(record.fetches.every((f) => f.signal), 'the signal goes with every request')
      // "Opening costs one request, Range: bytes=0-262143": a header under 256 KiB, one round trip.
      assert.deepEqual(server.stats.log.map((e) => [e.path, e.range, e.auth, e.status]),
        [['/model.safetensors', 'bytes=0-262143', `Bearer ${hub.token}`, 206]])
    },
  },

  'The Hugging Face Hub #1': {
    lang: 'js',
    async run(block) {
      const { record } = await runSnippet(block)
      const f = only(record, 'open', ['hf://meta-llama/Llama-3.2-1B/model.safetensors', { token: hub.token }]).result
      assert.deepEqual([f.type, f.names], ['SafetensorsFile', modelNames])
      const g = only(record, 'open', ['hf://Qwen/Qwen3-0.6B@main']).result
      assert.deepEqual([g.type, [...g.names].sort(), g.shards], ['ShardedFile', [...SHARD_NAMES].sort(), Object.keys(SHARDS)],
        'a repo without model.safetensors opens its sharded index')
      const h = only(record, 'open', ['hf://datasets/org/repo/data.safetensors']).result
      assert.deepEqual([h.type, h.names], ['SafetensorsFile', ['x']])
      const log = hub.allRequests()
      const gated = log.filter((e) => e.server === 'hub' && e.repo === 'meta-llama/Llama-3.2-1B')
      assert.ok(gated.length > 0 && gated.every((e) => e.authorization === `Bearer ${hub.token}`), 'the token opens the gated repo')
      assert.ok(log.filter((e) => e.server === 'cdn').every((e) => e.authorization === null), 'the token goes to the endpoint only, never to the CDN')
      assert.ok(log.some((e) => e.repo === 'Qwen/Qwen3-0.6B' && e.revision === 'main' && e.file === INDEX && e.status < 300))
      assert.ok(log.some((e) => e.repo === 'datasets/org/repo' && e.file === 'data.safetensors' && e.status === 302))
      assert.ok(record.fetches.every((e) => e.url.startsWith(`${hub.base}/`) || e.url.startsWith(`${hub.cdnBase}/`)), 'HF_ENDPOINT is the endpoint')
    },
  },

  'The Hugging Face Hub #2': {
    lang: 'js',
    async run(block) {
      const { record } = await runSnippet(block)
      const [opened] = calls(record, 'open')
      assert.equal(calls(record, 'open').length, 1)
      const [index, options] = /** @type {any[]} */ (opened.args)
      assert.deepEqual(index, { type: 'File', name: INDEX, size: readFileSync(join(dir, INDEX)).length })
      assert.deepEqual(Object.keys(options.shards), Object.keys(SHARDS), 'every shard the index names is given')
      for (const [path, file] of Object.entries(options.shards)) assert.equal(/** @type {any} */ (file).name, path)
      assert.equal(opened.error, undefined, JSON.stringify(opened.error))
      assert.deepEqual([opened.result.type, [...opened.result.names].sort(), opened.result.shards],
        ['ShardedFile', [...SHARD_NAMES].sort(), Object.keys(SHARDS)])
      assert.deepEqual(record.fetches, [], 'nothing is fetched')
    },
  },

  'Caching #1': {
    lang: 'js',
    async run(block) {
      const { record } = await runSnippet(block)
      const opens = calls(record, 'open')
      const url = 'https://example.org/model.safetensors'
      assert.deepEqual(opens.map((c) => c.args), [[url, { cache: true }], [url, { cache: true }],
        ['hf://Qwen/Qwen3-0.6B', { cache: { dir: '.st-cache', maxAge: 600, ranges: true } }]])
      for (const c of opens) assert.equal(c.error, undefined, JSON.stringify(c.error))
      assert.deepEqual([opens[1].result.type, opens[1].result.names], ['SafetensorsFile', modelNames])
      assert.deepEqual(opens[2].result.type, 'ShardedFile')
      // "one request (If-None-Match, answered 304)"
      assert.deepEqual(server.stats.log.map((e) => [e.path, e.status, e.ifNoneMatch !== null]),
        [['/model.safetensors', 206, false], ['/model.safetensors', 304, true]])
      /** @param {string} folder @returns {any[]} each entry's meta.json */
      const metas = (folder) => readdirSync(folder).map((name) => JSON.parse(readFileSync(join(folder, name, 'meta.json'), 'utf8')))
      // cache: true in Node: under the OS cache folder ($XDG_CACHE_HOME, set for the snippets to a folder of the test's).
      assert.deepEqual(metas(join(dir, 'xdg-cache', 'safetensors-wasm')).map((m) => [m.kind, m.url]), [['header', url]])
      // dir: relative to the process's folder; the Hub's index under its /resolve/ URL.
      assert.deepEqual(metas(join(dir, '.st-cache')).map((m) => [m.kind, m.url]),
        [['index', `${hub.base}/Qwen/Qwen3-0.6B/resolve/main/${INDEX}`]])
    },
  },

  'Quantized checkpoints #1': {
    lang: 'js',
    async run(block) {
      const { record } = await runSnippet(block)
      only(record, 'open', ['fp8-model.safetensors', { quantization: FP8_CONFIG }])
      assert.deepEqual(only(record, 'SafetensorsFile.quantized').result, [{
        name: 'mlp.down_proj.weight', scheme: 'fp8-block', shape: [256, 192],
        parts: { weight: 'mlp.down_proj.weight', scaleInv: 'mlp.down_proj.weight_scale_inv' }, details: { block: [128, 128] },
      }])
      assert.deepEqual(only(record, 'SafetensorsFile.parameterCount').result,
        { total: 256 * 192 + 192, byDtype: { BF16: 192 }, byScheme: { 'fp8-block': 256 * 192 } })
      const w = only(record, 'SafetensorsFile.dequantize', ['mlp.down_proj.weight', { slice: [0, 128] }]).result
      assert.deepEqual([w.type, w.dtype, w.shape], ['Tensor', 'F32', [128, 192]])
      // Rows 0..127 are block row 0: scale 0.5 for columns 0..127, 2 for 128..191.
      const want = Float32Array.from({ length: 128 * 192 }, (_, i) => FP8_VALUES[i % 6] * ((i % 192) < 128 ? 0.5 : 2))
      const data = only(record, 'Tensor.data').result  // the record keeps the first 4096 values
      assert.deepEqual(data, { ...typed('Float32Array', want), values: Array.from(want.subarray(0, 4096)) })
      assert.equal(only(record, 'Tensor.dispose').error, undefined)
    },
  },

  'Bigger than memory #1': {
    lang: 'js',
    async run(block) {
      const { record } = await runSnippet(block)
      only(record, 'open', ['model.safetensors'])
      const name = 'model.embed_tokens.weight'
      only(record, 'SafetensorsFile.chunks', [name, { chunkBytes: 256 }])
      const f = await open(join(dir, 'model.safetensors'))
      const t = await f.tensor(name)
      assert.deepEqual(only(record, 'SafetensorsFile.stats', [name]).result, t.stats(), 'streamed stats equal Tensor.stats')
      const sha = (/** @type {Uint8Array} */ b) => createHash('sha256').update(b).digest('hex')
      assert.equal(only(record, 'SafetensorsFile.digest', []).result, sha(await readFile(join(dir, 'model.safetensors'))))
      const head = await f.tensor('lm_head.weight')
      assert.equal(only(record, 'SafetensorsFile.digest', ['lm_head.weight']).result, sha(head.bytes))
      assert.deepEqual(only(record, 'Tensor.toFloat32').result, typed('Float32Array', LM_HEAD), 'toFloat32({ into }) fills the array')
      t.dispose()
      head.dispose()
      await f.close()
    },
  },

  'TypeScript #1': {
    lang: 'js',
    async run(block) {
      const { record } = await runSnippet(block)
      const f = only(record, 'openFile', ['model.safetensors']).result
      assert.deepEqual([f.type, f.names], ['SafetensorsFile', modelNames])
      assert.equal(only(record, 'SafetensorsFile.info', ['lm_head.weight']).result.dtype, 'BF16')
      const g = only(record, 'openSharded', ['hf://Qwen/Qwen3-0.6B']).result
      assert.deepEqual([g.type, [...g.names].sort(), g.shards], ['ShardedFile', [...SHARD_NAMES].sort(), Object.keys(SHARDS)])
      const info = only(record, 'ShardedFile.info', ['lm_head.weight']).result
      assert.deepEqual([info.shard, info.dtype, info.shape], ['model-00002-of-00002.safetensors', 'BF16', [4, 4]])
      // "openSharded looks for the index first": no lookup of model.safetensors in the repo.
      const asked = hub.allRequests().filter((e) => e.server === 'hub' && e.repo === 'Qwen/Qwen3-0.6B').map((e) => e.file)
      assert.equal(asked[0], INDEX, JSON.stringify(asked))
      assert.ok(!asked.includes('model.safetensors'), JSON.stringify(asked))
    },
  },

  'Command line #1': {
    lang: 'sh',
    async run(block, t) {
      const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))
      assert.equal(pkg.bin['safetensors-wasm'], './js/cli/main.js', 'npx safetensors-wasm runs js/cli/main.js')
      const lines = block.code.split('\n').filter((line) => line.trim() !== '')
      assert.ok(lines.length > 0)
      for (const line of lines) {
        const seq = parseSynopsis(line)
        for (let k = 0; k < variants(seq); k++) {
          const words = fillPlaceholders(expand(seq, k))
          assert.deepEqual(words.slice(0, 2), ['npx', 'safetensors-wasm'], line)
          const args = words.slice(2)
          const check = CLI_CHECKS[args[0]]
          assert.ok(check, `no check for the command ${args[0]} (README.md:${block.line}): add one to CLI_CHECKS`)
          t.diagnostic(`npx safetensors-wasm ${args.join(' ')}  (as node js/cli/main.js)`)
          const result = await run([CLI, ...args])
          assert.equal(result.code, CLI_EXIT_CODES[args[0]]?.(args) ?? 0, `safetensors-wasm ${args.join(' ')}\n${result.stdout}${result.stderr}`)
          await check(args, result)
        }
      }
    },
  },
}

const BLOCKS = codeBlocks(README)

test('every fenced block of README.md is run here or listed as not runnable, with its reason', () => {
  assert.ok(BLOCKS.some((b) => b.lang === 'js'))
  for (const block of BLOCKS) {
    const check = CHECKS[block.key]
    assert.ok(check, `README.md:${block.line}: the ${block.lang || 'unlabelled'} block "${block.key}" is neither run nor listed ` +
      `as not runnable: add it to CHECKS in tests/js/readme.test.js\n${block.code}`)
    assert.equal(check.lang, block.lang, `README.md:${block.line}: "${block.key}" is a ${block.lang} block`)
  }
  const keys = new Set(BLOCKS.map((b) => b.key))
  for (const key of Object.keys(CHECKS)) assert.ok(keys.has(key), `CHECKS has "${key}", which README.md no longer has`)
})

for (const block of BLOCKS) {
  const check = CHECKS[block.key]
  if (!check || check.lang !== block.lang) continue
  const name = `README.md:${block.line} ${block.lang} "${block.key}"`
  if ('notRunnable' in check) test(name, { skip: `not runnable: ${check.notRunnable}` }, () => {})
  else test(name, (t) => check.run(block, t))
}

#!/usr/bin/env node
/**
 * Size of what ships, gzipped (-9): the figure against the budget is what a browser page that
 * opens files and reads tensors downloads before it reads anything: js/index.js with its imports
 * bundled as an app's bundler would (Rollup, as under Vite; minified by esbuild) and the one core
 * module js/wasm.js picks. Also printed: a page that uses every export (no target), the chunks
 * loaded on first use (among them the dequantization kernels, dist/safetensors_quant*.mjs, which
 * js/quant/kernels.js imports on a first dequantize(): never at load), esbuild's bundle of the same apps, each core module (Emscripten's JS glue
 * with the wasm embedded, SINGLE_FILE) split into glue and wasm, the wasm's sections, and (given
 * a build with function names, see --names) its code by origin and its largest functions.
 *   node bench/size.js [--names auto | FILE.mjs] [--top 25]
 * --names auto relinks the SIMD module from build/wasm (bash .ci/build.sh made it) with
 * --profiling-funcs into build/size-names/ (about a minute), for the per-function breakdown.
 */
import { execSync } from 'node:child_process'
import { readFileSync, readdirSync, existsSync, mkdirSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { gzipSync } from 'node:zlib'
import { emitFigures, figure } from './common.js'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const BUDGET = 80 * 1000  // bytes, gzipped: everything a page downloads, the JS layer and one core module

const gz = (/** @type {Uint8Array | string} */ b) => gzipSync(b, { level: 9 }).length
const kb = (/** @type {number} */ n) => `${(n / 1000).toFixed(1)} KB`

/**
 * Splits an Emscripten SINGLE_FILE module into its JS glue and its wasm bytes.
 * @param {string} text
 */
export function splitModule(text) {
  // As .ci/embed-wasm.mjs writes it: a string literal of byte-valued characters.
  const start = text.indexOf('\nconst wasm = "')
  const end = text.lastIndexOf('";\n/** The module')
  if (start >= 0 && end > start) {
    const literal = text.slice(start + '\nconst wasm = "'.length, end)
    const chars = new Function(`return "${literal}"`)()
    const wasm = Uint8Array.from(chars, (/** @type {string} */ c) => c.charCodeAt(0))
    return { glue: text.slice(0, start) + text.slice(end + 2), embedded: text.slice(start, end + 2), embedding: 'byte string', wasm }
  }
  // As Emscripten writes it: base64 in a data: URI.
  const m = /data:application\/octet-stream;base64,([A-Za-z0-9+/=]+)/.exec(text)
  if (!m) throw new Error('no embedded wasm (not a SINGLE_FILE build?)')
  const base64 = m[1]
  return { glue: text.replace(base64, ''), embedded: base64, embedding: 'base64', wasm: new Uint8Array(Buffer.from(base64, 'base64')) }
}

/** @param {Uint8Array} b @param {number} at @returns {[number, number]} value, next offset */
function leb(b, at) {
  let v = 0
  let shift = 0
  for (;;) {
    const byte = b[at++]
    v += (byte & 0x7f) * 2 ** shift
    shift += 7
    if (byte < 0x80) return [v, at]
  }
}

const SECTION_NAMES = ['custom', 'type', 'import', 'function', 'table', 'memory', 'global', 'export', 'start',
  'element', 'code', 'data', 'datacount']

/**
 * Sections, function body sizes and (when a name section is there) function names.
 * @param {Uint8Array} wasm
 */
export function wasmSections(wasm) {
  /** @type {{ name: string, size: number, start: number, end: number }[]} */
  const sections = []
  let at = 8
  while (at < wasm.length) {
    const id = wasm[at]
    const [size, body] = leb(wasm, at + 1)
    let name = SECTION_NAMES[id] ?? `#${id}`
    if (id === 0) {
      const [n, s] = leb(wasm, body)
      name = `custom:${Buffer.from(wasm.subarray(s, s + n)).toString()}`
    }
    sections.push({ name, size: body + size - at, start: body, end: body + size })
    at = body + size
  }
  let imported = 0
  const importSec = sections.find((s) => s.name === 'import')
  if (importSec) {
    let p = importSec.start
    let n
    ;[n, p] = leb(wasm, p)
    for (let i = 0; i < n; i++) {
      let len
      ;[len, p] = leb(wasm, p); p += len
      ;[len, p] = leb(wasm, p); p += len
      const kind = wasm[p++]
      if (kind === 0) { imported++; [, p] = leb(wasm, p) }
      else if (kind === 1) { p++; const flags = wasm[p++]; [, p] = leb(wasm, p); if (flags & 1) [, p] = leb(wasm, p) }
      else if (kind === 2) { const flags = wasm[p++]; [, p] = leb(wasm, p); if (flags & 1) [, p] = leb(wasm, p) }
      else if (kind === 3) { p += 2 }
    }
  }
  /** @type {{ index: number, size: number, name: string }[]} */
  const functions = []
  const code = sections.find((s) => s.name === 'code')
  if (code) {
    let [n, p] = leb(wasm, code.start)
    for (let i = 0; i < n; i++) {
      const [size, body] = leb(wasm, p)
      functions.push({ index: imported + i, size: body + size - p, name: `f${imported + i}` })
      p = body + size
    }
  }
  const names = sections.find((s) => s.name === 'custom:name')
  if (names) {
    let p = names.start
    const [n, s] = leb(wasm, p)
    p = s + n
    while (p < names.end) {
      const id = wasm[p]
      const [size, body] = leb(wasm, p + 1)
      if (id === 1) {
        let [count, q] = leb(wasm, body)
        const byIndex = new Map(functions.map((f) => [f.index, f]))
        for (let i = 0; i < count; i++) {
          let index, len
          ;[index, q] = leb(wasm, q)
          ;[len, q] = leb(wasm, q)
          const f = byIndex.get(index)
          if (f) f.name = Buffer.from(wasm.subarray(q, q + len)).toString()
          q += len
        }
      }
      p = body + size
    }
  }
  return { sections, functions }
}

/** Where a function comes from, by its (demangled) name. @param {string} name */
export function origin(name) {
  if (/nlohmann/.test(name)) return 'nlohmann/json'
  if (/emscripten::|embind|_embind_|EmscriptenBindingInitializer|__getTypeName/.test(name)) return 'Embind (C++ side)'
  if (/^st::|\(anonymous namespace\)|^(?:void |bool |unsigned |double |int )?st::/.test(name) && !/std::/.test(name.split('(')[0])) return 'safetensors core (st::)'
  if (/std::|__cxx|__2::|operator new|operator delete/.test(name)) return 'libc++ (strings, vectors, sort...)'
  if (/malloc|free|emmalloc|sbrk|memcpy|memset|memmove|memchr|memcmp|strlen|strto|__stdio|printf|__lib|__syscall|^f\d+$/.test(name)) return 'libc (musl, emmalloc)'
  return 'other'
}

async function main() {
  const { values } = parseArgs({ options: { names: { type: 'string' }, top: { type: 'string', default: '25' } } })
  console.log('size: shipped modules and JS layer, raw and gzip -9 (bytes; KB = 1000 bytes)')
  const dist = join(ROOT, 'dist')
  const modules = readdirSync(dist).filter((f) => f.endsWith('.mjs')).sort()
  for (const file of modules) {
    const text = readFileSync(join(dist, file), 'utf8')
    const { glue, embedded, embedding, wasm } = splitModule(text)
    const { sections } = wasmSections(wasm)
    console.log(`\n${file}: ${kb(text.length)} raw, ${kb(gz(text))} gzipped`)
    // The quant and digest modules are bare wasm in a JS wrapper; the index module is Emscripten's runtime
    // with plain C exports; the core has Embind's JS too.
    const wrapper = /^safetensors_(quant|digest)/.test(file) ? 'JS wrapper (exports the bytes)'
      : file.startsWith('safetensors_index') ? 'JS glue (Emscripten runtime, plain C exports)'
        : "JS glue (Emscripten runtime + Embind's JS)"
    console.log(`  ${wrapper}: ${kb(glue.length)} raw, ${kb(gz(glue))} gzipped`)
    console.log(`  wasm: ${kb(wasm.length)} raw, ${kb(gz(wasm))} gzipped as binary; ` +
      `embedded as ${embedding}: ${kb(Buffer.byteLength(embedded))} raw, ${kb(gz(embedded))} gzipped; ` +
      `as base64 it would be ${kb(gz(Buffer.from(wasm).toString('base64')))} gzipped`)
    console.log(`  wasm sections: ${sections.map((s) => `${s.name} ${kb(s.size)}`).join(', ')}`)
  }
  // What a page downloads: js/index.js and what it imports, bundled and minified as an app's
  // bundler would, plus the one core module js/wasm.js picks.
  const page = await pageBundle()
  const lazy = (/** @type {{ lazy: { name: string, gz: number }[] }} */ b) =>
    b.lazy.map((c) => `${c.name} ${kb(c.gz)}`).join(', ') || 'none'
  console.log(`\nJS layer, bundled by Rollup (as Vite builds a page) and minified by esbuild, gzipped:`)
  console.log(`  a page that opens files and reads tensors: ${kb(page.rollup.reading.gz)} at load ` +
    `(${kb(page.rollup.reading.raw)} raw; writer, casts, awkward writer tree-shaken away); loaded on first use: ${lazy(page.rollup.reading)}`)
  console.log(`  a page that uses every export: ${kb(page.rollup.everything.gz)} at load (${kb(page.rollup.everything.raw)} raw); ` +
    `loaded on first use: ${lazy(page.rollup.everything)}`)
  console.log(`  the same apps bundled by esbuild (code splitting keeps what js/index.js re-exports in the initial load): ` +
    `${kb(page.esbuild.reading.gz)} and ${kb(page.esbuild.everything.gz)} at load`)
  const cores = page.rollup.everything.cores
  console.log(`  the core modules as bundled chunks: ${cores.map((c) => `${c.name} ${kb(c.gz)}`).join(', ')}`)
  const kernels = page.rollup.everything.kernels
  const reads = page.rollup.reading.kernels
  console.log(`  the dequantization kernels as bundled chunks, loaded on first use (a first dequantize() loads one, ` +
    `picked as the core is; ${reads.length ? 'split from the reading page' : 'NOT found among the reading page\'s chunks'}): ` +
    `${kernels.map((c) => `${c.name} ${kb(c.gz)}`).join(', ')}`)
  const names = values.names === 'auto' ? namesBuild() : values.names
  if (names && existsSync(names)) {
    const { wasm } = splitModule(readFileSync(names, 'utf8'))
    const { functions } = wasmSections(wasm)
    /** @type {Map<string, { size: number, count: number }>} */
    const byOrigin = new Map()
    for (const f of functions) {
      const o = origin(f.name)
      const e = byOrigin.get(o) ?? { size: 0, count: 0 }
      e.size += f.size
      e.count++
      byOrigin.set(o, e)
    }
    const total = functions.reduce((s, f) => s + f.size, 0)
    console.log(`\nwasm code by origin (${names}: the same link plus --profiling-funcs; raw bytes of function bodies, ${kb(total)} in all):`)
    for (const [o, e] of [...byOrigin].sort((a, b) => b[1].size - a[1].size))
      console.log(`  ${o.padEnd(36)} ${kb(e.size).padStart(9)}  ${(100 * e.size / total).toFixed(1).padStart(5)}%  ${e.count} functions`)
    console.log(`largest functions:`)
    for (const f of functions.sort((a, b) => b.size - a.size).slice(0, Number(values.top)))
      console.log(`  ${kb(f.size).padStart(8)}  ${f.name.length > 150 ? `${f.name.slice(0, 150)}...` : f.name}`)
  }
  for (const core of cores) {
    const reading = page.rollup.reading.gz + core.gz
    figure({ area: 'size', figure: `a page that opens files and reads tensors: JS layer at load + ${core.name}, minified, gzipped`,
      ours: kb(reading), baselineName: 'budget', baseline: kb(BUDGET), ratio: reading / BUDGET,
      ratioText: `${(reading / BUDGET).toFixed(2)}x the budget`, target: '<= 80 KB', met: reading <= BUDGET })
    // No target: the writer, casts and the awkward writer and reader are what an app adds.
    const everything = page.rollup.everything.gz + core.gz
    figure({ area: 'size', figure: `a page that uses every export: JS layer + ${core.name}, minified, gzipped`,
      ours: kb(everything), baselineName: 'budget', baseline: kb(BUDGET), ratio: everything / BUDGET,
      ratioText: `${(everything / BUDGET).toFixed(2)}x the budget`, target: '', met: null })
  }
  const dequantize = page.rollup.reading.lazy.find((c) => c.name === 'dequantize.js')
  for (const k of page.rollup.reading.kernels) {
    const first = (dequantize?.gz ?? 0) + k.gz
    figure({ area: 'size', figure: `loaded on a page's first dequantize(): dequantize.js + ${k.name}, minified, gzipped (never at load)`,
      ours: kb(first), baselineName: 'budget', baseline: kb(BUDGET), ratio: first / BUDGET, ratioText: `${(first / BUDGET).toFixed(2)}x the budget`,
      target: '', met: null })
  }
  emitFigures()
}

/**
 * Relinks build/wasm's SIMD module with function names (CMake's own link command plus
 * --profiling-funcs). Returns the module's path, or null (with a note) when that cannot be done.
 */
function namesBuild() {
  const dir = join(ROOT, 'build', 'wasm')
  const linkFile = join(dir, 'CMakeFiles', 'safetensors_core.dir', 'link.txt')
  if (!existsSync(linkFile)) {
    console.log('\n(no build/wasm link command: run bash .ci/build.sh for the per-function breakdown)')
    return null
  }
  const out = join(ROOT, 'build', 'size-names', 'safetensors_core.mjs')
  mkdirSync(dirname(out), { recursive: true })
  const command = readFileSync(linkFile, 'utf8').trim().replace(/ -o safetensors_core\.mjs /, ` --profiling-funcs -o ${out} `)
  try {
    execSync(command, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, NODE_PATH: '/usr/share/nodejs' } })
    return out
  } catch (error) {
    console.log(`\n(relinking with function names failed: ${/** @type {Error} */ (error).message.split('\n')[0]})`)
    return null
  }
}

/** The core modules, which js/wasm.js imports dynamically: a page loads one of them. */
const CORE_CHUNK = /(safetensors_core(?:_nosimd)?)[-.]/
/** The kernels modules, which js/quant/kernels.js imports dynamically on a first dequantize(). */
const KERNELS_CHUNK = /(safetensors_quant(?:_nosimd)?)[-.]/
/** esbuild's output folder (nothing is written there: write is false); chunk names are relative to it. */
const ESBUILD_OUT = join(ROOT, 'build', 'size-bundle')

/**
 * Two apps bundled for a browser page, in memory: one that only opens files and reads tensors
 * (`open`: the bundler drops the rest), and one that imports every export of js/index.js (all
 * the JS the package can send to a page). Bundled by Rollup, what Vite's production builds use,
 * code-split (each dynamic import() its own chunk), then each chunk minified by esbuild. A page
 * downloads the entry chunk and the chunks it imports statically ("initial"); the other chunks
 * load when first used: a core module (one of the two), the sharded-set code, the awkward
 * reader. esbuild's own bundler is measured too: with code splitting it keeps every module that
 * js/index.js re-exports in the initial load, even when loaded with import() and unused.
 */
async function pageBundle() {
  const { rollup } = await import('rollup')
  const { build, transform } = await import('esbuild')
  const index = join(ROOT, 'js', 'index.js')
  const apps = {
    reading: `import { open } from ${JSON.stringify(index)}; globalThis.open = open`,
    everything: `import * as all from ${JSON.stringify(index)}; globalThis.all = all`,
  }
  /**
   * Sizes of the initial chunks summed, the lazy ones by name, the core modules apart.
   * @param {{ name: string, code: string | Uint8Array, entry: boolean, imports: string[] }[]} chunks
   */
  const measure = (chunks) => {
    const byName = new Map(chunks.map((c) => [c.name, c]))
    /** @type {Set<string>} */
    const initial = new Set()
    const visit = (/** @type {string} */ name) => {
      if (initial.has(name)) return
      initial.add(name)
      for (const i of byName.get(name)?.imports ?? []) visit(i)
    }
    for (const c of chunks) if (c.entry) visit(c.name)
    const out = { raw: 0, gz: 0, lazy: /** @type {{ name: string, gz: number }[]} */ ([]), cores: /** @type {{ name: string, gz: number }[]} */ ([]),
      kernels: /** @type {{ name: string, gz: number }[]} */ ([]) }
    for (const c of chunks) {
      const core = CORE_CHUNK.exec(c.name)
      const kernels = KERNELS_CHUNK.exec(c.name)
      if (core) {
        out.cores.push({ name: `${core[1]}.mjs`, gz: gz(c.code) })
      } else if (kernels && !initial.has(c.name)) {
        out.kernels.push({ name: `${kernels[1]}.mjs`, gz: gz(c.code) })
      } else if (initial.has(c.name)) {
        out.raw += c.code.length
        out.gz += gz(c.code)
      } else {
        out.lazy.push({ name: c.name.replace(/[-.][\w-]*\.js$/, '.js'), gz: gz(c.code) })
      }
    }
    out.cores.sort((x, y) => x.name.localeCompare(y.name))
    out.kernels.sort((x, y) => x.name.localeCompare(y.name))
    return out
  }
  /** @param {string} contents the app's entry module */
  const withRollup = async (contents) => {
    const bundle = await rollup({
      input: 'app',
      plugins: [{ name: 'app', resolveId: (id) => (id === 'app' ? id : null), load: (id) => (id === 'app' ? contents : null) }],
    })
    const { output } = await bundle.generate({ format: 'es' })
    await bundle.close()
    const chunks = []
    for (const o of output) {
      if (o.type !== 'chunk') continue
      const { code } = await transform(o.code, { minify: true, format: 'esm' })
      chunks.push({ name: o.fileName, code, entry: o.isEntry, imports: o.imports })
    }
    return measure(chunks)
  }
  /** @param {string} contents the app's entry module */
  const withEsbuild = async (contents) => {
    const result = await build({
      stdin: { contents, resolveDir: ROOT, sourcefile: 'app.js' }, bundle: true, minify: true, splitting: true,
      format: 'esm', platform: 'browser', outdir: ESBUILD_OUT, write: false, metafile: true,
      logLevel: 'error',
    })
    const outputs = /** @type {import('esbuild').Metafile} */ (result.metafile).outputs
    return measure(result.outputFiles.map((f) => {
      const name = relative(ESBUILD_OUT, f.path)
      const meta = outputs[relative(ROOT, f.path)]
      return { name, code: f.contents, entry: meta.entryPoint !== undefined,
        imports: meta.imports.filter((i) => i.kind === 'import-statement').map((i) => relative(ESBUILD_OUT, join(ROOT, i.path))) }
    }))
  }
  return {
    rollup: { reading: await withRollup(apps.reading), everything: await withRollup(apps.everything) },
    esbuild: { reading: await withEsbuild(apps.reading), everything: await withEsbuild(apps.everything) },
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main()

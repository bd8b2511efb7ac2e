#!/usr/bin/env node
/**
 * The benchmark suite (`npm run bench`): runs every bench, each in its own Node process, prints
 * their output, then one table of every figure with its baseline, the ratio, the target and
 * whether it is met, and the command that reproduces it. The table is also written to
 * bench/results/latest.md. Each figure is measured in one run against its baseline on this
 * machine; on a busy machine rerun the area alone (the command column) before reading much
 * into a single number.
 *   node bench/index.js [--only header,convert] [--quick]
 * --quick: smaller inputs (4M elements, 256 MiB, 1 run), for a smoke test of the suite.
 */
import { spawn } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { machine } from './common.js'

const HERE = dirname(fileURLToPath(import.meta.url))
const { values } = parseArgs({ options: { only: { type: 'string' }, quick: { type: 'boolean', default: false } } })
const quick = values.quick

/**
 * @typedef {import('./common.js').Figure} Figure
 * @typedef {{ area: string, script: string, args: string[], parse?: (out: string) => Figure[] }} Bench
 */

/** @type {Bench[]} */
const BENCHES = [
  { area: 'size', script: 'size.js', args: quick ? [] : ['--names', 'auto'] },
  { area: 'header', script: 'header.js', args: quick ? ['--rounds', '3'] : [] },
  { area: 'convert', script: 'convert.js', args: quick ? ['--elements', String(1 << 22), '--rounds', '3'] : [] },
  { area: 'stats', script: 'stats.js', args: quick ? ['--elements', String(1 << 22), '--rounds', '3', '--stream-gib', '1'] : [] },
  { area: 'to-float32', script: 'to-float32.js', args: quick ? ['--elements', String(1 << 22), '--rounds', '3'] : [] },
  { area: 'quant', script: 'quant.js', args: quick ? ['--elements', String(1 << 22), '--rounds', '3'] : [] },
  { area: 'local', script: 'local.js', args: quick ? ['--mib', '256', '--runs', '1'] : [] },
  { area: 'remote', script: 'remote-targets.js', args: [] },
  { area: 'remote-peers', script: 'remote.js', args: ['--runs', quick ? '1' : '3'], parse: remoteFigures },
  { area: 'cache', script: 'cache.js', args: quick ? ['--shards', '24', '--runs', '1'] : [] },
  { area: 'cache-ranges', script: 'cache-ranges.js', args: quick ? ['--mib', '16', '--runs', '1'] : [] },
  { area: 'convert-remote', script: 'convert-remote.js', args: quick ? ['--runs', '1'] : [] },
  { area: 'sharded-headers', script: 'sharded-headers.js', args: quick ? ['--runs', '1'] : [] },
  { area: 'sharded-headers-link', script: 'sharded-headers.js', args: ['--bandwidth', '1000', ...(quick ? ['--runs', '1'] : [])] },
  { area: 'sharded-count', script: 'sharded-count.js', args: quick ? ['--runs', '1'] : [] },
  { area: 'index-parse', script: 'index-parse.js', args: quick ? ['--rounds', '1'] : [] },
  { area: 'inspector-scale', script: 'inspector-scale.js', args: quick ? ['--runs', '1'] : [] },
  { area: 'inspector-open', script: 'inspector-open.js', args: quick ? ['--runs', '1'] : [] },
  { area: 'write', script: 'write.js', args: quick ? ['--mib', '256'] : [], parse: writeFigures },
  { area: 'gpu', script: 'gpu.js', args: quick ? ['--mib', '256', '--rounds', '1'] : [] },
]

/**
 * Runs one bench, echoing its output; resolves to its figures.
 * @param {Bench} bench
 * @returns {Promise<{ figures: Figure[], ok: boolean, seconds: number }>}
 */
function run(bench) {
  return new Promise((resolve) => {
    const t0 = performance.now()
    const child = spawn(process.execPath, ['--expose-gc', join(HERE, bench.script), ...bench.args], { stdio: ['ignore', 'pipe', 'inherit'] })
    let out = ''
    child.stdout.on('data', (chunk) => {
      const text = chunk.toString()
      out += text
      process.stdout.write(text.replace(/^BENCH_FIGURES .*\n?/m, ''))
    })
    child.on('close', (code) => {
      const line = /^BENCH_FIGURES (.*)$/m.exec(out)
      /** @type {Figure[]} */
      let figures = line ? JSON.parse(line[1]) : []
      if (bench.parse && code === 0) figures = bench.parse(out)
      resolve({ figures, ok: code === 0, seconds: (performance.now() - t0) / 1000 })
    })
  })
}

/** Figures from bench/remote.js's markdown table: each peer against us. @param {string} out */
function remoteFigures(out) {
  /** @type {Figure[]} */
  const figures = []
  for (const line of out.split('\n')) {
    const cells = line.split('|').map((c) => c.trim())
    if (cells.length < 9 || !/^\d+$/.test(cells[3])) continue
    const [, scenario, client, requests, bytes, ms] = cells
    if (client === 'safetensors-wasm') {
      figures.push({ area: 'remote-peers', figure: `${scenario}: safetensors-wasm`, ours: `${ms} ms, ${requests} requests, ${bytes} bytes`,
        baselineName: '', baseline: '', ratio: 1, ratioText: '', target: '', met: null })
      continue
    }
    const xTime = Number(cells[8])
    figures.push({ area: 'remote-peers', figure: `${scenario}: vs ${client}`, ours: 'safetensors-wasm', baselineName: client,
      baseline: `${ms} ms, ${requests} requests, ${bytes} bytes`, ratio: xTime,
      ratioText: `it takes ${xTime.toFixed(2)}x our time, ${cells[7]}x our bytes`, target: '', met: null })
  }
  return figures
}

/** Figures from bench/write.js's table: each writer against the naive JS one and memcpy. @param {string} out */
function writeFigures(out) {
  /** @type {Record<string, string[]>} */
  const rows = {}
  for (const line of out.split('\n')) {
    const m = /^(memcpy|serialize|serializeStream|writeFile|naive)\s{2,}(.*)$/.exec(line)
    if (m) rows[m[1]] = m[2].trim().split(/\s{2,}/)
  }
  /** @type {Figure[]} */
  const figures = []
  const ms = (/** @type {string} */ k) => parseFloat(rows[k]?.[0] ?? 'NaN')
  for (const name of ['serialize', 'serializeStream', 'writeFile']) {
    if (!rows[name]) continue
    const r = ms('naive') / ms(name)
    figures.push({ area: 'write', figure: `${name}, 1 GiB of F32 (${rows[name][2]} of memcpy's time, RSS +${rows[name][3]})`,
      ours: `${rows[name][0]} (${rows[name][1]})`, baselineName: 'naive JS (Buffer.concat + writeFile)', baseline: `${rows.naive?.[0]} (RSS +${rows.naive?.[3]})`,
      ratio: r, ratioText: `${r.toFixed(2)}x faster`, target: '', met: null })
  }
  return figures
}

async function main() {
  const only = values.only ? new Set(values.only.split(',')) : null
  console.log(`safetensors-wasm benchmarks${quick ? ' (quick)' : ''}; ${machine()}\n`)
  /** @type {(Figure & { command: string })[]} */
  const all = []
  for (const bench of BENCHES) {
    if (only && !only.has(bench.area)) continue
    const command = `node bench/${bench.script}${bench.args.length ? ` ${bench.args.join(' ')}` : ''}`
    console.log(`== ${bench.area}: ${command}`)
    const { figures, ok, seconds } = await run(bench)
    console.log(`   (${seconds.toFixed(0)} s${ok ? '' : ', FAILED'})\n`)
    if (!ok) all.push({ area: bench.area, figure: 'bench failed', ours: '', baseline: '', baselineName: '', ratio: NaN, ratioText: '', target: '', met: false, command })
    for (const f of figures) all.push({ ...f, command })
  }
  const lines = ['| area | figure | ours | baseline | ratio | target | met | command |', '|---|---|---|---|---|---|---|---|']
  for (const f of all) {
    const met = f.met === null ? '' : f.met ? 'yes' : '**no**'
    const baseline = f.baselineName && f.baseline ? `${f.baselineName}: ${f.baseline}` : f.baseline || f.baselineName
    lines.push(`| ${f.area} | ${f.figure} | ${f.ours} | ${baseline} | ${f.ratioText} | ${f.target} | ${met} | \`${f.command}\` |`)
  }
  const table = lines.join('\n')
  console.log(`== all figures (${machine()})\n${table}`)
  const targets = all.filter((f) => f.met !== null)
  console.log(`\ntargets: ${targets.filter((f) => f.met).length} met, ${targets.filter((f) => !f.met).length} not met`)
  mkdirSync(join(HERE, 'results'), { recursive: true })
  writeFileSync(join(HERE, 'results', 'latest.md'), `${machine()}, ${new Date().toISOString()}\n\n${table}\n`)
}

await main()

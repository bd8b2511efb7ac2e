#!/usr/bin/env node
/**
 * Local loads in Node: every tensor of a 1 GiB file (64 x 16 MiB, F32 and BF16) read through
 * open(path) + load(names), against fs.readFileSync of the whole file plus JSON.parse of the
 * header and a typed-array view per tensor. Each case runs in its own process (so peak RSS is
 * its own), alternately, five times; the file is read once first so both read from the page
 * cache. Reported: median time, throughput, and peak RSS added over the process's RSS before
 * the read (getrusage's high-water mark), against the tensors' bytes.
 *   node bench/local.js [--mib 1024] [--dir DIR] [--runs 5]
 */
import { spawnSync } from 'node:child_process'
import { closeSync, openSync, readFileSync, rmSync, writeSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { emitFigures, figure, fmtMs, machine, median } from './common.js'

const MIB = 1 << 20
const { values } = parseArgs({
  options: { mib: { type: 'string', default: '1024' }, dir: { type: 'string' }, runs: { type: 'string', default: '5' },
    case: { type: 'string' }, path: { type: 'string' } },
})

if (values.case) await runCase(values.case, /** @type {string} */ (values.path))
else await main()

/** Writes the test file: `mib` MiB of tensors of 16 MiB, alternately F32 and BF16. @param {string} path @param {number} mib */
function makeFile(path, mib) {
  const count = Math.max(1, Math.floor(mib / 16))
  /** @type {Record<string, any>} */
  const header = { __metadata__: { format: 'pt' } }
  let offset = 0
  for (let i = 0; i < count; i++) {
    const dtype = i % 2 ? 'BF16' : 'F32'
    const shape = dtype === 'F32' ? [4096, 1024] : [8192, 1024]
    header[`model.layers.${i}.weight`] = { dtype, shape, data_offsets: [offset, offset + 16 * MIB] }
    offset += 16 * MIB
  }
  let json = JSON.stringify(header)
  json += ' '.repeat((8 - (json.length % 8)) % 8)
  const prefix = Buffer.alloc(8 + json.length)
  prefix.writeBigUInt64LE(BigInt(json.length))
  prefix.write(json, 8)
  const fd = openSync(path, 'w')
  writeSync(fd, prefix)
  const block = Buffer.alloc(16 * MIB)
  for (let i = 0; i < block.length; i += 4) block.writeUInt32LE((i * 2654435761) >>> 0, i)
  for (let i = 0; i < count; i++) writeSync(fd, block)
  closeSync(fd)
  return { count, bytes: offset }
}

async function main() {
  const mib = Number(values.mib)
  const dir = values.dir ?? mkdtempSync(join(tmpdir(), 'st-bench-local-'))
  const path = join(dir, 'model.safetensors')
  const { count, bytes } = makeFile(path, mib)
  readFileSync(path)  // into the page cache
  console.log(`local loads: ${count} tensors, ${(bytes / MIB).toFixed(0)} MiB, from the page cache; ${machine()}`)
  /** @type {Record<string, any[]>} */
  const results = { ours: [], oneByOne: [], readFileSync: [] }
  for (let run = 0; run < Number(values.runs); run++) {
    for (const name of Object.keys(results)) {
      const r = spawnSync(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), '--case', name, '--path', path],
        { encoding: 'utf8', timeout: 300_000 })
      if (r.status !== 0) throw new Error(`${name} failed (${r.status}): ${r.stderr}`)
      results[name].push(JSON.parse(r.stdout))
    }
  }
  if (!values.dir) rmSync(dir, { recursive: true })
  /** @param {string} name */
  const summary = (name) => ({ ms: median(results[name].map((r) => r.ms)), peak: median(results[name].map((r) => r.peakAdded)) })
  const ours = summary('ours')
  const one = summary('oneByOne')
  const base = summary('readFileSync')
  const gibs = (/** @type {number} */ ms) => `${(bytes / 2 ** 30 / (ms / 1000)).toFixed(2)} GiB/s`
  const r = base.ms / ours.ms
  figure({ area: 'local', figure: `open(path) + load(every tensor), ${(bytes / MIB).toFixed(0)} MiB`, ours: `${fmtMs(ours.ms)} (${gibs(ours.ms)})`,
    baselineName: 'readFileSync + views', baseline: `${fmtMs(base.ms)} (${gibs(base.ms)})`, ratio: r,
    ratioText: `${r.toFixed(2)}x its throughput`, target: '>= 0.9x', met: r >= 0.9 })
  const limit = bytes + 64 * MIB
  figure({ area: 'local', figure: 'peak RSS added by open + load', ours: `${(ours.peak / MIB).toFixed(0)} MiB`,
    baselineName: 'tensor bytes + 64 MiB', baseline: `${(limit / MIB).toFixed(0)} MiB`, ratio: ours.peak / limit,
    ratioText: `${(ours.peak / MIB - bytes / MIB).toFixed(0)} MiB over the tensors`, target: '<= tensors + 64 MiB', met: ours.peak <= limit })
  figure({ area: 'local', figure: 'peak RSS added by readFileSync + views', ours: `${(base.peak / MIB).toFixed(0)} MiB`,
    baselineName: 'tensor bytes', baseline: `${(bytes / MIB).toFixed(0)} MiB`, ratio: base.peak / bytes,
    ratioText: `${(base.peak / MIB - bytes / MIB).toFixed(0)} MiB over the tensors`, target: '', met: null })
  const r1 = base.ms / one.ms
  figure({ area: 'local', figure: 'tensor() one at a time, each disposed after use', ours: `${fmtMs(one.ms)} (${gibs(one.ms)}), peak +${(one.peak / MIB).toFixed(0)} MiB`,
    baselineName: 'readFileSync + views', baseline: fmtMs(base.ms), ratio: r1, ratioText: `${r1.toFixed(2)}x its throughput`, target: '', met: null })
  emitFigures()
}

/** @param {string} name @param {string} path */
async function runCase(name, path) {
  const gc = /** @type {() => void} */ (globalThis.gc)
  const { open } = await import('../js/node.js')
  const { loadCore } = await import('../js/wasm.js')
  const core = await loadCore()
  gc()
  const rssBefore = process.memoryUsage().rss
  const t0 = performance.now()
  let checksum = 0
  if (name === 'ours') {
    const f = await open(path)
    const tensors = await f.load(f.names)
    for (const t of tensors.values()) checksum += t.data.length
    await f.close()
  } else if (name === 'oneByOne') {
    const f = await open(path)
    for (const n of f.names) {
      const t = await f.tensor(n)
      checksum += t.data.length
      t.dispose()
    }
    await f.close()
  } else {
    const buf = readFileSync(path)
    const n = Number(buf.readBigUInt64LE(0))
    const header = JSON.parse(buf.toString('utf8', 8, 8 + n))
    for (const [key, info] of Object.entries(header)) {
      if (key === '__metadata__') continue
      const [b, e] = info.data_offsets
      const Ctor = info.dtype === 'F32' ? Float32Array : Uint16Array
      checksum += new Ctor(buf.buffer, buf.byteOffset + 8 + n + b, (e - b) / Ctor.BYTES_PER_ELEMENT).length
    }
  }
  const ms = performance.now() - t0
  const peak = process.resourceUsage().maxRSS * 1024
  process.stdout.write(JSON.stringify({ name, ms, peakAdded: peak - rssBefore, checksum, heap: core.HEAPU8.length }))
}

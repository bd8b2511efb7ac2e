#!/usr/bin/env node
/**
 * Writer benchmark: 1 GiB of generated F32 tensors (64 x 16 MiB) written by serialize,
 * serializeStream piped to a file, writeFile, and a naive JS baseline (a JSON header plus
 * Buffer.concat of the tensors, then fs.writeFile), against a plain memcpy of the same bytes.
 *
 *   node bench/write.js [--dir DIR] [--mib 1024] [--tensor-mib 16]
 *
 * Each case runs in its own Node process (so peak memory is its own): the process makes the
 * tensors, collects garbage, then runs the case once. Reported: time and throughput, time over
 * the cold memcpy's, and memory added over the input: peak RSS (getrusage's high-water mark
 * and 5 ms samples) and wasm heap growth; a no-op case (an 8-byte file) gives the noise floor.
 * File cases are timed up to an fsync of the file, so every path pays for the same disk work.
 * Needs about 2x the data size in RAM and 1x on disk (--dir /dev/shm takes the disk out).
 */
import { spawnSync } from 'node:child_process'
import { createWriteStream } from 'node:fs'
import { mkdtemp, open as fsOpen, rm, writeFile as fsWriteFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { serialize, serializeStream, writeFile } from '../js/node.js'
import { loadCore } from '../js/wasm.js'

const MIB = 1024 * 1024
const CASES = ['memcpy', 'serialize', 'serializeStream', 'writeFile', 'naive', 'noop']

const { values } = parseArgs({
  options: {
    dir: { type: 'string' },
    mib: { type: 'string', default: '1024' },
    'tensor-mib': { type: 'string', default: '16' },
    case: { type: 'string' },
  },
})
const totalMib = Number(values.mib)
const tensorMib = Number(values['tensor-mib'])
const count = Math.floor(totalMib / tensorMib)

if (values.case) await runCase(values.case)
else await main()

async function main() {
  const dir = values.dir ?? await mkdtemp(join(tmpdir(), 'st-bench-write-'))
  console.log(`writing ${count} x ${tensorMib} MiB F32 tensors (${count * tensorMib} MiB); Node ${process.version}; files in ${dir}`)
  /** @type {Record<string, any>} */
  const results = {}
  for (const name of CASES) {
    const r = spawnSync(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), '--case', name, '--dir', dir,
      '--mib', String(totalMib), '--tensor-mib', String(tensorMib)], { encoding: 'utf8', timeout: 120_000 })
    if (r.status !== 0) throw new Error(`${name} failed (${r.status}): ${r.stderr}`)
    results[name] = JSON.parse(r.stdout)
  }
  if (!values.dir) await rm(dir, { recursive: true })
  // memcpy: Uint8Array.prototype.set of every tensor into a preallocated buffer already written
  // once (warm); the cold pass into fresh pages is shown too, since serialize pays for those.
  const memcpy = results.memcpy.warmMs
  const rows = [['case', 'time', 'throughput', 'vs memcpy', 'RSS added', 'JS heap added', 'wasm heap added']]
  /** @param {string} label @param {number} ms @param {any} r */
  const row = (label, ms, r) => [label, `${ms.toFixed(0)} ms`, `${(r.bytes / MIB / 1024 / (ms / 1000)).toFixed(2)} GiB/s`,
    `${(ms / memcpy).toFixed(2)}x`, ...[r.rssAdded, r.jsHeapAdded, r.heapAdded].map((n) => `${(n / MIB).toFixed(1)} MiB`)]
  rows.push(row('memcpy', memcpy, results.memcpy), row('memcpy (cold pages)', results.memcpy.ms, results.memcpy))
  for (const name of CASES.slice(1, -1)) rows.push(row(name, results[name].ms, results[name]))
  const noop = results.noop
  rows.push(['noop (8-byte file)', `${noop.ms.toFixed(0)} ms`, '', '', ...[noop.rssAdded, noop.jsHeapAdded, noop.heapAdded].map((n) => `${(n / MIB).toFixed(1)} MiB`)])
  const widths = rows[0].map((_, i) => Math.max(...rows.map((row) => row[i].length)))
  for (const row of rows) console.log(row.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  '))
  console.log(`header: ${results.serialize.headerBytes} bytes; input: ${(results.serialize.inputRss / MIB).toFixed(0)} MiB RSS after generation`)
}

/** @param {string} name */
async function runCase(name) {
  const gc = /** @type {() => void} */ (globalThis.gc)
  const core = await loadCore()
  /** @type {Map<string, { dtype: string, shape: number[], data: Float32Array }>} */
  const tensors = new Map()
  for (let i = 0; i < count; i++) {
    const data = new Float32Array((tensorMib * MIB) / 4)
    for (let j = 0; j < data.length; j += 1024) data[j] = i + j  // touch every page
    data.fill(i + 0.5, 1, 2)
    tensors.set(`model.layers.${i}.weight`, { dtype: 'F32', shape: [data.length / 1024, 1024], data })
  }
  const bytes = count * tensorMib * MIB
  const path = join(/** @type {string} */ (values.dir), `${name}.safetensors`)
  gc()
  gc()
  const inputRss = process.memoryUsage().rss
  const jsHeapBefore = process.memoryUsage().heapTotal
  const heapBefore = core.HEAPU8.length
  let sampled = inputRss
  const sampler = setInterval(() => { sampled = Math.max(sampled, process.memoryUsage().rss) }, 5)
  /** @type {Record<string, number>} */
  const extra = {}
  const start = performance.now()
  if (name === 'memcpy') {
    const out = new Uint8Array(bytes)
    let at = 0
    for (const t of tensors.values()) {
      out.set(new Uint8Array(t.data.buffer), at)
      at += t.data.byteLength
    }
    extra.warmMs = performance.now()
    at = 0
    for (const t of tensors.values()) {
      out.set(new Uint8Array(t.data.buffer), at)
      at += t.data.byteLength
    }
    extra.warmMs = performance.now() - extra.warmMs
  } else if (name === 'serialize') {
    const out = await serialize(tensors)
    extra.headerBytes = out.length - bytes
  } else if (name === 'serializeStream') {
    await pipeline(Readable.fromWeb(/** @type {any} */ (await serializeStream(tensors))), createWriteStream(path))
    await fsync(path)
  } else if (name === 'writeFile') {
    await writeFile(path, tensors)  // syncs before its rename
  } else if (name === 'noop') {
    // The noise floor of "RSS added": a file of 8 bytes, written and synced the same way.
    await fsWriteFile(path, new Uint8Array(8))
    await fsync(path)
  } else if (name === 'naive') {
    await fsWriteFile(path, naiveFile(tensors))
    await fsync(path)
  } else {
    throw new Error(`unknown case ${name}`)
  }
  const ms = (name === 'memcpy' ? performance.now() - extra.warmMs : performance.now()) - start
  clearInterval(sampler)
  const peak = Math.max(sampled, process.resourceUsage().maxRSS * 1024)
  await rm(path, { force: true })
  const jsHeapAdded = process.memoryUsage().heapTotal - jsHeapBefore
  process.stdout.write(JSON.stringify({ name, ms, bytes, inputRss, rssAdded: peak - inputRss, jsHeapAdded, heapAdded: core.HEAPU8.length - heapBefore, ...extra }))
}

/** @param {string} path */
async function fsync(path) {
  const fh = await fsOpen(path, 'r+')
  await fh.sync()
  await fh.close()
}

/**
 * What one would write without a library: the header as JSON.stringify makes it, padded to 8,
 * then every tensor, all concatenated into one Buffer.
 * @param {Map<string, { dtype: string, shape: number[], data: Float32Array }>} tensors
 */
function naiveFile(tensors) {
  /** @type {Record<string, unknown>} */
  const header = {}
  let offset = 0
  for (const [name, t] of tensors) {
    header[name] = { dtype: t.dtype, shape: t.shape, data_offsets: [offset, offset + t.data.byteLength] }
    offset += t.data.byteLength
  }
  let json = JSON.stringify(header)
  json += ' '.repeat((8 - (Buffer.byteLength(json) % 8)) % 8)
  const length = Buffer.alloc(8)
  length.writeBigUInt64LE(BigInt(Buffer.byteLength(json)))
  return Buffer.concat([length, Buffer.from(json), ...[...tensors.values()].map((t) => new Uint8Array(t.data.buffer))])
}

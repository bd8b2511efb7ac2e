#!/usr/bin/env node
/**
 * Reading tensor bytes back from the cache's ranges (`cache: { ranges: true }`), in Node, against
 * the physical baseline: reading exactly the same bytes from the cache's range files with
 * node:fs (no check, no copy into the wasm heap). A 64 MiB F32 tensor ([64, 262144]: 1 MiB per
 * row) is read once through the cache to fill it, then, within maxAge (no request at all), read
 * whole with chunks() and as one 1 MiB row with slice(), each alternated with the baseline over
 * `--runs` runs (medians). Also the digests alone on the same bytes: SHA-256 (node:crypto, what
 * the cache used before) and the cache's XXH64 block digests (js/io/digest.js).
 * Then the same in a page (Chromium, the Cache API), when there is one: the tensor read back from
 * the Cache API's ranges against reading the same stored answers' bytes (blob().arrayBuffer()),
 * and crypto.subtle's SHA-256 against XXH64 on the same bytes.
 *   node bench/cache-ranges.js [--mib 64] [--runs 5] [--no-page]
 */
import { createHash } from 'node:crypto'
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { open as fsOpen } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { open } from '../js/node.js'
import { digestOf } from '../js/io/digest.js'
import { startServer } from '../tests/js/http-server.js'
import { launchChromium, skip } from '../tests/browser/chromium.js'
import { bytesBody, findFile, startServer as startApp } from '../web-demo/serve.js'
import { emitFigures, figure, fmtMs, fmtX, machine, median, virtualHeader } from './common.js'

const { values } = parseArgs({ options: { mib: { type: 'string', default: '64' }, runs: { type: 'string', default: '5' },
  'no-page': { type: 'boolean', default: false } } })
const MIB = Number(values.mib)
const RUNS = Number(values.runs)
const ROW = 1 << 18  // F32 elements: 1 MiB a row

const server = await startServer({ lifetime: 30 * 60_000 })
const { prefix, dataLength } = virtualHeader([{ name: 'w', dtype: 'F32', shape: [MIB, ROW] }])
server.addVirtual('/big/model.safetensors', {
  size: prefix.length + dataLength,
  fill(out, o) {
    for (let i = 0; i < out.length; i++) out[i] = o + i < prefix.length ? prefix[o + i] : ((o + i) * 2654435761) >>> 24
  },
})
const url = server.url('/big/model.safetensors')
const dir = mkdtempSync(join(tmpdir(), 'st-bench-ranges-'))
const cache = { dir, ranges: true, maxAge: 3600 }

/** Opens the file through the cache (no request within maxAge) and runs `read` on it; its ms.
 * @param {(f: import('../js/node.js').SafetensorsFile) => Promise<number>} read */
async function timed(read) {
  const f = /** @type {import('../js/node.js').SafetensorsFile} */ (/** @type {unknown} */ (await open(url, { cache })))
  try {
    const t0 = performance.now()
    const n = await read(f)
    const ms = performance.now() - t0
    if (n === 0) throw new Error('nothing read')
    return ms
  } finally {
    await f.close()
  }
}
/** @param {import('../js/node.js').SafetensorsFile} f */
const whole = async (f) => {
  let n = 0
  for await (const chunk of f.chunks('w')) n += chunk.data.byteLength
  if (n !== dataLength) throw new Error(`${n} bytes, expected ${dataLength}`)
  return n
}
/** @param {import('../js/node.js').SafetensorsFile} f */
const row = async (f) => {
  const t = await f.slice('w', String(MIB >> 1))
  const n = t.byteLength
  t.dispose()
  return n
}

/** The cache's range files: path and the length of the bytes they hold (in their name). */
function rangeFiles() {
  const out = []
  for (const entry of readdirSync(dir)) {
    for (const name of readdirSync(join(dir, entry))) {
      if (name.startsWith('range-')) out.push({ path: join(dir, entry, name), start: Number(name.split('-')[2]), length: Number(name.split('-')[3]) })
    }
  }
  return out
}
/** Reads exactly the bytes of the given range files ([from, to) of the file's data when given). */
async function plain(/** @type {{ path: string, length: number }[]} */ files) {
  let n = 0
  for (const file of files) {
    const handle = await fsOpen(file.path)
    try {
      const bytes = new Uint8Array(file.length)
      for (let at = 0; at < bytes.length;) {
        const { bytesRead } = await handle.read(bytes, at, bytes.length - at, at)
        if (bytesRead === 0) throw new Error('short')
        at += bytesRead
      }
      n += bytes.length
    } finally {
      await handle.close()
    }
  }
  return n
}
/** Reads the 1 MiB row's bytes from the range file that holds it. */
async function plainRow(/** @type {{ path: string, start: number, length: number }[]} */ files) {
  const at = prefix.length + (MIB >> 1) * ROW * 4
  const file = files.find((r) => r.start <= at && at + ROW * 4 <= r.start + r.length)
  if (!file) throw new Error('no range holds the row')
  const handle = await fsOpen(file.path)
  try {
    const bytes = new Uint8Array(ROW * 4)
    const { bytesRead } = await handle.read(bytes, 0, bytes.length, at - file.start)
    return bytesRead
  } finally {
    await handle.close()
  }
}

console.log(`cache-ranges: a ${MIB} MiB tensor read back from the cache's ranges (a folder); ${machine()}`)
await timed(whole)  // fills the cache (and warms the module, the wasm, the connection)
await open(url, { cache }).then((f) => f.close())  // writes settled
const files = rangeFiles()
console.log(`  range files: ${files.map((r) => `${(r.length / 2 ** 20).toFixed(2)} MiB`).join(', ')}`)
server.resetStats()

/** @type {Record<string, number[]>} */
const t = { whole: [], plain: [], row: [], plainRow: [], sha: [], xxh: [] }
const data = new Uint8Array(dataLength)
for (let i = 0; i < data.length; i++) data[i] = (i * 2654435761) >>> 24
for (let r = 0; r < RUNS + 1; r++) {
  const sample = {
    whole: await timed(whole),
    plain: await (async () => { const t0 = performance.now(); await plain(files); return performance.now() - t0 })(),
    row: await timed(row),
    plainRow: await (async () => { const t0 = performance.now(); await plainRow(files); return performance.now() - t0 })(),
    sha: (() => { const t0 = performance.now(); createHash('sha256').update(data).digest(); return performance.now() - t0 })(),
    xxh: (() => { const t0 = performance.now(); digestOf('x', [data]); return performance.now() - t0 })(),
  }
  if (r === 0) continue  // warm-up
  for (const [k, v] of Object.entries(sample)) t[k].push(v)
}
if (server.stats.requests !== 0) throw new Error(`${server.stats.requests} requests: not read from the cache`)
const m = Object.fromEntries(Object.entries(t).map(([k, v]) => [k, median(v)]))
console.log(`| ${MIB} MiB from cached ranges | time | vs plain fs read |\n|---|---|---|`)
console.log(`| whole tensor, chunks() | ${fmtMs(m.whole)} | ${fmtX(m.whole / m.plain)} of ${fmtMs(m.plain)} |`)
console.log(`| one 1 MiB row, slice() | ${fmtMs(m.row)} | ${fmtX(m.row / m.plainRow)} of ${fmtMs(m.plainRow)} |`)
console.log(`| digests alone, ${MIB} MiB: SHA-256 (node:crypto) | ${fmtMs(m.sha)} | |`)
console.log(`| digests alone, ${MIB} MiB: XXH64 1 MiB blocks (digest.js) | ${fmtMs(m.xxh)} | ${fmtX(m.sha / m.xxh)} faster than SHA-256 |`)

figure({ area: 'cache-ranges', figure: `${MIB} MiB tensor from cached ranges (chunks)`, ours: fmtMs(m.whole), baselineName: 'plain read of the range files',
  baseline: fmtMs(m.plain), ratio: m.plain / m.whole, ratioText: `${fmtX(m.whole / m.plain)} the plain read's time`, target: 'within 2x of the plain read',
  met: m.whole <= 2 * m.plain })
figure({ area: 'cache-ranges', figure: `1 MiB row of a ${MIB} MiB cached range (slice)`, ours: fmtMs(m.row), baselineName: 'plain read of its bytes',
  baseline: fmtMs(m.plainRow), ratio: m.plainRow / m.row, ratioText: `${fmtX(m.row / m.plainRow)} the plain read's time`, target: '', met: null,
  note: 'the open not timed' })
figure({ area: 'cache-ranges', figure: `digest of ${MIB} MiB`, ours: `XXH64 blocks ${fmtMs(m.xxh)}`, baselineName: 'SHA-256 (node:crypto)',
  baseline: fmtMs(m.sha), ratio: m.sha / m.xxh, ratioText: `${fmtX(m.sha / m.xxh)} faster`, target: '', met: null })
rmSync(dir, { recursive: true, force: true })
await server.close()
if (values['no-page'] || skip) console.log(`  page: skipped (${skip || '--no-page'})`)
else await inPage()
emitFigures()

/** The same in a page of Chromium: the Cache API backend, crypto.subtle. */
async function inPage() {
  const file = new Uint8Array(prefix.length + dataLength)
  file.set(prefix)
  file.set(data, prefix.length)
  const app = await startApp({
    find: async (path) => (path === '/big/model.safetensors' ? bytesBody(file, path) : findFile(path)),
    policy: (path) => ({ data: path === '/big/model.safetensors' }),
  })
  const browser = await launchChromium()
  try {
    const page = await browser.newPage()
    await page.goto(app.url('/web-demo/'))
    const p = await page.evaluate(async ([src, runs]) => {
      const { open } = await import('/js/index.js')
      /** @type {any} */
      const digest = await import('/js/io/digest.js')
      const options = { cache: { ranges: true, maxAge: 3600 }, requestInit: { cache: /** @type {RequestCache} */ ('no-store') } }
      const read = async () => {
        const f = /** @type {any} */ (await open(src, options))
        const t0 = performance.now()
        let n = 0
        for await (const chunk of f.chunks('w')) n += chunk.data.byteLength
        const ms = performance.now() - t0
        await f.close()
        return { ms, n }
      }
      await read()
      await read()  // stored, settled
      const cache = await caches.open('safetensors-wasm')
      const stored = (await cache.keys()).filter((r) => new URL(r.url).pathname.endsWith('/range'))
      const plain = async () => {
        const t0 = performance.now()
        for (const request of stored) {
          const answer = /** @type {Response} */ (await cache.match(request))
          const length = Number(new URL(request.url).searchParams.get('l'))
          await (await answer.blob()).slice(0, length).arrayBuffer()
        }
        return performance.now() - t0
      }
      const bytes = new Uint8Array(await (await cache.match(stored[stored.length - 1])).arrayBuffer())
      /** @type {Record<string, number[]>} */
      const t = { whole: [], plain: [], sha: [], xxh: [] }
      for (let r = 0; r < runs; r++) {
        t.whole.push((await read()).ms)
        t.plain.push(await plain())
        let t0 = performance.now()
        await crypto.subtle.digest('SHA-256', bytes)
        t.sha.push(performance.now() - t0)
        t0 = performance.now()
        digest.digestOf('x', [bytes])
        t.xxh.push(performance.now() - t0)
      }
      const med = (/** @type {number[]} */ xs) => xs.slice().sort((a, b) => a - b)[xs.length >> 1]
      return { whole: med(t.whole), plain: med(t.plain), sha: med(t.sha), xxh: med(t.xxh), hashed: bytes.length, ranges: stored.length }
    }, /** @type {const} */ ([app.url('/big/model.safetensors'), RUNS]))
    const hashed = `${(p.hashed / 2 ** 20).toFixed(1)} MiB`
    console.log(`| in a page (Chromium) | time | vs |\n|---|---|---|`)
    console.log(`| whole tensor from the Cache API's ${p.ranges} ranges, chunks() | ${fmtMs(p.whole)} | ${fmtX(p.whole / p.plain)} of reading their bytes, ${fmtMs(p.plain)} |`)
    console.log(`| digest of ${hashed}: SHA-256 (crypto.subtle) | ${fmtMs(p.sha)} | |`)
    console.log(`| digest of ${hashed}: XXH64 1 MiB blocks (digest.js) | ${fmtMs(p.xxh)} | ${fmtX(p.sha / p.xxh)} faster than SHA-256 |`)
    figure({ area: 'cache-ranges', figure: `page: ${MIB} MiB tensor from cached ranges (chunks)`, ours: fmtMs(p.whole),
      baselineName: 'reading the stored answers\' bytes', baseline: fmtMs(p.plain), ratio: p.plain / p.whole,
      ratioText: `${fmtX(p.whole / p.plain)} the plain read's time`, target: '', met: null })
    figure({ area: 'cache-ranges', figure: `page: digest of ${hashed}`, ours: `XXH64 blocks ${fmtMs(p.xxh)}`, baselineName: 'SHA-256 (crypto.subtle)',
      baseline: fmtMs(p.sha), ratio: p.sha / p.xxh, ratioText: `${fmtX(p.sha / p.xxh)} faster`, target: '', met: null })
  } finally {
    await browser.close()
    await app.close()
  }
}

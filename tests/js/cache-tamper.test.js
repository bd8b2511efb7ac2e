// The folder cache of open() serves only what it stored: an entry edited on disk (a header or
// range byte, another URL's entry copied in, a range truncated, gone, or a link to a file
// elsewhere) is dropped and the file read from the server, within maxAge as after a 304; a cache
// folder that is a link or that others can write to is refused; and nothing outside the cache
// folder is written or deleted. Each test has a folder of its own and a file of its own.
import assert from 'node:assert/strict'
import { chmodSync, cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { open, serialize } from '../../js/node.js'
import { fails } from './fails.js'
import { startServer } from './http-server.js'

/** @typedef {import('../../js/node.js').SafetensorsFile} SafetensorsFile */

/** @type {Awaited<ReturnType<typeof startServer>>} */
let server
/** @type {string} */
let root
before(async () => {
  server = await startServer()
  root = mkdtempSync(join(tmpdir(), 'st-tamper-'))
})
after(async () => {
  await server.close()
  rmSync(root, { recursive: true, force: true })
})

let made = 0
/** A new folder's path (not made). */
const fresh = () => join(root, `f-${++made}`)
/** Within maxAge (no request), and validated (a 304) */
const MODES = [{ maxAge: 60 }, {}]

// A tensor past the first answer (256 KiB), so that its bytes are kept as two ranges.
const BIG = Float32Array.from({ length: 100_000 }, (_, i) => i % 991)

/** A file on the server whose tensors are named with `prefix`, its URL. @param {string} prefix */
async function serve(prefix) {
  const bytes = await serialize({
    [`${prefix}.a`]: { dtype: 'F32', shape: [4], data: Float32Array.from([1, 2, 3, 4]) },
    [`${prefix}.big`]: { dtype: 'F32', shape: [BIG.length], data: BIG },
  })
  const path = `/${prefix}/model.safetensors`
  server.addFile(path, bytes)
  return server.url(path)
}

/** Opens `url` with the folder cache and reads every tensor: [names, values of each].
 * @param {string} url @param {Record<string, unknown>} cache */
async function readAll(url, cache) {
  const f = /** @type {SafetensorsFile} */ (/** @type {unknown} */ (await open(url, { cache })))
  try {
    const out = []
    for (const name of f.names) {
      const t = await f.tensor(name)
      out.push(Array.from(t.toFloat32()))
      t.dispose()
    }
    return [f.names, out]
  } finally {
    await f.close()
  }
}

/** What a reader of `prefix`'s file should get. @param {string} prefix */
const expected = (prefix) => [[`${prefix}.a`, `${prefix}.big`], [[1, 2, 3, 4], Array.from(BIG)]]

/** The folder of the entry of `url` in `dir`, and its files. @param {string} dir @param {string} url */
function entryOf(dir, url) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name)
    const meta = JSON.parse(readFileSync(join(path, 'meta.json'), 'utf8'))
    if (meta.url === url) return { path, meta, files: readdirSync(path).sort() }
  }
  throw new Error(`no entry for ${url}`)
}

/** Every file under `dir` with its bytes, to see that nothing changed. @param {string} dir */
function snapshot(dir) {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).sort()
    .map((name) => [name, statSync(join(dir, name)).isFile() ? readFileSync(join(dir, name), 'latin1') : 'folder'])
}

/** Flips one byte of a file. @param {string} path @param {number} at */
function flip(path, at) {
  const bytes = readFileSync(path)
  bytes[at] ^= 0x01
  writeFileSync(path, bytes)
}

/** The range files of an entry, the one at the header's end first. @param {{ files: string[], path: string }} entry */
const ranges = (entry) => entry.files.filter((n) => n.startsWith('range-'))
  .sort((a, b) => Number(a.split('-')[2]) - Number(b.split('-')[2])).map((n) => join(entry.path, n))

/**
 * Caches a new file, has `attack` alter the entry, and checks that a reopen in each mode reads
 * the server's bytes, asking the server for what was altered.
 * @param {string} prefix
 * @param {(entry: ReturnType<typeof entryOf>, cache: { dir: string }) => unknown} attack
 */
async function survives(prefix, attack) {
  for (const mode of MODES) {
    const dir = fresh()
    const cache = { dir, ranges: true, ...mode }
    const url = await serve(`${prefix}-${mode.maxAge ?? 0}`)
    await readAll(url, cache)
    await attack(entryOf(dir, url), cache)
    server.resetStats()
    assert.deepEqual(await readAll(url, cache), expected(`${prefix}-${mode.maxAge ?? 0}`), `maxAge ${mode.maxAge ?? 0}`)
    assert.ok(server.stats.log.some((e) => e.status === 206), `maxAge ${mode.maxAge ?? 0}: read from the server again`)
  }
}

test('a header byte edited on disk is not served: the entry is dropped and the header read again', async () => {
  await survives('header', (entry) => flip(join(entry.path, `body-${entry.meta.ver}`), 20))
})

test('a range byte edited on disk is not served: the range is read from the server', async () => {
  await survives('range', (entry) => flip(ranges(entry)[1], 1000))
})

test('a truncated range, and a range gone, are read from the server, not a plain Error or ENOENT', async () => {
  await survives('truncated', (entry) => truncateSync(ranges(entry)[1], 100))
  await survives('vanished', (entry) => rmSync(ranges(entry)[1]))
})

test('another URL\'s entry copied over this one is not served for it', async () => {
  // A file of the same length: the same ETag on this server, so a 304 alone would not tell.
  await survives('copied', async (entry, cache) => {
    const prefix = new URL(entry.meta.url).pathname.split('/')[1]
    const url = await serve(prefix.toUpperCase())
    await readAll(url, cache)
    const other = entryOf(cache.dir, url)
    rmSync(entry.path, { recursive: true })
    cpSync(other.path, entry.path, { recursive: true })
  })
})

test('a range that is a link to a file elsewhere is not followed: the file is neither served, written nor deleted', async () => {
  /** @type {[string, ReturnType<typeof snapshot>][]} */
  const outside = []
  await survives('linked', (entry) => {
    const [, range] = ranges(entry)
    const elsewhere = fresh()
    mkdirSync(elsewhere)
    writeFileSync(join(elsewhere, 'other.bin'), new Uint8Array(statSync(range).size).fill(7))
    outside.push([elsewhere, snapshot(elsewhere)])
    rmSync(range)
    symlinkSync(join(elsewhere, 'other.bin'), range)
  })
  for (const [elsewhere, before] of outside) assert.deepEqual(snapshot(elsewhere), before)
})

test('an entry folder that is a link to a folder elsewhere is not read, written through or emptied', async () => {
  /** @type {[string, ReturnType<typeof snapshot>][]} */
  const outside = []
  await survives('folder-link', (entry) => {
    const elsewhere = fresh()
    cpSync(entry.path, elsewhere, { recursive: true })
    flip(ranges({ path: elsewhere, files: entry.files })[1], 5)  // served through the link, a wrong answer
    outside.push([elsewhere, snapshot(elsewhere)])
    rmSync(entry.path, { recursive: true })
    symlinkSync(elsewhere, entry.path)
  })
  for (const [elsewhere, before] of outside) assert.deepEqual(snapshot(elsewhere), before)
})

test('an entry folder that others can write to is not trusted: it is dropped and the file read again', async () => {
  await survives('shared', (entry) => chmodSync(entry.path, 0o777))
})

test('a cache folder that is a link, or that others can write to, is refused with a clear error', async () => {
  const url = await serve('refused')
  const real = fresh()
  mkdirSync(real, { mode: 0o700 })
  const link = fresh()
  symlinkSync(real, link)
  await fails(open(url, { cache: { dir: link } }), 'InvalidArgument', /symbolic link/)
  for (const mode of [0o777, 0o770, 0o702]) {
    chmodSync(real, mode)
    await fails(open(url, { cache: { dir: real } }), 'InvalidArgument', /writable by other users/)
  }
  assert.deepEqual(readdirSync(real), [], 'nothing written into it')
  chmodSync(real, 0o700)
  assert.deepEqual(await readAll(url, { dir: real }), expected('refused'), 'a private folder is used')
  assert.equal(readdirSync(real).length, 1)
  for (const name of readdirSync(real, { recursive: true, encoding: 'utf8' })) {
    const { mode } = statSync(join(real, name))
    assert.equal(mode & 0o777, statSync(join(real, name)).isDirectory() ? 0o700 : 0o600, name)
  }
})

test('a read checks only the blocks it touches: an edit elsewhere in a range does not cost its read, and is caught where read', async () => {
  // One tensor of 5 rows of 1 MiB, read whole: a range of about 5 MiB past the first answer.
  const ROW = 262_144
  const rows = Float32Array.from({ length: 5 * ROW }, (_, i) => (i * 7) % 1013)
  const bytes = await serialize({ 'rows.big': { dtype: 'F32', shape: [5, ROW], data: rows } })
  server.addFile('/rows/model.safetensors', bytes)
  const url = server.url('/rows/model.safetensors')
  const cache = { dir: fresh(), ranges: true, maxAge: 60 }
  await readAll(url, cache)
  const entry = entryOf(cache.dir, url)
  const [, range] = ranges(entry)
  flip(range, 4.5 * 2 ** 20)  // in the range's fifth block: the last row
  /** @param {string} spec */
  const slice = async (spec) => {
    const f = /** @type {SafetensorsFile} */ (/** @type {unknown} */ (await open(url, { cache })))
    try {
      const t = await f.slice('rows.big', spec)
      const out = Array.from(t.toFloat32())
      t.dispose()
      return out
    } finally {
      await f.close()
    }
  }
  server.resetStats()
  assert.deepEqual(await slice('0'), Array.from(rows.subarray(0, ROW)))
  assert.equal(server.stats.requests, 0, 'the first row is served from blocks that were not edited')
  assert.deepEqual(await slice('4'), Array.from(rows.subarray(4 * ROW)))
  assert.ok(server.stats.log.some((e) => e.status === 206), 'the edited block is read from the server')
})

test('an entry of the older format (SHA-256 digests) is dropped and read from the server once', async () => {
  await survives('older', (entry) => {
    const path = join(entry.path, 'meta.json')
    writeFileSync(path, JSON.stringify({ ...entry.meta, v: 1 }))
  })
})

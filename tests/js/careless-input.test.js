// What a careless or hostile caller gives the API, and what it gets back: a coded SafetensorsError
// naming what was wrong, never a TypeError, a hang or data lost without a word. Slices with
// BigInts, steps or stray bounds; close() during a read; writer input that is not what it takes;
// paths that are not regular files (a FIFO would block forever); indexes too large to be one.
import assert from 'node:assert/strict'
import { execFile, execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { open, serialize } from '../../js/node.js'
import { startServer } from './http-server.js'
import { fails } from './fails.js'

const CLI = fileURLToPath(new URL('../../js/cli/main.js', import.meta.url))

/** @type {string} */
let dir
/** @type {Awaited<ReturnType<typeof startServer>>} */
let server
before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'st-careless-'))
  server = await startServer()
})
after(() => {
  rmSync(dir, { recursive: true, force: true })
  return server.close()
})

test('slices: BigInt indices work; steps, extra bounds and fractions are InvalidSlice', async () => {
  const data = new Float32Array(6 * 8).map((_, i) => i)
  const f = /** @type {import('../../js/node.js').SafetensorsFile} */ (await open(await serialize({ m: { dtype: 'F32', shape: [6, 8], data } })))
  const byNumber = await f.slice('m', [5])
  const byBigInt = await f.slice('m', [5n])
  assert.deepEqual(byBigInt.shape, [8])
  assert.deepEqual(byBigInt.copy(), byNumber.copy())
  const range = await f.slice('m', [[1n, 3n], [null, 2n]])
  assert.deepEqual(range.shape, [2, 2])
  assert.deepEqual([...range.toFloat32()], [8, 9, 16, 17])
  const e = await fails(f.slice('m', [[0, 4, 2]]), 'InvalidSlice', /\[0, 4, 2\] \(dimension 0\) has 3 numbers: a range is \[start, stop\]; steps are not supported/)
  assert.equal(e.tensor, 'm')
  await fails(f.slice('m', [[0, 4, -1]]), 'InvalidSlice', /steps are not supported/)
  await fails(f.slice('m', [[1, 2, 3, 4]]), 'InvalidSlice', /has 4 numbers/)
  await fails(f.slice('m', [null, [0.5, 2]]), 'InvalidSlice', /\[0\.5, 2\] \(dimension 1\): the bounds of a range are integers or null/)
  await fails(f.slice('m', [['1', 2]]), 'InvalidSlice', /\["1", 2\]/)
  await fails(f.slice('m', [{}]), 'InvalidSlice', /\[object Object\] \(dimension 0\) is not an integer/)
  await fails(f.slice('m', [2n ** 70n]), 'InvalidSlice', /does not fit/)
  for (const t of [byNumber, byBigInt, range]) t.dispose()
})

test('close() during a Node file read rejects the read with Closed', async () => {
  // A sparse file: one 512 MiB tensor of zeros, read in 64 MiB pieces.
  const path = join(dir, 'big.safetensors')
  const bytes = await serialize({ big: { dtype: 'U8', shape: [8], data: new Uint8Array(8) } })
  const header = new TextDecoder().decode(bytes.subarray(8, 8 + Number(new DataView(bytes.buffer).getBigUint64(0, true))))
  const big = header.replace('"shape":[8]', `"shape":[${512 * 2 ** 20}]`).replace('"data_offsets":[0,8]', `"data_offsets":[0,${512 * 2 ** 20}]`)
  const padded = big.padEnd(Math.ceil(big.length / 8) * 8, ' ')
  const prefix = new Uint8Array(8 + padded.length)
  new DataView(prefix.buffer).setBigUint64(0, BigInt(padded.length), true)
  prefix.set(new TextEncoder().encode(padded), 8)
  writeFileSync(path, prefix)
  truncateSync(path, prefix.length + 512 * 2 ** 20)
  const f = await open(path)
  const reading = f.tensor('big').then(() => null, (error) => error)
  await new Promise((resolve) => setImmediate(resolve))
  await f.close()
  await fails(reading.then((error) => { throw error }), 'Closed', /was closed/)
  await fails(f.tensor('big'), 'Closed')
})

test('the writer refuses what it cannot write, naming the tensor, and takes metadata as a Map', async () => {
  const ok = { dtype: 'F32', shape: [1], data: new Float32Array(1) }
  await fails(serialize(/** @type {any} */ (null)), 'InvalidArgument', /tensors is null/)
  await fails(serialize(/** @type {any} */ (undefined)), 'InvalidArgument', /tensors is undefined/)
  await fails(serialize(/** @type {any} */ (new Map([[Symbol('w'), ok]]))), 'InvalidArgument', /a tensor name is Symbol\(w\), not a string/)
  const values = new Float32Array(1)
  structuredClone(values.buffer, { transfer: [values.buffer] })  // as postMessage(x, [x.buffer]) leaves it
  let e = await fails(serialize({ w: { dtype: 'F32', shape: [1], data: values } }), 'InvalidArgument', /detached/)
  assert.equal(e.tensor, 'w')
  e = await fails(serialize({ w: /** @type {any} */ ({ dtype: 'F32', data: new Float32Array(1) }) }), 'InvalidArgument', /has no shape .*\[\] for a scalar/)
  assert.equal(e.tensor, 'w')
  await fails(serialize({ w: ok }, { metadata: /** @type {any} */ (new Set(['a'])) }), 'InvalidHeaderDeserialization', /not Set/)
  await fails(serialize({ w: ok }, { metadata: /** @type {any} */ (['a']) }), 'InvalidHeaderDeserialization', /not an array/)
  await fails(serialize({ w: ok }, { metadata: /** @type {any} */ (new Map([[1, 'a']])) }), 'InvalidHeaderDeserialization', /a metadata key is number/)
  const bytes = await serialize({ w: ok }, { metadata: new Map([['format', 'pt'], ['note', 'from a Map']]) })
  const f = await open(bytes)
  assert.deepEqual(f.metadata, { format: 'pt', note: 'from a Map' })
})

test('paths that are not regular files are refused at once: a FIFO, a directory', { timeout: 20_000 }, async (t) => {
  const fifo = join(dir, 'pipe.safetensors')
  try {
    execFileSync('mkfifo', [fifo])
  } catch {
    t.skip('mkfifo is not available')
    return
  }
  await fails(open(fifo), 'UnsupportedSource', /it is a named pipe \(FIFO\), not a file/)
  const folder = join(dir, 'folder.safetensors')
  mkdirSync(folder)
  await fails(open(folder), 'UnsupportedSource', /it is a directory, not a file/)
  mkdirSync(join(dir, 'model.safetensors.index.json'))
  await fails(open(join(dir, 'model.safetensors.index.json')), 'UnsupportedSource', /it is a directory/)
  // The CLI says so with its code, without a stack trace, and without hanging on the FIFO.
  for (const path of [fifo, folder]) {
    const { code, stderr } = await new Promise((resolve) => {
      execFile(process.execPath, [CLI, 'inspect', path], { encoding: 'utf8', timeout: 15_000 }, (error, _, stderr) =>
        resolve({ code: error ? /** @type {any} */ (error).code : 0, stderr }))
    })
    assert.equal(code, 1, stderr)
    assert.match(stderr, /UnsupportedSource/)
    assert.ok(!/\n\s+at /.test(stderr), `a stack trace: ${stderr}`)
  }
})

test('an index over maxIndexBytes (64 MiB by default) is refused by its size before it is read, from a path', async () => {
  const path = join(dir, 'huge.safetensors.index.json')
  writeFileSync(path, '{"weight_map": {')
  truncateSync(path, 64 * 2 ** 20 + 1)  // sparse: nothing is written, nothing is read
  await fails(open(path), 'InvalidIndex', /67108865 bytes, more than an index may have here \(maxIndexBytes, 67108864\)/)
  truncateSync(path, 2000)
  await fails(open(path, { maxIndexBytes: 1000 }), 'InvalidIndex', /2000 bytes, more than an index may have here \(maxIndexBytes, 1000\)/)
})

/** A virtual index of `size` bytes: `head` (by default `{"weight_map": {"`) then `byte` to the end. @param {number} size @param {number} byte */
function virtualIndex(size, byte, head = '{"weight_map": {"') {
  const start = new TextEncoder().encode(head)
  return { size, fill: (/** @type {Uint8Array} */ out, /** @type {number} */ offset) => {
    out.fill(byte)
    if (offset < start.length) out.set(start.subarray(offset, offset + out.length))
  } }
}

test('an index one byte over the 64 MiB default, with its Content-Length: refused before its body is read', async () => {
  server.addVirtual('/over/model.safetensors.index.json', virtualIndex(64 * 2 ** 20 + 1, 32))
  server.resetStats()
  await fails(open(server.url('/over/model.safetensors.index.json')), 'InvalidIndex',
    /67108865 bytes or more, over the 67108864 an index may have here \(maxIndexBytes\)/)
  // What the server wrote before the client cancelled: socket buffers' worth, not the index.
  assert.ok(server.stats.bytes < 16 * 2 ** 20, `${server.stats.bytes} bytes of the body were sent`)
})

/**
 * The peak RSS a client process grows by while `open` refuses the endless index at `path`
 * (served without a length), with the error's code and message. A child process, so that its
 * peak (maxRSS) is the client's alone, measured from after its modules are loaded.
 * @param {string} path
 */
async function refusalGrowth(path) {
  const client = `import { open } from ${JSON.stringify(new URL('../../js/node.js', import.meta.url).href)}
    import { loadIndexModule } from ${JSON.stringify(new URL('../../js/core/index-map.js', import.meta.url).href)}
    await loadIndexModule()
    const before = process.resourceUsage().maxRSS * 1024
    const error = await open(process.argv[1]).then(() => null, (e) => e)
    console.log(JSON.stringify({ code: error?.code, message: error?.message, growth: process.resourceUsage().maxRSS * 1024 - before }))`
  const out = await new Promise((resolve, reject) => execFile(process.execPath, ['--input-type=module', '-e', client,
    server.url(path)], { encoding: 'utf8', timeout: 110_000 }, (error, stdout) => (error ? reject(error) : resolve(stdout))))
  return /** @type {{ code: string, message: string, growth: number }} */ (JSON.parse(/** @type {string} */ (out)))
}

test('an endless index without a length (one name, one shard path, metadata, or spaces growing): refused in memory well under the 64 MiB cap', { timeout: 120_000 }, async () => {
  // One name the length of the index was held whole, copied as it grew: about 4 times the cap
  // (250 MiB at 64 MiB, 1.6 GiB at the former 512 MiB). Now a name, path or metadata has its own cap.
  // Its bytes pass through fetch's stream (about the bytes seen until collected): spaces, only the
  // 64 MiB cap ends them; the others end at a cap of their own, well before.
  /** @type {[string, string, number, RegExp, number][]} */
  const bodies = [
    ['name', '{"weight_map": {"', 97, /the tensor name at byte 16 is over 65536 bytes \(\d+ or more\), the most an index's name may have here/, 32],
    ['path', '{"weight_map": {"a": "', 97, /the shard path at byte 21 is over 4096 bytes/, 32],
    ['metadata', '{"metadata": {"', 97, /the metadata at byte 13 is over 1048576 bytes/, 48],
    ['spaces', '', 32, /over 67108864 bytes, the most an index may have here/, 96],
  ]
  for (const [what, head, byte, message, mib] of bodies) {
    const path = `/growing-${what}/model.safetensors.index.json`
    server.addVirtual(path, virtualIndex(2 ** 40, byte, head))
    server.fault(path, { gzipWhole: true })  // no Content-Length
    const got = await refusalGrowth(path)
    assert.equal(got.code, 'InvalidIndex', got.message)
    assert.match(got.message, message)
    assert.ok(got.growth < mib * 2 ** 20, `${what}: peak RSS grew by ${Math.round(got.growth / 2 ** 20)} MiB refusing it, over ${mib}`)
  }
  server.clearFaults()
})

test('an endless index body over HTTP: refused at the cap, and an abort ends it at once', async () => {
  server.addVirtual('/endless/model.safetensors.index.json', { size: 2 ** 40, fill: (out) => out.fill(32) })
  server.fault('/endless/model.safetensors.index.json', { gzipWhole: true })  // no Content-Length
  // Spaces are JSON whitespace: only the cap ends them (a smaller one than the default, for time).
  await fails(open(server.url('/endless/model.safetensors.index.json'), { maxIndexBytes: 64 * 2 ** 20 }), 'InvalidIndex',
    /over 67108864 bytes, the most an index may have here \(maxIndexBytes\)/)
  const controller = new AbortController()
  const opening = open(server.url('/endless/model.safetensors.index.json'), { signal: controller.signal })
  setTimeout(() => controller.abort(), 50)
  await fails(opening, 'Aborted')
  server.clearFaults()
})

test('a Blob is read in slices of at most 16 MiB, straight into the heap; a failed slice is IoError', async () => {
  const values = new Uint8Array(40 * 2 ** 20).map((_, i) => (i * 7) & 0xff)
  const bytes = await serialize({ big: { dtype: 'U8', shape: [values.length], data: values } })
  /** @type {number[]} */
  const slices = []
  class CountingBlob extends Blob {
    /** @param {number} [start] @param {number} [end] */
    slice(start, end) {
      slices.push((end ?? this.size) - (start ?? 0))
      return super.slice(start, end)
    }
  }
  const f = /** @type {import('../../js/node.js').SafetensorsFile} */ (await open(new CountingBlob([bytes])))
  slices.length = 0
  const t = await f.tensor('big')
  assert.deepEqual(t.bytes, values)
  t.dispose()
  assert.equal(slices.reduce((a, b) => a + b, 0), values.length)
  assert.ok(Math.max(...slices) <= 16 * 2 ** 20, `a slice of ${Math.max(...slices)} bytes`)

  class VanishedFile extends Blob {
    slice() {
      return /** @type {Blob} */ (/** @type {unknown} */ ({ arrayBuffer: () => Promise.reject(new DOMException('the file changed', 'NotReadableError')) }))
    }
  }
  const e = await fails(open(new VanishedFile([bytes])), 'IoError', /cannot read 8 bytes at offset 0 of blob: the file changed \(was the file changed or moved/)
  assert.equal(/** @type {Error} */ (e.cause).name, 'NotReadableError')
})

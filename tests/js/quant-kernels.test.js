// The kernels module (js/quant/kernels.js, dist/safetensors_quant*.mjs): it loads with default
// options through the SIMD and the no-SIMD build (SAFETENSORS_WASM_SIMD=0 forces the latter,
// checked in a child process), both builds give the same bits for every kernel on random inputs,
// and instantiating it leaves the core's heap as it was (the module has no data to write).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { loadCore, coreVariant } from '../../js/wasm.js'
import { loadKernels } from '../../js/quant/kernels.js'

/** A seeded xorshift, for inputs both processes build alike. @param {number} seed */
function random(seed) {
  let x = seed | 0 || 1
  return () => {
    x ^= x << 13
    x ^= x >>> 17
    x ^= x << 5
    return x >>> 0
  }
}

/**
 * Runs every kernel on random inputs (in several shapes and scale types) and returns each
 * output's bits, NaNs made canonical (their payloads are the engine's choice).
 * @param {any} core
 * @param {import('../../js/quant/kernels.js').Kernels} k
 * @returns {Map<string, Uint32Array>}
 */
function runAll(core, k) {
  const next = random(12345)
  /** @type {number[]} */
  const allocated = []
  const alloc = (/** @type {number} */ n) => {
    const p = core._malloc(Math.max(n, 16)) >>> 0
    allocated.push(p)
    return p
  }
  const bytes = (/** @type {number} */ n) => {
    const p = alloc(n)
    const view = new Uint8Array(core.HEAPU8.buffer, p, n)
    for (let i = 0; i < n; i++) view[i] = next() & 255
    return p
  }
  const words = (/** @type {number} */ n, /** @type {number} */ mask = 0xffffffff) => {
    const p = alloc(n * 4)
    const view = new Uint32Array(core.HEAPU8.buffer, p, n)
    for (let i = 0; i < n; i++) view[i] = next() & mask
    return p
  }
  const floats = (/** @type {number} */ n) => {
    const p = alloc(n * 4)
    const view = new Float32Array(core.HEAPU8.buffer, p, n)
    for (let i = 0; i < n; i++) view[i] = ((next() % 20001) - 10000) / 4096
    return p
  }
  /** Scales of a type: random finite values. @param {string} dtype @param {number} n */
  const scales = (dtype, n) => {
    if (dtype === 'F32') return floats(n)
    if (dtype === 'F8_E4M3') {
      const p = bytes(n)
      const v = new Uint8Array(core.HEAPU8.buffer, p, n)
      for (let i = 0; i < n; i++) v[i] %= 0x7f
      return p
    }
    const p = alloc(n * 2)
    const v = new Uint16Array(core.HEAPU8.buffer, p, n)
    for (let i = 0; i < n; i++) v[i] = dtype === 'F16' ? next() & 0x7bff : (next() & 0x3fff) | 0x3000
    return p
  }
  /** @type {Map<string, Uint32Array>} */
  const results = new Map()
  /** @param {string} name @param {number} n @param {(out: number) => void} run */
  const record = (name, n, run) => {
    const out = alloc(n * 4)
    new Uint8Array(core.HEAPU8.buffer, out, n * 4).fill(0xa5)
    run(out)
    const bits = new Uint32Array(core.HEAPU8.buffer, out, n).slice()
    const f = new Float32Array(bits.buffer)
    for (let i = 0; i < n; i++) if (Number.isNaN(f[i])) bits[i] = 0x7fc00000
    results.set(name, bits)
  }

  for (const scaleDtype of /** @type {const} */ (['F32', 'F16', 'BF16', 'F8_E4M3'])) {
    const rows = 67, cols = 300, blockRows = 16, blockCols = 128, firstRow = 5
    const scaleCols = Math.ceil(cols / blockCols)
    const w = bytes(rows * cols)
    const s = scales(scaleDtype, Math.ceil((firstRow + rows) / blockRows) * scaleCols)
    record(`fp8Block ${scaleDtype}`, rows * cols, (out) =>
      k.fp8Block({ w, scales: s, scaleDtype, out, rows, cols, firstRow, blockRows, blockCols, scaleCols }))
  }
  for (const scaleDtype of /** @type {const} */ (['F32', 'BF16'])) {
    // per tensor, per channel, per group (a partial last group; tails past the 16-wide SIMD steps)
    for (const [rows, cols, blockRows, blockCols, firstRow] of [[40, 301, 1000, 301, 0], [37, 300, 1, 300, 3], [29, 150, 1, 32, 2]]) {
      const scaleCols = Math.ceil(cols / blockCols)
      const n = Math.ceil((firstRow + rows) / blockRows) * scaleCols
      const w = bytes(rows * cols)
      const s = scales(scaleDtype, n)
      const zeroPoints = bytes(n)
      for (const zp of [false, true]) {
        record(`int8Block ${scaleDtype} ${rows}x${cols} ${blockRows}x${blockCols}${zp ? ' zero points' : ''}`, rows * cols, (out) =>
          k.int8Block({ w, scales: s, scaleDtype, zeroPoints: zp ? zeroPoints : 0, out, rows, cols, firstRow, blockRows, blockCols, scaleCols }))
      }
    }
  }
  {
    const groups = 1001
    const blocks = bytes(groups * 16)
    const s = bytes(groups)
    record('mxfp4', groups * 32, (out) => k.mxfp4({ blocks, scales: s, out, groups }))
  }
  for (const [rows, cols, group] of [[33, 96, 16], [5, 40, 16], [7, 36, 6], [3, 256, 32]]) {
    const scaleCols = Math.ceil(cols / group)
    const packed = bytes(rows * cols / 2)
    const s = scales('F8_E4M3', rows * scaleCols)
    for (const divide of [false, true]) {
      for (const positiveZero of [false, true]) {
        record(`nvfp4 ${rows}x${cols}/${group} ${divide ? 'divide' : 'multiply'}${positiveZero ? ' +0' : ''}`, rows * cols,
          (out) => k.nvfp4({ packed, scales: s, out, rows, cols, group, scaleCols, globalScale: Math.fround(0.0123), divide,
            positiveZero }))
      }
    }
  }
  for (const bits of [2, 3, 4, 8]) {
    const inFeatures = 256, outFeatures = 96, group = 64, groups = inFeatures / group
    const qweight = words(inFeatures * bits / 32 * outFeatures)
    const qzeros = words(groups * outFeatures * bits / 32)
    const s = scales('F16', groups * outFeatures)
    const gIdx = alloc(inFeatures * 4)
    const g = new Int32Array(core.HEAPU8.buffer, gIdx, inFeatures)
    for (let i = 0; i < inFeatures; i++) g[i] = next() % groups
    record(`gptq ${bits} bits`, 90 * inFeatures, (out) => k.gptq({ qweight: qweight + (64 * bits / 32) * outFeatures * 4,
      qzeros, scales: s, scaleDtype: 'F16', gIdx, out, inFeatures, outFeatures, firstIn: 64, inCount: 160,
      firstOut: 3, outCount: 90, bits, zeroOffset: 1 }))
  }
  {
    const inFeatures = 130, outFeatures = 48, group = 32, groups = Math.ceil(inFeatures / group)
    const qweight = words(inFeatures * outFeatures / 8)
    const qzeros = words(groups * outFeatures / 8)
    const s = scales('F16', groups * outFeatures)
    record('awq', 41 * inFeatures, (out) => k.awq({ qweight, qzeros, scales: s, scaleDtype: 'F16', out, inFeatures,
      outFeatures, firstIn: 0, inCount: inFeatures, firstOut: 5, outCount: 41, group }))
  }
  {
    const n = 1001, blocksize = 64, first = 77, count = 900
    const packed = bytes(Math.ceil(n / 2))
    const absmax = floats(Math.ceil(n / blocksize))
    const quantMap = floats(16)
    record('nf4', count, (out) => k.nf4({ packed: packed + (first >> 1), absmax: absmax + Math.floor(first / blocksize) * 4,
      quantMap, out, first, count, blocksize }))
    const absmax8 = bytes(600)
    const nestedMap = floats(256)
    const nestedAbsmax = floats(3)
    record('nf4Absmax', 470, (out) => k.nf4Absmax({ absmax: absmax8 + 130, nestedMap, nestedAbsmax,
      offset: Math.fround(0.0371), out, firstBlock: 130, count: 470, nestedBlock: 256 }))
  }
  for (const bits of [4, 8]) {
    const outFeatures = 29, inFeatures = 70, pf = 32 / bits, rowWords = Math.ceil(inFeatures / pf)
    for (const group of [32, inFeatures]) {
      const groups = Math.ceil(inFeatures / group)
      const packed = words(outFeatures * rowWords)
      const s = scales('BF16', outFeatures * groups)
      const zeroPoints = words(Math.ceil(outFeatures / pf) * groups)
      for (const zp of [false, true]) {
        record(`ctPack ${bits} bits group ${group}${zp ? ' zero points' : ''}`, 20 * inFeatures, (out) =>
          k.ctPack({ packed: packed + 4 * rowWords * 4, scales: s + 4 * groups * 2, scaleDtype: 'BF16',
            zeroPoints: zp ? zeroPoints : 0, out, rows: 20, firstRow: 4, inFeatures, bits, group, groups, outFeatures }))
      }
    }
  }
  for (const p of allocated) core._free(p)
  return results
}

/** @param {Map<string, Uint32Array>} results */
function digest(results) {
  /** @type {Record<string, string>} */
  const out = {}
  for (const [name, bits] of results) out[name] = createHash('sha256').update(bits).digest('hex')
  return out
}

if (process.env.QUANT_KERNELS_CHILD) {
  // The child: default options only, reports the variant it loaded and its outputs' digests.
  const core = await loadCore()
  const k = await loadKernels(core)
  console.log(JSON.stringify({ variant: k.variant, digests: digest(runAll(core, k)) }))
} else {
  test('instantiating the kernels leaves the core heap untouched', async () => {
    const core = await loadCore()
    const memory = /** @type {WebAssembly.Memory} */ (Object.values(core.asm).find((v) => v instanceof WebAssembly.Memory))
    const checksum = () => createHash('sha256').update(new Uint8Array(memory.buffer)).digest('hex')
    // Fill the low heap, where a module's data or stack would land, with a pattern first.
    const probe = core._malloc(1 << 20) >>> 0
    const view = new Uint8Array(memory.buffer, probe, 1 << 20)
    for (let i = 0; i < view.length; i++) view[i] = (i * 131 + 7) & 255
    const before = checksum()
    const length = memory.buffer.byteLength
    for (const variant of /** @type {const} */ (['simd', 'nosimd'])) {
      await loadKernels(core, { variant })
      assert.equal(memory.buffer.byteLength, length, 'the memory did not grow')
      assert.equal(checksum(), before, `instantiating the ${variant} kernels changed the heap`)
    }
    core._free(probe)
  })

  test('loadKernels: default options pick the variant js/wasm.js picks, cached per core', async () => {
    const core = await loadCore()
    const k = await loadKernels(core)
    assert.equal(k.variant, coreVariant())
    assert.equal(await loadKernels(core), k)
    assert.deepEqual(Object.keys(k).sort(), ['awq', 'ctPack', 'fp8Block', 'gptq', 'int8Block', 'mxfp4', 'nf4', 'nf4Absmax', 'nvfp4', 'sha256Blocks', 'variant'])
    assert.throws(() => k.fp8Block({ w: 0, scales: 0, scaleDtype: /** @type {any} */ ('F64'), out: 0, rows: 0, cols: 0,
      firstRow: 0, blockRows: 1, blockCols: 1, scaleCols: 0 }), /no scale type "F64"/)
  })

  test('the SIMD and no-SIMD builds give the same bits for every kernel', async () => {
    const core = await loadCore()
    const simd = runAll(core, await loadKernels(core, { variant: 'simd' }))
    const nosimd = runAll(core, await loadKernels(core, { variant: 'nosimd' }))
    assert.ok(simd.size >= 20)
    for (const [name, bits] of simd) {
      const other = /** @type {Uint32Array} */ (nosimd.get(name))
      const first = bits.findIndex((b, i) => b !== other[i])
      assert.equal(first, -1, `${name}: element ${first} differs: ${bits[first]?.toString(16)} vs ${other[first]?.toString(16)}`)
      assert.ok(bits.some((b) => b !== 0xa5a5a5a5), `${name}: the kernel wrote its output`)
    }
    // With default options in a fresh process: SAFETENSORS_WASM_SIMD=0 loads the no-SIMD build,
    // and both defaults give what the in-process builds give.
    for (const env of [{ SAFETENSORS_WASM_SIMD: '0' }, {}]) {
      const child = spawnSync(process.execPath, [fileURLToPath(import.meta.url)], {
        env: { ...process.env, ...env, QUANT_KERNELS_CHILD: '1' }, encoding: 'utf8' })
      assert.equal(child.status, 0, child.stderr)
      const { variant, digests } = JSON.parse(child.stdout.trim().split('\n').pop() ?? '')
      assert.equal(variant, env.SAFETENSORS_WASM_SIMD === '0' ? 'nosimd' : coreVariant())
      assert.deepEqual(digests, digest(simd))
    }
  })
}

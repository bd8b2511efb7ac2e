/**
 * The dequantization kernels (src/quant/), and SHA-256's compression: a wasm module of their
 * own, apart from the core so that a page that never dequantizes or hashes never downloads
 * them. Loaded on first use, once per core, and instantiated against the core's own WebAssembly.Memory, so the kernels read the stored
 * parts and write the float32 output where the core's allocator put them, with no copy. The
 * module has no data, no globals and no imports but the memory (.ci/check-quant-wasm.sh fails
 * the build otherwise): instantiating it writes nothing to the core's heap.
 *
 * Every function takes one options object of heap addresses and counts (js/quant/dequantize.js
 * has validated them: the kernels trust their arguments). Addresses may exceed 2 GiB: they
 * cross as the i32 of the same bits.
 */
import { coreVariant } from '../wasm.js'

/** The scale element types the kernels convert to float32 (src/quant/kernels.hpp kScale*). */
const SCALE_DTYPES = { F32: 0, F16: 1, BF16: 2, F8_E4M3: 3 }

/**
 * @typedef {'F32' | 'F16' | 'BF16' | 'F8_E4M3'} ScaleDtype
 * @typedef {{
 *   variant: 'simd' | 'nosimd',
 *   fp8Block(o: { w: number, scales: number, scaleDtype: ScaleDtype, out: number, rows: number, cols: number,
 *     firstRow: number, blockRows: number, blockCols: number, scaleCols: number }): void,
 *   int8Block(o: { w: number, scales: number, scaleDtype: ScaleDtype, zeroPoints?: number, out: number, rows: number,
 *     cols: number, firstRow: number, blockRows: number, blockCols: number, scaleCols: number }): void,
 *   mxfp4(o: { blocks: number, scales: number, out: number, groups: number }): void,
 *   nvfp4(o: { packed: number, scales: number, out: number, rows: number, cols: number, group: number,
 *     scaleCols: number, globalScale: number, divide: boolean, positiveZero?: boolean }): void,
 *   gptq(o: { qweight: number, qzeros: number, scales: number, scaleDtype: ScaleDtype, gIdx?: number, out: number,
 *     inFeatures: number, outFeatures: number, firstIn: number, inCount: number, firstOut: number,
 *     outCount: number, bits: number, zeroOffset: number, group?: number }): void,
 *   awq(o: { qweight: number, qzeros: number, scales: number, scaleDtype: ScaleDtype, out: number,
 *     inFeatures: number, outFeatures: number, firstIn: number, inCount: number, firstOut: number,
 *     outCount: number, group: number }): void,
 *   nf4Absmax(o: { absmax: number, nestedMap: number, nestedAbsmax: number, offset: number, out: number,
 *     firstBlock: number, count: number, nestedBlock: number }): void,
 *   nf4(o: { packed: number, absmax: number, quantMap: number, out: number, first: number, count: number,
 *     blocksize: number }): void,
 *   ctPack(o: { packed: number, scales: number, scaleDtype: ScaleDtype, zeroPoints?: number, out: number,
 *     rows: number, firstRow: number, inFeatures: number, bits: number, group: number, groups: number,
 *     outFeatures: number }): void,
 *   sha256Blocks(state: number, data: number, blocks: number): void,
 * }} Kernels
 */

/** @type {WeakMap<object, Map<string, Promise<Kernels>>>} */
const loaded = /* @__PURE__ */ new WeakMap()

/**
 * The kernels for a loaded core (js/wasm.js), once per core and variant.
 * @param {any} core the Emscripten module
 * @param {{ variant?: 'simd' | 'nosimd' }} [options] the build to load; by default the one
 *   js/wasm.js would pick (coreVariant(): SIMD where the engine has it, SAFETENSORS_WASM_SIMD=0
 *   forcing the other in Node)
 * @returns {Promise<Kernels>}
 */
export function loadKernels(core, { variant = coreVariant() } = {}) {
  let byVariant = loaded.get(core)
  if (!byVariant) loaded.set(core, (byVariant = new Map()))
  let kernels = byVariant.get(variant)
  if (!kernels) {
    kernels = instantiate(core, variant)
    byVariant.set(variant, kernels)
    kernels.catch(() => byVariant.delete(variant))  // a failed load may be retried
  }
  return kernels
}

/** @param {any} core @returns {WebAssembly.Memory} the memory the core's module exports */
function coreMemory(core) {
  const exports = core?.asm ?? core?.wasmExports ?? {}
  for (const value of Object.values(exports)) if (value instanceof WebAssembly.Memory) return value
  throw new Error('loadKernels: the core exports no WebAssembly.Memory (not a module from js/wasm.js?)')
}

/**
 * @param {any} core
 * @param {'simd' | 'nosimd'} variant
 * @returns {Promise<Kernels>}
 */
async function instantiate(core, variant) {
  const memory = coreMemory(core)
  // Literal specifiers, so that bundlers split each build into a chunk of its own.
  const module = variant === 'simd' ? await import('../../dist/safetensors_quant.mjs')
    : await import('../../dist/safetensors_quant_nosimd.mjs')
  const { instance } = await WebAssembly.instantiate(module.default(), { env: { memory } })
  const k = /** @type {Record<string, (...args: number[]) => void>} */ (/** @type {unknown} */ (instance.exports))
  /** @param {string} name @returns {number} */
  const scale = (name) => {
    const code = SCALE_DTYPES[/** @type {keyof typeof SCALE_DTYPES} */ (name)]
    if (code === undefined) throw new Error(`kernels: no scale type ${JSON.stringify(name)} (F32, F16, BF16, F8_E4M3)`)
    return code
  }
  return {
    variant,
    fp8Block: (o) => k.fp8Block(o.w, o.scales, scale(o.scaleDtype), o.out, o.rows, o.cols, o.firstRow, o.blockRows,
      o.blockCols, o.scaleCols),
    int8Block: (o) => k.int8Block(o.w, o.scales, scale(o.scaleDtype), o.zeroPoints ?? 0, o.out, o.rows, o.cols,
      o.firstRow, o.blockRows, o.blockCols, o.scaleCols),
    mxfp4: (o) => k.mxfp4(o.blocks, o.scales, o.out, o.groups),
    // positiveZero: code 8 gives +0 (ModelOpt's e2m1 table), not -0 (compressed-tensors'); by
    // default as the producer that multiplies (ModelOpt) or divides (compressed-tensors) does.
    nvfp4: (o) => k.nvfp4(o.packed, o.scales, o.out, o.rows, o.cols, o.group, o.scaleCols, o.globalScale,
      (o.divide ? 1 : 0) | ((o.positiveZero ?? !o.divide) ? 2 : 0)),
    gptq: (o) => k.gptq(o.qweight, o.qzeros, o.scales, scale(o.scaleDtype), o.gIdx ?? 0, o.out, o.inFeatures,
      o.outFeatures, o.firstIn, o.inCount, o.firstOut, o.outCount, o.bits, o.zeroOffset, o.group ?? 0),
    awq: (o) => k.awq(o.qweight, o.qzeros, o.scales, scale(o.scaleDtype), o.out, o.inFeatures, o.outFeatures,
      o.firstIn, o.inCount, o.firstOut, o.outCount, o.group),
    nf4Absmax: (o) => k.nf4Absmax(o.absmax, o.nestedMap, o.nestedAbsmax, o.offset, o.out, o.firstBlock, o.count,
      o.nestedBlock),
    nf4: (o) => k.nf4(o.packed, o.absmax, o.quantMap, o.out, o.first, o.count, o.blocksize),
    ctPack: (o) => k.ctPack(o.packed, o.scales, scale(o.scaleDtype), o.zeroPoints ?? 0, o.out, o.rows, o.firstRow,
      o.inFeatures, o.bits, o.group, o.groups, o.outFeatures),
    // SHA-256's compression function, for js/stream/sha256.js (no dequantization kernel, but
    // lazily loaded like them): the 8 state words at `state`, 64-byte blocks at `data`.
    sha256Blocks: (state, data, blocks) => k.sha256Blocks(state, data, blocks),
  }
}

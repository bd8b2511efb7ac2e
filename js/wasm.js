/**
 * Loads the wasm core once per realm. Two builds of the same core ship: one with wasm SIMD
 * (dist/safetensors_core.mjs) and one without (dist/safetensors_core_nosimd.mjs) for engines
 * that lack it (Safari before 16.4, say). The choice is made at load time by validating a tiny
 * SIMD module, and only the chosen build is imported. Each embeds its wasm (SINGLE_FILE), so
 * loading never fetches a path: the same code runs in Node, browsers and workers. What the
 * module exports is called through js/core/ alone, which knows its heap layouts.
 */

// (module (func (result v128) i32.const 0 i8x16.splat i8x16.popcnt)): valid only with SIMD.
const SIMD_PROBE = /* @__PURE__ */ new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0,
  10, 10, 1, 8, 0, 65, 0, 253, 15, 253, 98, 11])

/** @returns {boolean} whether this engine runs wasm SIMD (fixed-width, 128-bit) */
export function simdSupported() {
  try {
    return WebAssembly.validate(SIMD_PROBE)
  } catch {
    return false
  }
}

/**
 * The build loadCore uses: 'simd' where the engine has wasm SIMD, else 'nosimd'. In Node the
 * environment variable SAFETENSORS_WASM_SIMD=0 forces 'nosimd' (to test that build).
 * @returns {'simd' | 'nosimd'}
 */
export function coreVariant() {
  const env = /** @type {any} */ (globalThis).process?.env?.SAFETENSORS_WASM_SIMD
  if (env === '0') return 'nosimd'
  return simdSupported() ? 'simd' : 'nosimd'
}

/** @type {Map<string, Promise<any>>} */
const cores = /* @__PURE__ */ new Map()

/**
 * One build of the core, loaded once per realm (benchmarks compare the two).
 * @param {'simd' | 'nosimd'} variant
 * @returns {Promise<any>} the Emscripten module with the Embind functions
 */
export function loadCoreVariant(variant) {
  let core = cores.get(variant)
  if (!core) {
    // Literal specifiers, so that bundlers see both builds and split them into their own chunks.
    const module = variant === 'simd' ? import('../dist/safetensors_core.mjs')
      : import('../dist/safetensors_core_nosimd.mjs')
    core = module.then((m) => m.default())
    cores.set(variant, core)
  }
  return core
}

/** @type {'simd' | 'nosimd' | null} the build, chosen once: every open asks for the core (a
 * shard set's hundreds of them), and validating the probe costs about 30 us each time */
let chosen = null

/** @returns {Promise<any>} the Emscripten module with the Embind functions */
export function loadCore() {
  return loadCoreVariant((chosen ??= coreVariant()))
}

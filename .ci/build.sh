#!/usr/bin/env bash
# Builds the wasm core into dist/ (what js/ loads): safetensors_core.mjs (wasm SIMD) and
# safetensors_core_nosimd.mjs (for engines without SIMD; js/wasm.js picks one at load time), and
# the dequantization kernels, safetensors_quant.mjs and safetensors_quant_nosimd.mjs (the same
# choice; js/quant/kernels.js loads one on first use), and the sharded-index parser,
# safetensors_index.mjs (js/core/index-map.js loads it when a sharded set is first opened), and
# the cache's digest, safetensors_digest.mjs (js/io/digest.js, with the cache).
# Incremental: reruns are quick.
set -euo pipefail
cd "$(dirname "$0")/.."
export NODE_PATH=/usr/share/nodejs
if [ ! -f build/wasm/Makefile ]; then
  emcmake cmake -S . -B build/wasm -DCMAKE_BUILD_TYPE=Release >/dev/null
else
  cmake build/wasm >/dev/null  # a target added since the last run is then known to make
fi
cmake --build build/wasm --target safetensors_core safetensors_core_nosimd safetensors_index safetensors_quant safetensors_quant_nosimd safetensors_digest -- -j2 2>&1 |
  { grep -vE "^\[|Scanning|Built target|Consolidate" || true; }
mkdir -p dist
for module in safetensors_core safetensors_core_nosimd safetensors_index; do
  cp build/wasm/$module.mjs dist/$module.mjs
  node .ci/embed-wasm.mjs dist/$module.mjs  # base64 -> a byte string: ~20% less gzipped
  echo "dist/$module.mjs: $(wc -c <dist/$module.mjs) bytes, $(gzip -9c dist/$module.mjs | wc -c) gzipped (node bench/size.js: the breakdown)"
  # The generated loader has no types; js/wasm.js treats the module as `any`.
  printf 'declare const createCore: () => Promise<any>\nexport default createCore\n' > dist/$module.d.mts
done
# The dequantization kernels (src/quant/), loaded on first use by js/quant/kernels.js.
for module in safetensors_quant safetensors_quant_nosimd; do
  cp build/wasm/$module.mjs dist/$module.mjs
  echo "dist/$module.mjs: $(wc -c <dist/$module.mjs) bytes, $(gzip -9c dist/$module.mjs | wc -c) gzipped"
  printf 'declare const wasmBytes: () => Uint8Array<ArrayBuffer>\nexport default wasmBytes\n' > dist/$module.d.mts
done
# The cache's digest (src/xxh64.wat), loaded with the cache by js/io/digest.js.
cp build/wasm/safetensors_digest.mjs dist/safetensors_digest.mjs
printf 'declare const wasmBytes: () => Uint8Array<ArrayBuffer>\nexport default wasmBytes\n' > dist/safetensors_digest.d.mts

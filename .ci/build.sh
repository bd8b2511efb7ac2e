#!/usr/bin/env bash
# Builds the wasm core into dist/ (what js/ loads): safetensors_core.mjs (wasm SIMD) and
# safetensors_core_nosimd.mjs (for engines without SIMD; js/wasm.js picks one at load time), and
# the dequantization kernels, safetensors_quant.mjs and safetensors_quant_nosimd.mjs (the same
# choice; js/quant/kernels.js loads one on first use), and the sharded-index parser,
# safetensors_index.mjs (js/core/index-map.js loads it when a sharded set is first opened).
# Incremental: reruns are quick.
set -euo pipefail
cd "$(dirname "$0")/.."
export NODE_PATH=/usr/share/nodejs
if [ ! -f build/wasm/Makefile ]; then
  emcmake cmake -S . -B build/wasm -DCMAKE_BUILD_TYPE=Release >/dev/null
else
  cmake build/wasm >/dev/null  # a target added since the last run is then known to make
fi
cmake --build build/wasm --target safetensors_core safetensors_core_nosimd safetensors_index safetensors_quant safetensors_quant_nosimd -- -j2 2>&1 |
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
  printf 'declare const quantWasm: () => Uint8Array<ArrayBuffer>\nexport default quantWasm\n' > dist/$module.d.mts
done

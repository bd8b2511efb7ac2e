#!/usr/bin/env bash
# Builds the wasm module into dist/ (what js/ loads). Incremental: reruns are quick.
set -euo pipefail
cd "$(dirname "$0")/.."
export NODE_PATH=/usr/share/nodejs
if [ ! -f build/wasm/Makefile ]; then
  emcmake cmake -S . -B build/wasm -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
cmake --build build/wasm --target safetensors_core -- -j2 2>&1 | { grep -vE "^\[|Scanning|Built target|Consolidate" || true; }
mkdir -p dist
cp build/wasm/safetensors_core.mjs dist/safetensors_core.mjs
# The generated loader has no types; js/wasm.js treats the module as `any`.
printf 'declare const createCore: () => Promise<any>\nexport default createCore\n' > dist/safetensors_core.d.mts

#!/usr/bin/env bash
# Builds the dequantization kernels (src/quant/) into a wasm module of their own, with plain
# clang (not Emscripten: no runtime, no libc), importing the core's memory, then checks it
# (check-quant-wasm.sh). CMakeLists.txt runs this for both variants.
#   bash .ci/quant-wasm.sh simd|nosimd OUT.wasm
set -euo pipefail
variant=$1
out=$2
root=$(cd "$(dirname "$0")/.." && pwd)
isa=()
[ "$variant" = simd ] && isa=(-msimd128)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
objects=()
for src in "$root"/src/quant/*.cpp; do
  obj=$tmp/$(basename "$src" .cpp).o
  # The integer kernels gather (scales, zeros, quant maps by index): clang's auto-vectorised
  # gathers, lane by lane, run slower than its scalar loops. The float kernels' SIMD is by hand.
  novec=()
  [ "$(basename "$src")" = float_kernels.cpp ] || novec=(-fno-vectorize -fno-slp-vectorize)
  # -ffreestanding: no memset/memcpy calls conjured from loops (there is no libc to link).
  "${CLANGXX:-clang++}" --target=wasm32 -O3 -std=c++17 -ffreestanding -fno-exceptions -fno-rtti \
    -ffp-contract=off -Wall -Wextra "${isa[@]}" "${novec[@]}" -c "$src" -o "$obj"
  objects+=("$obj")
done
# Linked without -O: clang would otherwise run a wasm-opt found on PATH, with no SIMD enabled.
"${CLANGXX:-clang++}" --target=wasm32 -nostdlib -Wl,--no-entry -Wl,--import-memory \
  -Wl,--strip-all "${objects[@]}" -o "$tmp/linked.wasm"
# wasm-ld defines the shadow stack's pointer even when no code uses it: drop it (and anything
# else unused), so that the module holds nothing but the kernels.
wasm-opt --enable-simd --remove-unused-module-elements "$tmp/linked.wasm" -o "$out"
bash "$root/.ci/check-quant-wasm.sh" "$out"

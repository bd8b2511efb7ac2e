#!/usr/bin/env bash
# Fails unless a kernels module (src/quant/, see quant-wasm.sh) is what js/quant/kernels.js may
# instantiate against the core's memory: no data section (instantiation would write the core's
# heap), no global used (global.get/global.set: a shadow stack at an address of its own in that
# heap), and no import but env.memory. Reads the text that binaryen's wasm-dis prints.
#   bash .ci/check-quant-wasm.sh build/wasm/safetensors_quant.wasm
set -euo pipefail
file=$1
text=$(wasm-dis --enable-simd --enable-bulk-memory "$file")
fail() {
  echo "$file: $1" >&2
  exit 1
}
if grep -qE '^ *\((data|elem)[ )]' <<<"$text"; then fail "has a data or element segment"; fi
if grep -qE '\bglobal\.(get|set)\b|^ *\(global ' <<<"$text"; then fail "uses a global (shadow stack?)"; fi
imports=$(grep -E '^ *\(import ' <<<"$text" || true)
if [ "$(grep -c . <<<"$imports")" != 1 ] || ! grep -qE '^ *\(import "env" "memory" \(memory ' <<<"$imports"; then
  fail "imports something but env.memory: $imports"
fi
exports=$(grep -cE '^ *\(export "[A-Za-z0-9]+" \(func ' <<<"$text" || true)
[ "$exports" = 10 ] || fail "exports $exports functions, not the 10 kernels"

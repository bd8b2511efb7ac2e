#!/usr/bin/env bash
# Every test of the project, in one command (`npm test`): the C++ suite natively, under
# ASan+UBSan and compiled to wasm under Node (32-bit size_t); bounded fuzzing; lint and format;
# the type check; the Node tests; the browser tests. Installs what is missing first.
# `--quick` (`npm run test:quick`, the edit loop): lint, types and the Node tests only.
set -uo pipefail
quick=0
[ "${1:-}" = --quick ] && quick=1
cd "$(dirname "$0")/.."
export NODE_PATH=/usr/share/nodejs
FUZZ_SECONDS=${FUZZ_SECONDS:-30}

bash .ci/bootstrap.sh || exit 1
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund || exit 1
fi
bash .ci/build.sh || exit 1

passed=()
failed=()
step() {
  local name=$1
  shift
  echo
  echo "== $name"
  if "$@"; then passed+=("$name"); else failed+=("$name"); fi
}

cxx_suite() {  # build dir, then extra cmake arguments
  local dir=$1
  shift
  cmake -S . -B "$dir" "$@" >/dev/null &&
    cmake --build "$dir" --target core_tests -- -j2 2>&1 | { grep -E "error|warning" || true; } &&
    ctest --test-dir "$dir" --output-on-failure
}

wasm_suite() {
  [ -f build/wasm-tests/Makefile ] || emcmake cmake -S . -B build/wasm-tests -DST_WASM_TESTS=ON >/dev/null
  cmake --build build/wasm-tests --target core_tests heap_guard_tests -- -j2 2>&1 | { grep -E "error|warning" || true; } &&
    ctest --test-dir build/wasm-tests --output-on-failure
}

fuzz() {
  CXX=clang++ cmake -S . -B build/fuzz -DST_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null &&
    cmake --build build/fuzz --target fuzz_header fuzz_slice fuzz_index -- -j2 2>&1 | { grep -E "error|warning" || true; } || return 1
  local seeds=build/fuzz/seeds
  mkdir -p "$seeds"
  node tests/fuzz/make-seeds.js "$seeds" || return 1
  [ -d ../shared/corpus/reference ] && cp ../shared/corpus/reference/*.safetensors "$seeds"/
  local target ok=0
  for target in fuzz_header fuzz_slice fuzz_index; do
    mkdir -p "build/fuzz/corpus-$target"
    echo "$target: ${FUZZ_SECONDS}s"
    build/fuzz/$target -max_total_time="$FUZZ_SECONDS" -print_final_stats=0 -artifact_prefix=build/fuzz/ \
      "build/fuzz/corpus-$target" "$seeds" 2>&1 | tail -n 3 || ok=1
  done
  return $ok
}

if [ $quick = 0 ]; then
  step "C++ suite (native)" cxx_suite build/native -DCMAKE_BUILD_TYPE=Release
  step "C++ suite (ASan+UBSan)" cxx_suite build/asan -DCMAKE_BUILD_TYPE=Debug -DST_SANITIZE=ON
  step "C++ suite (wasm32 under Node)" wasm_suite
  step "fuzzing (${FUZZ_SECONDS}s per target)" fuzz
fi
lint() {
  npx eslint . || return 1
  # The C++ sources in the style .clang-format describes (clang-format -i applies it).
  git ls-files '*.cpp' '*.hpp' | xargs clang-format --dry-run --Werror
}

step "lint and format (eslint, clang-format)" lint
step "type check (tsc --strict)" npx tsc -p tests/tsconfig.json
step "Node tests" node --test tests/js/
if [ $quick = 0 ] && [ -d tests/browser ] && ls tests/browser/*.test.js >/dev/null 2>&1; then
  step "browser tests (Chromium)" node --test tests/browser/
fi

echo
for s in "${passed[@]}"; do echo "PASS  $s"; done
for s in "${failed[@]+"${failed[@]}"}"; do echo "FAIL  $s"; done
echo "suites: ${#passed[@]} passed, ${#failed[@]} failed"
[ ${#failed[@]} -eq 0 ]

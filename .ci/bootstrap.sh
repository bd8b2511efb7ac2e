#!/usr/bin/env bash
# Installs the Debian toolchain this project builds with, when any of it is missing.
# Safe to run again: it does nothing when everything is there.
set -euo pipefail

need=()
command -v em++ >/dev/null 2>&1 || need+=(emscripten)
[ -f /usr/include/nlohmann/json.hpp ] || need+=(nlohmann-json3-dev)
[ -f /usr/include/catch2/catch.hpp ] || need+=(catch2)
command -v clang++ >/dev/null 2>&1 || need+=(clang)
command -v clang-format >/dev/null 2>&1 || need+=(clang-format)
# The dequantization kernels are linked by plain clang with wasm-ld; wasm-opt and wasm-dis check them.
command -v wasm-ld >/dev/null 2>&1 || need+=(lld)
command -v wasm-opt >/dev/null 2>&1 || need+=(binaryen)
# libFuzzer and the sanitizer runtimes for clang
compgen -G "/usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a" >/dev/null || need+=(libclang-rt-dev)
command -v cmake >/dev/null 2>&1 || need+=(cmake)
command -v g++ >/dev/null 2>&1 || need+=(g++)
command -v make >/dev/null 2>&1 || need+=(make)
# tests/js/real-server.test.js reads files through a real nginx (its own instance, own port)
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || need+=(nginx)
if [ "${ST_BROWSER_TESTS:-1}" = 1 ]; then
  command -v chromium >/dev/null 2>&1 || need+=(chromium)
fi

[ ${#need[@]} -eq 0 ] && exit 0

if [ ! -f /etc/debian_version ]; then
  echo "bootstrap: this is not Debian; install these yourself: ${need[*]}" >&2
  echo "(emscripten 3.1.x, nlohmann-json 3.11, Catch2 v2, clang with libFuzzer, clang-format, cmake, chromium, nginx)" >&2
  exit 1
fi
sudo=""
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    sudo="sudo"
  else
    echo "bootstrap: missing packages: ${need[*]}" >&2
    echo "run as root: apt-get update && apt-get install -y ${need[*]}" >&2
    exit 1
  fi
fi
echo "bootstrap: installing ${need[*]}" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null

#!/usr/bin/env bash
# The main job (`npm start`): builds the package, makes the bundled sample model (and a sharded
# copy of it), then serves the in-page inspector (web-demo/) on 127.0.0.1 until Ctrl-C.
# `npm run inspect-sample` (this script with --inspect) prints the CLI's inspect of the sample
# instead, and exits: the non-interactive way, for scripts. Installs what is missing first.
set -euo pipefail
cd "$(dirname "$0")/.."
ST_BROWSER_TESTS=0 bash .ci/bootstrap.sh
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund
fi
bash .ci/build.sh
mkdir -p build/sample
sample=build/sample/tiny-llama.safetensors
node tests/fixtures/make-sample.js "$sample"
if [ "${1:-}" = --inspect ]; then
  exec node js/cli/main.js inspect "$sample"
fi
node web-demo/make-sharded-sample.js "$sample" build/sample/sharded
exec node web-demo/serve.js

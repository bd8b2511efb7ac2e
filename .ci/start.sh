#!/usr/bin/env bash
# The main job (`npm start`): builds the package, makes the bundled sample model and inspects
# it. Installs what is missing first.
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
node js/cli.js inspect "$sample"

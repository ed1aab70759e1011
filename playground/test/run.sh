#!/usr/bin/env bash
# The playground's browser tests: npm's playwright-core (into playground/node_modules) drives the
# distribution's Chromium over the built page. Build it first: bash playground/build.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x "${CHROMIUM:-/usr/bin/chromium}" ]; then
    echo "no Chromium at ${CHROMIUM:-/usr/bin/chromium}: apt-get install -y chromium (or set CHROMIUM)" >&2
    exit 1
fi
[ -f web/pkg/rulecraft.wasm ] || { echo "no web/pkg/rulecraft.wasm: run bash playground/build.sh first" >&2; exit 1; }
[ -d node_modules/playwright-core ] || npm ci --no-audit --no-fund --loglevel=error
node --test --test-reporter=spec test/playground.test.mjs

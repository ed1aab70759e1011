#!/usr/bin/env bash
# The grammar test: installs the locked test packages (vscode-textmate, vscode-oniguruma), then
# tokenizes every bundled file (test/grammar.test.js).
set -euo pipefail
cd "$(dirname "$0")/.."
npm ci --no-audit --no-fund --loglevel=error
npm test

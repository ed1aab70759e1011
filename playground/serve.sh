#!/usr/bin/env bash
# Serves the built playground (bash build.sh first) at http://localhost:${PORT:-8000}/.
set -euo pipefail
cd "$(dirname "$0")/web"
[ -f pkg/rulecraft.wasm ] || { echo "no web/pkg/rulecraft.wasm: run bash playground/build.sh first" >&2; exit 1; }
echo "the playground: http://localhost:${PORT:-8000}/"
exec python3 -m http.server "${PORT:-8000}" --bind 127.0.0.1

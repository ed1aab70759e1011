#!/usr/bin/env bash
# Builds the playground: the engine to WebAssembly (web/pkg/rulecraft.wasm), shrunk by wasm-opt
# when it is installed (`npm install` in playground/ brings binaryen's). Then `bash serve.sh`.
set -euo pipefail
cd "$(dirname "$0")"
rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown ||
    rustup target add wasm32-unknown-unknown
# The project's target folder, so the host build scripts are shared with the main build.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/../target}"
cargo build --release --locked --target wasm32-unknown-unknown
mkdir -p web/pkg
wasm="$CARGO_TARGET_DIR/wasm32-unknown-unknown/release/rulecraft_playground.wasm"
cp "$wasm" web/pkg/rulecraft.wasm
before=$(stat -c %s web/pkg/rulecraft.wasm)
if [ -x node_modules/.bin/wasm-opt ]; then
    node_modules/.bin/wasm-opt -Oz --enable-bulk-memory --enable-nontrapping-float-to-int \
        --enable-sign-ext --enable-mutable-globals --strip-debug \
        web/pkg/rulecraft.wasm -o web/pkg/rulecraft.wasm
fi
after=$(stat -c %s web/pkg/rulecraft.wasm)
echo "web/pkg/rulecraft.wasm: $before bytes built, $after bytes after wasm-opt"

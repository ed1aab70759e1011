#!/usr/bin/env bash
# Builds the playground: the engine to WebAssembly (web/pkg/rulecraft.wasm), shrunk by wasm-opt
# when it is installed (`npm ci` in playground/ brings binaryen's; PLAYGROUND_WASM_OPT=0 skips it).
# Then `bash serve.sh`.
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
# wasm-opt reads the features the module uses from its target_features section.
if [ "${PLAYGROUND_WASM_OPT:-1}" != 0 ] && [ -x node_modules/.bin/wasm-opt ]; then
    node_modules/.bin/wasm-opt -Oz --strip-debug web/pkg/rulecraft.wasm -o web/pkg/rulecraft.wasm
fi
after=$(stat -c %s web/pkg/rulecraft.wasm)
echo "web/pkg/rulecraft.wasm: $before bytes built, $after bytes after wasm-opt"

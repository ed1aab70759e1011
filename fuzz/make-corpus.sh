#!/usr/bin/env bash
# Writes the fuzz target's starting corpus into fuzz/corpus/load_and_run/: every ruleset, content
# and scenario file of the project as an input `[KIND, PICK, TEXT...]` (see src/lib.rs).
set -euo pipefail
cd "$(dirname "$0")/.."
out=fuzz/corpus/load_and_run
mkdir -p "$out"
n=0
add() { # KIND FILE
    local kind=$1 file=$2
    n=$((n + 1))
    { printf "\\x$(printf %02x "$kind")\\x$(printf %02x $((n % 256)))"; cat "$file"; } >"$out/seed-$n"
}
for f in rulesets/*.rules; do add 0 "$f"; done
for f in $(find content -name '*.cards' | sort); do add 1 "$f"; done
for f in $(find scenarios tests/bad tests/failing -name '*.scenario' | sort); do add 2 "$f"; done
for f in tests/bad/*.rules; do add 0 "$f"; done
for f in tests/bad/*.cards; do add 1 "$f"; done
echo "$n inputs in $out"

#!/usr/bin/env bash
# The dynamic symbols libcaveman_engine.so defines, demangled, without addresses, sorted and
# deduplicated, must equal the committed list cmake/exported_symbols.txt (issue 17): the
# public API marked CAVEMAN_EXPORT and nothing else — no caveman::internal, no third-party or
# std:: code. A change to the API changes the list; review it and run with --update.
# Usage: exported_symbols.sh <libcaveman_engine.so> <exported_symbols.txt> [--update]
set -euo pipefail
lib=$1
expected=$2
actual=$(mktemp)
trap 'rm -f "$actual"' EXIT
# "0000000000123 T caveman::Foo(int)" -> "T caveman::Foo(int)"
nm -D --defined-only -C "$lib" | sed -E 's/^[0-9a-f]+ //' | LC_ALL=C sort -u >"$actual"
[[ -s $actual ]] || { echo "FAIL: no exported symbols read from $lib"; exit 1; }
if [[ ${3:-} == --update ]]; then
  cp "$actual" "$expected"
  echo "updated $expected ($(wc -l <"$expected") symbols)"
  exit 0
fi
if grep -q 'caveman::internal' "$actual"; then
  echo "FAIL: caveman::internal symbols exported:"
  grep 'caveman::internal' "$actual" | head
  exit 1
fi
if ! diff -u "$expected" "$actual"; then
  echo "FAIL: exported symbols differ from $expected (review, then: $0 $lib $expected --update)"
  exit 1
fi
echo "ok   $(wc -l <"$actual") exported symbols, as in $expected"

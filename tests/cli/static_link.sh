#!/usr/bin/env bash
# The CLI links its third-party libraries from their static archives and packs its relative
# relocations (issue 19, cmake/third_party.cmake): none of those libraries is a DT_NEEDED
# entry of the binary, the binary has a DT_RELR table, and it still runs.
#   static_link.sh <caveman-engine>
set -euo pipefail
bin=$1
dyn=$(readelf -d "$bin")
fail=0
for lib in libhs libre2 libpugixml libgumbo libtree-sitter libyaml-cpp libboost_iostreams \
           libcrypto libicuuc libsqlite3 libzstd; do
  if grep -q "NEEDED.*\[$lib\." <<<"$dyn"; then
    echo "FAIL: $bin still needs $lib dynamically" >&2
    fail=1
  fi
done
if ! grep -q "(RELR)" <<<"$dyn"; then
  echo "FAIL: $bin has no packed relative relocations (DT_RELR)" >&2
  fail=1
fi
out=$(printf 'hello\n' | CAVEMAN_HOME=$(mktemp -d) "$bin" compress -q)
[[ $out == hello ]] || { echo "FAIL: compress printed '$out'" >&2; fail=1; }
((fail == 0)) && echo "static_link: ok ($(grep -c NEEDED <<<"$dyn") shared libraries needed)"
exit $fail

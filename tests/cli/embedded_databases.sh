#!/usr/bin/env bash
# The Hyperscan databases are compiled at build time and embedded (issue 19,
# compressors/pattern_databases.h): on the build machine, `compress` of a log (detection and
# the log compressor both scan) compiles nothing, so the disk cache directory stays empty; with
# the embedded databases unusable it would hold a compiled file afterwards.
#   embedded_databases.sh <caveman-engine>
set -euo pipefail
bin=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -m 700 "$work/cache"
for i in $(seq 200); do
  echo "2024-05-01T10:00:$((i % 60)) INFO worker $i processed batch $((i * 7)) in 12ms"
done > "$work/in.log"
echo "2024-05-01T10:01:00 ERROR worker 17 failed: connection reset" >> "$work/in.log"
CAVEMAN_HOME="$work/home" CAVEMAN_CACHE_DIR="$work/cache" "$bin" compress < "$work/in.log" \
  > "$work/out" 2> "$work/report"
grep -q '"content_type":"log"' "$work/report" || { echo "FAIL: not detected as log: $(cat "$work/report")" >&2; exit 1; }
grep -q "ERROR worker 17" "$work/out" || { echo "FAIL: the error line is missing from the view" >&2; exit 1; }
if [[ -n $(ls -A "$work/cache") ]]; then
  echo "FAIL: a pattern database was compiled at run time: $(ls "$work/cache")" >&2
  exit 1
fi
echo "embedded_databases: ok (nothing compiled, cache directory empty)"

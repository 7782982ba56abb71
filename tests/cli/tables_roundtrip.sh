#!/usr/bin/env bash
# Fixed-width tables end to end: `compress` of every fixtures/tables/*.txt table detects
# tabular, emits a smaller view (fewer bytes and tokens), the view passes through a second
# `compress` unchanged, and `retrieve HANDLE` gives the original byte for byte (CRLF too).
set -euo pipefail
CAVE=$(readlink -f "$1")
SRC=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
export CAVEMAN_HOME=$work/home
n=0
for f in "$SRC"/fixtures/tables/*.txt; do
  name=$(basename "$f")
  [[ $name == ip_br_addr.txt ]] && continue   # the near miss: no header row
  for eol in lf crlf; do
    if [[ $eol == crlf ]]; then sed 's/$/\r/' "$f" > "$work/in"; else cp "$f" "$work/in"; fi
    "$CAVE" compress < "$work/in" > "$work/view" 2> "$work/report"
    grep -q '"content_type":"tabular"' "$work/report" || { echo "$name/$eol: not tabular: $(cat "$work/report")"; exit 1; }
    handle=$(sed -nE 's/.*"recovery_handle":"(ccr_[0-9a-f]{32})".*/\1/p' "$work/report")
    [[ -n $handle ]] || { echo "$name/$eol: no handle: $(cat "$work/report")"; exit 1; }
    before=$(sed -nE 's/.*"tokens_before":([0-9]+).*/\1/p' "$work/report")
    after=$(sed -nE 's/.*"tokens_after":([0-9]+).*/\1/p' "$work/report")
    (( after < before )) || { echo "$name/$eol: $before -> $after tokens"; exit 1; }
    (( $(stat -c %s "$work/view") < $(stat -c %s "$work/in") )) || { echo "$name/$eol: view not smaller"; exit 1; }
    "$CAVE" retrieve "$handle" > "$work/back"
    cmp -s "$work/in" "$work/back" || { echo "$name/$eol: round trip mismatch"; exit 1; }
    "$CAVE" compress < "$work/view" > "$work/again" 2> "$work/report2"
    cmp -s "$work/view" "$work/again" || { echo "$name/$eol: view changed on re-compression"; exit 1; }
    grep -q '"content_type":"tabular"' "$work/report2" || { echo "$name/$eol: view not tabular: $(cat "$work/report2")"; exit 1; }
    echo "ok $name/$eol: $before -> $after tokens, handle $handle"
    n=$((n + 1))
  done
done
(( n >= 18 )) || { echo "only $n cases"; exit 1; }

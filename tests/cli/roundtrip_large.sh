#!/usr/bin/env bash
# Round trip at the 64 MiB CLI limit: compress a generated 64 MiB CI log (exactly 67108864
# bytes), retrieve it by handle, and compare SHA-256. Also checks auto-detection runs on it.
set -euo pipefail
CAVE=$(readlink -f "$1")
SRC=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
export CAVEMAN_HOME=$work/home
python3 "$SRC/scripts/gen_ci_log.py" 64 | head -c 67108864 > "$work/in.log"
test "$(stat -c %s "$work/in.log")" -eq 67108864
for type in repetition auto; do
  "$CAVE" compress --type "$type" < "$work/in.log" > "$work/out" 2> "$work/report"
  handle=$(sed -nE 's/.*"recovery_handle":"(ccr_[0-9a-f]{32})".*/\1/p' "$work/report")
  if [[ -z $handle ]]; then echo "no handle for --type $type: $(cat "$work/report")"; exit 1; fi
  test "$(stat -c %s "$work/out")" -lt 67108864
  "$CAVE" retrieve "$handle" > "$work/back"
  a=$(sha256sum < "$work/in.log" | cut -d' ' -f1); b=$(sha256sum < "$work/back" | cut -d' ' -f1)
  if [[ $a != "$b" ]]; then echo "round trip mismatch for --type $type"; exit 1; fi
  echo "ok --type $type: $(stat -c %s "$work/out") bytes out, handle $handle, sha256 $a"
done

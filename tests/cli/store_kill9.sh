#!/usr/bin/env bash
# kill -9 of `compress` at several points of a large (48 MiB) run, reading, transforming and
# writing the store included: afterwards the database passes integrity_check, the next open
# works, a record is either absent or complete (retrieves the exact input), and gc and a full
# compress succeed.
set -uo pipefail
CAVE=$(readlink -f "$1")
SRC=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
export CAVEMAN_HOME=$work/home
fail() { echo "FAIL: $*"; exit 1; }
python3 "$SRC/scripts/gen_ci_log.py" 48 > "$work/in"
count() { "$CAVE" stats | tr -d ' \n' | sed -nE 's/.*"totals":\{"count":([0-9]+),.*/\1/p'; }
# Time one full run, then kill at fractions of that time (the store write is at the end).
start=$(date +%s.%N)
"$CAVE" compress --type repetition < "$work/in" > /dev/null 2>&1 || fail "timing run"
full=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
sleep 1.1; "$CAVE" gc --older-than 1s >/dev/null || fail "gc"
for frac in 0.2 0.5 0.8 0.9 0.95 1.0 1.05 1.1 1.15 1.2 1.3 1.6; do
  delay=$(awk -v t="$full" -v f="$frac" 'BEGIN { printf "%.3f", t * f }')
  "$CAVE" compress --type repetition < "$work/in" > "$work/out" 2> "$work/rep" &
  pid=$!
  sleep "$delay"
  kill -9 "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  if [[ -f $CAVEMAN_HOME/ccr.db ]]; then
    ic=$(sqlite3 "$CAVEMAN_HOME/ccr.db" "PRAGMA integrity_check" 2>&1)
    [[ $ic == ok ]] || fail "after kill at ${delay}s: integrity_check: $ic"
  fi
  n=$(count) || fail "after kill at ${delay}s: stats failed"
  [[ $n == 0 || $n == 1 ]] || fail "after kill at ${delay}s: $n records"
  if [[ $n == 1 ]]; then
    h=$(sqlite3 "$CAVEMAN_HOME/ccr.db" "SELECT handle FROM recoveries")
    "$CAVE" retrieve "$h" | cmp -s - "$work/in" || fail "after kill at ${delay}s: partial record $h"
    # Remove it so the next round writes the record again instead of finding it stored.
    sleep 1.1
    "$CAVE" gc --older-than 1s >/dev/null || fail "gc"
    [[ $(count) == 0 ]] || fail "gc kept the record"
  fi
  state="killed"; [[ -s $work/rep ]] && state="had finished"
  echo "kill at ${delay}s: $state, records: $n"
  "$CAVE" gc >/dev/null || fail "after kill at ${delay}s: gc failed"
  [[ $(sqlite3 "$CAVEMAN_HOME/ccr.db" "SELECT count(*) FROM chunks") == 0 ]] ||
    fail "after kill at ${delay}s: orphan chunks survive gc"
done
h=$("$CAVE" compress --type repetition < "$work/in" 2>&1 >/dev/null | sed -nE 's/.*"recovery_handle":"(ccr_[0-9a-f]{32})".*/\1/p')
[[ -n $h ]] || fail "final compress stored nothing"
"$CAVE" retrieve "$h" | cmp -s - "$work/in" || fail "final retrieve mismatch"
echo "ok: 12 kills, no partial record, store usable afterwards"

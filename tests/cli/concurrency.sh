#!/usr/bin/env bash
# N processes (default 8) compress different inputs into one store at the same time; all must
# exit 0 with a handle, and every handle must retrieve its exact input.
set -euo pipefail
CAVE=$(readlink -f "$1"); N=${2:-8}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
export CAVEMAN_HOME=$work/home
for i in $(seq 1 "$N"); do
  { echo "run $i"; python3 "$SRC/scripts/gen_ci_log.py" 0.5 | sed "s/ERROR/ERROR run$i/"; } > "$work/in$i"
done
pids=()
for i in $(seq 1 "$N"); do
  "$CAVE" compress --type repetition < "$work/in$i" > "$work/out$i" 2> "$work/rep$i" &
  pids+=($!)
done
for i in "${!pids[@]}"; do
  wait "${pids[$i]}" || { echo "process $((i+1)) failed: $(cat "$work/rep$((i+1))")"; exit 1; }
done
for i in $(seq 1 "$N"); do
  h=$(sed -nE 's/.*"recovery_handle":"(ccr_[0-9a-f]{32})".*/\1/p' "$work/rep$i")
  [[ -n $h ]] || { echo "process $i: no handle: $(cat "$work/rep$i")"; exit 1; }
  grep -q '"error"' "$work/rep$i" && { echo "process $i reported an error"; exit 1; }
  "$CAVE" retrieve "$h" | cmp -s - "$work/in$i" || { echo "process $i: retrieve mismatch"; exit 1; }
done
echo "ok: $N concurrent writers, all handles retrieve exactly"

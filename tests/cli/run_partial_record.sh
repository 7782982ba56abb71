#!/usr/bin/env bash
# A `run` killed with SIGKILL while its command still runs leaves a partial record: once a
# marker is on stdout, the lines it replaced are stored, so `retrieve --partials` lists the
# record (the command line, writer gone) and `retrieve part_<id>` writes a byte-exact prefix of
# what the command printed that covers at least every elided line. Then an unknown partial id
# is still "not found". The only time bound is a 20 s hang guard.
# Usage: run_partial_record.sh <caveman-engine binary>
set -u
CAVE=$(readlink -f "$1")
work=$(mktemp -d)
export CAVEMAN_HOME=$work/home
unset CAVEMAN_CCR_DB CAVEMAN_CCR_MAX_BYTES CAVEMAN_CCR_ZSTD_LEVEL CAVE_ENGINE_TOON CAVEMAN_REPORT
set -m  # the job gets its own process group, so caveman-engine and its command die together
pid=
cleanup() {
  [[ -n $pid ]] && kill -KILL -- "-$pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

fail=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fail=1; }

# 3,000 routine lines, then one error line; the command then waits (until it is killed).
seq 1 3000 | awk '{ printf "2024-05-01T10:00:00 INFO worker-%d: request %d served in %d ms\n", $1 % 4, $1, 10 + $1 % 7 }' \
  >"$work/routine.log"
cp "$work/routine.log" "$work/printed"
echo "2024-05-01T10:00:01 ERROR worker-0: upstream timeout" >>"$work/printed"
"$CAVE" run --type log -- sh -c 'cat "$0"; sleep 1000' "$work/printed" >"$work/out" 2>"$work/err" &
pid=$!
for ((i = 0; i < 200; i++)); do
  grep -q "ERROR worker-0" "$work/out" && break
  sleep 0.1
done
if ! grep -q "ERROR worker-0" "$work/out"; then
  bad "the error line never reached stdout: $(head -c 300 "$work/out") $(head -c 300 "$work/err")"
  exit 1
fi
grep -q "lines elided (caveman)" "$work/out" && ok "a marker was written while the command ran" ||
  bad "no marker before the error line: $(head -c 300 "$work/out")"
kill -KILL -- "-$pid"
wait "$pid" 2>/dev/null
pid=

list=$("$CAVE" retrieve --partials)
[[ $(grep -c . <<<"$list") == 1 ]] && ok "one partial record listed" || bad "retrieve --partials: $list"
id=$(sed -nE 's/^\{"id":"(part_[0-9a-f]{32})".*/\1/p' <<<"$list")
grep -qF "\"command\":\"sh -c 'cat \\\"\$0\\\"; sleep 1000' $work/printed\"" <<<"$list" &&
  ok "it names the command line" || bad "command not in: $list"
grep -q '"writer_alive":false}$' <<<"$list" && ok "its writer is gone" || bad "writer_alive not false: $list"
"$CAVE" retrieve "$id" >"$work/partial" || bad "retrieve $id failed"
size=$(wc -c <"$work/partial")
head -c "$size" "$work/printed" | cmp -s - "$work/partial" && ok "the partial record is a prefix of the output" ||
  bad "partial record ($size bytes) is not a prefix of what the command printed"
((size >= $(wc -c <"$work/routine.log"))) && ok "it covers every elided line" ||
  bad "partial record has $size bytes, the elided lines end at $(wc -c <"$work/routine.log")"
grep -q "\"original_bytes\":$size," <<<"$list" && ok "original_bytes is its size" || bad "original_bytes != $size in: $list"
msg=$("$CAVE" retrieve part_00000000000000000000000000000000 2>&1 >/dev/null)
[[ $msg == "caveman-engine: retrieve: ccr: partial record not found" ]] && ok "an unknown id is not found" || bad "unknown id: $msg"
exit $fail

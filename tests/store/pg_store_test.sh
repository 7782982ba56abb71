#!/usr/bin/env bash
# The PostgreSQL recovery store (issue 18) through the CLI, against a real server started by
# tests/store/pg_harness.sh: 16 concurrent writers with their own CAVEMAN_HOMEs, dedupe across
# writers, the server stopped (pg_ctl stop -m immediate) while a large record is committed,
# capacity and gc, store migrate both ways with checksums, compress and retrieve with the
# server down (and a password kept out of messages), follow mode.
#   tests/store/pg_store_test.sh path/to/caveman-engine
set -uo pipefail
CAVE=$(readlink -f "$1")
SRC=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=pg_harness.sh
source "$SRC/tests/store/pg_harness.sh"
work=$(mktemp -d)
trap 'pg_stop; rm -rf "$work"' EXIT
fail() {
  echo "FAIL: $*"
  exit 1
}
pg_start
export CAVEMAN_CCR_URL=$PG_URL
export CAVEMAN_HOME=$work/unused-home  # must stay unused: the URL selects PostgreSQL
handle_of() { sed -nE 's/.*"recovery_handle":"(ccr_[0-9a-f]{32})".*/\1/p' "$1"; }
sql() { pg_psql -c "$1"; }
sha() { sha256sum "$1" | cut -c1-64; }

# Inputs: CI logs that compress (lossy, so stored), each different.
gen_log() {  # gen_log SEED LINES > file
  python3 - "$1" "$2" <<'EOF'
import random, sys
r = random.Random(int(sys.argv[1]))
for i in range(int(sys.argv[2])):
    if i % 50 == 0:
        print("2026-11-02T10:%02d:%02d.000Z ERROR [job-%d] step %d failed: exit %d" % (i // 60 % 60, i % 60, r.randrange(99), i, r.randrange(1, 9)))
    else:
        print("2026-11-02T10:%02d:%02d.000Z INFO  [pool] connection re-established after timeout" % (i // 60 % 60, i % 60))
EOF
}

# ---- 1. 16 concurrent writers, each its own CAVEMAN_HOME; writers 15 and 16 store the same
# original as writer 1 (dedupe across writers).
for i in $(seq 1 14); do gen_log "$i" 20000 > "$work/in$i"; done
cp "$work/in1" "$work/in15"
cp "$work/in1" "$work/in16"
pids=()
for i in $(seq 1 16); do
  CAVEMAN_HOME=$work/home$i "$CAVE" compress --report json < "$work/in$i" > "$work/out$i" 2> "$work/rep$i" &
  pids+=($!)
done
for i in $(seq 1 16); do wait "${pids[$((i - 1))]}" || fail "writer $i exited non-zero: $(cat "$work/rep$i")"; done
for i in $(seq 1 16); do
  h=$(handle_of "$work/rep$i")
  [[ -n $h ]] || fail "writer $i stored nothing: $(cat "$work/rep$i")"
  grep -q '"error"' "$work/rep$i" && fail "writer $i report has an error: $(cat "$work/rep$i")"
  "$CAVE" retrieve "$h" | cmp -s - "$work/in$i" || fail "writer $i: retrieve $h differs from its input"
  [[ $h == "ccr_$(sha "$work/in$i" | cut -c1-32)" ]] || fail "writer $i: handle is not the SHA-256 prefix"
done
[[ -e $work/unused-home ]] && fail "CAVEMAN_HOME was created although CAVEMAN_CCR_URL selects PostgreSQL"
h1=$(handle_of "$work/rep1")
[[ $(handle_of "$work/rep15") == "$h1" && $(handle_of "$work/rep16") == "$h1" ]] || fail "same original, different handles"
[[ $(sql "SELECT count(*) FROM ccr_recoveries") == 14 ]] || fail "expected 14 records (16 writers, 3 of one original)"
[[ $(sql "SELECT count(*) FROM ccr_recoveries WHERE handle = '$h1'") == 1 ]] || fail "dedupe: $h1 stored twice"
rows=$(sql "SELECT count(*) FROM ccr_chunks WHERE chunk_key = '$h1'")
want=$(sql "SELECT (stored_bytes + 1048575) / 1048576 FROM ccr_recoveries WHERE handle = '$h1'")
[[ $rows == "$want" ]] || fail "dedupe: $rows chunk rows for $h1, want $want"
[[ $(sql "SELECT max(length(data)) <= 1048576 FROM ccr_chunks") == t ]] || fail "a chunk row over 1 MiB"
[[ $(sql "SELECT max(version) FROM ccr_schema_version") == 1 ]] || fail "schema version"
used=$(sql "SELECT used_bytes FROM ccr_usage")
sum=$(sql "SELECT sum(stored_bytes + coalesce(length(metadata), 0)) FROM ccr_recoveries")
[[ $used == "$sum" ]] || fail "usage counter $used != stored total $sum after concurrent writers"
"$CAVE" stats --format json > "$work/stats" || fail "stats"
jq -e '.totals.count == 14' "$work/stats" >/dev/null || fail "stats count: $(cat "$work/stats")"
jq -e ".storage_bytes == $used" "$work/stats" >/dev/null || fail "stats storage_bytes: $(cat "$work/stats")"
echo "ok: 16 concurrent writers, 14 records, $h1 stored once ($rows chunk rows)"

# ---- 2. Sliced retrieve, marker maps, follow mode, partial records.
"$CAVE" retrieve "$h1" --lines 2:3 > "$work/slice" || fail "retrieve --lines"
sed -n 2,3p "$work/in1" | cmp -s - "$work/slice" || fail "retrieve --lines 2:3 differs"
"$CAVE" retrieve "$h1" --map --format json | jq -e '.markers | length > 0' >/dev/null || fail "marker map"
gen_log 99 30000 > "$work/follow_in"
"$CAVE" compress --follow --report json < "$work/follow_in" > "$work/follow_out" 2> "$work/follow_rep" || fail "follow: $(cat "$work/follow_rep")"
hf=$(handle_of "$work/follow_rep")
[[ -n $hf ]] || fail "follow stored nothing: $(cat "$work/follow_rep")"
"$CAVE" retrieve "$hf" | cmp -s - "$work/follow_in" || fail "follow: retrieve differs"
[[ $(sql "SELECT count(*) FROM ccr_partials") == 0 ]] || fail "follow left a partial record"
[[ $(sql "SELECT chunk_key LIKE 'part_%' FROM ccr_recoveries WHERE handle = '$hf'") == t ]] || fail "follow record chunk_key"
# A follow writer killed mid-stream leaves a partial record, readable and listed.
# The input stays open (fd 3 on a FIFO) so the writer is mid-stream when it is killed.
mkfifo "$work/fifo"
"$CAVE" compress --follow --report json < "$work/fifo" > "$work/fk_out" 2>/dev/null &
fpid=$!
exec 3> "$work/fifo"
cat "$work/follow_in" >&3
for _ in $(seq 1 100); do
  [[ $(sql "SELECT count(*) FROM ccr_partials WHERE original_bytes > 0") -ge 1 ]] && break
  sleep 0.1
done
kill -9 "$fpid"; wait "$fpid" 2>/dev/null
exec 3>&-
pid_row=$("$CAVE" retrieve --partials --format json) || fail "retrieve --partials"
pid_id=$(echo "$pid_row" | jq -r '.id' | head -1)
[[ $pid_id == part_* ]] || fail "no partial record listed: $pid_row"
"$CAVE" retrieve "$pid_id" > "$work/partial" || fail "retrieve partial"
[[ -s $work/partial ]] && cmp -s "$work/partial" <(head -c "$(stat -c %s "$work/partial")" "$work/follow_in") ||
  fail "partial record is not a prefix of the input"
"$CAVE" gc > "$work/gc" || fail "gc"
jq -e '.orphan_chunks >= 1' "$work/gc" >/dev/null || fail "gc kept the dead writer's partial record: $(cat "$work/gc")"
[[ $(sql "SELECT count(*) FROM ccr_partials") == 0 ]] || fail "gc kept the partial row"
echo "ok: slices, marker map, follow mode, partial record of a killed writer and its gc"

# ---- 3. Capacity and gc.
used=$(sql "SELECT used_bytes FROM ccr_usage")
gen_log 500 20000 > "$work/big"
CAVEMAN_CCR_MAX_BYTES=$((used + 10)) "$CAVE" compress --report json < "$work/big" > "$work/cap_out" 2> "$work/cap_rep" ||
  fail "compress over capacity exited non-zero"
grep -q cave_ccr_budget_exceeded "$work/cap_rep" || fail "over capacity: no cave_ccr_budget_exceeded: $(cat "$work/cap_rep")"
cmp -s "$work/cap_out" "$work/big" || fail "over capacity: the original did not pass through"
[[ $(sql "SELECT used_bytes FROM ccr_usage") == "$used" ]] || fail "a refused put changed the usage counter"
"$CAVE" gc --older-than 1d --dry-run | jq -e '.removed == 0' >/dev/null || fail "gc --older-than 1d removed records"
sleep 1.1
gen_log 501 20000 > "$work/fresh"
"$CAVE" compress --report json < "$work/fresh" > /dev/null 2> "$work/fresh_rep" || fail "fresh compress"
hfresh=$(handle_of "$work/fresh_rep")
"$CAVE" gc --older-than 1s --dry-run > "$work/gcd" || fail "gc dry run"
jq -e '.removed == 15' "$work/gcd" >/dev/null || fail "gc dry run: $(cat "$work/gcd")"
[[ $(sql "SELECT count(*) FROM ccr_recoveries") == 16 ]] || fail "dry run deleted"
"$CAVE" gc --older-than 1s > "$work/gcr" || fail "gc"
jq -e '.removed == 15' "$work/gcr" >/dev/null || fail "gc: $(cat "$work/gcr")"
[[ $(sql "SELECT count(*) FROM ccr_recoveries") == 1 ]] || fail "gc left $(sql "SELECT count(*) FROM ccr_recoveries") records"
[[ $(sql "SELECT count(*) FROM ccr_chunks WHERE chunk_key <> (SELECT coalesce(chunk_key, handle) FROM ccr_recoveries)") == 0 ]] ||
  fail "gc left chunk rows of deleted records"
"$CAVE" retrieve "$hfresh" | cmp -s - "$work/fresh" || fail "gc damaged the kept record"
[[ $(sql "SELECT used_bytes FROM ccr_usage") == $(sql "SELECT sum(stored_bytes) FROM ccr_recoveries") ]] || fail "usage after gc"
"$CAVE" retrieve "$h1" > /dev/null 2>&1 && fail "a gc'd record is still retrievable"
echo "ok: capacity (fail closed, counter unchanged), gc by age with dry run"

# ---- 4. The server stopped while a large record is being committed: the record is absent or
# complete, never partial; compress passes the original through (exit 0).
python3 - > "$work/large" <<'EOF'
import random
r = random.Random(7)
for i in range(300000):
    print("2026-11-02T10:00:%02d.000Z INFO  [worker] request id=%032x payload=%048x done" % (i % 60, r.getrandbits(128), r.getrandbits(192)))
EOF
hl="ccr_$(sha "$work/large" | cut -c1-32)"
outcomes=""
for delay in 0 0.05 0.2 0.5; do
  "$CAVE" compress --report json < "$work/large" > "$work/lout" 2> "$work/lrep" &
  cpid=$!
  seen=0
  for _ in $(seq 1 600); do
    if [[ $(sql "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'caveman-engine' AND query LIKE 'INSERT INTO ccr_chunks%'") != 0 ]]; then
      seen=1
      break
    fi
    sleep 0.02
  done
  sleep "$delay"
  pg_ctl_as -m immediate stop >/dev/null 2>&1 || fail "pg_ctl stop"
  wait "$cpid"
  rc=$?
  [[ $rc == 0 ]] || fail "compress exited $rc when the server stopped mid-commit: $(cat "$work/lrep")"
  [[ -s $work/lout ]] || fail "empty stdout when the server stopped mid-commit"
  if grep -q '"error"' "$work/lrep"; then
    cmp -s "$work/lout" "$work/large" || fail "store failed but the original did not pass through"
    state=passed-through
  else
    state=stored
  fi
  pg_restart || fail "restart: $(tail -5 "$PG_DIR/server.log")"
  n=$(sql "SELECT count(*) FROM ccr_recoveries WHERE handle = '$hl'")
  if [[ $n == 1 ]]; then
    "$CAVE" retrieve "$hl" | cmp -s - "$work/large" || fail "after stop at +${delay}s: partial record $hl"
    sql "DELETE FROM ccr_chunks WHERE chunk_key = '$hl'; DELETE FROM ccr_recoveries WHERE handle = '$hl'" >/dev/null
  else
    [[ $(sql "SELECT count(*) FROM ccr_chunks WHERE chunk_key = '$hl'") == 0 ]] || fail "chunk rows of an absent record survived"
  fi
  [[ $state == stored && $n == 0 ]] && fail "compress reported a stored record that is absent"
  outcomes+=" +${delay}s(seen=$seen):$state/records=$n"
done
"$CAVE" gc >/dev/null || fail "gc after the stops"
"$CAVE" compress --report json < "$work/large" > /dev/null 2> "$work/lrep" || fail "compress after restarts"
"$CAVE" retrieve "$(handle_of "$work/lrep")" | cmp -s - "$work/large" || fail "large record after restarts"
echo "ok: server stopped mid-commit:$outcomes; never partial"

# ---- 5. store migrate: SQLite -> PostgreSQL -> SQLite, verified, resumable.
mig_home=$work/mighome
for i in 1 2 3; do
  gen_log "$((700 + i))" 20000 > "$work/m$i"
  CAVEMAN_CCR_URL="" CAVEMAN_HOME=$mig_home "$CAVE" compress --report json < "$work/m$i" > /dev/null 2> "$work/mrep$i" ||
    fail "sqlite compress $i"
done
CAVEMAN_CCR_URL="" CAVEMAN_HOME=$mig_home "$CAVE" compress --follow --report json < "$work/m1" > /dev/null 2>&1  # same original: refresh
"$CAVE" store migrate --from "sqlite:$mig_home/ccr.db" --to "$PG_URL" > "$work/mig1" || fail "migrate to pg: $(cat "$work/mig1")"
jq -e '.migrated == 3 and .failed == 0' "$work/mig1" >/dev/null || fail "migrate to pg: $(cat "$work/mig1")"
for i in 1 2 3; do
  h=$(handle_of "$work/mrep$i")
  "$CAVE" retrieve "$h" | cmp -s - "$work/m$i" || fail "migrated record $h differs"
  [[ $(sql "SELECT content_type FROM ccr_recoveries WHERE handle = '$h'") == log ]] || fail "migrated info"
done
"$CAVE" retrieve "$(handle_of "$work/mrep2")" --map --format json | jq -e '.markers | length > 0' >/dev/null ||
  fail "migrated marker map"
"$CAVE" store migrate --from "sqlite:$mig_home/ccr.db" --to "$PG_URL" > "$work/mig2" || fail "migrate rerun"
jq -e '.migrated == 0 and .skipped == 3' "$work/mig2" >/dev/null || fail "migrate rerun not resumable: $(cat "$work/mig2")"
# Resume after an interrupted run: drop one record at the destination, migrate again.
h2=$(handle_of "$work/mrep2")
sql "DELETE FROM ccr_chunks WHERE chunk_key = '$h2'; DELETE FROM ccr_recoveries WHERE handle = '$h2'" >/dev/null
"$CAVE" store migrate --from "sqlite:$mig_home/ccr.db" --to "$PG_URL" > "$work/mig3" || fail "migrate resume"
jq -e '.migrated == 1 and .skipped == 2' "$work/mig3" >/dev/null || fail "migrate resume: $(cat "$work/mig3")"
# Back: PostgreSQL (the 3 records plus the large one) -> a new SQLite file.
"$CAVE" store migrate --from "$PG_URL" --to "sqlite:$work/back.db" > "$work/mig4" || fail "migrate to sqlite: $(cat "$work/mig4")"
pg_n=$(sql "SELECT count(*) FROM ccr_recoveries")
jq -e ".migrated == $pg_n and .failed == 0" "$work/mig4" >/dev/null || fail "migrate to sqlite: $(cat "$work/mig4") (pg has $pg_n)"
for i in 1 2 3; do
  h=$(handle_of "$work/mrep$i")
  CAVEMAN_CCR_URL="" CAVEMAN_CCR_DB=$work/back.db "$CAVE" retrieve "$h" | cmp -s - "$work/m$i" || fail "back-migrated $h differs"
done
# Bounded memory: retrieving the large record (≈ 44 MB original, ≈ 15 MB frame in 15 chunk
# rows) from PostgreSQL peaks within 8 MiB of the SQLite store's retrieve of the same record
# (both spool the verified original the same way); holding the frame or the original in memory
# would exceed that.
hl_now=$(handle_of "$work/lrep")
/usr/bin/time -f %M -o "$work/rss_pg" "$CAVE" retrieve "$hl_now" | cmp -s - "$work/large" || fail "large retrieve (pg)"
CAVEMAN_CCR_URL="" CAVEMAN_CCR_DB=$work/back.db /usr/bin/time -f %M -o "$work/rss_sq" "$CAVE" retrieve "$hl_now" |
  cmp -s - "$work/large" || fail "large retrieve (sqlite)"
rss_pg=$(tail -1 "$work/rss_pg"); rss_sq=$(tail -1 "$work/rss_sq")
((rss_pg <= rss_sq + 8192)) || fail "retrieve from PostgreSQL peaked at $rss_pg KB, SQLite at $rss_sq KB"
echo "ok: large retrieve peak RSS: postgresql $rss_pg KB, sqlite $rss_sq KB"
# A corrupt source record is refused (checksum), counted, and the run fails.
cp "$mig_home/ccr.db" "$work/bad.db"
sqlite3 "$work/bad.db" "UPDATE chunks SET data = zeroblob(length(data)) WHERE handle = '$h2'"
"$CAVE" store migrate --from "sqlite:$work/bad.db" --to "sqlite:$work/bad_dst.db" > "$work/mig5" 2> "$work/mig5err" &&
  fail "migrating a corrupt record succeeded"
jq -e '.migrated == 2 and .failed == 1' "$work/mig5" >/dev/null || fail "corrupt source: $(cat "$work/mig5")"
grep -q "$h2" "$work/mig5err" || fail "corrupt source record not named: $(cat "$work/mig5err")"
echo "ok: migrate sqlite->pg (3), rerun skipped 3, resume 1, pg->sqlite ($pg_n), corrupt source refused"

# ---- 6. Server down: compress passes the original through (exit 0, cave_ccr_unavailable);
# retrieve fails with a clear message (exit 1); the password never appears.
pg_ctl_as -m immediate stop >/dev/null 2>&1
down="postgresql://caveman:s3cretpw@127.0.0.1:$PG_PORT/caveman?connect_timeout=2"
CAVEMAN_CCR_URL=$down "$CAVE" compress --report json < "$work/in2" > "$work/down_out" 2> "$work/down_rep"
rc=$?
[[ $rc == 0 ]] || fail "compress with the server down exited $rc"
cmp -s "$work/down_out" "$work/in2" || fail "server down: the original did not pass through"
grep -q cave_ccr_unavailable "$work/down_rep" || fail "server down: report lacks cave_ccr_unavailable: $(cat "$work/down_rep")"
CAVEMAN_CCR_URL=$down "$CAVE" retrieve "$h1" > "$work/down_ret" 2> "$work/down_err"
rc=$?
[[ $rc == 1 ]] || fail "retrieve with the server down exited $rc"
[[ ! -s $work/down_ret ]] || fail "retrieve with the server down wrote stdout"
grep -q "cannot open recovery store: postgresql://caveman:\*\*\*@127.0.0.1:$PG_PORT" "$work/down_err" ||
  fail "retrieve message: $(cat "$work/down_err")"
cat "$work/down_rep" "$work/down_err" | grep -q s3cretpw && fail "the password was printed"
CAVEMAN_CCR_URL="mysql://x" "$CAVE" retrieve "$h1" 2> "$work/bad_url" && fail "a non-postgresql URL was accepted"
grep -q "CAVEMAN_CCR_URL must be a postgresql://" "$work/bad_url" || fail "bad URL message: $(cat "$work/bad_url")"
echo "ok: server down: compress passes through (exit 0, cave_ccr_unavailable), retrieve exit 1, password redacted"
echo "ok: all PostgreSQL store checks passed"

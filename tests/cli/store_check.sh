#!/usr/bin/env bash
# `store check` and `store salvage` on real databases and damaged copies (issue 15 item 9).
# A store gets four records (one multi-chunk, > 1 MiB of frame) and a partial record from a
# `compress --follow` killed with SIGKILL. Copies are damaged: one chunk's bytes changed,
# truncated to half, a seeded garbage region, and a WAL without its -shm in a read-only
# directory (run as nobody, since root ignores directory modes). For each: check names
# exactly the damaged records (the oracle reads the chunk rows with the sqlite3 CLI and
# compares them with the intact database), leaves the files and modes unchanged, and salvage
# copies every intact record (retrieved byte for byte from the new database) and lists the
# lost ones. Needs root and user nobody for the WAL case (else that case is skipped).
set -uo pipefail
CAVE=$(readlink -f "$1")
SRC=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
chmod 0755 "$work"
unset CAVEMAN_HOME CAVEMAN_CCR_MAX_BYTES CAVEMAN_CCR_ZSTD_LEVEL
export HOME=$work
pid=
cleanup() {
  [[ -n $pid ]] && kill -KILL -- "-$pid" 2>/dev/null
  chmod -R u+w "$work" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
fail=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fail=1; }
json_list() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(" ".join(sorted(d[sys.argv[2]])))' "$@"; }
json_num() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$@"; }

# --- the intact store --------------------------------------------------------------------
mkdir "$work/base"
export CAVEMAN_CCR_DB=$work/base/ccr.db
python3 "$SRC/scripts/gen_ci_log.py" 1 >"$work/in1"
python3 "$SRC/scripts/gen_ci_log.py" 2 >"$work/in2"
python3 - "$work/in3" <<'EOF'
import base64, random, sys
rng = random.Random(15)
with open(sys.argv[1], "w") as f:
    # ~3.2 MB of incompressible lines (a frame of > 2 MiB: three chunk rows), then repeats.
    for i in range(42000):
        f.write(base64.b64encode(rng.randbytes(57)).decode() + "\n")
    for i in range(300):
        f.write("INFO retrying connection to db-7\n")
EOF
{ echo "start"; yes "INFO heartbeat ok" | head -n 4000; echo "ERROR worker-0: upstream timeout"; } >"$work/in4"
handles=()
for i in 1 2 3 4; do
  h=$("$CAVE" compress --type repetition <"$work/in$i" 2>&1 >/dev/null | sed -nE 's/.*"recovery_handle":"(ccr_[0-9a-f]{32})".*/\1/p')
  [[ -n $h ]] || { bad "input $i stored no record"; exit 1; }
  handles+=("$h")
  cp "$work/in$i" "$work/orig_$h"
done
h3=${handles[2]}
rows3=$(sqlite3 "$CAVEMAN_CCR_DB" "SELECT count(*) FROM chunks WHERE handle = '$h3'")
[[ $rows3 -ge 2 ]] && ok "record 3 has $rows3 chunk rows" || bad "record 3 has $rows3 chunk rows"
# The partial record: compress --follow killed while its input is still open.
set -m
(cat "$work/in1"; sleep 1000) | "$CAVE" compress --follow --type log >"$work/follow_out" 2>/dev/null &
pid=$!
set +m
for ((i = 0; i < 200; i++)); do
  [[ $(sqlite3 "file:$CAVEMAN_CCR_DB?mode=ro" "SELECT count(*) FROM partials" 2>/dev/null) == 1 ]] && break
  sleep 0.1
done
kill -KILL -- "-$pid" 2>/dev/null; wait "$pid" 2>/dev/null; pid=
# A copy of the killed writer's files without the -shm, for the WAL case (before anything
# opens the database for writing, which would fold the WAL into the file).
mkdir "$work/walcase"
cp "$work/base/ccr.db" "$work/base/ccr.db-wal" "$work/walcase/" || bad "the killed writer left no -wal"
part=$(sqlite3 "$CAVEMAN_CCR_DB" "SELECT id FROM partials")
[[ $part == part_* ]] && ok "killed follow left partial record $part" || { bad "no partial record"; exit 1; }
# Fold the WAL into the file for the other cases (the oracle reads the file alone).
sqlite3 "$CAVEMAN_CCR_DB" "PRAGMA wal_checkpoint(TRUNCATE)" >/dev/null
rm -f "$work/base/ccr.db-wal" "$work/base/ccr.db-shm"

# Chunk rows of key $2 in database $1, as the sqlite3 CLI reads them (the oracle; writable_schema
# lets it read a file shorter than its header says, as check does).
chunks_of() { sqlite3 "file:$1?immutable=1" "PRAGMA writable_schema=ON; SELECT seq, hex(data) FROM chunks WHERE handle = '$2' ORDER BY seq" 2>/dev/null; }
key_of() { sqlite3 "file:$1?immutable=1" "PRAGMA writable_schema=ON; SELECT coalesce(chunk_key, handle) FROM recoveries WHERE handle = '$2'" 2>/dev/null; }
declare -A intact
for h in "${handles[@]}" "$part"; do
  k=$h; [[ $h == ccr_* ]] && k=$(key_of "$CAVEMAN_CCR_DB" "$h")
  intact[$h]=$(chunks_of "$CAVEMAN_CCR_DB" "$k" | sha256sum)
done
"$CAVE" retrieve "$part" >"$work/orig_$part" || bad "partial record not retrievable"

files_state() { for f in "$1"/ccr.db*; do stat -c '%n %a %s' "$f"; sha256sum <"$f"; done; }

# Runs check and salvage on database $2 (case name $1) and compares them with the oracle.
# $3: the command prefix that runs caveman-engine (empty, or runuser for the WAL case).
verify_case() {
  local name=$1 db=$2 dir expect_corrupt="" expect_missing=0 before after h k rc
  dir=$(dirname "$db")
  shift 2
  local -a runner=("$@")
  local real_db=$db
  db=${ORACLE_DB:-$db}  # the oracle's view of the same content (the WAL case folds a copy)
  for h in "${handles[@]}" "$part"; do
    if [[ $h == ccr_* ]]; then
      k=$(key_of "$db" "$h")
      [[ -n $k ]] || { expect_missing=1; continue; }
    else
      k=$h
      [[ $(sqlite3 "file:$db?immutable=1" "PRAGMA writable_schema=ON; SELECT id FROM partials WHERE id = '$h'" 2>/dev/null) == "$h" ]] ||
        { expect_missing=1; continue; }
    fi
    [[ $(chunks_of "$db" "$k" | sha256sum) == "${intact[$h]}" ]] || expect_corrupt+=" $h"
  done
  expect_corrupt=$(tr ' ' '\n' <<<"$expect_corrupt" | grep . | sort | tr '\n' ' ' | sed 's/ $//')
  db=$real_db
  before=$(files_state "$dir")
  "${runner[@]}" env CAVEMAN_CCR_DB="$db" "$CAVE" store check >"$work/$name.check" 2>"$work/$name.err"
  rc=$?
  after=$(files_state "$dir")
  [[ $before == "$after" ]] && ok "$name: check changed no file or mode" || bad "$name: check changed the files"
  if ! python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$work/$name.check" 2>/dev/null; then
    bad "$name: check printed no JSON (rc $rc): $(head -c 300 "$work/$name.err")"
    return
  fi
  local got_corrupt
  got_corrupt=$( (json_list "$work/$name.check" corrupt; json_list "$work/$name.check" corrupt_partials) | tr ' ' '\n' | grep . | sort | tr '\n' ' ' | sed 's/ $//')
  [[ $got_corrupt == "$expect_corrupt" ]] && ok "$name: check names the damaged records [${got_corrupt}]" ||
    bad "$name: check names [$got_corrupt], oracle [$expect_corrupt]: $(cat "$work/$name.check")"
  local unreadable
  unreadable=$(json_num "$work/$name.check" unreadable_rows)
  if [[ $expect_missing == 1 ]]; then
    [[ $unreadable -gt 0 ]] && ok "$name: unreadable rows counted ($unreadable)" || bad "$name: a row is unreadable but unreadable_rows is 0"
  fi
  local integrity
  integrity=$(python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))["integrity"]))' "$work/$name.check")
  local damaged=0
  [[ -n $expect_corrupt || $expect_missing == 1 || $integrity != '"ok"' ]] && damaged=1
  if [[ $damaged == 1 ]]; then
    [[ $rc == 4 ]] && ok "$name: check exits 4 (integrity $integrity)" || bad "$name: check exits $rc with damage"
  else
    [[ $rc == 0 ]] && ok "$name: check exits 0" || bad "$name: check exits $rc without damage: $(cat "$work/$name.check")"
  fi
  # Salvage into a new database in a directory the runner may write.
  local target=$work/salvaged_$name
  mkdir -m 0700 "$target"; [[ ${#runner[@]} -gt 0 ]] && chown nobody "$target"
  "${runner[@]}" env CAVEMAN_CCR_DB="$db" "$CAVE" store salvage --to "$target/ccr.db" >"$work/$name.salvage" 2>"$work/$name.serr"
  rc=$?
  [[ $rc == 0 || $rc == 4 ]] || { bad "$name: salvage exits $rc: $(head -c 300 "$work/$name.serr")"; return; }
  local lost copied=0 new_part
  lost=$(json_list "$work/$name.salvage" lost)
  for h in "${handles[@]}" "$part"; do
    if [[ " $lost " == *" $h "* ]]; then
      [[ " $expect_corrupt " == *" $h "* ]] || bad "$name: salvage lost intact record $h"
      continue
    fi
    if [[ $h == part_* ]]; then
      new_part=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["partial_ids"].get(sys.argv[2], ""))' "$work/$name.salvage" "$h")
      [[ -n $new_part ]] || { [[ $expect_missing == 1 ]] || bad "$name: partial $h neither copied nor lost"; continue; }
      "${runner[@]}" env CAVEMAN_CCR_DB="$target/ccr.db" "$CAVE" retrieve "$new_part" | cmp -s - "$work/orig_$h" &&
        copied=$((copied + 1)) || bad "$name: salvaged partial $new_part differs"
      continue
    fi
    if "${runner[@]}" env CAVEMAN_CCR_DB="$target/ccr.db" "$CAVE" retrieve "$h" >"$work/got" 2>/dev/null; then
      cmp -s "$work/got" "$work/orig_$h" && copied=$((copied + 1)) || bad "$name: salvaged $h differs"
    else
      [[ $expect_missing == 1 ]] || bad "$name: $h neither salvaged nor reported lost"
    fi
  done
  for h in $expect_corrupt; do
    [[ " $lost " == *" $h "* ]] || bad "$name: damaged $h not reported lost"
  done
  ok "$name: salvage copied $copied records byte for byte, lost [$lost]"
  "${runner[@]}" env CAVEMAN_CCR_DB="$db" "$CAVE" store salvage --to "$target/ccr.db" >/dev/null 2>"$work/$name.again"
  rc=$?
  [[ $rc == 1 ]] && grep -q "exists" "$work/$name.again" && ok "$name: salvage refuses an existing target" ||
    bad "$name: salvage onto an existing target exits $rc: $(cat "$work/$name.again")"
}

# --- the cases -----------------------------------------------------------------------------
mkdir "$work/intact" && cp "$work/base/ccr.db" "$work/intact/"
verify_case intact "$work/intact/ccr.db"
[[ $(json_num "$work/intact.check" ok) == 4 && $(json_num "$work/intact.check" partials_ok) == 1 ]] &&
  ok "intact: 4 records and 1 partial verified" || bad "intact: $(cat "$work/intact.check")"

mkdir "$work/chunk" && cp "$work/base/ccr.db" "$work/chunk/"
sqlite3 "$work/chunk/ccr.db" "UPDATE chunks SET data = substr(data, 1, 5000) || X'00112233445566778899aabbccddeeff' || substr(data, 5017) WHERE handle = '$h3' AND seq = 1" ||
  bad "cannot corrupt a chunk"
rm -f "$work/chunk/ccr.db-wal" "$work/chunk/ccr.db-shm"
verify_case one_chunk "$work/chunk/ccr.db"
[[ $(json_list "$work/one_chunk.check" corrupt) == "$h3" ]] && ok "one_chunk: exactly $h3" || bad "one_chunk: $(cat "$work/one_chunk.check")"

mkdir "$work/half" && cp "$work/base/ccr.db" "$work/half/"
truncate -s $(($(stat -c %s "$work/half/ccr.db") / 2)) "$work/half/ccr.db"
verify_case truncated_half "$work/half/ccr.db"

mkdir "$work/garbage" && cp "$work/base/ccr.db" "$work/garbage/"
python3 - "$work/garbage/ccr.db" <<'EOF'
import random, sys
rng = random.Random(1515)
with open(sys.argv[1], "r+b") as f:
    f.seek(0, 2); size = f.tell()
    for at in (size // 3, (2 * size) // 3):  # two 48 KiB regions of random bytes
        f.seek(at); f.write(rng.randbytes(48 * 1024))
EOF
verify_case garbage "$work/garbage/ccr.db"

if [[ $(id -u) == 0 ]] && id nobody >/dev/null 2>&1; then
  # WAL without -shm in a directory nobody cannot write: check reads the WAL's partial record
  # through a private copy; retrieve falls back to the file alone.
  chown -R nobody "$work/walcase"; chmod 0555 "$work/walcase"
  mkdir "$work/wal_oracle"; cp "$work/walcase/ccr.db" "$work/walcase/ccr.db-wal" "$work/wal_oracle/"
  sqlite3 "$work/wal_oracle/ccr.db" "PRAGMA wal_checkpoint(TRUNCATE)" >/dev/null
  run_nobody=(runuser -u nobody --)
  ORACLE_DB=$work/wal_oracle/ccr.db verify_case wal_orphan "$work/walcase/ccr.db" "${run_nobody[@]}"
  [[ $(json_num "$work/wal_orphan.check" partials_ok) == 1 ]] && ok "wal_orphan: the WAL's partial record verified" ||
    bad "wal_orphan: $(cat "$work/wal_orphan.check")"
  for h in "${handles[@]}"; do
    runuser -u nobody -- env CAVEMAN_CCR_DB="$work/walcase/ccr.db" "$CAVE" retrieve "$h" 2>"$work/werr" | cmp -s - "$work/orig_$h" ||
      bad "wal_orphan: retrieve $h: $(cat "$work/werr")"
  done
  ok "wal_orphan: retrieve reaches all 4 records (issue 15 item 9)"
else
  echo "skip wal_orphan: needs root and user nobody"
fi

# Errors: no database, bad arguments.
CAVEMAN_CCR_DB=$work/none/ccr.db "$CAVE" store check >"$work/none.out" 2>"$work/none.err"
rc=$?
[[ $rc == 1 && ! -s $work/none.out && -s $work/none.err ]] && ok "missing database: exit 1, $(cat "$work/none.err")" || bad "missing database: exit $rc"
"$CAVE" store salvage >/dev/null 2>&1; rc=$?
[[ $rc == 2 ]] && ok "salvage without --to: exit 2 (usage)" || bad "salvage without --to: exit $rc"
"$CAVE" store frobnicate >/dev/null 2>&1; rc=$?
[[ $rc == 2 ]] && ok "unknown store verb: exit 2 (usage)" || bad "unknown store verb: exit $rc"
exit $fail

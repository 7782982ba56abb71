#!/usr/bin/env bash
# Marker maps at the CLI (issue 14): for fixtures of every marker-writing type, batch and
# --follow, `retrieve H --map` (JSON) lists the markers, `retrieve H --marker K` prints exactly
# original[byte_begin, byte_end) of marker K, and the table form has one row per marker;
# out-of-range K exits 1 and bad arguments 2 (usage errors, issue 17); a record stored by schema 2 (no map) exits 3 with a
# clear message while plain `retrieve` still round-trips it.
set -euo pipefail
CAVE=$(readlink -f "$1")
SRC=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
export CAVEMAN_HOME=$work/home
check() {  # check <label> <input file> <compress args...>
  local label=$1 in=$2; shift 2
  "$CAVE" compress "$@" < "$in" > "$work/view" 2> "$work/report"
  local handle
  handle=$(sed -nE 's/.*"recovery_handle":"(ccr_[0-9a-f]{32})".*/\1/p' "$work/report")
  [[ -n $handle ]] || { echo "$label: no handle: $(cat "$work/report")"; exit 1; }
  "$CAVE" retrieve "$handle" --map > "$work/map.json"
  "$CAVE" retrieve "$handle" --map --format table > "$work/map.txt"
  python3 - "$work/map.json" "$work/map.txt" "$in" "$handle" "$CAVE" "$label" <<'PY'
import json, subprocess, sys
map_json, map_txt, path, handle, cave, label = sys.argv[1:]
m = json.load(open(map_json))
assert m["handle"] == handle, m
markers = m["markers"]
assert markers, label + ": no markers"
original = open(path, "rb").read()
for k, e in enumerate(markers, 1):
    assert e["marker"] == k, e
    got = subprocess.run([cave, "retrieve", handle, "--marker", str(k)], capture_output=True, check=True).stdout
    want = original[e["byte_begin"]:e["byte_end"]]
    assert got == want, f"{label}: marker {k}: {len(got)} bytes, want {len(want)}"
    assert e["first_line"] == original[:e["byte_begin"]].count(b"\n") + 1, e
table = open(map_txt).read().splitlines()
assert table[0].split()[:2] == ["marker", "kind"], table[0]
assert len(table) == len(markers) + 1, (len(table), len(markers))
print(f"ok {label}: {len(markers)} markers")
PY
  echo "$handle"
}
check log "$SRC/fixtures/log/app_logfmt.in" --type log > "$work/h_log"
check repetition "$SRC/fixtures/seed/pytest.log" --type repetition > /dev/null
check json "$SRC/fixtures/seed/orders.json" > /dev/null
check diff "$SRC/fixtures/diff/long_context.in" --type diff > /dev/null
check tabular "$SRC/fixtures/tables/ps_u.txt" > /dev/null
check text "$SRC/fixtures/text/report.in" --type text > /dev/null
check code "$SRC/fixtures/code/go_service.in" --type code > /dev/null
check follow "$SRC/fixtures/follow/cmake-make-verbose.log" --follow --type log > /dev/null
h=$(tail -n 1 "$work/h_log")

# Errors: K out of range, K not a number, --marker with --map, a query with --marker.
set +e
"$CAVE" retrieve "$h" --marker 999 > "$work/out" 2> "$work/err"; rc=$?
set -e
[[ $rc == 1 && ! -s $work/out ]] || { echo "out of range: rc $rc"; exit 1; }
grep -q '^caveman-engine: retrieve: marker 999 out of range: the record has [0-9]* markers$' "$work/err" || { cat "$work/err"; exit 1; }
for args in "--marker x" "--marker 1 --map" "--marker 1 query" "--map --marker 2"; do
  set +e
  # shellcheck disable=SC2086
  "$CAVE" retrieve "$h" $args > "$work/out" 2> "$work/err"; rc=$?
  set -e
  [[ $rc == 2 && ! -s $work/out ]] || { echo "'$args': rc $rc"; exit 1; }
done

set +e
"$CAVE" retrieve part_0123456789abcdef0123456789abcdef --map > "$work/out" 2> "$work/err"; rc=$?
set -e
[[ $rc == 3 && ! -s $work/out ]] || { echo "partial --map: rc $rc"; exit 1; }
grep -q '^caveman-engine: retrieve: ccr: no marker map: a partial record has none' "$work/err" || { cat "$work/err"; exit 1; }

# A store written by schema 2: the column does not exist; opening migrates it (NULL map).
python3 - "$CAVEMAN_HOME/ccr.db" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("ALTER TABLE recoveries DROP COLUMN marker_map")
db.execute("PRAGMA user_version = 2")
db.commit()
PY
set +e
"$CAVE" retrieve "$h" --map > "$work/out" 2> "$work/err"; rc=$?
set -e
[[ $rc == 3 && ! -s $work/out ]] || { echo "schema 2 record: rc $rc"; exit 1; }
grep -qx 'caveman-engine: retrieve: ccr: no marker map: the record was stored before marker maps' "$work/err" || { cat "$work/err"; exit 1; }
"$CAVE" retrieve "$h" > "$work/back"
cmp -s "$work/back" "$SRC/fixtures/log/app_logfmt.in" || { echo "schema 2 record: round trip"; exit 1; }
python3 -c "import sqlite3,sys; v=sqlite3.connect(sys.argv[1]).execute('PRAGMA user_version').fetchone()[0]; assert v==4, v" "$CAVEMAN_HOME/ccr.db"
# Compressing the same original again stores a map for it.
"$CAVE" compress --type log < "$SRC/fixtures/log/app_logfmt.in" > /dev/null 2>&1
"$CAVE" retrieve "$h" --map > /dev/null
echo "ok errors and schema 2 migration"

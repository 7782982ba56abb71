#!/usr/bin/env bash
# Issue 15, memory ceiling (peak RSS <= 3 x input + 64 MiB), end to end:
# 1. terminal over its batch working-set model (4 MiB of short lines) streams through its
#    online stage: a view with a handle, exact round trip, RSS inside the bound;
# 2. text over its model passes the original through unchanged, RSS inside the bound;
# 3. every registered type on the shapes of scripts/memory_table.py at 8 MiB (five generated
#    ones, among them an indented JSON array of short numbers, and the type's fixture) stays
#    inside the bound (the 64 MiB table is in docs/PERFORMANCE.md; too slow for every CI run).
set -euo pipefail
CAVE=$(readlink -f "$1")
SRC=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
export CAVEMAN_HOME=$work/home
python3 - "$work/in" <<'PY'
import sys
with open(sys.argv[1], "wb") as f:
    lines = [b"x%d\n" % (i % 5) if i % 1000 else b"ERROR step %d failed\n" % i for i in range(2 * 1024 * 1024)]
    f.write(b"".join(lines)[:4 * 1048576])
PY
in_kib=$(( $(stat -c %s "$work/in") / 1024 ))
bound=$(( 3 * in_kib + 65536 ))
rss() { sed -nE 's/.*Maximum resident set size \(kbytes\): ([0-9]+).*/\1/p' "$1"; }

/usr/bin/time -v "$CAVE" compress --type terminal < "$work/in" > "$work/out" 2> "$work/err"
handle=$(grep -o '"recovery_handle":"ccr_[0-9a-f]*"' "$work/err" | cut -d'"' -f4)
[[ -n $handle ]] || { echo "FAIL: terminal over its model gave no view"; cat "$work/err"; exit 1; }
(( $(stat -c %s "$work/out") < $(stat -c %s "$work/in") )) || { echo "FAIL: view not smaller"; exit 1; }
grep -q "ERROR step 1000 failed" "$work/out" || { echo "FAIL: alarm line lost"; exit 1; }
"$CAVE" retrieve "$handle" > "$work/back"
cmp "$work/in" "$work/back" || { echo "FAIL: round trip"; exit 1; }
r=$(rss "$work/err"); echo "terminal 4 MiB short lines: streamed, peak_rss=${r}KiB bound=${bound}KiB"
(( r <= bound )) || { echo "FAIL: over the bound"; exit 1; }

/usr/bin/time -v "$CAVE" compress --type text < "$work/in" > "$work/out" 2> "$work/err"
cmp "$work/in" "$work/out" || { echo "FAIL: text over its model did not pass the original through"; exit 1; }
r=$(rss "$work/err"); echo "text 4 MiB short lines: passed through, peak_rss=${r}KiB bound=${bound}KiB"
(( r <= bound )) || { echo "FAIL: over the bound"; exit 1; }

python3 "$SRC/scripts/memory_table.py" "$CAVE" --check 8
echo "ok: memory ceiling"

#!/usr/bin/env bash
# Full disk at the CLI level: the store lives on a 1 MiB tmpfs (private mount namespace), a
# compress whose original does not fit must pass the original through with
# cave_ccr_budget_exceeded (§6.5: SQLite "database or disk is full"), leave no partial record,
# and the next open must work with the earlier records intact.
# Exit 77 (ctest SKIP) when mount namespaces or tmpfs mounts are not permitted.
set -uo pipefail
CAVE=$(readlink -f "$1")
SRC=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
mkdir "$work/mnt"
if ! unshare -m sh -c "mount -t tmpfs -o size=1m tmpfs '$work/mnt'" 2>/dev/null; then
  echo "SKIP: cannot mount a tmpfs in a private mount namespace"; exit 77
fi
# ~2 MiB of random base64 lines, each three times: the repetition view is smaller, the zstd
# frame of the original (~1.1 MiB) is larger than the file system.
python3 - "$work/big" <<'PY'
import base64, random, sys
rng = random.Random(8)
with open(sys.argv[1], "w") as f:
    for _ in range(12000):
        line = base64.b64encode(bytes(rng.getrandbits(8) for _ in range(90))).decode()
        f.write((line + "\n") * 3)
PY
export CAVE SRC work big=$work/big
unshare -m bash -c '
set -uo pipefail
mnt=$work/mnt
mount -t tmpfs -o size=1m tmpfs "$mnt" || exit 77
export CAVEMAN_HOME=$mnt/home
fail() { echo "FAIL: $*"; exit 1; }
seed=$SRC/fixtures/seed/pytest.log
h1=$("$CAVE" compress --type repetition < "$seed" 2>&1 >/dev/null | sed -nE "s/.*\"recovery_handle\":\"(ccr_[0-9a-f]{32})\".*/\1/p")
[[ -n $h1 ]] || fail "first compress stored nothing"
rep=$("$CAVE" compress --type repetition < "$big" 2>&1 >"$work/out")
rc=$?
cmp -s "$work/out" "$big" || { rm -f "$work/out"; fail "stdout is not the original (exit $rc): $rep"; }
rm -f "$work/out"
[[ $rc == 0 ]] || fail "exit $rc"
[[ $rep == *"\"error\":\"cave_ccr_budget_exceeded\""* ]] || fail "report: $rep"
[[ $rep != *recovery_handle* ]] || fail "handle on a failed store: $rep"
echo "ok: full disk passes the original through with cave_ccr_budget_exceeded"
stats=$("$CAVE" stats) || fail "stats after the full disk failed"
[[ $(tr -d " \n" <<<"$stats") == *"\"totals\":{\"count\":1,"* ]] || fail "stats: $stats"
"$CAVE" retrieve "$h1" | cmp -s - "$seed" || fail "earlier record lost"
[[ $(sqlite3 "$CAVEMAN_HOME/ccr.db" "PRAGMA integrity_check") == ok ]] || fail "integrity_check"
"$CAVE" gc >/dev/null || fail "gc after the full disk failed"
echo "ok: next open works, earlier record intact, no partial record"
'

#!/usr/bin/env bash
# Issue 15 item 3: the store refuses a ccr.db, -wal or -shm owned by another user (planted in
# a sticky shared directory, that user could read the originals back): compress passes the
# original through with cave_ccr_unavailable and writes nothing into the foreign files;
# retrieve and stats fail with the reason. Needs root (to create files owned by nobody):
# exit 77 (skipped) otherwise.
set -u
CAVE=$(readlink -f "$1")
SRC=$(cd "$(dirname "$0")/../.." && pwd)
if [[ $(id -u) != 0 ]] || ! id nobody >/dev/null 2>&1; then echo "skip: needs root and user nobody"; exit 77; fi
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cd "$work"
mkdir shared && chmod 1777 shared
python3 "$SRC/scripts/gen_ci_log.py" 1 > ci.log
fail=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }
export CAVEMAN_CCR_DB=$work/shared/ccr.db
for planted in ccr.db ccr.db-wal ccr.db-shm; do
  rm -f shared/ccr.db*
  if [[ $planted != ccr.db ]]; then
    # A legitimate database of ours first, then the planted companion.
    "$CAVE" compress --type repetition < "$SRC/fixtures/seed/pytest.log" >/dev/null 2>&1
    rm -f shared/ccr.db-wal shared/ccr.db-shm
  fi
  : > "shared/$planted"; chown nobody "shared/$planted"; chmod 0666 "shared/$planted"
  before=$(stat -c %s "shared/$planted")
  "$CAVE" compress < ci.log > out 2> report; code=$?
  check "$planted foreign: compress exit 0" "[[ $code == 0 ]]"
  check "$planted foreign: original passed through" "cmp -s out ci.log"
  check "$planted foreign: report says cave_ccr_unavailable" "grep -q cave_ccr_unavailable report"
  check "$planted foreign: nothing written into it" "[[ $(stat -c %s "shared/$planted") == $before ]]"
  "$CAVE" stats > /dev/null 2> err; code=$?
  check "$planted foreign: stats exit 1" "[[ $code == 1 ]]"
  check "$planted foreign: stats names the owner" "grep -q 'owned by another user' err"
done
# Our own files in the same sticky directory work.
rm -f shared/ccr.db*
"$CAVE" compress < ci.log > out 2> report
h=$(sed -n 's/.*"recovery_handle":"\([^"]*\)".*/\1/p' report)
check "own files: view emitted" "[[ -n $h ]] && ! cmp -s out ci.log"
check "own files: round trip" "\"$CAVE\" retrieve $h | cmp -s - ci.log"
exit $fail

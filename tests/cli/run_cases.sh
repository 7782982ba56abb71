#!/usr/bin/env bash
# CLI golden tests. Each directory under tests/cli/cases/ holds:
#   cmd          a bash snippet run with $CAVE (the binary), $FIX (fixtures/), $SRC (repo
#                root), a fresh, private $CAVEMAN_HOME and an empty $XDG_CONFIG_HOME
#                (no configuration file unless the case writes one)
#   stdout.exact expected stdout bytes
#   stderr.exact expected stderr bytes
#   exit         expected exit code
# Usage: run_cases.sh <caveman-engine binary> [--update] [case...]
set -u
CAVE=$(readlink -f "$1"); shift
UPDATE=0
if [[ ${1:-} == --update ]]; then UPDATE=1; shift; fi
SRC=$(cd "$(dirname "$0")/../.." && pwd)
FIX=$SRC/fixtures
CASES=("$@")
if ((${#CASES[@]} == 0)); then
  for d in "$SRC"/tests/cli/cases/*/; do CASES+=("$(basename "$d")"); done
fi
fail=0
for c in "${CASES[@]}"; do
  dir=$SRC/tests/cli/cases/$c
  work=$(mktemp -d)
  (
    export CAVE FIX SRC CAVEMAN_HOME=$work/home XDG_CONFIG_HOME=$work/config
    unset CAVEMAN_CCR_DB CAVEMAN_CCR_MAX_BYTES CAVEMAN_CCR_ZSTD_LEVEL CAVE_ENGINE_TOON CAVEMAN_REPORT \
      CAVEMAN_MIN_SAVINGS CAVEMAN_CCR_URL
    cd "$work" && bash -c "$(cat "$dir/cmd")" >"$work/stdout" 2>"$work/stderr"
    echo $? >"$work/exit"
  )
  if ((UPDATE)); then
    cp "$work/stdout" "$dir/stdout.exact"; cp "$work/stderr" "$dir/stderr.exact"; cp "$work/exit" "$dir/exit"
    echo "updated $c"
  else
    ok=1
    cmp -s "$work/stdout" "$dir/stdout.exact" || { echo "FAIL $c: stdout differs"; diff <(head -c 2000 "$dir/stdout.exact") <(head -c 2000 "$work/stdout") | head -20; ok=0; }
    cmp -s "$work/stderr" "$dir/stderr.exact" || { echo "FAIL $c: stderr differs"; diff "$dir/stderr.exact" "$work/stderr" | head -20; ok=0; }
    cmp -s "$work/exit" "$dir/exit" || { echo "FAIL $c: exit $(cat "$work/exit"), want $(cat "$dir/exit")"; ok=0; }
    ((ok)) && echo "ok   $c" || fail=1
  fi
  rm -rf "$work"
done
exit $fail

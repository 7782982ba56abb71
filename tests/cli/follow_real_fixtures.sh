#!/usr/bin/env bash
# Follow mode on real tool output (fixtures/follow/, captured on this machine; see its
# README.md). For every fixture, each with a fresh CAVEMAN_HOME:
#   (a) compress --follow < FIXTURE: exit 0, a non-empty view; when the report names a
#       recovery_handle, retrieve HANDLE is byte-identical to the fixture;
#   (b) line types (log, terminal, repetition): the view accounts for every fixture line, in
#       order (tests/cli/follow_check.py: verbatim lines — terminal: or their §5.16 cleanup —,
#       `… N lines elided (caveman)…` and `… caveman: N identical lines elided …` markers, the
#       contract note last); other types are handed to the batch pipeline, so their view must
#       equal batch compress of the fixture;
#   (c) log: every fixture line matching the log keep pattern is shown (or, repeating the line
#       before it, inside an identical-lines marker) — in follow_check.py;
#   (d) batch compress of the view passes it through: stdout == view, no recovery_handle;
#   (e) run -- cat FIXTURE writes the same view;
#   (f) a JSON Lines fixture (*.jsonl) is detected as log (docs/DECISIONS.md, "Follow mode in
#       the engine": "log (JSON Lines included ...)").
# Prints per fixture: bytes in, bytes out, detected type, lines kept / elided.
# Usage: follow_real_fixtures.sh <caveman-engine binary> [fixture-name...]
set -u
CAVE=$(readlink -f "$1")
shift
SRC=$(cd "$(dirname "$0")/../.." && pwd)
CHECK=$SRC/tests/cli/follow_check.py
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
unset CAVEMAN_CCR_DB CAVEMAN_CCR_MAX_BYTES CAVEMAN_CCR_ZSTD_LEVEL CAVE_ENGINE_TOON CAVEMAN_REPORT
fail=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fail=1; }
field() { sed -nE "s/.*\"$1\":\"([^\"]*)\".*/\1/p" "$2"; }

fixtures=()
if (($# > 0)); then
  for n in "$@"; do fixtures+=("$SRC/fixtures/follow/$n"); done
else
  for f in "$SRC"/fixtures/follow/*.log "$SRC"/fixtures/follow/*.jsonl; do
    [[ -f $f ]] && fixtures+=("$f")
  done
fi
((${#fixtures[@]} > 0)) || { echo "FAIL no fixtures in $SRC/fixtures/follow"; exit 1; }

for fx in "${fixtures[@]}"; do
  name=$(basename "$fx")
  t=$work/$name
  mkdir -p "$t"
  export CAVEMAN_HOME=$t/home
  # (a)
  timeout 120 "$CAVE" compress --follow <"$fx" >"$t/view" 2>"$t/report"
  st=$?
  type=$(field content_type "$t/report")
  handle=$(field recovery_handle "$t/report")
  in_bytes=$(wc -c <"$fx")
  out_bytes=$(wc -c <"$t/view")
  [[ $st == 0 ]] && ok "$name: compress --follow exit 0" || bad "$name: compress --follow exit $st: $(head -c 300 "$t/report")"
  [[ -s $t/view ]] && ok "$name: non-empty view" || bad "$name: empty view"
  if [[ -n $handle ]]; then
    if "$CAVE" retrieve "$handle" >"$t/original" 2>"$t/retrieve_err" && cmp -s "$t/original" "$fx"; then
      ok "$name: retrieve $handle is byte-identical"
    else
      bad "$name: retrieve $handle differs from the fixture ($(head -c 200 "$t/retrieve_err"))"
    fi
  else
    # No handle: the view must be the fixture itself (a pass-through).
    cmp -s "$t/view" "$fx" && ok "$name: no recovery_handle, view is the fixture (pass-through)" ||
      bad "$name: no recovery_handle but the view differs from the fixture"
  fi
  # (b), (c)
  kept=- elided=-
  case $type in
    log | terminal | repetition)
      acct=$(python3 "$CHECK" "$fx" "$t/view" "$type")
      acct_st=$?
      kept=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["kept"])' "$acct" 2>/dev/null)
      elided=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["elided"])' "$acct" 2>/dev/null)
      if ((acct_st == 0)); then
        what="view accounts for every fixture line"
        [[ $type == log ]] && what+=", every keep-pattern line is kept"
        ok "$name: $what"
      else
        bad "$name: accounting: $acct"
      fi
      ;;
    *)
      CAVEMAN_HOME=$t/home_batch timeout 120 "$CAVE" compress <"$fx" >"$t/batch" 2>"$t/batch_report"
      cmp -s "$t/batch" "$t/view" && ok "$name: type $type (not streamed): view == batch compress view" ||
        bad "$name: type $type (not streamed): view differs from batch compress ($(wc -c <"$t/batch") bytes, report $(head -c 200 "$t/batch_report"))"
      ;;
  esac
  # (d)
  CAVEMAN_HOME=$t/home_view timeout 120 "$CAVE" compress <"$t/view" >"$t/view2" 2>"$t/view2_report"
  st=$?
  if [[ $st == 0 ]] && cmp -s "$t/view2" "$t/view" && [[ -z $(field recovery_handle "$t/view2_report") ]]; then
    ok "$name: batch compress passes the view through"
  else
    bad "$name: batch compress of the view: exit $st, stdout $(cmp -s "$t/view2" "$t/view" && echo == || echo !=) view ($(wc -c <"$t/view2") vs $out_bytes bytes), report $(head -c 300 "$t/view2_report")"
  fi
  # (e)
  CAVEMAN_HOME=$t/home_run timeout 120 "$CAVE" run -- cat "$fx" >"$t/runview" 2>"$t/run_report"
  st=$?
  if [[ $st == 0 ]] && cmp -s "$t/runview" "$t/view"; then
    ok "$name: run -- cat writes the same view"
  else
    bad "$name: run -- cat: exit $st, view $(wc -c <"$t/runview") bytes vs $out_bytes (type $(field content_type "$t/run_report")), first difference: $(cmp "$t/runview" "$t/view" 2>&1 | head -1)"
  fi
  # (f)
  if [[ $name == *.jsonl ]]; then
    [[ $type == log ]] && ok "$name: JSON Lines detected as log" ||
      bad "$name: JSON Lines detected as $type, not log"
  fi
  printf 'info %s: %s bytes in, %s bytes out, type %s, lines kept %s / elided %s\n' \
    "$name" "$in_bytes" "$out_bytes" "${type:-?}" "$kept" "$elided"
done
exit $fail

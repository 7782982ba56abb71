#!/usr/bin/env bash
# The README's example figures are what its commands print (issue 17): each check runs the
# command the README names next to a figure and fails if the README's sentence does not carry
# the numbers measured now. A change that moves a figure must update the README with it.
set -euo pipefail
BIN=$1
cd "$(dirname "$0")/../.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export CAVEMAN_HOME=$work/home XDG_CONFIG_HOME=$work/config
fail=0

# $1: a label, $2: file to compress; prints "before after lines"
measure() {
  "$BIN" compress <"$2" >"$work/view" 2>"$work/report"
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["tokens_before"], r["tokens_after"], r.get("recovery_handle",""))' "$work/report"
}
# $1: the sentence the README must contain (fixed string, newlines as spaces)
expect_readme() {
  if ! tr '\n' ' ' <README.md | sed 's/  */ /g' | grep -qF -- "$1"; then
    echo "FAIL: README does not say: $1"
    fail=1
  else
    echo "ok: $1"
  fi
}
fmt() { python3 -c 'import sys; print(f"{int(sys.argv[1]):,}")' "$1"; }

python3 scripts/gen_ci_log.py 0.25 >"$work/ci.log"
read -r before after handle < <(measure ci "$work/ci.log")
lines=$(wc -l <"$work/ci.log")
expect_readme "A generated $(fmt "$lines")-line CI log (\`scripts/gen_ci_log.py 0.25\`, 256 KiB) goes from $(fmt "$before") to $(fmt "$after") tokens"
# The "Undo any view" example shows this log's report and handle.
expect_readme "{\"content_type\":\"log\",\"tokens_before\":$before,\"tokens_after\":$after,…,\"recovery_handle\":\"$handle\""
expect_readme "\$ caveman-engine retrieve $handle > original.log # byte-identical"
# The retrieve example: byte-identical original.
"$BIN" retrieve "$handle" >"$work/orig"
cmp -s "$work/orig" "$work/ci.log" || { echo "FAIL: retrieve is not byte-identical"; fail=1; }

python3 scripts/gen_json_dump.py 1 >"$work/dump.json"
read -r before after handle < <(measure json "$work/dump.json")
expect_readme "(\`scripts/gen_json_dump.py 1\`) goes from $(fmt "$before") to $(fmt "$after") tokens"

read -r before after handle < <(measure findmnt fixtures/json-lossless/findmnt-J.json)
expect_readme "(\`caveman-engine compress < fixtures/json-lossless/findmnt-J.json\`: $(fmt "$before") → $(fmt "$after") tokens"
# The marker map example (issue 14): the table and the line count of marker 2.
read -r before after handle < <("$BIN" compress --type repetition <fixtures/seed/pytest.log 2>&1 >/dev/null |
  python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["tokens_before"], r["tokens_after"], r["recovery_handle"])')
expect_readme "\$ caveman-engine retrieve $handle --map --format table"
while IFS= read -r line; do
  expect_readme "$(sed 's/  */ /g' <<<"$line")"
done < <("$BIN" retrieve "$handle" --map --format table)
expect_readme "\$ caveman-engine retrieve $handle --marker 2 | wc -l $("$BIN" retrieve "$handle" --marker 2 | wc -l)"
# The savings ledger example: three runs of one file are three rows.
export XDG_CONFIG_HOME=$work/config CAVEMAN_HOME=$work/gain-home  # no configuration file, an empty store
for i in 1 2 3; do "$BIN" compress -q fixtures/seed/pytest.log >/dev/null; done
expect_readme "\$ for i in 1 2 3; do caveman-engine compress -q fixtures/seed/pytest.log > /dev/null; done"
while IFS= read -r line; do
  expect_readme "$(sed 's/  */ /g' <<<"$line")"
done < <("$BIN" gain --by type --format table)
exit $fail

#!/usr/bin/env bash
# Checks the help2man page and the per-subcommand help it is made from: every subcommand
# has a COMMANDS entry, the extra sections of cli/caveman-engine.h2m are there, and
# `caveman-engine <sub> --help` prints its help on stdout (nothing on stderr) and exits 0.
# Usage: man_page_test.sh <caveman-engine binary> <caveman-engine.1>
set -u
CAVE=$1
MAN=$2
SUBS="compress detect retrieve stats registry toon version gc run mcp gain"
fail=0
check() {  # check <description> <command...>
  local what=$1; shift
  if "$@"; then echo "ok   $what"; else echo "FAIL $what"; fail=1; fi
}

for s in $SUBS; do
  out=$("$CAVE" "$s" --help 2>/tmp/man_page_test.$$)
  rc=$?
  check "$s --help exits 0" test "$rc" -eq 0
  check "$s --help prints its usage on stdout" grep -q "^usage: caveman-engine $s" <<<"$out"
  check "$s --help prints nothing on stderr" test ! -s /tmp/man_page_test.$$
done
rm -f /tmp/man_page_test.$$

check "man page exists" test -s "$MAN"
check "man page has a .TH header" grep -q '^\.TH CAVEMAN-ENGINE "1"' "$MAN"
for section in NAME SYNOPSIS DESCRIPTION COMMANDS ENVIRONMENT '"EXIT STATUS"' FILES EXAMPLES; do
  check "man page has section $section" grep -q "^\.SH $section\$" "$MAN"
done
for s in $SUBS; do
  check "man page documents subcommand $s" grep -q "^\.SS $s\$" "$MAN"
done
for v in CAVEMAN_HOME CAVEMAN_CCR_DB CAVEMAN_CCR_MAX_BYTES CAVEMAN_CCR_ZSTD_LEVEL CAVE_ENGINE_TOON CAVEMAN_REPORT CAVEMAN_MIN_SAVINGS XDG_CONFIG_HOME; do
  check "ENVIRONMENT lists $v" grep -q "^\.B $v\$" "$MAN"
done
# The page renders without roff warnings (a stray leading "." or "\" in a help text would).
if command -v groff >/dev/null; then
  warnings=$(groff -man -Tutf8 -ww -z "$MAN" 2>&1)
  check "groff renders it without warnings" test -z "$warnings"
  [[ -z $warnings ]] || echo "$warnings" | head -5
fi
exit $fail

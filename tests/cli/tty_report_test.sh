#!/usr/bin/env bash
# The report format follows the terminal: under script(1) stderr/stdout are a pty, so compress
# prints the pretty report and stats the table by default; --report json / CAVEMAN_REPORT=json /
# --format json bring the spec forms back. Skipped (77) without script(1) or a pty.
# Usage: tty_report_test.sh <caveman-engine binary>
set -u
CAVE=$(readlink -f "$1")
SRC=$(cd "$(dirname "$0")/../.." && pwd)
SEED=$SRC/fixtures/seed/pytest.log
command -v script >/dev/null || { echo "script(1) not installed; skipped"; exit 77; }
script -qec true /dev/null </dev/null >/dev/null 2>&1 || { echo "no pseudo-terminal available; skipped"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export CAVEMAN_HOME=$work/home
unset CAVEMAN_CCR_DB CAVEMAN_CCR_MAX_BYTES CAVEMAN_CCR_ZSTD_LEVEL CAVE_ENGINE_TOON CAVEMAN_REPORT

# Runs a shell snippet on a pseudo-terminal; prints what the terminal showed, without CRs.
on_tty() { script -qec "$1" /dev/null </dev/null | tr -d '\r'; }

fail=0
expect() {  # expect <description> <pattern> <output>
  if grep -qE -- "$2" <<<"$3"; then echo "ok   $1"; else echo "FAIL $1: no /$2/ in:"; echo "$3" | head -8; fail=1; fi
}
expect_not() {
  if grep -qE -- "$2" <<<"$3"; then echo "FAIL $1: /$2/ in:"; echo "$3" | head -8; fail=1; else echo "ok   $1"; fi
}

out=$(on_tty "'$CAVE' compress --type repetition < '$SEED' > /dev/null")
expect "pretty report by default on a terminal" '^caveman-engine compress: repetition, compressed with repetition' "$out"
expect "pretty report names the undo command" '^  undo +caveman-engine retrieve ccr_dfe6a45fb401d36689e7abe649b5617c$' "$out"
expect_not "no JSON line on a terminal" '^\{' "$out"

out=$(on_tty "'$CAVE' compress --type repetition --report json < '$SEED' > /dev/null")
expect "--report json beats the terminal" '^\{"content_type":"repetition",.*"recovery_handle":"ccr_dfe6a45fb401d36689e7abe649b5617c"' "$out"

out=$(on_tty "CAVEMAN_REPORT=json '$CAVE' compress --type repetition < '$SEED' > /dev/null")
expect "CAVEMAN_REPORT=json beats the terminal" '^\{"content_type":"repetition"' "$out"

# Not a terminal: stderr into a pipe inside the pty session keeps the §8.1 line.
out=$(on_tty "'$CAVE' compress --type repetition < '$SEED' 2>&1 >/dev/null | cat")
expect "JSON report when stderr is a pipe" '^\{"content_type":"repetition"' "$out"

out=$(on_tty "'$CAVE' stats")
expect "stats table by default on a terminal" '^repetition +1 +470 +120 +74\.5%$' "$out"
expect "stats table shows the store usage" '^store +[0-9.]+ (B|KiB) used of 512 MiB' "$out"

out=$(on_tty "'$CAVE' stats | cat")
expect "stats JSON when stdout is a pipe" '^  "basis": "inferred",$' "$out"
# The view on a terminal ends with the exact retrieve command (issue 14); not in a pipe.
out=$(on_tty "'$CAVE' compress --type repetition < '$SEED' 2>/dev/null")
expect "view on a terminal ends with the retrieve command" '^… caveman: original: caveman-engine retrieve ccr_dfe6a45fb401d36689e7abe649b5617c \(slices: --lines A:B, --grep RE -C N\) …$' "$out"
out=$(on_tty "'$CAVE' compress --type repetition < '$SEED' 2>/dev/null | cat")
expect_not "no retrieve line when stdout is a pipe" 'caveman: original: caveman-engine retrieve' "$out"
out=$(on_tty "'$CAVE' run --report json -- cat '$SEED' 2>/dev/null")
expect "run on a terminal ends with the retrieve command" '^… caveman: original: caveman-engine retrieve ccr_[0-9a-f]{32} \(slices' "$out"
out=$(on_tty "printf 'short\\n' | '$CAVE' compress 2>/dev/null")
expect_not "no retrieve line on a pass-through" 'caveman: original:' "$out"
exit $fail

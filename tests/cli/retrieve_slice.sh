#!/usr/bin/env bash
# Sliced retrieve (issue 14) against the standard tools on the stored original:
#   --lines A:B      = sed -n 'A,Bp'
#   --bytes A:B      = dd bs=1 skip=A count=B-A   (and tail -c +A+1 | head -c B-A)
#   --grep RE -C N   = LC_ALL=C grep -n -E -C N RE
#   --json-pointer P = jq -c getpath(P) (parsed values compared), and the output is a byte
#                      substring of the original
# on a generated CI log, the same log without its final LF, and a JSON dump; plus the
# error cases (exit 1, or 2 for a usage error; message, empty stdout) and query + slice.
set -euo pipefail
CAVE=$(readlink -f "$1")
SRC=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
export CAVEMAN_HOME=$work/home
RANDOM=14   # seeded: the same ranges every run

handle_of() {  # compress $1, print the handle (fails when nothing was stored)
  "$CAVE" compress --report json < "$1" > /dev/null 2> "$work/report"
  local h; h=$(sed -nE 's/.*"recovery_handle":"(ccr_[0-9a-f]{32})".*/\1/p' "$work/report")
  [[ -n $h ]] || { echo "no handle for $1: $(cat "$work/report")" >&2; exit 1; }
  echo "$h"
}

python3 "$SRC/scripts/gen_ci_log.py" 1 > "$work/ci.log"
head -c -1 "$work/ci.log" > "$work/ci_nolf.log"      # last line without LF
checks=0
for f in ci.log ci_nolf.log; do
  in=$work/$f
  h=$(handle_of "$in")
  lines=$(wc -l < "$in"); size=$(stat -c %s "$in")
  # lines: random ranges, open ends, single lines, past the end
  for i in $(seq 1 6); do
    a=$(( RANDOM % (lines + 3) + 1 )); b=$(( a + RANDOM % 400 ))
    for spec in "$a:$b" "$a:" ":$b" "$a"; do
      case $spec in
        *:) want=$(sed -n "$a,\$p" "$in" | sha256sum) ;;
        :*) want=$(sed -n "1,${b}p" "$in" | sha256sum) ;;
        *:*) want=$(sed -n "$a,${b}p" "$in" | sha256sum) ;;
        *) want=$(sed -n "${a}p" "$in" | sha256sum) ;;
      esac
      got=$("$CAVE" retrieve "$h" --lines "$spec" | sha256sum)
      [[ $got == "$want" ]] || { echo "$f --lines $spec differs from sed"; exit 1; }
      checks=$((checks + 1))
    done
  done
  # the last line and the whole file
  [[ $("$CAVE" retrieve "$h" --lines "$lines:" | sha256sum) == "$(sed -n "$lines,\$p" "$in" | sha256sum)" ]] || { echo "$f last line"; exit 1; }
  cmp -s <("$CAVE" retrieve "$h" --lines 1:) "$in" || { echo "$f --lines 1: is not the original"; exit 1; }
  # bytes
  for i in $(seq 1 6); do
    a=$(( (RANDOM * 32768 + RANDOM) % (size + 10) )); n=$(( RANDOM % 70000 )); b=$((a + n))
    cmp -s <("$CAVE" retrieve "$h" --bytes "$a:$b") <(dd if="$in" bs=1M iflag=skip_bytes,count_bytes skip="$a" count="$n" status=none) \
      || { echo "$f --bytes $a:$b differs from dd"; exit 1; }
    cmp -s <("$CAVE" retrieve "$h" --bytes "$a:") <(tail -c +$((a + 1)) "$in") || { echo "$f --bytes $a: differs from tail -c"; exit 1; }
    cmp -s <("$CAVE" retrieve "$h" --bytes ":$n") <(head -c "$n" "$in") || { echo "$f --bytes :$n differs from head -c"; exit 1; }
    checks=$((checks + 3))
  done
  # grep with context (group separators included)
  for re in 'ERROR|FAIL' 'upstream timeout after [0-9]+ms' '^Traceback' 'handler\.py", line 7[0-9]{2}' 'no such line xyz' '[[:digit:]]{4}/4000\)$'; do
    for c in 0 3; do
      want=$(LC_ALL=C grep -n -E -C "$c" -e "$re" "$in" | sha256sum || true)
      got=$("$CAVE" retrieve "$h" --grep "$re" -C "$c" | sha256sum)
      [[ $got == "$want" ]] || { echo "$f --grep '$re' -C $c differs from grep -n -E -C"; exit 1; }
      checks=$((checks + 1))
    done
  done
  want=$(LC_ALL=C grep -n -E -e 'WARN' "$in" | sha256sum)
  [[ $("$CAVE" retrieve "$h" --grep WARN | sha256sum) == "$want" ]] || { echo "$f --grep without -C"; exit 1; }
  # query + slice = the narrowed text, sliced
  "$CAVE" retrieve "$h" "billing timeout" > "$work/narrow"
  [[ -s $work/narrow ]] || { echo "$f: empty narrowed retrieve"; exit 1; }
  cmp -s <("$CAVE" retrieve "$h" "billing timeout" --lines 2:9) <(sed -n 2,9p "$work/narrow") || { echo "$f query + --lines"; exit 1; }
  cmp -s <("$CAVE" retrieve "$h" "billing timeout" --grep ERROR -C 1) <(LC_ALL=C grep -n -E -C 1 ERROR "$work/narrow" || true) || { echo "$f query + --grep"; exit 1; }
done

# JSON pointer on a generated dump and the seed orders.json
python3 "$SRC/scripts/gen_json_dump.py" 0.2 > "$work/dump.json"
for doc in "$work/dump.json" "$SRC/fixtures/seed/orders.json"; do
  h=$(handle_of "$doc")
  # every path up to depth 4, a seeded sample of 60
  jq -c 'paths | select(length <= 4)' "$doc" | awk -v s=14 'BEGIN{srand(s)} {if (rand() < 0.2 && n < 25) {print; n++}}' > "$work/paths"
  [[ $(wc -l < "$work/paths") -ge 10 ]] || { echo "too few paths in $doc"; exit 1; }
  while IFS= read -r path; do
    ptr=$(jq -rn --argjson p "$path" '$p | map(tostring | gsub("~"; "~0") | gsub("/"; "~1")) | "/" + join("/")')
    "$CAVE" retrieve "$h" --json-pointer "$ptr" > "$work/value"
    [[ $(jq -c . "$work/value") == "$(jq -c --argjson p "$path" 'getpath($p)' "$doc")" ]] || { echo "$doc $ptr: value differs from jq"; exit 1; }
    python3 -c 'import sys; d=open(sys.argv[1],"rb").read(); v=open(sys.argv[2],"rb").read(); sys.exit(0 if v and v in d else 1)' "$doc" "$work/value" \
      || { echo "$doc $ptr: not the original bytes"; exit 1; }
    checks=$((checks + 1))
  done < "$work/paths"
  [[ $("$CAVE" retrieve "$h" --json-pointer "" | jq -c .) == "$(jq -c . "$doc")" ]] || { echo "$doc: empty pointer"; exit 1; }
done

# errors: exit 1 (2 for bad arguments, issue 17), one line on stderr, nothing on stdout
h=$(handle_of "$work/ci.log")
want_rc=1
expect_error() {  # expected-message-substring args...
  local want=$1; shift
  set +e; "$CAVE" "$@" > "$work/out" 2> "$work/err"; local rc=$?; set -e
  [[ $rc == "$want_rc" && ! -s $work/out ]] || { echo "$*: rc $rc, stdout $(wc -c < "$work/out") bytes"; exit 1; }
  [[ $(wc -l < "$work/err") == 1 ]] && grep -q '^caveman-engine: ' "$work/err" || { echo "$*: stderr '$(cat "$work/err")'"; exit 1; }
  grep -qF -- "$want" "$work/err" || { echo "$*: stderr '$(cat "$work/err")' lacks '$want'"; exit 1; }
  checks=$((checks + 1))
}
want_rc=2  # usage errors
expect_error "line numbers start at 1" retrieve "$h" --lines 0:4
expect_error "ends before it starts" retrieve "$h" --lines 9:4
expect_error "expected A:B" retrieve "$h" --lines x
expect_error "expected A:B" retrieve "$h" --bytes 7
expect_error "use only one of" retrieve "$h" --lines 1:2 --bytes 0:3
expect_error "needs --grep" retrieve "$h" -C 2
want_rc=1
expect_error "unsupported pattern" retrieve "$h" --grep '(unclosed'
expect_error "not a JSON document" retrieve "$h" --json-pointer /a
expect_error "recovery handle not found" retrieve ccr_00000000000000000000000000000000 --lines 1:2
hj=$(handle_of "$SRC/fixtures/seed/orders.json")
expect_error "no value at JSON pointer /nope" retrieve "$hj" --json-pointer /nope
expect_error "invalid JSON pointer" retrieve "$hj" --json-pointer nope
expect_error "cannot be combined with a query" retrieve "$hj" orders --json-pointer /orders
echo "ok: $checks slice checks"

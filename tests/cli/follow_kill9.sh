#!/usr/bin/env bash
# Randomized kill -9 of `compress --follow` (issue 13). Each trial generates a log from its
# seed (routine INFO lines with varying ids, runs of identical WARN lines, some ERROR lines),
# feeds it through a pipe at a paced rate (small bursts, a flush, a sleep of a few ms; lines
# may be split across bursts) with the view going to a file, and SIGKILLs caveman-engine at a
# random point: after a random delay (often before any marker) or once the view holds a random
# number of markers plus a random delay. Then, with a fresh store per trial:
#   (a) retrieve --partials lists at most one partial record, and no complete record exists
#       unless the run finished on its own (then it round trips and no partial is left);
#   (b) the partial record's bytes (retrieve part_<id>) are a prefix of the input;
#   (c) every marker already written is covered: walking the view (a verbatim line accounts
#       for 1 input line, `… N lines elided (caveman)…` and `… caveman: N identical lines
#       elided …` for N, the contract note for 0), the input lines accounted for up to and
#       including the last marker are ≤ the complete lines of the partial record (a marker
#       without a partial record fails); verbatim lines equal the input line they account for,
#       and the lines of an identical-run marker equal the kept line before it;
#   (d) gc removes the partial record of the dead writer (--partials is then empty, gc counts
#       orphan_chunks > 0 when the record held bytes).
# One more trial runs to completion: exit 0, the record round trips (retrieve <handle> | cmp),
# the view accounts for every input line, and no partial record is left.
# No timing thresholds (shared machines): only hang guards. Seeds: FOLLOW_KILL9_SEEDS="1 2 3".
# Usage: follow_kill9.sh <caveman-engine binary>
set -u
CAVE=$(readlink -f "$1")
work=$(mktemp -d)
unset CAVEMAN_CCR_DB CAVEMAN_CCR_MAX_BYTES CAVEMAN_CCR_ZSTD_LEVEL CAVE_ENGINE_TOON CAVEMAN_REPORT
cpid= fpid= gpid=
cleanup() {
  [[ -n $cpid ]] && kill -KILL "$cpid" 2>/dev/null
  [[ -n $gpid ]] && kill -KILL "$gpid" 2>/dev/null
  [[ -n $fpid ]] && kill -KILL "$fpid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
fail=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fail=1; }

# gen.py SEED LINES > log: deterministic per seed.
cat >"$work/gen.py" <<'EOF'
import random, sys
seed, total = int(sys.argv[1]), int(sys.argv[2])
r = random.Random(seed)
out = sys.stdout
n = 0
svcs = ["orders", "ledger", "billing", "auth", "search"]
while n < total:
    x = r.random()
    ts = "2026-12-03T10:%02d:%02d.%03dZ" % (n // 60000 % 60, n // 1000 % 60, n % 1000)
    if x < 0.72:
        out.write("%s INFO  [%s] request id=%d user=%d served in %d ms\n"
                  % (ts, r.choice(svcs), n, r.randint(1, 99999), r.randint(1, 900)))
        n += 1
    elif x < 0.97:
        k = r.randint(2, 40)
        line = "%s WARN  [pool] connection re-established after timeout (%s)\n" % (
            "2026-12-03T10:00:00.000Z", r.choice(svcs))
        out.write(line * k)
        n += k
    else:
        out.write("%s ERROR [%s] request id=%d failed: upstream timeout after %d ms\n"
                  % (ts, r.choice(svcs), n, r.randint(1000, 9000)))
        n += 1
EOF
# feed.py SEED FILE: writes FILE to stdout in paced bursts (the first ~150 lines slowly, so
# that early kills land before detection), then exits; a closed pipe ends it quietly.
cat >"$work/feed.py" <<'EOF'
import os, random, sys, time
r = random.Random(int(sys.argv[1]) * 7919)
data = open(sys.argv[2], "rb").read()
fd = sys.stdout.fileno()
pos, lines = 0, 0
try:
    while pos < len(data):
        slow = lines < 150
        k = 1 if slow else r.randint(1, 120)
        end = pos
        for _ in range(k):
            nl = data.find(b"\n", end)
            end = len(data) if nl < 0 else nl + 1
        if not slow and r.random() < 0.2:  # end the burst inside a line
            nl = data.find(b"\n", end)
            if nl > end + 1:
                end = r.randint(end + 1, nl)
        chunk = data[pos:end]
        while chunk:
            w = os.write(fd, chunk)
            chunk = chunk[w:]
        lines += data.count(b"\n", pos, end)
        pos = end
        time.sleep(0.004 if slow else r.uniform(0.001, 0.006))
except BrokenPipeError:
    pass
EOF
# account.py INPUT VIEW: walks the view; prints "markers accounted_to_last_marker
# total_accounted errors", errors = verbatim lines that differ from their input line.
cat >"$work/account.py" <<'EOF'
import re, sys
inp = open(sys.argv[1], "rb").read().split(b"\n")
view = open(sys.argv[2], "rb").read()
lines = view.split(b"\n")
lines.pop()  # after the last LF: empty, or an unterminated (partly written) last line
elided = re.compile(rb"^\xe2\x80\xa6 ([0-9]+) lines elided \(caveman\)")
ident = re.compile(rb"^\xe2\x80\xa6 caveman: ([0-9]+) identical lines elided \xe2\x80\xa6$")
note = b"\xe2\x80\xa6 caveman: elided "
pos = markers = to_last = errors = 0
last_kept = None
for l in lines:
    m = elided.match(l) or ident.match(l)
    if m:
        n = int(m.group(1))
        if m.re is ident:
            if any(inp[i] != last_kept for i in range(pos, min(pos + n, len(inp)))):
                errors += 1
                print("identical-run marker at input line %d covers other lines" % (pos + 1), file=sys.stderr)
        pos += n
        markers += 1
        to_last = pos
    elif l.startswith(note):
        pass
    else:
        if pos >= len(inp) or inp[pos] != l:
            errors += 1
            if errors <= 3:
                print("view line %r is not input line %d" % (l[:80], pos + 1), file=sys.stderr)
        last_kept = l
        pos += 1
print(markers, to_last, pos, errors)
EOF
# plan SEED: "mode markers delay" for a trial: seeds 1, 5, 9, ... are "early" (a random delay
# only, mostly before any marker), the others wait for a random number of markers first.
plan() {
  python3 -c "
import random; r = random.Random($1 * 104729)
if $1 % 4 == 1: print('early', 0, '%.3f' % r.uniform(0.05, 2.5))
else: print('markers', r.choice([1, 2, 5, 20, 100, 300]), '%.3f' % r.uniform(0, 0.25))"
}
partials() { "$CAVE" retrieve --partials; }
records() { "$CAVE" stats | tr -d ' \n' | sed -nE 's/.*"totals":\{"count":([0-9]+),.*/\1/p'; }
nmarkers() { grep -c -E '^… ([0-9]+ lines elided \(caveman\)|caveman: [0-9]+ identical lines elided)' "$1"; }

# Starts caveman-engine compress --follow reading the feeder through a FIFO; sets cpid, fpid
# and gpid (hang guard: SIGKILL after 60 s).
start_trial() {  # seed input dir
  rm -f "$3/fifo"
  mkfifo "$3/fifo"
  (exec "$CAVE" compress --follow <"$3/fifo" >"$3/view" 2>"$3/report") &
  cpid=$!
  timeout 60 python3 "$work/feed.py" "$1" "$2" >"$3/fifo" &
  fpid=$!
  (for ((g = 0; g < 600; g++)); do kill -0 "$cpid" 2>/dev/null || exit 0; sleep 0.1; done
   kill -KILL "$cpid" 2>/dev/null) &
  gpid=$!
}
stop_guard() { wait "$gpid" 2>/dev/null; gpid=; }

trial() {  # seed
  local seed=$1 t=$work/t$1
  mkdir -p "$t"
  export CAVEMAN_HOME=$t/home
  python3 "$work/gen.py" "$seed" 40000 >"$t/in"
  read -r mode want delay < <(plan "$seed")
  start_trial "$seed" "$t/in" "$t"
  if [[ $mode == markers ]]; then
    for ((i = 0; i < 1200; i++)); do  # hang guard: 60 s
      (($(nmarkers "$t/view") >= want)) && break
      kill -0 "$cpid" 2>/dev/null || break
      sleep 0.05
    done
  fi
  sleep "$delay"
  local finished=0 st
  kill -KILL "$cpid" 2>/dev/null
  wait "$cpid" 2>/dev/null
  st=$?
  cpid=
  kill -KILL "$fpid" 2>/dev/null
  wait "$fpid" 2>/dev/null
  fpid=
  stop_guard
  [[ $st != 137 ]] && finished=1
  local list n_part n_rec
  list=$(partials) || { bad "seed $seed: retrieve --partials failed"; return; }
  n_part=$(grep -c . <<<"$list")
  n_rec=$(records)
  read -r markers to_last total errors < <(python3 "$work/account.py" "$t/in" "$t/view" 2>"$t/acct_err")
  local desc="seed $seed ($mode $want +${delay}s): view $(wc -l <"$t/view") lines, $markers markers"
  ((errors == 0)) && ok "$desc: verbatim lines match the input" || bad "$desc: $(head -3 "$t/acct_err")"
  if ((finished)); then
    # The feed ended before the kill: a normal end of input.
    [[ $st == 0 ]] && ok "$desc: finished on its own" || bad "$desc: exit $st: $(head -c 300 "$t/report")"
    local h
    h=$(sed -nE 's/.*"recovery_handle":"(ccr_[0-9a-f]{32})".*/\1/p' "$t/report")
    [[ -n $h ]] && "$CAVE" retrieve "$h" | cmp -s - "$t/in" && ok "$desc: the record round trips" ||
      bad "$desc: no round trip (handle '$h')"
    ((n_part == 0)) && ok "$desc: no partial record left" || bad "$desc: partials after a finished run: $list"
    return
  fi
  ((n_part <= 1)) && ok "$desc: $n_part partial record(s)" || bad "$desc: $n_part partial records: $list"
  [[ $n_rec == 0 ]] && ok "$desc: no complete record" || bad "$desc: $n_rec complete records after a kill"
  local have=0 plines=0 pbytes=0
  if ((n_part == 1)); then
    local id
    id=$(sed -nE 's/^\{"id":"(part_[0-9a-f]{32})".*/\1/p' <<<"$list")
    if "$CAVE" retrieve "$id" >"$t/partial"; then
      have=1
      pbytes=$(wc -c <"$t/partial")
      plines=$(tr -dc '\n' <"$t/partial" | wc -c)
      head -c "$pbytes" "$t/in" | cmp -s - "$t/partial" && ok "$desc: partial ($pbytes bytes) is a prefix of the input" ||
        bad "$desc: partial record ($pbytes bytes) is not a prefix of the input"
      grep -q "\"original_bytes\":$pbytes," <<<"$list" || bad "$desc: original_bytes != $pbytes in: $list"
    else
      bad "$desc: retrieve $id failed"
    fi
  fi
  ((markers > 0)) && killed_after_markers=$((killed_after_markers + 1))
  if ((markers > 0)); then
    ((have)) && ((to_last <= plines)) &&
      ok "$desc: the last marker accounts for input line $to_last, the partial holds $plines lines" ||
      bad "$desc: markers account for $to_last input lines, the partial record holds $plines (present: $have)"
  fi
  local gc
  gc=$("$CAVE" gc) || bad "$desc: gc failed"
  orphans=$(sed -nE 's/.*"orphan_chunks":([0-9]+).*/\1/p' <<<"$gc")
  [[ -z $(partials) ]] && ok "$desc: gc removed the partial record" || bad "$desc: partials after gc: $(partials)"
  if ((pbytes > 0)); then
    ((orphans > 0)) && ok "$desc: gc freed $orphans orphan chunk(s)" || bad "$desc: gc: $gc"
  fi
}

seeds=${FOLLOW_KILL9_SEEDS:-"1 2 3 4 5 6 7 8"}
killed_after_markers=0
for s in $seeds; do trial "$s"; done
# A markers-mode trial waits for markers before its kill, so they are there unless the run
# ended first: without any, the coverage check above never ran.
grep -q markers <<<"$(for s in $seeds; do plan "$s"; done)" && ((killed_after_markers == 0)) &&
  bad "no trial was killed after a marker was written"
echo "$killed_after_markers trial(s) killed after markers were written"

# A run that completes: paced feed to the end, then exit 0, the record round trips, the view
# accounts for every input line, no partial record.
t=$work/complete
mkdir -p "$t"
export CAVEMAN_HOME=$t/home
python3 "$work/gen.py" 99 6000 >"$t/in"
start_trial 99 "$t/in" "$t"
wait "$cpid" 2>/dev/null
st=$?
cpid=
wait "$fpid" 2>/dev/null
fpid=
stop_guard
[[ $st == 0 ]] && ok "complete run: exit 0" || bad "complete run: exit $st: $(head -c 300 "$t/report")"
h=$(sed -nE 's/.*"recovery_handle":"(ccr_[0-9a-f]{32})".*/\1/p' "$t/report")
[[ -n $h ]] && "$CAVE" retrieve "$h" | cmp -s - "$t/in" && ok "complete run: $h round trips" ||
  bad "complete run: no round trip (handle '$h', report $(head -c 300 "$t/report"))"
[[ -z $(partials) ]] && ok "complete run: no partial record" || bad "complete run: partials: $(partials)"
read -r markers to_last total errors < <(python3 "$work/account.py" "$t/in" "$t/view" 2>"$t/acct_err")
inlines=$(wc -l <"$t/in")
((markers > 0 && total == inlines && errors == 0)) &&
  ok "complete run: $markers markers, the view accounts for all $inlines input lines" ||
  bad "complete run: $markers markers, view accounts for $total of $inlines lines, $errors mismatches $(head -3 "$t/acct_err")"
exit $fail

#!/usr/bin/env bash
# `caveman-engine run` and signals, with real processes: SIGINT sent to caveman-engine reaches
# a command that traps it (exit status 7, its "got INT" in the output); SIGTERM kills a command
# that does not trap it (exit 143); a Ctrl-C typed at a terminal reaches the command once, not
# a second time through caveman-engine (that part is skipped where no pty can be opened).
#
# The command says it is ready by creating a file once its traps are set; the only time bound
# is a 20 s hang guard (never a threshold a slow machine could cross).
# Usage: run_signals.sh <caveman-engine binary>
set -u
CAVE=$(readlink -f "$1")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export CAVEMAN_HOME=$work/home
unset CAVEMAN_CCR_DB CAVEMAN_CCR_MAX_BYTES CAVEMAN_CCR_ZSTD_LEVEL CAVE_ENGINE_TOON CAVEMAN_REPORT
# Job control: background jobs get their own process group and SIGINT at its default, as
# from an interactive shell (a non-interactive shell starts them with SIGINT ignored, and
# an ignored signal stays ignored for caveman-engine and its command).
set -m

fail=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fail=1; }

# wait_for <file>: until it exists, at most 20 s.
wait_for() {
  local i
  for ((i = 0; i < 200; i++)); do
    [[ -e $1 ]] && return 0
    sleep 0.1
  done
  return 1
}

# finish <pid>: waits for the job, at most 20 s (then kills it); sets rc to its exit status
# (or "hang"). Not in a $(...) subshell: only this shell can wait for its jobs.
finish() {
  local i
  for ((i = 0; i < 200; i++)); do
    kill -0 "$1" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$1" 2>/dev/null; then
    kill -KILL -- "-$1" 2>/dev/null
    wait "$1" 2>/dev/null
    rc=hang
    return
  fi
  wait "$1"
  rc=$?
}

# 1. SIGINT to caveman-engine → the command's INT trap → its exit status.
"$CAVE" run --type log -- sh -c 'trap "echo got INT; exit 7" INT; : > "$0"; echo ready; while :; do sleep 0.1; done' \
  "$work/ready1" >"$work/out1" 2>"$work/err1" &
pid=$!
if wait_for "$work/ready1"; then
  kill -INT "$pid"
  finish "$pid"
  [[ $rc == 7 ]] && ok "SIGINT forwarded: exit 7" || bad "SIGINT forwarded: exit $rc, want 7 (stderr: $(head -c 300 "$work/err1"))"
  grep -qx "got INT" "$work/out1" && ok "the trap's output is on stdout" || bad "no 'got INT' in: $(head -c 300 "$work/out1")"
  grep -qx "ready" "$work/out1" && ok "output before the signal is kept" || bad "no 'ready' in: $(head -c 300 "$work/out1")"
else
  bad "command never became ready"
  kill -KILL -- "-$pid" 2>/dev/null
fi

# 2. SIGTERM to caveman-engine → a command without a trap dies of it → 128 + 15.
"$CAVE" run --type log -- sh -c ': > "$0"; echo ready; while :; do sleep 0.1; done' \
  "$work/ready2" >"$work/out2" 2>"$work/err2" &
pid=$!
if wait_for "$work/ready2"; then
  kill -TERM "$pid"
  finish "$pid"
  [[ $rc == 143 ]] && ok "SIGTERM forwarded: exit 143" || bad "SIGTERM forwarded: exit $rc, want 143 (stderr: $(head -c 300 "$work/err2"))"
  grep -q '^{"content_type":' "$work/err2" && ok "report written after the command was killed" ||
    bad "no report on stderr: $(head -c 300 "$work/err2")"
else
  bad "command never became ready"
  kill -KILL -- "-$pid" 2>/dev/null
fi

# 3. Ctrl-C at a terminal: the terminal signals the whole foreground process group, the
# command included, so caveman-engine must not forward its copy. Two copies sent close
# together would merge into one pending signal, so caveman-engine is stopped (SIGSTOP) while
# ^C is typed: its SIGINT stays pending until the command has handled its own; after SIGCONT a
# forwarded copy would be a second INT for the command. Then a SIGTERM sent to caveman-engine
# (forwarded) makes the command print its INT count; standard signals are delivered lowest
# number first, so a forwarded SIGINT would be counted before that. The terminal echoes ^C.
if command -v script >/dev/null && [[ -x /bin/bash ]] && script -qec true /dev/null </dev/null >/dev/null 2>&1; then
  mkfifo "$work/keys"
  cat >"$work/cmd.sh" <<EOF
cd '$work' || exit 1
n=0
trap 'n=\$((n+1)); : > got_int' INT
trap 'echo "ints=\$n"; exit 0' TERM
echo \$PPID > cave.pid
: > ready3
while :; do sleep 0.1; done
EOF
  # caveman-engine runs under a bash that is not its exec: script(1) stops itself when its own
  # child stops, and bash without job control does not even see a stopped child.
  SHELL=/bin/bash script -qec "'$CAVE' run --type log -- sh '$work/cmd.sh'; echo \"rc=\$?\"" /dev/null \
    <"$work/keys" >"$work/out3" 2>&1 &
  spid=$!
  exec 3>"$work/keys"
  if wait_for "$work/ready3"; then
    cave_pid=$(cat "$work/cave.pid")
    kill -STOP "$cave_pid"
    printf '\003' >&3
    if wait_for "$work/got_int"; then
      kill -CONT "$cave_pid"
      kill -TERM "$cave_pid"
      finish "$spid"
      tr -d '\r' <"$work/out3" | grep -qx "rc=0" && ok "Ctrl-C: command exited normally" ||
        bad "Ctrl-C: want rc=0 in: $(tr -d '\r' <"$work/out3" | head -c 300)"
      tr -d '\r' <"$work/out3" | grep -q "ints=1$" && ok "Ctrl-C reached the command once" ||
        bad "Ctrl-C: want ints=1 in: $(tr -d '\r' <"$work/out3" | head -c 300)"
    else
      bad "Ctrl-C did not reach the command"
      kill -CONT "$cave_pid"
      kill -KILL -- "-$spid" 2>/dev/null
    fi
  else
    bad "command on the terminal never became ready: $(head -c 300 "$work/out3")"
    kill -KILL -- "-$spid" 2>/dev/null
  fi
  exec 3>&-
else
  echo "skip Ctrl-C part: no script(1) or no pseudo-terminal"
fi
exit $fail

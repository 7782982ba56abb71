#!/usr/bin/env bash
# Peak RSS of `caveman-engine mcp` for one large caveman_compress call (a 14,372,941-byte log,
# under the 16 MiB message limit) followed by one 64 MiB message (refused without being held).
# Prints the responses' first bytes and the server's VmHWM. Not a ctest case (no thresholds).
#   tests/mcp/memory_probe.sh CAVEMAN_ENGINE
set -euo pipefail
CAVE=$(readlink -f "$1")
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
python3 - > "$work/in.jsonl" 2> "$work/size" <<'PY'
import json, sys
log = "".join(f"2026-01-01T00:00:{i % 60:02d}Z INFO worker {i % 7} processed batch {i % 13}\n" if i % 997
              else f"2026-01-01T00:00:00Z ERROR job {i} failed: disk full\n" for i in range(270000))
print(len(log), file=sys.stderr)
print(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "caveman_compress", "arguments": {"text": log}}}))
print(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "caveman_compress", "arguments": {"text": "x" * (64 << 20)}}}))
PY
CAVEMAN_HOME=$work/home "$CAVE" mcp < "$work/in.jsonl" > "$work/out" &
pid=$!; hwm=0
while kill -0 "$pid" 2>/dev/null; do
  v=$(awk '/VmHWM/{print $2}' "/proc/$pid/status" 2>/dev/null || true)
  [[ -n $v && $v -gt $hwm ]] && hwm=$v
  sleep 0.02
done
wait "$pid"
cut -c1-100 "$work/out"
echo "log text $(cat "$work/size") bytes; input $(stat -c %s "$work/in.jsonl") bytes; VmHWM ${hwm} kB"

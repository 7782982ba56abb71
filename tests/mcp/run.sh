#!/usr/bin/env bash
# ctest cli.mcp_sdk_client: installs the pinned MCP TypeScript SDK (npm ci from
# tests/mcp/package-lock.json into BUILD_DIR/mcp-client; again only when the lock file
# changes) and runs client_test.mjs against CAVEMAN_ENGINE. No network or no npm is a failure,
# not a skip: CI has the registry (scripts/setup installs nodejs and npm).
#   tests/mcp/run.sh CAVEMAN_ENGINE BUILD_DIR
set -euo pipefail
CAVE=$(readlink -f "$1")
BUILD=$(readlink -f "$2")
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
command -v node >/dev/null || { echo "FAIL: node not found (scripts/setup installs nodejs)"; exit 1; }
command -v npm >/dev/null || { echo "FAIL: npm not found (scripts/setup installs npm)"; exit 1; }
client=$BUILD/mcp-client
mkdir -p "$client"
cp "$HERE/package.json" "$HERE/package-lock.json" "$HERE/client_test.mjs" "$client/"
stamp=$(sha256sum "$HERE/package-lock.json" | cut -d' ' -f1)
if [[ ! -f $client/node_modules/.caveman-stamp || $(cat "$client/node_modules/.caveman-stamp") != "$stamp" ]]; then
  (cd "$client" && npm ci --no-audit --no-fund --loglevel=error) || { echo "FAIL: npm ci (is the npm registry reachable?)"; exit 1; }
  echo "$stamp" > "$client/node_modules/.caveman-stamp"
fi
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
python3 "$SRC/scripts/gen_ci_log.py" 2 > "$work/ci.log"
LC_ALL=C grep -n -E -C 2 'ERROR|FAIL' "$work/ci.log" > "$work/grep_c2"
cd "$client" && node client_test.mjs "$CAVE" "$work/home" "$work/ci.log" "$work/grep_c2" "$SRC/examples/agents/.mcp.json"

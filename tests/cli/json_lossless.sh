#!/usr/bin/env bash
# Issue 16, JSON lossless first: every fixture of fixtures/json-lossless/ (real tool output that
# no lossy rule shrinks) is emitted as minified JSON or TOON with lossless_to_model true, fewer
# tokens than the input, decoding to the same JSON value (python3's json, so a different parser
# from the engine's), and the handle gives back the original byte for byte.
set -euo pipefail
BIN=$1
cd "$(dirname "$0")/../.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export CAVEMAN_HOME=$work/home
fail=0
n=0
for f in fixtures/json-lossless/*.json; do
  n=$((n + 1))
  "$BIN" compress <"$f" >"$work/view" 2>"$work/report"
  read -r method lossless before after handle < <(python3 -c '
import json,sys; r=json.load(open(sys.argv[1]))
print(r.get("method","-"), r.get("lossless_to_model","-"), r["tokens_before"], r["tokens_after"], r.get("recovery_handle","-"))' "$work/report")
  case $method in
    minify) cp "$work/view" "$work/decoded" ;;
    toon) "$BIN" toon decode <"$work/view" >"$work/decoded" ;;
    *) echo "FAIL $f: method $method (want minify or toon)"; fail=1; continue ;;
  esac
  if [[ $lossless != True ]]; then echo "FAIL $f: lossless_to_model $lossless"; fail=1; fi
  if ((after >= before)); then echo "FAIL $f: $after tokens after, $before before"; fail=1; fi
  if ! python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1])) != json.load(open(sys.argv[2])))' \
      "$f" "$work/decoded"; then
    echo "FAIL $f: the $method view is not the same JSON value"; fail=1
  fi
  "$BIN" retrieve "$handle" >"$work/orig" 2>/dev/null
  if ! cmp -s "$f" "$work/orig"; then echo "FAIL $f: retrieve differs from the original"; fail=1; fi
  echo "ok $f: $method $before -> $after tokens"
done
if ((n < 5)); then echo "FAIL: expected at least 5 fixtures, found $n"; fail=1; fi
exit $fail

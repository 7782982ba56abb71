#!/usr/bin/env bash
# Sources cli/completion/caveman-engine.bash and checks COMPREPLY for typed command lines.
# Usage: completion_test.sh [completion file]
set -u
SRC=$(cd "$(dirname "$0")/../.." && pwd)
FILE=${1:-$SRC/cli/completion/caveman-engine.bash}
# shellcheck source=/dev/null
source "$FILE" || { echo "FAIL: cannot source $FILE"; exit 1; }
complete -p caveman-engine >/dev/null || { echo "FAIL: no completion registered"; exit 1; }

fail=0
# expect "<words, the last one being completed>" "<expected COMPREPLY, space-separated, sorted>"
expect() {
  local line=$1 want=$2
  read -ra COMP_WORDS <<<"$line"
  # A trailing blank means a new, empty word is being completed.
  [[ $line == *" " ]] && COMP_WORDS+=("")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  COMPREPLY=()
  _caveman_engine
  local got
  got=$(printf '%s\n' "${COMPREPLY[@]}" | sort | paste -sd' ')
  if [[ $got == "$want" ]]; then
    echo "ok   '$line' -> $got"
  else
    echo "FAIL '$line': got '$got', want '$want'"
    fail=1
  fi
}

expect "caveman-engine co" "compress"
expect "caveman-engine re" "registry retrieve"
expect "caveman-engine compress --type j" "json"
expect "caveman-engine compress --type te" "terminal test-report text"
expect "caveman-engine compress --type = j" "json"
expect "caveman-engine compress --r" "--report"
expect "caveman-engine compress --f" "--follow"
expect "caveman-engine ru" "run"
expect "caveman-engine run --" "-- --help --min-savings --query --quiet --report --type"
expect "caveman-engine run --type l" "log"
expect "caveman-engine run --report " "json pretty"
expect "caveman-engine run -- ulimi" "ulimit"
expect "caveman-engine run --type log -- make --dry-ru" ""
expect "caveman-engine retrieve --p" "--partials"
expect "caveman-engine retrieve ccr_x --ma" "--map --marker"
expect "caveman-engine retrieve --partials --format " "json table"
expect "caveman-engine compress --report " "json pretty"
expect "caveman-engine compress --query " ""
expect "caveman-engine toon " "--help decode encode"
expect "caveman-engine toon e" "encode"
expect "caveman-engine gc --" "--dry-run --help --older-than"
expect "caveman-engine gc --older-than " "12h 1d 1h 30d 7d"
expect "caveman-engine stats --format " "json table"
expect "caveman-engine version --" "--help --json"
expect "caveman-engine help g" "gain gc"
expect "caveman-engine compress --o" "--output"
expect "caveman-engine compress --q" "--query --quiet"
expect "caveman-engine gain --by " "command day type"
expect "caveman-engine gain --" "--by --format --help --since"
expect "caveman-engine retrieve " ""
expect "caveman-engine retrieve ccr_x --" "--bytes --context --format --grep --help --json-pointer --lines --map --marker --partials"
expect "caveman-engine retrieve ccr_x --lines " ""
expect "caveman-engine m" "mcp"
expect "caveman-engine mcp --" "--help"
expect "caveman-engine --v" "--version"

# That the --type words are exactly the registry's types is checked by report_format_test
# (CompletionTest.TypeListMatchesTheRegistry), against Registry::content_types().
exit $fail

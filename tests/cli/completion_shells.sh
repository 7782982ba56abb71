#!/usr/bin/env bash
# The bash, zsh and fish completions (cli/completion/) offer what `--help` documents: the
# subcommands of `caveman-engine --help`, the long flags of every `caveman-engine SUB --help`,
# and the content types `--type` accepts (the list the CLI prints for an unknown type). zsh
# and fish are the real shells (zsh through a pseudo-terminal, fish with `complete -C`).
# Exit 77 (skipped) when zsh or fish is not installed.
# Usage: completion_shells.sh <caveman-engine binary>
set -u
CAVE=$(readlink -f "$1")
SRC=$(cd "$(dirname "$0")/../.." && pwd)
COMP=$SRC/cli/completion
command -v zsh >/dev/null && command -v fish >/dev/null || { echo "zsh or fish not installed: skipped"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin" "$work/zsh"
ln -s "$CAVE" "$work/bin/caveman-engine"
cp "$COMP/_caveman-engine" "$work/zsh/"
export PATH=$work/bin:$PATH HOME=$work XDG_CONFIG_HOME=$work/config

sorted() { tr -d '\r' | sed 's/[[:space:]]*$//' | grep -v '^$' | sort -u | paste -sd' '; }

# What each shell offers for a command line (words joined by spaces, last one being completed).
offer_bash() {
  (
    # shellcheck source=/dev/null
    source "$COMP/caveman-engine.bash"
    read -ra COMP_WORDS <<<"$1"
    [[ $1 == *" " ]] && COMP_WORDS+=("")
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    COMPREPLY=()
    _caveman_engine
    printf '%s\n' "${COMPREPLY[@]}"
  )
}
offer_zsh() { timeout 30 zsh "$SRC/tests/cli/zsh_complete.zsh" "$work/zsh" "$1"; }
offer_fish() { fish --no-config -c "source '$COMP/caveman-engine.fish'; complete -C '$1'" | cut -f1; }

# What --help documents.
subcommands=$("$CAVE" --help | sed -n '/^Subcommands:/,/^$/p' | awk 'NF && !/:$/ {print $1}' | sorted)
subcommands_and_help=$( (echo "$subcommands" | tr ' ' '\n'; echo help) | sorted)
flags_of() { "$CAVE" "$1" --help | sed -n '/^Options:/,/^$/p' | grep -oE '^  (-[A-Za-z], )?--[a-z-]+' | grep -oE -- '--[a-z-]+' | sorted; }
types=$("$CAVE" compress --type '?' </dev/null 2>&1 | sed -n 's/.*(valid: \(.*\))$/\1/p' | tr -d ',' | tr ' ' '\n' | sorted)
[[ -n $subcommands && -n $types ]] || { echo "FAIL: could not read --help or the type list"; exit 1; }

fail=0
check() {  # shell, what, line, want
  local got
  got=$("offer_$1" "$3" | tr -d '\r' | grep -vx -- '--' | { if [[ -n ${WORDS_ONLY:-} ]]; then grep -v '^-'; else cat; fi; } | sorted)
  if [[ $got == "$4" ]]; then
    echo "ok   $1: $2"
  else
    echo "FAIL $1: $2 ('$3')"
    echo "     want: $4"
    echo "     got:  $got"
    fail=1
  fi
}
for shell in bash zsh fish; do
  # (bash also offers --help and --version here; the options are checked below.)
  WORDS_ONLY=1 check "$shell" "subcommands" "caveman-engine " "$subcommands_and_help"
  for sub in $subcommands; do
    check "$shell" "$sub flags" "caveman-engine $sub --" "$(flags_of "$sub")"
  done
  check "$shell" "compress --type values" "caveman-engine compress --type " "$types"
  check "$shell" "run --type values" "caveman-engine run --type " "$types"
done
# Top-level options, in the shells that offer them for "-".
for shell in bash zsh fish; do
  check "$shell" "top-level options" "caveman-engine -" "$(printf '%s\n' -V -h --help --version | sorted)"
done
exit $fail

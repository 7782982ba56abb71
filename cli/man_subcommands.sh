#!/usr/bin/env bash
# Writes a help2man include file with a COMMANDS section: the --help text of every
# subcommand, so the man page documents each one without a second copy of the texts.
# The subcommand names come from the "Subcommands:" list of the top-level --help.
# Usage: man_subcommands.sh <caveman-engine binary> <output.h2m>
set -euo pipefail
bin=$1
out=$2
subs=$("$bin" --help | sed -n '/^Subcommands:/,/^$/s/^  \([a-z]\+\) .*/\1/p')
[[ -n $subs ]] || { echo "man_subcommands.sh: no subcommands found in the usage" >&2; exit 1; }
{
  echo "[COMMANDS]"
  for s in $subs; do
    echo ".SS $s"
    echo ".nf"
    # roff: backslashes escaped, a leading . or ' must not start a request.
    "$bin" "$s" --help | sed -e 's/\\/\\e/g' -e "s/^\([.']\)/\\\\\&\1/" -e 's/-/\\-/g'
    echo ".fi"
  done
} >"$out.tmp"
mv "$out.tmp" "$out"

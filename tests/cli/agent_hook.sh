#!/usr/bin/env bash
# examples/agents/cave.sh: `cave CMD` runs CMD through `caveman-engine run` (view on stdout,
# JSON report on stderr, CMD's exit status), the handle in the report retrieves CMD's exact
# output, and `cave_hook_on` aliases the listed commands to cave.
set -euo pipefail
CAVE=$(readlink -f "$1")
SRC=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
export CAVEMAN_HOME=$work/home
mkdir "$work/bin"; ln -s "$CAVE" "$work/bin/caveman-engine"; export PATH=$work/bin:$PATH
python3 "$SRC/scripts/gen_ci_log.py" 1 > "$work/ci.log"
# shellcheck source=/dev/null
source "$SRC/examples/agents/cave.sh"
set +e; cave sh -c "cat '$work/ci.log'; exit 3" > "$work/view" 2> "$work/report"; rc=$?; set -e
[[ $rc == 3 ]] || { echo "exit status $rc, want the command's 3"; exit 1; }
h=$(sed -nE 's/.*"recovery_handle":"(ccr_[0-9a-f]{32})".*/\1/p' "$work/report")
[[ -n $h ]] || { echo "no handle in the report: $(cat "$work/report")"; exit 1; }
(( $(stat -c %s "$work/view") < $(stat -c %s "$work/ci.log") / 4 )) || { echo "view not compressed"; exit 1; }
caveman-engine retrieve "$h" | cmp -s - "$work/ci.log" || { echo "retrieve $h is not the command's output"; exit 1; }
# the alias hook (aliases need expand_aliases outside an interactive shell)
CAVE_COMMANDS="cat" bash -c "shopt -s expand_aliases; source '$SRC/examples/agents/cave.sh'; cave_hook_on
cat '$work/ci.log'" > "$work/view2" 2> "$work/report2"
grep -q '"recovery_handle":"'"$h"'"' "$work/report2" || { echo "aliased cat did not go through cave: $(head -c 300 "$work/report2")"; exit 1; }
cmp -s "$work/view" "$work/view2" || { echo "aliased view differs"; exit 1; }
echo "ok: cave and cave_hook_on (handle $h)"

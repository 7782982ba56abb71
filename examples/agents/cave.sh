# Shell hook: run noisy commands through `caveman-engine run`, so an agent (or you) reads the
# compressed view as it arrives and can always get the exact original back.
#
#   source examples/agents/cave.sh
#   cave make -j8                 # = caveman-engine run -- make -j8 (exit status is make's)
#   cave_hook_on                  # from now on, these commands go through cave automatically
#
# Where the handle is: on a terminal the view ends with the exact retrieve command
# ("… caveman: original: caveman-engine retrieve ccr_… …"); in a pipe the report line on
# stderr carries "recovery_handle". CAVE_REPORT (default json) picks the report format.

cave() {
  command caveman-engine run --report "${CAVE_REPORT:-json}" -- "$@"
}

# Commands whose output is long enough to be worth compressing; override before sourcing.
: "${CAVE_COMMANDS:=make ninja cmake ctest pytest npm pnpm yarn cargo go mvn gradle kubectl docker terraform}"

cave_hook_on() {
  local c
  for c in $CAVE_COMMANDS; do
    # shellcheck disable=SC2139  # expanded now on purpose
    alias "$c"="cave $c"
  done
}

cave_hook_off() {
  local c
  for c in $CAVE_COMMANDS; do unalias "$c" 2>/dev/null || true; done
}

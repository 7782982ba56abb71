# fish completion for caveman-engine. Installed to share/fish/vendor_completions.d/; fish
# loads it on the first TAB after `caveman-engine`. The subcommands and flags are those of
# `caveman-engine <subcommand> --help`; tests/cli/completion_shells.sh checks that they match.

# The content types of compressors/registry.cc (as in the bash completion).
set -l types a11y code config diff html json log repetition search-result tabular terminal test-report text toolschema toolschema-annotations toon auto
set -l subcommands compress detect retrieve stats registry toon version gc run mcp gain store help
set -l ages 1h 12h 1d 7d 30d

function __caveman_engine_in_run_command
    # After "run ... --": the command and its arguments, completed as a command line.
    set -l words (commandline -opc)
    contains -- run $words[2] ; and contains -- -- $words[3..-1]
end

complete -c caveman-engine -f
complete -c caveman-engine -n "not __fish_seen_subcommand_from $subcommands" -s h -l help -d 'print the help and exit'
complete -c caveman-engine -n "not __fish_seen_subcommand_from $subcommands" -s V -l version -d 'print the version and exit'
complete -c caveman-engine -n "not __fish_seen_subcommand_from $subcommands" -a compress -d 'FILE or stdin -> smaller view on stdout; original stored'
complete -c caveman-engine -n "not __fish_seen_subcommand_from $subcommands" -a detect -d 'print the content type detected in FILE or stdin'
complete -c caveman-engine -n "not __fish_seen_subcommand_from $subcommands" -a retrieve -d 'print the original stored under a recovery handle'
complete -c caveman-engine -n "not __fish_seen_subcommand_from $subcommands" -a stats -d 'tokens saved per content type, and store usage'
complete -c caveman-engine -n "not __fish_seen_subcommand_from $subcommands" -a registry -d 'print the capability manifest (JSON)'
complete -c caveman-engine -n "not __fish_seen_subcommand_from $subcommands" -a toon -d 'convert JSON to TOON or TOON to JSON'
complete -c caveman-engine -n "not __fish_seen_subcommand_from $subcommands" -a version -d 'print the version'
complete -c caveman-engine -n "not __fish_seen_subcommand_from $subcommands" -a gc -d 'delete old records from the recovery store'
complete -c caveman-engine -n "not __fish_seen_subcommand_from $subcommands" -a run -d 'run a command and compress its output'
complete -c caveman-engine -n "not __fish_seen_subcommand_from $subcommands" -a mcp -d 'MCP server on stdin/stdout'
complete -c caveman-engine -n "not __fish_seen_subcommand_from $subcommands" -a gain -d 'tokens saved per invocation (the savings ledger)'
complete -c caveman-engine -n "not __fish_seen_subcommand_from $subcommands" -a store -d 'check, salvage or migrate the recovery store'
complete -c caveman-engine -n "__fish_seen_subcommand_from store; and not __fish_seen_subcommand_from check salvage migrate" -a 'check salvage migrate'
complete -c caveman-engine -n "__fish_seen_subcommand_from store" -l from -r -d 'migrate: source store'
complete -c caveman-engine -n "__fish_seen_subcommand_from store" -l to -r -d 'salvage: new database; migrate: destination'
complete -c caveman-engine -n "not __fish_seen_subcommand_from $subcommands" -a help -d 'print the help of a subcommand'

# Every subcommand: -h/--help.
complete -c caveman-engine -n "__fish_seen_subcommand_from $subcommands; and not __caveman_engine_in_run_command" -s h -l help -d 'print the help and exit'

# compress [FILE]
complete -c caveman-engine -n "__fish_seen_subcommand_from compress" -F
complete -c caveman-engine -n "__fish_seen_subcommand_from compress" -s o -l output -r -F -d 'write the view to a file'
complete -c caveman-engine -n "__fish_seen_subcommand_from compress" -l follow -d 'write kept lines as the input arrives'
# compress and run
for sub in compress run
    set -l cond "__fish_seen_subcommand_from $sub; and not __caveman_engine_in_run_command"
    complete -c caveman-engine -n "$cond" -l type -x -a "$types" -d 'force a content type'
    complete -c caveman-engine -n "$cond" -l query -x -d 'keep what matches'
    complete -c caveman-engine -n "$cond" -l report -x -a 'json pretty' -d 'report format'
    complete -c caveman-engine -n "$cond" -s q -l quiet -d 'no report'
    complete -c caveman-engine -n "$cond" -l min-savings -x -d 'minimum share of tokens saved (0-1)'
end
complete -c caveman-engine -n "__caveman_engine_in_run_command" -x -a '(__fish_complete_subcommand --fcs-skip=2)'

# detect [FILE], toon encode|decode [FILE]
complete -c caveman-engine -n "__fish_seen_subcommand_from detect" -F
complete -c caveman-engine -n "__fish_seen_subcommand_from toon; and not __fish_seen_subcommand_from encode decode" -a 'encode decode'
complete -c caveman-engine -n "__fish_seen_subcommand_from toon; and __fish_seen_subcommand_from encode decode" -F

# retrieve
set -l r "__fish_seen_subcommand_from retrieve"
complete -c caveman-engine -n $r -l lines -x -d 'lines A to B (A:B)'
complete -c caveman-engine -n $r -l bytes -x -d 'bytes A to B (A:B)'
complete -c caveman-engine -n $r -l grep -x -d 'lines matching a regular expression'
complete -c caveman-engine -n $r -s C -l context -x -d 'lines of context around --grep matches'
complete -c caveman-engine -n $r -l json-pointer -x -d 'the value at an RFC 6901 pointer'
complete -c caveman-engine -n $r -l partials -d 'list the partial records'
complete -c caveman-engine -n $r -l map -d 'list the markers of the view'
complete -c caveman-engine -n $r -l marker -x -d 'the original bytes marker K replaced'

# --format: retrieve, stats, gain
complete -c caveman-engine -n "__fish_seen_subcommand_from retrieve stats gain" -l format -x -a 'json table' -d 'output format'
complete -c caveman-engine -n "__fish_seen_subcommand_from version" -l json -d 'one JSON line'
complete -c caveman-engine -n "__fish_seen_subcommand_from gc" -l older-than -x -a "$ages" -d 'delete records older than'
complete -c caveman-engine -n "__fish_seen_subcommand_from gc" -l dry-run -d 'count, delete nothing'
complete -c caveman-engine -n "__fish_seen_subcommand_from gain" -l since -x -a "$ages" -d 'only invocations of the last'
complete -c caveman-engine -n "__fish_seen_subcommand_from gain" -l by -x -a 'type command day' -d 'group by'
complete -c caveman-engine -n "__fish_seen_subcommand_from help; and not __fish_seen_subcommand_from compress detect retrieve stats registry toon version gc run mcp gain store" -a 'compress detect retrieve stats registry toon version gc run mcp gain store'

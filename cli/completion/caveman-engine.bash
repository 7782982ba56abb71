# bash completion for caveman-engine                                   -*- shell-script -*-
#
# Installed to share/bash-completion/completions/caveman-engine; it uses only bash builtins,
# so it also works when sourced by hand without the bash-completion package.

# The content types of compressors/registry.cc. Fixed here rather than asked of the binary,
# because `caveman-engine registry` lists transform ids (not all types are in the manifest)
# and completion should not start a process on every TAB.
_caveman_engine_types="a11y code config diff html json log repetition search-result tabular
terminal test-report text toolschema toolschema-annotations toon auto"

_caveman_engine() {
  local cur=${COMP_WORDS[COMP_CWORD]}
  local prev=""
  ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
  # "--type=j" arrives as three words ("--type", "=", "j") because "=" is in COMP_WORDBREAKS.
  if [[ $cur == "=" ]]; then
    prev=${COMP_WORDS[COMP_CWORD - 1]}
    cur=""
  elif [[ $prev == "=" ]] && ((COMP_CWORD > 1)); then
    prev=${COMP_WORDS[COMP_CWORD - 2]}
  fi
  COMPREPLY=()

  local subcommands="compress detect retrieve stats registry toon version gc run mcp gain store help"
  if ((COMP_CWORD == 1)); then
    COMPREPLY=($(compgen -W "$subcommands --help --version -h -V" -- "$cur"))
    return 0
  fi

  local sub=${COMP_WORDS[1]}
  # run: after "--" comes the command (a command name, then its arguments as file names).
  if [[ $sub == run ]]; then
    local i
    for ((i = 2; i < COMP_CWORD; i++)); do
      if [[ ${COMP_WORDS[i]} == -- ]]; then
        if ((COMP_CWORD == i + 1)); then
          COMPREPLY=($(compgen -c -- "$cur"))
        else
          COMPREPLY=($(compgen -f -- "$cur"))
        fi
        return 0
      fi
    done
  fi
  case $prev in
    --type)
      COMPREPLY=($(compgen -W "$_caveman_engine_types" -- "$cur"))
      return 0
      ;;
    --report)
      COMPREPLY=($(compgen -W "json pretty" -- "$cur"))
      return 0
      ;;
    --format)
      COMPREPLY=($(compgen -W "json table" -- "$cur"))
      return 0
      ;;
    --older-than | --since)
      COMPREPLY=($(compgen -W "1h 12h 1d 7d 30d" -- "$cur"))
      return 0
      ;;
    --by)
      COMPREPLY=($(compgen -W "type command day" -- "$cur"))
      return 0
      ;;
    -o | --output)
      COMPREPLY=($(compgen -f -- "$cur"))
      return 0
      ;;
    --query | --lines | --bytes | --grep | --json-pointer | -C | --context | --min-savings)
      return 0  # free text
      ;;
  esac

  local flags="" files=0
  case $sub in
    compress) flags="--type --query --report --follow --output --quiet --min-savings --help" files=1 ;;
    run) flags="--type --query --report --quiet --min-savings --help --" ;;
    detect) flags="--help" files=1 ;;
    registry) flags="--help" ;;
    retrieve) flags="--lines --bytes --grep --context --json-pointer --partials --map --marker --format --help" ;;
    mcp) flags="--help" ;;
    stats) flags="--format --help" ;;
    version) flags="--json --help" ;;
    gc) flags="--older-than --dry-run --help" ;;
    gain) flags="--since --by --format --help" ;;
    store)
      if ((COMP_CWORD == 2)); then
        COMPREPLY=($(compgen -W "check salvage migrate --help" -- "$cur"))
        [[ $cur == -* ]] && COMPREPLY=($(compgen -W "--from --to --help" -- "$cur"))
        return 0
      fi
      flags="--from --to --help"
      ;;
    toon)
      if ((COMP_CWORD == 2)); then
        COMPREPLY=($(compgen -W "encode decode --help" -- "$cur"))
      elif ((COMP_CWORD == 3)); then
        COMPREPLY=($(compgen -f -- "$cur"))
      fi
      return 0
      ;;
    help)
      ((COMP_CWORD == 2)) && COMPREPLY=($(compgen -W "${subcommands% help}" -- "$cur"))
      return 0
      ;;
    *) return 0 ;;
  esac
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$flags" -- "$cur"))
  elif ((files)); then
    COMPREPLY=($(compgen -f -- "$cur"))  # compress/detect [FILE]
  elif [[ $sub != retrieve ]]; then
    COMPREPLY=($(compgen -W "$flags" -- "$cur"))
  fi
  return 0
}

complete -F _caveman_engine caveman-engine

#!/usr/bin/env zsh
# Prints, one per line, the words zsh's completion system offers for a command line, by
# running an interactive zsh in a pseudo-terminal (zsh/zpty) with compinit loaded from
# COMPDIR, typing the line and a key bound to complete-word, and recording every candidate
# handed to compadd. Used by completion_shells.sh.
# Usage: zsh_complete.zsh COMPDIR "command line to complete"
zmodload zsh/zpty || exit 1
compdir=$1; line=$2
zpty z zsh -f -i
zpty -w z "PROMPT=''; RPROMPT=''; fpath=($compdir \$fpath); autoload -U compinit; compinit -u -D"
zpty -w z "zstyle ':completion:*' list-grouped false; zstyle ':completion:*' insert-tab false; zstyle ':completion:*' list-separator ''"
zpty -w z 'compadd () { local -a __h __d; builtin compadd -O __h "$@"; (( $#__h )) && print -rl -- "<h""it>"${^__h}; builtin compadd "$@" }'
zpty -w z 'comptest () { zle complete-word; print -r -- "<do""ne>"; zle kill-whole-line; zle -R }; zle -N comptest; bindkey "^T" comptest'
# The markers are spelled split in what is typed, so the terminal's echo never matches them.
zpty -w z "print -r -- '<rea''dy>'"
zpty -r z out '*<ready>*' || exit 2
zpty -w -n z "$line"$'\C-T'
typeset -a hits
while zpty -r z l; do
  [[ $l == *'<done>'* ]] && break
  [[ $l == *'<hit>'* ]] && hits+=("${${l##*<hit>}%%$'\r'}")
done
hits=(${hits:#})
print -rl -- ${(u)hits}
zpty -d z

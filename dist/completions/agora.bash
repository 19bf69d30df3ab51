# bash completion for agora(1): commands, options, world files and chat ids from the database.
_agora_db_arg() {
  local i
  for ((i = 1; i < ${#COMP_WORDS[@]} - 1; i++)); do
    if [[ ${COMP_WORDS[i]} == --db ]]; then printf -- '--db\n%s\n' "${COMP_WORDS[i + 1]}"; return; fi
  done
}

_agora_chat_ids() {
  local db
  mapfile -t db < <(_agora_db_arg)
  agora chats list --json "${db[@]}" 2>/dev/null | sed -n 's/^{"id":"\([^"]*\)".*/\1/p'
}

_agora() {
  local cur prev cmd sub
  cur=${COMP_WORDS[COMP_CWORD]}
  prev=${COMP_WORDS[COMP_CWORD - 1]}
  cmd=${COMP_WORDS[1]}
  sub=${COMP_WORDS[2]}
  if ((COMP_CWORD == 1)); then
    mapfile -t COMPREPLY < <(compgen -W "run console replay chats worlds --help --version" -- "$cur")
    return
  fi
  case $prev in
    --db) mapfile -t COMPREPLY < <(compgen -d -- "$cur"); return ;;
    -o) mapfile -t COMPREPLY < <(compgen -f -- "$cur"); return ;;
    --chat) mapfile -t COMPREPLY < <(compgen -W "$(_agora_chat_ids)" -- "$cur"); return ;;
    --delay|--world) return ;;
  esac
  case $cmd in
    run)
      if [[ $cur == -* ]]; then
        mapfile -t COMPREPLY < <(compgen -W "--db --json --stream --no-save --chat --yes --allow-env --help" -- "$cur")
      else
        mapfile -t COMPREPLY < <(compgen -f -X '!*.json' -- "$cur"; compgen -d -- "$cur")
      fi ;;
    console)
      if [[ $cur == -* ]]; then
        mapfile -t COMPREPLY < <(compgen -W "--db --allow-env --help" -- "$cur")
      else
        mapfile -t COMPREPLY < <(compgen -f -X '!*.json' -- "$cur"; compgen -d -- "$cur")
      fi ;;
    replay)
      if [[ $cur == -* ]]; then
        mapfile -t COMPREPLY < <(compgen -W "--db --json --delay --help" -- "$cur")
      else
        mapfile -t COMPREPLY < <(compgen -W "$(_agora_chat_ids)" -- "$cur"; compgen -f -X '!*.json' -- "$cur")
      fi ;;
    chats)
      if ((COMP_CWORD == 2)); then
        mapfile -t COMPREPLY < <(compgen -W "list show new delete export import branch --help" -- "$cur")
      elif [[ $cur == -* ]]; then
        mapfile -t COMPREPLY < <(compgen -W "--db --json --world --state -o" -- "$cur")
      else
        case $sub in
          show|delete|export|branch) mapfile -t COMPREPLY < <(compgen -W "$(_agora_chat_ids)" -- "$cur") ;;
          import) mapfile -t COMPREPLY < <(compgen -f -X '!*.json' -- "$cur"; compgen -d -- "$cur") ;;
        esac
      fi ;;
    worlds)
      if ((COMP_CWORD == 2)); then
        mapfile -t COMPREPLY < <(compgen -W "list --help" -- "$cur")
      else
        mapfile -t COMPREPLY < <(compgen -W "--db --json" -- "$cur")
      fi ;;
  esac
}
complete -F _agora agora

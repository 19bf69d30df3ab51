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

_agora_world_ids() {
  local db
  mapfile -t db < <(_agora_db_arg)
  agora worlds list --json "${db[@]}" 2>/dev/null | sed -n 's/^{"id":"\([^"]*\)".*/\1/p'
}

_agora() {
  local cur prev cmd sub
  cur=${COMP_WORDS[COMP_CWORD]}
  prev=${COMP_WORDS[COMP_CWORD - 1]}
  cmd=${COMP_WORDS[1]}
  sub=${COMP_WORDS[2]}
  if ((COMP_CWORD == 1)); then
    mapfile -t COMPREPLY < <(compgen -W "run say console serve init tools replay chats worlds host --help --version" -- "$cur")
    return
  fi
  case $prev in
    --db) mapfile -t COMPREPLY < <(compgen -d -- "$cur"); return ;;
    --listen) return ;;
    -o|--answers|--token-file) mapfile -t COMPREPLY < <(compgen -f -- "$cur"); return ;;
    --chat|--resume) mapfile -t COMPREPLY < <(compgen -W "$(_agora_chat_ids)" -- "$cur"); return ;;
    --format) mapfile -t COMPREPLY < <(compgen -W "json md" -- "$cur"); return ;;
    --provider) mapfile -t COMPREPLY < <(compgen -W "script openai anthropic gemini ollama" -- "$cur"); return ;;
    --nats-creds|--nats-ca) mapfile -t COMPREPLY < <(compgen -f -- "$cur"); return ;;
    --delay|--world|--model|--base-url|--allow-env|--nats|--agents|--lease-ms|--nats-replicas) return ;;
  esac
  case $cmd in
    run|say)
      if [[ $cur == -* ]]; then
        local opts="--db --json --stream --quiet --no-save --yes --answers --allow-env --model --provider --base-url --help"
        if [[ $cmd == run ]]; then opts+=" --chat --resume --nats --nats-creds --nats-ca --nats-replicas"; else opts+=" --new-chat"; fi
        mapfile -t COMPREPLY < <(compgen -W "$opts" -- "$cur")
      else
        mapfile -t COMPREPLY < <(compgen -f -X '!*.json' -- "$cur"; compgen -d -- "$cur")
      fi ;;
    console)
      if [[ $cur == -* ]]; then
        mapfile -t COMPREPLY < <(compgen -W "--db --allow-env --model --provider --base-url --nats --nats-creds --nats-ca --nats-replicas --help" -- "$cur")
      else
        mapfile -t COMPREPLY < <(compgen -f -X '!*.json' -- "$cur"; compgen -d -- "$cur")
      fi ;;
    serve)
      if [[ $cur == -* ]]; then
        mapfile -t COMPREPLY < <(compgen -W "--db --listen --token-file --allow-env --nats --nats-creds --nats-ca --nats-replicas --help" -- "$cur")
      else
        mapfile -t COMPREPLY < <(compgen -f -X '!*.json' -- "$cur"; compgen -d -- "$cur")
      fi ;;
    host)
      if [[ $cur == -* ]]; then
        mapfile -t COMPREPLY < <(compgen -W "--nats --agents --lease-ms --nats-creds --nats-ca --nats-replicas --db --json --allow-env --model --provider --base-url --help" -- "$cur")
      else
        mapfile -t COMPREPLY < <(compgen -f -X '!*.json' -- "$cur"; compgen -d -- "$cur")
      fi ;;
    init) mapfile -t COMPREPLY < <(compgen -f -X '!*.json' -- "$cur"; compgen -d -- "$cur") ;;
    tools)
      if [[ $cur == -* ]]; then
        mapfile -t COMPREPLY < <(compgen -W "--db --json --help" -- "$cur")
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
        mapfile -t COMPREPLY < <(compgen -W "list show export delete --help" -- "$cur")
      elif [[ $cur == -* ]]; then
        mapfile -t COMPREPLY < <(compgen -W "--db --json --yes -o --format" -- "$cur")
      else
        case $sub in
          show|export|delete) mapfile -t COMPREPLY < <(compgen -W "$(_agora_world_ids)" -- "$cur") ;;
        esac
      fi ;;
  esac
}
complete -F _agora agora

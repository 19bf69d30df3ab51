#!/usr/bin/env bash
# libagora.so's dynamic symbol table holds the public API and nothing else (lib/agora.map): every
# defined symbol is agora_*, the core names of include/agora.h are there, the soname is libagora.so.0,
# and the agora binary runs on the shared library.
set -u
lib=${1:?usage: lib_symbols.sh LIBAGORA.so AGORA_BIN}
bin=${2:?usage: lib_symbols.sh LIBAGORA.so AGORA_BIN}
fails=0 passes=0
check() { local name=$1; shift; if "$@"; then passes=$((passes + 1)); else echo "FAIL: $name"; fails=$((fails + 1)); fi; }

syms=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBRVW]$/ {print $3}' | sed 's/@.*//' | sort -u)
others=$(grep -v '^agora_' <<<"$syms" | grep -vxE 'AGORA_[0-9]+')
check "only agora_* exported (others: $(echo $others | head -c 300))" test -z "$others"
for name in agora_world_open agora_world_close agora_publish agora_subscribe agora_event_json agora_run_until_quiet \
            agora_strerror agora_version agora_run_for agora_step agora_fd agora_next_timeout agora_answer \
            agora_reply agora_cancel agora_chats agora_transcript agora_chat_export agora_chat_import \
            agora_chat_branch agora_chat_delete agora_usage agora_db_open agora_db_close agora_db_chats \
            agora_db_chat_export agora_db_chat_import agora_db_chat_branch agora_db_chat_delete agora_db_chat_new \
            agora_failed_calls agora_unsaved agora_budget_spent agora_clock_note agora_event_world \
            agora_thinking agora_agent_thinking \
            agora_db_chat_info agora_db_transcript agora_db_usage agora_db_chat_state \
            agora_script_steps agora_script_step agora_script_finish agora_tick agora_event_sim_time \
            agora_snapshot_transcript agora_db_worlds agora_db_world agora_db_world_delete \
            agora_cache_stats agora_cache_clear agora_world_tools agora_run_until_interrupt \
            agora_settings agora_agents agora_settings_change agora_agent_add agora_agent_change agora_agent_remove \
            agora_budget_set agora_chat_edit agora_chat_retry agora_chat_cut agora_agent_forget \
            agora_chat_title agora_clock agora_clock_advance agora_clock_advancing \
            agora_messages agora_agent_add_like agora_world_db agora_world_stored agora_chat_resumed \
            agora_duration_parse \
            agora_world_loop agora_loop_world agora_loop_worlds agora_loop_db \
            agora_memories agora_db_memories agora_name_id agora_option_check agora_process_name \
            agora_snapshot_markdown agora_world_markdown agora_db_chat_id \
            agora_world_close_later agora_subscribe_chat agora_event_chat agora_event_position \
            agora_db_world_create agora_db_chat_graph agora_world_counts agora_db_counts \
            agora_mcp_servers agora_mcp_restart agora_db_messages \
            agora_publish_seq agora_db_transcript_page agora_db_mcp_servers agora_db_search; do
  check "$name exported" grep -qx "$name" <<<"$syms"
done
# API version 2's functions carry its symbol version (lib/agora.map), the first API's stay at AGORA_0
check "agora_db_open at version AGORA_2" bash -c "objdump -T '$lib' | grep -qE 'AGORA_2 +agora_db_open$'"
check "agora_failed_calls at version AGORA_3" bash -c "objdump -T '$lib' | grep -qE 'AGORA_3 +agora_failed_calls$'"
check "agora_thinking at version AGORA_3" bash -c "objdump -T '$lib' | grep -qE 'AGORA_3 +agora_thinking$'"
check "agora_script_step at version AGORA_4" bash -c "objdump -T '$lib' | grep -qE 'AGORA_4 +agora_script_step$'"
check "agora_snapshot_transcript at version AGORA_4" bash -c "objdump -T '$lib' | grep -qE 'AGORA_4 +agora_snapshot_transcript$'"
check "agora_world_tools at version AGORA_5" bash -c "objdump -T '$lib' | grep -qE 'AGORA_5 +agora_world_tools$'"
check "agora_db_memories at version AGORA_9" bash -c "objdump -T '$lib' | grep -qE 'AGORA_9 +agora_db_memories$'"
check "agora_run_until_interrupt at version AGORA_5" bash -c "objdump -T '$lib' | grep -qE 'AGORA_5 +agora_run_until_interrupt$'"
check "agora_agent_change at version AGORA_6" bash -c "objdump -T '$lib' | grep -qE 'AGORA_6 +agora_agent_change$'"
check "agora_messages at version AGORA_7" bash -c "objdump -T '$lib' | grep -qE 'AGORA_7 +agora_messages$'"
check "agora_agent_add_like at version AGORA_7" bash -c "objdump -T '$lib' | grep -qE 'AGORA_7 +agora_agent_add_like$'"
check "agora_db_messages at version AGORA_12" bash -c "objdump -T '$lib' | grep -qE 'AGORA_12 +agora_db_messages$'"
check "agora_db_search at version AGORA_14" bash -c "objdump -T '$lib' | grep -qE 'AGORA_14 +agora_db_search$'"
check "agora_db_transcript_page at version AGORA_13" bash -c "objdump -T '$lib' | grep -qE 'AGORA_13 +agora_db_transcript_page$'"
check "agora_loop_world at version AGORA_8" bash -c "objdump -T '$lib' | grep -qE 'AGORA_8 +agora_loop_world$'"
check "agora_world_close_later at version AGORA_10" bash -c "objdump -T '$lib' | grep -qE 'AGORA_10 +agora_world_close_later$'"
check "agora_mcp_restart at version AGORA_11" bash -c "objdump -T '$lib' | grep -qE 'AGORA_11 +agora_mcp_restart$'"
check "agora_publish at version AGORA_0" bash -c "objdump -T '$lib' | grep -qE 'AGORA_0 +agora_publish$'"
check "no internal name leaks (world_new)" bash -c "! nm -D '$lib' | grep -qw world_new"
check "soname libagora.so.0" bash -c "readelf -d '$lib' | grep -q 'SONAME.*\[libagora.so.0\]'"
check "agora links libagora.so.0" bash -c "readelf -d '$bin' | grep -q 'NEEDED.*\[libagora.so.0\]'"
# ... and it alone: the binary holds no copy of the core (one database environment per process).
for sym in world_new rt_open chat_session_new store_open llm_client_new bus_enqueue; do
  check "agora holds no core symbol ($sym)" bash -c "! nm '$bin' | grep -qw '$sym'"
done
check "agora links no LMDB, libcurl or libnats" bash -c "! readelf -d '$bin' | grep -qE 'NEEDED.*(liblmdb|libcurl|libnats)'"
echo "$passes passed, $fails failed"
test "$fails" = 0

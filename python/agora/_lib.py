"""The C library (libagora.so.0) and its function signatures; nothing here is public."""
from __future__ import annotations

import ctypes
import os

c_char_p = ctypes.c_char_p
c_int = ctypes.c_int
c_void_p = ctypes.c_void_p
c_size_t = ctypes.c_size_t
c_uint64 = ctypes.c_uint64
c_long = ctypes.c_long

API_VERSION = 14  # the newest API this package knows; it runs on API 1 without Database, on 2 without
                  # Database.chat/transcript/usage/state and the run's counters, on 3 without the script, the
                  # worlds, the cache and NATS, on 4 without World.tools and hosting, on 5 without the changes,
                  # the chat's past and the clock, on 6 without what the console needs (messages, a copied
                  # agent, how the open went, durations, view), on 7 without agora.Loop, on 8 without the
                  # memories, ids and Markdown, on 9 without untrusted worlds, counts, graphs and the chat's
                  # stream, on 10 without the MCP servers, on 11 without Database.messages, on 13 without
                  # Database.search: those calls raise AgoraError when made

OK = 0
ERR_NOMEM, ERR_INVALID, ERR_IO, ERR_STORAGE, ERR_LLM, ERR_NOT_FOUND = -1, -2, -3, -4, -5, -6
ERR_TOO_BIG, ERR_EXISTS, ERR_VERSION, ERR_CANCELLED, ERR_STATE = -7, -8, -9, -10, -11
WAITING = 1
ENDED = 2

NO_SAVE, NEW_CHAT, FROM_STORE, NO_MCP, STREAM, AUTO_APPROVE = 0x01, 0x02, 0x04, 0x08, 0x10, 0x20
ID_MAX = 65


NOTES, OPTIONS_3, OPTIONS_4, SCRIPT, NO_CLOCK = 0x40, 0x80, 0x100, 0x200, 0x400  # API 3 and 4
OPTIONS_5, TOOLS, HOST = 0x800, 0x1000, 0x2000                                     # API 5
VIEW = 0x4000                                                                       # API 7 (with OPTIONS_5)
OPTIONS_8 = 0x8000                                                                  # API 8 (loop)
OPTIONS_10, UNTRUSTED = 0x10000, 0x20000                                            # API 10 (sync)
SYNC_FULL, SYNC_BACKGROUND = 0, 1
EVENT_IDLE, SUB_IDLE = 5, 0x01                                                      # API 10

EVENT_FN = ctypes.CFUNCTYPE(None, c_void_p, c_void_p)
TICK_FN = ctypes.CFUNCTYPE(None, c_void_p, c_void_p)
CLOSED_FN = ctypes.CFUNCTYPE(None, c_char_p, c_int, c_void_p)


class Options(ctypes.Structure):
    """agora_options; the fields of API N are read only with the flag OPTIONS_N (the growth rule)."""
    _fields_ = [
        ("flags", ctypes.c_uint),
        ("chat", c_char_p),
        ("model", c_char_p),
        ("provider", c_char_p),
        ("base_url", c_char_p),
        ("allow_env", ctypes.POINTER(c_char_p)),
        ("n_allow_env", c_size_t),
        # API 3
        ("program", c_char_p),
        ("allow_key_to", ctypes.POINTER(c_char_p)),
        ("n_allow_key_to", c_size_t),
        ("llm_cache", c_char_p),
        ("cache_db", c_char_p),
        ("on_event", EVENT_FN),
        ("on_event_ctx", c_void_p),
        # API 4
        ("nats_url", c_char_p),
        ("nats_creds", c_char_p),
        ("nats_ca", c_char_p),
        ("nats_replicas", c_int),
        # API 5
        ("nats_agents", c_char_p),
        ("nats_lease_ms", c_long),
        # API 8
        ("loop", c_void_p),
        # API 10
        ("sync", c_int),
    ]

_SIGNATURES = {
    "agora_strerror": (c_char_p, [c_int]),
    "agora_errmsg": (c_char_p, []),
    "agora_version": (c_char_p, []),
    "agora_api_version": (c_int, []),
    "agora_free": (None, [c_void_p]),
    "agora_world_open": (c_int, [c_char_p, c_char_p, ctypes.POINTER(Options), ctypes.POINTER(c_void_p)]),
    "agora_world_close": (None, [c_void_p]),
    "agora_world_id": (c_char_p, [c_void_p]),
    "agora_world_name": (c_char_p, [c_void_p]),
    "agora_publish": (c_int, [c_void_p, c_char_p, c_char_p]),
    "agora_run_until_quiet": (c_int, [c_void_p]),
    "agora_run_for": (c_int, [c_void_p, c_long]),
    "agora_step": (c_int, [c_void_p]),
    "agora_is_quiet": (c_int, [c_void_p]),
    "agora_interrupt": (None, [c_void_p]),
    "agora_cancel": (c_int, [c_void_p]),
    "agora_fd": (c_int, [c_void_p]),
    "agora_next_timeout": (c_long, [c_void_p]),
    "agora_event_json": (c_char_p, [c_void_p]),
    "agora_event_type": (c_int, [c_void_p]),
    "agora_subscribe": (c_int, [c_void_p, EVENT_FN, c_void_p]),
    "agora_unsubscribe": (c_int, [c_void_p, c_int]),
    "agora_events_buffer": (c_int, [c_void_p, c_size_t]),
    "agora_events_take": (c_int, [c_void_p, ctypes.POINTER(c_void_p), ctypes.POINTER(c_size_t)]),
    "agora_answer": (c_int, [c_void_p, c_uint64, c_int]),
    "agora_reply": (c_int, [c_void_p, c_uint64, c_int, c_char_p]),
    "agora_chat_current": (c_char_p, [c_void_p]),
    "agora_chats": (c_int, [c_void_p, ctypes.POINTER(c_void_p)]),
    "agora_transcript": (c_int, [c_void_p, c_char_p, ctypes.POINTER(c_void_p)]),
    "agora_chat_export": (c_int, [c_void_p, c_char_p, ctypes.POINTER(c_void_p)]),
    "agora_chat_import": (c_int, [c_void_p, c_char_p, ctypes.c_char * ID_MAX]),
    "agora_chat_branch": (c_int, [c_void_p, c_char_p, c_uint64, ctypes.c_char * ID_MAX]),
    "agora_chat_delete": (c_int, [c_void_p, c_char_p]),
    "agora_chat_new": (c_int, [c_void_p]),
    "agora_chat_load": (c_int, [c_void_p, c_char_p]),
    "agora_usage": (c_int, [c_void_p, c_char_p, ctypes.POINTER(c_void_p)]),
}

# API version 2 (agora_db_*): bound when the library loaded has them (agora.Database needs them).
_SIGNATURES_2 = {
    "agora_db_open": (c_int, [c_char_p, ctypes.c_uint, ctypes.POINTER(c_void_p)]),
    "agora_db_close": (None, [c_void_p]),
    "agora_db_chats": (c_int, [c_void_p, c_char_p, ctypes.POINTER(c_void_p)]),
    "agora_db_chat_export": (c_int, [c_void_p, c_char_p, ctypes.POINTER(c_void_p)]),
    "agora_db_chat_import": (c_int, [c_void_p, c_char_p, c_char_p, ctypes.c_char * ID_MAX]),
    "agora_db_chat_branch": (c_int, [c_void_p, c_char_p, c_uint64, ctypes.c_char * ID_MAX]),
    "agora_db_chat_delete": (c_int, [c_void_p, c_char_p, ctypes.c_char * ID_MAX]),
    "agora_db_chat_new": (c_int, [c_void_p, c_char_p, ctypes.c_char * ID_MAX]),
}
_SIGNATURES_3 = {
    "agora_db_chat_info": (c_int, [c_void_p, c_char_p, ctypes.POINTER(c_void_p)]),
    "agora_db_transcript": (c_int, [c_void_p, c_char_p, ctypes.POINTER(c_void_p)]),
    "agora_db_usage": (c_int, [c_void_p, c_char_p, ctypes.POINTER(c_void_p)]),
    "agora_db_chat_state": (c_int, [c_void_p, c_char_p, ctypes.POINTER(c_void_p)]),
    "agora_thinking": (c_size_t, [c_void_p]),
    "agora_agent_thinking": (c_int, [c_void_p, c_char_p]),
    "agora_failed_calls": (c_size_t, [c_void_p]),
    "agora_unsaved": (c_size_t, [c_void_p]),
    "agora_budget_spent": (c_int, [c_void_p, ctypes.POINTER(ctypes.c_int64), ctypes.POINTER(ctypes.c_double)]),
    "agora_clock_note": (c_char_p, [c_void_p]),
    "agora_event_world": (c_void_p, [c_void_p]),
}
DB_READ = 0x01
_SIGNATURES_4 = {
    "agora_script_steps": (c_size_t, [c_void_p]),
    "agora_script_step": (c_int, [c_void_p, c_size_t]),
    "agora_script_finish": (c_int, [c_void_p]),
    "agora_tick": (c_int, [c_void_p, c_long, TICK_FN, c_void_p]),
    "agora_snapshot_transcript": (c_int, [c_char_p, c_char_p, ctypes.POINTER(c_void_p)]),
    "agora_db_worlds": (c_int, [c_void_p, ctypes.POINTER(c_void_p)]),
    "agora_db_world": (c_int, [c_void_p, c_char_p, ctypes.POINTER(c_void_p)]),
    "agora_db_world_delete": (c_int, [c_void_p, c_char_p, ctypes.c_char * ID_MAX, ctypes.POINTER(c_size_t)]),
    "agora_cache_stats": (c_int, [c_char_p, c_char_p, ctypes.POINTER(c_void_p)]),
    "agora_cache_clear": (c_int, [c_char_p, c_char_p, ctypes.c_int64, ctypes.POINTER(c_size_t)]),
}
_SIGNATURES_5 = {
    "agora_world_tools": (c_int, [c_void_p, ctypes.POINTER(c_void_p)]),
    "agora_run_until_interrupt": (c_int, [c_void_p]),
}
_SIGNATURES_6 = {
    "agora_settings": (c_int, [c_void_p, ctypes.POINTER(c_void_p)]),
    "agora_agents": (c_int, [c_void_p, ctypes.POINTER(c_void_p)]),
    "agora_settings_change": (c_int, [c_void_p, c_char_p]),
    "agora_agent_add": (c_int, [c_void_p, c_char_p, ctypes.POINTER(c_void_p)]),
    "agora_agent_change": (c_int, [c_void_p, c_char_p, c_char_p, ctypes.POINTER(c_void_p)]),
    "agora_agent_remove": (c_int, [c_void_p, c_char_p]),
    "agora_budget_set": (c_int, [c_void_p, ctypes.c_int64, ctypes.c_double]),
    "agora_clock": (c_int, [c_void_p, ctypes.POINTER(c_void_p)]),
    "agora_clock_advance": (c_int, [c_void_p, ctypes.c_int64]),
    "agora_clock_advancing": (c_int, [c_void_p]),
    "agora_chat_edit": (c_int, [c_void_p, c_uint64, c_char_p, ctypes.POINTER(c_uint64)]),
    "agora_chat_retry": (c_int, [c_void_p, ctypes.POINTER(c_uint64)]),
    "agora_chat_cut": (c_int, [c_void_p, c_uint64]),
    "agora_agent_forget": (c_int, [c_void_p, c_char_p]),
    "agora_chat_title": (c_int, [c_void_p, c_char_p]),
}
_SIGNATURES_7 = {
    "agora_messages": (c_int, [c_void_p, c_char_p, c_uint64, c_size_t, ctypes.POINTER(c_void_p)]),
    "agora_agent_add_like": (c_int, [c_void_p, c_char_p, c_char_p, ctypes.POINTER(c_void_p)]),
    "agora_world_db": (c_char_p, [c_void_p]),
    "agora_world_stored": (c_int, [c_void_p]),
    "agora_chat_resumed": (c_int, [c_void_p]),
    "agora_duration_parse": (c_int, [c_char_p, ctypes.POINTER(ctypes.c_int64)]),
}
_SIGNATURES_8 = {
    "agora_world_loop": (c_void_p, [c_void_p]),
    "agora_loop_world": (c_void_p, [c_void_p, c_char_p]),
    "agora_loop_worlds": (c_size_t, [c_void_p, ctypes.POINTER(c_void_p), c_size_t]),
    "agora_loop_db": (c_int, [c_void_p, c_char_p, ctypes.POINTER(c_void_p)]),
}
_ID_OUT = ctypes.c_char * ID_MAX
_JSON_OUT = ctypes.POINTER(c_void_p)
_SIGNATURES_9 = {
    "agora_memories": (c_int, [c_void_p, c_char_p, c_char_p, _JSON_OUT]),
    "agora_db_memories": (c_int, [c_void_p, c_char_p, c_char_p, c_char_p, ctypes.POINTER(c_char_p), c_size_t,
                                  ctypes.c_uint, _JSON_OUT]),
    "agora_name_id": (c_int, [c_char_p, _ID_OUT]),
    "agora_option_check": (c_int, [c_char_p, c_char_p]),
    "agora_snapshot_markdown": (c_int, [c_char_p, _JSON_OUT]),
    "agora_world_markdown": (c_int, [c_char_p, _JSON_OUT]),
    "agora_db_chat_id": (c_int, [c_void_p, c_char_p, _ID_OUT]),
}
_SIGNATURES_10 = {
    "agora_world_close_later": (c_int, [c_void_p, c_long, CLOSED_FN, c_void_p]),
    "agora_subscribe_chat": (c_int, [c_void_p, c_char_p, ctypes.c_uint, EVENT_FN, c_void_p]),
    "agora_event_chat": (c_char_p, [c_void_p]),
    "agora_event_position": (c_uint64, [c_void_p]),
    "agora_db_world_create": (c_int, [c_void_p, c_char_p, _ID_OUT]),
    "agora_db_chat_graph": (c_int, [c_void_p, c_char_p, c_size_t, c_size_t, _JSON_OUT]),
    "agora_world_counts": (c_int, [c_void_p, _JSON_OUT]),
    "agora_db_counts": (c_int, [c_void_p, _JSON_OUT]),
}
_SIGNATURES_11 = {
    "agora_mcp_servers": (c_int, [c_void_p, _JSON_OUT]),
    "agora_mcp_restart": (c_int, [c_void_p, c_char_p]),
}
_SIGNATURES_12 = {
    "agora_db_messages": (c_int, [c_void_p, c_char_p, c_uint64, c_size_t, _JSON_OUT]),
    "agora_db_search": (c_int, [c_void_p, c_char_p, c_char_p, c_uint64, c_size_t, _JSON_OUT]),
}
# Each API's calls, bound only when the library loaded has that API (an older one lacks the symbols).
_NEWER = {2: _SIGNATURES_2, 3: _SIGNATURES_3, 4: _SIGNATURES_4, 5: _SIGNATURES_5, 6: _SIGNATURES_6,
          7: _SIGNATURES_7, 8: _SIGNATURES_8, 9: _SIGNATURES_9, 10: _SIGNATURES_10, 11: _SIGNATURES_11,
          12: _SIGNATURES_12}


def _load() -> ctypes.CDLL:
    path = os.environ.get("AGORA_LIB") or "libagora.so.0"
    try:
        lib = ctypes.CDLL(path)
    except OSError as e:
        raise ImportError(
            f"agora: cannot load {path} ({e}); install libagora (the agora package) or set AGORA_LIB "
            "to the library's path") from None
    api = lib.agora_api_version()
    newer = {k: v for n, sigs in _NEWER.items() if api >= n for k, v in sigs.items()}
    for name, (restype, argtypes) in {**_SIGNATURES, **newer}.items():
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = argtypes
    return lib


lib = _load()


_EVENT_BASE = {"event_base_new": (c_void_p, []), "event_base_free": (None, [c_void_p]),
               "event_base_loop": (c_int, [c_void_p, c_int])}
EVLOOP_ONCE = 0x01


def event_base(name: str) -> object:
    """libevent's event_base_new, event_base_free or event_base_loop, as libagora itself links them (found
    through its handle, so that the loop is made by the same libevent that runs it), or None when they
    cannot be reached (a libagora with libevent linked in statically exports none of it)."""
    try:
        fn = getattr(lib, name)
    except AttributeError:
        return None
    fn.restype, fn.argtypes = _EVENT_BASE[name]
    return fn


def take_string(ptr: c_void_p) -> str:
    """A char * the library handed over: decoded, then released with agora_free."""
    try:
        return ctypes.string_at(ptr).decode("utf-8", "replace") if ptr else ""
    finally:
        if ptr:
            lib.agora_free(ptr)

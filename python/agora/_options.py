"""agora_options from World.open's keywords: the flags, the strings kept alive for the call, and the API
each keyword needs (on an older libagora a keyword of a newer API raises AgoraError, never goes unread)."""
from __future__ import annotations

import ctypes
from typing import Any, Dict, Iterable, List, Optional, Tuple, Union

from . import _lib
from ._base import AgoraError, _b, _need

# The keywords added after the first API: the API that reads them, and their default (which leaves the
# option unset; an empty allow_key_to too).
_NEWER: Dict[str, Tuple[int, Any]] = {
    "notes": (3, False), "program": (3, None), "allow_key_to": (3, ()), "llm_cache": (3, None),
    "cache_db": (3, None), "on_event": (3, None), "script": (4, False), "clock": (4, True), "nats_url": (4, None),
    "nats_creds": (4, None), "nats_ca": (4, None), "nats_replicas": (4, 0), "tools_only": (5, False),
    "host": (5, False), "nats_agents": (5, None), "nats_lease_ms": (5, 0), "view": (7, False),
    "loop": (8, None), "untrusted": (10, False), "sync": (10, None),
}
_SYNC = {"full": _lib.SYNC_FULL, "background": _lib.SYNC_BACKGROUND}


def _strings(names: Iterable[str], keep: List[Any]) -> Tuple[Any, int]:
    """A char *[] of names, kept alive in keep; never empty (ctypes makes no zero-length array)."""
    enc = [n.encode("utf-8") for n in names]
    arr = (ctypes.c_char_p * max(len(enc), 1))(*enc)
    keep.append(arr)
    return arr, len(enc)


def _joined(agents: Union[str, Iterable[str], None]) -> Optional[str]:
    return agents if agents is None or isinstance(agents, str) else ",".join(agents)


def _sync(sync: Optional[str]) -> int:
    """agora_options.sync for the keyword: None or "full" (each commit on disk before the call returns),
    "background" (a storage thread syncs; with loop and a database)."""
    if sync is None or sync in _SYNC:
        return _SYNC.get(sync or "full", _lib.SYNC_FULL)
    raise AgoraError(_lib.ERR_INVALID, f"World.open(sync={sync!r}): expected 'full' or 'background'")


def make(kw: Dict[str, Any], on_event: Any) -> Tuple[_lib.Options, List[Any]]:
    """The options for kw (World.open's keywords by name) with on_event (an EVENT_FN, or None); the second
    value holds what they point to, to keep alive as long as the world (on_event is called until close)."""
    given = [k for k, (_, default) in _NEWER.items() if kw[k] != default and not (k == "allow_key_to" and not kw[k])]
    api = max([_NEWER[k][0] for k in given], default=1)
    if api > 1:
        _need(api, f"World.open({', '.join(k + '=' for k in given if _NEWER[k][0] == api)})")
    keep: List[Any] = [on_event]
    env, n_env = _strings(kw["allow_env"], keep)
    key_to, n_key_to = _strings(kw["allow_key_to"] or (), keep)
    flags = ((0 if kw["save"] else _lib.NO_SAVE) | (_lib.NEW_CHAT if kw["new_chat"] else 0) |
             (_lib.FROM_STORE if kw["from_store"] else 0) | (0 if kw["mcp"] else _lib.NO_MCP) |
             (_lib.STREAM if kw["stream"] else 0) | (_lib.AUTO_APPROVE if kw["auto_approve"] else 0) |
             (_lib.NOTES if kw["notes"] else 0) | (_lib.SCRIPT if kw["script"] else 0) |
             (0 if kw["clock"] else _lib.NO_CLOCK) | (_lib.TOOLS if kw["tools_only"] else 0) |
             (_lib.HOST if kw["host"] else 0) | (_lib.VIEW if kw["view"] else 0) | (_lib.OPTIONS_3 if api >= 3 else 0) |
             (_lib.OPTIONS_4 if api >= 4 else 0) | (_lib.OPTIONS_5 if api >= 5 else 0) |
             (_lib.OPTIONS_8 if api >= 8 else 0) | (_lib.UNTRUSTED if kw["untrusted"] else 0) |
             (_lib.OPTIONS_10 if api >= 10 else 0))
    opts = _lib.Options(
        flags=flags, chat=_b(kw["chat"]), model=_b(kw["model"]), provider=_b(kw["provider"]),
        base_url=_b(kw["base_url"]), allow_env=env, n_allow_env=n_env, program=_b(kw["program"]),
        allow_key_to=key_to, n_allow_key_to=n_key_to, llm_cache=_b(kw["llm_cache"]), cache_db=_b(kw["cache_db"]),
        on_event=on_event or _lib.EVENT_FN(), nats_url=_b(kw["nats_url"]), nats_creds=_b(kw["nats_creds"]),
        nats_ca=_b(kw["nats_ca"]), nats_replicas=int(kw["nats_replicas"]),
        nats_agents=_b(_joined(kw["nats_agents"])), nats_lease_ms=int(kw["nats_lease_ms"]),
        loop=kw["loop"]._h() if kw["loop"] is not None else None,  # an agora.Loop: its event_base
        sync=_sync(kw["sync"]))
    return opts, keep

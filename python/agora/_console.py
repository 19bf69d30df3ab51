"""What `agora console` needs of a world (libagora API 7): a window of a chat's messages, a copy of an
agent, how the open went (the database, a stored world, a resumed chat) and a duration as world files
write it. World takes these from _ConsoleCalls; on an older libagora each raises AgoraError (STATE)."""
from __future__ import annotations

import ctypes
import json
from typing import Any, List, Optional

from . import _lib
from ._base import AgoraError, Event, _b, _check, _Handle, _need
from ._lib import lib


class _ConsoleCalls(_Handle):
    """World's API-7 calls (World is one: _h() is the open world's handle)."""

    def messages(self, chat: Optional[str] = None, start: int = 0, limit: int = 0) -> List[Event]:
        """A window of a chat's messages (None: the current chat), as `agora run --json` prints them, each
        with its "seq", without the thread's steps: from message start on, or with start 0 the last
        limit; at most limit of them (0: no limit); [] past the last. NOT_FOUND for an unknown chat,
        STATE without a database (API 7)."""
        _need(7, "World.messages")
        if start < 0 or limit < 0:
            raise AgoraError(_lib.ERR_INVALID, f"World.messages: start {start}, limit {limit}: neither may be negative")
        return self._json_out(lib.agora_messages, _b(chat), int(start), int(limit))

    def add_agent_like(self, like: str, **fields: Any) -> Event:
        """Adds a copy of agent like (name or id): its settings without its scripted replies, fields on
        top (at least name=...; None takes a field away), e.g. w.add_agent_like("ann", name="dave").
        The copy's API key goes where like's goes unless fields give provider, base_url, api_key_env or
        memory a value (then add_agent's rules hold). Returns the agent as the world now has it;
        NOT_FOUND for an unknown like, EXISTS for a taken name (API 7)."""
        _need(7, "World.add_agent_like")
        return self._json_out(lib.agora_agent_add_like, _b(like), _b(json.dumps(fields)))

    @property
    def db(self) -> Optional[str]:
        """The database directory as libagora resolved it (db=None: the default), or None without one
        (save=False, tools_only=True; API 7)."""
        _need(7, "World.db")
        d = lib.agora_world_db(self._h())
        return d.decode() if d else None

    @property
    def stored(self) -> bool:
        """True when the world came from the database (a stored world's id or name), False from a file
        or world JSON, whose settings replace the stored ones at the next open (API 7)."""
        _need(7, "World.stored")
        return bool(lib.agora_world_stored(self._h()))

    @property
    def resumed(self) -> bool:
        """True when the open continued a saved chat, False when its chat is new (API 7)."""
        _need(7, "World.resumed")
        return bool(lib.agora_chat_resumed(self._h()))


def duration_ms(text: str) -> int:
    """A duration as world files write it ("90s", "1h30m", "2d": units d, h, m, s in that order, whole
    numbers, above 0, at most 100 years) in milliseconds; AgoraError INVALID saying why (API 7)."""
    _need(7, "agora.duration_ms")
    ms = ctypes.c_int64()
    _check(lib.agora_duration_parse(_b(text), ctypes.byref(ms)))
    return ms.value

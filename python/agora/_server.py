"""What a server of many worlds reads of one (libagora API 10 and 11, include/agora_server.h), as `agora
serve` does: its counts, its MCP servers (listed, one restarted), one chat's events with their position
(a resumable stream), and a close that does not wait, for a world on an agora.Loop. World takes these
from _ServerCalls; on an older libagora each raises AgoraError (STATE)."""
from __future__ import annotations

import json
import select
import time
from typing import Any, Callable, Dict, Optional

from . import _lib
from ._base import AgoraError, Event, _b, _check, _Handle, _need
from ._lib import lib


def chat_event(ev: int) -> Event:
    """A subscribe_chat event as a dict: its JSON with "chat" and "position" from agora_event_chat and
    agora_event_position; the idle mark (no JSON) is {"type": "idle", "chat", "position"}."""
    chat = lib.agora_event_chat(ev)
    d = {"type": "idle"} if lib.agora_event_type(ev) == _lib.EVENT_IDLE else json.loads(lib.agora_event_json(ev))
    d["chat"] = chat.decode() if chat else None
    d["position"] = int(lib.agora_event_position(ev))
    return d


class _ServerCalls(_Handle):
    """World's API-10 and API-11 calls (World is one: _h() is the open world's handle, _subs its
    subscriptions' callbacks, _trampoline makes one)."""

    _subs: Dict[int, Any]
    _loop: Any  # the World's agora.Loop, or None

    def _trampoline(self, fn: Callable[[Event], Any], convert: Optional[Callable[[int], Event]] = None) -> Any:
        raise NotImplementedError

    def counts(self) -> Event:
        """What the world did since it was opened: {"agents", "thinking", "messages", "events",
        "llm_calls_done", "llm_calls_failed", "rate_limited", "input_tokens", "output_tokens"} (API 10)."""
        _need(10, "World.counts")
        return self._json_out(lib.agora_world_counts)

    def subscribe_chat(self, fn: Callable[[Event], Any], chat: Optional[str] = None, idle: bool = False) -> int:
        """As subscribe, for the events of chat only (its id, as current_chat gives it: its events while it
        is the current chat; None: every chat's), each dict with "chat" (the chat it is in) and "position"
        (a message's seq, else the seq of the chat's last message before it): what a stream resumes from,
        with messages(chat, start=position + 1). idle=True also calls fn({"type": "idle", "chat",
        "position"}) once the world has delivered every message and event it had (flush a batch then).
        Returns the id for unsubscribe; INVALID for a chat that is no id (API 10)."""
        _need(10, "World.subscribe_chat")
        cb = self._trampoline(fn, chat_event)
        sub = _check(lib.agora_subscribe_chat(self._h(), _b(chat), _lib.SUB_IDLE if idle else 0, cb, None))
        self._subs[sub] = cb
        return sub

    def close_later(self, ms: int = 0, done: Optional[Callable[[str, int], Any]] = None) -> None:
        """Closes a world of an agora.Loop without waiting, also from a callback of the loop (where close()
        raises STATE): the world is closed for Python at once (it takes no message, the Loop no longer
        lists it, its id cannot be opened again on the loop until done), while the loop runs the steps:
        the replies in flight finish for at most ms milliseconds (0: none waits; they are cancelled) and
        are stored, its MCP servers end, then done(world_id, rc) is called, rc 0, ERR_CANCELLED (replies
        were cancelled) or ERR_STORAGE. Loop.run() and Loop.close() run the loop until every such close is
        done. STATE for a world on a loop of its own (close() it), INVALID for ms < 0 (API 10)."""
        _need(10, "World.close_later")
        if self._loop is None:
            raise AgoraError(_lib.ERR_STATE, "World.close_later: the world runs on a loop of its own: close() it")
        self._loop._close_later(self, ms, done)  # type: ignore[arg-type]

    def mcp_servers(self) -> Event:
        """The world's MCP servers: {"started", "reason" (why they were not started, or None), "servers":
        [{"name", "transport" ("stdio" | "http"), "state" ("not started" | "starting" | "ready" | "failed"),
        "tools": [names], "error"}]}, in the world file's order (API 11)."""
        _need(11, "World.mcp_servers")
        return self._json_out(lib.agora_mcp_servers)

    def mcp_restart(self, server: str, wait: float = 0) -> Event:
        """Starts the MCP server named server again at once (a crashed or stuck one): it is "starting" until
        its new process has answered, as the world's loop turns, and a failure is an mcp-error event. With
        wait (seconds) the loop is turned here until it has left "starting" or wait has passed (a quiet
        world's run() does not turn it); returns its entry as mcp_servers() then lists it (the events of
        the wait come with the next run()). NOT_FOUND for no such server; STATE when the servers were not
        started (mcp=False, a stored or untrusted world) or replies are in flight (API 11)."""
        _need(11, "World.mcp_restart")
        h = self._h()
        _check(lib.agora_mcp_restart(h, _b(server)))
        end = time.monotonic() + wait
        while True:
            entry = next((x for x in self.mcp_servers()["servers"] if x["name"] == server), {})
            left = end - time.monotonic()
            if entry.get("state") != "starting" or left <= 0:
                return entry
            self._turn(h, left)

    def _turn(self, h: Any, most: float) -> None:
        """One turn of the world's loop, waiting at most most seconds for its descriptor or its next timer
        (agora_fd, agora_next_timeout), then agora_step."""
        timeout = lib.agora_next_timeout(h)
        select.select([_check(lib.agora_fd(h))], [], [], most if timeout < 0 else min(most, timeout / 1000))
        self._call(lib.agora_step, h)
        self._raise_callback_error()

    def _call(self, fn: Callable[..., Any], *args: Any) -> Any:
        raise NotImplementedError

    def _raise_callback_error(self) -> None:
        raise NotImplementedError

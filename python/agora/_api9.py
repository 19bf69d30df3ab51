"""What libagora API 9 added for the one-shot commands, bound for a program or a notebook: an agent's
memories in the current chat (World takes them from _MemoryCalls), a chat or a world's settings as
Markdown (`agora chats export --format md`, `agora worlds export --format md`), the id a display name
makes and a check of an option's value. On an older libagora each raises AgoraError (STATE)."""
from __future__ import annotations

from typing import Optional, Union

from ._base import Event, _b, _check, _Handle, _id_call, _json_text, _need, _text_call
from ._lib import lib


class _MemoryCalls(_Handle):
    """World's API-9 calls (World is one: _h() is the open world's handle)."""

    def memories(self, agent: str, query: Optional[str] = None) -> Event:
        """What agent (name or id; one with "memory": {"mode": "stream"}) remembers in the current chat:
        {"chat", "agent", "memories": [{"seq", "time", "sender", "text", "importance", "sources"?}]},
        oldest first; with query the 50 that score best for it, best first, each with "scores" {"recency",
        "importance", "relevance", "total"} and "query" in the dict. Sends nothing anywhere: an agent whose
        embedder is hosted is ranked without relevance, and "relevance_left_out" says why (Database.memories
        asks the embedder). NOT_FOUND for an unknown agent, INVALID for one that keeps no stream, STATE
        without a current chat (API 9)."""
        _need(9, "World.memories")
        return self._json_out(lib.agora_memories, _b(agent), _b(query))

    def export_markdown(self, chat: Optional[str] = None) -> str:
        """A chat (None: the current one) as the Markdown of `agora chats export --format md` (API 9)."""
        _need(9, "World.export_markdown")
        return snapshot_markdown(_text_call(lib.agora_chat_export, self._h(), _b(chat)))

    def settings_markdown(self) -> str:
        """The world's settings and agents (settings()) as the Markdown of `agora worlds export --format
        md` (API 9)."""
        _need(9, "World.settings_markdown")
        return world_markdown(_text_call(lib.agora_settings, self._h()))


def snapshot_markdown(snapshot: Union[Event, str]) -> str:
    """A snapshot document (a dict or JSON text, as World.export or Database.export give it) as the
    Markdown of `agora chats export --format md`; INVALID for malformed JSON, TOO_BIG past 256 MiB.
    Opens nothing (libagora API 9)."""
    _need(9, "agora.snapshot_markdown")
    return _text_call(lib.agora_snapshot_markdown, _b(_json_text(snapshot)))


def world_markdown(settings: Union[Event, str]) -> str:
    """A world's settings in world-file form (World.settings(), Database.world(w)["settings"], or a world
    file's JSON) as the Markdown of `agora worlds export --format md` (libagora API 9)."""
    _need(9, "agora.world_markdown")
    return _text_call(lib.agora_world_markdown, _b(_json_text(settings)))


def name_id(name: str) -> str:
    """The id a display name makes (a world's or an agent's: "Starter 2" is "starter-2"); INVALID when it
    makes none (it must start with a letter or digit, then hold only letters, digits, '_', '-' and
    spaces, at most 63; libagora API 9)."""
    _need(9, "agora.name_id")
    return _id_call(lib.agora_name_id, _b(name))


def option_check(field: str, value: str) -> None:
    """Raises AgoraError (INVALID, saying what is expected) unless value is one World.open takes for
    field ("provider": script, openai, anthropic, gemini, ollama; "llm_cache": off, use, replay), so that a
    program refuses a bad argument before it opens anything; an unknown field is INVALID too (API 9)."""
    _need(9, "agora.option_check")
    _check(lib.agora_option_check(_b(field), _b(value)))

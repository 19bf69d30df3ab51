"""A world's chats (World takes these from _ChatCalls): the current chat's past edited (API 6), and its
chats listed, read, exported, imported, branched, deleted, made and loaded (API 1)."""
from __future__ import annotations

import ctypes
import json
from typing import List, Optional, Union

from . import _lib
from ._base import Event, _b, _check, _Handle, _need
from ._lib import lib


class _ChatCalls(_Handle):
    """World's calls on its chats (World is one: _h() is the open world's handle)."""

    def edit(self, text: str, seq: int = 0) -> int:
        """Replaces human message seq (0: the last human one) of the current chat by text and sends it
        again (what came after it goes; run() delivers the answers); returns the last message kept.
        NOT_FOUND for no such message, INVALID when it is not the human's; STATE while an agent is
        thinking or without a database (API 6)."""
        _need(6, "World.edit")
        kept = ctypes.c_uint64()
        _check(lib.agora_chat_edit(self._h(), int(seq), _b(text), ctypes.byref(kept)))
        return kept.value

    def retry(self) -> int:
        """Sends the current chat's last human message again (what came after it goes); returns the
        last message kept (API 6)."""
        _need(6, "World.retry")
        kept = ctypes.c_uint64()
        _check(lib.agora_chat_retry(self._h(), ctypes.byref(kept)))
        return kept.value

    def cut(self, seq: int) -> None:
        """Takes message seq of the current chat and every one after it away, any sender's; nothing is
        sent (NOT_FOUND for no such message; API 6)."""
        _need(6, "World.cut")
        _check(lib.agora_chat_cut(self._h(), int(seq)))

    def forget(self, agent: str) -> None:
        """Clears agent's (name or id) memory, turn count and saved context in the current chat (a
        memory-cleared event; NOT_FOUND for an unknown agent; API 6)."""
        _need(6, "World.forget")
        _check(lib.agora_agent_forget(self._h(), _b(agent)))

    def set_title(self, title: str) -> None:
        """Renames the current chat (NOT_FOUND without one; API 6)."""
        _need(6, "World.set_title")
        _check(lib.agora_chat_title(self._h(), _b(title)))

    def chats(self) -> List[Event]:
        """This world's chats, most recently updated first (dicts: id, title, message_count, ...)."""
        return self._json_out(lib.agora_chats)

    def transcript(self, chat: Optional[str] = None) -> List[Event]:
        """A chat's messages and thread steps in order (the current chat by default)."""
        return self._json_out(lib.agora_transcript, _b(chat))

    def usage(self, chat: Optional[str] = None) -> List[Event]:
        """Tokens per agent in a chat: dicts of agent, calls, input_tokens, output_tokens."""
        return self._json_out(lib.agora_usage, _b(chat))

    def export(self, chat: Optional[str] = None) -> Event:
        """A chat's snapshot document (what `agora chats export` writes)."""
        return self._json_out(lib.agora_chat_export, _b(chat))

    def import_snapshot(self, snapshot: Union[Event, str]) -> str:
        """Imports a snapshot (a dict or JSON text) as a new chat; returns its id."""
        text = snapshot if isinstance(snapshot, str) else json.dumps(snapshot)
        out = (ctypes.c_char * _lib.ID_MAX)()
        _check(lib.agora_chat_import(self._h(), _b(text), out))
        return out.value.decode()

    def branch(self, chat: Optional[str], seq: int) -> str:
        """A new chat with messages 1..seq of chat and the agents' state right after; returns its id."""
        out = (ctypes.c_char * _lib.ID_MAX)()
        _check(lib.agora_chat_branch(self._h(), _b(chat), seq, out))
        return out.value.decode()

    def delete_chat(self, chat: str) -> None:
        """Deletes a chat of this world (id or unique prefix) with its messages; NOT_FOUND for none."""
        _check(lib.agora_chat_delete(self._h(), _b(chat)))

    def new_chat(self) -> str:
        """Makes a new chat current; returns its id."""
        _check(lib.agora_chat_new(self._h()))
        c = lib.agora_chat_current(self._h())
        return c.decode() if c else ""

    def load_chat(self, chat: str) -> None:
        """Makes a chat of this world current, its agents' memories restored."""
        _check(lib.agora_chat_load(self._h(), _b(chat)))

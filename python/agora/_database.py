"""agora.Database (a database without a world, API 2 on) and what needs no world at all: the LLM
response cache and a snapshot's transcript (API 4)."""
from __future__ import annotations

import ctypes
import json
from typing import Any, Callable, Iterable, List, Optional, Union

from . import _lib
from ._api9 import snapshot_markdown, world_markdown
from ._base import AgoraError, Event, _b, _check, _Handle, _id_call, _json_call, _json_text, _need, _text_call
from ._lib import lib
from ._options import _strings


class Database(_Handle):
    """A database's chats and worlds with no world opened: no agent, no loop, nothing started, no chat
    taken (what `agora chats` and `agora worlds` do). Chats are named by id or unique prefix, worlds by
    id or name.

    with agora.Database.open("./db", read_only=True) as db:
        rows = db.chats()                      # every world's, most recently updated first
    Needs libagora API version 2 (AgoraError otherwise). A process opens a database directory once:
    not as a Database and a World at the same time."""

    def __init__(self, handle: ctypes.c_void_p):
        self._db: Optional[ctypes.c_void_p] = handle

    @classmethod
    def open(cls, db: Optional[str] = None, *, read_only: bool = False) -> "Database":
        """Opens the database in db (None: the default one), created when missing unless read_only;
        read_only on a missing database raises AgoraError with code ERR_NOT_FOUND."""
        _need(2, "agora.Database")
        handle = ctypes.c_void_p()
        _check(lib.agora_db_open(_b(None if db is None else str(db)), _lib.DB_READ if read_only else 0,
                                 ctypes.byref(handle)))
        return cls(handle)

    def close(self) -> None:
        """Closes the database (a Loop's: releases it; the worlds open on the loop keep theirs). Idempotent."""
        if self._db:
            db, self._db = self._db, None
            lib.agora_db_close(db)

    @property
    def closed(self) -> bool:
        """Whether close() was called (or the Loop that gave it closed): every call then raises (STATE)."""
        return not self._db

    def _h(self) -> ctypes.c_void_p:
        if not self._db:
            raise AgoraError(_lib.ERR_STATE, "the database is closed")
        return self._db

    def _id_out(self, fn: Callable[..., int], *args: Any) -> str:
        return _id_call(fn, self._h(), *args)

    def chats(self, world: Optional[str] = None) -> List[Event]:
        """The chats of world (None: of every world), most recently updated first (dicts)."""
        return self._json_out(lib.agora_db_chats, _b(world))

    def export(self, chat: str) -> Event:
        """A chat's snapshot document (what `agora chats export` writes)."""
        return self._json_out(lib.agora_db_chat_export, _b(chat))

    def import_snapshot(self, snapshot: Union[Event, str], source: Optional[str] = None) -> str:
        """Imports a snapshot (a dict or JSON text) as a new chat; returns its id. source names it in errors."""
        text = snapshot if isinstance(snapshot, str) else json.dumps(snapshot)
        return self._id_out(lib.agora_db_chat_import, _b(text), _b(source))

    def branch(self, chat: str, seq: int) -> str:
        """A new chat with messages 1..seq of chat and the agents' state right after; returns its id."""
        return self._id_out(lib.agora_db_chat_branch, _b(chat), seq)

    def delete_chat(self, chat: str) -> Optional[str]:
        """Deletes a chat; returns its world's current chat afterwards (None when none)."""
        return self._id_out(lib.agora_db_chat_delete, _b(chat)) or None

    def new_chat(self, world: Optional[str] = None) -> str:
        """Makes a new chat current in world (None: the only one); returns its id."""
        return self._id_out(lib.agora_db_chat_new, _b(world))

    def _show(self, name: str, chat: str) -> Any:
        _need(3, f"agora.Database.{name}")
        fn = {"chat": lib.agora_db_chat_info, "transcript": lib.agora_db_transcript, "usage": lib.agora_db_usage,
              "state": lib.agora_db_chat_state}[name]
        return self._json_out(fn, _b(chat))

    def chat(self, chat: str) -> Event:
        """A chat's row, as chats() lists it (API version 3)."""
        return self._show("chat", chat)

    def transcript(self, chat: str) -> List[Event]:
        """A chat's messages and thread steps in order, as World.transcript (API version 3)."""
        return self._show("transcript", chat)

    def usage(self, chat: str) -> List[Event]:
        """A chat's token usage per agent, as World.usage (API version 3)."""
        return self._show("usage", chat)

    def state(self, chat: str) -> List[Event]:
        """The context each agent saved in a chat: {"version", "updated_at", "data", "agent"} (API version 3)."""
        return self._show("state", chat)

    # ---- worlds (API 4; `agora worlds`) ----

    def worlds(self) -> List[Event]:
        """The worlds the database holds: {"id", "name", "agents", "chats", "current_chat"} each, as
        `agora worlds list --json` prints them (API version 4)."""
        _need(4, "agora.Database.worlds")
        return self._json_out(lib.agora_db_worlds)

    def world(self, world: str) -> Event:
        """One world (id or name) with its stored settings in world-file form (no script, no secrets):
        {"id", "name", "chats", "current_chat", "settings"}; INVALID for an unknown world (API version 4)."""
        _need(4, "agora.Database.world")
        return self._json_out(lib.agora_db_world, _b(world))

    def delete_world(self, world: str) -> Event:
        """Deletes a world (id or name) with all its chats; returns {"id", "chats"} (how many went with
        it). STORAGE on a database opened read_only (API version 4)."""
        _need(4, "agora.Database.delete_world")
        out, n = (ctypes.c_char * _lib.ID_MAX)(), ctypes.c_size_t()
        _check(lib.agora_db_world_delete(self._h(), _b(world), out, ctypes.byref(n)))
        return {"id": out.value.decode(), "chats": n.value}

    # ---- memories, ids and Markdown (API 9) ----

    def memories(self, chat: str, agent: str, query: Optional[str] = None, allow_key_to: Iterable[str] = (),
                 notes: bool = False) -> Event:
        """What agent remembers in chat (id or unique prefix), as World.memories gives it, from the database
        alone (what `agora memory` prints): the chat's stored world is opened for the call, inert, and
        closed. With query and a hosted embedder the query is embedded first, blocking until it answers;
        the key goes to a stored world's base_url only when allow_key_to (at most 16 URLs) holds it. An
        embedder that fails is no error: the memories come without relevance and "embedder_failed" says
        why. notes=True prints the LLM layer's warnings on stderr as the open does. NOT_FOUND for an
        unknown chat or agent, INVALID for an agent that keeps no stream; STORAGE on a database opened
        read_only (opening the world writes, as `agora memory` does). Blocks: not from a callback (API 9)."""
        _need(9, "agora.Database.memories")
        urls, n = _strings(allow_key_to, [])
        return self._json_out(lib.agora_db_memories, _b(chat), _b(agent), _b(query), urls, n,
                              _lib.NOTES if notes else 0)

    def chat_id(self, chat: str) -> str:
        """The id of chat (an id or a unique prefix; an exact id wins over longer ids it starts), as every
        call naming a chat resolves it: NOT_FOUND when none matches, INVALID naming them when several do
        (API 9)."""
        _need(9, "agora.Database.chat_id")
        return self._id_out(lib.agora_db_chat_id, _b(chat))

    def export_markdown(self, chat: str) -> str:
        """A chat as the Markdown of `agora chats export --format md` (API 9)."""
        _need(9, "agora.Database.export_markdown")
        return snapshot_markdown(_text_call(lib.agora_db_chat_export, self._h(), _b(chat)))

    def world_markdown(self, world: str) -> str:
        """A stored world's settings (id or name) as the Markdown of `agora worlds export --format md`
        (API 9)."""
        _need(9, "agora.Database.world_markdown")
        return world_markdown(self.world(world)["settings"])

    # ---- what a server reads and writes (API 10, 12) ----

    def create_world(self, world: Union[Event, str]) -> str:
        """Stores world JSON someone else wrote (a dict or JSON text, e.g. an HTTP body) as a new world
        without opening it, held to a stored world's rules (no MCP server ever starts, no key goes to its
        own base_url); returns its id. INVALID naming the JSON path ("world: agents[0].provider: ..."),
        EXISTS when the database has its id, TOO_BIG past 1 MiB (API 10)."""
        _need(10, "agora.Database.create_world")
        return self._id_out(lib.agora_db_world_create, _b(_json_text(world)))

    def counts(self) -> Event:
        """The commits made through this handle since it was opened and how many are on disk: {"commits",
        "synced"} (a Loop's database counts its worlds'; API 10)."""
        _need(10, "agora.Database.counts")
        return self._json_out(lib.agora_db_counts)

    def chat_graph(self, chat: str, nodes: int = 50, points: int = 100) -> Event:
        """A stored chat's graph, cut to a size a page can draw (`agora serve`'s …/graph): {"chat", "last_seq",
        "nodes", "more_nodes", "edges", "tokens", "timeline"}: the nodes busiest senders (1 to 500), the
        tokens summed at points message numbers (1 to 1000): INVALID past them, NOT_FOUND for no such chat
        (API 10)."""
        _need(10, "agora.Database.chat_graph")
        if nodes < 1 or points < 1:  # C's 0 means the default, and a negative one would wrap
            raise AgoraError(_lib.ERR_INVALID, f"agora.Database.chat_graph: nodes {nodes}, points {points}: "
                                               "each must be at least 1")
        return self._json_out(lib.agora_db_chat_graph, _b(chat), int(nodes), int(points))

    def messages(self, chat: str, start: int = 0, limit: int = 0) -> List[Event]:
        """A window of a stored chat's messages, as World.messages gives one, with no world open: from
        message start on, or with start 0 the last limit; at most limit (0: no limit); [] past the last.
        NOT_FOUND for an unknown chat (API 12)."""
        _need(12, "agora.Database.messages")
        if start < 0 or limit < 0:
            raise AgoraError(_lib.ERR_INVALID, f"agora.Database.messages: start {start}, limit {limit}: neither "
                                               "may be negative")
        return self._json_out(lib.agora_db_messages, _b(chat), int(start), int(limit))

    def search(self, chat: str, text: str, after: int = 0, limit: int = 50) -> Event:
        """The messages of a stored chat whose text or sender holds text (1 to 255 bytes; ASCII letters
        without case), numbered after after, oldest first, at most limit: {"matches": [...], "more": bool},
        more True when a next page exists (ask again with after= the last match's "seq"). One pass on the
        database's side (`agora serve`'s …/search). INVALID for an empty text or a limit below 1, NOT_FOUND
        for an unknown chat (API 14)."""
        _need(14, "agora.Database.search")
        if after < 0 or limit < 1:
            raise AgoraError(_lib.ERR_INVALID, f"agora.Database.search: after {after}, limit {limit}: after may "
                                               "not be negative, limit must be at least 1")
        return self._json_out(lib.agora_db_search, _b(chat), _b(text), int(after), int(limit))


def _path(p: Any) -> Optional[bytes]:
    return None if p is None else _b(str(p))


def cache_stats(db: Optional[str] = None, cache_dir: Optional[str] = None) -> Event:
    """The LLM response cache's counts (`agora cache`): {"entries", "bytes", "oldest", "newest"}, times
    ISO 8601 or None. The cache is cache_dir, else llm-cache in db (None: the default database
    directory), created when missing and opened for the call only (libagora API 4)."""
    _need(4, "agora.cache_stats")
    return _json_call(lib.agora_cache_stats, _path(db), _path(cache_dir))


def cache_clear(db: Optional[str] = None, cache_dir: Optional[str] = None, before_ms: Optional[int] = None) -> int:
    """Removes the cache's entries stored before before_ms (ms since the epoch; None: every one) and
    returns how many; STORAGE when the cache cannot be written (libagora API 4)."""
    _need(4, "agora.cache_clear")
    removed = ctypes.c_size_t()
    _check(lib.agora_cache_clear(_path(db), _path(cache_dir), _INT64_MAX if before_ms is None else int(before_ms),
                                 ctypes.byref(removed)))
    return removed.value


_INT64_MAX = (1 << 63) - 1


def snapshot_transcript(snapshot: Union[Event, str], source: Optional[str] = None) -> List[Event]:
    """A snapshot document's transcript (a dict or JSON text, as World.export gives it), as transcript()
    gives a stored chat's, without importing it or opening anything (`agora replay SNAPSHOT.json`).
    source names it in errors; INVALID naming the field, VERSION for a newer format (libagora API 4)."""
    _need(4, "agora.snapshot_transcript")
    text = snapshot if isinstance(snapshot, str) else json.dumps(snapshot)
    return _json_call(lib.agora_snapshot_transcript, _b(text), _b(source))

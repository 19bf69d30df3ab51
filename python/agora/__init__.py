"""Agora's multi-agent worlds in-process, on libagora (include/agora.h) through ctypes.

    import agora
    with agora.World.open("town.json", db="./db") as w:
        replies = w.say("@mayor hello")          # the agents' messages, as dicts
        for ev in w.run():                       # every message and event until the world is quiet
            ...
        rows = w.transcript()                    # a list of dicts: pandas.DataFrame(rows)

Events are the dicts `agora run --json` prints (docs/cli.md): {"type": "message", "sender", "kind",
"text", "seq", ...} or {"type": "event", "event": "llm-error", ...}; an approval or ask_human question
arrives as {"type": "approval-request" | "ask-human", "id", "agent", "tool", "args", "question"} and is
answered with World.answer. Several worlds run together on one agora.Loop. Errors are AgoraError with Agora's message and code; nothing here ends the
interpreter: a bad world file, a closed world, a raising callback and Ctrl-C all raise.
"""
from __future__ import annotations

import asyncio
import contextlib
import ctypes
import json
import signal
import threading
import time
from typing import Any, AsyncIterator, Callable, Dict, Iterable, Iterator, List, Optional, Union

from . import _lib
from ._api9 import _MemoryCalls, name_id, option_check, snapshot_markdown, world_markdown
from ._base import AgoraError, Event, _b, _check, _need
from ._chats import _ChatCalls
from ._console import _ConsoleCalls, duration_ms
from ._database import Database, cache_clear, cache_stats, snapshot_transcript
from ._loop import Loop, _Driver
from ._server import _ServerCalls
from . import _options
from ._lib import lib

__all__ = ["World", "Loop", "Database", "AgoraError", "version", "API_VERSION", "cache_stats", "cache_clear",
           "snapshot_transcript", "duration_ms", "name_id", "option_check", "snapshot_markdown", "world_markdown"]
__version__ = "0.1.0"
API_VERSION = _lib.API_VERSION
_API = lib.agora_api_version()  # the loaded library's

_BUFFER_BYTES = 256 << 20  # the pull buffer between two takes (one slice of the loop)
_SLICE_MS = 50             # the loop runs in slices so that Ctrl-C is seen within one


def version() -> str:
    """The loaded libagora's version ("0.1.0")."""
    return lib.agora_version().decode()


def _parse_lines(data: bytes) -> List[Event]:
    """NDJSON from agora_events_take in one json.loads: JSON escapes newlines inside strings, so the
    lines joined by commas are one array. Decoded to str first: json.loads of bytes sniffs the
    encoding and is ~10% slower per slice."""
    if not data:
        return []
    return json.loads("[" + data[:-1].replace(b"\n", b",").decode("utf-8") + "]")


def _sigint_take(handler: Any) -> Any:
    """Installs handler for SIGINT and returns the one before; nothing off the main thread (only it
    may, and only it receives signals)."""
    if handler is None or threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGINT, handler)


def _advancing(h: ctypes.c_void_p) -> bool:
    """Whether a clock advance (API 6) is under way: agora_is_quiet does not count it, the run functions do."""
    return _API >= 6 and bool(lib.agora_clock_advancing(h))


class World(_ChatCalls, _ConsoleCalls, _MemoryCalls, _ServerCalls):
    """An open world: its agents, its loop and (with a database) its current chat.

    Make one with World.open(...); close it with close() or a with block. A World is used from one
    thread at a time; callbacks run inside run(), say() and the other calls that run the loop."""

    def __init__(self, handle: Optional[ctypes.c_void_p] = None):
        self._w: Optional[ctypes.c_void_p] = None
        self._subs: Dict[int, Any] = {}      # subscription -> its ctypes callback (kept alive)
        self._keep: List[Any] = []           # what the open's options point to (on_event) until close
        self._drv = _Driver()                # a callback's error and the run under way (the Loop's, on one)
        self._loop: Optional[Loop] = None
        self._answered = 0
        self._stop = False                   # interrupt(): run_until_interrupt ends
        # agora_events_take's out-arguments, made once: a take runs after every slice of the loop
        self._take_ptr, self._take_len = ctypes.c_void_p(), ctypes.c_size_t()
        self._take_args = (ctypes.byref(self._take_ptr), ctypes.byref(self._take_len))
        if handle:
            self._attach(handle)

    def _attach(self, handle: ctypes.c_void_p) -> None:
        self._w = handle
        _check(lib.agora_events_buffer(self._w, _BUFFER_BYTES))

    # ---- opening and closing ----

    @classmethod
    def open(cls, world: Union[str, Event, None], db: Optional[str] = None, *, save: bool = True,
             new_chat: bool = False, chat: Optional[str] = None, from_store: bool = False, model: Optional[str] = None,
             provider: Optional[str] = None, base_url: Optional[str] = None, allow_env: Iterable[str] = (),
             stream: bool = False, auto_approve: bool = False, mcp: bool = True, notes: bool = False,
             program: Optional[str] = None, allow_key_to: Iterable[str] = (), llm_cache: Optional[str] = None,
             cache_db: Optional[str] = None, on_event: Optional[Callable[[Event], Any]] = None,
             script: bool = False, clock: bool = True, nats_url: Optional[str] = None,
             nats_creds: Optional[str] = None, nats_ca: Optional[str] = None, nats_replicas: int = 0,
             tools_only: bool = False, host: bool = False, nats_agents: Union[str, Iterable[str], None] = None,
             nats_lease_ms: int = 0, view: bool = False, loop: Optional[Loop] = None, untrusted: bool = False,
             sync: Optional[str] = None) -> "World":
        """Opens a world: a world file's path, world JSON text ("{...}") or a dict of it, or a stored world's
        id or name.

        db: the database directory (None: the default one); save=False: no database at all.
        new_chat starts a new chat; chat continues a stored one (id or prefix); otherwise the world's
        current chat is continued. model/provider/base_url override every agent's. allow_env names
        environment variables agents may use as api_key_env. stream reports llm-chunk events.
        auto_approve approves every tool call that asks. mcp=False starts no MCP servers.
        API 3: notes=True prints the notes for a person on stderr as `agora` does (and the cluster's on
        NATS; else nothing is printed), program names the program in them; allow_key_to: base URLs a
        stored world's agents may send their key to; llm_cache "off" | "use" | "replay" in cache_db;
        on_event(event) is subscribed before the world starts, so it also sees what opening produces.
        API 4: script=True refuses a stored world without a schedule (`agora run`); clock=False drives no
        schedule (world may then be None with chat: the chat's world); nats_url (nats_creds, nats_ca,
        nats_replicas) joins the world's stream on NATS as its publisher.
        API 5: tools_only=True opens it only for tools(); host=True with nats_url answers for a share of
        its agents (or nats_agents, names or ids) with leases of nats_lease_ms: run it with
        run_until_interrupt(). API 7: view=True with nats_url and a database joins as a viewer (`agora
        console --nats`): the stream's chat is current and followed, what only this process would hold
        raises STATE. API 8: loop=agora.Loop() runs it on that loop with other worlds (Loop.open).
        API 10: untrusted=True takes world (JSON text or a dict) as someone else's (an HTTP body): stored
        as a new world, then opened as a stored world (its MCP servers never start, its agents' keys go
        only to their provider's URL or allow_key_to; EXISTS when its id is stored); sync="background"
        with loop and a database lets a storage thread sync the commits (sync="full": each on disk first).
        A keyword of a newer API than the library's raises AgoraError (STATE).
        Raises AgoraError (code INVALID for a bad file or option, naming the field)."""
        kw = dict(locals())
        if isinstance(world, dict):  # world JSON as a dict (any open takes it; untrusted=True needs JSON)
            world = json.dumps(world)
        w = cls()
        if loop is not None:
            loop._on_thread("World.open(loop=)")
            w._drv = loop._drv
        opts, w._keep = _options.make(kw, w._trampoline(on_event) if on_event else None)
        handle = ctypes.c_void_p()
        _check(w._call(lib.agora_world_open, None if world is None else _b(str(world)),
                       _b(None if db is None else str(db)), ctypes.byref(opts), ctypes.byref(handle)))
        w._attach(handle)
        if loop is not None:
            w._loop = loop
            loop._joined(w)
        if w._drv.error is not None:  # on_event raised while the world opened
            w.close()
            w._raise_callback_error()
        return w

    def close(self) -> None:
        """Cancels the replies in flight, saves what was published, frees the world. Idempotent;
        AgoraError (STATE) from a callback while the library runs the world's loop."""
        if self._w:
            self._drv.refuse_close("World.close")
            w, self._w = self._w, None
            prev = self._drv.enter(w)  # its last events still reach the callbacks: none may close
            try:
                lib.agora_world_close(w)
            finally:
                self._drv.leave(prev)
            self._subs.clear()
            self._keep.clear()
            if self._loop is not None:
                self._loop._left(self)

    def _call(self, fn: Callable[..., Any], *args: Any) -> Any:
        """fn(*args), a libagora call that may run the loop and so the callbacks: marked as running."""
        prev = self._drv.enter(self._w)
        try:
            return fn(*args)
        finally:
            self._drv.leave(prev)

    @property
    def loop(self) -> Optional[Loop]:
        """The agora.Loop the world runs on, or None: a loop of its own (API 8)."""
        return self._loop

    @property
    def closed(self) -> bool:
        """Whether close() was called (or its Loop closed it): every call then raises AgoraError (STATE)."""
        return self._w is None

    def _h(self) -> ctypes.c_void_p:
        if not self._w:
            raise AgoraError(_lib.ERR_STATE, "the world is closed")
        if self._loop is not None:  # the library checks its run functions only; a publish would race
            self._loop._on_thread("World")
        return self._w

    @property
    def id(self) -> str:
        """The world's id (what a stored world is opened by, and each event's "world")."""
        return lib.agora_world_id(self._h()).decode()

    @property
    def name(self) -> str:
        """The world's display name (its file's "name")."""
        return lib.agora_world_name(self._h()).decode()

    @property
    def current_chat(self) -> Optional[str]:
        """The current chat's id, or None (save=False, or no chat)."""
        c = lib.agora_chat_current(self._h())
        return c.decode() if c else None

    def __repr__(self) -> str:
        return "<agora.World closed>" if self.closed else f"<agora.World {self.name!r} chat={self.current_chat}>"

    # ---- publishing and running ----

    def publish(self, text: str, sender: str = "human") -> None:
        """Publishes text from sender ("human", "world" or an agent's id); agents answer as the loop runs."""
        _check(lib.agora_publish(self._h(), _b(sender), _b(text)))

    def say(self, text: str, sender: str = "human") -> List[Event]:
        """Publishes text and runs the world until it is quiet; returns the agents' messages (dicts).
        Requests (approvals, ask_human) left unanswered stop it early: see run() and answer()."""
        self.publish(text, sender)
        return [ev for ev in self.run() if ev.get("type") == "message" and ev.get("kind") in ("agent", "turn-limit")]

    def _take(self) -> List[Event]:
        ptr, n = self._take_ptr, self._take_len
        rc = lib.agora_events_take(self._h(), self._take_args[0], self._take_args[1])
        data = ctypes.string_at(ptr, n.value) if ptr.value else b""
        if ptr.value:
            lib.agora_free(ptr)
        _check(rc)
        return _parse_lines(data)

    def _raise_callback_error(self) -> None:
        self._drv.take_error()

    def run(self, timeout: Optional[float] = None) -> Iterator[Event]:
        """Runs the world until it is quiet, yielding every message and event (dicts) as it happens.

        Stops when the world is quiet, after timeout seconds, or when agents wait for answers that
        the loop body did not give (answer them with answer() while iterating). Ctrl-C cancels the
        replies in flight, delivers what was published and raises KeyboardInterrupt; the world stays
        usable. A subscribed callback's exception is raised from here. Ends too when a callback closed the
        world with close_later (its last events then reach only its subscribers)."""
        h, d = self._h(), self._drv
        end = None if timeout is None else time.monotonic() + timeout
        try:
            while True:
                answered = self._answered
                d.busy += 1  # self._call inlined: say() goes through here once per call
                prev, d.running = d.running, h
                try:
                    rc = lib.agora_run_for(h, _SLICE_MS)
                finally:
                    d.busy, d.running = d.busy - 1, prev
                if self._w is None:  # a callback's close_later: the world is the library's (its events too)
                    d.take_error()
                    return
                yield from self._take()
                if d.error is not None:
                    d.take_error()
                if rc == _lib.WAITING and self._answered == answered:
                    return
                if rc < 0 and rc != _lib.ERR_CANCELLED:
                    _check(rc)
                if rc == _lib.OK and lib.agora_is_quiet(h) and not _advancing(h):
                    return
                if end is not None and time.monotonic() >= end:
                    return
        except KeyboardInterrupt:
            self._interrupted()
            raise

    def _interrupted(self) -> None:
        """Ctrl-C: the turns cancelled, what was published delivered and saved, the events dropped."""
        if not self._w:
            return
        lib.agora_cancel(self._w)
        self._call(lib.agora_run_for, self._w, 500)
        self._take()

    def cancel(self) -> None:
        """Cancels every reply in flight (a "cancelled" event names the agents); the world stays usable."""
        _check(lib.agora_cancel(self._h()))

    def interrupt(self) -> None:
        """Ends run_until_interrupt() (from a callback or its loop body) after the slice under way."""
        self._stop = True

    def run_until_interrupt(self, timeout: Optional[float] = None) -> Iterator[Event]:
        """Runs the world's loop, quiet or not, yielding its events, until interrupt(), timeout seconds
        or Ctrl-C (KeyboardInterrupt, the turns cancelled, the world usable): a host's life
        (World.open(..., host=True, nats_url=...)). The loop runs in agora_run_until_interrupt, which a
        tick every 50 ms stops to hand the events over (libagora API 5)."""
        _need(5, "World.run_until_interrupt")
        h = self._h()
        end = None if timeout is None else time.monotonic() + timeout

        def tick(_noted: List[int]) -> None:
            lib.agora_interrupt(h)
        self._stop = False
        with self._ticking(tick) as interrupted:
            while not self._stop and (end is None or time.monotonic() < end):
                rc = self._call(lib.agora_run_until_interrupt, h)
                if interrupted:
                    raise KeyboardInterrupt
                yield from self._take()
                self._raise_callback_error()
                _check(rc)

    def failed_calls(self) -> int:
        """The LLM calls that failed after their retries since the open (each an llm-error event; API 3)."""
        _need(3, "World.failed_calls")
        return int(lib.agora_failed_calls(self._h()))

    def unsaved(self) -> int:
        """Messages and thread steps of this session that could not be stored (0 without a database; API 3)."""
        _need(3, "World.unsaved")
        return int(lib.agora_unsaved(self._h()))

    def budget_spent(self) -> Event:
        """What the current chat has spent and whether the world's budget is spent (no new LLM call
        starts then): {"spent": bool, "tokens": int, "usd": float} (API 3)."""
        _need(3, "World.budget_spent")
        tokens, usd = ctypes.c_int64(), ctypes.c_double()
        spent = _check(lib.agora_budget_spent(self._h(), ctypes.byref(tokens), ctypes.byref(usd)))
        return {"spent": bool(spent), "tokens": tokens.value, "usd": usd.value}

    def clock_note(self) -> Optional[str]:
        """A sentence for a person when the world's virtual clock has something scheduled that a program
        which never moves the clock will not deliver, else None (API 3)."""
        _need(3, "World.clock_note")
        note = lib.agora_clock_note(self._h())
        return note.decode() if note else None

    def thinking(self) -> int:
        """How many agents have an LLM call in flight now (libagora API version 3)."""
        _need(3, "World.thinking")
        return int(lib.agora_thinking(self._h()))

    def is_thinking(self, agent: str) -> bool:
        """Whether agent (its name or id) has an LLM call in flight now (False for an unknown agent)."""
        _need(3, "World.is_thinking")
        return bool(lib.agora_agent_thinking(self._h(), _b(agent)))

    def run_until_quiet(self) -> None:
        """run() without the events (they are dropped)."""
        for _ in self.run():
            pass

    async def events(self) -> AsyncIterator[Event]:
        """run() for asyncio: the world's loop is driven from the running asyncio loop (its descriptor
        is watched with add_reader), so other tasks go on between events. Ends as run() does: once the
        world is quiet, or when its agents wait on requests that the loop body did not answer."""
        h = self._h()
        loop = asyncio.get_running_loop()
        fd = _check(lib.agora_fd(h))
        probed = False  # a pass found nothing ready: one more says WAITING before the fd is awaited
        try:
            while True:
                answered = self._answered
                # one pass of the loop without blocking, as agora_step, that also says AGORA_WAITING
                rc = self._call(lib.agora_run_for, h, 0)
                events = self._take()
                for ev in events:
                    yield ev
                self._raise_callback_error()
                if rc == _lib.WAITING and self._answered == answered:
                    return
                if rc < 0 and rc != _lib.ERR_CANCELLED:
                    _check(rc)
                if lib.agora_is_quiet(h) and not _advancing(h):  # as run(): done once quiet
                    return
                timeout = lib.agora_next_timeout(h)
                if timeout == 0 or not probed:
                    probed = timeout != 0
                    await asyncio.sleep(0)
                    continue
                probed = False
                ready = loop.create_future()
                loop.add_reader(fd, lambda: ready.done() or ready.set_result(None))
                try:
                    await asyncio.wait_for(ready, None if timeout < 0 else timeout / 1000)
                except asyncio.TimeoutError:
                    pass
                finally:
                    loop.remove_reader(fd)
        except (asyncio.CancelledError, KeyboardInterrupt):
            self._interrupted()  # Ctrl-C (asyncio.run cancels the task), or the task cancelled: as run()
            raise

    def __aiter__(self) -> AsyncIterator[Event]:
        """`async for ev in world`: events()."""
        return self.events()

    # ---- callbacks and requests ----

    def subscribe(self, fn: Callable[[Event], Any]) -> int:
        """Calls fn(event) for every message and event from now on (from inside run() and friends).
        An exception fn raises stops the run and is raised from it. Returns an id for unsubscribe."""
        cb = self._trampoline(fn)
        sub = _check(lib.agora_subscribe(self._h(), cb, None))
        self._subs[sub] = cb
        return sub

    def _trampoline(self, fn: Callable[[Event], Any], convert: Optional[Callable[[int], Event]] = None) -> Any:
        """fn as a libagora event callback, given each event as convert makes it (None: its JSON parsed): an
        exception it raises is kept (raised by the run) and stops the loop, since it must never unwind
        through C."""
        def trampoline(ev: int, _ctx: int) -> None:
            try:
                fn(convert(ev) if convert else json.loads(lib.agora_event_json(ev)))
            except BaseException as e:
                if self._drv.error is None:
                    self._drv.error = e
                # the run under way (another world's, on a Loop), else this world (None while it opens)
                w = self._drv.running or self._w or (lib.agora_event_world(ev) if _API >= 3 else None)
                if w:
                    lib.agora_interrupt(w)
        return _lib.EVENT_FN(trampoline)

    def unsubscribe(self, sub: int) -> None:
        """Ends a subscription (the id subscribe returned); its callback is called no more."""
        _check(lib.agora_unsubscribe(self._h(), sub))
        self._subs.pop(sub, None)

    def answer(self, request: Union[int, Event], answer: Union[bool, str]) -> None:
        """Answers a request (its event or its id): True/False allows or denies a tool call; a string
        answers an ask_human question (False: nobody answers)."""
        rid = request["id"] if isinstance(request, dict) else int(request)
        if isinstance(answer, str):
            _check(lib.agora_reply(self._h(), rid, 1, _b(answer)))
        else:
            _check(lib.agora_answer(self._h(), rid, 1 if answer else 0))
        self._answered += 1

    # ---- the script (API 4), tools (API 5), changes and the clock (API 6) ----

    def _drive(self, step: Callable[[], int]) -> Iterator[Event]:
        """Runs one blocking script call, then yields the events it delivered; True when the clock's
        `until` ended the script (AGORA_ENDED)."""
        rc = self._call(step)
        yield from self._take()
        self._raise_callback_error()
        if rc < 0:
            _check(rc)
        return rc == _lib.ENDED

    def script_steps(self) -> int:
        """How many steps the world file's script has (0 for a stored world; libagora API 4)."""
        _need(4, "World.script_steps")
        return int(lib.agora_script_steps(self._h()))

    def run_script(self) -> Iterator[Event]:
        """Runs the world file's script as `agora run` does, yielding its messages and events (dicts):
        each step until quiet on the world's clock (a virtual clock jumps to what is scheduled between
        steps), then the schedule until the clock's `until`, where the script ends early. The steps
        block inside libagora, so a step's events arrive when it ends; Ctrl-C cancels the step and raises
        KeyboardInterrupt, the world usable (libagora API 4)."""
        _need(4, "World.run_script")
        h = self._h()

        def tick(noted: List[int]) -> None:
            if noted:
                lib.agora_cancel(h)
        with self._ticking(tick) as interrupted:
            def unless_interrupted(rc: int) -> int:
                if interrupted:
                    raise KeyboardInterrupt
                return rc
            for i in range(lib.agora_script_steps(h)):
                if (yield from self._drive(lambda i=i: unless_interrupted(lib.agora_script_step(h, i)))):
                    return
            yield from self._drive(lambda: unless_interrupted(lib.agora_script_finish(h)))

    @contextlib.contextmanager
    def _ticking(self, tick: Callable[[List[int]], None]) -> Iterator[List[int]]:
        """Around a call that blocks in libagora: tick(noted) every slice on the world's loop, and SIGINT
        only noted in the list it gets (and the block yields). Python runs a signal's handler when the next
        Python frame starts, which during a blocking call is the tick's, where a KeyboardInterrupt could
        only be printed by ctypes: so the handler notes it, the tick stops the call, and the block raises.
        A KeyboardInterrupt from the block cancels the turns (the world stays usable)."""
        h = self._h()
        noted: List[int] = []
        old = _sigint_take(lambda *_: noted.append(1))

        def on_tick(_w: int, _ctx: int) -> None:
            tick(noted)
        cb = _lib.TICK_FN(on_tick)
        try:
            _check(lib.agora_tick(h, _SLICE_MS, cb, None))
            yield noted
        except KeyboardInterrupt:
            self._interrupted()
            raise
        finally:
            _sigint_take(old)
            if self._w:  # a tick keeps the loop from ever being quiet: only during the call
                lib.agora_tick(self._w, 0, _lib.TICK_FN(), None)

    def tools(self) -> Event:
        """Each agent's tools and the MCP servers' state: {"agents": [{"name", "tools": [{"name", "source",
        "approve", "description", "input_schema"}]}], "servers": [{"name", "ready", "error"}]} (API 5)."""
        _need(5, "World.tools")
        return self._json_out(lib.agora_world_tools)

    def settings(self) -> Event:
        """The world's settings and agents in world-file form (no script, no secret values; API 6)."""
        _need(6, "World.settings")
        return self._json_out(lib.agora_settings)

    def agents(self) -> List[Event]:
        """The agents as they are now: id, name, provider, model, turns, thinking, phase, memory,
        mcp_tools, input_tokens, output_tokens (API 6)."""
        _need(6, "World.agents")
        return self._json_out(lib.agora_agents)

    def change(self, **settings: Any) -> None:
        """Changes turn_limit, main_agent, memory_window or variables (None: the file's default), e.g.
        w.change(turn_limit=7). Checked as a world file is: AgoraError names the JSON path and nothing
        changes; ERR_STATE while an agent is thinking. Stored with the world (API 6)."""
        _need(6, "World.change")
        _check(lib.agora_settings_change(self._h(), _b(json.dumps(settings))))

    def add_agent(self, agent: Event) -> Event:
        """Adds an agent given as the world file's "agents" array holds one ({"name": "carol",
        "provider": "script", ...}); returns it as the world now has it (ERR_EXISTS for a taken id; API 6)."""
        _need(6, "World.add_agent")
        return self._json_out(lib.agora_agent_add, _b(json.dumps(agent)))

    def change_agent(self, name: str, **fields: Any) -> Event:
        """Changes an agent (name or id): provider, model, system_prompt, temperature, tools (None: the
        default); returns it as changed (ERR_NOT_FOUND for an unknown agent; API 6)."""
        _need(6, "World.change_agent")
        return self._json_out(lib.agora_agent_change, _b(name), _b(json.dumps(fields)))

    def remove_agent(self, name: str) -> None:
        """Removes an agent (name or id); ERR_STATE for the main_agent (API 6)."""
        _need(6, "World.remove_agent")
        _check(lib.agora_agent_remove(self._h(), _b(name)))

    def set_budget(self, tokens: int = 0, usd: float = 0.0) -> None:
        """Limits the current chat's tokens and dollars (0: no limit); stored with the world (API 6)."""
        _need(6, "World.set_budget")
        _check(lib.agora_budget_set(self._h(), int(tokens), float(usd)))

    def clock(self) -> Event:
        """The clock: {"mode": "virtual" | "real", "now", "next_due", "until", "advancing"}, times in
        ISO 8601 or None (API 6)."""
        _need(6, "World.clock")
        return self._json_out(lib.agora_clock)

    def advance(self, ms: int) -> List[Event]:
        """Lets ms milliseconds pass on a virtual clock, delivering what falls due one instant at a
        time, and runs the world until the advance has ended and it is quiet; returns the events (as
        list(run())). ERR_STATE on a real clock; ERR_INVALID for ms <= 0 (API 6)."""
        _need(6, "World.advance")
        _check(lib.agora_clock_advance(self._h(), int(ms)))
        return list(self.run())

"""agora.Loop: several worlds on one event loop (libagora API 8), and what a world shares with the
other worlds of its loop while the library runs it (_Driver): a callback's exception, and whether a
run is under way, so that nothing closes a world or the loop under the library's feet."""
from __future__ import annotations

import ctypes
import threading
import time
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterator, List, Optional, Tuple

from . import _lib
from ._base import AgoraError, Event, _b, _check, _Handle, _need
from ._database import Database
from ._lib import lib

if TYPE_CHECKING:
    from . import World


class _Driver:
    """What runs a world's loop, one per loop: a World of its own has its own, the worlds of an
    agora.Loop share the Loop's. busy counts the calls into libagora that may run callbacks (a close
    from one of them would free what the loop is using: refused); running is the world whose run
    function runs the loop now (a raising callback interrupts that run, whichever world it came from);
    error is the first exception a callback raised, raised by the run."""

    def __init__(self) -> None:
        self.busy = 0
        self.running: Optional[ctypes.c_void_p] = None
        self.error: Optional[BaseException] = None

    def enter(self, h: Optional[ctypes.c_void_p]) -> Optional[ctypes.c_void_p]:
        self.busy += 1
        prev, self.running = self.running, h
        return prev

    def leave(self, prev: Optional[ctypes.c_void_p]) -> None:
        self.busy -= 1
        self.running = prev

    def refuse_close(self, what: str) -> None:
        if self.busy:
            raise AgoraError(_lib.ERR_STATE, f"{what}: called from a callback while libagora runs the loop; "
                                             "close after the run returns")

    def take_error(self) -> None:
        err, self.error = self.error, None
        if err is not None:
            raise err


class _Closing:
    """A close_later under way: the library's callback (alive until it ran), what the world's callbacks
    need (alive until the world's last events are delivered) and the program's done."""

    def __init__(self, drv: _Driver, done: Optional[Callable[[str, int], Any]], keep: List[Any]) -> None:
        self.ended = False
        self.keep = keep

        def closed(world_id: bytes, rc: int, _ctx: int) -> None:
            self.ended = True
            try:
                if done is not None:
                    done(world_id.decode(), rc)
            except BaseException as e:
                if drv.error is None:
                    drv.error = e
        self.fn = _lib.CLOSED_FN(closed)


def _settled(w: "World") -> bool:
    """The world is quiet and no clock advance is under way (what the run functions wait for)."""
    h = w._w
    return bool(lib.agora_is_quiet(h)) and not (lib.agora_api_version() >= 6 and lib.agora_clock_advancing(h))


class Loop(_Handle):
    """An event loop that several worlds run on together (libagora API 8: agora_options.loop).

        with agora.Loop() as loop:
            town = loop.open("town.json", db="./db")
            farm = loop.open("farm.json", db="./db")     # one database handle for both
            town.publish("@mayor hello"); farm.publish("@farmer hi")
            for world, ev in loop.run():                  # both worlds, until every one is quiet
                print(world.name, ev)
            loop.world("Farm") is farm                    # looked up by id or name

    A run of one world (town.say(...), town.run()) runs the whole loop: the other worlds go on meanwhile
    and their events wait in their own World until that world's run() or loop.run() hands them over.
    Closing the Loop closes its worlds (and the databases it gave out) first; a World of a closed Loop is
    closed. A Loop and its worlds are used from one thread, the one that opened its first world. A
    callback that raises stops the run under way, whichever world it was given to, and its exception is
    raised from that run; Ctrl-C during loop.run() cancels every world's replies in flight and raises
    KeyboardInterrupt, the worlds usable. Nothing closes from a callback (AgoraError STATE) but
    World.close_later (API 10), which run() and close() then see through."""

    def __init__(self) -> None:
        """Makes the loop (libevent's event_base_new). AgoraError (STATE) on a libagora older than API 8."""
        self._base: Optional[int] = None
        _need(8, "agora.Loop")
        new, self._free = _lib.event_base("event_base_new"), _lib.event_base("event_base_free")
        if new is None or self._free is None:
            raise AgoraError(_lib.ERR_STATE, "agora.Loop: libevent's event_base_new is not reachable through "
                                             "libagora (a static libevent?)")
        self._drv = _Driver()
        self._worlds: List["World"] = []           # the World objects open on it, in the order they were opened
        self._dbs: List[Database] = []
        self._thread: Optional[int] = None
        self._closing: Dict[int, _Closing] = {}    # the worlds close_later is closing, by id(World)
        self._base = new()
        if not self._base:
            raise AgoraError(_lib.ERR_NOMEM, "agora.Loop: event_base_new failed")

    def _h(self) -> int:
        if not self._base:
            raise AgoraError(_lib.ERR_STATE, "the loop is closed")
        return self._base

    def _on_thread(self, what: str) -> None:
        if self._thread is not None and self._thread != threading.get_ident():
            raise AgoraError(_lib.ERR_STATE, f"{what}: the loop's worlds are used from the thread that opened "
                                             "the first of them")

    @property
    def closed(self) -> bool:
        """Whether close() was called: every call then raises AgoraError (STATE), as its worlds' do."""
        return not self._base

    def __repr__(self) -> str:
        return "<agora.Loop closed>" if self.closed else f"<agora.Loop worlds={[w.name for w in self._worlds]}>"

    def close(self) -> None:
        """Runs the loop until the closes World.close_later started are done, closes every world of the
        loop (the last opened first) and the databases database() gave, then frees the loop. Idempotent;
        AgoraError (STATE) from a callback of one of its worlds."""
        if not self._base:
            return
        self._drv.refuse_close("Loop.close")
        while self._closes_left():  # the closes close_later started need the loop until they are done
            self._dispatch()
        for w in reversed(list(self._worlds)):
            w.close()
        for db in self._dbs:
            db.close()
        self._dbs.clear()
        base, self._base = self._base, None
        self._free(base)

    # ---- its worlds ----

    def open(self, world: Optional[str], db: Optional[str] = None, **options: Any) -> "World":
        """Opens a world on this loop: World.open(world, db, loop=self, **options). A world is open once
        per loop (AgoraError EXISTS for a second of its id); with nats_url only as a viewer (view=True;
        INVALID otherwise: a host or a publisher on NATS runs on a loop of its own)."""
        from . import World  # the package's, defined after this module is imported
        return World.open(world, db, loop=self, **options)

    def _joined(self, w: "World") -> None:
        if not self._worlds:
            self._thread = threading.get_ident()
        self._worlds.append(w)

    def _left(self, w: "World") -> None:
        if w in self._worlds:
            self._worlds.remove(w)
        if not self._worlds:
            self._thread = None  # the loop is free again: another thread may open its next world

    def _find(self, handle: Optional[int]) -> Optional["World"]:
        return next((w for w in self._worlds if handle and w._w and w._w.value == handle), None)

    def world(self, id_or_name: str) -> Optional["World"]:
        """The World open on this loop whose id (else name) is id_or_name, or None (agora_loop_world)."""
        self._on_thread("Loop.world")
        return self._find(lib.agora_loop_world(self._h(), _b(id_or_name)))

    def __getitem__(self, id_or_name: str) -> "World":
        w = self.world(id_or_name)
        if w is None:
            raise KeyError(id_or_name)
        return w

    def __contains__(self, id_or_name: str) -> bool:
        return self.world(id_or_name) is not None

    def worlds(self) -> List["World"]:
        """The Worlds open on this loop, in the order they were opened (agora_loop_worlds)."""
        self._on_thread("Loop.worlds")
        base = self._h()
        n = lib.agora_loop_worlds(base, None, 0)
        out = (ctypes.c_void_p * max(n, 1))()
        n = min(n, lib.agora_loop_worlds(base, out, n))
        return [w for w in (self._find(out[i]) for i in range(n)) if w is not None]

    def __iter__(self) -> Iterator["World"]:
        """The Worlds open on the loop: worlds()."""
        return iter(self.worlds())

    def __len__(self) -> int:
        return len(self.worlds())

    def database(self, db: Optional[str] = None) -> Database:
        """The database in db (None: the default) as this loop's worlds share it, for Database's calls while
        they are open (opened, created when missing, if none of them holds it yet; agora_loop_db). Closed
        by its close() or with the loop. Deleting a world open on the loop raises STATE."""
        self._on_thread("Loop.database")
        handle = ctypes.c_void_p()
        _check(lib.agora_loop_db(self._h(), _b(None if db is None else str(db)), ctypes.byref(handle)))
        d = Database(handle)
        d._loop = self  # type: ignore[attr-defined]  # the loop lives as long as its database
        self._dbs = [x for x in self._dbs if not x.closed] + [d]
        return d

    # ---- running ----

    def run(self, timeout: Optional[float] = None) -> Iterator[Tuple["World", Event]]:
        """Runs the loop until every world on it is quiet, yielding (world, event) pairs as they happen:
        the events each World holds (those of earlier runs of another world too), then more as the loop
        runs. A world whose agents wait on requests nobody answered in the loop body stops counting (answer
        them with world.answer(ev, ...) while iterating), and once the closes World.close_later started are
        done; it ends after timeout seconds too. Ctrl-C cancels
        every world's replies in flight and raises KeyboardInterrupt (the worlds stay usable); a callback's
        exception is raised from here."""
        self._on_thread("Loop.run")
        self._h()
        end = None if timeout is None else time.monotonic() + timeout
        waits: Dict[int, int] = {}  # id(world) -> its answers when its run said WAITING
        try:
            while True:
                worlds = [w for w in self._worlds if w._w]
                for w in worlds:
                    for ev in w._take():
                        yield w, ev
                self._drv.take_error()
                moving = [w for w in worlds if w._w and waits.get(id(w)) != w._answered and not _settled(w)]
                if (not moving and not self._closes_left()) or (end is not None and time.monotonic() >= end):
                    return
                if not moving:  # only closes under way: the loop itself runs them on
                    self._dispatch()
                    continue
                w = moving[0]  # any of them runs the whole loop; this one's run returns when it is quiet
                answered = w._answered
                rc = w._call(lib.agora_run_for, w._w, 50)
                if rc == _lib.WAITING and w._answered == answered:
                    waits[id(w)] = answered
                elif rc < 0 and rc != _lib.ERR_CANCELLED:
                    _check(rc)
        except KeyboardInterrupt:
            for w in list(self._worlds):
                w._interrupted()
            raise

    # ---- closes that do not wait (World.close_later, API 10) ----

    def _close_later(self, w: "World", ms: int, done: Optional[Callable[[str, int], Any]]) -> None:
        """agora_world_close_later(w, ms): w leaves the loop's worlds at once; its callbacks stay alive
        until the library calls back, and done(world_id, rc) is called then (from the run under way)."""
        rec = _Closing(self._drv, done, [w._subs.copy(), w._keep])
        rc = lib.agora_world_close_later(w._h(), int(ms), rec.fn, None)
        _check(rc)
        self._closing[id(rec)] = rec
        w._w = None
        self._left(w)

    def _dispatch(self) -> None:
        """One pass of the loop with no world to run it (what is left are closes): libevent's
        event_base_loop(EVLOOP_ONCE), which waits for the next event; then the finished closes go."""
        loop_once = _lib.event_base("event_base_loop")
        prev = self._drv.enter(None)  # nothing closes from the callbacks it runs
        try:
            rc = loop_once(self._h(), _lib.EVLOOP_ONCE)
        finally:
            self._drv.leave(prev)
        if rc == 1 and self._closes_left():
            raise AgoraError(_lib.ERR_STATE, "Loop: a world's close_later is left with nothing on the loop")
        self._drv.take_error()

    def _closes_left(self) -> bool:
        """Whether a close_later is still under way; the ended ones go (never from their own callback:
        ctypes frees the thunk the callback runs in)."""
        for key in [k for k, rec in self._closing.items() if rec.ended]:
            del self._closing[key]
        return bool(self._closing)

    def run_until_quiet(self) -> None:
        """run() without the events (they are dropped)."""
        for _ in self.run():
            pass

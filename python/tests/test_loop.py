"""agora.Loop (libagora API 8): several worlds on one event loop from Python, and what must never end the
interpreter: a closed loop, a world of a closed loop, a raising callback, a close from a callback, Ctrl-C."""
import asyncio
import gc
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

import agora
from agora._lib import lib
from test_world import openai_world, rss_kib

ASK = ('{"name": "Ask", "agents": [{"name": "asker", "provider": "script", "tools": ["ask_human"],'
       ' "replies": [{"tool": "ask_human", "args": {"question": "Which city?"}}, "Thanks, noted."]}]}')


def texts(pairs, world):
    return [ev["text"] for w, ev in pairs if w is world and ev["type"] == "message" and ev["kind"] == "agent"]


def test_two_worlds_answer_together_on_one_loop(llm_server):
    url = llm_server(("", "reply=pong latency=1000"))
    os.environ["AGORA_TEST_KEY"] = "k"
    with agora.Loop() as loop:
        a = loop.open(openai_world(url, 2, "East"), save=False)
        b = loop.open(openai_world(url, 2, "West"), save=False)
        assert a.loop is loop and b.loop is loop and lib.agora_world_loop(a._w) == loop._base
        assert loop.worlds() == [a, b] and list(loop) == [a, b] and len(loop) == 2
        assert loop.world("West") is b and loop.world(a.id) is a and loop["East"] is a and "West" in loop
        assert loop.world("North") is None and "North" not in loop
        with pytest.raises(KeyError):
            loop["North"]
        a.publish("@a0 @a1 ping")
        b.publish("@a0 @a1 ping")
        start = time.monotonic()
        got = list(loop.run())
        took = time.monotonic() - start
        assert texts(got, a) == ["pong", "pong"] and texts(got, b) == ["pong", "pong"]
        assert all(ev["world"] == w.id for w, ev in got)
        assert took < 1.6, took  # one loop: the worlds' calls overlapped (one world after the other: 2 s)
        # a run of one world runs the loop: the other's replies come meanwhile, held for it
        b.publish("@a0 again")
        assert [r["text"] for r in a.say("@a1 again")] == ["pong"]
        assert [ev["text"] for ev in b.run() if ev["type"] == "message" and ev["kind"] == "agent"] == ["pong"]
        with pytest.raises(agora.AgoraError) as e:
            loop.open(openai_world(url, 1, "East"), save=False)  # a world is open once per loop
        assert e.value.name == "EXISTS"
        a.close()
        assert loop.worlds() == [b] and loop.world("East") is None
    assert loop.closed and b.closed and "closed" in repr(loop)


def test_a_request_waits_for_its_answer_while_the_others_go_on(relay):
    with agora.Loop() as loop:
        ask, lib_ = loop.open(ASK, save=False), loop.open(relay, save=False)
        ask.publish("@asker plan a trip")
        lib_.publish("@ann start")
        got = list(loop.run())  # nobody answers in the loop body: the asking world stops counting
        assert texts(got, lib_) == ["@bob hello from ann", "@human bob here"]
        asks = [ev for w, ev in got if ev["type"] == "ask-human"]
        assert len(asks) == 1 and texts(got, ask) == []
        ask.answer(asks[0], "Porto")
        assert texts(list(loop.run()), ask) == ["Thanks, noted."]


def test_a_database_shared_by_the_loops_worlds(relay, tmp_path):
    db = str(tmp_path / "db")
    with agora.Loop() as loop:
        a = loop.open(relay, db=db)
        a.say("@ann start")
        b = loop.open(relay.replace('"Lib"', '"Two"'), db=db)  # the same database handle: no LMDB clash
        d = loop.database(db)
        assert {c["id"] for c in d.chats()} == {a.current_chat, b.current_chat}
        assert {w["name"] for w in d.worlds()} == {"Lib", "Two"}
        with pytest.raises(agora.AgoraError) as e:
            d.delete_world("Two")  # open on the loop
        assert e.value.name == "STATE"
        b.close()
        assert d.delete_world("Two")["chats"] == 1
    assert d.closed
    with agora.Database.open(db, read_only=True) as d:  # closed with the loop: the process may open it again
        assert [w["name"] for w in d.worlds()] == ["Lib"]


def test_closed_loops_and_their_worlds_raise(relay):
    loop = agora.Loop()
    w = loop.open(relay, save=False)
    loop.close()
    loop.close()  # idempotent
    assert w.closed and w.loop is loop
    for call in (lambda: w.say("@ann hi"), lambda: loop.open(relay, save=False), loop.worlds,
                 lambda: loop.world("Lib"), lambda: list(loop.run()), loop.database,
                 lambda: agora.World.open(relay, save=False, loop=loop)):
        with pytest.raises(agora.AgoraError, match="closed") as e:
            call()
        assert e.value.name == "STATE"
    # a world keeps its loop alive: dropping the Loop object leaves the world usable
    w = agora.Loop().open(relay, save=False)
    gc.collect()
    assert [r["sender"] for r in w.say("@ann start")] == ["ann", "bob"]
    w.close()


def test_a_raising_callback_stops_the_run_under_way(relay):
    with agora.Loop() as loop:
        a, b = loop.open(relay, save=False), loop.open(relay.replace('"Lib"', '"Two"'), save=False)

        def boom(ev):
            if ev.get("sender") == "ann":
                raise ValueError("callback failed")
        sub = b.subscribe(boom)
        b.publish("@ann go")
        with pytest.raises(ValueError, match="callback failed"):
            list(loop.run())
        b.publish("@ann go")
        a.publish("@ann go")
        with pytest.raises(ValueError, match="callback failed"):  # b's callback, raised from a's run
            a.run_until_quiet()
        b.unsubscribe(sub)
        loop.run_until_quiet()  # both go on
        assert [r["sender"] for r in a.say("@bob again")] == ["bob"]
        assert [r["sender"] for r in b.say("@bob again")] == ["bob"]


def test_a_close_from_a_callback_raises_and_the_world_goes_on(relay):
    with agora.Loop() as loop:
        a, b = loop.open(relay, save=False), loop.open(relay.replace('"Lib"', '"Two"'), save=False)
        for victim in (a.close, b.close, loop.close):
            def cb(ev, victim=victim):
                if ev.get("sender") == "ann":
                    victim()
            sub = a.subscribe(cb)
            with pytest.raises(agora.AgoraError, match="from a callback") as e:
                a.say("@ann start")
            assert e.value.name == "STATE"
            a.unsubscribe(sub)
            a.run_until_quiet()
        assert not a.closed and not b.closed and not loop.closed
        assert [r["sender"] for r in b.say("@ann start")] == ["ann", "bob"]


def test_a_close_from_a_callback_of_a_world_of_its_own(relay):
    """It freed the world under the running loop: libevent ended the interpreter (exit 1, "event_queue_remove_active")."""
    prog = ("import agora, sys\n"
            f"w = agora.World.open({relay!r}, save=False)\n"
            "w.subscribe(lambda ev: ev.get('sender') == 'ann' and w.close())\n"
            "try:\n    w.say('@ann start')\nexcept agora.AgoraError as e:\n    print('raised', e.name)\n"
            "print([r['sender'] for r in w.say('@bob hi')])\n")
    out = subprocess.run([sys.executable, "-c", prog], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         cwd=os.path.join(os.path.dirname(__file__), ".."), timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[:2] == ["raised STATE", "['bob']"]


def test_ctrl_c_during_the_loops_run_cancels_every_world(llm_server):
    url = llm_server(("slow", "reply=late latency=5000"), ("", "reply=quick"))
    os.environ["AGORA_TEST_KEY"] = "k"
    with agora.Loop() as loop:
        a = loop.open(openai_world(url, 2, "IntA"), save=False)
        b = loop.open(openai_world(url, 2, "IntB"), save=False)
        a.publish("@a0 @a1 slow please")
        b.publish("@a0 slow please")
        timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))  # lands while the loop runs
        start = time.monotonic()
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            for _ in loop.run():
                pass
        timer.join()
        assert time.monotonic() - start < 3  # cancelled, not waited for (the replies take 5 s)
        assert a.thinking() == 0 and b.thinking() == 0
        assert a.say("@a0 now")[0]["text"] == "quick" and b.say("@a1 now")[0]["text"] == "quick"


def test_a_loop_is_used_from_one_thread(relay):
    with agora.Loop() as loop:
        w = loop.open(relay, save=False)
        errors = []

        def other():
            for call in (lambda: loop.open(relay.replace('"Lib"', '"Two"'), save=False), loop.worlds,
                         lambda: list(loop.run()), lambda: w.publish("@ann hi"), lambda: w.say("@ann hi"),
                         w.agents):
                try:
                    call()
                except agora.AgoraError as e:
                    errors.append(e.name)
        t = threading.Thread(target=other)
        t.start()
        t.join()
        assert errors == ["STATE"] * 6  # a publish or agents() from another thread raced the loop before
        assert [r["sender"] for r in w.say("@ann start")] == ["ann", "bob"]


def test_an_older_library_has_no_loop(relay, monkeypatch):
    with agora.Loop() as loop:
        monkeypatch.setattr(agora.lib, "agora_api_version", lambda: 7)
        with pytest.raises(agora.AgoraError, match=r"agora.Loop needs libagora API 8") as e:
            agora.Loop()
        assert e.value.name == "STATE"
        with pytest.raises(agora.AgoraError, match=r"World.open\(loop=\) needs libagora API 8"):
            agora.World.open(relay, save=False, loop=loop)


def test_asyncio_drives_the_whole_loop_from_one_world(llm_server):
    url = llm_server(("fast", "reply=quick latency=50"), ("", "reply=slow latency=600"))
    os.environ["AGORA_TEST_KEY"] = "k"

    async def main(a, b):
        b.publish("@a0 fast")
        a.publish("@a0 slow")
        return [ev async for ev in a]  # a's descriptor is the loop's: b's call is answered meanwhile

    with agora.Loop() as loop:
        a, b = loop.open(openai_world(url, 1, "AsyncA"), save=False), loop.open(openai_world(url, 1, "AsyncB"), save=False)
        got = asyncio.run(main(a, b))
        assert [ev["text"] for ev in got if ev.get("kind") == "agent"] == ["slow"]
        assert b.thinking() == 0  # answered while a ran, its events held for it
        assert [ev["text"] for ev in b.run() if ev.get("kind") == "agent"] == ["quick"]


@pytest.mark.skipif("libasan" in os.environ.get("LD_PRELOAD", ""),
                    reason="ASan's quarantine keeps freed memory; LeakSanitizer checks the C tests instead")
def test_memory_does_not_grow_over_1000_loops(relay):
    two = relay.replace('"Lib"', '"Two"')

    def cycle():
        with agora.Loop() as loop:
            a, b = loop.open(relay, save=False), loop.open(two, save=False)
            a.publish("@ann start")
            b.publish("@ann start")
            loop.run_until_quiet()
    for _ in range(50):  # allocator warm-up
        cycle()
    before = rss_kib()
    start = time.monotonic()
    for _ in range(1000):
        cycle()
    grown = rss_kib() - before
    print(f"1000 loops of two worlds: {time.monotonic() - start:.2f} s, RSS grew by {grown} KiB")
    assert grown < 256, f"RSS grew by {grown} KiB over 1000 loops"  # measured 0; a loop never freed: 592

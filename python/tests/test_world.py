"""The Python package over libagora: every API of agora.World, errors that never end the interpreter,
an asyncio consumer, Ctrl-C mid-run, 200 agents on the loopback LLM server, open/close memory."""
import asyncio
import json
import os
import signal
import threading
import time

import pytest

import agora


def openai_world(url, n, name="Many"):
    agents = ",".join(f'{{"name": "a{i}", "provider": "openai", "model": "m", "base_url": "{url}",'
                      f' "api_key_env": "AGORA_TEST_KEY"}}' for i in range(n))
    return f'{{"name": "{name}", "agents": [{agents}]}}'


def test_say_returns_the_replies(relay):
    with agora.World.open(relay, save=False) as w:
        assert w.name == "Lib"
        replies = w.say("@ann start")
        assert [(r["sender"], r["text"]) for r in replies] == [("ann", "@bob hello from ann"), ("bob", "@human bob here")]
        assert replies[0]["type"] == "message" and replies[0]["seq"] == 2


def test_run_yields_messages_and_events(relay):
    with agora.World.open(relay, save=False) as w:
        w.publish("@ann start")
        events = list(w.run())
        kinds = [e.get("event", e["type"]) for e in events]
        assert kinds[0] == "message" and "llm-start" in kinds and "llm-done" in kinds
        assert sum(1 for e in events if e["type"] == "message") == 3


def test_bad_world_raises_with_message_and_code():
    with pytest.raises(agora.AgoraError) as e:
        agora.World.open('{"name": "x", "agents": [{"name": "a", "provider": "nope"}]}', save=False)
    assert e.value.code == -2 and e.value.name == "INVALID"
    assert "agents[0].provider" in e.value.message
    with pytest.raises(agora.AgoraError) as e:
        agora.World.open("/nonexistent/town.json", save=False)
    assert "/nonexistent/town.json" in str(e.value)


def test_closed_world_raises(relay):
    w = agora.World.open(relay, save=False)
    w.close()
    w.close()  # idempotent
    with pytest.raises(agora.AgoraError, match="closed"):
        w.say("@ann hi")
    assert w.closed and "closed" in repr(w)


def test_a_raising_callback_is_raised_from_the_run(relay):
    with agora.World.open(relay, save=False) as w:
        seen = []

        def cb(ev):
            seen.append(ev)
            if ev.get("sender") == "ann":
                raise ValueError("callback failed")

        sub = w.subscribe(cb)
        with pytest.raises(ValueError, match="callback failed"):
            w.say("@ann start")
        w.unsubscribe(sub)
        assert any(e.get("sender") == "ann" for e in seen)
        w.run_until_quiet()  # the world goes on
        assert w.say("@bob again")[0]["sender"] == "bob"


def test_chats_transcript_usage_export_import_branch(relay, tmp_path):
    db = str(tmp_path / "db")
    with agora.World.open(relay, db=db) as w:
        w.say("@ann start")
        chat = w.current_chat
        chats = w.chats()
        assert [c["id"] for c in chats] == [chat] and chats[0]["message_count"] == 3
        rows = w.transcript()
        assert [r["text"] for r in rows if r["type"] == "message"] == ["@ann start", "@bob hello from ann", "@human bob here"]
        assert all(isinstance(r, dict) for r in rows)  # pandas.DataFrame(rows) takes them
        assert isinstance(w.usage(), list)
        snap = w.export()
        copy = w.import_snapshot(snap)  # the round trip of a snapshot
        assert copy != chat
        assert [r["text"] for r in w.transcript(copy) if r["type"] == "message"] == \
               [r["text"] for r in rows if r["type"] == "message"]
        b = w.branch(chat, 2)
        assert len([r for r in w.transcript(b) if r["type"] == "message"]) == 2
        w.delete_chat(b)
        with pytest.raises(agora.AgoraError) as e:
            w.transcript(b)
        assert e.value.name == "NOT_FOUND"
        with pytest.raises(agora.AgoraError) as e:
            w.import_snapshot("not json")
        assert e.value.name == "INVALID"
        fresh = w.new_chat()
        assert fresh != chat
        w.load_chat(chat)
        assert w.current_chat == chat
    with agora.World.open("Lib", db=db, chat=chat) as w:  # the stored world, by name
        assert w.current_chat == chat


def test_database_without_a_world(relay, tmp_path):
    """agora.Database: a database's chats with no world opened and no chat taken (API version 2)."""
    db = str(tmp_path / "db")
    with pytest.raises(agora.AgoraError) as e:
        agora.Database.open(db, read_only=True)  # nothing there yet, and nothing created
    assert e.value.name == "NOT_FOUND" and not os.path.exists(db)
    with agora.World.open(relay, db=db) as w:
        w.say("@ann start")
        chat = w.current_chat
    with agora.Database.open(db) as d:
        assert [c["id"] for c in d.chats()] == [chat] == [c["id"] for c in d.chats("Lib")]
        with pytest.raises(agora.AgoraError) as e:
            d.chats("Nope")
        assert "Nope" in e.value.message
        copy = d.import_snapshot(d.export(chat[:6]))  # a prefix names it
        b = d.branch(chat, 2)
        assert d.delete_chat(b) == chat and d.delete_chat(copy) == chat
        with pytest.raises(agora.AgoraError) as e:
            d.import_snapshot("[", source="town.json")
        assert e.value.message == "town.json: malformed JSON"
        assert d.chat(chat[:6])["id"] == chat  # API version 3: a chat as `agora chats show` prints it
        assert [m["text"] for m in d.transcript(chat) if m["type"] == "message"][0] == "@ann start"
        assert d.usage(chat) == [] and d.state(chat) == []
        fresh = d.new_chat()
        assert fresh != chat and d.chats()[0]["current"] and d.chats()[0]["id"] == fresh
    with pytest.raises(agora.AgoraError):
        d.chats()  # closed


def test_answer_ask_human():
    world = ('{"name": "Ask", "agents": [{"name": "asker", "provider": "script", "tools": ["ask_human"],'
             ' "replies": [{"tool": "ask_human", "args": {"question": "Which city?"}}, "Thanks, noted."]}]}')
    with agora.World.open(world, save=False) as w:
        w.publish("@asker plan a trip")
        got = []
        for ev in w.run():
            got.append(ev)
            if ev["type"] == "ask-human":
                assert ev["question"] == "Which city?" and ev["agent"] == "asker"
                w.answer(ev, "Porto")
        assert any(e.get("text") == "Thanks, noted." for e in got)
        results = [e for e in got if e.get("event") == "tool-result"]
        assert results and "Porto" in json.dumps(results[0])


def test_answer_an_approval():
    """A tool declared "approve": true asks through the events Python pulls: allowed or denied by w.answer."""
    world = ('{"name": "Ap", "agents": [{"name": "keeper", "provider": "script", "tools": [{"name": "save_context",'
             ' "approve": true}], "replies": [{"tool": "save_context", "args": {"k": 1}}, "@human saved"]}]}')
    for allow, result in ((True, {"ok": True, "version": 1}), (False, "denied: save_context needs the user's approval")):
        with agora.World.open(world, save=False) as w:
            w.publish("@keeper save it")
            got = []
            for ev in w.run():
                got.append(ev)
                if ev["type"] == "approval-request":
                    assert ev["agent"] == "keeper" and ev["tool"] == "save_context" and ev["args"] == {"k": 1}
                    w.answer(ev, allow)
            done = [e["result"] for e in got if e.get("event") == "tool-result"]
            assert len(done) == 1 and (done[0] == result if allow else done[0]["error"].startswith(result))
            assert [e["text"] for e in got if e["type"] == "message"][-1] == "@human saved"


def test_asyncio_consumer(relay, llm_server):
    url = llm_server(("", 'reply="async reply" latency=300'))
    os.environ["AGORA_TEST_KEY"] = "k"

    async def main():
        ticks = 0

        async def ticker():
            nonlocal ticks
            while True:
                await asyncio.sleep(0.005)
                ticks += 1

        t = asyncio.create_task(ticker())
        with agora.World.open(openai_world(url, 3), save=False) as w:
            w.publish("@a0 @a1 @a2 hello")
            got = [ev async for ev in w]
        t.cancel()
        return got, ticks

    got, ticks = asyncio.run(main())
    assert sorted(e["sender"] for e in got if e.get("text") == "async reply") == ["a0", "a1", "a2"]
    assert ticks >= 3  # the asyncio loop ran on while the replies were awaited (300 ms: at 50, load 24 allowed 2)


def test_asyncio_consumer_stops_when_only_an_answer_moves_the_world():
    """As run(): a request nobody answers in the loop body ends the iteration (it waited forever)."""
    world = ('{"name": "Ask", "agents": [{"name": "asker", "provider": "script", "tools": ["ask_human"],'
             ' "replies": [{"tool": "ask_human", "args": {"question": "Which city?"}}, "Thanks, noted."]}]}')

    async def main():
        async def collect(w):
            return [ev async for ev in w]
        with agora.World.open(world, save=False) as w:
            w.publish("@asker plan a trip")
            first = await asyncio.wait_for(collect(w), 10)
            asks = [e for e in first if e["type"] == "ask-human"]
            assert len(asks) == 1
            w.answer(asks[0], "Lisbon")  # later, outside the iteration
            return [e["text"] for e in await asyncio.wait_for(collect(w), 10) if e["type"] == "message"]
    assert asyncio.run(main()) == ["Thanks, noted."]


def test_keyboard_interrupt_cancels_and_the_world_stays_usable(llm_server):
    url = llm_server(("slow", "reply=late latency=5000"), ("", "reply=quick"))
    os.environ["AGORA_TEST_KEY"] = "k"
    with agora.World.open(openai_world(url, 2, "Int"), save=False) as w:
        w.publish("@a0 @a1 slow please")
        timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
        start = time.monotonic()
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            for _ in w.run():
                pass
        timer.join()
        assert time.monotonic() - start < 3  # cancelled, not waited for (the replies take 5 s)
        assert w.say("@a0 now")[0]["text"] == "quick"


def test_keyboard_interrupt_during_async_for_cancels_too(llm_server):
    """Ctrl-C under asyncio.run cancels the task iterating the world: the replies in flight are cancelled as
    run()'s are (they went on before: the next say() got the old turns' 'late' after 5 s)."""
    url = llm_server(("slow", "reply=late latency=5000"), ("", "reply=quick"))
    os.environ["AGORA_TEST_KEY"] = "k"
    with agora.World.open(openai_world(url, 2, "IntAsync"), save=False) as w:
        w.publish("@a0 @a1 slow please")

        async def consume():
            async for _ in w:
                pass
        timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
        start = time.monotonic()
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            asyncio.run(consume())
        timer.join()
        assert w.thinking() == 0 and time.monotonic() - start < 3
        assert [r["text"] for r in w.say("@a0 now")] == ["quick"]


def test_200_agents_on_the_loopback_server(llm_server):
    url = llm_server(("", "reply=ok"))
    os.environ["AGORA_TEST_KEY"] = "k"
    with agora.World.open(openai_world(url, 200, "Crowd"), save=False) as w:
        w.publish(" ".join(f"@a{i}" for i in range(200)) + " roll call")
        replies = [e for e in w.run() if e["type"] == "message" and e["kind"] == "agent"]
        assert len(replies) == 200 and {e["sender"] for e in replies} == {f"a{i}" for i in range(200)}


def rss_kib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024


@pytest.mark.skipif("libasan" in os.environ.get("LD_PRELOAD", ""),
                    reason="ASan's quarantine keeps freed memory; LeakSanitizer checks the C tests instead")
def test_memory_does_not_grow_over_1000_open_close(relay):
    for _ in range(50):  # allocator and import warm-up
        agora.World.open(relay, save=False).close()
    before = rss_kib()
    for _ in range(1000):
        with agora.World.open(relay, save=False) as w:
            w.say("@ann start")
    grown = rss_kib() - before
    # measured: 0-8 KiB; a world never closed grows it by 12 MiB
    assert grown < 2 * 1024, f"RSS grew by {grown} KiB over 1000 open/close cycles"


def test_help_is_readable():
    doc = agora.World.__doc__ + agora.World.open.__doc__ + agora.World.run.__doc__
    assert "Ctrl-C" in doc and "database" in doc
    assert agora.version() == agora.__version__
    # help(agora.World) and the others: every public method and property the package defines says what it does
    import inspect
    import pydoc
    bare = []
    for cls in (agora.World, agora.Loop, agora.Database, agora.AgoraError):
        assert cls.__module__ == "agora" or cls is agora.Loop or cls is agora.Database
        assert "class " + cls.__name__ in pydoc.render_doc(cls, renderer=pydoc.plaintext)
        for klass in cls.__mro__:
            if klass.__module__.split(".")[0] != "agora":
                continue
            for name, obj in vars(klass).items():
                public = not name.startswith("_") or name in ("__init__", "__enter__", "__iter__", "__aiter__")
                if public and callable(getattr(obj, "__func__", obj)) or isinstance(obj, property):
                    if public and not inspect.getdoc(obj):
                        bare.append(f"{cls.__name__}.{name}")
    assert not bare, bare
    assert all(inspect.getdoc(getattr(agora, name)) for name in agora.__all__ if name != "API_VERSION")


def test_lines_are_the_clis(tmp_path):
    """The library writes messages' and events' JSON lines itself (no second cJSON tree): byte for byte
    what `agora say --json` prints, escapes, non-ASCII, broken UTF-8 (repaired) and tool events included."""
    import ctypes
    import re
    import subprocess
    from agora._lib import lib

    world = tmp_path / "w.json"
    world.write_text('{"name": "Esc", "agents": [{"name": "ann", "provider": "script", "tools": ["save_context"],'
                     ' "replies": [{"tool": "save_context", "args": {"note": "caf\u00e9 \\"q\\" \\n"}},'
                     ' "@human ok \u2014 done"]}]}')
    texts = [b'@ann plain', b'@ann "quoted" \\ back\\slash', b'@ann tab\there\nnew line\r\x01\x1f\x7f',
             "@ann caf\u00e9 \u2014 \U0001F600 \u2028".encode(), b'@ann broken \xff\xfe utf-8 \xe2\x82']
    strip = lambda line: re.sub(rb'"ts":"[^"]*"|"at_ms":[0-9]+', b'"time"', line)  # noqa: E731
    for text in texts:
        cli = subprocess.run([os.environ["AGORA_BIN"], "say", str(world), text, "--no-save", "--json"],
                             stdout=subprocess.PIPE, check=True).stdout.strip().split(b"\n")
        with agora.World.open(str(world), save=False) as w:
            lib.agora_publish(w._w, b"human", text)
            lib.agora_run_until_quiet(w._w)
            ptr, n = ctypes.c_void_p(), ctypes.c_size_t()
            lib.agora_events_take(w._w, ctypes.byref(ptr), ctypes.byref(n))
            mine = {strip(line) for line in ctypes.string_at(ptr, n.value).split(b"\n")}
            lib.agora_free(ptr)
        assert len(cli) >= 5 and b'"event":"tool-call"' in b"".join(cli)
        for line in cli:
            assert strip(line) in mine, (text, line)


def test_run_stops_when_only_an_answer_moves_the_world():
    world = ('{"name": "Ask", "agents": [{"name": "asker", "provider": "script", "tools": ["ask_human"],'
             ' "replies": [{"tool": "ask_human", "args": {"question": "Which city?"}}, "Thanks, noted."]}]}')
    with agora.World.open(world, save=False) as w:
        w.publish("@asker plan a trip")
        start = time.monotonic()
        events = list(w.run())  # nobody answers in the loop: run() ends instead of waiting
        assert time.monotonic() - start < 2
        asks = [e for e in events if e["type"] == "ask-human"]
        assert len(asks) == 1
        w.answer(asks[0], "Lisbon")  # answered later, outside the loop
        assert [e["text"] for e in w.run() if e["type"] == "message"] == ["Thanks, noted."]


def test_cancel_ends_the_replies_in_flight(llm_server):
    url = llm_server(("slow", "reply=late latency=5000"))
    os.environ["AGORA_TEST_KEY"] = "k"
    with agora.World.open(openai_world(url, 2, "Cancel"), save=False) as w:
        w.publish("@a0 @a1 slow please")
        deadline = time.monotonic() + 30
        while w.thinking() < 2 and time.monotonic() < deadline:  # until both calls are out
            list(w.run(timeout=0.05))
        assert w.thinking() == 2 and w.is_thinking("a0") and w.is_thinking("a1")
        assert not w.is_thinking("nobody")
        start = time.monotonic()
        w.cancel()
        events = list(w.run())
        assert w.thinking() == 0 and not w.is_thinking("a0")
        assert time.monotonic() - start < 2
        cancelled = [e for e in events if e.get("event") == "cancelled"]
        assert cancelled and set(cancelled[0]["agents"].split(", ")) == {"a0", "a1"}
        assert not [e for e in events if e.get("text") == "late"]

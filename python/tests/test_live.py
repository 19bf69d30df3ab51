"""libagora API versions 3-6 from Python: the world file's script (the same transcript as `agora run`),
the tools document, the settings and agents changed while the world is open, the budget, a virtual clock
advanced until what fell due was answered, the chat's past edited, a run's counters, the open's options,
a host on a loopback nats-server, a database's worlds, the response cache and a snapshot's transcript;
each call on an older library raises AgoraError."""
import json
import os
import signal
import subprocess
import threading
import time

import pytest

import agora

# A virtual clock with an hourly item, a script that talks, waits and talks again.
TOWN = {
    "name": "Clocked", "defaults": {"provider": "script"},
    "clock": {"mode": "virtual", "start": "2026-03-02T08:00:00Z"},
    "agents": [{"name": "ann", "replies": ["@bob noted"]}, {"name": "bob", "replies": ["@human ok"]}],
    "schedule": [{"cron": "0 * * * *", "from": "world", "text": "@ann the bell rings"}],
    "script": [{"from": "human", "text": "@ann hello"}, {"wait": "2h"}, {"from": "human", "text": "@bob bye"}],
}


def messages(events):
    return [(e["seq"], e["sender"], e["text"]) for e in events if e.get("type") == "message"]


def test_run_script_gives_the_transcript_agora_run_prints(tmp_path):
    path = tmp_path / "town.json"
    path.write_text(json.dumps(TOWN))
    out = subprocess.run([os.environ["AGORA_BIN"], "run", str(path), "--no-save", "--json"],
                         capture_output=True, text=True, timeout=60, check=True).stdout
    cli = messages(json.loads(line) for line in out.splitlines() if line.strip())
    with agora.World.open(str(path), save=False) as w:
        assert w.script_steps() == 3
        py = messages(w.run_script())
    assert py == cli
    # the bells of 08:00, 09:00 and 10:00 (the start is due too), each relayed by ann to bob
    assert sum(1 for m in py if m[2] == "@ann the bell rings") == 3
    assert len(py) == 3 + 3 * 3 + 2 and py[-1][1] == "bob"


def test_tools_lists_each_agents_tools(relay):
    with agora.World.open(json.dumps(dict(TOWN, agents=[{"name": "ann", "tools": ["ask_human"]}])), save=False) as w:
        doc = w.tools()
    assert doc["agents"][0]["name"] == "ann"
    assert [t["name"] for t in doc["agents"][0]["tools"]] == ["ask_human"]
    assert doc["servers"] == []


def test_settings_and_agents_change_while_open(relay, tmp_path):
    with agora.World.open(relay, db=str(tmp_path)) as w:
        assert [a["name"] for a in w.agents()] == ["ann", "bob"]
        w.change(turn_limit=7, variables={"town": "Oak"})
        s = w.settings()
        assert s["turn_limit"] == 7 and s["variables"] == {"town": "Oak"}
        carol = w.add_agent({"name": "carol", "provider": "script", "replies": ["carol here"]})
        assert carol["name"] == "carol"
        assert w.say("@carol where?")[0]["text"] == "carol here"
        assert w.change_agent("carol", system_prompt="You are carol.")["name"] == "carol"
        assert [a for a in w.settings()["agents"] if a["name"] == "carol"][0]["system_prompt"] == "You are carol."
        w.remove_agent("carol")
        assert [a["name"] for a in w.agents()] == ["ann", "bob"]
        w.set_budget(tokens=1000)
        assert w.settings()["budget"]["tokens"] == 1000
        w.set_budget()
        assert "tokens" not in w.settings().get("budget", {})


def test_an_invalid_change_names_the_path_and_changes_nothing(relay):
    with agora.World.open(relay, save=False) as w:
        with pytest.raises(agora.AgoraError) as e:
            w.change(turn_limit="seven")
        assert e.value.name == "INVALID" and "turn_limit" in e.value.message
        with pytest.raises(agora.AgoraError) as e:
            w.change_agent("ann", temperature="hot")
        assert "agents[0].temperature" in e.value.message
        with pytest.raises(agora.AgoraError) as e:
            w.change_agent("nobody", model="m")
        assert e.value.name == "NOT_FOUND"
        with pytest.raises(agora.AgoraError) as e:
            w.add_agent({"name": "bob", "provider": "script"})
        assert e.value.name == "EXISTS"
        with pytest.raises(agora.AgoraError) as e:
            w.set_budget(tokens=-1)
        assert e.value.name == "INVALID"
        assert "turn_limit" not in w.settings() or w.settings()["turn_limit"] != "seven"


def test_advance_runs_until_what_fell_due_was_answered():
    town = dict(TOWN, script=[])
    with agora.World.open(json.dumps(town), save=False) as w:
        c = w.clock()
        assert c["mode"] == "virtual" and c["now"].startswith("2026-03-02T08:00") and not c["advancing"]
        events = w.advance(3 * 3600 * 1000)
        got = messages(events)
        # 08:00 (the start is due), 09:00, 10:00 and 11:00, each relayed before advance returned
        assert [m[2] for m in got if m[1] == "world"] == ["@ann the bell rings"] * 4
        assert [m[1] for m in got].count("bob") == 4
        c = w.clock()
        assert c["now"].startswith("2026-03-02T11:00") and not c["advancing"]
        with pytest.raises(agora.AgoraError) as e:
            w.advance(0)
        assert e.value.name == "INVALID"


def test_advance_on_a_real_clock_raises(relay):
    with agora.World.open(relay, save=False) as w:
        assert w.clock()["mode"] == "real"
        with pytest.raises(agora.AgoraError) as e:
            w.advance(1000)
        assert e.value.name == "STATE"


def test_an_older_library_raises_at_the_call(relay, monkeypatch):
    with agora.World.open(relay, save=False) as w:
        monkeypatch.setattr(agora.lib, "agora_api_version", lambda: 5)
        assert w.tools()["agents"][0]["name"] == "ann"  # API 5 still there
        for call in (w.settings, w.agents, w.clock, lambda: w.change(turn_limit=3), lambda: w.advance(1)):
            with pytest.raises(agora.AgoraError, match="needs libagora API 6") as e:
                call()
            assert e.value.name == "STATE"
        for call in (w.retry, lambda: w.edit("x"), lambda: w.cut(1), lambda: w.forget("ann"),
                     lambda: w.set_title("t")):
            with pytest.raises(agora.AgoraError, match="needs libagora API 6"):
                call()
        monkeypatch.setattr(agora.lib, "agora_api_version", lambda: 4)
        with pytest.raises(agora.AgoraError, match="World.run_until_interrupt needs libagora API 5"):
            list(w.run_until_interrupt())
        with pytest.raises(agora.AgoraError, match=r"World.open\(host=\) needs libagora API 5"):
            agora.World.open(relay, save=False, host=True, nats_url="nats://127.0.0.1:9")
        monkeypatch.setattr(agora.lib, "agora_api_version", lambda: 3)
        with pytest.raises(agora.AgoraError, match="World.run_script needs libagora API 4"):
            list(w.run_script())
        for call in (lambda: agora.cache_stats(), lambda: agora.cache_clear(), lambda: agora.snapshot_transcript("{}"),
                     lambda: agora.World.open(relay, save=False, clock=False)):
            with pytest.raises(agora.AgoraError, match="needs libagora API 4"):
                call()
        monkeypatch.setattr(agora.lib, "agora_api_version", lambda: 2)
        for call in (w.failed_calls, w.unsaved, w.budget_spent, w.clock_note,
                     lambda: agora.World.open(relay, save=False, notes=True)):
            with pytest.raises(agora.AgoraError, match="needs libagora API 3"):
                call()


def test_an_older_library_has_no_worlds_of_a_database(tmp_path, monkeypatch):
    with agora.Database.open(str(tmp_path)) as d:
        monkeypatch.setattr(agora.lib, "agora_api_version", lambda: 3)
        for call in (d.worlds, lambda: d.world("x"), lambda: d.delete_world("x")):
            with pytest.raises(agora.AgoraError, match="needs libagora API 4") as e:
                call()
            assert e.value.name == "STATE"


def test_ctrl_c_during_a_script_step_cancels_it(relay):
    """A step blocks inside libagora (here a 60 s wait on a real clock): Ctrl-C is seen by the tick."""
    town = dict(json.loads(relay), script=[{"from": "human", "text": "@ann start"}, {"wait": "60s"},
                                           {"from": "human", "text": "@bob never"}])
    with agora.World.open(json.dumps(town), save=False) as w:
        def on_event(ev):  # once bob has answered, the wait step begins: interrupt it
            if ev.get("type") == "message" and ev.get("sender") == "bob":
                w.unsubscribe(sub)  # the signal lands while the wait step blocks in C (as test_world's)
                threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT)).start()
        sub = w.subscribe(on_event)
        start = time.monotonic()
        seen = []
        with pytest.raises(KeyboardInterrupt):
            for ev in w.run_script():
                seen.append(ev)
        assert time.monotonic() - start < 10  # cancelled, not waited for
        assert "@bob never" not in [m[2] for m in messages(seen)]
        assert w.say("@bob still there?")[0]["sender"] == "bob"  # usable, and no tick left behind


def said(w):
    """The current chat's messages as (seq, sender, text)."""
    return messages(w.transcript())


def test_the_chats_past_edited_retried_cut_and_titled(relay, tmp_path):
    with agora.World.open(relay, db=str(tmp_path)) as w:
        w.say("@ann hi")
        assert [m[1] for m in said(w)] == ["human", "ann", "bob"]
        assert w.edit("@bob just you") == 0  # the last human message, nothing before it kept
        assert [e["sender"] for e in w.run() if e["type"] == "message"] == ["human", "bob"]
        assert said(w) == [(1, "human", "@bob just you"), (2, "bob", "@human bob here")]
        assert w.retry() == 0
        assert [e["sender"] for e in w.run() if e["type"] == "message"] == ["human", "bob"]
        w.cut(2)
        assert said(w) == [(1, "human", "@bob just you")]
        w.forget("ann")
        assert [(e["event"], e["agent"]) for e in w.run() if e["type"] == "event"] == [("memory-cleared", "ann")]
        w.set_title("Plans")
        assert w.chats()[0]["title"] == "Plans"
        for call, name, text in ((lambda: w.edit("x", seq=999), "NOT_FOUND", "no message 999"),
                                 (lambda: w.edit("", seq=1), "INVALID", "the text is empty"),
                                 (lambda: w.cut(99), "NOT_FOUND", "no message 99"),
                                 (lambda: w.forget("nobody"), "NOT_FOUND", "no agent 'nobody'")):
            with pytest.raises(agora.AgoraError) as e:
                call()
            assert e.value.name == name and text in e.value.message
        w.say("@ann again")
        with pytest.raises(agora.AgoraError) as e:
            w.edit("not mine", seq=3)  # ann's message
        assert e.value.name == "INVALID"
    with agora.World.open(relay, save=False) as w:  # the chat's past is the database's
        for call in (w.retry, lambda: w.edit("x"), lambda: w.cut(1), lambda: w.set_title("x")):
            with pytest.raises(agora.AgoraError) as e:
                call()
            assert e.value.name == "STATE" and "without a database" in e.value.message


def test_a_runs_counters_and_the_clock_note(llm_server):
    url = llm_server(("fail", "status=400"), ("", "reply=fine"))
    os.environ["AGORA_TEST_KEY"] = "k"
    town = {"name": "Count", "budget": {"tokens": 100000},  # spend is counted against a budget
            "agents": [{"name": "a0", "provider": "openai", "model": "m", "base_url": url,
                        "api_key_env": "AGORA_TEST_KEY"}]}
    with agora.World.open(json.dumps(town), save=False) as w:
        assert (w.failed_calls(), w.unsaved(), w.clock_note()) == (0, 0, None)
        assert w.budget_spent() == {"spent": False, "tokens": 0, "usd": 0.0}
        assert w.say("@a0 please")[0]["text"] == "fine"
        spent = w.budget_spent()
        assert not spent["spent"] and spent["tokens"] > 0  # the loopback server reports usage
        w.set_budget(tokens=1)
        assert w.budget_spent() == dict(spent, spent=True)
        w.set_budget()
        assert not w.budget_spent()["spent"]
        w.say("@a0 fail now")
        assert w.failed_calls() == 1
    with agora.World.open(json.dumps(dict(TOWN, script=[])), save=False) as w:
        assert "virtual" in w.clock_note()  # a schedule nobody moves the clock for


def test_open_options_of_api_3_to_5(relay, tmp_path, capfd):
    db = str(tmp_path)
    with agora.World.open(relay, db=db) as w:
        chat = w.current_chat
    capfd.readouterr()
    same = json.loads(relay)
    same["agents"] = same["agents"][:1]
    with agora.World.open(json.dumps(same), db=db) as w:  # the stored world replaced: no note unless asked
        pass
    assert capfd.readouterr().err == ""
    with agora.World.open(relay, db=db, notes=True, program="prog") as w:
        pass
    assert "prog: " in capfd.readouterr().err
    seen = []
    with agora.World.open(None, db=db, chat=chat, clock=False, on_event=seen.append) as w:  # the chat's world
        assert w.name == "Lib" and w.current_chat == chat
        w.say("@bob hi")
        with pytest.raises(agora.AgoraError) as e:
            list(w.run_script())
        assert e.value.name == "STATE"
    assert [e["sender"] for e in seen if e["type"] == "message"] == ["human", "bob"]
    with pytest.raises(agora.AgoraError) as e:
        agora.World.open("Lib", db=db, script=True)  # a stored world keeps no script, and has no schedule
    assert e.value.name == "INVALID"
    with agora.World.open(relay, tools_only=True) as w:
        assert [a["name"] for a in w.tools()["agents"]] == ["ann", "bob"]
        with pytest.raises(agora.AgoraError) as e:
            w.publish("@ann hi")
        assert e.value.name == "STATE" and "AGORA_TOOLS" in e.value.message
    for kw, field in (({"llm_cache": "sometimes"}, "agora_options.llm_cache"),
                      ({"allow_key_to": ["ftp://x"]}, "agora_options.allow_key_to[0]"),
                      ({"nats_url": "nats://127.0.0.1:9", "nats_replicas": 9}, "agora_options.nats_replicas"),
                      ({"host": True, "nats_url": "nats://127.0.0.1:9", "nats_lease_ms": 5},
                       "agora_options.nats_lease_ms")):
        with pytest.raises(agora.AgoraError) as e:
            agora.World.open(relay, save=False, **kw)
        assert e.value.name == "INVALID" and field in e.value.message, (kw, e.value)


def test_an_open_callback_that_raises_is_raised(relay):
    raised = []

    def boom(ev):
        if not raised:
            raised.append(ev)
            raise ValueError("boom")
    with agora.World.open(relay, save=False, on_event=boom) as w:
        w.publish("@ann hi")
        with pytest.raises(ValueError, match="boom"):
            list(w.run())
        assert w.say("@bob still")[0]["sender"] == "bob"  # usable
    # what opening produces reaches on_event (an MCP server that cannot start), and so does its exception
    bad = dict(json.loads(relay), mcp_servers={"bad": {"command": "/nonexistent/x"}})
    seen = []
    with agora.World.open(json.dumps(bad), save=False, on_event=seen.append):
        assert [(e["event"], e["server"]) for e in seen] == [("mcp-error", "bad")]
    raised.clear()
    with pytest.raises(ValueError, match="boom"):
        agora.World.open(json.dumps(bad), save=False, on_event=boom)


def test_run_until_interrupt_until_interrupt_timeout_or_ctrl_c(relay):
    with agora.World.open(relay, save=False) as w:
        def on_event(ev):
            if ev.get("sender") == "bob":
                w.interrupt()
        w.subscribe(on_event)
        w.publish("@ann hi")
        got = [e["sender"] for e in w.run_until_interrupt(timeout=30) if e["type"] == "message"]
        assert got == ["human", "ann", "bob"]
        start = time.monotonic()
        assert list(w.run_until_interrupt(timeout=0.2)) == []  # quiet, yet it runs until the timeout
        assert 0.2 <= time.monotonic() - start < 5
        threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT)).start()
        with pytest.raises(KeyboardInterrupt):
            list(w.run_until_interrupt())
        assert w.say("@bob still there?")[0]["sender"] == "bob"  # usable, and no tick left behind


def test_a_host_answers_a_publisher_on_nats(nats_url, capfd):
    duo = {"name": "pyhost", "agents": [{"name": "a0", "provider": "script", "replies": ["@human a0 here"]}],
           "script": [{"from": "human", "text": "@a0 hello"}]}
    published = []
    with agora.World.open(json.dumps(duo), save=False, host=True, nats_url=nats_url, nats_agents=["a0"],
                          nats_lease_ms=900) as h:
        assert h.current_chat is None

        def publisher():
            with agora.World.open(json.dumps(duo), save=False, nats_url=nats_url) as p:
                published.extend(p.run_script())  # the step waits until a0 has answered in some host
        t = threading.Thread(target=publisher)
        t.start()
        got = []
        for ev in h.run_until_interrupt(timeout=60):
            if ev.get("type") == "message":
                got.append((ev["sender"], ev["text"]))
                if ev["sender"] == "a0":
                    h.interrupt()
        t.join(timeout=60)
    assert ("a0", "@human a0 here") in got
    assert [m[1:] for m in messages(published)] == [("human", "@a0 hello"), ("a0", "@human a0 here")]
    assert capfd.readouterr().err == ""  # without notes=True the cluster's notices stay off stderr too


def test_a_databases_worlds(relay, tmp_path):
    db = str(tmp_path)
    with agora.World.open(relay, db=db) as w:
        w.say("@ann hi")
        chat = w.current_chat
    with agora.Database.open(db, read_only=True) as d:
        assert d.worlds() == [{"id": "lib", "name": "Lib", "agents": 2, "chats": 1, "current_chat": chat}]
        one = d.world("Lib")
        assert one["id"] == "lib" and [a["name"] for a in one["settings"]["agents"]] == ["ann", "bob"]
        with pytest.raises(agora.AgoraError) as e:
            d.world("Nope")
        assert e.value.name == "INVALID" and "no world 'Nope'" in e.value.message
        with pytest.raises(agora.AgoraError) as e:
            d.delete_world("lib")  # read only
        assert e.value.name == "STORAGE"
    with agora.Database.open(db) as d:
        assert d.delete_world("Lib") == {"id": "lib", "chats": 1}
        assert d.worlds() == [] and d.chats() == []


def test_the_llm_response_cache(llm_server, tmp_path):
    url = llm_server(("", "reply=fine"))
    os.environ["AGORA_TEST_KEY"] = "k"
    db = str(tmp_path)
    town = {"name": "Cached", "agents": [{"name": "a0", "provider": "openai", "model": "m", "base_url": url,
                                          "api_key_env": "AGORA_TEST_KEY"}]}
    assert agora.cache_stats(db) == {"entries": 0, "bytes": 0, "oldest": None, "newest": None}
    with agora.World.open(json.dumps(town), db=db, llm_cache="use") as w:
        assert w.say("@a0 remember this")[0]["text"] == "fine"
    stats = agora.cache_stats(db)
    assert stats["entries"] == 1 and stats["bytes"] > 0 and stats["oldest"].startswith("20")
    assert agora.cache_clear(db, before_ms=0) == 0  # nothing stored before 1970
    assert agora.cache_clear(db) == 1 and agora.cache_stats(db)["entries"] == 0
    assert agora.cache_stats(cache_dir=str(tmp_path / "elsewhere"))["entries"] == 0
    with pytest.raises(agora.AgoraError) as e:
        agora.cache_stats(cache_dir="/proc/nope")
    assert e.value.name == "IO" and "/proc/nope" in e.value.message


def test_a_snapshots_transcript_without_a_database(relay, tmp_path):
    with agora.World.open(relay, db=str(tmp_path)) as w:
        w.say("@ann hi")
        snap, rows = w.export(), w.transcript()
    assert agora.snapshot_transcript(snap) == rows == agora.snapshot_transcript(json.dumps(snap))
    with pytest.raises(agora.AgoraError) as e:
        agora.snapshot_transcript("{}", source="town.json")
    assert e.value.name == "INVALID" and e.value.message.startswith("town.json: format")
    with pytest.raises(agora.AgoraError) as e:
        agora.snapshot_transcript(dict(snap, format=99))
    assert e.value.name == "VERSION"

"""libagora API versions 4-6 from Python: the world file's script (the same transcript as `agora run`),
the tools document, the settings and agents changed while the world is open, the budget, and a virtual
clock advanced until what fell due was answered."""
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
        monkeypatch.setattr(agora.lib, "agora_api_version", lambda: 3)
        with pytest.raises(agora.AgoraError, match="World.run_script needs libagora API 4"):
            list(w.run_script())


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

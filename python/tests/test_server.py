"""libagora API 10 and 11 from Python, what a server of many worlds needs: world JSON someone else wrote
(opened untrusted, or stored by Database.create_world), a world's and a database's counts, a chat's graph,
one chat's events with their positions, a close that does not wait (World.close_later on an agora.Loop),
background syncs, and a world's MCP servers listed and restarted; the errors' codes and messages."""
import os

import pytest

import agora

STREAM = {"name": "Stream", "defaults": {"provider": "script"},
          "agents": [{"name": "ann", "replies": ["@human one", "@human two"]}]}
OTHER = {"name": "Other", "defaults": {"provider": "script"}, "agents": [{"name": "bo", "replies": ["@human yo"]}]}
FAKE_SERVER = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "mcp", "fake_server.js")


def tooled(name="Tooled"):
    """A world whose one MCP server "fake" is tests/mcp/fake_server.js (tools echo and grow)."""
    return {"name": name, "mcp_servers": {"fake": {"command": "node", "args": [FAKE_SERVER, "ok"]}},
            "agents": [{"name": "t", "provider": "script", "tools": ["fake.echo"]}]}


def test_untrusted_world_json_is_stored_then_opened(tmp_path):
    db = str(tmp_path / "db")
    with agora.World.open(tooled(), db=db, untrusted=True) as w:
        assert w.stored and w.resumed is False
        servers = w.mcp_servers()
        assert servers["started"] is False and servers["servers"][0]["state"] == "not started"
    with pytest.raises(agora.AgoraError) as e:
        agora.World.open(tooled(), db=db, untrusted=True)
    assert e.value.name == "EXISTS" and "tooled" in e.value.message
    with pytest.raises(agora.AgoraError) as e:
        agora.World.open({"name": "Bad", "agents": [{"name": "a", "provider": "nope"}]}, db=db, untrusted=True)
    assert e.value.name == "INVALID" and "agents[0].provider" in e.value.message
    with pytest.raises(agora.AgoraError) as e:
        agora.World.open(STREAM, save=False, untrusted=True)
    assert e.value.name == "INVALID" and "AGORA_NO_SAVE" in e.value.message


def test_create_world_stores_without_opening(tmp_path):
    db = str(tmp_path / "db")
    with agora.Database.open(db) as d:
        assert d.create_world(tooled("Posted")) == "posted"
        assert d.create_world('{"name": "Text", "agents": [{"name": "a", "provider": "script"}]}') == "text"
        assert {x["id"] for x in d.worlds()} == {"posted", "text"}
        assert "mcp_servers" in d.world("posted")["settings"]
        with pytest.raises(agora.AgoraError) as e:
            d.create_world(tooled("Posted"))
        assert e.value.name == "EXISTS"
        with pytest.raises(agora.AgoraError) as e:
            d.create_world({"name": "Bad", "agents": [{"name": "a", "provider": "nope"}]})
        assert e.value.name == "INVALID" and "world: agents[0].provider: unknown provider 'nope'" in e.value.message
    with agora.World.open("Posted", db=db) as w:  # a stored world: its programs never start
        assert w.mcp_servers()["started"] is False
        with pytest.raises(agora.AgoraError) as e:
            w.mcp_restart("fake")
        assert e.value.name == "STATE"


def test_counts_and_the_chat_graph(tmp_path):
    db = str(tmp_path / "db")
    with agora.World.open(STREAM, db=db) as w:
        w.say("@ann hi")
        chat = w.current_chat
        c = w.counts()
        assert (c["agents"], c["thinking"], c["messages"]) == (1, 0, 2)
        assert (c["llm_calls_done"], c["llm_calls_failed"]) == (1, 0)
    with agora.Database.open(db) as d:
        assert d.counts() == {"commits": 0, "synced": 0}  # this handle's, since it was opened
        d.new_chat("Stream")
        c = d.counts()
        assert c["commits"] >= 1 and c["synced"] == c["commits"]
        g = d.chat_graph(chat[:6])
        assert g["chat"] == chat and g["last_seq"] == 2
        assert {n["id"]: n["messages"] for n in g["nodes"]} == {"human": 1, "ann": 1}
        assert {(x["from"], x["to"]) for x in g["edges"]} == {("human", "ann"), ("ann", "human")}
        assert len(d.chat_graph(chat, nodes=1, points=1)["nodes"]) == 1
        with pytest.raises(agora.AgoraError) as e:
            d.chat_graph(chat, nodes=501)
        assert e.value.name == "INVALID" and "nodes" in e.value.message and "500" in e.value.message
        with pytest.raises(agora.AgoraError) as e:
            d.chat_graph(chat, points=0)
        assert e.value.name == "INVALID" and "points 0" in e.value.message
        with pytest.raises(agora.AgoraError) as e:
            d.chat_graph("zzzz")
        assert e.value.name == "NOT_FOUND"


def test_a_chats_events_with_their_positions(tmp_path):
    with agora.World.open(STREAM, db=str(tmp_path / "db")) as w:
        first, every = [], []
        chat = w.current_chat
        sub = w.subscribe_chat(first.append, chat, idle=True)
        w.subscribe_chat(every.append)
        w.say("@ann hi")
        assert all(e["chat"] == chat for e in first)
        messages = [e for e in first if e["type"] == "message"]
        assert [(m["seq"], m["position"]) for m in messages] == [(1, 1), (2, 2)]
        positions = [e["position"] for e in first]
        assert positions == sorted(positions) and first[-1]["type"] == "idle"  # the mark comes last
        assert not any(e["type"] == "idle" for e in every)  # only to a subscription that asked
        resume = next(e["position"] for e in first if e["type"] == "message")
        assert [m["seq"] for m in w.messages(chat, start=resume + 1)] == [2]  # what a stream resumes from
        w.set_title("first")
        other = w.new_chat()
        seen = len(first)
        w.say("@ann again")
        assert len(first) == seen  # another chat's events: none
        assert [(e["chat"], e["position"]) for e in every if e["type"] == "message"][-2:] == [(other, 1), (other, 2)]
        w.unsubscribe(sub)
        with pytest.raises(agora.AgoraError) as e:
            w.subscribe_chat(first.append, "")
        assert e.value.name == "INVALID" and "is not a chat id" in e.value.message


def test_close_later_from_a_callback_of_the_loop(tmp_path):
    db = str(tmp_path / "db")
    with agora.Loop() as loop:
        a, b = loop.open(STREAM, db=db), loop.open(OTHER, db=db)
        done, events = [], []

        def on_event(ev):
            events.append(ev)
            if ev.get("type") == "message" and ev.get("sender") == "ann":
                with pytest.raises(agora.AgoraError, match="called from a callback"):
                    a.close()
                a.close_later(5000, lambda world_id, rc: done.append((world_id, rc)))
        a.subscribe(on_event)
        a.publish("@ann hi")
        b.publish("@bo hi")
        list(loop.run())
        assert done == [("stream", 0)] and a.closed and loop.worlds() == [b]
        assert b.messages()[-1]["text"] == "@human yo"
        with pytest.raises(agora.AgoraError) as e:
            a.publish("@ann more")
        assert e.value.name == "STATE"
        again = loop.open(STREAM, db=db)  # its id is free again once done was called
        assert again.messages()[-1]["text"] == "@human one"  # the reply in flight finished and was stored
        with pytest.raises(agora.AgoraError) as e:
            again.close_later(-1)
        assert e.value.name == "INVALID" and not again.closed
        again.subscribe(lambda ev: ev.get("sender") == "ann" and again.close_later(0, lambda *d: done.append(d)))
        assert again.say("@ann more") == [] and again.closed  # its own run ends: the world is the library's
    assert done[-1] == ("stream", 0)  # the Loop's close ran the loop until the close was done
    with agora.World.open(STREAM, save=False) as own:
        with pytest.raises(agora.AgoraError) as e:
            own.close_later()
        assert e.value.name == "STATE" and "close()" in e.value.message


def test_background_sync_on_a_loop(tmp_path):
    db = str(tmp_path / "db")
    with agora.Loop() as loop:
        w = loop.open(STREAM, db=db, sync="background")
        w.say("@ann hi")
        c = loop.database(db).counts()  # the storage thread syncs after each commit: synced may lag
        assert c["commits"] >= 1 and 0 <= c["synced"] <= c["commits"]
    with agora.Database.open(db, read_only=True) as d:  # the close synced what was left
        assert [m["text"] for m in d.messages(d.chats()[0]["id"])] == ["@ann hi", "@human one"]
    with pytest.raises(agora.AgoraError) as e:
        agora.World.open(STREAM, db=db, sync="background")
    assert e.value.name == "INVALID" and "agora_options.sync" in e.value.message
    with pytest.raises(agora.AgoraError) as e:
        agora.World.open(STREAM, db=db, sync="sometimes")
    assert e.value.name == "INVALID" and "'full' or 'background'" in e.value.message


def _state(w):
    return w.mcp_servers()["servers"][0]


def test_mcp_servers_listed_and_restarted():
    with agora.World.open(tooled(), save=False) as w:
        got = w.mcp_servers()
        assert got["started"] is True and got["reason"] is None
        s = _state(w)
        assert (s["name"], s["transport"], s["state"]) == ("fake", "stdio", "ready")
        assert {"echo", "grow"} <= set(s["tools"])
        with pytest.raises(agora.AgoraError) as e:
            w.mcp_restart("nope")
        assert e.value.name == "NOT_FOUND" and "no MCP server 'nope'" in e.value.message
        assert w.mcp_restart("fake")["state"] == "starting"  # its new process has not answered yet
        assert _state(w)["state"] == "starting"
        entry = w.mcp_restart("fake", wait=10)  # the loop turned until it answered
        assert entry["state"] == "ready" and "echo" in entry["tools"] and _state(w) == entry
    with agora.World.open(tooled(), save=False, mcp=False) as w:
        got = w.mcp_servers()
        assert got["started"] is False and isinstance(got["reason"], str)
        with pytest.raises(agora.AgoraError) as e:
            w.mcp_restart("fake")
        assert e.value.name == "STATE" and "did not start its MCP servers" in e.value.message
    with agora.World.open(STREAM, save=False) as w:
        assert w.mcp_servers() == {"started": False, "reason": "the world has no mcp_servers", "servers": []}


def test_an_older_library_raises_at_the_call(monkeypatch):
    with agora.World.open(STREAM, save=False) as w:
        monkeypatch.setattr(agora.lib, "agora_api_version", lambda: 10)
        with pytest.raises(agora.AgoraError, match="World.mcp_servers needs libagora API 11") as e:
            w.mcp_servers()
        assert e.value.name == "STATE"
        monkeypatch.setattr(agora.lib, "agora_api_version", lambda: 9)
        with pytest.raises(agora.AgoraError, match="World.counts needs libagora API 10"):
            w.counts()
        with pytest.raises(agora.AgoraError, match=r"World.open\(untrusted=\) needs libagora API 10"):
            agora.World.open(STREAM, save=False, untrusted=True)

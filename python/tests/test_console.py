"""libagora API version 7 from Python, what `agora console` needs: a window of a chat's messages, a copied
agent, how the open went (World.db, .stored, .resumed), agora.duration_ms, a viewer on a loopback
nats-server (view=True); bad arguments raise AgoraError with Agora's message and code, and each call on
an older library raises AgoraError at the call."""
import pytest

import agora


def test_messages_is_a_window_of_a_chat(relay, tmp_path):
    with agora.World.open(relay, db=str(tmp_path)) as w:
        w.say("@ann start")
        every = w.messages()
        assert [(m["seq"], m["sender"]) for m in every] == [(1, "human"), (2, "ann"), (3, "bob")]
        assert all(m["type"] == "message" for m in every)  # no thread steps
        assert [m["seq"] for m in w.messages(limit=2)] == [2, 3]  # start 0: the last two
        assert [m["seq"] for m in w.messages(start=2, limit=1)] == [2]
        assert w.messages(start=9) == []
        chat = w.current_chat
        w.new_chat()
        assert w.messages() == [] and len(w.messages(chat)) == 3
        with pytest.raises(agora.AgoraError) as e:
            w.messages("nope")
        assert e.value.name == "NOT_FOUND" and "nope" in e.value.message
        with pytest.raises(agora.AgoraError) as e:
            w.messages(start=-1)
        assert e.value.name == "INVALID" and "World.messages: start -1" in e.value.message
    with agora.World.open(relay, save=False) as w:
        with pytest.raises(agora.AgoraError) as e:
            w.messages()
        assert e.value.name == "STATE" and "without a database" in e.value.message


def test_add_agent_like_copies_an_agent(relay):
    with agora.World.open(relay, save=False) as w:
        dave = w.add_agent_like("bob", name="dave", replies=["@human dave here"])
        assert dave["name"] == "dave" and dave["provider"] == "script"
        assert w.say("@dave hi")[0]["text"] == "@human dave here"
        with pytest.raises(agora.AgoraError) as e:
            w.add_agent_like("bob", name="dave")
        assert e.value.name == "EXISTS"
        with pytest.raises(agora.AgoraError) as e:
            w.add_agent_like("nobody", name="eve")
        assert e.value.name == "NOT_FOUND" and "nobody" in e.value.message
        assert [a["name"] for a in w.agents()] == ["ann", "bob", "dave"]


def test_how_the_open_went(relay, tmp_path):
    db = str(tmp_path / "db")
    with agora.World.open(relay, db=db) as w:
        assert w.db == db and not w.stored and not w.resumed
        w.say("@ann start")
        chat = w.current_chat
    with agora.World.open("Lib", db=db) as w:  # the stored world, its chat continued
        assert w.stored and w.resumed and w.current_chat == chat
    with agora.World.open("Lib", db=db, new_chat=True) as w:
        assert w.stored and not w.resumed
    with agora.World.open(None, db=db, from_store=True) as w:  # the database's only world
        assert w.stored and w.name == "Lib"
    with agora.World.open(relay, save=False) as w:
        assert w.db is None and not w.stored and not w.resumed


def test_duration_ms():
    assert agora.duration_ms("1h30m") == 5_400_000
    assert agora.duration_ms("90s") == 90_000 and agora.duration_ms("2d") == 172_800_000
    for bad in ("3x", "", "0s", "30m1h"):
        with pytest.raises(agora.AgoraError) as e:
            agora.duration_ms(bad)
        assert e.value.name == "INVALID" and e.value.message, bad


def test_a_viewer_on_nats(relay, nats_url, tmp_path):
    seen = []
    with agora.World.open(relay, db=str(tmp_path / "a"), view=True, nats_url=nats_url) as a, \
            agora.World.open(relay, db=str(tmp_path / "b"), view=True, nats_url=nats_url) as b:
        a.publish("@human hello everyone")  # addressed to no agent: no host needs to answer
        list(a.run(timeout=30))

        def on_event(ev):
            if ev.get("type") == "message":
                seen.append((ev["sender"], ev["text"]))
                b.interrupt()
        b.subscribe(on_event)
        list(b.run_until_interrupt(timeout=30))
        assert ("human", "@human hello everyone") in seen
        assert b.current_chat == a.current_chat
        with pytest.raises(agora.AgoraError) as e:
            a.set_budget(tokens=100)  # would hold in this process only
        assert e.value.name == "STATE" and "not available on a world joined over NATS" in e.value.message
    with pytest.raises(agora.AgoraError) as e:
        agora.World.open(relay, save=False, view=True, nats_url=nats_url)
    assert e.value.name == "INVALID" and "AGORA_VIEW needs nats_url and a database" in e.value.message


def test_an_older_library_raises_at_the_call(relay, tmp_path, monkeypatch):
    with agora.World.open(relay, db=str(tmp_path)) as w:
        monkeypatch.setattr(agora.lib, "agora_api_version", lambda: 6)
        assert w.settings()["name"] == "Lib"  # API 6 still there
        for call in (w.messages, lambda: w.add_agent_like("ann", name="dave"), lambda: w.db, lambda: w.stored,
                     lambda: w.resumed, lambda: agora.duration_ms("1h")):
            with pytest.raises(agora.AgoraError, match="needs libagora API 7") as e:
                call()
            assert e.value.name == "STATE"
        with pytest.raises(agora.AgoraError, match=r"World.open\(view=\) needs libagora API 7"):
            agora.World.open(relay, db=str(tmp_path / "v"), view=True, nats_url="nats://127.0.0.1:9")

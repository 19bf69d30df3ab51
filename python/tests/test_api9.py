"""libagora API 9 and 12 from Python: an agent's memories from an open world and from the database alone,
a chat and a world's settings as Markdown, a chat's id from a prefix, a display name's id, an option's
value checked, a stored chat paged through and searched (API 14); the errors' codes and messages, and an older library."""
import pytest

import agora

# m keeps a memory stream (the hash embedder: relevance needs nothing sent); w keeps a window only.
TOWN = ('{"name": "Mem Town", "agents": ['
        '{"name": "m", "provider": "script", "replies": ["noted"], "auto_reply": false,'
        ' "memory": {"mode": "stream", "importance": 7}},'
        '{"name": "w", "provider": "script", "replies": ["ok"], "auto_reply": false}]}')


@pytest.fixture
def told(tmp_path):
    """A database whose town chat holds "@m @w the well is dry" and the two answers; (db, chat)."""
    db = str(tmp_path / "db")
    with agora.World.open(TOWN, db=db) as w:
        w.say("@m @w the well is dry")
        return db, w.current_chat


def test_memories_of_an_open_world(tmp_path):
    with agora.World.open(TOWN, db=str(tmp_path / "db")) as w:
        w.say("@m @w the well is dry")  # the current chat never asked for first (a C bug it found)
        got = w.memories("m")
        assert got["chat"] == w.current_chat and got["agent"] == "m"
        assert [(x["sender"], x["text"]) for x in got["memories"]] == [("human", "@m @w the well is dry"),
                                                                      ("m", "noted")]
        assert got["memories"][0]["importance"] == 7
        ranked = w.memories("m", query="well")
        assert ranked["query"] == "well" and ranked["memories"][0]["text"] == "@m @w the well is dry"
        assert set(ranked["memories"][0]["scores"]) == {"recency", "importance", "relevance", "total"}
        w.set_title("first")
        new = w.new_chat()
        assert w.memories("m")["chat"] == new
        with pytest.raises(agora.AgoraError) as e:
            w.memories("nobody")
        assert e.value.code == agora._lib.ERR_NOT_FOUND and "no agent 'nobody'" in e.value.message
        with pytest.raises(agora.AgoraError) as e:
            w.memories("w")  # a window only: no stream
        assert e.value.name == "INVALID"
    with agora.World.open(TOWN, save=False) as w:
        with pytest.raises(agora.AgoraError) as e:
            w.memories("m")
        assert e.value.name == "STATE" and "no current chat" in e.value.message


def test_memories_from_the_database(told):
    db, chat = told
    with agora.Database.open(db, read_only=True) as d:  # the chat's world is opened for the call: it writes
        with pytest.raises(agora.AgoraError) as e:
            d.memories(chat, "m")
        assert e.value.name == "STORAGE"
    with agora.Database.open(db) as d:
        got = d.memories(chat[:6], "m", query="well")  # a unique prefix names the chat
        assert got["chat"] == chat and got["query"] == "well"
        assert "relevance" in got["memories"][0]["scores"] and "embedder_failed" not in got
        assert d.memories(chat, "m", allow_key_to=["http://127.0.0.1:1/v1"])["memories"][1]["text"] == "noted"
        with pytest.raises(agora.AgoraError) as e:
            d.memories("zzzz", "m")
        assert e.value.name == "NOT_FOUND" and "zzzz" in e.value.message
        with pytest.raises(agora.AgoraError) as e:
            d.memories(chat, "nobody")
        assert e.value.name == "NOT_FOUND" and "nobody" in e.value.message


def test_chat_id_from_a_prefix(told):
    db, chat = told
    with agora.Database.open(db) as d:
        assert d.chat_id(chat[:5]) == chat and d.chat_id(chat) == chat
        with pytest.raises(agora.AgoraError) as e:
            d.chat_id("zzzz")
        assert e.value.name == "NOT_FOUND"
        other = d.new_chat("Mem Town")  # ids made in one millisecond share their first characters
        common = next(i for i in range(len(chat)) if chat[i] != other[i])
        if common:
            with pytest.raises(agora.AgoraError) as e:
                d.chat_id(chat[:common])
            assert e.value.name == "INVALID" and chat in e.value.message and other in e.value.message


def test_markdown_of_a_chat_and_of_a_world(told):
    db, chat = told
    with agora.Database.open(db) as d:
        md = d.export_markdown(chat)
        assert md.startswith("# ") and f"`{chat}`" in md and "the well is dry" in md and "## World: Mem Town" in md
        assert agora.snapshot_markdown(d.export(chat)) == md
        world_md = d.world_markdown("Mem Town")
        assert world_md.startswith("## World: Mem Town") and "#### m" in world_md and "#### w" in world_md
        assert agora.world_markdown(d.world("mem-town")["settings"]) == world_md
        with pytest.raises(agora.AgoraError) as e:
            d.export_markdown("zzzz")
        assert e.value.name == "NOT_FOUND"
    with agora.World.open("mem-town", db=db, chat=chat) as w:
        assert w.export_markdown() == md
        assert w.settings_markdown() == world_md
    with pytest.raises(agora.AgoraError) as e:
        agora.snapshot_markdown("{not json")
    assert e.value.name == "INVALID"


def test_name_id_and_option_check():
    assert agora.name_id("Starter 2") == "starter-2"
    assert agora.name_id("Mem  Town") == "mem-town"
    with pytest.raises(agora.AgoraError) as e:
        agora.name_id("-no")
    assert e.value.name == "INVALID"
    agora.option_check("provider", "openai")
    agora.option_check("llm_cache", "replay")
    with pytest.raises(agora.AgoraError) as e:
        agora.option_check("provider", "nope")
    assert e.value.name == "INVALID" and "unknown provider 'nope'" in e.value.message and "openai" in e.value.message
    with pytest.raises(agora.AgoraError) as e:
        agora.option_check("colour", "red")
    assert e.value.name == "INVALID" and "colour" in e.value.message


def test_database_messages_paged(tmp_path):
    db = str(tmp_path / "db")
    with agora.World.open(TOWN, db=db) as w:
        for i in range(3):
            w.say(f"@m note {i}")
        chat = w.current_chat
        whole = w.messages()
    with agora.Database.open(db, read_only=True) as d:
        assert d.messages(chat) == whole and [m["seq"] for m in whole] == list(range(1, 7))
        assert [m["seq"] for m in d.messages(chat, start=3, limit=2)] == [3, 4]
        assert [m["text"] for m in d.messages(chat[:6], limit=2)] == ["@m note 2", "noted"]
        assert d.messages(chat, start=7) == []
        with pytest.raises(agora.AgoraError) as e:
            d.messages("zzzz")
        assert e.value.name == "NOT_FOUND" and "zzzz" in e.value.message
        with pytest.raises(agora.AgoraError) as e:
            d.messages(chat, start=-1)
        assert e.value.name == "INVALID" and "start -1" in e.value.message


def test_database_search(tmp_path):
    db = str(tmp_path / "db")
    with agora.World.open(TOWN, db=db) as w:
        for i in range(3):
            w.say(f"@m Note {i}")
        chat = w.current_chat
    with agora.Database.open(db, read_only=True) as d:
        got = d.search(chat, "NOTE")  # case folded: the asks and the answers ("noted")
        assert [m["seq"] for m in got["matches"]] == [1, 2, 3, 4, 5, 6] and got["more"] is False
        assert [m["seq"] for m in d.search(chat, "note 1")["matches"]] == [3]
        page = d.search(chat[:6], "note", after=2, limit=1)
        assert [m["text"] for m in page["matches"]] == ["@m Note 1"] and page["more"] is True
        assert d.search(chat, "m", limit=10)["matches"][1]["sender"] == "m"  # a sender matches too
        assert d.search(chat, "nowhere") == {"matches": [], "more": False}
        with pytest.raises(agora.AgoraError) as e:
            d.search(chat, "")
        assert e.value.name == "INVALID" and "text" in e.value.message
        with pytest.raises(agora.AgoraError) as e:
            d.search(chat, "x", limit=0)
        assert e.value.name == "INVALID" and "limit 0" in e.value.message
        with pytest.raises(agora.AgoraError) as e:
            d.search("zzzz", "x")
        assert e.value.name == "NOT_FOUND"


def test_an_older_library_raises_at_the_call(told, monkeypatch):
    db, chat = told
    with agora.Database.open(db) as d:
        monkeypatch.setattr(agora.lib, "agora_api_version", lambda: 13)
        with pytest.raises(agora.AgoraError, match="Database.search needs libagora API 14"):
            d.search(chat, "x")
        monkeypatch.setattr(agora.lib, "agora_api_version", lambda: 11)
        with pytest.raises(agora.AgoraError, match="Database.messages needs libagora API 12") as e:
            d.messages(chat)
        assert e.value.name == "STATE"
        monkeypatch.setattr(agora.lib, "agora_api_version", lambda: 8)
        with pytest.raises(agora.AgoraError, match="Database.memories needs libagora API 9"):
            d.memories(chat, "m")
        with pytest.raises(agora.AgoraError, match="agora.name_id needs libagora API 9"):
            agora.name_id("x")

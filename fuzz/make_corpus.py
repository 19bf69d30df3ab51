#!/usr/bin/env python3
"""Writes the seed corpora under fuzz/corpus/<target>/ from tests/data/vectors.json (the worked examples of
docs/behaviour.md), the examples, the tests' fixtures and recorded-style provider replies, plus snapshots
exported by the built binary.
A developer tool: run once after the vectors or formats change (python3 fuzz/make_corpus.py BUILD_DIR);
the corpora are committed, so CI does not need python. Inputs start with the control byte(s) each
harness reads (see fuzz/fuzz_*.c)."""
import glob, hashlib, json, os, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "fuzz", "corpus")
VECTORS = [os.path.join(ROOT, "tests", "data", "vectors.json")]


def put(target, data):
    if isinstance(data, str):
        data = data.encode()
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    name = "seed-" + hashlib.sha1(data).hexdigest()[:16]
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def vectors():
    for p in VECTORS:
        if os.path.exists(p):
            with open(p) as f:
                return json.load(f)
    sys.exit("no vectors.json")


def j(o):
    return json.dumps(o, separators=(",", ":"))


# Recorded-style replies per provider: (control byte of fuzz_wire: provider | 4 = streamed, body).
OPENAI = 0
ANTHROPIC = 1
GEMINI = 2
OLLAMA = 3
STREAM = 4


def sse(events, crlf=False):
    nl = "\r\n" if crlf else "\n"
    out = ""
    for ev in events:
        name, data = ev if isinstance(ev, tuple) else (None, ev)
        if name:
            out += "event: " + name + nl
        out += "data: " + (data if isinstance(data, str) else j(data)) + nl + nl
    return out


def wire_seeds():
    s = []
    # OpenAI-compatible, whole and streamed, text and tool calls.
    s.append((OPENAI, j({"id": "chatcmpl-1", "object": "chat.completion", "choices": [{"index": 0, "message": {
        "role": "assistant", "content": "@bob Hello there."}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 31, "completion_tokens": 5, "total_tokens": 36}})))
    s.append((OPENAI, j({"choices": [{"index": 0, "message": {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_abc", "type": "function", "function": {"name": "save_context",
                                                           "arguments": "{\"set\":{\"topic\":\"x\"}}"}}]},
        "finish_reason": "tool_calls"}]})))
    s.append((OPENAI | STREAM, sse([
        {"choices": [{"delta": {"role": "assistant", "content": ""}, "finish_reason": None}]},
        {"choices": [{"delta": {"content": "Hel"}, "finish_reason": None}]},
        {"choices": [{"delta": {"content": "lo"}, "finish_reason": None}]},
        {"choices": [{"delta": {}, "finish_reason": "stop"}]},
        {"choices": [], "usage": {"prompt_tokens": 7, "completion_tokens": 2}}, "[DONE]"])))
    s.append((OPENAI | STREAM, sse([
        {"choices": [{"delta": {"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                                                "function": {"name": "send_message", "arguments": ""}}]}}]},
        {"choices": [{"delta": {"tool_calls": [{"index": 0, "function": {"arguments": "{\"to\":[\"bo"}}]}}]},
        {"choices": [{"delta": {"tool_calls": [{"index": 0, "function": {"arguments": "b\"],\"text\":\"hi\"}"}}]}}]},
        {"choices": [{"delta": {"tool_calls": [{"index": 1, "id": "call_2",
                                                "function": {"name": "load_context", "arguments": "{}"}}]}}]},
        {"choices": [{"delta": {}, "finish_reason": "tool_calls"}]}, "[DONE]"])))
    s.append((OPENAI, j({"error": {"message": "You exceeded your current quota", "type": "insufficient_quota",
                                   "param": None, "code": "insufficient_quota"}})))
    # Anthropic Messages.
    s.append((ANTHROPIC, j({"id": "msg_1", "type": "message", "role": "assistant", "content": [
        {"type": "text", "text": "Sure."},
        {"type": "tool_use", "id": "toolu_1", "name": "save_context", "input": {"set": {"a": 1}}}],
        "stop_reason": "tool_use", "usage": {"input_tokens": 20, "output_tokens": 9}})))
    s.append((ANTHROPIC | STREAM, sse([
        ("message_start", {"type": "message_start", "message": {"usage": {"input_tokens": 11, "output_tokens": 1}}}),
        ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        ("ping", {"type": "ping"}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi "}}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("content_block_start", {"type": "content_block_start", "index": 1, "content_block": {
            "type": "tool_use", "id": "toolu_2", "name": "send_message", "input": {}}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 1, "delta": {
            "type": "input_json_delta", "partial_json": "{\"to\": [\"a"}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 1, "delta": {
            "type": "input_json_delta", "partial_json": "nn\"], \"text\": \"x\"}"}}),
        ("content_block_stop", {"type": "content_block_stop", "index": 1}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 5}}),
        ("message_stop", {"type": "message_stop"})])))
    s.append((ANTHROPIC | STREAM, sse([("error", {"type": "error", "error": {"type": "overloaded_error",
                                                                              "message": "Overloaded"}})])))
    # Gemini generateContent / streamGenerateContent (SSE with CRLF).
    s.append((GEMINI, j({"candidates": [{"content": {"parts": [{"text": "Bonjour"}], "role": "model"},
                                         "finishReason": "STOP"}],
                         "usageMetadata": {"promptTokenCount": 4, "candidatesTokenCount": 2}})))
    s.append((GEMINI, j({"candidates": [{"content": {"parts": [
        {"functionCall": {"name": "load_context", "args": {}}, "thoughtSignature": "c2ln"}], "role": "model"}}]})))
    s.append((GEMINI | STREAM, sse([
        {"candidates": [{"content": {"parts": [{"text": "Bon"}], "role": "model"}}]},
        {"candidates": [{"content": {"parts": [{"text": "jour"}], "role": "model"}, "finishReason": "STOP"}],
         "usageMetadata": {"promptTokenCount": 4, "candidatesTokenCount": 2}}], crlf=True)))
    s.append((GEMINI, j([{"error": {"code": 429, "message": "Resource has been exhausted",
                                    "status": "RESOURCE_EXHAUSTED"}}])))
    s.append((GEMINI, "<html><body>502 Bad Gateway</body></html>"))
    s.append((GEMINI | STREAM, ""))
    # Ollama /api/chat (NDJSON).
    s.append((OLLAMA, j({"model": "llama3", "message": {"role": "assistant", "content": "Hey"}, "done": True,
                         "prompt_eval_count": 9, "eval_count": 1})))
    s.append((OLLAMA | STREAM, "\n".join(j(x) for x in [
        {"message": {"role": "assistant", "content": "Hey"}, "done": False},
        {"message": {"role": "assistant", "content": "", "tool_calls": [
            {"function": {"name": "save_context", "arguments": {"set": {"k": "v"}}}}]}, "done": False},
        {"message": {"role": "assistant", "content": ""}, "done": True, "prompt_eval_count": 9,
         "eval_count": 1}]) + "\n"))
    s.append((OLLAMA | STREAM, j({"error": "model 'x' not found"}) + "\n"))
    return s


def regressions(snaps):
    """Inputs that found defects (issue 17), kept by name: each must stay harmless."""
    base = next((json.loads(x) for x in snaps if '"context"' in x), json.loads(snaps[0]) if snaps else None)
    if not base:
        return
    agent = next(a for a in base["agents"] if "context" in a) if any("context" in a for a in base["agents"]) \
        else base["agents"][0]

    def variant(name, change):
        snap = json.loads(json.dumps(base))
        change(snap, next(a for a in snap["agents"] if a["id"] == agent["id"]))
        d = os.path.join(CORPUS, "snapshot")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "regress-" + name), "w") as f:
            f.write(json.dumps(snap).replace("1e+300", "1e300"))

    def ctx(s, a):
        a.setdefault("context", {"version": 1, "updated_at": None, "data": {}})["version"] = 1e300
    variant("context-version-1e300", ctx)
    variant("turn-count-2p31", lambda s, a: a.__setitem__("turn_count", 2 ** 31))
    variant("format-1e15", lambda s, a: s.__setitem__("format", 10 ** 15))
    variant("duplicate-agent-ids", lambda s, a: s["agents"].append(json.loads(json.dumps(a))))


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build")
    v = vectors()
    for c in v["parse"]:
        for ctl in (0x01, 0x02, 0x31):
            put("mention", bytes([ctl, 3]) + c["text"].encode())
    for c in v["shape"]:
        put("shape", bytes([0x80]) + c["reply"].encode())
        put("mention", bytes([0x05, 2]) + c["reply"].encode())
        put("title", c["reply"])
    for c in v["parse"]:
        put("title", c["text"])
    for t in ["Hi @alice, can you please explain **quantum** computing in simple terms?",
              "hello there", "# Title\n\n`code` and [a link](http://x) — ünïcödé " + "word " * 20, "   ", ""]:
        put("title", t)
    for ctl, body in wire_seeds():
        put("wire", bytes([ctl]) + body.encode())
        if ctl & STREAM:
            # The same bytes for the stream parsers: SSE for all but Ollama's NDJSON.
            put("stream", bytes([1 if (ctl & 3) == OLLAMA else 0]) + body.encode())
    put("stream", b"\x00data: a\r\n\r\ndata:b\r\r: keep-alive\n\nid: 7\nretry: 10\ndata: c\n\n")
    put("stream", b"\x02data: x\ndata: y\n\nevent: empty\n\ndata: z\n\ndata: [DONE]")
    worlds = [w["world"] for w in v["worlds"]]
    for p in sorted(glob.glob(os.path.join(ROOT, "examples", "*.json"))):
        with open(p, "rb") as f:
            put("world", f.read())
    for w in worlds:
        put("world", json.dumps(w, indent=1))
    # Snapshots: what export writes for each example (script provider, offline), and the
    # regression inputs of issue 17.
    agora = os.path.join(build, "agora")
    snaps = []
    if os.path.exists(agora):
        with tempfile.TemporaryDirectory() as tmp:
            db = os.path.join(tmp, "db")
            for p in sorted(glob.glob(os.path.join(ROOT, "examples", "*.json"))):
                r = subprocess.run([agora, "run", p, "--db", db, "--yes"], capture_output=True, timeout=60)
                if r.returncode != 0:
                    continue
            r = subprocess.run([agora, "chats", "list", "--json", "--db", db], capture_output=True, text=True)
            for line in r.stdout.splitlines():
                cid = json.loads(line)["id"]
                e = subprocess.run([agora, "chats", "export", cid, "--db", db], capture_output=True, text=True)
                if e.returncode == 0:
                    snaps.append(e.stdout)
    for s in snaps:
        put("snapshot", s)
    regressions(snaps)
    print("corpus written to", CORPUS, "with", len(snaps), "snapshots")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""libagora from Python (issue 27): events per second delivered to a Python consumer, the per-call
overhead of World.say, and a 10,000-message scripted world run by the CLI and by Python side by side.

Usage: bench/bench_python.py BUILD_DIR [runs]   (BUILD_DIR holds agora and libagora.so.0; a release build)
Figures: min / median / max over the runs."""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build-bench")
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 5
os.environ.setdefault("AGORA_LIB", os.path.join(build, "libagora.so.0"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import agora  # noqa: E402
from agora._lib import lib  # noqa: E402


def stats(xs, fmt="{:.0f}"):
    return " / ".join(fmt.format(x) for x in (min(xs), statistics.median(xs), max(xs)))


ONE = '{"name": "One", "defaults": {"provider": "script"}, "agents": [{"name": "ann", "replies": ["@human ok"]}]}'


def scripted_world(path, steps):
    """steps human messages, each answered by ann: 2 x steps messages, as `agora run` publishes them."""
    script = [{"from": "human", "text": f"@ann step {i}"} for i in range(steps)]
    world = {"name": "Scripted", "turn_limit": 1000000, "defaults": {"provider": "script"},
             "agents": [{"name": "ann", "replies": ["@human noted"]}], "script": script}
    with open(path, "w") as f:
        json.dump(world, f)
    return world


def events_per_second(n):
    """n world messages queued in a world with no agents, then delivered to a Python for-loop that reads
    each message's text."""
    with agora.World.open('{"name": "Empty", "agents": []}', save=False) as w:
        for i in range(n):
            lib.agora_publish(w._w, b"world", b"the weather changes")
        t = time.perf_counter()
        got = sum(1 for ev in w.run() if ev["type"] == "message" and ev["text"])
        dt = time.perf_counter() - t
    assert got == n, got
    return n / dt


def say_overhead(n):
    """Microseconds per say() (publish, run until quiet, the reply as a dict), and per the same two C
    calls made directly through ctypes (no events to Python)."""
    with agora.World.open(ONE, save=False) as w:
        t = time.perf_counter()
        for _ in range(n):
            w.say("@ann hi")
        py = (time.perf_counter() - t) / n * 1e6
        lib.agora_events_buffer(w._w, 0)
        t = time.perf_counter()
        for _ in range(n):
            lib.agora_publish(w._w, b"human", b"@ann hi")
            lib.agora_run_until_quiet(w._w)
        c = (time.perf_counter() - t) / n * 1e6
    return py, c


def python_run(world):
    """The script as `agora run` runs it: each step published, then run until quiet, every event consumed."""
    n = 0
    t = time.perf_counter()
    with agora.World.open(json.dumps(world), save=False) as w:
        for step in world["script"]:
            w.publish(step["text"], step["from"])
            for ev in w.run():
                n += 1
    return time.perf_counter() - t, n


def cli_run(path):
    t = time.perf_counter()
    out = subprocess.run([os.path.join(build, "agora"), "run", path, "--no-save", "--json"],
                         stdout=subprocess.PIPE, check=True).stdout
    return time.perf_counter() - t, out.count(b"\n")


def main():
    print(f"libagora {agora.version()} from {os.environ['AGORA_LIB']}, {runs} runs")
    eps = [events_per_second(200000) for _ in range(runs)]
    print(f"events/s to a Python consumer (200,000 messages): {stats(eps)}")
    py, c = zip(*(say_overhead(5000) for _ in range(runs)))
    print(f"say() per call, µs: {stats(py, '{:.1f}')}   (the two C calls through ctypes: {stats(c, '{:.1f}')})")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "scripted.json")
        world = scripted_world(path, 5000)
        clis, pys = [], []
        for _ in range(runs):
            dt, lines = cli_run(path)
            clis.append(dt)
            dt, events = python_run(world)
            pys.append(dt)
        ratio = [p / c for p, c in zip(pys, clis)]
        rates = [events / p for p in pys]
        print(f"10,000-message scripted world, wall s: CLI --json {stats(clis, '{:.3f}')} ({lines} lines), "
              f"Python {stats(pys, '{:.3f}')} ({events} events); Python/CLI {stats(ratio, '{:.2f}')}")
        print(f"events/s to Python in that scripted world (the world's own work included): {stats(rates)}")


if __name__ == "__main__":
    main()

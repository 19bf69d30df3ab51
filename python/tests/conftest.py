"""Shared set-up for the Python tests: the package from the source tree, libagora from the build
(AGORA_LIB, set by ctest), the loopback LLM server as a program (AGORA_TEST_SERVER) and a loopback
JetStream nats-server (nats_url)."""
import os
import socket
import subprocess
import sys
import time

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

RELAY = ('{"name": "Lib", "defaults": {"provider": "script"}, "agents": ['
         '{"name": "ann", "replies": ["@bob hello from ann"]},'
         '{"name": "bob", "replies": ["@human bob here"]}]}')


@pytest.fixture
def relay():
    return RELAY


@pytest.fixture
def llm_server():
    """Starts agora-test-server with rules (MATCH, DIRECTIVES pairs); yields a function returning its base URL."""
    procs = []

    def start(*rules):
        args = [os.environ["AGORA_TEST_SERVER"]]
        for match, directives in rules:
            args += ["--rule", match, directives]
        p = subprocess.Popen(args, stdout=subprocess.PIPE, text=True)
        procs.append(p)
        port = int(p.stdout.readline())
        return f"http://127.0.0.1:{port}/v1"

    yield start
    for p in procs:
        p.terminate()
        p.wait(timeout=10)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def nats_url(tmp_path):
    """A JetStream nats-server on loopback for the test; its URL."""
    port = free_port()
    p = subprocess.Popen(["nats-server", "-js", "-a", "127.0.0.1", "-p", str(port), "-sd", str(tmp_path / "js")],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(500):  # until it accepts connections
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.01)
    yield f"nats://127.0.0.1:{port}"
    p.terminate()
    p.wait(timeout=10)

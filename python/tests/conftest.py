"""Shared set-up for the Python tests: the package from the source tree, libagora from the build
(AGORA_LIB, set by ctest), and the loopback LLM server as a program (AGORA_TEST_SERVER)."""
import os
import subprocess
import sys

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

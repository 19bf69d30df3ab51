"""`pip install ./python` into a fresh venv, offline (no index, Debian's setuptools): the package
imports from the venv and runs a world on libagora."""
import os
import shutil
import subprocess
import sys

import pytest

SRC = os.path.join(os.path.dirname(__file__), "..")


@pytest.mark.skipif(not os.path.exists("/usr/bin/python3"), reason="needs Debian's python3")
def test_pip_install_in_a_venv_offline(tmp_path):
    pkg = tmp_path / "python"
    shutil.copytree(SRC, pkg, ignore=shutil.ignore_patterns("tests", "build", "*.egg-info", "__pycache__"))
    venv = tmp_path / "venv"
    # The venv sees Debian's setuptools (python3-setuptools); nothing comes from the network.
    subprocess.run(["/usr/bin/python3", "-m", "venv", "--system-site-packages", str(venv)], check=True)
    env = dict(os.environ, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    r = subprocess.run([str(venv / "bin/pip"), "install", "--no-build-isolation", "--no-index", str(pkg)],
                       env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    code = ("import agora, sys; w = agora.World.open(sys.argv[1], save=False); "
            "print(agora.__file__); print(w.say('@ann start')[-1]['text']); w.close()")
    relay = ('{"name": "L", "defaults": {"provider": "script"}, "agents": [{"name": "ann", '
             '"replies": ["@human installed"]}]}')
    r = subprocess.run([str(venv / "bin/python"), "-c", code, relay], cwd=str(tmp_path), capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    where, text = r.stdout.split("\n")[:2]
    assert where.startswith(str(venv)) and text == "@human installed"

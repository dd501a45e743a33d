"""Child Python processes of a program run by the runner inherit the hook (through the .pth)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from _venv import RECORDING_MODULE, Venv, describe, write

# Each mode starts one child and reports what the child saw: whether the hook
# was on, with which engine, and whether a module defining a hook got it.
PARENT = """\
import json, multiprocessing, os, subprocess, sys
from concurrent.futures import ProcessPoolExecutor

class Payload:
    def __init__(self, value):
        self.value = value

def probe(payload):
    # The payload is a class of the parent's __main__: it unpickles in the child.
    import pep726hook, helper
    helper.x = payload.value
    return {
        "installed": pep726hook.is_installed(),
        "engine": pep726hook.engine(),
        "calls": helper.calls,
        "payload": [type(payload).__name__, payload.value],
        "pid": os.getpid(),
    }

def main(mode):
    if mode == "subprocess":
        code = "import json, sys; sys.path.insert(0, sys.argv[1]); import runpy; " \\
               "ns = runpy.run_path(sys.argv[2]); print(json.dumps(ns['probe'](ns['Payload'](1))))"
        out = subprocess.run(
            [sys.executable, "-c", code, os.path.dirname(__file__), __file__, "child"],
            check=True, capture_output=True, text=True,
        ).stdout
        return json.loads(out)
    if mode in ("spawn", "forkserver"):
        with multiprocessing.get_context(mode).Pool(1) as pool:
            return pool.apply(probe, (Payload(1),))
    if mode == "executor":
        with ProcessPoolExecutor(1) as executor:
            return executor.submit(probe, Payload(1)).result()
    if mode == "executor-spawn":
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(1, mp_context=context) as executor:
            return executor.submit(probe, Payload(1)).result()
    raise SystemExit(f"unknown mode {mode}")

if __name__ == "__main__" and sys.argv[1:2] != ["child"]:
    result = main(sys.argv[1])
    result["pid"] = result["pid"] != os.getpid()
    print(json.dumps(result))
"""

MODES = ["subprocess", "spawn", "forkserver", "executor", "executor-spawn"]


@pytest.mark.parametrize("mode", MODES)
def test_children_get_the_hook(venv: Venv, venv_engine: str, tmp_path: Path, mode: str) -> None:
    if mode == "forkserver" and sys.platform == "win32":
        pytest.skip("no forkserver on Windows")
    if mode == "executor-spawn" and sys.implementation.name == "pypy":
        # PyPy 3.9's ProcessPoolExecutor.submit calls a method it lacks for
        # non-fork contexts, with or without pep726hook.
        pytest.skip("PyPy's ProcessPoolExecutor cannot use the spawn context")
    write(tmp_path / "helper.py", RECORDING_MODULE)
    script = write(tmp_path / "parent.py", PARENT)
    result = venv.run(["pep726hook", "--engine", venv_engine, str(script), mode], cwd=tmp_path)
    assert result.returncode == 0, describe(result)
    assert result.stderr == "", describe(result)
    seen = json.loads(result.stdout.splitlines()[-1])
    assert seen == {
        "installed": True,
        "engine": venv_engine,
        "calls": ["x"],
        "payload": ["Payload", 1],
        "pid": True,
    }


def test_children_of_a_plain_run_do_not_get_the_hook(venv: Venv, tmp_path: Path) -> None:
    write(tmp_path / "helper.py", RECORDING_MODULE)
    script = write(tmp_path / "parent.py", PARENT)
    result = venv.run(["python", str(script), "spawn"], cwd=tmp_path)
    assert result.returncode == 0, describe(result)
    seen = json.loads(result.stdout.splitlines()[-1])
    assert seen["installed"] is False
    assert seen["calls"] == []

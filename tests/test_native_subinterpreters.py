"""Native engine in sub-interpreters: attaching to the main interpreter's patch, refused before it."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _native_helpers import REQUIRES_NATIVE, SRC, run_python

pytestmark = REQUIRES_NATIVE


# --- sub-interpreters ----------------------------------------------------------

SUBINTERPRETER_PROBE = """
import json, sys, types
sys.path.insert(0, {src!r})
result = {{}}
try:
    import pep726hook
    from pep726hook import _native_engine
    result["reason"] = _native_engine.unavailable_reason()
    result["available"] = list(pep726hook.available_engines())
    try:
        pep726hook.install("class")
        result["class"] = "installed"
        pep726hook.uninstall()
    except pep726hook.EngineUnavailableError as error:
        result["class"] = str(error)
    try:
        installation = pep726hook.install("native")
    except pep726hook.EngineUnavailableError as error:
        result["native"] = str(error)
        installation = pep726hook.install("auto")
    result["engine"] = installation.engine
    log = []
    m = types.ModuleType("m")
    m.__dict__["__setattr__"] = lambda n, v: log.append(n)
    pep726hook.upgrade(m)
    m.x = 1
    object.__setattr__(m, "y", 2)
    result["hooked"] = log == ["x"] and m.__dict__.get("y") == 2
    pep726hook.uninstall()
    log.clear()
    m.z = 3
    result["after_uninstall_hooked"] = log == ["z"]
except BaseException as error:
    result["error"] = repr(error)
with open({out!r}, "w") as file:
    json.dump(result, file)
"""

SUBINTERPRETER_DRIVER = """
import json, sys, types
sys.path.insert(0, {src!r})
import pep726hook
kind, main_installs = sys.argv[1], sys.argv[2] == "1"
if main_installs:
    pep726hook.install("native")
code = {probe!r}
if kind == "legacy":
    import _testcapi
    _testcapi.run_in_subinterp(code)
else:
    try:
        import _interpreters as interpreters
    except ImportError:
        import _xxsubinterpreters as interpreters
    interp = interpreters.create()
    try:
        interpreters.run_string(interp, code)
    finally:
        interpreters.destroy(interp)
log = []
m = types.ModuleType("m")
m.__dict__["__setattr__"] = lambda n, v: log.append(n)
m.x = 1
print(json.dumps({{"main_hooked": log == ["x"], "engine": pep726hook.engine()}}))
"""


def _run_in_subinterpreter(tmp_path: Path, kind: str, main_installs: bool) -> dict[str, Any]:
    out = tmp_path / f"{kind}-{int(main_installs)}.json"
    probe = SUBINTERPRETER_PROBE.format(src=SRC, out=str(out))
    driver = SUBINTERPRETER_DRIVER.format(src=SRC, probe=probe)
    env = dict(os.environ, PYTHONPATH=SRC)
    env.pop("PEP726HOOK", None)
    env.pop("PEP726HOOK_ENGINE", None)
    completed = subprocess.run(
        [sys.executable, "-c", driver, kind, "1" if main_installs else "0"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    main = json.loads(completed.stdout.strip().splitlines()[-1])
    sub: dict[str, Any] = json.loads(out.read_text())
    sub["main"] = main
    return sub


def _kinds() -> list[str]:
    kinds: list[str] = []
    if sys.implementation.name != "cpython":
        # PyPy builds _testcapi from C source on first import; no native engine there.
        return kinds
    try:
        import _testcapi

        if hasattr(_testcapi, "run_in_subinterp"):
            kinds.append("legacy")
    except ImportError:
        pass
    for name in ("_interpreters", "_xxsubinterpreters"):
        if importlib.util.find_spec(name) is not None:
            kinds.append("isolated")
            break
    return kinds


def _own_gil(kind: str) -> bool:
    # interpreters.create() gives a sub-interpreter its own GIL from 3.12 on,
    # and the extension refuses to load there.
    return kind == "isolated" and sys.version_info >= (3, 12)


@pytest.mark.parametrize("kind", _kinds())
def test_subinterpreter_attaches_to_the_main_interpreters_patch(tmp_path: Path, kind: str) -> None:
    result = _run_in_subinterpreter(tmp_path, kind, main_installs=True)
    assert "error" not in result, result
    assert result["main"] == {"main_hooked": True, "engine": "native"}
    assert result["hooked"] is True
    if _own_gil(kind):
        assert "cannot be loaded" in result["reason"]
        assert result["engine"] == "class"
        assert result["available"] == ["class"]
        return
    assert result["reason"] is None
    assert result["engine"] == "native"
    assert result["available"] == ["native", "class"]
    # Never two engines in one process.
    assert "class engine cannot be used on top of it" in result["class"]
    # Detaching the sub-interpreter leaves the main interpreter's patch alone
    # (checked by main_hooked above).  The slot stays patched process-wide:
    # before 3.12 all interpreters share the type dict; from 3.12 on the
    # sub-interpreter, created while patched, got the hooks in its own type
    # dict from the start (3.12: tp_methods; 3.13: wrappers around the
    # direct slot), and uninstall() puts back what it had before install().
    assert result["after_uninstall_hooked"] is True


@pytest.mark.parametrize("kind", _kinds())
def test_subinterpreter_cannot_install_native_before_the_main_interpreter(
    tmp_path: Path, kind: str
) -> None:
    result = _run_in_subinterpreter(tmp_path, kind, main_installs=False)
    assert "error" not in result, result
    assert result["main"] == {"main_hooked": False, "engine": None}
    assert result["engine"] == "class"
    assert result["class"] == "installed"
    assert result["hooked"] is True
    assert result["after_uninstall_hooked"] is False
    if _own_gil(kind):
        assert "cannot be loaded" in result["native"]
    else:
        assert "only the main interpreter can install it" in result["native"]


@pytest.mark.skipif(
    importlib.util.find_spec("test.support") is None or "legacy" not in _kinds(),
    reason="needs test.support and _testcapi.run_in_subinterp",
)
def test_cpython_test_support_run_in_subinterp_survives_the_patch() -> None:
    # _testcapi.run_in_subinterp creates the interpreter with no thread state;
    # on 3.12 the new interpreter must not build its ModuleType dict from the
    # patched slot alone (docs/native-engine.md).  First use, with _testcapi
    # not yet imported.
    result = run_python(
        """
        import types, pep726hook
        pep726hook.install("native")
        from test import support
        print(support.run_in_subinterp("import sys, types; types.ModuleType('m').x = 1"))
        m = types.ModuleType("m")
        log = []
        m.__dict__["__setattr__"] = lambda n, v: log.append(n)
        m.a = 1
        print(log)
        """
    )
    assert result.stdout.split() == ["0", "['a']"], result.stderr

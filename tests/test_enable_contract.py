"""The contract of ``enable()`` against the process-wide hook, one test per row of its table.

docs/activation.md, "enable() and the process-wide hook": ``enable()`` gives
PEP 726 behaviour to the opted-in modules and to no other module, under every
engine, unless the process-wide hook is on as well; ``engine(module)`` and
``is_upgraded(module)`` answer the same under both engines.  Every test runs
once per engine this interpreter has, and checks hooks by real stores.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
from _venv import (
    ENGINES,
    RECORDING_MODULE,
    collect_garbage,
    describe,
    run_fresh_script,
    write,
)

import pep726hook
from pep726hook import _state

# A module opting itself in: every store it sees is recorded, then done.
OPTED_IN = RECORDING_MODULE + "\nimport pep726hook\npep726hook.enable(__name__)\n"

# A module that defines hooks but never opts in.
OTHER = RECORDING_MODULE


@pytest.fixture
def modules(write_module: Callable[..., Path]) -> Iterator[Callable[[str, str], Any]]:
    """Write and import a module; forget those the test made, so their opt-ins end."""
    made: list[str] = []

    def make(name: str, source: str) -> Any:
        write_module(name, source)
        made.append(name)
        return importlib.import_module(name)

    yield make
    for name in made:
        sys.modules.pop(name, None)
    collect_garbage()


def _hooked(module: Any, name: str) -> bool:
    """Store *name* on *module*; tell whether its hook saw the store."""
    before = len(module.calls)
    setattr(module, name, 1)
    assert getattr(module, name) == 1
    return module.calls[before:] == [name]


def test_enable_alone_hooks_the_opted_in_module_and_no_other(
    opt_in_engine: str, modules: Callable[[str, str], Any]
) -> None:
    before = modules("other_before", OTHER)
    opted = modules("opted", OPTED_IN)
    after = modules("other_after", OTHER)
    assert _hooked(opted, "x")
    assert not _hooked(before, "x")
    assert not _hooked(after, "x")
    assert pep726hook.engine(opted) == opt_in_engine
    assert pep726hook.is_upgraded(opted)
    for other in (before, after):
        assert pep726hook.engine(other) is None
        assert not pep726hook.is_upgraded(other)
    assert not pep726hook.is_installed()
    assert pep726hook.engine() is None


def test_untouched_module_has_no_hooks_and_no_engine(
    opt_in_engine: str, modules: Callable[[str, str], Any]
) -> None:
    other = modules("untouched", OTHER)
    assert not _hooked(other, "x")
    assert pep726hook.engine(other) is None
    assert not pep726hook.is_upgraded(other)


@pytest.mark.parametrize("order", ["enable first", "install first"])
def test_enable_with_the_process_wide_hook_hooks_every_module(
    opt_in_engine: str, modules: Callable[[str, str], Any], order: str
) -> None:
    if order == "install first":
        installation = pep726hook.install()
        opted = modules("opted", OPTED_IN)
    else:
        opted = modules("opted", OPTED_IN)
        installation = pep726hook.install()
    with installation:
        assert installation.engine == opt_in_engine
        other = modules("other", OTHER)
        assert _hooked(opted, "x")
        assert _hooked(other, "x")
        assert pep726hook.engine(opted) == pep726hook.engine(other) == opt_in_engine
        assert pep726hook.is_upgraded(opted) and pep726hook.is_upgraded(other)


def test_uninstall_after_enable_keeps_opted_in_modules_and_unhooks_the_others(
    opt_in_engine: str, modules: Callable[[str, str], Any]
) -> None:
    opted = modules("opted", OPTED_IN)
    pep726hook.install()
    other = modules("other", OTHER)
    assert _hooked(other, "x")
    pep726hook.uninstall()
    assert _hooked(opted, "y")
    assert not _hooked(other, "y")
    assert pep726hook.engine(opted) == opt_in_engine and pep726hook.is_upgraded(opted)
    assert pep726hook.engine(other) is None and not pep726hook.is_upgraded(other)


def test_enable_uses_the_engine_of_the_process_wide_hook(
    modules: Callable[[str, str], Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ENGINES:
        # The variable names another engine: the active one wins.
        monkeypatch.setenv("PEP726HOOK_ENGINE", "class" if name == "native" else "auto")
        with pep726hook.install(name):
            opted = modules(f"opted_{name}", OPTED_IN)
            assert pep726hook.engine(opted) == name
        assert _hooked(opted, "x")
        del opted
        sys.modules.pop(f"opted_{name}")
        collect_garbage()
        pep726hook.uninstall()


def test_install_after_enable_takes_the_opted_in_engine_and_refuses_the_other(
    opt_in_engine: str, modules: Callable[[str, str], Any]
) -> None:
    opted = modules("opted", OPTED_IN)
    with pep726hook.install("auto") as installation:
        assert installation.engine == opt_in_engine
    for name in ENGINES:
        if name != opt_in_engine:
            with pytest.raises(pep726hook.EngineUnavailableError, match="opted"):
                pep726hook.install(name)
    assert _hooked(opted, "x")


def test_bad_engine_variable_warns_and_enable_uses_auto(
    modules: Callable[[str, str], Any],
    monkeypatch: pytest.MonkeyPatch,
    no_opted_in_module_alive: None,
) -> None:
    monkeypatch.setenv("PEP726HOOK_ENGINE", "steam")
    with pytest.warns(RuntimeWarning, match="used the 'auto' engine instead"):
        opted = modules("opted", OPTED_IN)
    assert pep726hook.engine(opted) == ENGINES[0]
    assert _hooked(opted, "x")


def test_last_opted_in_module_gone_releases_its_engine(
    opt_in_engine: str, modules: Callable[[str, str], Any], mortal_modules: None
) -> None:
    opted = modules("opted", OPTED_IN)
    assert _state.opt_in_engine is not None
    del opted
    sys.modules.pop("opted")
    collect_garbage()
    pep726hook.uninstall()  # what lets a gone opt-in's engine go
    assert _state.opt_in_engine is None
    if opt_in_engine == "native":
        from pep726hook import _native

        assert not _native.state()["patched"]
    other = modules("other", OTHER)
    assert not _hooked(other, "x")


def test_upgrade_returns_an_opted_in_module_without_the_process_wide_hook(
    opt_in_engine: str, modules: Callable[[str, str], Any]
) -> None:
    opted = modules("opted", OPTED_IN)
    other = modules("other", OTHER)
    assert pep726hook.upgrade(opted) is opted
    with pytest.raises(RuntimeError, match="not installed"):
        pep726hook.upgrade(other)


# The program of the report that made the engines agree: plain `python
# main.py`, a library that opted in, and a module that never did.
LIB_A = """
def __setattr__(name, value):
    raise AttributeError(name)

import pep726hook
pep726hook.enable(__name__)
"""
OTHER_PROGRAM = RECORDING_MODULE
MAIN = """
import pep726hook{install}
import other, lib_a
other.y = 2
print(other.calls, pep726hook.engine(other))
"""


@pytest.mark.parametrize("with_install", [False, True], ids=["enable only", "with install"])
def test_example_program_prints_the_same_under_every_engine(
    opt_in_engine: str, tmp_path: Path, with_install: bool
) -> None:
    write(tmp_path / "lib_a.py", LIB_A)
    write(tmp_path / "other.py", OTHER_PROGRAM)
    write(tmp_path / "main.py", MAIN.format(install="; pep726hook.install()" * with_install))
    result = run_fresh_script(tmp_path, {"PEP726HOOK_ENGINE": opt_in_engine})
    assert result.returncode == 0, describe(result)
    expected = f"['y'] {opt_in_engine}" if with_install else "[] None"
    assert result.stdout == expected + "\n", describe(result)

"""Shared fixtures: every test that uses ``engine`` runs once per available engine."""

from __future__ import annotations

import importlib
import sys
import textwrap
from pathlib import Path
from typing import Iterator

import pytest
from _venv import (
    ENGINES,
    EXPECTED_ENGINES,
    IMMORTAL_MODULES_REASON,
    WriteModule,
    collect_garbage,
    engines_problem,
    modules_are_immortal,
)

import pep726hook
from pep726hook import _state


def pytest_configure(config: pytest.Config) -> None:
    # Every engine-dependent test is parametrised over ENGINES: if an engine
    # were missing, its tests would vanish and the run would still pass.
    problem = engines_problem(ENGINES, EXPECTED_ENGINES)
    if problem is not None:
        raise pytest.UsageError(problem)


def pytest_report_header() -> str:
    return f"pep726hook engines available here: {', '.join(ENGINES)}"


@pytest.fixture(autouse=True)
def _leave_import_state_as_found(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Every test leaves sys.meta_path, sys.path and sys.modules as it found them."""
    meta_path = list(sys.meta_path)
    path = list(sys.path)
    modules_before = set(sys.modules)
    installed_before = pep726hook.is_installed()
    opted_in_before = {id(module) for module in _state.live_opt_ins()}
    yield
    if not installed_before:
        pep726hook.uninstall()
    sys.meta_path[:] = meta_path
    sys.path[:] = path
    base = str(tmp_path_factory.getbasetemp())
    for name in set(sys.modules) - modules_before:
        module = sys.modules.get(name)
        origin = str(getattr(module, "__file__", None) or "")
        spec_origin = str(getattr(getattr(module, "__spec__", None), "origin", None) or "")
        made_by_test = origin.startswith(base) or spec_origin.startswith(base) or origin == ""
        if made_by_test and not name.startswith(("pep726hook", "_pytest", "pytest", "hypothesis")):
            sys.modules.pop(name, None)
    if not installed_before and _state.opt_in_engine is not None:
        # Modules a test opted in with enable() are gone from sys.modules now;
        # uninstall() then also lets their engine (the native patch) go.
        module = None  # the loop above holds the last module it looked at
        collect_garbage()
        pep726hook.uninstall()
    importlib.invalidate_caches()
    # An opted-in module a test leaves alive keeps its engine chosen for every
    # later test (enable() then ignores $PEP726HOOK_ENGINE): fail the test that
    # leaked it, not a later one.  Where modules cannot die, nothing to report.
    left = [m for m in _state.live_opt_ins() if id(m) not in opted_in_before]
    if left and not modules_are_immortal():
        names = sorted({str(m.__dict__.get("__name__")) for m in left})
        left = []
        pytest.fail(f"the test left opted-in modules alive: {', '.join(names)}")


@pytest.fixture
def no_opted_in_module_alive() -> None:
    """Skip where an opted-in module of an earlier test can never die.

    enable() reads $PEP726HOOK_ENGINE only while no opted-in module is alive.
    """
    collect_garbage()
    if _state.live_opt_ins() and modules_are_immortal():
        pytest.skip(IMMORTAL_MODULES_REASON)


@pytest.fixture
def mortal_modules(no_opted_in_module_alive: None) -> None:
    """Skip where a module the test drops would never die."""
    if modules_are_immortal():
        pytest.skip(IMMORTAL_MODULES_REASON)


@pytest.fixture
def native() -> Iterator[None]:
    """The native engine, installed for the duration of the test (with REQUIRES_NATIVE)."""
    with pep726hook.install("native"):
        yield


@pytest.fixture(params=ENGINES)
def engine(request: pytest.FixtureRequest) -> Iterator[str]:
    """The name of an available engine, installed for the duration of the test."""
    name: str = request.param
    with pep726hook.install(name):
        yield name


@pytest.fixture(params=[(e, on) for e in ENGINES for on in (False, True)], ids=str)
def route(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """An engine for enable(), alone or with the process-wide hook on as well."""
    name, installed = request.param
    monkeypatch.setenv("PEP726HOOK_ENGINE", name)
    if installed:
        with pep726hook.install(name):
            yield name
    else:
        yield name


@pytest.fixture(params=ENGINES)
def opt_in_engine(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each engine, as the one enable() chooses, through $PEP726HOOK_ENGINE (its only input)."""
    name: str = request.param
    monkeypatch.setenv("PEP726HOOK_ENGINE", name)
    return name


@pytest.fixture
def busy_switching() -> Iterator[None]:
    """Switch threads as often as possible, to shake out races."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(interval)


@pytest.fixture
def write_module(tmp_path: Path) -> WriteModule:
    """Write ``name.py`` (or a package ``name/__init__.py``) into a directory on sys.path."""
    root = tmp_path / "modules"
    root.mkdir()
    sys.path.insert(0, str(root))

    def write(name: str, source: str, package: bool = False) -> Path:
        parts = name.split(".")
        directory = root.joinpath(*parts[:-1])
        directory.mkdir(parents=True, exist_ok=True)
        if package:
            directory = directory / parts[-1]
            directory.mkdir(exist_ok=True)
            file = directory / "__init__.py"
        else:
            file = directory / f"{parts[-1]}.py"
        file.write_text(textwrap.dedent(source), encoding="utf-8")
        importlib.invalidate_caches()
        return file

    return write


# Fixtures of the subprocess tests (runner, .pth, children, pytest plugin): one
# venv of this interpreter with the built wheel installed, made once per session.
from _venv import venv, venv_engine  # noqa: E402, F401

"""The fast-getattr switch: every module defining a PEP 562 ``__getattr__`` is passed to enable().

Under the native engine; under the class engine the switch does nothing.  In
this process, ``enable()`` is replaced by a recorder (the switch's contract is
what it passes there, and a real opt-in would outlive the test); the
subprocess tests at the end run the real one through every route: the
``.pth`` line, the runner and its children, ``install()``, the pytest plugin.
"""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path
from types import ModuleType
from typing import Iterator

import pytest
from _venv import Venv, WriteModule, describe, write

import pep726hook
from pep726hook import _fast_getattr, _install

GETATTR_MODULE = """\
value = 1

def __getattr__(name):
    if name == "late":
        return 42
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
"""
PLAIN_MODULE = "value = 1\n"
FINDER = "Pep726Finder"


@pytest.fixture
def enabled(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The names of the modules the switch passes to enable(), in order."""
    names: list[str] = []

    def record(module: str | ModuleType) -> ModuleType:
        assert isinstance(module, ModuleType)
        names.append(module.__name__)
        return module

    monkeypatch.setattr(_fast_getattr, "enable", record)
    monkeypatch.delenv("PEP726HOOK_FAST_GETATTR", raising=False)
    yield names


@pytest.fixture
def native() -> Iterator[None]:
    """The native engine installed for the test (where it can run)."""
    if "native" not in pep726hook.available_engines():
        pytest.skip("the native engine is not available here")
    with pep726hook.install("native"):
        yield


def _has_finder() -> bool:
    return any(type(f).__name__ == FINDER for f in list.copy(sys.meta_path))


def test_modules_imported_after_the_switch_are_enabled(
    native: None, enabled: list[str], write_module: WriteModule
) -> None:
    write_module("fg_lazy", GETATTR_MODULE)
    write_module("fg_plain", PLAIN_MODULE)
    write_module("fg_pkg", GETATTR_MODULE, package=True)
    write_module("fg_pkg.sub", GETATTR_MODULE)
    pep726hook.install(fast_getattr=True)
    del enabled[:]  # what the sweep passed (the next test's subject)
    import fg_lazy
    import fg_pkg.sub
    import fg_plain

    assert enabled == ["fg_lazy", "fg_pkg", "fg_pkg.sub"]
    assert (fg_lazy.late, fg_plain.value, fg_pkg.sub.late) == (42, 1, 42)


def test_a_getattr_bound_without_its_name_in_the_code_counts(
    native: None, enabled: list[str], write_module: WriteModule
) -> None:
    # The namespace is looked at once the body ran, whatever bound the name.
    write_module("fg_dynamic", "globals()['__get' + 'attr__'] = lambda name: name\n")
    pep726hook.install(fast_getattr=True)
    del enabled[:]
    import fg_dynamic  # noqa: F401

    assert enabled == ["fg_dynamic"]


def test_modules_imported_before_the_switch_are_swept(
    native: None, enabled: list[str], write_module: WriteModule
) -> None:
    write_module("fg_early", GETATTR_MODULE)
    write_module("fg_early_plain", PLAIN_MODULE)
    import fg_early  # noqa: F401
    import fg_early_plain  # noqa: F401

    installation = pep726hook.install(fast_getattr=True)
    assert installation.installed_now is False  # turned on for the installation there was
    assert "fg_early" in enabled
    assert "fg_early_plain" not in enabled
    # Our own package defines __getattr__ too; the finder never touches it either.
    assert not [name for name in enabled if name.startswith("pep726hook")]
    # Every module the sweep passed defines __getattr__.
    assert all(_fast_getattr.defines_getattr(sys.modules[name]) for name in enabled)


def test_the_switch_is_off_by_default(
    engine: str, enabled: list[str], write_module: WriteModule
) -> None:
    write_module("fg_off", GETATTR_MODULE)
    pep726hook.install()
    import fg_off  # noqa: F401

    assert enabled == []


@pytest.mark.parametrize("value", ["1", "true", " Yes ", "ON"])
def test_the_variable_turns_it_on(
    engine: str, enabled: list[str], monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("PEP726HOOK_FAST_GETATTR", value)
    pep726hook.install()
    assert _install.fast_getattr_is_on()


@pytest.mark.parametrize("value", ["0", "", "off", "No"])
def test_the_variable_leaves_it_off(
    engine: str, enabled: list[str], monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("PEP726HOOK_FAST_GETATTR", value)
    pep726hook.install()
    assert not _install.fast_getattr_is_on()


def test_an_argument_wins_over_the_variable(
    engine: str, enabled: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PEP726HOOK_FAST_GETATTR", "1")
    pep726hook.install(fast_getattr=False)
    assert not _install.fast_getattr_is_on()


def test_the_switch_does_nothing_under_the_class_engine(
    enabled: list[str], write_module: WriteModule
) -> None:
    # enable() cannot keep reads specialised there, and would change each
    # module's class (numpy's own test_public_api notices).
    write_module("fg_class", GETATTR_MODULE)
    import fg_class

    with pep726hook.install("class", fast_getattr=True):
        assert _install.fast_getattr_is_on()
        write_module("fg_class_later", GETATTR_MODULE)
        import fg_class_later

        assert enabled == []
        assert type(fg_class) is ModuleType and type(fg_class_later) is ModuleType


def test_a_bad_variable_installs_nothing(
    enabled: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PEP726HOOK_FAST_GETATTR", "fast")
    with pytest.raises(ValueError, match=r"\$PEP726HOOK_FAST_GETATTR must be one of .*'fast'"):
        pep726hook.install()
    assert not pep726hook.is_installed()
    assert not _has_finder()


def test_a_bad_argument_installs_nothing(enabled: list[str]) -> None:
    with pytest.raises(TypeError, match="fast_getattr must be True, False or None"):
        pep726hook.install(fast_getattr="yes")  # type: ignore[arg-type]
    assert not pep726hook.is_installed()


def test_the_native_engine_has_a_finder_only_while_the_switch_is_on(enabled: list[str]) -> None:
    if "native" not in pep726hook.available_engines():
        pytest.skip("the native engine is not available here")
    with pep726hook.install("native"):
        assert not _has_finder()
        pep726hook.install(fast_getattr=True)
        assert _has_finder()
        assert type(next(iter(sys.meta_path))).__name__ == FINDER  # walked first
    assert not _has_finder()


def test_uninstall_turns_it_off(
    native: None, enabled: list[str], write_module: WriteModule
) -> None:
    write_module("fg_after", GETATTR_MODULE)
    pep726hook.install(fast_getattr=True)
    pep726hook.uninstall()
    pep726hook.install("native")
    del enabled[:]
    import fg_after  # noqa: F401

    assert enabled == []


@pytest.mark.usefixtures("native", "refusing_enable")
def test_a_failing_enable_costs_one_warning_and_no_import(write_module: WriteModule) -> None:
    write_module("fg_refused", GETATTR_MODULE)
    pep726hook.install(fast_getattr=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        import fg_refused

        del sys.modules["fg_refused"]
        import fg_refused  # noqa: F811  (again: the warning is not repeated)
    assert fg_refused.late == 42
    messages = [str(w.message) for w in caught]
    assert len(messages) == 1, messages
    assert "'fg_refused'" in messages[0] and "RuntimeError: no room" in messages[0]


@pytest.mark.usefixtures("native", "refusing_enable")
def test_a_failing_enable_never_fails_the_import_under_warnings_as_errors(
    write_module: WriteModule, capsys: pytest.CaptureFixture[str]
) -> None:
    write_module("fg_strict", GETATTR_MODULE)
    pep726hook.install(fast_getattr=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        import fg_strict
    assert fg_strict.value == 1
    assert "could not enable module 'fg_strict'" in capsys.readouterr().err


def test_a_module_that_replaces_itself_is_enabled_as_it_ends(
    native: None, enabled: list[str], write_module: WriteModule
) -> None:
    write_module(
        "fg_replaced",
        """\
        import sys, types
        replacement = types.ModuleType(__name__)
        def __getattr__(name):
            if name == "late":
                return 42
            raise AttributeError(name)
        replacement.__getattr__ = __getattr__
        del __getattr__
        sys.modules[__name__] = replacement
        """,
    )
    pep726hook.install(fast_getattr=True)
    del enabled[:]
    import fg_replaced

    assert enabled == ["fg_replaced"]
    assert fg_replaced.late == 42


# -- every route, with the real enable(), in fresh interpreters ----------------------------

# What a program reports: whether the hook and the switch were on, and, once
# uninstalled, which modules stayed opted in (only those passed to enable()).
PROBE = """\
import json, os, sys
import pep726hook
import lazymod, plainmod
from pep726hook import _install
seen = {
    "installed": pep726hook.is_installed(),
    "engine": pep726hook.engine(),
    "fast": _install.fast_getattr_is_on(),
    "reads": [lazymod.value, lazymod.late],
}
pep726hook.uninstall()
seen["lazymod"] = pep726hook.engine(lazymod)
seen["plainmod"] = pep726hook.engine(plainmod)
print(json.dumps(seen))
"""


@pytest.fixture
def refusing_enable(monkeypatch: pytest.MonkeyPatch) -> None:
    """enable() raises for this test's modules (named fg_*), as a broken one would."""

    def refuse(module: str | ModuleType) -> ModuleType:
        if isinstance(module, ModuleType) and module.__name__.startswith("fg_"):
            raise RuntimeError("no room")
        return module  # the sweep's modules: not this test's subject

    monkeypatch.setattr(_fast_getattr, "enable", refuse)
    monkeypatch.setattr(_fast_getattr, "_warned_about", set())


@pytest.fixture
def program(tmp_path: Path) -> Path:
    write(tmp_path / "lazymod.py", GETATTR_MODULE)
    write(tmp_path / "plainmod.py", PLAIN_MODULE)
    return write(tmp_path / "probe.py", PROBE)


def _seen(result: object) -> dict[str, object]:
    seen: dict[str, object] = json.loads(result.stdout.splitlines()[-1])  # type: ignore[attr-defined]
    return seen


def _switched_on(engine: str) -> dict[str, object]:
    return {
        "installed": True,
        "engine": engine,
        "fast": True,
        "reads": [1, 42],
        # Opted in by the switch: native engine only.
        "lazymod": engine if engine == "native" else None,
        "plainmod": None,
    }


def test_pth_route(venv: Venv, venv_engine: str, program: Path) -> None:
    env = {"PEP726HOOK": "1", "PEP726HOOK_ENGINE": venv_engine, "PEP726HOOK_FAST_GETATTR": "1"}
    result = venv.run_python([str(program)], env=env, cwd=program.parent)
    assert result.returncode == 0 and result.stderr == "", describe(result)
    assert _seen(result) == _switched_on(venv_engine)


def test_pth_route_without_the_switch(venv: Venv, venv_engine: str, program: Path) -> None:
    env = {"PEP726HOOK": "1", "PEP726HOOK_ENGINE": venv_engine, "PEP726HOOK_FAST_GETATTR": "0"}
    result = venv.run_python([str(program)], env=env, cwd=program.parent)
    assert result.returncode == 0 and result.stderr == "", describe(result)
    assert _seen(result)["fast"] is False
    assert _seen(result)["lazymod"] is None


def test_pth_route_with_a_bad_value_costs_one_line(venv: Venv, program: Path) -> None:
    env = {"PEP726HOOK": "1", "PEP726HOOK_FAST_GETATTR": "fast"}
    result = venv.run_python([str(program)], env=env, cwd=program.parent)
    assert result.returncode == 0, describe(result)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("pep726hook: "), describe(result)
    assert "PEP726HOOK_FAST_GETATTR" in lines[0] and "'fast'" in lines[0]
    assert _seen(result)["installed"] is False


def test_switch_off_start_up_imports_nothing_more(venv: Venv) -> None:
    # Set but off, the variable leaves the native engine's start-up as it was:
    # the module type patched without install() and the engines.
    if "native" not in venv.engines:
        pytest.skip("the native engine is not available here")
    code = "import sys; print(sorted(m for m in sys.modules if m.startswith('pep726hook')))"
    plain = venv.run_python(["-c", code], env={"PEP726HOOK": "1"})
    off = venv.run_python(["-c", code], env={"PEP726HOOK": "1", "PEP726HOOK_FAST_GETATTR": "0"})
    assert plain.stdout == off.stdout, describe(off)
    assert "pep726hook._install" not in off.stdout


def test_runner_route_and_its_children(venv: Venv, venv_engine: str, program: Path) -> None:
    parent = write(
        program.parent / "parent.py",
        """\
        import os, subprocess, sys
        print(os.environ.get("PEP726HOOK_FAST_GETATTR"), flush=True)
        subprocess.run([sys.executable, sys.argv[1]], check=True)
        """,
    )
    argv = ["pep726hook", "--engine", venv_engine, "--fast-getattr", str(parent), str(program)]
    result = venv.run(argv, cwd=program.parent)
    assert result.returncode == 0 and result.stderr == "", describe(result)
    assert result.stdout.splitlines()[0] == "1"
    assert _seen(result) == _switched_on(venv_engine)


def test_runner_takes_the_variable(venv: Venv, venv_engine: str, program: Path) -> None:
    env = {"PEP726HOOK_FAST_GETATTR": "yes"}
    result = venv.run(
        ["pep726hook", "--engine", venv_engine, str(program)], env=env, cwd=program.parent
    )
    assert result.returncode == 0 and result.stderr == "", describe(result)
    assert _seen(result) == _switched_on(venv_engine)


def test_runner_refuses_a_bad_variable(venv: Venv, program: Path) -> None:
    env = {"PEP726HOOK_FAST_GETATTR": "fast"}
    result = venv.run(["pep726hook", str(program)], env=env, cwd=program.parent)
    assert result.returncode == 2, describe(result)
    assert "PEP726HOOK_FAST_GETATTR" in result.stderr and result.stdout == ""


def test_runner_turns_it_on_over_a_start_up_hook(
    venv: Venv, venv_engine: str, program: Path
) -> None:
    env = {"PEP726HOOK": "1", "PEP726HOOK_ENGINE": venv_engine}
    result = venv.run(["pep726hook", "--fast-getattr", str(program)], env=env, cwd=program.parent)
    assert result.returncode == 0 and result.stderr == "", describe(result)
    assert _seen(result) == _switched_on(venv_engine)


def test_install_route_sweeps_what_was_imported(
    venv: Venv, venv_engine: str, program: Path
) -> None:
    code = (
        "import lazymod, pep726hook, runpy; "
        f"pep726hook.install({venv_engine!r}, fast_getattr=True); "
        "runpy.run_path('probe.py')"
    )
    result = venv.run_python(["-c", code], cwd=program.parent)
    assert result.returncode == 0 and result.stderr == "", describe(result)
    assert _seen(result) == _switched_on(venv_engine)


def test_info_reports_the_switch(venv: Venv, venv_engine: str) -> None:
    env = {"PEP726HOOK": "1", "PEP726HOOK_ENGINE": venv_engine, "PEP726HOOK_FAST_GETATTR": "1"}
    lines = venv.run(["pep726hook", "info"], env=env).stdout.splitlines()
    status = {
        "native": "fast getattr: on (modules defining __getattr__ pass to enable())",
        "class": "fast getattr: on, but it does nothing under the class engine",
    }
    assert status[venv_engine] in lines
    assert "$PEP726HOOK_FAST_GETATTR: '1' (on)" in lines
    plain = venv.run(["pep726hook", "info"]).stdout.splitlines()
    assert "$PEP726HOOK_FAST_GETATTR: unset (off)" in plain


PYTEST_PROJECT_TEST = """\
import os, subprocess, sys
import pep726hook
import lazymod

def test_switch():
    from pep726hook import _install
    assert _install.fast_getattr_is_on()
    assert os.environ["PEP726HOOK_FAST_GETATTR"] == "1"
    assert lazymod.late == 42

def test_child_gets_it():
    out = subprocess.run(
        [sys.executable, "probe.py"], check=True, capture_output=True, text=True
    ).stdout
    print("CHILD=" + out.strip())
"""


@pytest.mark.parametrize("how", ["option", "ini"])
def test_pytest_route(venv: Venv, venv_engine: str, program: Path, how: str) -> None:
    write(program.parent / "test_switch.py", PYTEST_PROJECT_TEST)
    argv = ["python", "-m", "pytest", "-p", "no:cacheprovider", "-s", "test_switch.py"]
    argv += ["--pep726hook-engine", venv_engine]
    if how == "option":
        argv.append("--pep726hook-fast-getattr")
    else:
        write(program.parent / "pytest.ini", "[pytest]\npep726hook_fast_getattr = true\n")
    result = venv.run(argv, cwd=program.parent)
    assert result.returncode == 0, describe(result)
    assert f"pep726hook: {venv_engine} engine, fast getattr (turned on by the pytest plugin)" in (
        result.stdout.splitlines()
    ), describe(result)
    child = [line for line in result.stdout.splitlines() if "CHILD=" in line]
    assert child, describe(result)
    assert json.loads(child[0].split("CHILD=", 1)[1]) == _switched_on(venv_engine)

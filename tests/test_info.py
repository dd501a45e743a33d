"""``pep726hook --version`` and ``pep726hook info`` say which engines run here, and why not."""

from __future__ import annotations

from importlib.metadata import version

import pytest
from _venv import EXPECTED_ENGINES, Venv, describe

import pep726hook
from pep726hook import _cli, _native_engine

# What the output must say, from the installed distribution's metadata and the
# interpreter rather than from the code that prints it.
VERSION = version("pep726hook")
ENGINE_LIST = ", ".join(EXPECTED_ENGINES)
NATIVE_EXPECTED = "native" in EXPECTED_ENGINES


def test_info_lists_engines_and_the_variables(venv: Venv) -> None:
    out = venv.check_python(["-m", "pep726hook", "info"])
    lines = out.splitlines()
    assert lines[0] == f"pep726hook {VERSION}"
    assert f"engines available: {ENGINE_LIST}" in out
    assert "hook in this process: off" in lines
    assert "$PEP726HOOK: unset (off)" in lines
    assert "$PEP726HOOK_ENGINE: unset (auto)" in lines
    if NATIVE_EXPECTED:
        assert "native engine: available" in lines
    else:
        assert any(line.startswith("native engine: unavailable: ") for line in lines), out


def test_info_says_how_the_hook_was_turned_on(venv: Venv, venv_engine: str) -> None:
    result = venv.run(
        ["pep726hook", "info"], env={"PEP726HOOK": "Yes", "PEP726HOOK_ENGINE": venv_engine}
    )
    assert result.returncode == 0, describe(result)
    assert (
        f"hook in this process: on, {venv_engine} engine, turned on by $PEP726HOOK at start-up"
        in result.stdout.splitlines()
    ), describe(result)
    assert "$PEP726HOOK: 'Yes' (on)" in result.stdout


def test_info_explains_an_unknown_activation_value(venv: Venv) -> None:
    result = venv.run(["pep726hook", "info"], env={"PEP726HOOK": "maybe"})
    assert result.returncode == 0, describe(result)
    assert "$PEP726HOOK: 'maybe' (not understood: use one of 1, true, yes, on)" in result.stdout
    assert "hook in this process: off" in result.stdout
    assert len(result.stderr.splitlines()) == 1  # the start-up line, once


def test_version_names_the_engines(venv: Venv) -> None:
    out = venv.check_python(["-m", "pep726hook", "--version"])
    assert out.startswith(f"pep726hook {VERSION} (")
    assert f"engines: {ENGINE_LIST}" in out


@pytest.mark.skipif(not NATIVE_EXPECTED, reason="setup.py builds the extension for CPython only")
def test_missing_extension_is_explained_with_the_way_to_see_the_compiler_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    missing = ModuleNotFoundError("No module named 'pep726hook._native'", name="pep726hook._native")
    monkeypatch.setattr(_native_engine, "_native_error", missing)
    assert pep726hook.available_engines() == ("class",)
    assert "native engine unavailable, see `pep726hook info`" in _cli.version_line()
    text = _cli.info()
    assert "native engine: unavailable: " in text
    assert "was not built when pep726hook was installed" in text
    assert "--no-binary pep726hook" in text and " -v " in text


@pytest.mark.skipif(not NATIVE_EXPECTED, reason="no native engine here")
def test_a_present_extension_needs_no_build_hint() -> None:
    assert _cli.native_build_hint() is None
    assert "see `pep726hook info`" not in _cli.version_line()


def test_info_in_process_reports_install_as_the_route(engine: str) -> None:
    assert f"hook in this process: on, {engine} engine, turned on by install()" in _cli.info()

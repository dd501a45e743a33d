"""Every example under examples/ runs and shows the behaviour it documents."""

from __future__ import annotations

import runpy
import sys
from pathlib import Path
from typing import Iterator

import pytest
from _venv import ENGINES, no_pypy_jit

import pep726hook

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

EXPECTED_OUTPUT = {
    "mpmath_guard": [
        "working precision: 15 digits -> 3.14159265358979",
        "AttributeError: mpguard.dps = 50 would not change the precision; set mpguard.mp.dps instead",
        "working precision: 50 digits -> 3.14159265358979323846264338327950288",
    ],
    "mplib": [
        "mplib.CONSTANT = 42    -> AttributeError: Read-only attribute!",
        "del mplib.CONSTANT     -> AttributeError: Read-only attribute!",
        "mplib.dps = 0          -> ValueError: Positive integer expected",
        "prec, dps = 53 15",
        "after mplib.dps = 5: prec, dps = 20 5",
    ],
    "constants": [
        "physics.SPEED_OF_LIGHT = 3e8   -> AttributeError: physics.SPEED_OF_LIGHT is a constant",
        "del physics.PLANCK             -> AttributeError: physics.PLANCK is a constant",
        "lower-case names stay writable | c = 299792458",
    ],
    "deprecation": [
        "Round(2) -> Circle(2)",
        "shapes.default_colour -> black",
        "shapes.default_colour -> red",
        "shapes.default_color -> black (unchanged)",
        "main.py:13: DeprecationWarning: shapes.Round is deprecated; use shapes.Circle",
        "main.py:16: DeprecationWarning: shapes.default_colour is deprecated; "
        "use shapes.default_color",
        "main.py:17: DeprecationWarning: shapes.default_colour is deprecated; "
        "use shapes.default_color",
    ],
    "attribute_deprecation": [
        "LineReceiver is LineProtocol: True",
        "DEFAULT_PORT: 8007",
        "listening on 8080",
        "hasattr(protocols, 'LineReceiver'): False",
        "main.py:15: DeprecationWarning: netkit.protocols.LineReceiver was deprecated in "
        "netkit 2.0: use netkit.protocols.LineProtocol",
        "main.py:16: DeprecationWarning: netkit.protocols.DEFAULT_PORT was deprecated in "
        "netkit 2.1: pass port= to netkit.listen()",
        "main.py:18: DeprecationWarning: netkit.protocols.LineReceiver was deprecated in "
        "netkit 2.0: use netkit.protocols.LineProtocol",
    ],
    "lazy_attach": [
        "lazystats.mean loaded before use: False",
        "lazystats.mean([1, 2, 3]) = 2.0",
        "lazystats.mean loaded now: True",
        "lazystats.mean is a function",
        "lazystats.stdev([2, 4, 4, 4, 5, 5, 7, 9]) = 2.0",
        "lazystats.precision = 3",
        "public names: ['mean', 'precision', 'spread', 'stdev', 'variance']",
    ],
    "cache_invalidation": [
        "  (building the metric table)",
        "length unit: m",
        "length unit: m (cached)",
        "  (building the imperial table)",
        "length unit: ft",
    ],
    "library_optin": [
        "working precision: 15 digits -> 3.14159265358979",
        "AttributeError: mpcompat.dps = 50 would not change the precision; set mpcompat.mp.dps instead",
        "working precision: 50 digits -> 3.14159265358979323846264338327950288",
        "mp.pi_digits = 36",
    ],
    "sys_validation": [
        "settings.registry = 123      -> TypeError: settings.registry must be a dict, not int",
        "settings.excepthook = None   -> TypeError: settings.excepthook must be callable",
        "del settings.excepthook      -> AttributeError: settings.excepthook cannot be deleted",
        "registry: {'a': 1}",
    ],
}
# Libraries that opt themselves in with pep726hook.enable(): no hook to turn on.
OPTED_IN = {"library_optin", "deprecation", "attribute_deprecation", "lazy_attach"}
# What the deprecation examples print without pep726hook: the old names work
# as plain aliases, silently (the optional-dependency fallback).
WITHOUT_PEP726HOOK = {
    "deprecation": [
        *EXPECTED_OUTPUT["deprecation"][:4],
        "no warnings: pep726hook is not installed, the old names are plain aliases",
    ],
    "attribute_deprecation": [
        *EXPECTED_OUTPUT["attribute_deprecation"][:4],
        "no warnings: pep726hook is not installed, the attributes are ordinary",
    ],
}


@pytest.fixture(autouse=True)
def _forget_example_modules() -> Iterator[None]:
    yield
    for name, module in list(sys.modules.items()):
        if str(getattr(module, "__file__", "") or "").startswith(str(EXAMPLES)):
            del sys.modules[name]


def test_every_example_directory_has_expected_output() -> None:
    directories = {p.name for p in EXAMPLES.iterdir() if (p / "main.py").is_file()}
    assert directories == set(EXPECTED_OUTPUT)


@pytest.mark.parametrize("name", sorted(EXPECTED_OUTPUT))
def test_example_shows_its_documented_behaviour(
    engine: str, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = EXAMPLES / name
    sys.path.insert(0, str(directory))
    runpy.run_path(str(directory / "main.py"), run_name="__main__")
    assert capsys.readouterr().out.splitlines() == EXPECTED_OUTPUT[name]


@pytest.mark.parametrize("name", sorted(set(EXPECTED_OUTPUT) - OPTED_IN))
def test_example_refuses_to_pass_without_the_hook(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = EXAMPLES / name
    sys.path.insert(0, str(directory))
    with pytest.raises(SystemExit, match="is pep726hook active"):
        runpy.run_path(str(directory / "main.py"), run_name="__main__")


@pytest.mark.parametrize("name", sorted(OPTED_IN))
@pytest.mark.parametrize("engine_variable", ENGINES)
def test_opted_in_example_needs_no_process_wide_hook(
    name: str,
    engine_variable: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("PEP726HOOK_ENGINE", engine_variable)
    meta_path = list(sys.meta_path)
    directory = EXAMPLES / name
    sys.path.insert(0, str(directory))
    # Late in a whole run PyPy 3.11's JIT may compile a trace here that keeps
    # the opted-in module alive past the test (once in four runs of the suite).
    with no_pypy_jit():
        runpy.run_path(str(directory / "main.py"), run_name="__main__")
    assert capsys.readouterr().out.splitlines() == EXPECTED_OUTPUT[name]
    assert sys.meta_path == meta_path
    assert not pep726hook.is_installed()


@pytest.mark.parametrize("name", sorted(OPTED_IN))
def test_opted_in_example_keeps_its_guard_without_pep726hook(
    name: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # ``import pep726hook`` raises ImportError: the library's own class takes over.
    monkeypatch.setitem(sys.modules, "pep726hook", None)  # type: ignore[arg-type]
    directory = EXAMPLES / name
    sys.path.insert(0, str(directory))
    runpy.run_path(str(directory / "main.py"), run_name="__main__")
    assert capsys.readouterr().out.splitlines() == WITHOUT_PEP726HOOK.get(
        name, EXPECTED_OUTPUT[name]
    )

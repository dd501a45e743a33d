"""The pytest plugin: hooks for test modules and conftests, with assertion rewriting intact."""

from __future__ import annotations

from pathlib import Path

import pytest
from _venv import Venv, describe, write

CONFTEST = """\
import sys
import pytest

conftest_calls = []

def __setattr__(name, value):
    conftest_calls.append(name)
    globals()[name] = value

@pytest.fixture
def conftest_hook_calls():
    sys.modules[__name__].from_fixture = 1
    return conftest_calls
"""

TEST_MODULE = """\
import sys
import pep726hook

module_calls = []

def __setattr__(name, value):
    module_calls.append(name)
    globals()[name] = value

def test_module_hook():
    sys.modules[__name__].answer = 42
    assert module_calls == ["answer"]
    assert answer == 42

def test_conftest_hook(conftest_hook_calls):
    assert conftest_hook_calls == ["from_fixture"]

def test_report_engine():
    print("ENGINE=%s" % pep726hook.engine())

def test_rewritten_assertion():
    left = [1, 2, 3]
    assert left == [1, 2, 4]
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    write(tmp_path / "conftest.py", CONFTEST)
    write(tmp_path / "test_hooks.py", TEST_MODULE)
    return tmp_path


ROUTES: dict[str, list[str]] = {
    "option": ["python", "-m", "pytest", "--pep726hook"],
    "engine-option": ["python", "-m", "pytest", "--pep726hook-engine", "{engine}"],
    "ini": ["python", "-m", "pytest"],
    "pth": ["python", "-m", "pytest"],
    "runner": ["python", "-m", "pep726hook", "--engine", "{engine}", "-m", "pytest"],
}


# Every route in both import modes with the class engine, which relies on our
# finder being in front of pytest's rewriter; the native engine (no finder)
# once per route kind, to keep the suite fast.
CASES = [(route, mode, "class") for route in sorted(ROUTES) for mode in ("prepend", "importlib")]
CASES += [
    ("option", "prepend", "native"),
    ("pth", "importlib", "native"),
    ("runner", "prepend", "native"),
]


@pytest.mark.parametrize(("route", "import_mode", "engine_name"), CASES)
def test_hooks_and_assertion_rewriting(
    venv: Venv, project: Path, route: str, import_mode: str, engine_name: str
) -> None:
    if engine_name not in venv.engines:
        pytest.skip(f"the {engine_name} engine is not available in this interpreter")
    venv_engine = engine_name
    argv = [a.format(engine=venv_engine) for a in ROUTES[route]]
    env = {"PEP726HOOK_ENGINE": venv_engine}
    if route == "pth":
        env["PEP726HOOK"] = "1"
    if route == "ini":
        write(
            project / "pytest.ini",
            f"[pytest]\npep726hook = true\npep726hook_engine = {venv_engine}\n",
        )
    result = venv.run(
        [
            *argv,
            "-p",
            "no:cacheprovider",
            "-s",
            "-rA",
            f"--import-mode={import_mode}",
            "test_hooks.py",
        ],
        env=env,
        cwd=project,
    )
    out = result.stdout
    assert "3 passed, 1 failed" in out or "1 failed, 3 passed" in out, describe(result)
    assert f"ENGINE={venv_engine}" in out
    # The rewritten explanation, which plain `assert` without pytest's rewriter lacks.
    assert "At index 2 diff: 3 != 4" in out, describe(result)


def test_without_any_route_the_hook_is_off(venv: Venv, project: Path) -> None:
    result = venv.run(
        ["python", "-m", "pytest", "-p", "no:cacheprovider", "-s", "test_hooks.py"], cwd=project
    )
    assert "ENGINE=None" in result.stdout, describe(result)
    assert "3 failed, 1 passed" in result.stdout or "1 passed, 3 failed" in result.stdout


def test_unknown_engine_option_is_a_usage_error(venv: Venv, project: Path) -> None:
    result = venv.run(
        ["python", "-m", "pytest", "--pep726hook-engine", "turbo", "test_hooks.py"], cwd=project
    )
    assert result.returncode == 4, describe(result)
    assert "turbo" in result.stderr


def test_bad_ini_engine_is_a_usage_error(venv: Venv, project: Path) -> None:
    write(project / "pytest.ini", "[pytest]\npep726hook = true\npep726hook_engine = turbo\n")
    result = venv.run(["python", "-m", "pytest", "test_hooks.py"], cwd=project)
    assert result.returncode == 4, describe(result)
    assert "turbo" in result.stderr
    assert "Traceback" not in result.stderr


def test_finder_is_first_during_collection(venv: Venv, venv_engine: str, project: Path) -> None:
    write(
        project / "test_order.py",
        """\
        import sys
        def test_order():
            names = [type(f).__name__ for f in sys.meta_path]
            print("META=" + ",".join(names))
        """,
    )
    result = venv.run(
        [
            "python",
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-s",
            "--pep726hook-engine",
            venv_engine,
            "test_order.py",
        ],
        cwd=project,
    )
    assert result.returncode == 0, describe(result)
    line = next(x for x in result.stdout.splitlines() if "META=" in x)
    names = line.split("META=", 1)[1].split(",")
    if "Pep726Finder" in names:
        assert names[0] == "Pep726Finder"
        assert "AssertionRewritingHook" in names

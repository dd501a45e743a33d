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


def test_bad_engine_variable_is_a_usage_error_naming_it(venv: Venv, project: Path) -> None:
    result = venv.run(
        ["python", "-m", "pytest", "--pep726hook", "test_hooks.py"],
        env={"PEP726HOOK_ENGINE": "turbo"},
        cwd=project,
    )
    assert result.returncode == 4, describe(result)
    # The same words as every other route that reads the variable.
    assert (
        "pep726hook: the environment variable PEP726HOOK_ENGINE must be one of "
        "'auto', 'native', 'class', not 'turbo'"
    ) in result.stderr
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


def _has_xdist(venv: Venv) -> bool:
    return venv.run_python(["-c", "import xdist"]).returncode == 0


# Each way of turning the hook on, with pytest run as real projects do, under
# `filterwarnings = error`: pytest used to warn "Module already imported so
# cannot be rewritten; pep726hook" and every session (every xdist worker) died.
STRICT_ROUTES: dict[str, tuple[list[str], dict[str, str]]] = {
    "pth": (["python", "-m", "pytest"], {"PEP726HOOK": "1"}),
    "pth-true": (["python", "-m", "pytest"], {"PEP726HOOK": "true"}),
    "runner": (["python", "-m", "pep726hook", "-m", "pytest"], {}),
    "option": (["python", "-m", "pytest", "--pep726hook"], {}),
    "pth-xdist": (["python", "-m", "pytest", "-n", "2"], {"PEP726HOOK": "1"}),
    "option-xdist": (["python", "-m", "pytest", "-n", "2", "--pep726hook"], {}),
    "option-loadfile": (
        ["python", "-m", "pytest", "-n", "2", "--dist", "loadfile", "--pep726hook"],
        {},
    ),
    "runner-xdist": (["python", "-m", "pep726hook", "-m", "pytest", "-n", "2"], {}),
}


# The class engine on every route (it relies on our finder staying in front of
# pytest's rewriter); the native engine on two, to keep the suite fast.
STRICT_CASES = [(route, "class") for route in sorted(STRICT_ROUTES)]
STRICT_CASES += [("pth", "native"), ("option-xdist", "native")]


@pytest.mark.parametrize(("route", "venv_engine"), STRICT_CASES)
def test_warnings_as_errors_on_every_route(
    venv: Venv, project: Path, route: str, venv_engine: str
) -> None:
    if venv_engine not in venv.engines:
        pytest.skip(f"the {venv_engine} engine is not available in this interpreter")
    argv, env = STRICT_ROUTES[route]
    if "-n" in argv and not _has_xdist(venv):
        pytest.skip("pytest-xdist is not installed")
    write(project / "pytest.ini", "[pytest]\nfilterwarnings =\n    error\n")
    # A second module, so that xdist has work for both workers.
    more = TEST_MODULE.replace("module_calls", "more_calls").replace(
        "def test_conftest_hook(conftest_hook_calls):\n"
        '    assert conftest_hook_calls == ["from_fixture"]\n',
        "",
    )
    write(project / "test_more.py", more)
    result = venv.run(
        [*argv, "-p", "no:cacheprovider", "-rA", "-W", "error", "test_hooks.py", "test_more.py"],
        env={**env, "PEP726HOOK_ENGINE": venv_engine},
        cwd=project,
    )
    out = result.stdout
    assert "5 passed, 2 failed" in out or "2 failed, 5 passed" in out, describe(result)
    assert "Warning" not in out + result.stderr, describe(result)
    # Workers too: hooks, rewritten assertions and the engine asked for.
    assert out.count(f"ENGINE={venv_engine}") == 2, describe(result)
    # Counted in the failure reports only: pytest 8.3 repeats the whole
    # message in -rA's short summary, later releases do not.
    failure_reports = out.split("short test summary info")[0]
    assert failure_reports.count("At index 2 diff: 3 != 4") == 2, describe(result)


@pytest.mark.parametrize(
    ("route", "line"),
    [
        ("option", "pep726hook: {engine} engine (turned on by the pytest plugin)"),
        ("pth", "pep726hook: {engine} engine (turned on by $PEP726HOOK at start-up)"),
        ("runner", "pep726hook: {engine} engine (turned on by the runner)"),
    ],
)
def test_report_header_names_the_engine_in_use(
    venv: Venv, venv_engine: str, project: Path, route: str, line: str
) -> None:
    argv = [a.format(engine=venv_engine) for a in ROUTES[route]]
    env = {"PEP726HOOK_ENGINE": venv_engine, **({"PEP726HOOK": "1"} if route == "pth" else {})}
    result = venv.run([*argv, "-p", "no:cacheprovider", "test_hooks.py"], env=env, cwd=project)
    assert line.format(engine=venv_engine) in result.stdout.splitlines(), describe(result)


def test_report_header_is_silent_when_the_hook_is_off(venv: Venv, project: Path) -> None:
    result = venv.run(
        ["python", "-m", "pytest", "-p", "no:cacheprovider", "test_hooks.py"], cwd=project
    )
    assert "pep726hook:" not in result.stdout, describe(result)


ENGINE_OF_WORKERS = """\
import os, pep726hook
def test_engine():
    print("ENGINE=%s/%s" % (pep726hook.engine(), os.environ["PEP726HOOK_ENGINE"]))
"""


@pytest.mark.parametrize("route", ["pth", "runner"])
@pytest.mark.parametrize("workers", [0, 2])
def test_engine_option_replaces_the_active_engine(
    venv: Venv, project: Path, route: str, workers: int
) -> None:
    # The runner's rule, here too: an engine named on the command line replaces
    # the one PEP726HOOK=1 (or the runner) turned on; children get the new one.
    if set(venv.engines) != {"class", "native"}:
        pytest.skip("needs both engines")
    if workers and not _has_xdist(venv):
        pytest.skip("pytest-xdist is not installed")
    write(project / "test_engine.py", ENGINE_OF_WORKERS)
    if route == "pth":
        argv, env = ["python", "-m", "pytest"], {"PEP726HOOK": "1", "PEP726HOOK_ENGINE": "native"}
    else:
        argv, env = ["python", "-m", "pep726hook", "--engine", "native", "-m", "pytest"], {}
    xdist = ["-n", str(workers)] if workers else []
    result = venv.run(
        [
            *argv,
            *xdist,
            "-p",
            "no:cacheprovider",
            "-rA",
            "--pep726hook-engine",
            "CLASS",
            "test_engine.py",
        ],
        env=env,
        cwd=project,
    )
    assert result.returncode == 0, describe(result)
    assert "ENGINE=class/class" in result.stdout, describe(result)
    assert "pep726hook: class engine (turned on by the pytest plugin)" in result.stdout


def test_ini_engine_ignores_case(venv: Venv, project: Path) -> None:
    write(project / "pytest.ini", "[pytest]\npep726hook = true\npep726hook_engine = Class\n")
    write(project / "test_engine.py", ENGINE_OF_WORKERS)
    result = venv.run(
        ["python", "-m", "pytest", "-p", "no:cacheprovider", "-rA", "test_engine.py"], cwd=project
    )
    assert "ENGINE=class/class" in result.stdout, describe(result)

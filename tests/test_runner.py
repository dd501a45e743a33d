"""``python -m pep726hook TARGET`` and ``pep726hook [run] TARGET`` behave like ``python TARGET``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest
from _venv import Venv, describe, write

import pep726hook

# Prints what a program can see of how it was started, as JSON.
DUMP = """\
import builtins, json, os, sys
import __main__
spec = __main__.__dict__.get("__spec__")
loader = __main__.__dict__.get("__loader__")
print(json.dumps({
    "argv": sys.argv,
    "path0": sys.path[0],
    "keys": sorted(k for k in vars(__main__) if k.startswith("__")),
    "name": __name__,
    "file": globals().get("__file__", "<unset>"),
    "cached": globals().get("__cached__", "<unset>"),
    "package": __package__,
    "doc": __doc__,
    "loader": getattr(loader, "__name__", type(loader).__name__),
    "loader_is_spec_loader": spec is None or spec.loader is loader,
    "spec": None if spec is None else [spec.name, spec.origin, type(spec.loader).__name__],
    "builtins_is_module": __builtins__ is builtins,
    "main_is_module": isinstance(sys.modules["__main__"], type(sys)),
    "main_is_us": sys.modules["__main__"].__dict__ is globals(),
    "code_file": sys._getframe().f_code.co_filename,
}))
"""

RUNNERS = {
    "python -m pep726hook": ["python", "-m", "pep726hook"],
    "pep726hook": ["pep726hook"],
    "pep726hook run": ["pep726hook", "run"],
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A working directory with every kind of target."""
    write(tmp_path / "scripts" / "dump.py", DUMP)
    write(tmp_path / "appdir" / "__main__.py", DUMP)
    with zipfile.ZipFile(tmp_path / "app.zip", "w") as archive:
        archive.writestr("__main__.py", DUMP)
    write(tmp_path / "dumpmod.py", DUMP)
    write(tmp_path / "pkg" / "__init__.py", "")
    write(tmp_path / "pkg" / "__main__.py", DUMP)
    return tmp_path


TARGETS = {
    "script": ["scripts/dump.py", "a", "--b"],
    "directory": ["appdir", "a"],
    "zipfile": ["app.zip", "a"],
    "module": ["-m", "dumpmod", "a", "-m", "x"],
    "package": ["-m", "pkg", "a"],
    "code": ["-c", DUMP, "a", "-c"],
}


def dump(venv: Venv, argv: list[str], cwd: Path) -> dict[str, Any]:
    result = venv.run(argv, cwd=cwd)
    assert result.returncode == 0, describe(result)
    assert result.stderr == "", describe(result)
    return json.loads(result.stdout)  # type: ignore[no-any-return]


@pytest.mark.parametrize("runner", sorted(RUNNERS))
@pytest.mark.parametrize("target", sorted(TARGETS))
def test_main_is_set_up_as_python_does(venv: Venv, project: Path, runner: str, target: str) -> None:
    expected = dump(venv, ["python", *TARGETS[target]], project)
    actual = dump(venv, [*RUNNERS[runner], *TARGETS[target]], project)
    assert actual == expected


def test_engine_option_comes_before_the_target(venv: Venv, venv_engine: str, project: Path) -> None:
    expected = dump(venv, ["python", "scripts/dump.py", "--engine", "x"], project)
    actual = dump(
        venv, ["pep726hook", "--engine", venv_engine, "scripts/dump.py", "--engine", "x"], project
    )
    assert actual == expected


@pytest.mark.skipif(sys.version_info < (3, 11), reason="-P is new in 3.11")
@pytest.mark.parametrize("target", ["script", "code", "directory"])
def test_safe_path_is_honoured(venv: Venv, project: Path, target: str) -> None:
    expected = dump(venv, ["python", "-P", *TARGETS[target]], project)
    actual = dump(venv, ["python", "-P", "-m", "pep726hook", *TARGETS[target]], project)
    assert actual == expected


@pytest.mark.parametrize("target", ["script", "code", "module"])
def test_compile_warnings_meet_the_filters_python_gives_them(
    venv: Venv, tmp_path: Path, target: str
) -> None:
    # 3.15 compiles a script and -c code as module "__main__" (and a -m module
    # under its own name): a filter naming the module must fire, or not, alike.
    source = 'x = "\\d"\nprint("ran")\n'
    write(tmp_path / "escape.py", source)
    argv = {"script": ["escape.py"], "code": ["-c", source], "module": ["-m", "escape"]}[target]
    for module in ("__main__", "escape"):
        options = ["-W", f"error::SyntaxWarning:{module}"]
        expected = venv.run(["python", *options, *argv], cwd=tmp_path)
        actual = venv.run(["python", *options, "-m", "pep726hook", *argv], cwd=tmp_path)
        assert (actual.returncode, actual.stdout) == (expected.returncode, expected.stdout)
        # Only the last line: a SyntaxError from a -m target shows runpy's
        # frames under python and not under the runner.
        assert actual.stderr.splitlines()[-1:] == expected.stderr.splitlines()[-1:], describe(
            actual
        )


@pytest.mark.skipif(sys.version_info < (3, 11), reason="-P is new in 3.11")
def test_safe_path_leaves_the_current_directory_out_for_modules(venv: Venv, project: Path) -> None:
    result = venv.run(["python", "-P", "-m", "pep726hook", "-m", "dumpmod"], cwd=project)
    assert result.returncode == 1, describe(result)
    assert "No module named dumpmod" in result.stderr


HOOKED_MAIN = """\
import sys
calls = []
def __setattr__(name, value):
    calls.append(("set", name, value))
    globals()[name] = value
def __delattr__(name):
    calls.append(("del", name))
    del globals()[name]
import __main__
__main__.x = 1
del __main__.x
setattr(sys.modules["__main__"], "y", 2)
import helper
helper.z = 3
import pep726hook, os
print(calls, helper.calls, pep726hook.engine(), pep726hook.is_upgraded(__main__),
      os.environ.get("PEP726HOOK"), os.environ.get("PEP726HOOK_ENGINE"))
"""

HELPER = """\
calls = []
def __setattr__(name, value):
    calls.append((name, value))
    globals()[name] = value
"""


@pytest.mark.parametrize("target", ["script", "module", "code", "directory"])
def test_main_has_pep726_behaviour_while_it_runs(
    venv: Venv, venv_engine: str, tmp_path: Path, target: str
) -> None:
    write(tmp_path / "lib" / "helper.py", HELPER)
    write(tmp_path / "lib" / "hooked.py", HOOKED_MAIN)
    write(tmp_path / "lib" / "app" / "__main__.py", HOOKED_MAIN)
    write(tmp_path / "lib" / "app" / "helper.py", HELPER)
    argv = {
        "script": ["lib/hooked.py"],
        "module": ["-m", "hooked"],
        "code": ["-c", HOOKED_MAIN],
        "directory": ["lib/app"],
    }[target]
    cwd = tmp_path / "lib" if target in ("module", "code") else tmp_path
    if target in ("module", "code"):
        argv = [a.replace("lib/", "") for a in argv]
    result = venv.run(["pep726hook", "--engine", venv_engine, *argv], cwd=cwd)
    assert result.returncode == 0, describe(result)
    expected = (
        "[('set', 'x', 1), ('del', 'x'), ('set', 'y', 2)] [('z', 3)] "
        f"{venv_engine} True 1 {venv_engine}\n"
    )
    assert result.stdout == expected


PICKLING = """\
import pickle, sys
class Point:
    def __init__(self, x):
        self.x = x
def double(v):
    return 2 * v
point = pickle.loads(pickle.dumps(Point(3)))
function = pickle.loads(pickle.dumps(double))
print(type(point).__module__, type(point) is Point, point.x, function is double)
"""


def test_script_objects_pickle(venv: Venv, tmp_path: Path) -> None:
    script = write(tmp_path / "pickling.py", PICKLING)
    result = venv.run(["pep726hook", str(script)])
    assert result.returncode == 0, describe(result)
    assert result.stdout == "__main__ True 3 True\n"


FAILING = """\
import sys
def inner():
    raise ValueError("boom")
def outer():
    inner()
if sys.argv[1:] == ["exit"]:
    sys.exit(3)
if sys.argv[1:] == ["message"]:
    sys.exit("leaving")
if sys.argv[1:] == ["interrupt"]:
    raise KeyboardInterrupt
if sys.argv[1:] == ["chained"]:
    try:
        outer()
    except ValueError as error:
        raise RuntimeError("again") from error
outer()
"""


@pytest.mark.parametrize("case", ["raise", "chained", "exit", "message"])
def test_exit_status_and_traceback_match_python(venv: Venv, tmp_path: Path, case: str) -> None:
    write(tmp_path / "failing.py", FAILING)
    args = [] if case == "raise" else [case]
    expected = venv.run(["python", "failing.py", *args], cwd=tmp_path)
    actual = venv.run(["python", "-m", "pep726hook", "failing.py", *args], cwd=tmp_path)
    assert actual.returncode == expected.returncode, describe(actual)
    assert actual.stderr == expected.stderr
    assert "pep726hook" not in actual.stderr
    assert "runpy" not in actual.stderr


INTERRUPTED = """\
import atexit, sys
atexit.register(print, "atexit ran")
def inner():
    raise KeyboardInterrupt
inner()
"""


@pytest.mark.parametrize("runner", ["python -m pep726hook", "pep726hook"])
def test_keyboard_interrupt_ends_the_process_as_python_does(
    venv: Venv, tmp_path: Path, runner: str
) -> None:
    # python dies by SIGINT after Ctrl-C (atexit handlers first, on CPython), so
    # that a parent sees -2 and a shell loop stops; the runner used to exit 130.
    write(tmp_path / "interrupted.py", INTERRUPTED)
    expected = venv.run(["python", "interrupted.py"], cwd=tmp_path)
    actual = venv.run([*RUNNERS[runner], "interrupted.py"], cwd=tmp_path)
    if os.name == "posix":
        assert expected.returncode == -signal.SIGINT
    assert actual.returncode == expected.returncode, describe(actual)
    assert actual.stdout == expected.stdout, describe(actual)
    assert actual.stderr == expected.stderr, describe(actual)
    assert actual.stderr.startswith("Traceback (most recent call last):\n")
    assert actual.stderr.endswith("KeyboardInterrupt\n")
    assert "pep726hook" not in actual.stderr


def test_real_sigint_ends_the_process_as_python_does(venv: Venv, tmp_path: Path) -> None:
    script = write(
        tmp_path / "interrupted.py",
        """\
        import os, signal, time
        # A background job starts with SIGINT ignored; a terminal user's process does not.
        signal.signal(signal.SIGINT, signal.default_int_handler)
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(30)
        """,
    )
    expected = venv.run(["python", str(script)])
    result = venv.run(["pep726hook", str(script)])
    assert result.returncode == expected.returncode, describe(result)
    assert result.stderr == expected.stderr, describe(result)


def test_keyboard_interrupt_in_package_init_of_module_target(venv: Venv, tmp_path: Path) -> None:
    write(tmp_path / "pkg" / "__init__.py", "raise KeyboardInterrupt\n")
    write(tmp_path / "pkg" / "mod.py", "")
    expected = venv.run(["python", "-m", "pkg.mod"], cwd=tmp_path)
    actual = venv.run(["pep726hook", "-m", "pkg.mod"], cwd=tmp_path)
    assert actual.returncode == expected.returncode, describe(actual)
    assert actual.stderr.endswith("KeyboardInterrupt\n"), describe(actual)


def test_explicit_engine_replaces_the_one_started_by_the_variable(
    venv: Venv, venv_engine: str
) -> None:
    # The one rule of every route: an engine named on a command line wins.
    other = "class" if venv_engine == "native" else "native"
    if other not in venv.engines:
        pytest.skip("needs both engines")
    code = "import os, pep726hook; print(pep726hook.engine(), os.environ['PEP726HOOK_ENGINE'])"
    out = venv.check_python(
        ["-m", "pep726hook", "--engine", venv_engine, "-c", code],
        env={"PEP726HOOK": "1", "PEP726HOOK_ENGINE": other},
    )
    assert out == f"{venv_engine} {venv_engine}\n"
    # Naming no engine keeps the active one.
    out = venv.check_python(
        ["-m", "pep726hook", "-c", code], env={"PEP726HOOK": "1", "PEP726HOOK_ENGINE": other}
    )
    assert out == f"{other} {other}\n"


# What the program finds when its first line runs: the package's modules
# loaded so far, the engine, and what turned the hook on.
SEEN_AT_THE_FIRST_LINE = """\
import sys
ours = sorted(m for m in sys.modules if m.startswith("pep726hook"))
import pep726hook
from pep726hook._install import route
print(ours, pep726hook.engine(), route())
"""
# The runner's own modules with the native engine: the rest of the package
# (install(), the engines, the full command) would delay every program.
RUNNER_MODULES = [
    "pep726hook",
    "pep726hook._compat",
    "pep726hook._native",
    "pep726hook._runner",
]


@pytest.mark.parametrize("target", ["code", "module", "script"])
@pytest.mark.parametrize("activated", [False, True])
def test_native_engine_starts_without_the_rest_of_the_package(
    venv: Venv, tmp_path: Path, target: str, activated: bool
) -> None:
    if "native" not in venv.engines:
        pytest.skip("the native engine is not built for this interpreter")
    write(tmp_path / "seen.py", SEEN_AT_THE_FIRST_LINE)
    argv = {"code": ["-c", SEEN_AT_THE_FIRST_LINE], "module": ["-m", "seen"], "script": ["seen.py"]}
    env = {"PEP726HOOK": "1"} if activated else {}
    out = venv.check_python(["-m", "pep726hook", *argv[target]], env=env, cwd=tmp_path)
    seen, _, how = out.partition("] ")
    modules = set(seen.strip("[").replace("'", "").split(", "))
    # A script is read by the file reader's rules; -c code is compiled by
    # them too where python compiles it before running (3.13.0-3.13.4, 3.15).
    reader = {"pep726hook._runner_source"}
    assert modules - reader == set(RUNNER_MODULES), out
    assert target != "script" or reader <= modules, out
    assert how == "native the runner\n", out


def test_class_engine_started_by_the_runner_reports_the_runner(venv: Venv) -> None:
    out = venv.check_python(["-m", "pep726hook", "--engine", "class", "-c", SEEN_AT_THE_FIRST_LINE])
    assert out.endswith(" class the runner\n")


LIST_MODULES = "import sys; print(*sorted(sys.modules), sep='\\n')"


def test_runner_imports_nothing_python_would_not(venv: Venv, tmp_path: Path) -> None:
    # Beyond its own modules, what a program finds imported under the runner
    # is what python itself imports for `-c` or `-m` (runpy and its imports).
    if "native" not in venv.engines:
        pytest.skip("the class engine imports what it needs; measured for the native engine")
    write(tmp_path / "listing" / "__init__.py", "")
    write(tmp_path / "listing" / "__main__.py", LIST_MODULES)
    python = set(venv.check_python(["-c", LIST_MODULES], cwd=tmp_path).split())
    python |= set(venv.check_python(["-m", "listing"], cwd=tmp_path).split())
    for argv in (["-c", LIST_MODULES], ["-m", "listing"]):
        runner = set(venv.check_python(["-m", "pep726hook", *argv], cwd=tmp_path).split())
        extra = {m for m in runner - python if m.split(".")[0] != "pep726hook"}
        assert extra == set(), argv


@pytest.mark.parametrize("spelling", ["CLASS", "Class", " class"])
def test_engine_option_ignores_case_as_the_variable_does(venv: Venv, spelling: str) -> None:
    out = venv.check_python(
        [
            "-m",
            "pep726hook",
            "--engine",
            spelling,
            "-c",
            "import pep726hook; print(pep726hook.engine())",
        ]
    )
    assert out == "class\n"


def test_exception_in_package_init_of_module_target(venv: Venv, tmp_path: Path) -> None:
    write(tmp_path / "broken" / "__init__.py", "raise LookupError('in package')\n")
    write(tmp_path / "broken" / "mod.py", "")
    result = venv.run(["pep726hook", "-m", "broken.mod"], cwd=tmp_path)
    assert result.returncode == 1, describe(result)
    assert "LookupError: in package" in result.stderr
    assert "_runner.py" not in result.stderr
    assert "_cli.py" not in result.stderr


def test_spec_of_module_target_carries_the_real_loader(venv: Venv, tmp_path: Path) -> None:
    # coverage#838, beartype#269, wrapt#238: __spec__.loader must be the real loader.
    write(
        tmp_path / "specmod.py",
        """\
        import importlib.machinery as m
        print(type(__spec__.loader) is m.SourceFileLoader, __loader__ is __spec__.loader)
        """,
    )
    result = venv.run(["pep726hook", "-m", "specmod"], cwd=tmp_path)
    assert result.stdout == "True True\n", describe(result)


def test_a_script_named_scan(venv: Venv, tmp_path: Path) -> None:
    write(tmp_path / "scan", "print('the script named scan')\n")
    for argv in (
        ["python", "-m", "pep726hook", "./scan"],
        ["pep726hook", "run", "scan"],
        ["pep726hook", "--", "scan"],
    ):
        result = venv.run(argv, cwd=tmp_path)
        assert result.stdout == "the script named scan\n", describe(result)


def test_double_dash_ends_our_options(venv: Venv, tmp_path: Path) -> None:
    write(tmp_path / "-dash.py", "import sys; print(sys.argv)\n")
    result = venv.run(
        ["pep726hook", "--engine", "class", "--", "-dash.py", "--version"], cwd=tmp_path
    )
    assert result.stdout == "['-dash.py', '--version']\n", describe(result)


def test_bad_engine_variable_is_a_usage_error(venv: Venv, tmp_path: Path) -> None:
    script = write(tmp_path / "ok.py", "print('ran')\n")
    result = venv.run(["pep726hook", str(script)], env={"PEP726HOOK_ENGINE": "turbo"})
    assert result.returncode == 2, describe(result)
    assert (
        "pep726hook: error: the environment variable PEP726HOOK_ENGINE must be one of "
        "'auto', 'native', 'class', not 'turbo'\n"
    ) in result.stderr
    assert "Traceback" not in result.stderr


def test_unavailable_native_engine_is_a_usage_error(venv: Venv, tmp_path: Path) -> None:
    if "native" in venv.engines:
        pytest.skip("the native engine is available here")
    script = write(tmp_path / "ok.py", "print('ran')\n")
    result = venv.run(["pep726hook", "--engine", "native", str(script)])
    assert result.returncode == 2, describe(result)
    assert "native engine" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("argv", "status", "message"),
    [
        (["missing.py"], 2, "can't open file"),
        (["-m", "no_such_module"], 1, "No module named no_such_module"),
        (["emptydir"], 1, "can't find '__main__' module"),
    ],
)
def test_missing_targets_fail_as_python_does(
    venv: Venv, tmp_path: Path, argv: list[str], status: int, message: str
) -> None:
    (tmp_path / "emptydir").mkdir()
    expected = venv.run(["python", *argv], cwd=tmp_path)
    result = venv.run(["pep726hook", *argv], cwd=tmp_path)
    assert expected.returncode == status
    assert result.returncode == status, describe(result)
    assert message in result.stderr
    assert result.stderr.startswith("pep726hook: ")
    assert "Traceback" not in result.stderr


def test_explicit_engine_replaces_the_one_started_with(venv: Venv, tmp_path: Path) -> None:
    # Started with PEP726HOOK=1 (the .pth installed auto), asked for class explicitly.
    if "native" not in venv.engines:
        pytest.skip("needs two engines")
    script = write(tmp_path / "which.py", "import pep726hook; print(pep726hook.engine())\n")
    result = venv.run(
        ["pep726hook", "--engine", "class", str(script)],
        env={"PEP726HOOK": "1", "PEP726HOOK_ENGINE": "native"},
    )
    assert result.stdout == "class\n", describe(result)


def test_symlinked_script_gets_its_real_directory(venv: Venv, project: Path) -> None:
    (project / "links").mkdir()
    (project / "links" / "dump.py").symlink_to(project / "scripts" / "dump.py")
    expected = dump(venv, ["python", "links/dump.py"], project)
    actual = dump(venv, ["pep726hook", "links/dump.py"], project)
    assert actual == expected
    assert expected["path0"].endswith("scripts")


# Target paths as a user may type them: `__file__`, the code's file name and
# a directory's sys.path entry keep them as typed (made absolute by joining
# the working directory on CPython 3.9+, never normalised: CPython's
# config_run_filename_abspath; PyPy 3.9 normalises), sys.argv[0] is the path
# as typed and a script's sys.path[0] is its real directory (on PyPy only the
# script's own symlink is resolved).
TYPED_TARGETS = (
    "./scripts/../scripts/dump.py",
    "scripts/./dump.py",
    "./scripts//dump.py",
    "linked/dump.py",
    "linked/../scripts/dump.py",
    "{project}/./scripts/../scripts/dump.py",
    "./appdir/../appdir",
    "./app.zip",
)


@pytest.mark.parametrize("typed", TYPED_TARGETS)
def test_target_path_is_named_as_python_names_it(venv: Venv, project: Path, typed: str) -> None:
    (project / "linked").symlink_to(project / "scripts", target_is_directory=True)
    target = typed.format(project=project)
    expected = dump(venv, ["python", target, "a"], project)
    actual = dump(venv, ["python", "-m", "pep726hook", target, "a"], project)
    assert actual == expected
    assert expected["argv"] == [target, "a"]


def test_traceback_names_the_script_as_python_names_it(venv: Venv, tmp_path: Path) -> None:
    write(tmp_path / "failing.py", FAILING)
    (tmp_path / "bin").mkdir()
    (tmp_path / "broken.py").write_bytes(BROKEN_SOURCES["undecodable on a later line"])
    for script in ("./bin/../failing.py", "./bin/../broken.py"):
        expected = venv.run(["python", script], cwd=tmp_path)
        actual = venv.run(["python", "-m", "pep726hook", script], cwd=tmp_path)
        assert actual.stderr == expected.stderr
        if sys.implementation.name == "cpython" and sys.version_info >= (3, 9):
            assert f"{tmp_path}/./bin/../" in expected.stderr  # joined, never normalised


def test_uncaught_exception_is_recorded_for_post_mortem(venv: Venv, tmp_path: Path) -> None:
    script = write(
        tmp_path / "postmortem.py",
        """\
        import atexit, sys
        @atexit.register
        def report():
            print(sys.last_type.__name__, sys.last_value.args, file=sys.stderr)
        raise ValueError("late")
        """,
    )
    result = venv.run(["pep726hook", str(script)])
    assert result.returncode == 1
    assert result.stderr.endswith("ValueError ('late',)\n"), describe(result)


def test_children_are_told_the_engine_as_asked_not_as_resolved(venv: Venv, tmp_path: Path) -> None:
    # "auto" resolves per interpreter: a sub-interpreter that cannot load the
    # extension then gets the class engine instead of a start-up error.
    script = write(
        tmp_path / "engine_env.py",
        "import os, pep726hook\nprint(os.environ['PEP726HOOK_ENGINE'], pep726hook.engine())\n",
    )
    result = venv.run(["pep726hook", str(script)])
    assert result.returncode == 0, describe(result)
    assert result.stdout == f"auto {pep726hook.available_engines()[0]}\n"


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_runner_is_silent_under_warnings_as_errors(venv: Venv, project: Path, target: str) -> None:
    # No warning of ours, whichever target: `-W error` must start as python does.
    argv = ["python", "-W", "error", "-X", "dev", "-m", "pep726hook", *TARGETS[target]]
    result = venv.run(argv, cwd=project)
    assert result.returncode == 0, describe(result)
    assert result.stderr == "", describe(result)


PLAIN_MAIN = """\
import atexit, sys, types
import __main__
print(type(sys.modules[__name__]) is types.ModuleType)
def late(name, value):
    print("hook", name)
globals()["__set" + "attr__"] = late
atexit.register(lambda: setattr(__main__, "after", 1))
"""


def test_main_without_hooks_is_a_plain_module_while_it_runs(
    venv: Venv, venv_engine: str, tmp_path: Path
) -> None:
    # Checks like lazy_loader's `type(mod) is ModuleType` must hold while __main__ runs.
    script = write(tmp_path / "plain_main.py", PLAIN_MAIN)
    result = venv.run(["pep726hook", "--engine", venv_engine, str(script)])
    assert result.returncode == 0, describe(result)
    assert result.stdout == "True\nhook after\n"


# python reads a script through its file tokenizer, which
# treats NUL and undecodable bytes unlike compile() of the same bytes.
BROKEN_SOURCES = {
    "nul in code": b'print("a")\x00\nprint("b")\n',
    "nul in a comment": b"print(1)\n# x\x00y\nprint(2)\n",
    "undecodable in a string": b'print("\xff")\n',
    "undecodable in a comment": b"print(1)\n# \xff\n",
    "undecodable for its declared encoding": b'# coding: ascii\nprint("\xff")\n',
    "latin-1 declared": b'# -*- coding: latin-1 -*-\nprint("\xff")\n',
    "undecodable for its declared encoding, further down": b"#!/bin/python\n# coding: ascii\nx = 1\nab\xff\n",
    "undecodable on the first line": b"x = 1  # \xff\n",
    "undecodable on a later line": b'x = 1\ny = 2\nz = "\xff"\n',
    "undecodable for a declared utf-8": b'# coding: utf-8\nprint("\xff")\n',
    "unclosed parenthesis": b"print((1,\n",
    "unclosed parenthesis without a final newline": b"print((1,",
    "unclosed parenthesis, CRLF newlines": b"print((1,\r\n",
    "unclosed bracket over lines": b"x = [\n  1,\n  2,\n\n",
    "indented block missing at the end": b"class A:\n    def f(self):\n",
    "unclosed triple-quoted string": b"x = 1\ns = '''abc\ndef\n",
}


# Where the runner still differs from the interpreter's file reader
# (docs/engines.md): strict, so that the case runs there too and a fix on
# either side turns it into a failure that says so.
BROKEN_SOURCE_DIFFERENCES = {
    "undecodable in a comment": pytest.mark.xfail(
        sys.version_info >= (3, 14) and sys.implementation.name == "cpython",
        reason="3.14+'s file reader numbers a decoding error on line 2 as line 1",
        strict=True,
    ),
    **dict.fromkeys(
        ("nul in code", "nul in a comment"),
        pytest.mark.xfail(
            sys.implementation.name == "pypy" and sys.version_info < (3, 10),
            reason="PyPy 3.9 keeps, skips or refuses a NUL byte where compile() refuses all",
            strict=True,
        ),
    ),
}


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(case, marks=BROKEN_SOURCE_DIFFERENCES.get(case, ()))
        for case in sorted(BROKEN_SOURCES)
    ],
)
def test_broken_scripts_fail_or_run_as_python_does(venv: Venv, tmp_path: Path, case: str) -> None:
    (tmp_path / "broken.py").write_bytes(BROKEN_SOURCES[case])
    expected = venv.run(["python", "broken.py"], cwd=tmp_path)
    actual = venv.run(["python", "-m", "pep726hook", "broken.py"], cwd=tmp_path)
    assert (actual.returncode, actual.stdout, actual.stderr) == (
        expected.returncode,
        expected.stdout,
        expected.stderr,
    )


def test_missing_script_is_named_as_python_names_it(venv: Venv, tmp_path: Path) -> None:
    expected = venv.run(["python", "missing.py"], cwd=tmp_path)
    actual = venv.run(["python", "-m", "pep726hook", "missing.py"], cwd=tmp_path)
    assert actual.stderr.split(": ", 1)[1] == expected.stderr.split(": ", 1)[1]


# Fails unless `from __future__ import annotations` leaves the name unevaluated
# (3.8-3.13: at the def; 3.14+, where annotations are lazy: when read).
FUTURE_SENSITIVE = "def f(x: undefined_name): pass\nprint(f.__annotations__)\n"


@pytest.mark.parametrize("binds_hook", [False, True], ids=["plain", "naming-a-hook"])
def test_code_string_inherits_no_future_features(
    venv: Venv, tmp_path: Path, binds_hook: bool
) -> None:
    # The runner's own modules may use __future__ imports; -c code compiled
    # or exec()'d by them must not get those features (naming a hook takes
    # the compile() path, the other code is handed to exec()).
    code = ("__setattr__ = None\n" if binds_hook else "") + FUTURE_SENSITIVE
    expected = venv.run(["python", "-c", code], cwd=tmp_path)
    actual = venv.run(["python", "-m", "pep726hook", "-c", code], cwd=tmp_path)
    assert expected.returncode == 1 and "NameError" in expected.stderr, describe(expected)
    assert (actual.returncode, actual.stdout, actual.stderr) == (
        expected.returncode,
        expected.stdout,
        expected.stderr,
    ), describe(actual)


@pytest.mark.parametrize("binds_hook", [False, True], ids=["plain", "naming-a-hook"])
def test_coding_declaration_in_code_string_is_read_as_python_reads_it(
    venv: Venv, tmp_path: Path, binds_hook: bool
) -> None:
    # CPython 3.8/3.9 and PyPy honour it in -c code; CPython 3.10+ do not.
    code = "# coding: latin-1\n" + ("__delattr__ = None\n" if binds_hook else "")
    code += "print(ascii('\u00e9'))\n"
    expected = venv.run(["python", "-c", code], cwd=tmp_path)
    actual = venv.run(["python", "-m", "pep726hook", "-c", code], cwd=tmp_path)
    assert expected.returncode == 0, describe(expected)
    assert (actual.returncode, actual.stdout, actual.stderr) == (
        expected.returncode,
        expected.stdout,
        expected.stderr,
    ), describe(actual)


@pytest.mark.skipif(os.name != "posix", reason="pipes as POSIX has them")
@pytest.mark.parametrize("runner", sorted(RUNNERS))
def test_program_meets_a_closed_pipe_as_under_python(
    venv: Venv, tmp_path: Path, runner: str
) -> None:
    # The program's broken pipe is its own: the runner changes nothing of
    # what python prints or of its status (120: the final flush failed too).
    code = "for i in range(100000): print(i)"

    def run(argv: list[str]) -> tuple[int, str]:
        read_end, write_end = os.pipe()
        os.close(read_end)
        try:
            candidate = venv.bin / argv[0]
            result = subprocess.run(
                [str(candidate) if candidate.exists() else argv[0], *argv[1:]],
                stdout=write_end,
                stderr=subprocess.PIPE,
                env=venv.env(),
                cwd=str(tmp_path),
                text=True,
                timeout=60,
                check=False,
            )
        finally:
            os.close(write_end)
        return result.returncode, result.stderr

    expected = run(["python", "-c", code])
    assert "BrokenPipeError" in expected[1]
    assert run([*RUNNERS[runner], "-c", code]) == expected


@pytest.mark.parametrize(
    "code",
    [
        "def inner():\n    1/0\ndef outer():\n    inner()\nouter()\n",
        "import warnings\nwarnings.warn('careful')\n",
        "x = 1\n__setattr__ = None\nraise ValueError(x)\n",
    ],
    ids=["nested-functions", "warning", "naming-a-hook"],
)
def test_code_string_lines_are_shown_as_python_shows_them(
    venv: Venv, tmp_path: Path, code: str
) -> None:
    # CPython 3.13+ show the lines of -c code in tracebacks and warnings.
    expected = venv.run(["python", "-c", code], cwd=tmp_path)
    actual = venv.run(["python", "-m", "pep726hook", "-c", code], cwd=tmp_path)
    assert (actual.returncode, actual.stderr) == (expected.returncode, expected.stderr), describe(
        actual
    )

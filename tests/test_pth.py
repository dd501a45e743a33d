"""Start-up activation through the ``pep726hook.pth`` line that the wheel installs."""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path

import pytest
from _venv import RECORDING_MODULE, ROOT, Venv, describe, editable_venv, make_venv, write

PTH = "pep726hook.pth"
START = "pep726hook.start"
SHIM = "_pep726hook_startup.py"
# The .start file (PEP 829) is shipped only where the .pth line may not run:
# CPython 3.18+ ignores .pth import lines, and a pure wheel may go anywhere.
SHIPS_START = sys.implementation.name != "cpython" or sys.version_info >= (3, 18)
# Interpreters whose site processes .start files.
RUNS_START_FILES = sys.implementation.name == "cpython" and sys.version_info >= (3, 15)

# What Python 3.15+ does with a PEP 829 .start file: resolve and call each entry.
RUN_START_ENTRIES = """\
import importlib, sys
for entry in open(sys.argv[1]).read().split():
    module, _, function = entry.partition(":")
    getattr(importlib.import_module(module), function)()
"""

CHECK = (
    "import sys, pep726hook, helper; helper.x = 1; "
    "print(pep726hook.is_installed(), pep726hook.engine(), helper.calls)"
)


def test_wheel_ships_the_startup_files_at_its_root(venv: Venv) -> None:
    line = (venv.site_packages / PTH).read_text(encoding="utf-8")
    assert line == (ROOT / "src" / PTH).read_text(encoding="utf-8")
    assert line.count("\n") == 1
    assert line.startswith("import ")
    # Sorts after setuptools' __editable__*.pth, so an editable path is set up first.
    assert sorted([PTH, "__editable__.pep726hook-0.1.0.pth"])[-1] == PTH
    assert (venv.site_packages / START).is_file() == SHIPS_START
    assert (venv.site_packages / SHIM).is_file() == SHIPS_START
    # Same name as the .pth: where site runs .start files, the .pth line is skipped.
    assert Path(START).stem == Path(PTH).stem
    start = (ROOT / "src" / START).read_text(encoding="utf-8").strip()
    assert start == "_pep726hook_startup:activate"


def start_entry_code(venv: Venv, tmp_path: Path) -> str:
    """Code that puts the shim on the path and runs the .start file as 3.15's site would."""
    shim_directory = tmp_path / "start"
    shim_directory.mkdir()
    shutil.copy(ROOT / "src" / SHIM, shim_directory / SHIM)
    return (
        f"import sys; sys.path[:0] = [{str(shim_directory)!r}]\n"
        f"sys.path.append({str(venv.site_packages)!r})\n" + RUN_START_ENTRIES
    )


def test_start_entry_point_activates(venv: Venv, tmp_path: Path) -> None:
    write(tmp_path / "helper.py", RECORDING_MODULE)
    code = start_entry_code(venv, tmp_path) + CHECK.replace("; ", "\n")
    # -S: the .pth does not run, so only the entry point can have installed the hook.
    out = venv.check_python(
        ["-S", "-c", code, str(ROOT / "src" / START)], env={"PEP726HOOK": "1"}, cwd=tmp_path
    )
    assert out.split()[0] == "True"
    assert out.rstrip().endswith("['x']")


def test_start_entry_point_imports_nothing_when_unset(venv: Venv, tmp_path: Path) -> None:
    code = (
        start_entry_code(venv, tmp_path)
        + "print(sorted(m for m in sys.modules if m.startswith('pep726hook')))\n"
    )
    out = venv.check_python(["-S", "-c", code, str(ROOT / "src" / START)])
    assert out == "[]\n"


STARTUP_MODULES = "import sys; print(sorted(sys.modules))"


def test_unset_variable_imports_nothing(venv: Venv, tmp_path: Path) -> None:
    # Not even what site would import for a .start file (pkgutil, re, 3.15+).
    bare = make_venv(tmp_path / "bare", [])
    assert venv.check_python(["-c", STARTUP_MODULES]) == bare.check_python(["-c", STARTUP_MODULES])


# A stand-in for the package that reports which start-up file called it, once
# per file: site runs a venv's .pth lines twice before 3.15.
FAKE_PACKAGE = """\
import sys
seen = set()
def _activate():
    caller = sys._getframe(1).f_code.co_filename
    route = "start" if caller.endswith("_pep726hook_startup.py") else "pth"
    if route not in seen:
        seen.add(route)
        sys.stderr.write(route + "\\n")
"""


@pytest.mark.parametrize("files", ["as shipped", "pth and start"])
def test_pth_and_start_never_both_activate(tmp_path: Path, files: str) -> None:
    bare = make_venv(tmp_path / "bare", [])
    names = [PTH, START, SHIM] if files == "pth and start" or SHIPS_START else [PTH]
    for name in names:
        shutil.copy(ROOT / "src" / name, bare.site_packages / name)
    write(bare.site_packages / "pep726hook" / "__init__.py", FAKE_PACKAGE)
    result = bare.run_python(["-c", "pass"], env={"PEP726HOOK": "1"})
    assert result.returncode == 0, describe(result)
    expected = "start" if RUNS_START_FILES and START in names else "pth"
    assert result.stderr == expected + "\n", describe(result)


@pytest.mark.parametrize("value", ["0", ""])
def test_zero_or_empty_imports_only_the_package(venv: Venv, value: str) -> None:
    # The .pth line only tests whether the variable is set (the
    # cheapest line to compile in every process); the package's __init__
    # reads it, and loads nothing more.
    code = "import sys; print(sorted(m for m in sys.modules if m.startswith('pep726hook')))"
    out = venv.check_python(["-c", code], env={"PEP726HOOK": value})
    assert out == "['pep726hook']\n"


@pytest.mark.parametrize("value", ["1", "true", "TRUE", "Yes", "on", " On "])
def test_truthy_values_activate(venv: Venv, value: str) -> None:
    result = venv.run_python(
        ["-c", "import pep726hook; print(pep726hook.is_installed())"], env={"PEP726HOOK": value}
    )
    assert (result.returncode, result.stdout, result.stderr) == (0, "True\n", ""), describe(result)


@pytest.mark.parametrize("value", ["0", "", "false", "No", "OFF"])
def test_falsy_values_leave_the_hook_off_silently(venv: Venv, value: str) -> None:
    result = venv.run_python(
        ["-c", "import pep726hook; print(pep726hook.is_installed())"], env={"PEP726HOOK": value}
    )
    assert (result.returncode, result.stdout, result.stderr) == (0, "False\n", ""), describe(result)


@pytest.mark.parametrize("value", ["2", "enable", "y"])
def test_unknown_value_costs_one_line_and_no_hook(venv: Venv, value: str) -> None:
    # Also under -W error: the line is written to stderr, never warned.
    result = venv.run_python(
        ["-W", "error", "-c", "import pep726hook; print(pep726hook.is_installed())"],
        env={"PEP726HOOK": value},
    )
    assert result.returncode == 0, describe(result)
    assert result.stdout == "False\n"
    lines = result.stderr.splitlines()
    assert len(lines) == 1, describe(result)
    assert lines[0].startswith("pep726hook: ") and repr(value) in lines[0]


def test_activation_is_silent_under_warnings_as_errors(venv: Venv, venv_engine: str) -> None:
    result = venv.run_python(
        ["-W", "error", "-X", "dev", "-c", "import pep726hook; print(pep726hook.engine())"],
        env={"PEP726HOOK": "1", "PEP726HOOK_ENGINE": venv_engine},
    )
    assert (result.returncode, result.stdout, result.stderr) == (0, f"{venv_engine}\n", ""), (
        describe(result)
    )


def test_engine_variable_ignores_case(venv: Venv, venv_engine: str) -> None:
    out = venv.check_python(
        ["-c", "import pep726hook; print(pep726hook.engine())"],
        env={"PEP726HOOK": "1", "PEP726HOOK_ENGINE": f" {venv_engine.upper()} "},
    )
    assert out == f"{venv_engine}\n"


# A program that defines a __setattr__ hook and stores on itself through the
# module object, as `python TARGET` runs it with PEP726HOOK=1.
MAIN_WITH_HOOK = """\
import sys
import __main__
calls = []
def __setattr__(name, value):
    calls.append(name)
    globals()[name] = value
__main__.x = 1
setattr(sys.modules["__main__"], "y", 2)
print(calls, x, y)
"""


@pytest.mark.parametrize("kind", ["script", "module", "code"])
def test_main_hooks_are_called(venv: Venv, venv_engine: str, tmp_path: Path, kind: str) -> None:
    write(tmp_path / "prog.py", MAIN_WITH_HOOK)
    target = {"script": ["prog.py"], "module": ["-m", "prog"], "code": ["-c", MAIN_WITH_HOOK]}
    result = venv.run_python(
        target[kind], env={"PEP726HOOK": "1", "PEP726HOOK_ENGINE": venv_engine}, cwd=tmp_path
    )
    assert result.returncode == 0, describe(result)
    assert result.stdout == "['x', 'y'] 1 2\n", describe(result)


# An own-GIL sub-interpreter also runs the .pth line; CPython 3.14+ refuses to
# exec code in one whose __main__ is not exactly ModuleType ("invalid __main__
# module"), as CPython's own test_import and test_importlib do.
SUBINTERPRETER_EXEC = """\
import _interpreters
interp = _interpreters.create()
try:
    print(_interpreters.exec(interp, "import sys; sys.modules['__main__'].x = 1"))
finally:
    _interpreters.destroy(interp)
"""


def test_sub_interpreters_main_stays_a_plain_module(venv: Venv, venv_engine: str) -> None:
    if importlib.util.find_spec("_interpreters") is None:
        pytest.skip("no _interpreters module (CPython 3.13+)")
    out = venv.check_python(
        ["-c", SUBINTERPRETER_EXEC], env={"PEP726HOOK": "1", "PEP726HOOK_ENGINE": venv_engine}
    )
    assert out == "None\n"


def test_variable_set_activates_with_the_named_engine(
    venv: Venv, venv_engine: str, tmp_path: Path
) -> None:
    write(tmp_path / "helper.py", RECORDING_MODULE)
    result = venv.run_python(
        ["-c", CHECK], env={"PEP726HOOK": "1", "PEP726HOOK_ENGINE": venv_engine}, cwd=tmp_path
    )
    assert result.returncode == 0, describe(result)
    assert result.stdout == f"True {venv_engine} ['x']\n"
    assert result.stderr == ""


def test_activation_prints_nothing(venv: Venv) -> None:
    result = venv.run_python(["-c", "pass"], env={"PEP726HOOK": "1"})
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


def test_activation_does_not_import_threading(venv: Venv, venv_engine: str) -> None:
    # virtualenv#1895: a .pth importing threading breaks gevent's monkey-patching.
    code = "import sys; print('threading' in sys.modules, 'pep726hook' in sys.modules)"
    baseline = venv.check_python(["-c", code])
    if baseline.startswith("True"):
        pytest.skip("this interpreter imports threading at start-up by itself")
    out = venv.check_python(["-c", code], env={"PEP726HOOK": "1", "PEP726HOOK_ENGINE": venv_engine})
    assert out == "False True\n"


def test_activation_imports_only_what_the_engine_needs(venv: Venv, venv_engine: str) -> None:
    # With the native engine neither the class engine nor its finder
    # is loaded; with the class engine neither the C extension nor the native
    # engine's module (the module type's dict tells that nothing is patched);
    # and no start-up module imports __future__ (the first standard library
    # .py import makes Python list the whole library directory).
    code = "import sys; print(sorted(m for m in sys.modules if m in NAMES))"
    class_engine = ["pep726hook._class_engine", "pep726hook._finder"]
    native_engine = ["pep726hook._native", "pep726hook._native_engine"]
    names = ["__future__", *class_engine, *native_engine]
    code = code.replace("NAMES", repr(names))
    baseline = venv.check_python(["-c", code])
    if baseline != "[]\n":
        pytest.skip(f"this interpreter imports {baseline.strip()} at start-up by itself")
    out = venv.check_python(["-c", code], env={"PEP726HOOK": "1", "PEP726HOOK_ENGINE": venv_engine})
    # The class engine needs both, and neither uses postponed annotations;
    # the native engine starts with its extension alone.
    expected = class_engine if venv_engine == "class" else native_engine[:1]
    assert out == f"{expected}\n"


ADOPTED = """\
import sys
loaded = sorted(m for m in sys.modules if m.startswith("pep726hook"))
import pep726hook, pep726hook._install as installation
print(loaded)
print(pep726hook.is_installed(), pep726hook.engine(), installation.route())
with pep726hook.install() as again:
    print(again.installed_now)
pep726hook.uninstall()
import types
m = types.ModuleType("m")
exec("def __setattr__(name, value): print('hook', name)", m.__dict__)
m.x = 1
print(pep726hook.is_installed(), sorted(vars(m).keys() - {"__setattr__", "__name__", "__doc__",
      "__package__", "__loader__", "__spec__", "__builtins__"}))
del sys.modules["pep726hook._install"]
import pep726hook._install as fresh
print(fresh.is_installed())
"""


def test_native_start_up_patch_is_the_installation_once_install_is_imported(venv: Venv) -> None:
    # The .pth patches the module type without importing _install,
    # _engines or _native_engine; the first use of the API finds it installed,
    # with its route, and uninstall() really removes it (a re-imported _install
    # does not take a removed patch over again).
    if "native" not in venv.engines:
        pytest.skip("the native engine is not built here")
    out = venv.check_python(["-c", ADOPTED], env={"PEP726HOOK": "1"})
    assert out == (
        "['pep726hook', 'pep726hook._native']\n"
        "True native $PEP726HOOK at start-up\n"
        "False\n"
        "False ['x']\n"
        "False\n"
    )


def test_activation_is_idempotent(venv: Venv, venv_engine: str, tmp_path: Path) -> None:
    # coverage#340: site runs a venv's .pth lines twice before 3.15.
    write(tmp_path / "helper.py", RECORDING_MODULE)
    code = (
        "import site, sys\n"
        f"site.addsitedir({str(venv.site_packages)!r})\n"
        f"exec(open({str(venv.site_packages / PTH)!r}).read())\n"
        "from pep726hook._finder import Pep726Finder\n"
        "print(sum(type(f).__name__ == Pep726Finder.__name__ for f in sys.meta_path))\n"
        + CHECK.replace("; ", "\n")
    )
    result = venv.run_python(
        ["-c", code], env={"PEP726HOOK": "1", "PEP726HOOK_ENGINE": venv_engine}, cwd=tmp_path
    )
    assert result.returncode == 0, describe(result)
    assert result.stderr == ""
    finders, rest = result.stdout.split("\n", 1)
    assert int(finders) <= 1
    assert rest == f"True {venv_engine} ['x']\n"


def test_package_removed_leaves_start_up_silent(tmp_path: Path) -> None:
    # coverage#223: a .pth left behind by an uninstall must not break start-up.
    bare = make_venv(tmp_path / "bare", [])
    for name in (PTH, START, SHIM):
        shutil.copy(ROOT / "src" / name, bare.site_packages / name)
    (bare.site_packages / "zzz_pep726hook_tests_pytest.pth").unlink()
    result = bare.run_python(["-c", "print('started')"], env={"PEP726HOOK": "1"})
    assert (result.returncode, result.stdout, result.stderr) == (0, "started\n", "")
    # The 3.15+ route: the .start entry point with the package gone.
    code = RUN_START_ENTRIES + "print('started')\n"
    result = bare.run_python(["-c", code, str(bare.site_packages / START)], env={"PEP726HOOK": "1"})
    assert (result.returncode, result.stdout, result.stderr) == (0, "started\n", "")


def test_bad_engine_variable_costs_one_line(venv: Venv) -> None:
    result = venv.run_python(
        ["-c", "import pep726hook; print(pep726hook.is_installed())"],
        env={"PEP726HOOK": "1", "PEP726HOOK_ENGINE": "turbo"},
    )
    assert result.returncode == 0, describe(result)
    assert result.stdout == "False\n"
    lines = result.stderr.splitlines()
    assert len(lines) == 1, describe(result)
    # The same words as every other route that reads the variable.
    assert lines[0] == (
        "pep726hook: hook not activated at start-up: the environment variable "
        "PEP726HOOK_ENGINE must be one of 'auto', 'native', 'class', not 'turbo'"
    )


def test_unavailable_native_engine_costs_one_line(venv: Venv) -> None:
    if "native" in venv.engines:
        pytest.skip("the native engine is available here")
    result = venv.run_python(
        ["-c", "print('started')"], env={"PEP726HOOK": "1", "PEP726HOOK_ENGINE": "native"}
    )
    assert result.returncode == 0, describe(result)
    assert result.stdout == "started\n"
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("pep726hook: "), describe(result)
    assert (
        "the environment variable PEP726HOOK_ENGINE is 'native', and the native engine" in lines[0]
    )


def test_editable_install_activates_too(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    venv = editable_venv(tmp_path_factory)
    assert (venv.site_packages / PTH).is_file()
    assert (venv.site_packages / START).is_file() == SHIPS_START
    assert (venv.site_packages / SHIM).is_file() == SHIPS_START
    write(tmp_path / "helper.py", RECORDING_MODULE)
    result = venv.run_python(["-c", CHECK], env={"PEP726HOOK": "1"}, cwd=tmp_path)
    assert result.returncode == 0, describe(result)
    assert result.stdout.startswith("True ")
    assert result.stdout.endswith(" ['x']\n")
    # The package really comes from the source tree, not from a copy.
    origin = venv.check_python(["-c", "import pep726hook; print(pep726hook.__file__)"])
    assert "site-packages" not in origin


def test_sdist_carries_the_startup_files(tmp_path: Path) -> None:
    # A wheel built from the sdist (what `python -m build` does) needs them too.
    manifest = (ROOT / "MANIFEST.in").read_text(encoding="utf-8")
    assert f"src/{PTH}" in manifest
    assert f"src/{START}" in manifest
    assert f"src/{SHIM}" in manifest


def test_built_wheel_lists_the_startup_files_in_record(venv: Venv) -> None:
    records = list(venv.site_packages.glob("pep726hook-*.dist-info/RECORD"))
    assert records, "no RECORD"
    text = records[0].read_text(encoding="utf-8")
    assert f"\n{PTH}," in "\n" + text
    assert (f"\n{START}," in "\n" + text) == SHIPS_START
    assert (f"\n{SHIM}," in "\n" + text) == SHIPS_START


def test_own_package_is_never_wrapped(venv: Venv, venv_engine: str) -> None:
    # beartype#638: modules of pep726hook imported after start-up activation are
    # loaded by the plain loader, never through our own finder.
    code = (
        "import sys, pep726hook\n"
        "assert 'pep726hook._runner' not in sys.modules\n"
        "import pep726hook._runner as r\n"
        "print(type(r.__spec__.loader).__name__, r.__loader__ is r.__spec__.loader, "
        "pep726hook.is_upgraded(r))\n"
    )
    out = venv.check_python(["-c", code], env={"PEP726HOOK": "1", "PEP726HOOK_ENGINE": venv_engine})
    # The native engine gives every module the behaviour, so only the class
    # engine's answer says something about wrapping.
    expected_upgraded = "True" if venv_engine == "native" else "False"
    assert out == f"SourceFileLoader True {expected_upgraded}\n"

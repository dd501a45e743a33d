"""Instruction counts (valgrind's callgrind) of start-up, module stores and imports.

Wall-clock times on the shared 2-core machine drift by several per cent; the
instruction count of a run of the same binary in the same environment repeats
to about 0.1 % of that run's total or better, whatever the load, so the small
start-up targets are judged on it.

Start-up: ``python -c pass`` in one venv made for the purpose (``--without-pip``,
so no setuptools ``distutils-precedence.pth``), in these states:

* ``base``: another package's non-empty, comment-only ``.pth`` and no pep726hook.
  On 3.13 the first non-empty ``.pth`` of any package makes site import the
  ``utf-8-sig`` codec (about +3 % of start-up), so a baseline without one would
  charge that to us;
* ``import-os``: ``base`` plus a one-line ``import os`` ``.pth``, the cheapest
  executable ``.pth`` line, for reference;
* ``installed``: ``base`` plus the pep726hook wheel, ``PEP726HOOK`` unset;
* ``activated``: ``installed`` with ``PEP726HOOK=1`` (default engine);
* ``activated-class``: ``PEP726HOOK=1 PEP726HOOK_ENGINE=class``.

Stores: a fresh process runs a loop of ``--loops`` operations on a module (the
configurations of ``bench_module_access.py``: ``plain``, ``workaround``,
``class``, ``native``); the same loop with an empty body in the same
configuration is subtracted, so start-up and set-up cancel and what is left is
instructions per operation (operand loads included, the same in every
configuration).

Imports (``--imports``): ``bench_import.py``'s ~150 standard library modules in
a fresh ``-s`` process, ``off`` and each engine.

CPython only (PyPy's JIT makes instruction counts of short runs meaningless).
Every run has ``PYTHONHASHSEED=0`` and the same small environment.  Start-up
states are counted ``--repeat`` times (median; the spread is in the JSON);
stores and imports once (at 100 000 loops a store count is good to about 2
instructions per operation).  Without ``--wheel`` only stores (and imports)
are counted, with the pep726hook installed for this interpreter: the tool for
work on the native engine's stores, e.g.

    python benchmarks/bench_callgrind.py --cases plain/unhooked-write,native/unhooked-write
    python benchmarks/bench_callgrind.py --wheel dist/pep726hook-*.whl [--json-out F] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import Any

from _shared import HOOKED_SOURCE, UNHOOKED_SOURCE, WORKAROUND_SOURCE, callgrind

HERE = Path(__file__).resolve().parent
STARTUP_FILES = ("pep726hook.pth", "pep726hook.start", "_pep726hook_startup.py")
OTHER_PTH = "aaa_other_package.pth"
OTHER_PTH_TEXT = "# another package's .pth: comments only, but not empty\n"
IMPORT_OS_PTH = "zzz_import_os.pth"

# The targets are judged on these ratios (see run_all.py).
STARTUP_STATES = ("base", "import-os", "installed", "activated", "activated-class")


def _environment(extra: dict[str, str] | None = None) -> dict[str, str]:
    # Fixed and small: the environment block is copied onto the stack, and
    # every variable is a string the interpreter may look at.
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ.get("HOME", "/root"),
        "LANG": "C.UTF-8",
        "PYTHONHASHSEED": "0",
    }
    env.update(extra or {})
    return env


def median_count(argv: list[str], env: dict[str, str], cwd: str, repeat: int) -> list[int]:
    """Run *argv* once uncounted (writes .pyc files), then *repeat* times under callgrind."""
    subprocess.run(argv, env=env, cwd=cwd, check=True, capture_output=True)
    return [callgrind(argv, env, cwd) for _ in range(repeat)]


# --- start-up -------------------------------------------------------------


def make_startup_venv(directory: Path, wheel: Path) -> Path:
    """Create a pip-less venv with *wheel* installed; return its site-packages."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(directory)], check=True)
    python = directory / "bin" / "python"
    pip = [sys.executable, "-m", "pip", "--python", str(python)]
    subprocess.run(
        [*pip, "install", "-q", "--no-deps", "--no-warn-script-location", str(wheel)],
        check=True,
        env={k: v for k, v in os.environ.items() if not k.startswith("PYTHON")},
    )
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    return Path(purelib)


def _package_entries(site: Path) -> list[str]:
    names = [*STARTUP_FILES, "pep726hook"]
    names += [p.name for p in site.glob("pep726hook-*.dist-info")]
    return [name for name in names if (site / name).exists()]


def startup_counts(wheel: Path, repeat: int) -> dict[str, list[int]]:
    """Return state -> instruction counts of ``python -c pass`` (see the module doc)."""
    counts: dict[str, list[int]] = {}
    with tempfile.TemporaryDirectory(prefix="pep726hook-startup-") as tmp:
        site = make_startup_venv(Path(tmp) / "venv", wheel)
        python = str(Path(tmp) / "venv" / "bin" / "python")
        stash = Path(tmp) / "stash"
        stash.mkdir()
        (site / OTHER_PTH).write_text(OTHER_PTH_TEXT, encoding="utf-8")
        ours = _package_entries(site)
        assert "pep726hook.pth" in ours, f"the wheel put no pep726hook.pth in {site}"
        argv = [python, "-c", "pass"]
        for name in ours:  # "base": the package is not installed at all
            (site / name).rename(stash / name)
        counts["base"] = median_count(argv, _environment(), tmp, repeat)
        (site / IMPORT_OS_PTH).write_text("import os\n", encoding="utf-8")
        counts["import-os"] = median_count(argv, _environment(), tmp, repeat)
        (site / IMPORT_OS_PTH).unlink()
        for name in ours:
            (stash / name).rename(site / name)
        counts["installed"] = median_count(argv, _environment(), tmp, repeat)
        on = _environment({"PEP726HOOK": "1"})
        counts["activated"] = median_count(argv, on, tmp, repeat)
        on_class = _environment({"PEP726HOOK": "1", "PEP726HOOK_ENGINE": "class"})
        counts["activated-class"] = median_count(argv, on_class, tmp, repeat)
        # The activated states must really have activated the hook.
        check = "import sys, pep726hook; sys.exit(not pep726hook.is_installed())"
        subprocess.run([python, "-c", check], env=on, check=True)
    return counts


# --- stores ---------------------------------------------------------------

STATEMENTS = {
    "read": "m.x",
    "unhooked-write": "m.x = value",
    "hooked-write": "m.x = value",
    "hooked-delete": "del m.x",
    "empty": "pass",
}
OPERATIONS: dict[str, tuple[str, ...]] = {
    "plain": ("read", "unhooked-write"),
    "workaround": ("read", "unhooked-write", "hooked-write", "hooked-delete"),
    "class": ("read", "unhooked-write", "hooked-write", "hooked-delete"),
    "native": ("read", "unhooked-write", "hooked-write", "hooked-delete"),
}


# The counted process: ``python -S -c WORKER SITE CONFIG OPERATION LOOPS BODY``.
# ``-S`` and no imports beyond ``types`` keep its start-up (which the empty
# loop cancels anyway) and so callgrind's run short.
_WORKER_HEAD = r"""
import sys, types
from itertools import repeat
site, config, operation, loops, body = sys.argv[1:]
sys.path.append(site)
"""
_WORKER_BODY = r"""
hooked = operation != "unhooked-write" and config != "plain"
if config in ("class", "native"):
    import pep726hook
    pep726hook.install(config)
module = (Workaround if config == "workaround" else types.ModuleType)("bench_target")
exec(HOOKED if hooked else UNHOOKED, module.__dict__)
if hooked and config == "class":
    pep726hook.upgrade(module)
namespace = {"repeat": repeat}
exec("def run(loops, m):\n    value = 2\n    for _ in repeat(None, loops):\n        "
     + STATEMENTS[body] + "\n", namespace)
namespace["run"](int(loops), module)
"""
WORKER = (
    f"HOOKED = {HOOKED_SOURCE!r}\nUNHOOKED = {UNHOOKED_SOURCE!r}\nSTATEMENTS = {STATEMENTS!r}\n"
    + _WORKER_HEAD
    + WORKAROUND_SOURCE
    + _WORKER_BODY
)


# What ``--quick`` counts: the cases the targets need.
QUICK_CASES = ("plain/read", "plain/unhooked-write", "workaround/hooked-write")


def store_counts(
    loops: int,
    repeat: int,
    engines: tuple[str, ...],
    quick: bool = False,
    cases: list[str] | None = None,
) -> dict[str, float]:
    """Return ``config/operation`` -> instructions per operation."""
    site = sysconfig.get_paths()["purelib"]
    empty: dict[tuple[str, bool], float] = {}

    def count(config: str, operation: str, body: str) -> float:
        argv = [sys.executable, "-S", "-c", WORKER, site, config, operation, str(loops), body]
        return statistics.median(median_count(argv, _environment(), str(HERE), repeat))

    result: dict[str, float] = {}
    for config, operations in OPERATIONS.items():
        if config in ("class", "native") and config not in engines:
            continue
        for operation in operations:
            case = f"{config}/{operation}"
            if cases is not None and case not in cases:
                continue
            if quick and case not in QUICK_CASES and config != engines[0]:
                continue
            # The empty loop runs on the same kind of module in the same
            # configuration, so start-up and set-up cancel.
            hooked = operation != "unhooked-write" and config != "plain"
            if (config, hooked) not in empty:
                empty[config, hooked] = count(config, operation, "empty")
            result[case] = (count(config, operation, operation) - empty[config, hooked]) / loops
    return result


# --- imports --------------------------------------------------------------


def import_counts(repeat: int, engines: tuple[str, ...]) -> dict[str, float]:
    """Return variant (``off`` or an engine) -> instructions of importing the modules."""
    sys.path.insert(0, str(HERE))
    import bench_import

    modules = bench_import.available_modules()
    body = "".join(f"import {name}\n" for name in modules)
    result: dict[str, float] = {}
    for variant in ("off", *engines):
        prelude = (
            "" if variant == "off" else f"import pep726hook\npep726hook.install({variant!r})\n"
        )
        argv = [sys.executable, "-s", "-c", prelude + body]
        counts = median_count(argv, _environment(), str(HERE), repeat)
        result[variant] = statistics.median(counts)
    result["modules"] = len(modules)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wheel", type=Path, help="the pep726hook wheel for this interpreter")
    parser.add_argument("--json-out", type=Path)
    parser.add_argument("--repeat", type=int, default=3, help="callgrind runs per start-up state")
    parser.add_argument("--loops", type=int, default=100_000, help="operations per store run")
    parser.add_argument("--imports", action="store_true", help="count the import benchmark too")
    parser.add_argument("--quick", action="store_true", help="one run per case, 20 000 loops")
    parser.add_argument(
        "--cases",
        type=lambda text: text.split(","),
        help="store cases to count, e.g. plain/unhooked-write,native/unhooked-write",
    )
    options = parser.parse_args(argv)
    if sys.implementation.name != "cpython":
        print("callgrind counts are for CPython only", file=sys.stderr)
        return 0
    if shutil.which("valgrind") is None:
        print("valgrind is not installed", file=sys.stderr)
        return 1
    if options.quick:
        options.repeat, options.loops = 1, 20_000
    import pep726hook

    engines = tuple(pep726hook.available_engines())
    result: dict[str, Any] = {
        "python": sys.version.split()[0],
        "engines": engines,
        "repeat": options.repeat,
        "loops": options.loops,
        "free_threaded": bool(sysconfig.get_config_var("Py_GIL_DISABLED")),
    }
    if options.wheel:
        startup = startup_counts(options.wheel.resolve(), options.repeat)
        result["startup"] = {state: statistics.median(c) for state, c in startup.items()}
        result["startup_runs"] = startup
        base = result["startup"]["base"]
        for state in STARTUP_STATES:
            value = result["startup"][state]
            print(
                f"start-up {state:16} {value / 1e6:9.3f} M instructions  / base {value / base:.4f}"
            )
    result["store"] = store_counts(options.loops, 1, engines, options.quick, options.cases)
    for case, value in result["store"].items():
        print(f"{case:28} {value:8.1f} instructions per operation")
    if options.imports:
        result["imports"] = import_counts(1, engines)
        for variant in ("off", *engines):
            value = result["imports"][variant]
            print(
                f"import {result['imports']['modules']} modules [{variant:6}] "
                f"{value / 1e6:9.1f} M instructions  / off {value / result['imports']['off']:.4f}"
            )
    if options.json_out:
        options.json_out.write_text(json.dumps(result, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

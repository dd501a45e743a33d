"""What a library's relocated PEP 562 ``__getattr__`` costs the rest of the program.

``enable(__name__, fast_getattr=True)`` in a module with a ``__getattr__``
has the native engine hold the function outside the namespace on CPython
3.11-3.14, so that the module's own reads are specialised.  The read slot
of ``ModuleType`` is then a wrapper for the whole process, and on 3.12-3.14
CPython's cheap suppressed miss (``hasattr()``, ``getattr(m, n, default)``,
the import system's probes) applies to no module any more
(docs/native-engine-getattr.md, "What a relocated __getattr__ costs").  This
measures whole programs in three states of one venv, a library imported
first by a ``sitecustomize.py`` (the method and venvs of
``bench_pyperformance.py``):

* ``hooks``: a library with a module ``__setattr__`` calls ``enable()``
  (what importing pep726hook and enabling costs; the baseline);
* ``kept``: the same library with a ``__getattr__`` as well, enabled with
  ``fast_getattr=False`` (the default on 3.12-3.14): the function stays in
  its namespace;
* ``relocated``: the same, ``fast_getattr=True``.

The programs: an import-heavy start-up (the first 150 public stdlib modules
that import, in name order; total instructions), the body of a few
pyperformance benchmarks (pyperf workers under callgrind, the body between
pyperf's two clock reads) and ``import numpy`` when it installs (binary
wheels only).

    python benchmarks/bench_getattr_tax.py [--only 3.12,3.14] [--benchmarks deepcopy,go] [--numpy]
        [--layouts 3] [--label -richards]

Results go to ``build/benchmarks/getattr-tax-<key>.json``; the table is printed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench_pyperformance as pp  # noqa: E402  (venvs, callgrind runs, pyperformance)
import run_all  # noqa: E402

STATES = ("hooks", "kept", "relocated")
DEFAULT_BENCHMARKS = ("deepcopy", "logging_simple", "float", "go", "richards")

LIBRARY = '''\
"""A library with module hooks and, but for the baseline, a PEP 562 __getattr__."""

import pep726hook

precision = 53


def __setattr__(name, value):
    globals()[name] = value
{getattr}
pep726hook.enable(__name__{choice})
'''

GETATTR = """

def __getattr__(name):
    if name == "lazy":
        return 42
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

"""

START_UP = """\
import sys
SKIP = {"antigravity", "this", "idlelib", "tkinter", "turtle", "turtledemo", "test",
        "lib2to3", "ensurepip", "venv", "pydoc_data", "xxlimited", "xxsubtype"}
imported = 0
for name in sorted(sys.stdlib_module_names):
    if name.startswith("_") or name in SKIP:
        continue
    try:
        __import__(name)
    except Exception:
        continue
    imported += 1
    if imported == 150:
        break
"""

CHECK = """\
import sys, pep726hook
state = sys.argv[1]
lib = sys.modules["getattrlib"]
relocated = "__getattr__" not in vars(lib)
wanted = {"hooks": True, "kept": False, "relocated": sys.version_info[:2] in ((3, 11), (3, 12), (3, 13), (3, 14))}[state]
if pep726hook.engine(lib) != "native" or relocated != wanted:
    sys.exit(f"state {state}: engine {pep726hook.engine(lib)}, relocated {relocated}")
"""


def state_dirs() -> dict[str, str]:
    """Write each state's PYTHONPATH directory (sitecustomize.py, getattrlib.py)."""
    dirs = {}
    for state in STATES:
        directory = os.path.join(pp.WORK, f"getattr-tax-padded-{state}")
        os.makedirs(directory, exist_ok=True)
        pp._write(os.path.join(directory, "sitecustomize.py"), pp.PADDING + "import getattrlib\n")
        library = LIBRARY.format(
            getattr="" if state == "hooks" else GETATTR,
            choice={
                "hooks": "",
                "kept": ", fast_getattr=False",
                "relocated": ", fast_getattr=True",
            }[state],
        )
        pp._write(os.path.join(directory, "getattrlib.py"), library)
        dirs[state] = directory
    return dirs


def total(interp: pp.PPInterpreter, state: str, dirs: dict[str, str], code: str, what: str) -> int:
    env = pp.environment(interp, state, dirs)
    return sum(pp._callgrind(interp, env, [interp.python, "-c", code], what, dump=False))


def pyperformance_counts(
    interp: pp.PPInterpreter,
    bench: pp.Bench,
    benchdir: str,
    dirs: dict[str, str],
    *,
    marker: bool,
    layouts: int,
) -> dict[str, dict[str, float]]:
    """Return part -> state -> instructions of *bench*, the mean over *layouts* layouts.

    A benchmark's count moves by a few per cent with the addresses of its
    hot types and names (CPython's type attribute cache), which the size of
    the library imported first shifts: the layouts average that out
    (``bench_pyperformance.py``, ``PADDING``).
    """
    parts: dict[str, dict[str, float]] = {"body": {}, "total": {}}
    for state in STATES:
        runs = [
            pp.count(interp, bench, state, benchdir, dirs, marker=marker, pad=pad)
            for pad in range(layouts)
        ]
        for part, per_state in parts.items():
            per_state[state] = sum(run[part] for run in runs) / layouts
    return parts


def run_interpreter(
    interp: pp.PPInterpreter, benches: list[pp.Bench], numpy: bool, layouts: int = 1
) -> dict[str, Any]:
    meta, benchdir = pp.setup(interp)
    dirs = state_dirs()
    for state in STATES:
        argv = [*pp.environment(interp, state, dirs), interp.python, "-c", CHECK, state]
        completed = interp.run(argv, capture=True, check=False)
        if completed.returncode != 0:
            raise RuntimeError(completed.stderr or completed.stdout)
    counts: dict[str, dict[str, float]] = {}
    print(f"== {interp.key}: start-up, 150 stdlib imports", flush=True)
    counts["start-up (150 stdlib imports)"] = {
        s: total(interp, s, dirs, START_UP, f"{interp.key}-startup-{s}") for s in STATES
    }
    if numpy:
        if not interp.probe("import numpy"):
            interp.run(
                [interp.python, "-m", "pip", "install", "-q", "--only-binary", ":all:", "numpy"],
                check=False,
            )
        if interp.probe("import numpy"):
            print(f"== {interp.key}: import numpy", flush=True)
            counts["import numpy"] = {
                s: total(interp, s, dirs, "import numpy", f"{interp.key}-numpy-{s}") for s in STATES
            }
    marker = pp.marker_works(interp)
    for bench in benches:
        print(f"== {interp.key}: {bench.name}", flush=True)
        parts = pyperformance_counts(interp, bench, benchdir, dirs, marker=marker, layouts=layouts)
        counts[f"pyperformance {bench.name} (timed loops)"] = parts["body"]
        counts[f"pyperformance {bench.name} (whole worker)"] = parts["total"]
    return {"python": meta.get("version", interp.key), "key": interp.key, "counts": counts}


def render(results: list[dict[str, Any]]) -> str:
    lines = [
        "| version | program | `kept` / `hooks` | `relocated` / `hooks` |",
        "|---|---|---|---|",
    ]
    for result in results:
        for program, per in result["counts"].items():
            kept = per["kept"] / per["hooks"] - 1
            relocated = per["relocated"] / per["hooks"] - 1
            lines.append(f"| {result['python']} | {program} | {kept:+.2%} | {relocated:+.2%} |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="comma-separated keys, e.g. 3.12,3.14")
    parser.add_argument("--benchmarks", help="comma-separated pyperformance names")
    parser.add_argument("--numpy", action="store_true", help="also import numpy (installs it)")
    parser.add_argument("--layouts", type=int, default=1, help="mean of this many layouts")
    parser.add_argument("--label", default="", help="suffix of the JSON file")
    parser.add_argument("--render", nargs="+", metavar="JSON", help="only print the table")
    options = parser.parse_args()
    if options.render:
        results = []
        for path in options.render:
            with open(path, encoding="utf-8") as file:
                results.append(json.load(file))
        print(render(results))
        return 0
    names = options.benchmarks.split(",") if options.benchmarks else DEFAULT_BENCHMARKS
    benches = [b for b in pp.BENCHES if b.name in names]
    only = options.only.split(",") if options.only else None
    results = []
    for found in run_all.interpreters(only):
        if "pypy" in found.key:
            continue
        interp = pp.PPInterpreter(found.key, found.command, found.chroot)
        result = run_interpreter(interp, benches, options.numpy, options.layouts)
        os.makedirs(run_all.RAW, exist_ok=True)
        with open(
            os.path.join(run_all.RAW, f"getattr-tax-{interp.key}{options.label}.json"),
            "w",
            encoding="utf-8",
        ) as file:
            json.dump(result, file, indent=2)
        results.append(result)
        print(render([result]), flush=True)
    print(render(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""``np.float64`` from numpy as published against numpy converted to pep726hook's declarations.

numpy 2.x's namespace holds a PEP 562 ``__getattr__`` (lazy submodules,
removed names), and CPython 3.11-3.14 never specialise reads of such a
module (https://github.com/python/cpython/issues/143469).
tests/real_libraries/convert_numpy.py declares what that ``__getattr__``
serves to pep726hook and takes it out of the namespace; this script
measures what that does to reads, side by side, in fresh processes of this
interpreter (numpy 2.x and pep726hook installed):

``numpy``              ``np.float64`` from numpy as installed (its ``__getattr__``).
``numpy without``      the same numpy with ``__getattr__`` deleted from its
                       namespace after the import: the floor, a plain module
                       with numpy's namespace.
``converted``          ``np.float64`` from a converted copy of that numpy
                       (a directory of links to the installed files, with a
                       converted ``__init__.py``), whose names are declared.
``miss os (numpy)``    ``hasattr(os, "missing")`` with numpy imported: another
                       module's miss.
``miss os (converted)`` the same with the converted numpy imported.
``miss os float_ ...`` ``hasattr(os, "float_")``, a name the converted numpy
                       declares removed, on another module.
``miss os linalg ...`` ``hasattr(os, "linalg")``, one it declares lazy.
``lazy_loader ...``    ``pkg.version`` from a package whose body calls
                       ``lazy.attach()``: as published (its ``__getattr__``
                       stays), ``without`` (deleted after the import), and
                       ``converted`` (lazy_loader patched by
                       tests/real_libraries/patches/: pep726hook's
                       ``__getattr__``, gone when the import ends).  Only
                       where lazy_loader of a patched version is installed.

Each read is one of ten in a loop's body, from a local name, after two
warm-up loops.  Times: the minimum over ``--rounds`` rounds (each case in a
process of its own, the cases interleaved) of the minimum of 15 repeats,
ns per read.  With ``--callgrind``, also instructions per read (two runs of
a fresh interpreter with two loop counts, start-up cancelled out,
``PYTHONHASHSEED=0``, ``OPENBLAS_NUM_THREADS=1``: the idle threads of
OpenBLAS spin, and callgrind counts them; ``_shared.per_iteration``).  Targets:
``converted / numpy without`` and ``lazy_loader converted / without``
<= 1.05 on 3.11-3.14 (native engine); the misses of other modules the same
with the converted numpy as with numpy.

    python benchmarks/bench_numpy_declarations.py [--rounds 5] [--callgrind] [--json out.json]

With ``--import-cost``, only what the declarations add to ``import numpy``:
callgrind's count of the converted copy against a copy of numpy as
published, made the same way (target: <= 1 %).

The engine is ``$PEP726HOOK_ENGINE``'s (``auto``: native where it can run).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests", "real_libraries"))

from _shared import per_iteration  # noqa: E402
from convert_numpy import convert  # noqa: E402

CASES = {
    # name: (numpy to import, statement read in the loop)
    "numpy": ("published", "np.float64"),
    "numpy without": ("without", "np.float64"),
    "converted": ("converted", "np.float64"),
    "miss os (numpy)": ("published", "hasattr(os, 'missing')"),
    "miss os (converted)": ("converted", "hasattr(os, 'missing')"),
    "miss os float_ (numpy)": ("published", "hasattr(os, 'float_')"),
    "miss os float_ (converted)": ("converted", "hasattr(os, 'float_')"),
    "miss os linalg (numpy)": ("published", "hasattr(os, 'linalg')"),
    "miss os linalg (converted)": ("converted", "hasattr(os, 'linalg')"),
}
# The same for a package built on lazy_loader (``__getattr__, __dir__, __all__
# = lazy.attach(...)``), reading one of its eager names.
LAZY_LOADER_CASES = {
    "lazy_loader": ("lazy_loader", "np.version"),
    "lazy_loader without": ("lazy_loader without", "np.version"),
    "lazy_loader converted": ("lazy_loader converted", "np.version"),
}
LAZY_PACKAGE = """
import lazy_loader as lazy

version = "1.0"
__getattr__, __dir__, __all__ = lazy.attach(__name__, ["sub"], {"sub": ["thing"]})
"""
LOOPS = (2_000, 12_000)
READS_PER_LOOP = 10

# Run as: python WORKER CASE LOOPS (callgrind) or python WORKER CASE time.
WORKER = r"""
import json, os, sys, time

case, loops = sys.argv[1], sys.argv[2]
kind, statement = json.loads(os.environ["BENCH_NUMPY_CASES"])[case]
if kind == "converted":
    sys.path.insert(0, os.environ["BENCH_NUMPY_CONVERTED"])
if kind.startswith("lazy_loader"):
    sys.path.insert(0, os.environ["BENCH_LAZY_PACKAGE"])
    if kind == "lazy_loader converted":
        sys.path.insert(0, os.environ["BENCH_LAZY_CONVERTED"])
    import lazybenchpkg as np
else:
    import numpy as np

if kind.endswith("without"):
    del vars(np)["__getattr__"]
# Without this, a failed conversion would measure the module's own __getattr__.
held = "__getattr__" in vars(np)
if held != (kind in ("published", "lazy_loader")):
    raise SystemExit(f"{case}: the namespace holds __getattr__: {held}")
SOURCE = '''
def run(np, os, loops):
    for _ in range(loops):
        {0}; {0}; {0}; {0}; {0}; {0}; {0}; {0}; {0}; {0}
'''.format(statement)
namespace = {}
exec(SOURCE, namespace)
run = namespace["run"]
# The first read after the import ends the import's window (under the native
# engine the module becomes an exact ModuleType again): before the loop's
# instructions specialise, so that none of them deoptimises and backs off.
np.__name__
run(np, os, 2)
run(np, os, 2)
if loops == "time":
    best = float("inf")
    for _ in range(15):
        start = time.perf_counter()
        run(np, os, 20_000)
        best = min(best, time.perf_counter() - start)
    print(best / 200_000 * 1e9)
else:
    run(np, os, int(loops))
"""


def converted_numpy(into: str, converted: bool = True) -> str:
    """Make a converted copy of the installed numpy under *into*; return the directory for sys.path.

    Links to every installed file and directory, but a converted
    ``__init__.py`` (numpy's own with *converted* False) and a
    ``__pycache__`` of its own (which links the other modules' caches), so
    that the installed numpy stays untouched.
    """
    spec = importlib.util.find_spec("numpy")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("numpy is not installed")
    installed = next(iter(spec.submodule_search_locations))
    package = os.path.join(into, "numpy")
    os.makedirs(os.path.join(package, "__pycache__"))
    for entry in os.listdir(installed):
        if entry not in ("__init__.py", "__pycache__"):
            os.symlink(os.path.join(installed, entry), os.path.join(package, entry))
    cache = os.path.join(installed, "__pycache__")
    for entry in os.listdir(cache) if os.path.isdir(cache) else ():
        if not entry.startswith("__init__."):
            os.symlink(os.path.join(cache, entry), os.path.join(package, "__pycache__", entry))
    # The wheels' shared libraries, found from the extensions' own directory.
    libs = os.path.join(os.path.dirname(installed), "numpy.libs")
    if os.path.isdir(libs):
        os.symlink(libs, os.path.join(into, "numpy.libs"))
    with open(os.path.join(installed, "__init__.py"), encoding="utf-8") as file:
        source = file.read()
    with open(os.path.join(package, "__init__.py"), "w", encoding="utf-8") as file:
        file.write(convert(source) if converted else source)
    return into


def lazy_loader_package(into: str) -> bool:
    """Write the lazy_loader package and a converted lazy_loader under *into*; False without one.

    The converted lazy_loader is a copy of the installed one with
    tests/real_libraries/patches/lazy_loader-<version>.patch applied.
    """
    spec = importlib.util.find_spec("lazy_loader")
    if spec is None or spec.origin is None:
        return False
    import lazy_loader

    patch = os.path.join(
        os.path.dirname(HERE), "tests", "real_libraries", "patches",
        f"lazy_loader-{lazy_loader.__version__}.patch",
    )  # fmt: skip
    if not os.path.isfile(patch):
        return False
    package = os.path.join(into, "package", "lazybenchpkg")
    os.makedirs(package)
    with open(os.path.join(package, "__init__.py"), "w", encoding="utf-8") as file:
        file.write(LAZY_PACKAGE)
    with open(os.path.join(package, "sub.py"), "w", encoding="utf-8") as file:
        file.write("thing = 42\n")
    converted = os.path.join(into, "converted", "lazy_loader")
    os.makedirs(converted)
    shutil.copy(spec.origin, os.path.join(converted, "__init__.py"))
    subprocess.run(
        ["patch", "-s", "-p1", "-d", os.path.dirname(converted), "-i", patch], check=True
    )
    os.environ["BENCH_LAZY_PACKAGE"] = os.path.dirname(package)
    os.environ["BENCH_LAZY_CONVERTED"] = os.path.dirname(converted)
    return True


def time_cases(worker: str, rounds: int) -> dict[str, float]:
    best = dict.fromkeys(CASES, float("inf"))
    for _ in range(rounds):
        for case in CASES:
            out = subprocess.run(
                [sys.executable, worker, case, "time"], capture_output=True, text=True, check=False
            )
            if out.returncode != 0:
                raise SystemExit(f"{case} failed:\n{out.stderr[-2000:]}")
            best[case] = min(best[case], float(out.stdout))
    return best


def ratios(values: dict[str, float]) -> dict[str, float]:
    return {
        "converted / numpy without": values["converted"] / values["numpy without"],
        "numpy / numpy without": values["numpy"] / values["numpy without"],
        "converted / numpy": values["converted"] / values["numpy"],
        "miss os: converted / numpy": values["miss os (converted)"] / values["miss os (numpy)"],
        "miss os float_: converted / numpy": values["miss os float_ (converted)"]
        / values["miss os float_ (numpy)"],
        "miss os linalg: converted / numpy": values["miss os linalg (converted)"]
        / values["miss os linalg (numpy)"],
        **(
            {
                "lazy_loader converted / without": values["lazy_loader converted"]
                / values["lazy_loader without"],
                "lazy_loader / without": values["lazy_loader"] / values["lazy_loader without"],
            }
            if "lazy_loader" in values
            else {}
        ),
    }


def import_instructions(paths: dict[str, str | None]) -> dict[str, int]:
    """Callgrind's count of ``python -c "import numpy"`` with each of *paths* as PYTHONPATH.

    ``.pyc`` files are written by a first run of each (PYTHONDONTWRITEBYTECODE
    removed), so that none of the counts pays a compile; the counts repeat exactly.
    """
    environment = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    environment["PYTHONHASHSEED"] = "0"
    found = {}
    for case, path in paths.items():
        run_environment = dict(environment)
        if path is not None:
            run_environment["PYTHONPATH"] = path
        command = [sys.executable, "-c", "import numpy"]
        subprocess.run(command, env=run_environment, check=True)
        with tempfile.TemporaryDirectory() as work:
            out = os.path.join(work, "callgrind.out")
            run = subprocess.run(
                ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *command],
                env=run_environment,
                capture_output=True,
                text=True,
                check=True,
            )
        match = re.search(r"Collected : (\d+)", run.stderr)
        if match is None:
            raise SystemExit("valgrind printed no instruction count")
        found[case] = int(match.group(1))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="timing rounds (default 5)")
    parser.add_argument("--callgrind", action="store_true", help="also count instructions")
    parser.add_argument("--json", help="also write the results to this file")
    parser.add_argument("--cases", help="comma-separated subset of the cases (ratios need theirs)")
    parser.add_argument(
        "--import-cost",
        action="store_true",
        help="only what the declarations add to `import numpy` (callgrind instructions)",
    )
    args = parser.parse_args()
    # OpenBLAS's idle threads spin: callgrind would count their instructions too.
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    import numpy

    with tempfile.TemporaryDirectory(prefix="pep726hook-numpy-") as tmp:
        os.environ["BENCH_NUMPY_CONVERTED"] = converted_numpy(os.path.join(tmp, "converted"))
        if args.import_cost:
            # The converted copy against a copy of numpy as published, made
            # the same way: a directory on PYTHONPATH ahead of the standard
            # library costs every later import of the process a look there
            # (about 2M instructions for numpy's, on CPython 3.12), which is
            # the copy's and not the declarations'.
            counts = import_instructions(
                {
                    "installed": None,
                    "copy": converted_numpy(os.path.join(tmp, "copy"), converted=False),
                    "converted": os.environ["BENCH_NUMPY_CONVERTED"],
                }
            )
            copy, converted = counts["copy"], counts["converted"]
            print(f"CPython {sys.version.split()[0]}, numpy {numpy.__version__}")
            print(f"import numpy (installed)   {counts['installed'] / 1e6:10.2f}M instructions")
            print(f"import numpy (copy)        {copy / 1e6:10.2f}M instructions")
            print(
                f"import numpy (converted)   {converted / 1e6:10.2f}M instructions "
                f"({(converted - copy) / 1e6:+.2f}M, {converted / copy - 1:+.2%} of the copy)"
            )
            return
        if lazy_loader_package(os.path.join(tmp, "lazy_loader")):
            CASES.update(LAZY_LOADER_CASES)
        if args.cases:
            chosen = args.cases.split(",")
            for case in list(CASES):
                if case not in chosen:
                    del CASES[case]
        os.environ["BENCH_NUMPY_CASES"] = json.dumps(CASES)
        worker = os.path.join(tmp, "worker.py")
        with open(worker, "w", encoding="utf-8") as file:
            file.write(WORKER)
        times = time_cases(worker, args.rounds)
        counts = (
            {case: per_iteration(WORKER, case, LOOPS, READS_PER_LOOP) for case in CASES}
            if args.callgrind
            else {}
        )
    version = sys.version.split()[0]
    engine = os.environ.get("PEP726HOOK_ENGINE", "auto")
    label = f"CPython {version}, numpy {numpy.__version__}, engine {engine}"
    print(f"{label}\n")
    print("| case | ns per read | instructions per read |")
    print("|---|---|---|")
    for case in CASES:
        count = f"{counts[case]:.1f}" if counts else ""
        print(f"| `{case}` | {times[case]:.2f} | {count} |")
    print()
    result = {"label": label, "times": times, "counts": counts, "ratios": {}}
    for name, ratio in (ratios(times) if not args.cases else {}).items():
        counted = f", instructions {ratios(counts)[name]:.3f}" if counts else ""
        print(f"{name}: time {ratio:.3f}{counted}")
        result["ratios"][name] = {
            "time": ratio,
            **({"instructions": ratios(counts)[name]} if counts else {}),
        }
    if args.json:
        with open(args.json, "w", encoding="utf-8") as file:
            json.dump(result, file, indent=1)


if __name__ == "__main__":
    main()

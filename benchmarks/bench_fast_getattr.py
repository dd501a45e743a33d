"""Reads of a module with a PEP 562 ``__getattr__``: plain, enable()d, and with the fast-getattr switch.

CPython 3.11 to 3.14 do not specialise ``LOAD_ATTR`` on a module whose
namespace holds ``__getattr__`` (https://github.com/python/cpython/issues/143469).
The cases, each read ``m.x`` from a local name, ten reads per loop:

* ``plain``: a module without ``__getattr__`` (what every other case is compared with);
* ``__getattr__``: the same module with a ``__getattr__``, pep726hook unused;
* ``enable()/E``: that module after ``pep726hook.enable(module, fast_getattr=True)`` under engine E;
* ``switch/native``: that module imported after ``pep726hook.install("native",
  fast_getattr=True)`` (what ``PEP726HOOK=1 PEP726HOOK_FAST_GETATTR=1`` does at
  start-up; the switch does nothing under the class engine);
* ``numpy`` and ``numpy switch/native``: ``np.float64`` from numpy as installed from
  the package index, plain and with the switch (skipped when numpy is not installed).

Three ways to run it::

    python benchmarks/bench_fast_getattr.py -o times.json [pyperf options]   # pyperf, this interpreter
    python benchmarks/bench_fast_getattr.py --callgrind [--json-out counts.json]
    python benchmarks/bench_fast_getattr.py --all [--only 3.12,3.14] [--quick] [--numpy]
    python benchmarks/bench_fast_getattr.py --render    # the docs section from the last --all

``--all`` does both on every interpreter ``run_all.py`` knows (its venvs and
wheels, ``.venv-bench/<key>``; ``--numpy`` installs numpy there from the
package index, binary wheels only) and writes the section "PEP 562
``__getattr__`` modules and the fast-getattr switch" of docs/benchmarks.md.
The per-read instruction counts of ``enable()`` alone, per shape of module,
are bench_module_getattr.py's subject.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import os
import sys
import tempfile
from typing import Any, Callable

HERE = os.path.dirname(os.path.abspath(__file__))
READS_PER_LOOP = 10
PLAIN_SOURCE = "x = 1\n"
GETATTR_SOURCE = """\
x = 1

def __getattr__(name):
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
"""
# The section of docs/benchmarks.md this script writes (run_all.py keeps it).
SECTION = "PEP 562 `__getattr__` modules and the fast-getattr switch"


def engines() -> list[str]:
    """The engines this interpreter has, without turning anything on."""
    import pep726hook

    return list(pep726hook.available_engines())


def has_numpy() -> bool:
    return importlib.util.find_spec("numpy") is not None


def cases() -> list[str]:
    """Every case this interpreter can run, in the order of the table."""
    names = ["plain", "__getattr__"]
    found = engines()
    names += [f"enable()/{engine}" for engine in found]
    # The switch does something under the native engine only.
    native = ["native"] if "native" in found else []
    names += [f"switch/{engine}" for engine in native]
    if has_numpy():
        names += ["numpy"] + [f"numpy switch/{engine}" for engine in native]
    return names


def write_modules(directory: str) -> None:
    for name, source in (("bench_plain", PLAIN_SOURCE), ("bench_getattr", GETATTR_SOURCE)):
        with open(os.path.join(directory, f"{name}.py"), "w", encoding="utf-8") as file:
            file.write(source)


def prepare(case: str, modules: str) -> tuple[Any, str]:
    """Set *case* up in this process; return the module and the attribute to read."""
    kind, _, engine = case.partition("/")
    sys.path.insert(0, modules)
    if kind in ("switch", "numpy switch"):
        import pep726hook

        pep726hook.install(engine, fast_getattr=True)
    if kind.startswith("numpy"):
        return importlib.import_module("numpy"), "float64"
    module = importlib.import_module("bench_plain" if kind == "plain" else "bench_getattr")
    if kind == "enable()":
        os.environ["PEP726HOOK_ENGINE"] = engine
        import pep726hook

        pep726hook.enable(module, fast_getattr=True)
    return module, "x"


def reader(attribute: str) -> Callable[[int, Any], float]:
    """A function timing *loops* x 10 reads of ``module.<attribute>`` (a local: LOAD_ATTR)."""
    # Imported here: the script's directory is on sys.path when it runs, not
    # when a test loads it from its file.
    from _shared import module_reader

    return module_reader(attribute, READS_PER_LOOP)


# -- pyperf -------------------------------------------------------------------------------


def run_pyperf() -> None:
    import pyperf

    def add_cmdline_args(cmd: list[str], args: argparse.Namespace) -> None:
        # Workers must register the same benchmarks in the same order.
        cmd.extend(["--modules", args.modules, "--rounds", str(args.rounds)])

    runner = pyperf.Runner(add_cmdline_args=add_cmdline_args)
    runner.argparser.add_argument("--modules", default="")
    runner.argparser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="register every case this many times, round-robin, as 'case#N' (as "
        "bench_module_access.py does): drift on a shared machine hits all cases alike",
    )
    args = runner.parse_args()
    if not args.modules:
        # The manager process: the workers import the modules from here.
        args.modules = tempfile.mkdtemp(prefix="pep726hook-bench-fast-getattr-")
        write_modules(args.modules)
    prepared: dict[str, tuple[Any, Callable[[int, Any], float]]] = {}

    def timed(loops: int, case: str) -> float:
        # Set up on the first call, in the worker that runs this case only:
        # an install() must not reach another case's process.
        if case not in prepared:
            module, attribute = prepare(case, args.modules)
            prepared[case] = (module, reader(attribute))
        module, read = prepared[case]
        return read(loops, module)

    for round_ in range(args.rounds):
        for case in cases():
            name = case + (f"#{round_}" if args.rounds > 1 else "")
            runner.bench_time_func(name, timed, case, inner_loops=READS_PER_LOOP)


# -- callgrind ----------------------------------------------------------------------------

WORKER = """\
import sys
sys.path.insert(0, {here!r})
import bench_fast_getattr as bench
module, attribute = bench.prepare(sys.argv[1], {modules!r})
read = bench.reader(attribute)
read(int(sys.argv[2]), module)
"""


def run_callgrind(json_out: str | None, quick: bool) -> dict[str, float]:
    sys.path.insert(0, HERE)
    from _shared import per_iteration

    loops = (2_000, 12_000) if quick else (5_000, 55_000)
    counts: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="pep726hook-bench-fast-getattr-") as modules:
        write_modules(modules)
        worker = WORKER.format(here=HERE, modules=modules)
        for case in cases():
            counts[case] = per_iteration(worker, case, loops, READS_PER_LOOP)
            print(f"{case:>22}: {counts[case]:8.1f} instructions per read", flush=True)
    if json_out:
        with open(json_out, "w", encoding="utf-8") as file:
            json.dump(counts, file, indent=2)
    return counts


# -- every interpreter, and the docs ------------------------------------------------------


def run_all(only: list[str] | None, quick: bool, numpy: bool) -> None:
    sys.path.insert(0, HERE)
    import run_all as suite

    # Results of earlier runs are kept (--only reruns some interpreters).
    results_path = os.path.join(suite.RAW, "fast-getattr.json")
    previous: dict[str, dict[str, Any]] = {}
    if os.path.exists(results_path):
        with open(results_path, encoding="utf-8") as file:
            previous = {result["key"]: result for result in json.load(file)}
    for interp in suite.interpreters(only):
        if "pypy" in interp.key:
            continue  # nothing to specialise: PyPy's JIT treats every module alike
        meta = suite.setup(interp, plotting=False)
        if numpy and not interp.probe("import numpy"):
            interp.run(
                [interp.python, "-m", "pip", "install", "-q", "--only-binary", ":all:", "numpy"],
                check=False,
            )
        script = interp.path(os.path.abspath(__file__))
        times_json = os.path.join(suite.RAW, f"fast-getattr-times-{interp.key}.json")
        counts_json = os.path.join(suite.RAW, f"fast-getattr-counts-{interp.key}.json")
        os.makedirs(suite.RAW, exist_ok=True)
        if os.path.exists(times_json):
            os.remove(times_json)
        pyperf_args = suite.PYPERF_QUICK if quick else suite.PYPERF_ARGS
        print(f"== {meta['label']}: fast getattr (pyperf)", flush=True)
        interp.run([interp.python, script, *pyperf_args, "-o", interp.path(times_json)])
        print(f"== {meta['label']}: fast getattr (callgrind)", flush=True)
        argv = [interp.python, script, "--callgrind", "--json-out", interp.path(counts_json)]
        interp.run(argv + (["--quick"] if quick else []))
        with open(counts_json, encoding="utf-8") as file:
            counts = json.load(file)
        numpy_version = interp.run(
            [interp.python, "-c", "import numpy; print(numpy.__version__)"],
            capture=True,
            check=False,
        ).stdout.strip()
        previous[interp.key] = dict(
            meta, times=suite.read_pyperf(times_json), counts=counts, numpy=numpy_version or None
        )
        results = sorted(previous.values(), key=_version_order)
        with open(results_path, "w", encoding="utf-8") as file:
            json.dump(results, file, indent=2)
        write_section(markdown(results), suite.MARKDOWN)


def render() -> None:
    """Write the docs section again from the results ``--all`` left, measuring nothing."""
    sys.path.insert(0, HERE)
    import run_all as suite

    with open(os.path.join(suite.RAW, "fast-getattr.json"), encoding="utf-8") as file:
        results = json.load(file)
    write_section(markdown(sorted(results, key=_version_order)), suite.MARKDOWN)


def _version_order(result: dict[str, Any]) -> list[int]:
    return [int(part) for part in str(result["key"]).split(".") if part.isdigit()]


def markdown(results: list[dict[str, Any]]) -> str:
    """The docs section: per interpreter, each case's time and instructions, and ratios."""
    lines = [
        f"## {SECTION}",
        "",
        "Written by `python benchmarks/bench_fast_getattr.py --all --numpy`: one read of",
        "`m.x` from a local name (ten per loop), per case, all cases of an interpreter in",
        "one run (pyperf: median time per read, each case in worker processes of its",
        "own; callgrind: instructions per read, start-up cancelled out). `x/plain` is",
        "the ratio to the plain module's read, `x/getattr` to the `__getattr__` module's",
        "untouched read (below 1: faster). numpy rows read `np.float64` from numpy",
        "installed from the package index; its ratios compare with plain `np.float64`.",
        "Times come from a shared 2-core machine under load: where the instruction",
        "counts of two cases are equal, a time ratio away from 1 is noise.",
        "",
    ]
    for result in results:
        times, counts = result["times"], result["counts"]
        numpy = f", numpy {result['numpy']}" if result.get("numpy") else ""
        lines += [f"### {result['label']} ({result['where']}{numpy})", ""]
        lines += [
            "| case | ns per read | instructions per read | x/plain (time) "
            "| x/getattr (time) | x/getattr (instructions) |",
            "|---|---|---|---|---|---|",
        ]
        for case, count in counts.items():
            seconds = times.get(case)
            numpy_case = case.startswith("numpy")
            base = "numpy" if numpy_case else "__getattr__"
            ratio_plain = "" if numpy_case or seconds is None else _ratio(seconds, times["plain"])
            ratio_getattr = "" if seconds is None else _ratio(seconds, times.get(base))
            lines.append(
                f"| `{case}` | {'' if seconds is None else f'{seconds * 1e9:.1f}'} "
                f"| {count:.1f} | {ratio_plain} | {ratio_getattr} "
                f"| {_ratio(count, counts.get(base))} |"
            )
        lines.append("")
    return "\n".join(lines)


def _ratio(value: float, base: float | None) -> str:
    return "" if not base else f"{value / base:.2f}"


def write_section(text: str, path: str) -> None:
    """Replace (or append) this script's section of the markdown file at *path*."""
    with open(path, encoding="utf-8") as file:
        page = file.read()
    heading = f"## {SECTION}\n"
    if heading in page:
        start = page.index(heading)
        following = page.find("\n## ", start + len(heading))
        end = len(page) if following < 0 else following + 1
        page = (
            page[:start] + text.rstrip("\n") + "\n" + ("\n" + page[end:] if following >= 0 else "")
        )
    else:
        page = page.rstrip("\n") + "\n\n" + text.rstrip("\n") + "\n"
    with open(path, "w", encoding="utf-8") as file:
        file.write(page)
    print(f"wrote the section {SECTION!r} of {path}")


def main() -> None:
    if {"--all", "--callgrind", "--render"} & set(sys.argv[1:]):
        parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
        parser.add_argument("--all", action="store_true")
        parser.add_argument("--callgrind", action="store_true")
        parser.add_argument("--json-out")
        parser.add_argument("--only", help="comma-separated interpreter keys (3.12,3.14)")
        parser.add_argument("--quick", action="store_true")
        parser.add_argument("--numpy", action="store_true", help="install numpy (--all)")
        parser.add_argument(
            "--render", action="store_true", help="write the docs section from the last results"
        )
        args = parser.parse_args()
        if args.render:
            render()
        elif args.all:
            run_all(args.only.split(",") if args.only else None, args.quick, args.numpy)
        else:
            run_callgrind(args.json_out, args.quick)
        return
    run_pyperf()


if __name__ == "__main__":
    main()

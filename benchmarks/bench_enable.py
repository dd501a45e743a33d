"""What ``pep726hook.enable(__name__)`` costs a library's import, per engine.

Three figures, medians:

* ``first``: the first call in a fresh process (the native engine patches the
  module type then), one timed call per child process; ``load extension`` is
  the part of it spent importing the C extension (``pep726hook._native``, also
  imported by the class engine to check that no native patch is in place),
  timed separately just before;
* ``next module``: a second module opting in, in the same children;
* ``repeated``: the call again for a module already enabled (timeit, in-process);

plus ``import pep726hook`` itself in a fresh process, which a library pays too.

    python benchmarks/bench_enable.py --processes 30
    python benchmarks/bench_enable.py --installed     # the interpreter's own pep726hook
    PEP726HOOK_ENGINE=class python benchmarks/bench_enable.py
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import timeit

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(ROOT, "src")

CHILD = r"""
import sys, time, types
start = time.perf_counter()
import pep726hook
imported = time.perf_counter()
import pep726hook._native_engine
loaded = time.perf_counter()
first, second = types.ModuleType("lib_a"), types.ModuleType("lib_b")
t0 = time.perf_counter()
pep726hook.enable(first)
t1 = time.perf_counter()
pep726hook.enable(second)
t2 = time.perf_counter()
print(imported - start, loaded - imported, t1 - t0, t2 - t1, pep726hook.engine(first))
"""


def children(
    processes: int, engine: str | None, installed: bool
) -> tuple[str, dict[str, list[float]]]:
    env = dict(os.environ) if installed else dict(os.environ, PYTHONPATH=SRC)
    env.pop("PEP726HOOK", None)
    if engine:
        env["PEP726HOOK_ENGINE"] = engine
    keys = ("import", "load extension", "first", "next module")
    samples: dict[str, list[float]] = {key: [] for key in keys}
    name = "?"
    for _ in range(processes):
        out = subprocess.run(
            [sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, check=True
        ).stdout.split()
        for key, value in zip(keys, out):
            samples[key].append(float(value))
        name = out[len(keys)]
    return name, samples


def repeated(engine: str | None, installed: bool) -> float:
    if engine:
        os.environ["PEP726HOOK_ENGINE"] = engine
    if not installed:
        sys.path.insert(0, SRC)
    import types

    import pep726hook

    module = types.ModuleType("lib_repeated")
    pep726hook.enable(module)
    timer = timeit.Timer(lambda: pep726hook.enable(module))
    number = 100_000
    runs = timer.repeat(repeat=7, number=number)
    return statistics.median(runs) / number


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=30)
    parser.add_argument("--json-out")
    parser.add_argument(
        "--installed",
        action="store_true",
        help="measure the installed pep726hook instead of src/ (built in place)",
    )
    args = parser.parse_args()
    engine = os.environ.get("PEP726HOOK_ENGINE") or None
    name, samples = children(args.processes, engine, args.installed)
    result = {
        "python": sys.version.split()[0],
        "implementation": sys.implementation.name,
        "engine": name,
        "median_us": {
            "import pep726hook": statistics.median(samples["import"]) * 1e6,
            "load extension": statistics.median(samples["load extension"]) * 1e6,
            "first": statistics.median(samples["first"]) * 1e6,
            "next module": statistics.median(samples["next module"]) * 1e6,
            "repeated": repeated(engine, args.installed) * 1e6,
        },
    }
    print(f"{result['implementation']} {result['python']}, engine {name}")
    for key, value in result["median_us"].items():
        print(f"{key:>18}: {value:9.2f} us")
    if args.json_out:
        with open(args.json_out, "w", encoding="utf-8") as file:
            json.dump(result, file, indent=2)


if __name__ == "__main__":
    main()

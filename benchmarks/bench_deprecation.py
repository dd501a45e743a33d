"""Deprecated module attributes under the native engine, against the usual ways.

Four questions, (a) to (c) each answered in callgrind instructions per read (the method
of ``bench_store_instructions.py``: each configuration runs twice in a fresh
interpreter under callgrind, with two loop counts, and the difference of the
two totals over the extra reads is the cost of one read; start-up and imports
cancel out) and, with ``--timeit``, in nanoseconds (the minimum over
interleaved repeats of a timed loop, each configuration in a process of its
own).  In (a) to (c) every deprecating module is made with ``types.ModuleType()`` and
deprecated after that, so its names move at once: it is an exact
``types.ModuleType`` whose deprecated name lives in its private builtins and
is served through the module by the C descriptor that pep726hook puts in
``types.ModuleType``'s dict.

(a) What deprecating a name costs the reads of the module's *other* names.
    ``plain``: no pep726hook, ``m.x``.  ``native-plain``: the native engine's
    patch (``enable()``, no deprecation anywhere), ``m.x``.
    ``native-table``: ``m.x`` on a module with a deprecated name.
    ``native-other``: ``m.x`` on a module without one while another module
    has one.  ``getattr-native-plain``/``-table``: ``getattr(m, "x")``, a
    read that is never specialised; ``hasattr-miss-native-plain``/``-table``:
    ``hasattr(m, "missing")``.

(b) What a read of a deprecated name costs.  ``native-deprecated``: ``m.Old``
    (the C descriptor warns).  ``pep562``: the same module with a PEP 562
    ``__getattr__`` that warns and returns the value.  ``wrapper``: the
    cryptography-style approach, an object in ``sys.modules`` whose class has
    ``__getattr__``/``__setattr__``/``__delattr__`` and holds the real module
    (written here from scratch); ``wrapper-plain`` is a read of an ordinary
    name through it, what that approach costs every read.  Target:
    ``native-deprecated`` <= ``pep562``.  The warnings filter is ``ignore``
    (``--filter default`` times the once-per-call-site steady state: the
    warning was shown once, later ones are found in the registry).

(c) What a deprecation costs *another* module's miss of the same name (case
    ``other-miss``): ``hasattr(o, "Old")`` on a module ``o`` that has no
    ``Old``.  ``miss-other-plain``: no pep726hook in the process.
    ``miss-other-deprecated``: another module deprecates ``Old``, so
    ``ModuleType``'s dict holds the descriptor, which CPython's lookup finds
    and calls before the miss (``getattr(o, "Old", None)`` takes the same
    path).  ``hasattr(o, "missing")``, a name nobody deprecates, costs what it
    costs without pep726hook (question (a)'s ``hasattr-miss`` rows).

(d) What the move costs (case ``move``, wall clock, not instructions): a
    module of 1,000 functions that all read ``Old`` deprecates it with
    ``deprecate_attribute()`` at the end of its body; the first read through
    the module after its import moves the names and gives the functions the
    private builtins.  ``walk``: the walk from the namespace proves it found
    every function; ``pass``: the module also keeps ``globals()`` in a name,
    so the proof fails and one pass over the objects the collector tracks
    finds them (``_native.rebinding_passes()`` confirms which ran).  The best
    of 15 imports each, in a process of about 30,000 extra tracked objects
    (``--objects``); the count of tracked objects is printed.

(e) What a thousand deprecated names cost (case ``thousand``, wall clock):
    1,000 ``deprecate_attribute()`` calls on one module (``one``) and on
    1,000 modules made with ``types.ModuleType()`` (``many``), each form in a
    fresh process, timed once; then, in callgrind instructions per operation
    against a process without those calls (the native engine installed by an
    ``enable()`` in both), a store on an unrelated module,
    ``hasattr(other, "missing")`` and ``getattr(other, "x")``.

The script uses the public ``pep726hook.enable()`` and
``pep726hook.deprecate_attribute()`` under the native engine.

    python benchmarks/bench_deprecation.py                   # callgrind, this interpreter
    python benchmarks/bench_deprecation.py --timeit          # nanoseconds instead
    python benchmarks/bench_deprecation.py --case other-miss [--timeit]   # (c) alone
    python benchmarks/bench_deprecation.py --case move [--objects 30000]   # (d)
    python benchmarks/bench_deprecation.py --case thousand                  # (e)
    python benchmarks/bench_deprecation.py --json out.json

Needs ``valgrind`` on PATH (not for ``--timeit``) and the package with its C
extension importable.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

CONFIGS = (
    "plain",
    "native-plain",
    "native-table",
    "native-other",
    "native-deprecated",
    "pep562",
    "wrapper",
    "wrapper-plain",
    "hasattr-miss-native-plain",
    "hasattr-miss-native-table",
    "getattr-native-plain",
    "getattr-native-table",
    "miss-other-plain",
    "miss-other-deprecated",
)
# Named subsets, each runnable alone with --case ("move" has a worker of its own).
CASES = {
    "other-miss": ("miss-other-plain", "miss-other-deprecated"),
    "move": (),
    "thousand": (),
}

MOVE_WORKER = r"""
import gc, importlib, os, sys, tempfile, time

os.environ["PEP726HOOK_ENGINE"] = "native"
import pep726hook
from pep726hook import _native

FUNCTIONS = "".join(f"def f{i}():\n    return Old\n" for i in range(1000))
ballast = [[i] for i in range(int(sys.argv[1]))]
directory = tempfile.mkdtemp()
sys.path.insert(0, directory)
for kept, label in ((False, "walk"), (True, "pass")):
    best, passes = float("inf"), set()
    for round_ in range(15):
        name = f"bench_move_{label}_{round_}"
        with open(os.path.join(directory, name + ".py"), "w") as file:
            file.write(
                "import pep726hook\nx = 1\nOld = object()\n" + FUNCTIONS
                + ("_kept = globals()\n" if kept else "")
                + "pep726hook.deprecate_attribute(__name__, 'Old', 'use x')\n"
            )
        importlib.invalidate_caches()
        module = importlib.import_module(name)
        before = _native.rebinding_passes()
        start = time.perf_counter()
        module.x  # the first read through the module moves the names
        best = min(best, time.perf_counter() - start)
        passes.add(_native.rebinding_passes() - before)
        assert type(module) is type(sys), type(module)
    print(label, best * 1e3, sorted(passes), len(gc.get_objects()))
"""


def move_times(objects: int) -> dict[str, float]:
    """Milliseconds of the move, the walk alone and the walk plus the pass (case ``move``)."""
    result = subprocess.run(
        [sys.executable, "-c", MOVE_WORKER, str(objects)],
        capture_output=True,
        text=True,
        check=True,
    )
    values = {}
    for line in result.stdout.splitlines():
        label, milliseconds, passes, tracked = line.split(" ", 3)
        values[f"move, {label} ({passes} passes, {tracked} tracked objects)"] = float(milliseconds)
    return values


SHORT, LONG = 1_000, 6_000
READS_PER_LOOP = 10

WORKER = r'''
import sys, types, warnings

config, loops, warning_filter = sys.argv[1], int(sys.argv[2]), sys.argv[3]
MESSAGE = "Old is deprecated; use New"
New = object()


class ModuleWithDeprecations(types.ModuleType):
    """The cryptography-style wrapper: every read goes through __getattr__."""

    def __init__(self, module, deprecated):
        super().__init__(module.__name__)
        self.__dict__["_module"] = module
        self.__dict__["_deprecated"] = deprecated

    def __getattr__(self, name):
        deprecated = self.__dict__["_deprecated"]
        if name in deprecated:
            value, message, category = deprecated[name]
            warnings.warn(message, category, stacklevel=2)
            return value
        return getattr(self.__dict__["_module"], name)

    def __setattr__(self, name, value):
        deprecated = self.__dict__["_deprecated"]
        if name in deprecated:
            warnings.warn(deprecated.pop(name)[1], DeprecationWarning, stacklevel=2)
        setattr(self.__dict__["_module"], name, value)

    def __delattr__(self, name):
        deprecated = self.__dict__["_deprecated"]
        if name in deprecated:
            value, message, category = deprecated.pop(name)
            warnings.warn(message, category, stacklevel=2)
            return
        delattr(self.__dict__["_module"], name)


def pep562_getattr(name):
    if name == "Old":
        warnings.warn(MESSAGE, DeprecationWarning, stacklevel=2)
        return New
    raise AttributeError(f"module 'target' has no attribute {name!r}")


def make(config):
    module = types.ModuleType("target")
    module.x = 1
    module.New = New
    table = {"Old": (New, MESSAGE, DeprecationWarning)}
    if config == "miss-other-deprecated":
        # Another module deprecates Old; the reads miss Old on this one.
        import os

        os.environ["PEP726HOOK_ENGINE"] = "native"
        import pep726hook

        deprecating = types.ModuleType("deprecating")
        deprecating.Old = New
        sys.modules["deprecating"] = deprecating
        pep726hook.deprecate_attribute(deprecating, "Old", MESSAGE)
        module.__dict__["_keep"] = deprecating
    if config.startswith("miss-other"):
        pass  # the module read has no Old: every read misses it
    elif config.startswith(("native", "hasattr-miss", "getattr")):
        import os

        module.Old = New
        os.environ["PEP726HOOK_ENGINE"] = "native"
        import pep726hook

        sys.modules["target"] = module
        pep726hook.enable(module)
        if config in (
            "native-table",
            "native-deprecated",
            "hasattr-miss-native-table",
            "getattr-native-table",
        ):
            pep726hook.deprecate_attribute(module, "Old", MESSAGE)
        elif config == "native-other":
            other = types.ModuleType("other")
            other.Old = New
            sys.modules["other"] = other
            pep726hook.deprecate_attribute(other, "Old", MESSAGE)
            module.__dict__["_keep"] = other
    elif config == "pep562":
        module.__getattr__ = pep562_getattr
    elif config.startswith("wrapper"):
        module = ModuleWithDeprecations(module, table)
    sys.modules["target"] = module
    return module


if config.startswith("hasattr-miss"):
    READ = "hasattr(m, 'missing')"
elif config.startswith("miss-other"):
    READ = "hasattr(m, 'Old')"
elif config.startswith("getattr"):
    READ = "getattr(m, 'x')"
elif config in ("native-deprecated", "pep562", "wrapper"):
    READ = "m.Old"
else:
    READ = "m.x"
SOURCE = """
def run(m, loops):
    for _ in range(loops):
        {0}; {0}; {0}; {0}; {0}; {0}; {0}; {0}; {0}; {0}
""".format(READ)
namespace = {}
exec(SOURCE, namespace)
run = namespace["run"]
warnings.simplefilter(warning_filter)
module = make(config)
run(module, 1)  # the one warning a "default" filter shows, and specialisation
if len(sys.argv) > 4:
    # --timeit: the caller reads one float, nanoseconds per read.
    import time

    best = float("inf")
    for _ in range(int(sys.argv[4])):
        start = time.perf_counter()
        run(module, loops)
        best = min(best, time.perf_counter() - start)
    print(best / (loops * 10) * 1e9)
else:
    run(module, loops)
'''


def count_instructions(script: str, args: list[str], seed: str = "0") -> int:
    """Instructions callgrind counts for ``python script *args``."""
    env = dict(os.environ, PYTHONHASHSEED=seed, PYTHONDONTWRITEBYTECODE="1")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "callgrind.out")
        result = subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                f"--callgrind-out-file={out}",
                sys.executable,
                script,
                *args,
            ],
            capture_output=True,
            text=True,
            check=True,
            env=env,
        )
    match = re.search(r"Collected\s*:\s*(\d+)", result.stderr)
    if match is None:
        raise RuntimeError(f"no instruction count from callgrind:\n{result.stderr}")
    return int(match.group(1))


THOUSAND_WORKER = r"""
import os, sys, time, types

os.environ["PEP726HOOK_ENGINE"] = "native"
import pep726hook

form, operation, loops = sys.argv[1], sys.argv[2], int(sys.argv[3])
pep726hook.enable(types.ModuleType("bench_enabled"))  # the native engine, installed
other = types.ModuleType("bench_other")
other.x = 1
kept = []
start = time.perf_counter()
if form == "one":
    module = types.ModuleType("bench_one")
    for i in range(1000):
        setattr(module, f"name{i}", i)
    kept.append(module)
    for i in range(1000):
        pep726hook.deprecate_attribute(module, f"name{i}", "going away")
elif form == "many":
    for i in range(1000):
        module = types.ModuleType(f"bench_many{i}")
        module.name = i
        kept.append(module)
        pep726hook.deprecate_attribute(module, "name", "going away")
calls = time.perf_counter() - start


def store(o, n):
    for _ in range(n):
        o.y = 1


def miss(o, n):
    for _ in range(n):
        hasattr(o, "missing")


def hit(o, n):
    for _ in range(n):
        getattr(o, "x")


{"store": store, "hasattr miss": miss, "getattr hit": hit}[operation](other, loops)
print(calls * 1e3)
"""
THOUSAND_OPERATIONS = ("store", "hasattr miss", "getattr hit")


def thousand_times() -> dict[str, float]:
    """Case ``thousand``: the calls' milliseconds, and each operation's instructions against none."""
    values = {}
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "thousand.py")
        with open(script, "w", encoding="utf-8") as file:
            file.write(THOUSAND_WORKER)
        for form in ("one", "many"):
            timed_calls = subprocess.run(
                [sys.executable, script, form, "store", "1"],
                capture_output=True,
                text=True,
                check=True,
            )
            values[f"{form}: 1,000 deprecate_attribute() calls, ms"] = float(timed_calls.stdout)
        for operation in THOUSAND_OPERATIONS:
            per = {}
            for form in ("none", "one", "many"):
                short = count_instructions(script, [form, operation, str(SHORT)])
                long = count_instructions(script, [form, operation, str(LONG)])
                per[form] = (long - short) / (LONG - SHORT)
            values[f"{operation} on another module, instructions"] = per["none"]
            for form in ("one", "many"):
                values[f"{form}: {operation}, after / before"] = per[form] / per["none"]
    return values


def per_read(script: str, config: str, warning_filter: str) -> float:
    """Return the instructions one read costs under *config*."""
    short = count_instructions(script, [config, str(SHORT), warning_filter])
    long = count_instructions(script, [config, str(LONG), warning_filter])
    return (long - short) / ((LONG - SHORT) * READS_PER_LOOP)


def timed(
    script: str, warning_filter: str, rounds: int, configs: tuple[str, ...] = CONFIGS
) -> dict[str, float]:
    """Nanoseconds per read: the best of *rounds* interleaved runs of each config."""
    best = dict.fromkeys(configs, float("inf"))
    for _ in range(rounds):
        for config in configs:
            result = subprocess.run(
                [sys.executable, script, config, "20000", warning_filter, "5"],
                capture_output=True,
                text=True,
                check=True,
            )
            best[config] = min(best[config], float(result.stdout))
    return best


# (label, numerator, denominator): printed when both were measured.
RATIOS = (
    ("table / native plain (a)", "native-table", "native-plain"),
    ("table / no pep726hook (a)", "native-table", "plain"),
    ("other module while a table exists / native plain", "native-other", "native-plain"),
    ("deprecated / PEP 562 __getattr__ (b)", "native-deprecated", "pep562"),
    ("deprecated / wrapper object (b)", "native-deprecated", "wrapper"),
    ("wrapper object, ordinary name / plain", "wrapper-plain", "plain"),
    (
        "hasattr() miss, table / native plain",
        "hasattr-miss-native-table",
        "hasattr-miss-native-plain",
    ),
    ("getattr() hit, table / native plain", "getattr-native-table", "getattr-native-plain"),
    (
        "another module's miss of a deprecated name / plain miss (c)",
        "miss-other-deprecated",
        "miss-other-plain",
    ),
)


def ratios(values: dict[str, float]) -> dict[str, float]:
    return {
        label: values[numerator] / values[denominator]
        for label, numerator, denominator in RATIOS
        if numerator in values and denominator in values
    }


def run_timed_case(case: str, objects: int, json_path: str | None) -> None:
    """Cases ``move`` and ``thousand``: wall-clock figures, each printed as it is."""
    version = sys.version.split()[0]
    if case == "move":
        values = {f"{k}, ms": v for k, v in move_times(objects).items()}
    else:
        values = thousand_times()
    for label, value in values.items():
        print(f"{version} {label}: {value:.3f}")
    if json_path:
        with open(json_path, "w", encoding="utf-8") as file:
            json.dump({"python": version, "values": values}, file, indent=2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="also write the results to this file")
    parser.add_argument("--filter", default="ignore", help="warnings filter action")
    parser.add_argument("--timeit", action="store_true", help="nanoseconds, not instructions")
    parser.add_argument("--rounds", type=int, default=5, help="--timeit: interleaved rounds")
    parser.add_argument("--configs", help="comma-separated subset of the configurations")
    parser.add_argument("--case", choices=sorted(CASES), help="one named subset alone")
    parser.add_argument("--objects", type=int, default=30_000, help="--case move: ballast")
    args = parser.parse_args()
    if args.case in ("move", "thousand"):
        run_timed_case(args.case, args.objects, args.json)
        return
    if args.case:
        chosen = CASES[args.case]
    elif args.configs:
        chosen = tuple(args.configs.split(","))
    else:
        chosen = CONFIGS
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "worker.py")
        with open(script, "w", encoding="utf-8") as file:
            file.write(WORKER)
        if args.timeit:
            values = timed(script, args.filter, args.rounds, chosen)
            unit = "ns per read"
        else:
            values = {config: per_read(script, config, args.filter) for config in chosen}
            unit = "instructions per read"
    version = sys.version.split()[0]
    for config, value in values.items():
        print(f"{version} {config:21} {value:8.1f} {unit}")
    result = ratios(values)
    for name, ratio in result.items():
        print(f"{version} {name}: {ratio:.3f}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as file:
            json.dump(
                {
                    "python": version,
                    "filter": args.filter,
                    "unit": unit,
                    "values": values,
                    "ratios": result,
                },
                file,
                indent=2,
            )


if __name__ == "__main__":
    main()

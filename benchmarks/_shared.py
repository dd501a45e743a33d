"""What several benchmarks share: callgrind instruction counts and the modules they store into.

Imported by the ``bench_*.py`` scripts of this directory (Python puts a
script's directory first on ``sys.path``); not a benchmark itself.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from typing import Any, Callable, Mapping

# A module with hooks, defined at top level and reading its own globals as a
# real module's would; and one without.
HOOKED_SOURCE = """
_store = {}
x = 1
def __setattr__(name, value):
    _store[name] = value
def __delattr__(name):
    _store.pop(name, None)
"""
UNHOOKED_SOURCE = "x = 1\n"
# PEP 726's "Existing Options": the hand-written workaround the engines are
# compared with (bench_module_access.py has the same class as code).
WORKAROUND_SOURCE = """
class Workaround(types.ModuleType):
    def __setattr__(self, name, value):
        hook = self.__dict__.get("__setattr__")
        if hook is not None:
            hook(name, value)
            return
        super().__setattr__(name, value)

    def __delattr__(self, name):
        hook = self.__dict__.get("__delattr__")
        if hook is not None:
            hook(name)
            return
        super().__delattr__(name)
"""


def callgrind(argv: list[str], env: Mapping[str, str], cwd: str | None = None) -> int:
    """Return the number of instructions *argv* executes, counted by callgrind."""
    with tempfile.TemporaryDirectory(prefix="pep726hook-cg-") as tmp:
        out = os.path.join(tmp, "callgrind.out")
        completed = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *argv],
            env=env,
            cwd=cwd,
            capture_output=True,
            text=True,
            check=False,
        )
        if completed.returncode != 0:
            raise RuntimeError(f"{argv} under callgrind failed:\n{completed.stderr[-2000:]}")
        with open(out, encoding="utf-8") as file:
            for line in file:
                if line.startswith(("summary:", "totals:")):
                    return int(line.split()[1])
    raise RuntimeError("callgrind wrote no totals")


def per_iteration(
    worker: str, config: str, loops: tuple[int, int], per_loop: int, seed: str = "0"
) -> float:
    """Instructions of one operation of ``python WORKER CONFIG LOOPS``, start-up cancelled out.

    *worker* (the source of a script) runs in a fresh interpreter under
    callgrind twice, with the two loop counts of *loops*; each loop iteration
    does *per_loop* operations.  The difference of the two totals divided by
    the extra operations is the cost of one.  Both runs use the same
    ``PYTHONHASHSEED`` (*seed*): a dict's probe sequence, and so the count,
    depends on it.  Neither writes bytecode caches, which only the first
    would otherwise pay for.
    """
    env = dict(os.environ, PYTHONHASHSEED=seed, PYTHONDONTWRITEBYTECODE="1")
    short, long = loops
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "worker.py")
        with open(script, "w", encoding="utf-8") as file:
            file.write(worker)
        counts = [callgrind([sys.executable, script, config, str(n)], env) for n in loops]
    return (counts[1] - counts[0]) / ((long - short) * per_loop)


def module_reader(attribute: str, reads_per_loop: int) -> Callable[[int, Any], float]:
    """A function timing *loops* x *reads_per_loop* reads of ``module.<attribute>``.

    The module is a local of the function, so each read is the LOAD_ATTR of a
    module object that the specialiser sees, as in a library's caller.
    """
    return module_statement_reader(f"module.{attribute}", reads_per_loop)


def module_miss_reader(name: str, reads_per_loop: int) -> Callable[[int, Any], float]:
    """A function timing *loops* x *reads_per_loop* calls of ``hasattr(module, name)``.

    For a *name* the module lacks, each call is a miss whose ``AttributeError``
    CPython suppresses (or, before 3.12 and through a Python ``__getattr__``,
    makes and then clears).
    """
    return module_statement_reader(f"hasattr(module, {name!r})", reads_per_loop)


def module_statement_reader(statement: str, per_loop: int) -> Callable[[int, Any], float]:
    """A function ``read(loops, module)`` timing *loops* x *per_loop* runs of *statement*.

    The statement is written out *per_loop* times in the loop's body, so that
    the loop's own instructions are shared among them.
    """
    import time

    body = "".join(f"        {statement}\n" for _ in range(per_loop))
    source = (
        "def read(loops, module):\n"
        "    start = perf_counter()\n"
        "    for _ in range(loops):\n"
        f"{body}"
        "    return perf_counter() - start\n"
    )
    namespace: dict[str, Any] = {"perf_counter": time.perf_counter}
    exec(source, namespace)
    read: Callable[[int, Any], float] = namespace["read"]
    return read


def per_iteration_each(
    worker: str,
    config: str,
    loops: list[tuple[int, int]],
    per_loop: int,
    seed: str = "0",
) -> list[float]:
    """Instructions of one operation of each of several loops that one worker runs in turn.

    ``python WORKER CONFIG N1,N2,...`` runs its loops with those counts.  A
    first run gives every loop its short count; then one run per loop gives
    that loop its long count: the difference of that run's total and the
    first one's, divided by the extra operations, is that loop's cost.  One
    fresh interpreter per loop plus one, instead of two per loop as
    :func:`per_iteration` would take, with start-up and set-up cancelled out
    the same way.
    """
    env = dict(os.environ, PYTHONHASHSEED=seed, PYTHONDONTWRITEBYTECODE="1")
    shorts = [short for short, _ in loops]
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "worker.py")
        with open(script, "w", encoding="utf-8") as file:
            file.write(worker)

        def run(counts: list[int]) -> int:
            return callgrind([sys.executable, script, config, ",".join(map(str, counts))], env)

        base = run(shorts)
        results = []
        for index, (short, long) in enumerate(loops):
            counts = list(shorts)
            counts[index] = long
            results.append((run(counts) - base) / ((long - short) * per_loop))
    return results

"""Module attribute access with and without PEP 726 hooks, side by side (pyperf).

Configurations, each measured in its own pyperf worker processes:

* ``plain``: no pep726hook at all, a module without hooks;
* ``workaround``: the hand-written option from PEP 726's "Existing Options":
  a ``ModuleType`` subclass whose ``__setattr__``/``__delattr__`` look the hook
  up in the module's ``__dict__`` and call it;
* ``class`` and ``native``: pep726hook installed with that engine;
* ``native-alt``: the native engine with the slot design it no longer uses
  (``slot_tp_setattro`` in ``ModuleType``'s slot), for the design comparison
  in ``docs/native-engine.md``;
* ``library-hack``: an mpmath-style library guarding its settings with its own
  ``ModuleType`` subclass (``__setattr__`` refuses ``dps``, stores the rest);
* ``library-enable``: the same library written as a PEP 726 hook and opted in
  with ``pep726hook.enable()`` (``auto``: native where available), no
  process-wide hook; ``library-enable-class`` the same with the class engine
  (``PEP726HOOK_ENGINE=class``), where native is the default.  Their
  ``hooked-write`` is a store of a name the guard lets through.

Operations: ``read`` (``m.x``), ``hooked-write`` (``m.x = v`` calling the
module's ``__setattr__``), ``unhooked-write`` (``m.x = v`` on a module that
defines no hook) and ``hooked-delete`` (``del m.x`` calling ``__delattr__``).
Each timing loop runs the operation 10 times per iteration; pyperf reports the
time of one operation.

    python benchmarks/bench_module_access.py --fast -o access.json
    python benchmarks/bench_module_access.py -p 1 -n 3 --rounds 4 -o access.json
    python benchmarks/bench_module_access.py --configs library-hack,library-enable -o lib.json
"""

from __future__ import annotations

import importlib.util
import os
import sys
import time
import types
from typing import Any, Callable

import pyperf
from _shared import HOOKED_SOURCE, UNHOOKED_SOURCE

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if importlib.util.find_spec("pep726hook") is None:  # run_all.py installs it in a venv
    sys.path.insert(0, os.path.join(ROOT, "src"))

INNER = 10
ModuleType = types.ModuleType

# The mpmath case: a guard against ``mp.dps = 50``, other names stored as usual.
LIBRARY_HOOK_SOURCE = """
x = 1
_GUARDED = frozenset({"dps", "prec"})
def __setattr__(name, value):
    if name in _GUARDED:
        raise AttributeError(f"set {__name__}.mp.{name} instead")
    globals()[name] = value
"""
LIBRARY_HACK_SOURCE = "x = 1\n"


class Workaround(ModuleType):
    """PEP 726's "Existing Options", written correctly (with ``self``)."""

    def __setattr__(self, name: str, value: Any) -> None:
        hook = self.__dict__.get("__setattr__")
        if hook is not None:
            hook(name, value)
            return
        super().__setattr__(name, value)

    def __delattr__(self, name: str) -> None:
        hook = self.__dict__.get("__delattr__")
        if hook is not None:
            hook(name)
            return
        super().__delattr__(name)


class LibraryHack(ModuleType):
    """The library's own guard class, as libraries ship it without PEP 726."""

    _GUARDED = frozenset({"dps", "prec"})

    def __setattr__(self, name: str, value: Any) -> None:
        if name in self._GUARDED:
            raise AttributeError(f"set {self.__name__}.mp.{name} instead")
        super().__setattr__(name, value)


def _native_available() -> bool:
    if sys.implementation.name != "cpython":
        return False
    import pep726hook

    return "native" in pep726hook.available_engines()


def configurations() -> list[str]:
    """Return the configurations this interpreter can run."""
    configs = ["plain", "workaround", "class"]
    if _native_available():
        configs += ["native", "native-alt"]
    configs += ["library-hack", "library-enable"]
    if _native_available():
        configs.append("library-enable-class")
    return configs


OPERATIONS: dict[str, tuple[str, ...]] = {
    "plain": ("read", "unhooked-write"),
    "workaround": ("read", "hooked-write", "unhooked-write", "hooked-delete"),
    "class": ("read", "hooked-write", "unhooked-write", "hooked-delete"),
    "native": ("read", "hooked-write", "unhooked-write", "hooked-delete"),
    "native-alt": ("hooked-write", "unhooked-write"),
    "library-hack": ("read", "hooked-write"),
    "library-enable": ("read", "hooked-write"),
    "library-enable-class": ("read", "hooked-write"),
}


def _module(cls: type, source: str) -> Any:
    module = cls("bench_target")
    exec(source, module.__dict__)
    return module


_prepared: dict[str, tuple[Any, Any]] = {}


def prepare(config: str) -> tuple[Any, Any]:
    """Install *config* in this worker and return (hooked module, unhooked module)."""
    if config in _prepared:
        return _prepared[config]
    hooked: Any | None
    if config == "plain":
        hooked, unhooked = None, _module(ModuleType, UNHOOKED_SOURCE)
    elif config == "workaround":
        hooked = _module(Workaround, HOOKED_SOURCE)
        unhooked = _module(Workaround, UNHOOKED_SOURCE)
    elif config == "library-hack":
        hooked, unhooked = _module(LibraryHack, LIBRARY_HACK_SOURCE), None
    elif config.startswith("library-enable"):
        import pep726hook

        if config == "library-enable-class":
            os.environ["PEP726HOOK_ENGINE"] = "class"
        hooked = pep726hook.enable(_module(ModuleType, LIBRARY_HOOK_SOURCE))
        unhooked = None
    else:
        import pep726hook

        if config == "native-alt":
            from pep726hook import _native

            _native.install(direct=not _native.DIRECT_SLOT_IS_SAFE)
        else:
            pep726hook.install(config)
        hooked = _module(ModuleType, HOOKED_SOURCE)
        unhooked = _module(ModuleType, UNHOOKED_SOURCE)
        if config == "class":
            pep726hook.upgrade(hooked)
    _prepared[config] = (hooked, unhooked)
    return hooked, unhooked


def _timer(statement: str) -> Callable[[int, Any], float]:
    body = "\n".join(f"        {statement}" for _ in range(INNER))
    source = (
        "def run(loops, m, perf_counter):\n"
        "    value = 2\n"
        "    start = perf_counter()\n"
        "    for _ in range(loops):\n"
        f"{body}\n"
        "    return perf_counter() - start\n"
    )
    namespace: dict[str, Any] = {}
    exec(source, namespace)
    run = namespace["run"]
    return lambda loops, module: run(loops, module, time.perf_counter)


_STATEMENTS = {
    "read": "m.x",
    "hooked-write": "m.x = value",
    "unhooked-write": "m.x = value",
    "hooked-delete": "del m.x",
}
_TIMERS = {op: _timer(statement) for op, statement in _STATEMENTS.items()}


def bench(loops: int, config: str, operation: str) -> float:
    """Time *loops* x 10 runs of *operation* under *config*."""
    hooked, unhooked = prepare(config)
    module = unhooked if operation == "unhooked-write" or hooked is None else hooked
    return _TIMERS[operation](loops, module)


def _forward_rounds(cmd: list[str], args: Any) -> None:
    # Workers must register the same benchmarks in the same order.
    cmd.extend(["--rounds", str(args.rounds)])
    if args.configs:
        cmd.extend(["--configs", args.configs])


def main() -> None:
    runner = pyperf.Runner(add_cmdline_args=_forward_rounds)
    runner.argparser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="register every case this many times, round-robin, as 'case#N' (merge them "
        "when reading the results): spreads each case over the whole run so that drift "
        "on a shared machine hits all cases alike",
    )
    runner.argparser.add_argument(
        "--configs",
        default="",
        help="comma-separated configurations to run (default: all this interpreter has)",
    )
    args = runner.parse_args()
    rounds = args.rounds
    chosen = [c for c in configurations() if not args.configs or c in args.configs.split(",")]
    runner.metadata["description"] = "module attribute access under PEP 726 hooks"
    for round_ in range(rounds):
        for config in chosen:
            for operation in OPERATIONS[config]:
                name = f"{config}/{operation}" + (f"#{round_}" if rounds > 1 else "")
                runner.bench_time_func(name, bench, config, operation, inner_loops=INNER)


if __name__ == "__main__":
    main()

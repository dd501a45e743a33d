"""Instructions per slot-wrapper call, plain and with the native engine's patch.

On CPython 3.8-3.12 the native engine replaces the ``tp_call`` of
``wrapper_descriptor`` and ``method-wrapper`` (the call guard that keeps
``object.__setattr__(module, ...)`` working), so every call of a slot
wrapper in the process passes through it: ``object.__init__(self)``,
``super().__init__()`` where that resolves to ``object``, ``int.__add__(a,
b)``, ``object.__setattr__(obj, ...)``.  This counts, with callgrind, what
one such call costs in three states: ``plain`` (no pep726hook), ``optin``
(the patch a library's ``enable()`` installs, process-wide dispatch off, one
module opted in) and ``wide`` (the process-wide hook, ``install()``).  As in
``bench_store_instructions.py`` each state runs twice in a fresh interpreter
with two loop counts and the difference is divided by the extra calls.

    python benchmarks/bench_slot_call_instructions.py            # this interpreter
    python benchmarks/bench_slot_call_instructions.py --json out.json

Needs ``valgrind`` on PATH and the package (with its C extension) importable.
On 3.13 and later there is no call guard and the states should not differ.
"""

from __future__ import annotations

import argparse
import json
import sys

from _shared import per_iteration

STATES = ("plain", "optin", "wide")
WORKLOADS = ("object-init", "int-add", "super-init", "object-setattr")
SHORT, LONG = 2_000, 12_000
CALLS_PER_LOOP = 10

WORKER = """
import sys, types
config, loops = sys.argv[1], int(sys.argv[2])
state, workload = config.split(":")
if state != "plain":
    from pep726hook import _native
    _native.install(process_wide=state == "wide")
    if state == "optin":
        _native.opt_in(types.ModuleType("library"))

class Base:
    def __init__(self):
        super().__init__()

class Plain:
    pass

o = Plain()
b = Base()
init = object.__init__
add = int.__add__
setattr_ = object.__setattr__

def object_init(loops):
    for _ in range(loops):
        init(o); init(o); init(o); init(o); init(o)
        init(o); init(o); init(o); init(o); init(o)

def int_add(loops):
    for _ in range(loops):
        add(1, 2); add(1, 2); add(1, 2); add(1, 2); add(1, 2)
        add(1, 2); add(1, 2); add(1, 2); add(1, 2); add(1, 2)

def super_init(loops):
    # Base.__init__ runs super().__init__(), a call of object's slot wrapper.
    f = Base.__init__
    for _ in range(loops):
        f(b); f(b); f(b); f(b); f(b)
        f(b); f(b); f(b); f(b); f(b)

def object_setattr(loops):
    for _ in range(loops):
        setattr_(o, "x", 1); setattr_(o, "x", 1); setattr_(o, "x", 1)
        setattr_(o, "x", 1); setattr_(o, "x", 1); setattr_(o, "x", 1)
        setattr_(o, "x", 1); setattr_(o, "x", 1); setattr_(o, "x", 1)
        setattr_(o, "x", 1)

{"object-init": object_init, "int-add": int_add, "super-init": super_init,
 "object-setattr": object_setattr}[workload](loops)
"""


def per_call(state: str, workload: str, seed: str = "0") -> float:
    """Return the instructions one call of *workload* costs in *state*."""
    return per_iteration(WORKER, f"{state}:{workload}", (SHORT, LONG), CALLS_PER_LOOP, seed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="also write the results to this file")
    parser.add_argument("--workload", action="append", choices=WORKLOADS)
    args = parser.parse_args()
    version = sys.version.split()[0]
    results: dict[str, dict[str, float]] = {}
    for workload in args.workload or WORKLOADS:
        counts = {state: per_call(state, workload) for state in STATES}
        results[workload] = counts
        print(
            f"{version} {workload:15} plain {counts['plain']:7.1f}"
            f"  optin {counts['optin']:7.1f} ({counts['optin'] / counts['plain']:.3f})"
            f"  wide {counts['wide']:7.1f} ({counts['wide'] / counts['plain']:.3f})",
            flush=True,
        )
    if args.json:
        with open(args.json, "w", encoding="utf-8") as file:
            json.dump({"python": version, "instructions": results}, file, indent=2)


if __name__ == "__main__":
    main()

"""Reads of modules with a PEP 562 ``__getattr__``, before and after ``enable()``.

On CPython 3.11-3.14 the specialiser refuses ``LOAD_ATTR`` on a module whose
namespace holds ``__getattr__`` (https://github.com/python/cpython/issues/143469),
so every read of such a module costs the read slot.  The native engine moves an
opted-in module's function out of the namespace (docs/native-engine-getattr.md,
"Modules with a PEP 562 __getattr__").  Callgrind instructions per read (the
method of ``bench_store_instructions.py``, ``_shared.per_iteration``: two runs
of a fresh interpreter with two loop counts, start-up cancelled out,
``PYTHONHASHSEED=0``):

``plain``            ``m.x`` on a module without ``__getattr__``, no pep726hook.
``pep562``           ``m.x`` on a module with ``__getattr__``, no pep726hook.
``enabled``          the same module after ``pep726hook.enable(m,
                     fast_getattr=True)`` (native engine where it can run,
                     ``$PEP726HOOK_ENGINE`` else).
Each module has a ``ModuleSpec``, as an imported module has.

``miss-plain``       ``hasattr(m, "missing")`` on a module without
                     ``__getattr__``, no pep726hook: CPython's cheapest miss.
``miss-other``       the same while another module with a ``__getattr__`` is
                     enabled with ``fast_getattr=True`` (ModuleType's read
                     slot is wrapped on 3.11-3.14).
``miss-other-kept``  the same with ``fast_getattr=False`` (the default on
                     3.12-3.14): the other module's function stays in place.
``miss-pep562``      ``hasattr(m, "missing")`` on the PEP 562 module, no
                     pep726hook (its ``__getattr__`` raises AttributeError).
``miss-enabled``     the same on the opted-in PEP 562 module.

Targets: ``enabled / plain`` <= 1.05 on 3.11-3.14 (native engine);
``miss-enabled / miss-pep562`` <= 1.0; ``miss-other / miss-plain`` is what a
miss on every other module pays while the read slot is wrapped (see the doc).

    python benchmarks/bench_module_getattr.py              # callgrind, this interpreter
    python benchmarks/bench_module_getattr.py --json out.json
    PEP726HOOK_ENGINE=class python benchmarks/bench_module_getattr.py

Needs ``valgrind`` on PATH and the package importable.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _shared import per_iteration

CONFIGS = (
    "plain",
    "pep562",
    "enabled",
    "miss-plain",
    "miss-other",
    "miss-other-kept",
    "miss-pep562",
    "miss-enabled",
)
LOOPS = (1_000, 6_000)
READS_PER_LOOP = 10

WORKER = r'''
import sys, types

config, loops = sys.argv[1], int(sys.argv[2])


def __getattr__(name):
    raise AttributeError(f"module 'target' has no attribute {name!r}")


def make(config):
    # An imported module's spec: the miss path of ModuleType's own slot asks
    # it whether the module is still initialising.
    from importlib.machinery import ModuleSpec

    module = types.ModuleType("target")
    module.__spec__ = ModuleSpec("target", None)
    module.__spec__._initializing = False
    module.x = 1
    sys.modules["target"] = module
    if config in ("pep562", "enabled", "miss-pep562", "miss-enabled"):
        module.__getattr__ = __getattr__
    if config in ("enabled", "miss-enabled"):
        import pep726hook

        pep726hook.enable(module, fast_getattr=True)
    elif config in ("miss-other", "miss-other-kept"):
        import pep726hook

        other = types.ModuleType("other")
        other.__getattr__ = __getattr__
        sys.modules["other"] = other
        pep726hook.enable(other, fast_getattr=config == "miss-other")
    return module


READ = "hasattr(m, 'missing')" if config.startswith("miss") else "m.x"
SOURCE = """
def run(m, loops):
    for _ in range(loops):
        {0}; {0}; {0}; {0}; {0}; {0}; {0}; {0}; {0}; {0}
""".format(READ)
namespace = {}
exec(SOURCE, namespace)
run = namespace["run"]
module = make(config)
run(module, 2)  # specialisation
run(module, loops)
'''


def ratios(values: dict[str, float]) -> dict[str, float]:
    return {
        "pep562 / plain": values["pep562"] / values["plain"],
        "enabled / plain": values["enabled"] / values["plain"],
        "miss-other / miss-plain": values["miss-other"] / values["miss-plain"],
        "miss-other-kept / miss-plain": values["miss-other-kept"] / values["miss-plain"],
        "miss-enabled / miss-pep562": values["miss-enabled"] / values["miss-pep562"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="also write the results to this file")
    parser.add_argument("--configs", help="comma-separated subset (ratios need all)")
    args = parser.parse_args()
    chosen = args.configs.split(",") if args.configs else CONFIGS
    values = {config: per_iteration(WORKER, config, LOOPS, READS_PER_LOOP) for config in chosen}
    version = sys.version.split()[0]
    engine = os.environ.get("PEP726HOOK_ENGINE", "auto")
    for config, value in values.items():
        print(f"{version} {engine} {config:14} {value:8.1f} instructions per read")
    result = ratios(values) if set(values) == set(CONFIGS) else {}
    for name, ratio in result.items():
        print(f"{version} {engine} {name}: {ratio:.3f}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as file:
            json.dump(
                {"python": version, "engine": engine, "values": values, "ratios": result},
                file,
                indent=2,
            )


if __name__ == "__main__":
    main()

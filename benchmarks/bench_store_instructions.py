"""Instructions per module store under the native engine, counted by callgrind.

The store cases of ``bench_module_access.py`` differ by a few nanoseconds,
which pyperf cannot resolve on a shared, loaded machine; valgrind's callgrind
counts the instructions instead.  Each configuration runs twice in a fresh
interpreter under callgrind, with two loop counts; the difference of the two
totals divided by the extra stores is the cost of one store, start-up and
import cancelled out (``_shared.per_iteration``).  Both runs use the same
``PYTHONHASHSEED`` (0 unless ``--hash-seed`` says otherwise): the probe
sequence of the hook key's miss in the module dict depends on it, and so does
the count.

Configurations: ``plain`` (no pep726hook, a module without hooks),
``native`` (the native engine installed, a module without hooks),
``plain-read`` and ``native-read`` (the same, the module's own code having
read one of its globals often enough to be specialised, as most modules'
code does: on 3.11 that gives the namespace's keys the version the native
engine's hookless cache goes by),
``workaround-hook`` (PEP 726's "Existing Options" ``ModuleType`` subclass,
a module with a hook), ``native-hook`` (native engine, same hook), and what a
library's ``enable()`` leaves behind, the patch without process-wide
dispatch: ``optin-other`` (a module without hooks, not opted in),
``optin-other-hook`` (a module with a hook, not opted in: its hook is found
and not called) and ``optin-hook`` (the hooked module, opted in).

    python benchmarks/bench_store_instructions.py            # this interpreter
    python benchmarks/bench_store_instructions.py --json out.json

Needs ``valgrind`` on PATH and the package (with its C extension) importable.
"""

from __future__ import annotations

import argparse
import json
import sys

from _shared import WORKAROUND_SOURCE, per_iteration

CONFIGS = (
    "plain",
    "native",
    "plain-read",
    "native-read",
    "workaround-hook",
    "native-hook",
    "optin-other",
    "optin-other-hook",
    "optin-hook",
)
SHORT, LONG = 2_000, 12_000
STORES_PER_LOOP = 10

_WORKER_HEAD = """
import sys, types
config, loops = sys.argv[1], int(sys.argv[2])
HOOKED = "_store = {}\\ndef __setattr__(name, value):\\n    _store[name] = value\\n"
"""
_WORKER_BODY = """
if config.startswith("native"):
    import pep726hook
    pep726hook.install("native")
module = (Workaround if config.startswith("workaround") else types.ModuleType)("target")
exec(HOOKED if config.endswith("hook") else "x = 1\\n", module.__dict__)
if config.endswith("-read"):
    # The module's own code reads its globals, as most modules' does: on
    # 3.11 the specialised read gives the namespace's keys a version.
    exec("def _read():\\n    return x\\n", module.__dict__)
    for _ in range(200):
        module._read()
if config.startswith("optin"):
    from pep726hook import _native
    _native.install(process_wide=False)
    _native.opt_in(module if config == "optin-hook" else types.ModuleType("library"))

def run(m, loops):
    value = 2
    for _ in range(loops):
        m.x = value; m.x = value; m.x = value; m.x = value; m.x = value
        m.x = value; m.x = value; m.x = value; m.x = value; m.x = value

run(module, loops)
"""
WORKER = _WORKER_HEAD + WORKAROUND_SOURCE + _WORKER_BODY


def per_store(config: str, seed: str = "0") -> float:
    """Return the instructions one ``m.x = v`` costs under *config*."""
    return per_iteration(WORKER, config, (SHORT, LONG), STORES_PER_LOOP, seed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="also write the results to this file")
    parser.add_argument("--hash-seed", default="0", help="PYTHONHASHSEED of both runs")
    args = parser.parse_args()
    counts = {config: per_store(config, args.hash_seed) for config in CONFIGS}
    ratios = {
        "hookless store, native / plain": counts["native"] / counts["plain"],
        "hookless store, namespace its code reads, native / plain": counts["native-read"]
        / counts["plain-read"],
        "hooked store, native / workaround": counts["native-hook"] / counts["workaround-hook"],
        "hookless store, opt-in only / plain": counts["optin-other"] / counts["plain"],
        "hooked store not opted in, opt-in only / plain": counts["optin-other-hook"]
        / counts["plain"],
        "hooked store opted in / workaround": counts["optin-hook"] / counts["workaround-hook"],
    }
    version = sys.version.split()[0]
    for config, count in counts.items():
        print(f"{version} {config:16} {count:8.1f} instructions per store")
    for name, ratio in ratios.items():
        print(f"{version} {name}: {ratio:.2f}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as file:
            json.dump({"python": version, "instructions": counts, "ratios": ratios}, file, indent=2)


if __name__ == "__main__":
    main()

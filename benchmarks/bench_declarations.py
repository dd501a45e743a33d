"""Declared lazy and removed names under the native engine: what they cost everyone else.

In callgrind instructions per operation (the method of
``bench_store_instructions.py``: each configuration runs twice in a fresh
interpreter under callgrind, with two loop counts; the difference of the
two totals over the extra operations is the cost of one, start-up and
imports cancelled out).  The declaring module, ``decl``, declares a lazy
name (``lazy``) and a removed one (``gone``) with
``pep726hook.lazy_attribute()``/``removed_attribute()``, and ``dep``
deprecates ``Old`` with ``deprecate_attribute()``; ``other`` is a plain
module that has none of those names.

(a) A warm read of another name: ``read-plain`` (``m.x`` on a plain module,
    no pep726hook), ``read-declaring`` (``decl.x``).  Target: <= 1.05.
(b) A miss of an undeclared name: ``miss-plain`` (``hasattr(m,
    "missing")``, no pep726hook), ``miss-declaring`` (``hasattr(decl,
    "missing")``).  Target: as plain.
(c) Another module's miss of a declared or deprecated name:
    ``other-miss-undeclared`` (``hasattr(other, "missing")`` with the
    declarations made: the baseline), ``other-miss-removed``
    (``hasattr(other, "gone")``), ``other-miss-lazy`` (``hasattr(other,
    "lazy")``), ``other-miss-deprecated`` (``hasattr(other, "Old")``), and
    the same with ``getattr(other, NAME, None)``.  Target: <= 1.5x the
    baseline.

    python benchmarks/bench_declarations.py               # callgrind, this interpreter
    python benchmarks/bench_declarations.py --json out.json

Needs ``valgrind`` on PATH and the package with its C extension importable.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _shared import per_iteration

PER_LOOP = 20
LOOPS = (2_000, 12_000)

# (configuration, the statement, whether pep726hook declares names)
CONFIGS = (
    ("read-plain", "m.x", False),
    ("read-declaring", "m.x", True),
    ("miss-plain", "hasattr(m, 'missing')", False),
    ("miss-declaring", "hasattr(m, 'missing')", True),
    ("other-miss-undeclared", "hasattr(o, 'missing')", True),
    ("other-miss-removed", "hasattr(o, 'gone')", True),
    ("other-miss-lazy", "hasattr(o, 'lazy')", True),
    ("other-miss-deprecated", "hasattr(o, 'Old')", True),
    ("other-getattr-undeclared", "getattr(o, 'missing', None)", True),
    ("other-getattr-removed", "getattr(o, 'gone', None)", True),
    ("other-getattr-deprecated", "getattr(o, 'Old', None)", True),
)

WORKER = """
import sys, types
config, loops = sys.argv[1], int(sys.argv[2])
statement, declares = {configs}[config]
m = types.ModuleType("decl")
m.x = 1
o = types.ModuleType("other")
sys.modules["decl"] = m
if declares:
    import pep726hook
    dep = types.ModuleType("dep")
    dep.Old = 1
    sys.modules["dep"] = dep
    pep726hook.deprecate_attribute(dep, "Old", "Old is deprecated")
    if hasattr(pep726hook, "lazy_attribute"):  # (a release before them: the deprecation alone)
        pep726hook.lazy_attribute(m, "lazy", factory=object)
        pep726hook.removed_attribute(m, "gone", "gone was removed")
    assert type(m) is types.ModuleType, type(m)
body = "".join("        " + statement + "\\n" for _ in range({per_loop}))
source = "def run(loops, m, o):\\n    for _ in range(loops):\\n" + body
namespace = {{}}
exec(source, namespace)
namespace["run"](loops, m, o)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="write the figures to this file")
    parser.add_argument("--only", nargs="*", help="these configurations only")
    args = parser.parse_args()
    table = {name: (statement, declares) for name, statement, declares in CONFIGS}
    worker = WORKER.format(configs=repr(table), per_loop=PER_LOOP)
    results: dict[str, float] = {}
    for name, _statement, _declares in CONFIGS:
        if args.only and name not in args.only:
            continue
        results[name] = per_iteration(worker, name, LOOPS, PER_LOOP)
        print(f"{name:28} {results[name]:8.1f} instructions", flush=True)
    ratios = {
        "read-declaring / read-plain": ("read-declaring", "read-plain"),
        "miss-declaring / miss-plain": ("miss-declaring", "miss-plain"),
        "other-miss-removed / other-miss-undeclared": (
            "other-miss-removed",
            "other-miss-undeclared",
        ),
        "other-miss-lazy / other-miss-undeclared": ("other-miss-lazy", "other-miss-undeclared"),
        "other-miss-deprecated / other-miss-undeclared": (
            "other-miss-deprecated",
            "other-miss-undeclared",
        ),
        "other-getattr-removed / other-getattr-undeclared": (
            "other-getattr-removed",
            "other-getattr-undeclared",
        ),
        "other-getattr-deprecated / other-getattr-undeclared": (
            "other-getattr-deprecated",
            "other-getattr-undeclared",
        ),
    }
    found = {}
    for label, (top, bottom) in ratios.items():
        if top in results and bottom in results:
            found[label] = results[top] / results[bottom]
            print(f"{label:52} {found[label]:.3f}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as file:
            json.dump(
                {"python": sys.version.split()[0], "instructions": results, "ratios": found},
                file,
                indent=2,
            )


if __name__ == "__main__":
    main()

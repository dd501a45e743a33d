"""What the native engine's module traverse costs the cyclic collector (callgrind).

Once some module deprecates a name, the native engine's ``ModuleType``
``tp_traverse`` also visits each deprecating module's record, so that a module
referring to itself is freed once dropped (``docs/native-engine.md``, "The
module's lifetime").  Every module of the process is traversed by each full
collection, so each pays one look-up in the table of deprecating modules.

This imports about 50 standard library modules, deprecates one name of one
module, runs ``gc.collect()`` *N* times under callgrind, and prints the
instructions per collection spent in the collector (inclusive) and added by
the engine's traverse (its own instructions, the inlined table look-up
included; CPython's module traverse, which it calls, runs either way).  Needs valgrind and a CPython with
the native engine::

    python benchmarks/bench_gc_traverse.py [--collections 50]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile

WORKER = r"""
import gc, importlib, sys, types
for name in ("json email.message http.client xml.dom.minidom argparse logging decimal "
             "fractions csv sqlite3 unittest asyncio typing dataclasses pathlib tarfile "
             "zipfile urllib.request html.parser difflib statistics inspect pickle shelve "
             "configparser textwrap string uuid hashlib hmac secrets random heapq bisect "
             "calendar datetime locale gettext shutil tempfile glob fnmatch pprint timeit "
             "trace tokenize ast dis").split():
    importlib.import_module(name)
import pep726hook
module = types.ModuleType("deprecating")
module.Old = 1
sys.modules["deprecating"] = module
pep726hook.deprecate_attribute(module, "Old", "Old is deprecated")
for _ in range(int(sys.argv[1])):
    gc.collect()
print(len(sys.modules))
"""


def counts(annotated: str, function: str) -> list[int]:
    """The instruction counts callgrind_annotate gives *function*, one per source file."""
    found = []
    for line in annotated.splitlines():
        match = re.match(r"\s*([\d,]+)\s+\(.*?\)\s+\S*:" + re.escape(function) + r"\s", line)
        if match:
            found.append(int(match.group(1).replace(",", "")))
    return found


def annotate(out: str, *options: str) -> str:
    command = ["callgrind_annotate", "--threshold=100", *options, out]
    return subprocess.run(command, capture_output=True, text=True, check=True).stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--collections", type=int, default=50)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        worker = os.path.join(work, "worker.py")
        with open(worker, "w") as file:
            file.write(WORKER)
        out = os.path.join(work, "callgrind.out")
        run = subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                f"--callgrind-out-file={out}",
                sys.executable,
                worker,
                str(options.collections),
            ],
            capture_output=True,
            text=True,
            check=True,
        )
        modules = run.stdout.strip().splitlines()[-1]
        collector = max(counts(annotate(out, "--inclusive=yes"), "gc_collect_main"), default=0)
        # Its own instructions: the function and what was inlined into it.
        traverse = sum(counts(annotate(out), "traverse_deprecating"))
    if not collector or not traverse:
        print(
            "callgrind_annotate named no collector or no traverse_deprecating: is the native "
            "engine built with symbols?",
            file=sys.stderr,
        )
        return 1
    per = options.collections
    print(f"{sys.version.split()[0]}, {modules} modules, {per} full collections")
    print(f"collector      {collector / per:12,.0f} instructions per collection")
    print(
        f"module records {traverse / per:12,.0f} instructions per collection "
        f"({traverse / collector:.2%} of the collector)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The native engine's move on Twisted's deprecating modules, against their import.

Run with a Python that has Twisted 26.10.0, its deprecation helper converted
by ``tests/real_libraries/patches/twisted-26.10.0.patch``, Twisted's optional
needs for the modules below (pyOpenSSL, service_identity, cryptography,
bcrypt) and pep726hook installed::

    python benchmarks/bench_twisted_move.py [--repeat N]

It imports a realistic set of Twisted modules that includes every module
whose body deprecates a name, then reads one deprecated name through each
(the read that moves a module's names once its import has ended), and
reports, for the native engine:

- each rebinding of functions made before a module's first deprecation
  call (``rebind_builtins``): for each module it served, the objects walked
  from its namespace and whether the walk proved that it found every
  function made there (if not, why not); whether the pass over every object
  the garbage collector tracks ran, and the tracked objects then; the
  functions rebound;
- callgrind instructions of the whole import (the same script without the
  imports subtracted) and of the rebinding (``rebind_builtins``, inclusive:
  the walks and the passes; the walks alone, ``walk_namespace``), and of the
  same import with the rebinding replaced by a no-op, side by side;
- ``time.perf_counter`` medians over fresh processes of the import, of the
  rebindings and of the whole moves (``_move``, the rebinding included).
"""

from __future__ import annotations

import argparse
import gc
import importlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from typing import Any

IMPORTS = [
    # What an application typically imports.
    "twisted.internet.reactor",
    "twisted.internet.defer",
    "twisted.web.server",
    "twisted.cred.credentials",
    "twisted.python.deprecate",
    # Every module that deprecates names in its body (the converted
    # helper calls pep726hook.deprecate_attribute()).
    "twisted.python",
    "twisted.python.compat",
    "twisted.python.util",
    "twisted.python.win32",
    "twisted.internet.ssl",
    "twisted.web.http",
    "twisted.web.client",
    "twisted.spread.jelly",
    "twisted.conch.checkers",
    "twisted.conch.insults.helper",
    "twisted.conch.insults.text",
    "twisted.words.protocols.jabber.xmpp_stringprep",
]
# One deprecated name of each deprecating module, read through it.
READS = {
    "twisted.python": "url",
    "twisted.python.compat": "FileType",
    "twisted.python.util": "OrderedDict",
    "twisted.python.win32": "FakeWindowsError",
    "twisted.internet.ssl": "ProtocolNegotiationSupport",
    "twisted.cred.credentials": "UsernameHashedPassword",
    "twisted.web.http": "HTTPClient",
    "twisted.web.client": "WebClientContextFactory",
    "twisted.spread.jelly": "instance_atom",
    "twisted.conch.checkers": "SSHPublicKeyDatabase",
    "twisted.conch.insults.helper": "CharacterAttribute",
    "twisted.conch.insults.text": "flatten",
    "twisted.words.protocols.jabber.xmpp_stringprep": "crippled",
}


def worker(mode: str, batched: bool) -> dict[str, Any]:
    """Import the set under the native engine in this process; what *mode* asks is recorded.

    *batched*: no module moves before the last import has ended, then all do,
    sharing one pass (what moving once the outermost import ends would give
    an application that imports them all from one module).

    ``plain``: nothing wrapped (callgrind's count); ``none``: no imports (the
    start-up to subtract); ``noop``: the rebinding replaced by a no-op;
    ``time``: the rebindings and moves timed; ``inspect``: each rebinding's
    modules, walks and pass, and which modules deprecated names.
    """
    from pep726hook._deprecations import _deprecating

    record: dict[str, Any] = {
        "rebindings": [],
        "moves": [],
        "pass_seconds": 0.0,
        "move_seconds": 0.0,
    }
    _instrument(mode, record)
    if mode == "none":
        return record
    # The conversion of a module's markers moves its names once its import has ended.
    move_if_ended = _deprecating.move_if_ended
    if batched:
        _deprecating.move_if_ended = lambda module: None
    started = time.perf_counter()
    for name in IMPORTS:
        importlib.import_module(name)
    if batched:
        _deprecating.move_if_ended = move_if_ended
        for name in READS:
            move_if_ended(sys.modules[name])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, attribute in READS.items():
            getattr(sys.modules[name], attribute)
    record["import_seconds"] = time.perf_counter() - started
    if mode == "inspect":
        record["tracked_at_end"] = len(gc.get_objects())
        record["deprecating"] = sorted(set(record["deprecating"]))
    return record


def _instrument(mode: str, record: dict[str, Any]) -> None:
    """Wrap what *mode* measures; the wrappers write into *record*."""
    import pep726hook
    import pep726hook._native as native
    from pep726hook._deprecations import _classes, _entries, _moved

    rebind = native.rebind_builtins
    move = _moved._move
    if mode == "noop":
        native.rebind_builtins = lambda modules, privates, interpreter, needed: (
            0,
            False,
            [(0, None)] * len(modules),
        )
    elif mode == "time":

        def timed_rebind(*args: Any) -> Any:
            started = time.perf_counter()
            try:
                return rebind(*args)
            finally:
                record["pass_seconds"] += time.perf_counter() - started

        def timed_move(module: Any, names: Any = None) -> None:
            started = time.perf_counter()
            try:
                move(module, names)
            finally:
                record["move_seconds"] += time.perf_counter() - started

        native.rebind_builtins = timed_rebind
        _moved._move = timed_move
    elif mode == "inspect":
        deprecate = pep726hook.deprecate_attribute
        deprecating: list[str] = []
        record["deprecating"] = deprecating

        def noted_deprecate(module: Any, name: str, *args: Any, **kwargs: Any) -> Any:
            # Not module.__name__: a read through the module would be counted.
            deprecating.append(_entries.namespace(module)["__name__"])
            return deprecate(module, name, *args, **kwargs)

        def inspected_rebind(modules: Any, privates: Any, interpreter: Any, needed: int) -> Any:
            tracked = len(gc.get_objects())
            rebound, pass_ran, outcomes = result = rebind(modules, privates, interpreter, needed)
            # Not module.__name__: a read through a waiting module moves it.
            names = [_entries.namespace(module)["__name__"] for module in modules]
            record["rebindings"].append(
                {
                    "moving": names[0] if needed else None,
                    "walks": [[name, *outcome] for name, outcome in zip(names, outcomes)],
                    "pass_ran": bool(pass_ran),
                    "tracked": tracked,
                    "rebound": rebound,
                }
            )
            return result

        def noted_move(module: Any, names: Any = None) -> None:
            record["moves"].append(_entries.namespace(module)["__name__"])
            move(module, names)

        def counted_read(module: Any) -> None:
            # A read through a module whose names wait for their move.
            record["waiting_reads"] = record.get("waiting_reads", 0) + 1
            convert(module)

        # What the pending-markers class's reads call first.
        convert = _classes._convert_pending_markers
        pep726hook.deprecate_attribute = noted_deprecate
        native.rebind_builtins = inspected_rebind
        _moved._move = noted_move
        _classes._convert_pending_markers = counted_read


def _environment() -> dict[str, str]:
    env = dict(os.environ, PEP726HOOK_ENGINE="native", PYTHONHASHSEED="0")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _run(mode: str, batched: bool = False, prefix: list[str] | None = None) -> dict[str, Any]:
    argv = [*(prefix or []), sys.executable, __file__, "--worker", mode]
    if batched:
        argv.append("--batched")
    completed = subprocess.run(argv, env=_environment(), capture_output=True, text=True, check=True)
    return dict(json.loads(completed.stdout.strip().splitlines()[-1]))


def callgrind_counts(mode: str, batched: bool = False) -> tuple[int, int, int]:
    """Instructions of a *mode* worker, inside ``rebind_builtins`` and ``walk_namespace``."""
    with tempfile.TemporaryDirectory(prefix="pep726hook-cg-") as tmp:
        out = os.path.join(tmp, "callgrind.out")
        _run(mode, batched, ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"])
        annotated = subprocess.run(
            ["callgrind_annotate", "--inclusive=yes", "--threshold=100", out],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    total = rebinding = walks = 0
    for line in annotated.splitlines():
        fields = line.split()
        if not fields or not fields[0][0].isdigit():
            continue
        count = int(fields[0].replace(",", ""))
        if "PROGRAM TOTALS" in line:
            total = count
        elif ":rebind_builtins " in line:  # the C function, not its Python wrapper
            rebinding = max(rebinding, count)
        elif ":walk_namespace " in line:
            walks = max(walks, count)
    return total, rebinding, walks


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", choices=["plain", "none", "noop", "time", "inspect"])
    parser.add_argument("--batched", action="store_true", help="one pass after the last import")
    parser.add_argument("--repeat", type=int, default=11, help="fresh processes per timed mode")
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, args.batched)))
        return 0
    import twisted

    print(f"Python {sys.version.split()[0]}, Twisted {twisted.__version__}, native engine")
    start_up, _, _ = callgrind_counts("none")
    timed: dict[bool, list[dict[str, Any]]] = {False: [], True: []}
    for _ in range(args.repeat):  # the two ways alternate: side by side under one load
        for batched, runs in timed.items():
            runs.append(_run("time", batched))
    for batched in (False, True):
        print("batched: one pass after the last import" if batched else "as imported")
        # The first run also writes every .pyc before anything is counted.
        inspected = _run("inspect", batched)
        if not batched:
            print(
                f"  deprecating modules ({len(inspected['deprecating'])}): {inspected['deprecating']}"
            )
        rebindings = inspected["rebindings"]
        passes = [found for found in rebindings if found["pass_ran"]]
        print(
            f"  moves: {len(inspected['moves'])}; rebindings: {len(rebindings)};"
            f" passes: {len(passes)};"
            f" reads through modules waiting to move: {inspected.get('waiting_reads', 0)}"
        )
        for number, found in enumerate(rebindings, 1):
            ran = (
                f"pass over {found['tracked']} tracked objects" if found["pass_ran"] else "no pass"
            )
            print(
                f"    rebinding {number} (moving {found['moving']}): {ran},"
                f" {found['rebound']} functions rebound"
            )
            for name, walked, not_proved in found["walks"]:
                print(f"      {name}: {walked} objects walked; {not_proved or 'proved'}")
        walked = sum(walk[1] for found in rebindings for walk in found["walks"])
        visited = sum(found["tracked"] for found in passes)
        print(
            f"  objects walked in all: {walked}; visited by passes: {visited};"
            f" tracked at the end: {inspected['tracked_at_end']}"
        )
        total, rebinding, walks = callgrind_counts("plain", batched)
        without, _, _ = callgrind_counts("noop", batched)
        imported = total - start_up
        print(
            f"  callgrind: import {imported:,} instructions; rebinding {rebinding:,}"
            f" (walks {walks:,})"
        )
        print(f"    rebinding / import: {rebinding / imported:.3%}")
        print(
            f"    import with the rebinding a no-op: {without - start_up:,};"
            f" difference {(total - without) / imported:.3%} of the import"
        )
        runs = timed[batched]
        imports = statistics.median(run["import_seconds"] for run in runs)
        rebinds = statistics.median(run["pass_seconds"] for run in runs)
        moves = statistics.median(run["move_seconds"] for run in runs)
        pass_share = statistics.median(run["pass_seconds"] / run["import_seconds"] for run in runs)
        move_share = statistics.median(run["move_seconds"] / run["import_seconds"] for run in runs)
        print(f"  perf_counter, median of {args.repeat} fresh processes:")
        print(
            f"    import {imports * 1e3:.1f} ms; rebindings {rebinds * 1e3:.3f} ms;"
            f" moves {moves * 1e3:.2f} ms"
        )
        print(f"    rebindings / import {pass_share:.3%}; moves / import {move_share:.2%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

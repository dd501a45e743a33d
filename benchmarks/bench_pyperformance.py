"""Whole-program cost of pep726hook on pyperformance's pure-Python benchmarks.

Code nobody here wrote, in three states of the same venv:

* ``off``: pep726hook installed (its ``.pth`` line runs), nothing turned on;
* ``lib``: a library that called ``pep726hook.enable(__name__)`` is imported at
  start-up.  The library (``optlib.py``, a module ``__setattr__`` hook and the
  ``enable`` call) is imported by a ``sitecustomize.py`` on ``PYTHONPATH``,
  that is before the benchmark script and pyperf are imported, as a library
  the program imports first would be.  Every state has a ``sitecustomize.py``
  on a ``PYTHONPATH`` of the same length (empty in the other two states), so
  the mechanism itself costs the same everywhere and only the library differs;
* ``on``: ``PEP726HOOK=1`` (the process-wide hook, default engine).

Each benchmark is pyperformance's own ``run_benchmark.py`` (from the
``pyperformance`` package installed into a venv per interpreter), run as one
pyperf worker with fixed loops (``--worker --worker-task T --loops N -n 1
-w 0``, ``PYTHONHASHSEED=0``, a fixed small environment) under valgrind's
callgrind with ``--dump-before=time_perf_counter``: pyperf reads the clock
exactly twice around the timed loops, so callgrind writes three parts, and
the middle one is the instruction count of the benchmark body alone (a
benchmark that reads the clock inside its loops gives more parts: the body
is everything between the first and the last read).  The
rest (start-up, imports, the benchmark's set-up, pyperf's metadata) is
reported separately as "fixed".  Instruction counts of one binary in one
environment repeat to far better than the 1 % the targets talk about, so one
run per benchmark and state is enough, whatever the load on the machine.

With ``--wall ROUNDS`` the same workers also run natively, interleaved
(each round runs every benchmark in every state, the order of the states
rotating), ``-n 3 -w 1`` each; medians of pyperf's values are reported.
On a shared machine these drift by ±20 %: shown, not judged.

Targets (per CPython 3.8, 3.11, 3.12, 3.13, 3.14): geometric mean of the
body ratios to ``off`` <= 1.01 and no benchmark above 1.03.

    python benchmarks/bench_pyperformance.py [--quick] [--only 3.12,3.14] [--wall 3]
    python benchmarks/bench_pyperformance.py --render build/benchmarks/pyperformance-*.json

CPython only (callgrind counts of PyPy's JIT say little).  Runtime: about
5 minutes of one idle core per interpreter with ``--quick`` (9 benchmarks,
27 callgrind runs; 25-37 minutes on the shared 2-core machine at a load
average of 12-16), about 15 minutes without (18 benchmarks; ``pprint`` is a
third of it), plus a few minutes for a new venv.
Raw results go to ``build/benchmarks/pyperformance-<key>[-<label>].json``.
"""

from __future__ import annotations

import argparse
import glob
import json
import math
import os
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run_all  # noqa: E402  (the interpreters, venvs and wheel of the other benchmarks)

ROOT = run_all.ROOT
RAW = run_all.RAW
WORK = os.path.join(RAW, "pyperformance")
STATES = ("off", "lib", "dep", "on")
STATE_TITLES = {
    "off": "nothing on",
    "lib": "library called enable()",
    "dep": "library called deprecate_attribute() once",
    "on": "PEP726HOOK=1",
}
# The marker function: CPython's C implementation of time.perf_counter.
MARKER = "time_perf_counter"

OPTLIB = '''\
"""A library that gives its own module PEP 726 hooks, as mpmath would."""

import pep726hook

precision = 53


def __setattr__(name, value):
    if name == "precision" and not isinstance(value, int):
        raise TypeError("precision must be an int")
    globals()[name] = value


pep726hook.enable(__name__)
'''

DEPLIB = '''\
"""A library that deprecates one of its names, as Twisted would."""

import pep726hook


class NewName:
    pass


OldName = NewName

pep726hook.deprecate_attribute(__name__, "OldName", "OldName is deprecated; use NewName")
'''


# Every state's sitecustomize first creates LAYOUT_PAD x 50 classes (each
# looked up once, so each takes a type version tag) and interned names: with
# --layouts K every state runs at K different layouts.  CPython's type
# attribute cache is indexed by the type's version tag and the address of the
# name, so a benchmark whose hot (type, name) pairs happen to collide runs a
# few per cent more instructions at one layout than at another, whatever is
# turned on; more layouts average that lottery out.
PADDING = """\
import os as _os, sys as _sys
_pads = [type("Pad%d" % _i, (), {}) for _i in range(int(_os.environ.get("LAYOUT_PAD", "0")) * 50)]
_names = [_sys.intern("pad_%d" % _i) for _i in range(len(_pads))]
for _pad in _pads:
    getattr(_pad, "x", None)
"""


@dataclass(frozen=True)
class Bench:
    """One pyperformance benchmark run as one pyperf worker task."""

    name: str
    directory: str  # bm_<directory> under pyperformance/data-files/benchmarks
    loops: int  # outer loops: the body is ~0.1-1.5 G instructions on 3.12
    task: int = 0  # --worker-task: which of the script's bench_*func calls
    args: tuple[str, ...] = ()
    quick: bool = False
    why: str = ""
    # Reads the clock around every copy (120 times a loop): one callgrind
    # dump per read would be thousands of files, so counted by difference.
    inner_clock: bool = False


BENCHES = (
    Bench("richards", "richards", 1, quick=True, why="method calls, attribute stores"),
    Bench("richards_super", "richards_super", 1, quick=True, why="super().__init__() chains"),
    Bench("deltablue", "deltablue", 5, quick=True, why="class hierarchy, super().__init__()"),
    Bench("deepcopy", "deepcopy", 10, quick=True, why="__deepcopy__, slots", inner_clock=True),
    Bench("logging_simple", "logging", 50, args=("simple",), quick=True, why="stdlib classes"),
    Bench("pickle_pure_python", "pickle", 10, args=("--pure-python", "pickle"), quick=True),
    Bench("json_dumps", "json_dumps", 4, quick=True, why="pure-Python encoder paths"),
    Bench("hexiom", "hexiom", 4, quick=True),
    Bench("typing_runtime_protocols", "typing_runtime_protocols", 40, quick=True),
    Bench("float", "float", 1, why="__init__ of many small objects"),
    Bench("nbody", "nbody", 1),
    Bench("chaos", "chaos", 1),
    Bench("go", "go", 1),
    Bench("spectral_norm", "spectral_norm", 1),
    Bench("unpack_sequence", "unpack_sequence", 2000),
    Bench("nqueens", "nqueens", 1),
    Bench("raytrace", "raytrace", 1),
    # pprint: one loop is ~10 G instructions (its list has 100 000 items).
    Bench("pprint_safe_repr", "pprint", 1, task=0, why="repr of containers; ~10 G, slow"),
)


class PPInterpreter(run_all.Interpreter):
    """An interpreter with its own venv for pyperformance (``.venv-pp/<key>``)."""

    @property
    def venv(self) -> str:
        return os.path.join(ROOT, ".venv-pp", self.key)


def setup(interp: PPInterpreter) -> tuple[dict[str, Any], str]:
    """Create the venv with the wheel, pyperf and pyperformance; return (meta, benchmarks dir)."""
    meta = run_all.setup(interp, plotting=False)
    if not interp.probe("import pyperformance"):
        print(f"== {interp.key}: pip install pyperformance", flush=True)
        interp.run([interp.python, "-m", "pip", "install", "-q", "pyperformance", "pyperf"])
    code = (
        "import os, pyperformance, pyperf; print(pyperformance.__version__, pyperf.__version__,"
        " os.path.join(os.path.dirname(pyperformance.__file__), 'data-files', 'benchmarks'))"
    )
    out = interp.run([interp.python, "-c", code], capture=True).stdout.split()
    meta["pyperformance"], meta["pyperf"] = out[0], out[1]
    return meta, out[2]  # as the interpreter sees it


def _write(path: str, text: str) -> None:
    # Only when changed: a new mtime would make the next run recompile the
    # file, and charge that to whichever state runs first.
    if os.path.exists(path):
        with open(path, encoding="utf-8") as file:
            if file.read() == text:
                return
    with open(path, "w", encoding="utf-8") as file:
        file.write(text)


def state_dirs() -> dict[str, str]:
    """Write the PYTHONPATH directory of each state; return state -> host path."""
    dirs = {
        "off": os.path.join(WORK, "state-a"),
        "lib": os.path.join(WORK, "state-b"),
        "dep": os.path.join(WORK, "state-c"),
        "on": os.path.join(WORK, "state-a"),
    }
    imports = {"lib": "import optlib\n", "dep": "import deplib\n"}
    for state, directory in dirs.items():
        os.makedirs(directory, exist_ok=True)
        text = PADDING + imports.get(state, "# nothing imported here\n")
        _write(os.path.join(directory, "sitecustomize.py"), text)
    _write(os.path.join(dirs["lib"], "optlib.py"), OPTLIB)
    _write(os.path.join(dirs["dep"], "deplib.py"), DEPLIB)
    return dirs


def environment(interp: PPInterpreter, state: str, dirs: dict[str, str], pad: int = 0) -> list[str]:
    """Return ``env -i`` and the fixed, small environment of *state* at layout *pad*."""
    env = [
        "env",
        "-i",
        "PATH=/usr/local/bin:/usr/bin:/bin",
        "HOME=/root",
        "LANG=C.UTF-8",
        "PYTHONHASHSEED=0",
        f"PYTHONPATH={interp.path(dirs[state])}",
        f"LAYOUT_PAD={pad}",
    ]
    if state == "on":
        env.append("PEP726HOOK=1")
    return env


CHECK = """\
import sys, pep726hook
state = sys.argv[1]
lib = sys.modules.get({"dep": "deplib"}.get(state, "optlib"))
engine = "native" if "native" in pep726hook.available_engines() else "class"
wanted = {
    "off": (False, None),
    "lib": (False, engine),
    "dep": (False, engine),
    "on": (True, None),
}[state]
got = (pep726hook.is_installed(), lib and pep726hook.engine(lib))
if state == "on":
    got = (got[0], None)
if got != wanted:
    sys.exit(f"state {state}: installed, engine(optlib) = {got}, wanted {wanted}")
"""


def check_states(interp: PPInterpreter, dirs: dict[str, str]) -> None:
    """Fail unless each state really is what it claims (and write the .pyc files)."""
    for state in STATES:
        argv = [*environment(interp, state, dirs), interp.python, "-c", CHECK, state]
        completed = interp.run(argv, capture=True, check=False)
        if completed.returncode != 0:
            raise RuntimeError(completed.stderr or completed.stdout)


def worker_argv(bench: Bench, benchdir: str, loops: int, values: int, warmups: int) -> list[str]:
    script = f"{benchdir}/bm_{bench.directory}/run_benchmark.py"
    return [
        script,
        "--worker",
        "--worker-task",
        str(bench.task),
        "--loops",
        str(loops),
        "-n",
        str(values),
        "-w",
        str(warmups),
        *bench.args,
    ]


def _totals(path: str) -> int:
    with open(path, encoding="utf-8") as file:
        for line in file:
            if line.startswith(("summary:", "totals:")):
                return int(line.split()[1])
    raise RuntimeError(f"no totals in {path}")


def _callgrind(
    interp: PPInterpreter, env: list[str], argv: list[str], what: str, dump: bool = True
) -> list[int]:
    """Run *argv* under callgrind; return the instructions of each part between markers."""
    os.makedirs(WORK, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="cg-", dir=WORK) as tmp:
        out = os.path.join(tmp, "cg")
        command = [
            *env,
            "valgrind",
            "--tool=callgrind",
            # Kept parts name their functions themselves, for callgrind_annotate.
            *(["--compress-strings=no"] if _KEEP[0] else []),
            *([f"--dump-before={MARKER}"] if dump else []),
            f"--callgrind-out-file={interp.path(out)}",
            *argv,
        ]
        completed = interp.run(command, capture=True, check=False)
        if completed.returncode != 0:
            raise RuntimeError(f"{what} failed:\n{completed.stderr[-3000:]}")
        parts = sorted(glob.glob(out + ".*"), key=lambda p: int(p.rsplit(".", 1)[1]))
        if _KEEP[0]:
            os.makedirs(_KEEP[0], exist_ok=True)
            for path in (*parts, out):
                suffix = path[len(out) :] or ".end"
                shutil.copy(path, os.path.join(_KEEP[0], what + suffix))
        return [_totals(p) for p in (*parts, out)]


_KEEP: list[str | None] = [None]


def marker_works(interp: PPInterpreter) -> bool:
    """Whether callgrind finds the marker in this build (not in a stripped binary)."""
    code = "import time; time.perf_counter(); time.perf_counter()"
    env = ["env", "-i", "PYTHONHASHSEED=0"]
    parts = _callgrind(interp, env, [interp.python, "-S", "-c", code], f"{interp.key}-probe")
    return len(parts) == 3


def first_use(interp: PPInterpreter, state: str, dirs: dict[str, str], pad: int = 0) -> int:
    """Return the instructions of ``python -c pass`` in *state*: start-up with
    the library's import, its ``enable()`` or ``deprecate_attribute()`` call
    included.  A state's total minus ``off``'s, less this one's minus
    ``off``'s, is what the state costs the rest of the worker ("beyond first
    use")."""
    env = environment(interp, state, dirs, pad)
    what = f"{interp.key}-first-use-{state}" + (f"-pad{pad}" if pad else "")
    return sum(_callgrind(interp, env, [interp.python, "-c", "pass"], what, dump=False))


def count(
    interp: PPInterpreter,
    bench: Bench,
    state: str,
    benchdir: str,
    dirs: dict[str, str],
    *,
    marker: bool,
    pad: int = 0,
) -> dict[str, int]:
    """Return the instructions of *bench* in *state*: body, fixed, total.

    With *marker*, one run: the part between pyperf's two clock reads is the
    body.  Without (a stripped interpreter: callgrind cannot see the marker),
    two runs of ``loops`` and ``2 * loops``: their difference is the body of
    ``loops`` loops after the first ones (warm-up excluded), and what is left
    of the shorter run is the fixed part.
    """
    env = environment(interp, state, dirs, pad)
    what = f"{interp.key}-{bench.name}-{state}" + (f"-pad{pad}" if pad else "")
    if marker and not bench.inner_clock:
        argv = [interp.python, *worker_argv(bench, benchdir, bench.loops, 1, 0)]
        parts = _callgrind(interp, env, argv, what)
        if len(parts) < 3:
            raise RuntimeError(f"{what}: {len(parts) - 1} calls of {MARKER}, wanted 2 or more")
        # pyperf reads the clock before and after the loops; a benchmark
        # timing its own loops (bench_time_func) may read it inside as well.
        before, body, after = parts[0], sum(parts[1:-1]), parts[-1]
        return {"body": body, "fixed": before + after, "total": before + body + after}

    def total(loops: int, suffix: str) -> int:
        argv = [interp.python, *worker_argv(bench, benchdir, loops, 1, 0)]
        return sum(_callgrind(interp, env, argv, what + suffix, dump=False))

    short = total(bench.loops, "")
    long = total(2 * bench.loops, "-x2")
    return {"body": long - short, "fixed": 2 * short - long, "total": short}


def wall(
    interp: PPInterpreter,
    benches: list[Bench],
    benchdir: str,
    dirs: dict[str, str],
    rounds: int,
) -> dict[str, dict[str, float]]:
    """Return bench -> state -> median seconds per loop, from interleaved native workers."""
    values: dict[str, dict[str, list[float]]] = {b.name: {s: [] for s in STATES} for b in benches}
    os.makedirs(WORK, exist_ok=True)
    for index in range(rounds):
        for bench in benches:
            order = STATES[index % 3 :] + STATES[: index % 3]
            for state in order:
                with tempfile.TemporaryDirectory(prefix="wall-", dir=WORK) as tmp:
                    out = os.path.join(tmp, "run.json")
                    argv = [
                        *environment(interp, state, dirs),
                        interp.python,
                        *worker_argv(bench, benchdir, bench.loops, 3, 1),
                        "--quiet",
                        "-o",
                        interp.path(out),
                    ]
                    interp.run(argv, capture=True)
                    with open(out, encoding="utf-8") as file:
                        data = json.load(file)
                    for run in data["benchmarks"][0]["runs"]:
                        values[bench.name][state] += run.get("values", [])
    return {b: {s: statistics.median(v) for s, v in per.items()} for b, per in values.items()}


def geomean(ratios: list[float]) -> float:
    return math.exp(sum(math.log(r) for r in ratios) / len(ratios))


def summarise(result: dict[str, Any]) -> None:
    """Add ratios to ``off`` and their geometric means to *result*."""
    counts = result["counts"]
    ratios: dict[str, dict[str, dict[str, float]]] = {}
    for name, per in counts.items():
        ratios[name] = {
            state: {part: per[state][part] / per["off"][part] for part in per["off"]}
            for state in STATES
        }
    result["ratios"] = ratios
    start = result.get("first_use")
    if start:
        # Whole worker, less the start-up with the library's first use: what
        # the state costs the rest of the process, as a fraction of off's total.
        result["beyond"] = {
            name: {
                state: (per[state]["total"] - per["off"]["total"] - (start[state] - start["off"]))
                / per["off"]["total"]
                for state in STATES
            }
            for name, per in counts.items()
        }
    result["geomean"] = {
        state: {
            part: geomean([r[state][part] for r in ratios.values()])
            for part in ("body", "fixed", "total")
        }
        for state in STATES
    }
    if result.get("wall"):
        result["wall_ratios"] = {
            name: {s: per[s] / per["off"] for s in STATES} for name, per in result["wall"].items()
        }
        result["wall_geomean"] = {
            s: geomean([r[s] for r in result["wall_ratios"].values()]) for s in STATES
        }


def run_interpreter(
    interp: PPInterpreter,
    benches: list[Bench],
    rounds: int,
    *,
    keep: str | None = None,
    layouts: int = 1,
    partial: str | None = None,
) -> dict[str, Any]:
    started = time.monotonic()
    _KEEP[0] = keep
    meta, benchdir = setup(interp)
    dirs = state_dirs()
    check_states(interp, dirs)
    marker = marker_works(interp)
    print(f"== {meta['label']}: callgrind sees {MARKER}: {marker}", flush=True)
    result: dict[str, Any] = dict(meta, counts={}, loops={b.name: b.loops for b in benches})
    result["layouts"] = layouts
    result["run_label"] = os.path.basename(partial or "")[
        len("pyperformance-") : -len(".json")
    ].partition("-")[2]
    result["method"] = "marker" if marker else "difference"
    result["first_use"] = {
        state: sum(first_use(interp, state, dirs, pad) for pad in range(layouts)) // layouts
        for state in STATES
    }
    for bench in benches:
        per: dict[str, dict[str, int]] = {}
        runs: dict[str, list[dict[str, int]]] = {state: [] for state in STATES}
        for pad in range(layouts):
            for state in STATES:
                runs[state].append(
                    count(interp, bench, state, benchdir, dirs, marker=marker, pad=pad)
                )
        for state in STATES:  # the mean over layouts
            per[state] = {k: sum(r[k] for r in runs[state]) // layouts for k in runs[state][0]}
        result["counts"][bench.name] = per
        result.setdefault("layout_counts", {})[bench.name] = runs
        if partial:  # what is counted so far survives an interrupted run
            summarise(result)
            with open(partial, "w", encoding="utf-8") as file:
                json.dump(result, file, indent=1)
        print(
            f"{meta['label']:16} {bench.name:26} body {per['off']['body'] / 1e6:8.1f} M"
            + "".join(
                f"  {state} {per[state]['body'] / per['off']['body']:.4f}"
                f" (fixed {per[state]['fixed'] / per['off']['fixed']:.4f})"
                for state in STATES[1:]
            ),
            flush=True,
        )
    if rounds:
        print(f"== {meta['label']}: wall clock, {rounds} interleaved rounds", flush=True)
        result["wall"] = wall(interp, benches, benchdir, dirs, rounds)
    summarise(result)
    result["seconds"] = time.monotonic() - started
    return result


# --- the report -----------------------------------------------------------


def _flag(value: float, bound: float) -> str:
    return f"{value:.3f}" + (" ✅" if value <= bound else " ❌")


def _title(result: dict[str, Any]) -> str:
    run = result.get("run_label")
    return f"{result['label']} {run}" if run else str(result["label"])


def _beyond(results: list[dict[str, Any]], names: list[str]) -> list[str]:
    """Return the lines of the "beyond the first use" table (empty without it)."""
    lines: list[str] = []
    states = [s for s in STATES[1:] if all(s in r.get("first_use", {}) for r in results)]
    beyond = [r for r in results if r.get("beyond")]
    if beyond:
        lines.append(
            "Whole worker beyond the first use, (total - off's total - (start-up - off's"
            " start-up)) / off's total, per cent, "
            + " / ".join(states)
            + f" (mean of {beyond[0].get('layouts', 1)} layout(s)):"
        )
        lines.append("")
        lines.append("| benchmark | " + " | ".join(_title(r) for r in beyond) + " |")
        lines.append("|---|" + "---|" * len(beyond))
        for name in names:
            cells = []
            for r in beyond:
                per = r["beyond"].get(name)
                cells.append(" / ".join(f"{100 * per[s]:+.2f}" for s in states) if per else "n/a")
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
        lines.append("")
        lines.append(
            "First use (`python -c pass` in the state minus in `off`), millions: "
            + "; ".join(
                f"{_title(r)} "
                + ", ".join(
                    f"{s} {(r['first_use'][s] - r['first_use']['off']) / 1e6:+.2f}" for s in states
                )
                for r in beyond
            )
        )
        lines.append("")
    return lines


def render(results: list[dict[str, Any]]) -> str:
    """Return Markdown tables of *results* (one per interpreter, same label)."""
    names = [n for n in (b.name for b in BENCHES) if any(n in r["ratios"] for r in results)]
    if not all("on" in r["geomean"] and "lib" in r["geomean"] for r in results):
        return "\n".join(_beyond(results, names)) + "\n"
    lines: list[str] = []
    lines.append(
        "| Python | benchmarks | geomean lib/off | max lib/off | geomean on/off | max on/off "
        "| start-up+set-up lib/off | on/off |"
    )
    lines.append("|---|---|---|---|---|---|---|---|")
    for result in results:
        ratios = result["ratios"]
        worst = {s: max(ratios, key=lambda n: ratios[n][s]["body"]) for s in ("lib", "on")}
        gm = result["geomean"]
        lines.append(
            f"| {_title(result)} | {len(ratios)} "
            f"| {_flag(gm['lib']['body'], 1.01)} "
            f"| {_flag(ratios[worst['lib']]['lib']['body'], 1.03)} ({worst['lib']}) "
            f"| {_flag(gm['on']['body'], 1.01)} "
            f"| {_flag(ratios[worst['on']]['on']['body'], 1.03)} ({worst['on']}) "
            f"| {gm['lib']['fixed']:.3f} | {gm['on']['fixed']:.3f} |"
        )
    lines.append("")
    names = [n for n in (b.name for b in BENCHES) if any(n in r["ratios"] for r in results)]
    lines += _beyond(results, names)
    header = "| benchmark | loops | " + " | ".join(_title(r) for r in results) + " |"
    lines.append(
        "Body instructions of `off` (millions) and body ratios lib/off, on/off per benchmark:"
    )
    lines.append("")
    lines.append(header)
    lines.append("|---|---|" + "---|" * len(results))
    for name in names:
        loops = next((r["loops"][name] for r in results if name in r["loops"]), "")
        cells = []
        for r in results:
            if name not in r["ratios"]:
                cells.append("n/a")
                continue
            body = r["counts"][name]["off"]["body"] / 1e6
            lib, on = r["ratios"][name]["lib"]["body"], r["ratios"][name]["on"]["body"]
            cells.append(f"{body:.0f} M: {lib:.3f}, {on:.3f}")
        lines.append(f"| {name} | {loops} | " + " | ".join(cells) + " |")
    walls = [r for r in results if r.get("wall_geomean")]
    if walls:
        lines.append("")
        lines.append("Wall clock (pyperf medians, interleaved; noisy, not judged), geomean:")
        lines.append("")
        lines.append("| Python | lib/off | on/off | worst lib/off | worst on/off |")
        lines.append("|---|---|---|---|---|")
        for r in walls:
            wr = r["wall_ratios"]
            wl = max(wr, key=lambda n: wr[n]["lib"])
            wo = max(wr, key=lambda n: wr[n]["on"])
            lines.append(
                f"| {_title(r)} | {r['wall_geomean']['lib']:.3f} | {r['wall_geomean']['on']:.3f}"
                f" | {wr[wl]['lib']:.3f} ({wl}) | {wr[wo]['on']:.3f} ({wo}) |"
            )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="comma-separated keys, e.g. 3.8,3.12,3.14")
    parser.add_argument("--quick", action="store_true", help="the 9 quick benchmarks only")
    parser.add_argument("--benchmarks", help="comma-separated names (overrides --quick)")
    parser.add_argument("--wall", type=int, default=0, metavar="ROUNDS", help="also time")
    parser.add_argument(
        "--layouts", type=int, default=1, help="run each state at this many layouts (mean)"
    )
    parser.add_argument("--states", help="comma-separated states, off first (default: all)")
    parser.add_argument("--label", default="", help="suffix of the JSON file, e.g. before")
    parser.add_argument("--keep", help="keep callgrind's files in this directory")
    parser.add_argument("--render", nargs="+", metavar="JSON", help="only print the tables")
    parser.add_argument("--markdown-out", help="also write the tables to this file")
    options = parser.parse_args(argv)
    if options.render:
        results = []
        for path in options.render:
            with open(path, encoding="utf-8") as file:
                result = json.load(file)
            # pyperformance-<key>[-<label>].json
            stem = os.path.basename(path)[len("pyperformance-") : -len(".json")]
            result.setdefault("run_label", stem.partition("-")[2])
            results.append(result)
        print(render(results), end="")
        return 0
    if options.states:
        global STATES
        STATES = tuple(options.states.split(","))
    if options.benchmarks:
        wanted = options.benchmarks.split(",")
        benches = [b for b in BENCHES if b.name in wanted]
    else:
        benches = [b for b in BENCHES if b.quick or not options.quick]
    only = options.only.split(",") if options.only else None
    found = [
        PPInterpreter(i.key, i.command, i.chroot)
        for i in run_all.interpreters(only)
        if "pypy" not in i.key
    ]
    results = []
    for interp in found:
        suffix = f"-{options.label}" if options.label else ""
        path = os.path.join(RAW, f"pyperformance-{interp.key}{suffix}.json")
        result = run_interpreter(
            interp,
            benches,
            options.wall,
            keep=options.keep,
            layouts=options.layouts,
            partial=path,
        )
        with open(path, "w", encoding="utf-8") as file:
            json.dump(result, file, indent=1)
        print(f"== {result['label']}: {result['seconds'] / 60:.1f} min, wrote {path}", flush=True)
        results.append(result)
    text = render(results)
    print(text, end="")
    if options.markdown_out:
        with open(options.markdown_out, "w", encoding="utf-8") as file:
            file.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Run every benchmark on every interpreter; write docs/benchmarks.md and docs/benchmarks.png.

Interpreters: on the host, the newest ``$(pyenv root)/versions/3.{8..13}.*`` and
``pypy3`` (3.9); in the Debian sid chroot of ``tools/interpreters.sh``, when it
is set up, ``python3.14``, ``python3.15`` and ``pypy3`` (3.11).  For each one
this script sets up what it needs by itself, so a fresh machine can run it:

1. a venv ``.venv-bench/<key>`` in the repository (git-ignored; the chroot
   sees the repository at ``/repo``) with ``pyperf``;
2. a wheel built by that interpreter from a clean copy of the tree (C
   extensions included on CPython), installed into the venv, non-editable;
3. ``bench_module_access.py`` (pyperf), ``bench_import.py`` (wall clock) and,
   on CPython, ``bench_callgrind.py`` (instruction counts of start-up, stores
   and imports; valgrind must be installed, as it is on the host and in the
   chroot).

Then it writes ``docs/benchmarks.md`` (every ratio against its target) and,
with matplotlib (installed into the plotting venv when missing), the chart.
Raw results go to ``build/benchmarks/``.

A start-up instruction count (``bench_callgrind.py``'s table) that moved by
more than 0.5 % from the figure the page records fails the run: each such
figure is named on stderr, the page is left as it was and the exit status is
1.  To record new figures on purpose, run again with
``--accept-startup-counts``, or write the page from the raw results the
failed run left: ``--render --accept-startup-counts``.

    python3 benchmarks/run_all.py [--quick] [--only 3.12,3.14,pypy]

Runtime on the shared 2-core machine (measured at a load average of 7-10):
about 50 minutes for the full run (per CPython ~1.5 min of pyperf and import
timing and ~3.5 min under callgrind; ~3 min per PyPy), about 20 minutes with
``--quick`` (shorter pyperf settings, fewer import rounds, one callgrind run
per case, 20 000 store loops, only the target cases, no callgrind import
counts); a fresh machine adds a few minutes for the venvs.  Log to a file of
your own: a run prints a lot.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Any, Callable

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCHMARKS = os.path.join(ROOT, "benchmarks")
RAW = os.path.join(ROOT, "build", "benchmarks")
VENVS = os.path.join(ROOT, ".venv-bench")
MARKDOWN = os.path.join(ROOT, "docs", "benchmarks.md")
CHART = os.path.join(ROOT, "docs", "benchmarks.png")
CHROOT_ROOT = "/repo"  # where tools/interpreters.sh mounts the repository

# Short pyperf settings: 16 cases x 4 rounds of one process each keep one
# interpreter near a minute on the shared 2-core machine.  Rounds interleave
# the cases in time (drift hits all alike) and spread each over several
# processes (hash seed, memory layout).
PYPERF_ARGS = ["--quiet", "-p", "1", "-n", "3", "-w", "1", "--min-time", "0.05", "--rounds", "4"]
PYPERF_QUICK = ["--quiet", "-p", "1", "-n", "2", "-w", "1", "--min-time", "0.02", "--rounds", "2"]


@dataclass
class Interpreter:
    """One interpreter to benchmark, on the host or in the sid chroot."""

    key: str  # "3.12", "3.14", "pypy3.9", ...
    command: str  # its executable, as seen where it runs
    chroot: bool

    @property
    def where(self) -> str:
        return "sid chroot" if self.chroot else "host"

    def path(self, host_path: str) -> str:
        """Return *host_path* (inside the repository) as the interpreter sees it."""
        if not self.chroot:
            return host_path
        return CHROOT_ROOT + host_path[len(ROOT) :]

    @property
    def venv(self) -> str:
        return os.path.join(VENVS, self.key)

    @property
    def python(self) -> str:
        """The venv's python, as seen where it runs."""
        return self.path(os.path.join(self.venv, "bin", "python"))

    def run(
        self, argv: list[str], capture: bool = False, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        """Run *argv* where the interpreter lives, from the repository's root."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PEP726HOOK", "PYTHON"))}
        if self.chroot:
            argv = ["bash", os.path.join(ROOT, "tools", "interpreters.sh"), "run", *argv]
        return subprocess.run(
            argv, cwd=ROOT, env=env, check=check, text=True, capture_output=capture
        )

    def probe(self, code: str) -> bool:
        return self.run([self.python, "-c", code], capture=True, check=False).returncode == 0


def pyenv_root() -> str | None:
    """Return pyenv's root directory, or None."""
    root = os.environ.get("PYENV_ROOT")
    if root:
        return root
    if shutil.which("pyenv"):
        completed = subprocess.run(["pyenv", "root"], capture_output=True, text=True, check=False)
        if completed.returncode == 0:
            return completed.stdout.strip()
    default = os.path.expanduser("~/.pyenv")
    return default if os.path.isdir(default) else None


def _chroot_ready() -> bool:
    script = os.path.join(ROOT, "tools", "interpreters.sh")
    completed = subprocess.run(
        ["bash", script, "run", "true"], capture_output=True, check=False, cwd=ROOT
    )
    return completed.returncode == 0


def interpreters(only: list[str] | None) -> list[Interpreter]:
    """Return the interpreters to benchmark: CPython oldest first, then PyPy."""
    found: list[Interpreter] = []
    root = pyenv_root()
    for minor in range(8, 14):
        matches = glob.glob(f"{root}/versions/3.{minor}.*/bin/python") if root else []
        # Not 3.13.0t and the like: the free-threaded builds are not benchmarked.
        matches = [m for m in matches if re.fullmatch(r"[0-9.]+", m.split("/")[-3])]
        if matches:
            newest = max(matches, key=lambda m: [int(p) for p in m.split("/")[-3].split(".")])
            found.append(Interpreter(f"3.{minor}", newest, chroot=False))
    chroot = _chroot_ready()
    if chroot:
        found += [
            Interpreter("3.14", "python3.14", chroot=True),
            Interpreter("3.15", "python3.15", chroot=True),
        ]
    else:
        print("no sid chroot (bash tools/interpreters.sh setup): no 3.14, 3.15, PyPy 3.11")
    pypy = shutil.which("pypy3")
    if pypy:
        found.append(Interpreter("pypy3.9", pypy, chroot=False))
    if chroot:
        found.append(Interpreter("pypy3.11", "pypy3", chroot=True))
    if only:
        found = [i for i in found if i.key in only or ("pypy" in only and "pypy" in i.key)]
    return found


def setup(interp: Interpreter, plotting: bool) -> dict[str, Any]:
    """Create the venv, build and install the wheel; return the interpreter's metadata."""
    python = interp.python
    if not os.path.exists(os.path.join(interp.venv, "bin", "python")):
        print(f"== {interp.key}: creating {interp.venv}", flush=True)
        interp.run([interp.command, "-m", "venv", interp.path(interp.venv)])
    wanted = ["pyperf"] + (["matplotlib"] if plotting else [])
    missing = [name for name in wanted if not interp.probe(f"import {name}")]
    if missing:
        print(f"== {interp.key}: pip install {' '.join(missing)}", flush=True)
        interp.run([python, "-m", "pip", "install", "-q", "-U", "pip"])
        # pyperf's psutil has no PyPy wheel and PyPy's headers may be missing:
        # pyperf runs without it (it only adds system metadata).
        no_deps = ["--no-deps"] if "pypy" in interp.key else []
        interp.run([python, "-m", "pip", "install", "-q", *no_deps, *missing])
    # A clean copy: no stale build/ or in-place extension can leak into the wheel.
    source = os.path.join(RAW, "source", interp.key)
    wheels = os.path.join(RAW, "wheels", interp.key)
    for directory in (source, wheels):
        shutil.rmtree(directory, ignore_errors=True)
    shutil.copytree(
        ROOT,
        source,
        ignore=shutil.ignore_patterns(
            ".git", "build", "dist", "*.egg-info", "__pycache__", ".nox", ".venv*", "*.so"
        ),
    )
    print(f"== {interp.key}: building and installing the wheel", flush=True)
    build = [python, "-m", "pip", "wheel", "-q", "--no-deps", "-w", interp.path(wheels)]
    interp.run([*build, interp.path(source)], capture=True)
    (wheel,) = glob.glob(os.path.join(wheels, "pep726hook-*.whl"))
    interp.run(
        [
            python,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--force-reinstall",
            interp.path(wheel),
        ],
        capture=True,
    )
    shutil.rmtree(source, ignore_errors=True)
    code = (
        "import json, platform, sys, pep726hook; print(json.dumps({"
        "'implementation': platform.python_implementation(), "
        "'version': platform.python_version(), 'build': sys.version.replace(chr(10), ' '), "
        "'engines': list(pep726hook.available_engines()), "
        "'location': pep726hook.__file__}))"
    )
    meta: dict[str, Any] = json.loads(interp.run([python, "-c", code], capture=True).stdout)
    if interp.path(ROOT) + "/src" in meta["location"]:
        raise RuntimeError(f"{interp.key} imports pep726hook from src/, not the venv")
    meta.update(
        key=interp.key,
        where=interp.where,
        label=f"{meta['implementation']} {meta['version']}",
        wheel=os.path.basename(wheel),
    )
    return meta


def run_interpreter(interp: Interpreter, meta: dict[str, Any], quick: bool) -> dict[str, Any]:
    """Run the benchmarks on *interp*; return *meta* with medians and counts added."""
    os.makedirs(RAW, exist_ok=True)
    access_json = os.path.join(RAW, f"access-{interp.key}.json")
    import_json = os.path.join(RAW, f"import-{interp.key}.json")
    callgrind_json = os.path.join(RAW, f"callgrind-{interp.key}.json")
    for path in (access_json, import_json, callgrind_json):
        if os.path.exists(path):
            os.remove(path)
    script = os.path.join(BENCHMARKS, "{}.py")
    started = time.monotonic()
    print(f"== {meta['label']} ({interp.where}): module access (pyperf)", flush=True)
    pyperf_args = PYPERF_QUICK if quick else PYPERF_ARGS
    interp.run(
        [
            interp.python,
            interp.path(script.format("bench_module_access")),
            *pyperf_args,
            "-o",
            interp.path(access_json),
        ]
    )
    print(f"== {meta['label']}: import time", flush=True)
    interp.run(
        [
            interp.python,
            interp.path(script.format("bench_import")),
            "--rounds",
            "5" if quick else "11",
            "--json-out",
            interp.path(import_json),
        ]
    )
    medians = read_pyperf(access_json)
    with open(import_json, encoding="utf-8") as file:
        imports = json.load(file)
    for name, seconds in imports["median_seconds"].items():
        medians[f"import/{name}"] = seconds
    result = dict(meta, default=imports["default_engine"], modules=imports["modules"])
    result["medians"] = medians
    if meta["implementation"] == "CPython":
        print(f"== {meta['label']}: instruction counts (callgrind)", flush=True)
        wheel = os.path.join(RAW, "wheels", interp.key, meta["wheel"])
        argv = [interp.python, interp.path(script.format("bench_callgrind"))]
        argv += ["--wheel", interp.path(wheel), "--json-out", interp.path(callgrind_json)]
        argv += ["--quick"] if quick else ["--imports"]
        interp.run(argv)
        with open(callgrind_json, encoding="utf-8") as file:
            result["callgrind"] = json.load(file)
    result["seconds"] = time.monotonic() - started
    return result


def read_pyperf(path: str) -> dict[str, float]:
    """Return benchmark name -> median seconds per operation from a pyperf JSON file."""
    with open(path, encoding="utf-8") as file:
        data = json.load(file)
    values: dict[str, list[float]] = {}
    for bench in data["benchmarks"]:
        name = bench.get("metadata", {}).get("name") or data["metadata"]["name"]
        case = name.partition("#")[0]  # rounds of one case, see bench_module_access.py
        values[case] = values.get(case, []) + [
            v for run in bench["runs"] for v in run.get("values", [])
        ]
    return {case: statistics.median(vs) for case, vs in values.items() if vs}


# --- targets --------------------------------------------------------------


def _medians(result: dict[str, Any], top: str, bottom: str) -> float | None:
    medians = result["medians"]
    a = medians.get(top.format(default=result["default"]))
    b = medians.get(bottom.format(default=result["default"]))
    return None if a is None or b is None else float(a / b)


def _counts(section: str, top: str, bottom: str) -> Callable[[dict[str, Any]], float | None]:
    def ratio(result: dict[str, Any]) -> float | None:
        counts = result.get("callgrind", {}).get(section, {})
        a = counts.get(top.format(default=result["default"]))
        b = counts.get(bottom.format(default=result["default"]))
        return None if a is None or b is None else float(a / b)

    return ratio


def _times(top: str, bottom: str) -> Callable[[dict[str, Any]], float | None]:
    return lambda result: _medians(result, top, bottom)


@dataclass
class Target:
    """A ratio of two measurements of one interpreter, and the bound it must keep."""

    label: str
    short: str  # for the chart
    method: str  # "pyperf", "wall clock" or "callgrind"
    bound: float | None  # None: shown for reference, no target
    ratio: Callable[[dict[str, Any]], float | None]


TARGETS = [
    Target(
        "start-up, installed, PEP726HOOK unset / not installed (b/a)",
        "start-up b/a",
        "callgrind",
        1.005,
        _counts("startup", "installed", "base"),
    ),
    Target(
        "start-up, PEP726HOOK=1, default engine / not installed (c/a)",
        "start-up c/a",
        "callgrind",
        1.05,
        _counts("startup", "activated", "base"),
    ),
    Target(
        "start-up, PEP726HOOK=1, class engine / not installed (c/a)",
        "start-up c/a class",
        "callgrind",
        1.05,
        _counts("startup", "activated-class", "base"),
    ),
    Target(
        "start-up, one-line `import os` .pth / not installed (d/a)",
        "start-up d/a",
        "callgrind",
        None,
        _counts("startup", "import-os", "base"),
    ),
    Target(
        "store without hooks: engine installed / not installed",
        "unhooked store",
        "callgrind",
        1.10,
        _counts("store", "{default}/unhooked-write", "plain/unhooked-write"),
    ),
    Target(
        "store without hooks: engine installed / not installed",
        "unhooked store",
        "pyperf",
        1.10,
        _times("{default}/unhooked-write", "plain/unhooked-write"),
    ),
    Target(
        "hooked store / hand-written workaround",
        "hooked store / workaround",
        "callgrind",
        0.65,
        _counts("store", "{default}/hooked-write", "workaround/hooked-write"),
    ),
    Target(
        "hooked store / hand-written workaround",
        "hooked store / workaround",
        "pyperf",
        0.65,
        _times("{default}/hooked-write", "workaround/hooked-write"),
    ),
    Target(
        "read of a hooked module / plain module (~1.0)",
        "read",
        "callgrind",
        1.05,
        _counts("store", "{default}/read", "plain/read"),
    ),
    Target(
        "read of a hooked module / plain module (~1.0)",
        "read",
        "pyperf",
        1.05,
        _times("{default}/read", "plain/read"),
    ),
    Target(
        "import ~150 stdlib modules: hook installed / not",
        "import",
        "callgrind",
        1.03,
        _counts("imports", "{default}", "off"),
    ),
    Target(
        "import ~150 stdlib modules: hook installed / not",
        "import",
        "wall clock",
        1.03,
        _times("import/{default}", "import/off"),
    ),
]


def _cell(target: Target, result: dict[str, Any]) -> str:
    value = target.ratio(result)
    if value is None:
        return "n/a"
    digits = 3 if target.method == "callgrind" and (target.bound or 1) >= 1 else 2
    if target.bound is None:
        return f"{value:.{digits}f}"
    return f"{value:.{digits}f} " + ("✅" if value <= target.bound else "❌")


# --- the report -----------------------------------------------------------

CASE_ORDER = [
    "plain/read",
    "workaround/read",
    "class/read",
    "native/read",
    "plain/unhooked-write",
    "workaround/unhooked-write",
    "class/unhooked-write",
    "native/unhooked-write",
    "native-alt/unhooked-write",
    "workaround/hooked-write",
    "class/hooked-write",
    "native/hooked-write",
    "native-alt/hooked-write",
    "workaround/hooked-delete",
    "class/hooked-delete",
    "native/hooked-delete",
]
STARTUP_STATES = ["base", "import-os", "installed", "activated", "activated-class"]


def _machine() -> list[str]:
    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as file:
            model = next(
                line.split(":", 1)[1].strip() for line in file if line.startswith("model name")
            )
    except (OSError, StopIteration):
        pass
    valgrind = subprocess.run(
        ["valgrind", "--version"], capture_output=True, text=True, check=False
    ).stdout.strip()
    return [
        f"- Machine: {platform.machine()}, {model}, {os.cpu_count()} CPUs shared with other "
        f"work (load average {os.getloadavg()[0]:.1f} when the report was written), "
        f"Linux {platform.release()}.",
        f"- Host: {platform.freedesktop_os_release().get('PRETTY_NAME', 'Linux')}"
        if hasattr(platform, "freedesktop_os_release")
        else "- Host: Linux",
        f"- valgrind on the host: {valgrind or 'not installed'}; the chroot has its own.",
    ]


def _table(heads: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(heads) + " |", "|" + "---|" * len(heads)]
    return lines + ["| " + " | ".join(row) + " |" for row in rows]


# Why a ❌ above may be a floor rather than work left (issue 14): each names
# the experiment that shows it, in the document that describes it.
FLOORS = [
    "### Where a target sits below a floor",
    "",
    "- **Start-up with `PEP726HOOK` unset (<= 1.005).** Row (d) below is what a one-line "
    "`import os` `.pth` costs by itself: more than the target on every CPython but 3.15, "
    "because site reads and compiles an executable `.pth` line in every process (twice in a "
    "venv before 3.15) and each node of its expression costs about 0.1 %. pep726hook's line "
    'is `import os; "PEP726HOOK" in os.environ and exec(...)`, the cheapest test found; '
    "experiments in [activation.md](activation.md#the-pth-line-pep726hook1).",
    "- **Start-up with `PEP726HOOK=1` (<= 1.05).** With the native engine start-up imports "
    "only the package's `__init__`, which activates, and the C extension. Importing the "
    "package with only its C extension and calling `_native.install()` straight from the "
    "`.pth` line is 1.048 of the baseline on 3.12.1 (callgrind); the `exec()` of the `.pth` "
    "line's `try` (compiled twice in a venv) and reading the variables add the rest (an "
    "empty package costs +0.87M instructions, its first submodule +0.61M, each further one "
    "+0.33M). The class engine imports itself, its finder and `_install` too. Details in "
    '[activation.md](activation.md) and below, "Start-up with `PEP726HOOK=1`: what bounds '
    'it".',
    "- **Store without hooks on 3.8-3.11 (<= 1.1).** What is left above a plain store is the "
    "miss of the `__setattr__` lookup in the module's dict, whose probe sequence (and so the "
    "ratio) depends on the hash seed and the dict; no public API announces dict changes "
    "before 3.12, and the exact `ma_version_tag` cache built for them was dearer.  On 3.11 "
    "a namespace whose keys carry a version (its own code has been read by specialised "
    "instructions, as most modules' is) skips the lookup: 0.90 of a plain store, where "
    "this row's module, never read, pays 8 instructions for the check. "
    "[native-engine.md](native-engine.md) has the counts.",
    "- **PyPy** has no native engine; its class engine's ratios are for information.",
]


def markdown(results: list[dict[str, Any]], elapsed: float, quick: bool) -> str:
    """Return docs/benchmarks.md for *results*."""
    heads = [r["label"] for r in results]
    cpythons = [r for r in results if "callgrind" in r]
    lines = [
        "# Benchmarks",
        "",
        "This page is generated by `python3 benchmarks/run_all.py"
        + (" --quick" if quick else "")
        + "`; it is the one place the project's performance figures live (other "
        "documents link here rather than copy them).  "
        f"Run {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
        f"{elapsed / 60:.0f} min in all.",
        "",
        "Every ratio compares two measurements of one interpreter taken in the same run.  The "
        "machine is shared and noisy: pyperf and wall-clock ratios move by several per cent "
        "between runs, while callgrind's instruction counts of the same binary in the same "
        "environment repeat to about 0.1 % or better whatever the load, so the start-up targets are judged on counts "
        "only, and the other targets are shown both ways (counts are the steadier evidence; "
        "an instruction is not a nanosecond, so the two can differ).",
        "",
        "## Ratios against the targets",
        "",
        "The default engine is `native` on CPython and `class` on PyPy.  ✅/❌: the ratio "
        "meets / misses its target.",
        "",
    ]
    rows = []
    for target in TARGETS:
        bound = "—" if target.bound is None else f"<= {target.bound}"
        rows.append([target.label, target.method, bound] + [_cell(target, r) for r in results])
    lines += _table(["ratio", "measured by", "target", *heads], rows)
    lines += ["", *FLOORS]
    lines += [
        "",
        "## Interpreters",
        "",
    ]
    lines += _table(
        ["interpreter", "where", "engines", "build", "minutes"],
        [
            [
                r["label"],
                r["where"],
                ", ".join(r["engines"]),
                r["build"],
                f"{r['seconds'] / 60:.1f}",
            ]
            for r in results
        ],
    )
    if cpythons:
        cg = cpythons[0]["callgrind"]
        lines += [
            "",
            "## Start-up instruction counts (callgrind)",
            "",
            "`python -c pass` in a pip-less venv (`benchmarks/bench_callgrind.py`), "
            "millions of instructions, median of "
            f"{cg['repeat']} runs each (spread in parentheses when the runs differ).  "
            "(a) `base`: another package's comment-only but non-empty `.pth`, no pep726hook "
            "(on 3.13 the first non-empty `.pth` imports the `utf-8-sig` codec, about +3 %, "
            "which a baseline without one would charge to us); (d) `import-os`: `base` plus a "
            "one-line `import os` `.pth`, the cheapest executable `.pth` line; (b) "
            "`installed`: `base` plus the wheel, `PEP726HOOK` unset; (c) `activated`: "
            "`PEP726HOOK=1` (default engine), `activated-class`: with "
            "`PEP726HOOK_ENGINE=class`.  `run_all.py` fails, leaving this page as it was, "
            "when one of these figures moves by more than "
            f"{STARTUP_TOLERANCE:.1%} from the one recorded here; "
            "`--accept-startup-counts` records a new figure on purpose.",
            "",
        ]
        rows = []
        for state in STARTUP_STATES:
            row = [state]
            for r in cpythons:
                runs = r["callgrind"].get("startup_runs", {}).get(state)
                if not runs:
                    row.append("")
                    continue
                cell = f"{statistics.median(runs) / 1e6:.3f}"
                if max(runs) != min(runs):
                    cell += f" (±{(max(runs) - min(runs)) / 2 / 1e3:.1f}k)"
                row.append(cell)
            rows.append(row)
        lines += _table(["state", *[r["label"] for r in cpythons]], rows)
        lines += [
            "",
            "## Instructions per module operation (callgrind)",
            "",
            f"A fresh `python -S` process runs {cg['loops']:,} operations in a loop; the "
            "same loop with an empty body in the same configuration is subtracted.  Operand "
            "loads are included (equally in every configuration).  Configurations as below.",
            "",
        ]
        rows = []
        for case in CASE_ORDER:
            cells = [
                f"{r['callgrind']['store'][case]:.0f}" if case in r["callgrind"]["store"] else ""
                for r in cpythons
            ]
            if any(cells):
                rows.append([case, *cells])
        lines += _table(["case", *[r["label"] for r in cpythons]], rows)
        if any("imports" in r["callgrind"] for r in cpythons):
            lines += ["", "Importing the standard library modules, millions of instructions:", ""]
            rows = []
            for variant in ("off", "native", "class"):
                cells = [
                    f"{r['callgrind']['imports'][variant] / 1e6:.1f}"
                    if variant in r["callgrind"].get("imports", {})
                    else ""
                    for r in cpythons
                ]
                rows.append([f"import/{variant}", *cells])
            lines += _table(["variant", *[r["label"] for r in cpythons]], rows)
    pyperf_args = PYPERF_QUICK if quick else PYPERF_ARGS
    lines += [
        "",
        "## Times (pyperf and wall clock)",
        "",
        "Module access: pyperf medians of one operation (`"
        + " ".join(pyperf_args)
        + "`), ns.  Import: median wall-clock time of a fresh process importing "
        f"{results[0]['modules'] if results else '~150'} standard library modules "
        "(`benchmarks/bench_import.py`, interleaved runs), ms.",
        "",
        "Configurations: `plain` = no pep726hook; `workaround` = the hand-written "
        'ModuleType subclass of PEP 726\'s "Existing Options"; `class` / `native` = '
        "pep726hook with that engine; `native-alt` = the native engine's former slot "
        "design (`slot_tp_setattro` in ModuleType's slot; see `docs/native-engine.md`).",
        "",
    ]
    rows = []
    for case in CASE_ORDER:
        cells = [
            "" if case not in r["medians"] else f"{r['medians'][case] * 1e9:.1f}" for r in results
        ]
        rows.append([f"{case} (ns)", *cells])
    for variant in ("off", "native", "class"):
        key = f"import/{variant}"
        cells = [
            "" if key not in r["medians"] else f"{r['medians'][key] * 1e3:.1f}" for r in results
        ]
        rows.append([f"{key} (ms)", *cells])
    lines += _table(["case", *heads], rows)
    lines += ["", "## Machine", "", *_machine(), ""]
    return "\n".join(lines)


PLOT_CODE = r"""
import json, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
results, targets, out = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3]
cases = ["plain/read", "native/read", "class/read",
         "plain/unhooked-write", "native/unhooked-write", "class/unhooked-write",
         "workaround/hooked-write", "native/hooked-write", "class/hooked-write"]
fig, (left, right) = plt.subplots(1, 2, figsize=(16, 6))
width = 0.8 / max(1, len(results))
for i, result in enumerate(results):
    values = [result["medians"].get(c, 0) * 1e9 for c in cases]
    left.bar([x + i * width for x in range(len(cases))], values, width, label=result["label"])
left.set_xticks([x + width * (len(results) - 1) / 2 for x in range(len(cases))])
left.set_xticklabels(cases, rotation=35, ha="right", fontsize=8)
left.set_ylabel("ns per operation (pyperf median)")
left.set_title("Module attribute access")
left.legend(fontsize=7)
for i, result in enumerate(results):
    values = [t["values"][i] or 0 for t in targets]
    right.bar([x + i * width for x in range(len(targets))], values, width, label=result["label"])
for x, t in enumerate(targets):
    right.hlines(t["target"], x - 0.1, x + 0.9, colors="red", linestyles="dashed")
right.set_xticks([x + width * (len(results) - 1) / 2 for x in range(len(targets))])
right.set_xticklabels([t["label"] for t in targets], rotation=25, ha="right", fontsize=7)
right.set_ylabel("ratio (red dashes: target)")
right.set_title("Ratios of the default engine")
fig.tight_layout()
fig.savefig(out, dpi=110)
"""


def plot(results: list[dict[str, Any]], plotter: Interpreter) -> None:
    """Draw docs/benchmarks.png with *plotter*'s venv (which has matplotlib)."""
    targets = [
        {
            "label": f"{t.short} [{'counts' if t.method == 'callgrind' else 'time'}]",
            "target": t.bound,
            "values": [t.ratio(r) for r in results],
        }
        for t in TARGETS
        if t.bound is not None
    ]
    results_path = os.path.join(RAW, "results.json")
    targets_path = os.path.join(RAW, "targets.json")
    with open(targets_path, "w", encoding="utf-8") as file:
        json.dump(targets, file, indent=1)
    plotter.run(
        [plotter.python, "-c", PLOT_CODE]
        + [plotter.path(p) for p in (results_path, targets_path, CHART)]
    )


# Sections of docs/benchmarks.md written by hand from other scripts' figures
# (bench_startup.py --runner, bench_pyperformance.py): a run keeps them from the
# page it replaces, unless it wrote a section of that title itself.
KEPT_SECTIONS = (
    "Class engine start-up",
    "Runner start-up",
    "Whole-program cost on pyperformance (callgrind)",
    "PEP 562 `__getattr__` modules and the fast-getattr switch",  # bench_fast_getattr.py
    "First use of the library API",  # bench_first_use.py
    "Start-up with `PEP726HOOK=1`: what bounds it",  # bench_callgrind.py, by hand
    "numpy and lazy_loader with declarations",  # bench_numpy_declarations.py
)


def sections(text: str) -> dict[str, str]:
    """The ``## `` sections of a markdown *text* by title, each with its heading."""
    found: dict[str, str] = {}
    title = None
    for line in text.splitlines(keepends=True):
        if line.startswith("## "):
            title = line[3:].strip()
            found[title] = ""
        if title is not None:
            found[title] += line
    return found


def with_kept_sections(text: str, previous: str) -> str:
    """Return *text* followed by the sections of *previous* named in KEPT_SECTIONS it lacks."""
    ours, theirs = sections(text), sections(previous)
    for title in KEPT_SECTIONS:
        if title in theirs and title not in ours:
            text = text.rstrip("\n") + "\n\n" + theirs[title].rstrip("\n") + "\n"
    return text


# The start-up figures docs/benchmarks.md records are a contract: callgrind
# repeats a count to about 0.1 %, so a move of more than this share of the
# recorded figure is a change in what start-up does, which a run must not
# paper over by rewriting the page.  --accept-startup-counts records it.
STARTUP_TOLERANCE = 0.005
STARTUP_SECTION = "Start-up instruction counts (callgrind)"


def _cells(row: str) -> list[str]:
    return [cell.strip() for cell in row.strip().strip("|").split("|")]


def recorded_startup_counts(page: str) -> dict[tuple[str, str], float]:
    """The start-up table of a docs/benchmarks.md *page*: (interpreter, state) -> millions."""
    rows = [line for line in sections(page).get(STARTUP_SECTION, "").splitlines()]
    rows = [line for line in rows if line.startswith("|")]
    if len(rows) < 3:
        return {}
    labels = _cells(rows[0])[1:]
    counts: dict[tuple[str, str], float] = {}
    for row in rows[2:]:  # past the header and its |---| line
        state, *cells = _cells(row)
        for label, cell in zip(labels, cells):
            if cell:  # "42.174", or "42.174 (±1.2k)" when the runs differed
                counts[(label, state)] = float(cell.split()[0])
    return counts


def measured_startup_counts(results: list[dict[str, Any]]) -> dict[tuple[str, str], float]:
    """(interpreter, state) -> millions of instructions, the median of a run's counts."""
    counts = {}
    for result in results:
        for state, runs in result.get("callgrind", {}).get("startup_runs", {}).items():
            if runs:
                counts[(result["label"], state)] = statistics.median(runs) / 1e6
    return counts


def startup_drifts(
    recorded: dict[tuple[str, str], float],
    measured: dict[tuple[str, str], float],
    tolerance: float = STARTUP_TOLERANCE,
) -> list[str]:
    """One message for each measured figure that moved more than *tolerance* from its record.

    Figures of interpreters or states the page does not record yet pass.
    """
    messages = []
    for (label, state), count in measured.items():
        before = recorded.get((label, state))
        if before is None or before <= 0:
            continue
        change = count / before - 1
        if abs(change) > tolerance:
            messages.append(
                f"start-up instruction count '{state}' on {label}: {count:.3f} M, "
                f"docs/benchmarks.md records {before:.3f} M ({change:+.3%}, "
                f"more than {tolerance:.1%} either way)"
            )
    return messages


def check_startup_counts(results: list[dict[str, Any]], accept: bool) -> bool:
    """Tell whether docs/benchmarks.md may be written; report every start-up figure that moved."""
    previous = ""
    if os.path.exists(MARKDOWN):
        with open(MARKDOWN, encoding="utf-8") as file:
            previous = file.read()
    drifts = startup_drifts(recorded_startup_counts(previous), measured_startup_counts(results))
    if not drifts:
        return True
    print("\n".join(drifts), file=sys.stderr)
    if accept:
        print("--accept-startup-counts: recording the new figures", file=sys.stderr)
        return True
    print(
        f"{MARKDOWN} is left as it was.  Find what changed start-up, or record the new "
        "figures on purpose: benchmarks/run_all.py --render --accept-startup-counts "
        f"(writes the page from this run's raw results in {RAW}).",
        file=sys.stderr,
    )
    return False


def write_markdown(text: str) -> None:
    """Write docs/benchmarks.md as *text*, keeping the hand-written sections of the old page."""
    previous = ""
    if os.path.exists(MARKDOWN):
        with open(MARKDOWN, encoding="utf-8") as file:
            previous = file.read()
    with open(MARKDOWN, "w", encoding="utf-8") as file:
        file.write(with_kept_sections(text, previous))


def render_again(quick: bool, accept: bool) -> int:
    """Write docs/benchmarks.md from the raw results a run left, measuring nothing.

    Returns the exit status: 1, with the page untouched, when a start-up
    count moved from its record and *accept* is false.
    """
    with open(os.path.join(RAW, "results.json"), encoding="utf-8") as file:
        results = json.load(file)
    run_path = os.path.join(RAW, "run.json")
    if os.path.exists(run_path):
        with open(run_path, encoding="utf-8") as file:
            run = json.load(file)
    else:  # a run from before run.json existed
        run = {"elapsed": sum(r["seconds"] for r in results), "quick": quick, "failed": []}
    if not check_startup_counts(results, accept):
        return 1
    text = markdown(results, run["elapsed"], run["quick"])
    if run["failed"]:
        text += "\nFailed, not in the tables:\n\n" + "".join(f"- {f}\n" for f in run["failed"])
    if os.path.exists(CHART):
        text += "\n![benchmarks](benchmarks.png)\n"
    write_markdown(text)
    print(f"wrote {MARKDOWN}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="comma-separated keys, e.g. 3.12,3.14,pypy3.11 or pypy")
    parser.add_argument("--quick", action="store_true", help="shorter settings, ~10 minutes")
    parser.add_argument(
        "--render",
        action="store_true",
        help="only write docs/benchmarks.md again from the last run's raw results",
    )
    parser.add_argument(
        "--pyperformance",
        action="store_true",
        help="also run bench_pyperformance.py (CPython only, ~5-15 min each on an idle core; not CI)",
    )
    parser.add_argument(
        "--accept-startup-counts",
        action="store_true",
        help="record start-up instruction counts that moved more than "
        f"{STARTUP_TOLERANCE:.1%} from docs/benchmarks.md's (without it such a run fails)",
    )
    args = parser.parse_args()
    if args.render:
        return render_again(args.quick, args.accept_startup_counts)
    started = time.monotonic()
    found = interpreters(args.only.split(",") if args.only else None)
    if not found:
        sys.exit("no interpreter to benchmark")
    # The newest host CPython draws the chart (matplotlib has wheels for it).
    plotter = next((i for i in reversed(found) if not i.chroot and "pypy" not in i.key), None)
    results = []
    failed: list[str] = []
    for interp in found:
        try:
            meta = setup(interp, plotting=interp is plotter)
            results.append(run_interpreter(interp, meta, args.quick))
        except (subprocess.CalledProcessError, RuntimeError, OSError, ValueError) as error:
            # One broken interpreter must not cost the others' results.
            print(f"== {interp.key} ({interp.where}) failed: {error}", flush=True)
            failed.append(f"{interp.key} ({interp.where}): {error}")
            if interp is plotter:
                plotter = None
    if not results:
        sys.exit("every interpreter failed")
    os.makedirs(RAW, exist_ok=True)
    with open(os.path.join(RAW, "results.json"), "w", encoding="utf-8") as file:
        json.dump(results, file, indent=1)
    elapsed = time.monotonic() - started
    with open(os.path.join(RAW, "run.json"), "w", encoding="utf-8") as file:
        json.dump({"elapsed": elapsed, "quick": args.quick, "failed": failed}, file)
    if not check_startup_counts(results, args.accept_startup_counts):
        return 1
    text = markdown(results, elapsed, args.quick)
    if failed:
        text += "\nFailed, not in the tables:\n\n" + "".join(f"- {f}\n" for f in failed)
    if args.pyperformance:
        tables = os.path.join(RAW, "pyperformance.md")
        argv = [sys.executable, os.path.join(BENCHMARKS, "bench_pyperformance.py")]
        argv += ["--markdown-out", tables, *(["--quick"] if args.quick else [])]
        argv += ["--only", args.only] if args.only else []
        if subprocess.run(argv, check=False).returncode == 0:
            with open(tables, encoding="utf-8") as file:
                text += "\n## Whole-program cost on pyperformance (callgrind)\n\n" + file.read()
    if plotter is not None:
        plot(results, plotter)
        text += "\n![benchmarks](benchmarks.png)\n"
    write_markdown(text)
    print(text)
    print(f"wrote {MARKDOWN}" + (f" and {CHART}" if plotter else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())

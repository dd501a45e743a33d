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
import re
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Any

from _report import (
    MARKDOWN,
    PYPERF_ARGS,
    PYPERF_QUICK,
    RAW,
    STARTUP_TOLERANCE,
    TARGETS,
    check_startup_counts,
    markdown,
    write_markdown,
)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCHMARKS = os.path.join(ROOT, "benchmarks")
VENVS = os.path.join(ROOT, ".venv-bench")
CHART = os.path.join(ROOT, "docs", "benchmarks.png")
CHROOT_ROOT = "/repo"  # where tools/interpreters.sh mounts the repository


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
        f"{STARTUP_TOLERANCE * 100:.1f}%% from docs/benchmarks.md's (without it such a run fails)",
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

"""Run every benchmark on every available interpreter; write docs/benchmarks.md and .png.

Interpreters: ``$(pyenv root)/versions/3.{8..13}.*/bin/python`` and ``pypy3``,
each used only if ``pyperf`` imports there (``python -m pip install pyperf``).
The C extensions are built in place (``setup.py build_ext --inplace``) for a
CPython that lacks the native engine's.  Per interpreter this runs ``bench_module_access.py``
(pyperf, short settings) and ``bench_import.py`` (interleaved fresh processes),
then writes the markdown table and, with matplotlib in any of the
interpreters, the chart.  Raw results go to ``build/benchmarks/``.

    python benchmarks/run_all.py [--only 3.12,3.13] [--rounds 11]
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCHMARKS = os.path.join(ROOT, "benchmarks")
RAW = os.path.join(ROOT, "build", "benchmarks")
MARKDOWN = os.path.join(ROOT, "docs", "benchmarks.md")
CHART = os.path.join(ROOT, "docs", "benchmarks.png")

# Short pyperf settings: 16 cases x 4 rounds of one process each keep one
# interpreter near a minute on the shared 2-core machine, all of them under
# ten minutes.  Rounds interleave the cases in time (drift hits all alike) and
# spread each over several processes (hash seed, memory layout).
PYPERF_ARGS = [
    "--quiet",
    "-p",
    "1",
    "-n",
    "3",
    "-w",
    "1",
    "--min-time",
    "0.05",
    "--rounds",
    "4",
]

# (label, numerator case, denominator case, target, versions it applies to)
TARGETS: list[tuple[str, str, str, float, str]] = [
    ("read: hooked module / plain module", "{default}/read", "plain/read", 1.05, "3.11-3.13"),
    (
        "hooked write / hand-written workaround",
        "{default}/hooked-write",
        "workaround/hooked-write",
        0.65,
        "all",
    ),
    (
        "write without hooks: installed / not installed",
        "{default}/unhooked-write",
        "plain/unhooked-write",
        1.25,
        "all",
    ),
    ("import ~150 stdlib modules: on / off", "import/{default}", "import/off", 1.03, "all"),
]


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PEP726HOOK")}
    env["PYTHONPATH"] = os.path.join(ROOT, "src")
    return env


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


def interpreters(only: list[str] | None) -> list[str]:
    """Return the interpreters to benchmark, oldest first."""
    found: list[str] = []
    root = pyenv_root()
    for minor in range(8, 14):
        if only and f"3.{minor}" not in only:
            continue
        matches = sorted(glob.glob(f"{root}/versions/3.{minor}.*/bin/python")) if root else []
        if matches:
            found.append(matches[-1])
    pypy = shutil.which("pypy3")
    if pypy and (not only or "pypy" in only):
        found.append(pypy)
    return found


def _probe(python: str, code: str) -> bool:
    completed = subprocess.run(
        [python, "-c", code], capture_output=True, env=_env(), cwd=ROOT, check=False
    )
    return completed.returncode == 0


def describe(python: str) -> str:
    """Return e.g. ``CPython 3.12.1`` for *python*."""
    completed = subprocess.run(
        [
            python,
            "-c",
            "import platform; print(platform.python_implementation(), platform.python_version())",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return completed.stdout.strip()


def ensure_extension(python: str) -> None:
    """Build pep726hook._native in place for a CPython that lacks it."""
    if not _probe(
        python, "import platform,sys; sys.exit(platform.python_implementation()!='CPython')"
    ):
        return
    if _probe(python, "import pep726hook._native"):
        return
    subprocess.run(
        [python, "setup.py", "-q", "build_ext", "--inplace"],
        cwd=ROOT,
        env=_env(),
        capture_output=True,
        check=False,
    )


def run_interpreter(python: str, rounds: int) -> dict[str, Any]:
    """Run both benchmarks on *python*; return medians (seconds) and metadata."""
    label = describe(python)
    tag = label.replace(" ", "-")
    os.makedirs(RAW, exist_ok=True)
    access_json = os.path.join(RAW, f"access-{tag}.json")
    import_json = os.path.join(RAW, f"import-{tag}.json")
    for path in (access_json, import_json):
        if os.path.exists(path):
            os.remove(path)
    print(f"== {label}: module access (pyperf)", flush=True)
    subprocess.run(
        [
            python,
            os.path.join(BENCHMARKS, "bench_module_access.py"),
            *PYPERF_ARGS,
            "-o",
            access_json,
        ],
        env=_env(),
        cwd=ROOT,
        check=True,
    )
    print(f"== {label}: import time", flush=True)
    subprocess.run(
        [
            python,
            os.path.join(BENCHMARKS, "bench_import.py"),
            "--rounds",
            str(rounds),
            "--json-out",
            import_json,
        ],
        env=_env(),
        cwd=ROOT,
        check=True,
    )
    medians = read_pyperf(access_json)
    with open(import_json, encoding="utf-8") as file:
        imports = json.load(file)
    for name, seconds in imports["median_seconds"].items():
        medians[f"import/{name}"] = seconds
    return {
        "label": label,
        "default": imports["default_engine"],
        "modules": imports["modules"],
        "medians": medians,
    }


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


def ratio(result: dict[str, Any], numerator: str, denominator: str) -> float | None:
    """Return the ratio of two medians of *result*, or None if one is missing."""
    medians = result["medians"]
    top = medians.get(numerator.format(default=result["default"]))
    bottom = medians.get(denominator.format(default=result["default"]))
    if top is None or bottom is None:
        return None
    return float(top / bottom)


def _applies(scope: str, label: str) -> bool:
    if scope == "all":
        return True
    version = tuple(int(p) for p in label.split()[1].split(".")[:2])
    return label.startswith("CPython") and (3, 11) <= version <= (3, 13)


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


def markdown(results: list[dict[str, Any]], elapsed: float) -> str:
    """Return docs/benchmarks.md for *results*."""
    heads = [r["label"] for r in results]
    lines = [
        "# Benchmarks",
        "",
        "Generated by `python benchmarks/run_all.py` "
        f"({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {platform.machine()}, "
        f"{os.cpu_count()} CPUs, shared and noisy; whole run {elapsed / 60:.1f} min).",
        "Module access: pyperf medians of one operation (`"
        + " ".join(PYPERF_ARGS)
        + "`), ns.  Import: median wall-clock time of a fresh process importing "
        f"{results[0]['modules'] if results else '~150'} standard library modules, "
        "interleaved runs, ms.",
        "",
        "Configurations: `plain` = no pep726hook; `workaround` = the hand-written "
        'ModuleType subclass of PEP 726\'s "Existing Options"; `class` / `native` = '
        "pep726hook with that engine; `native-alt` = the native slot design *not* used "
        "on that version (direct C slot on 3.8-3.12, `slot_tp_setattro` on 3.13; see "
        "`docs/native-engine.md`).  The default engine is `native` on CPython and "
        "`class` on PyPy.",
        "",
        "## Ratios against the targets",
        "",
        "| ratio | target | " + " | ".join(heads) + " |",
        "|---|---|" + "---|" * len(heads),
    ]
    for label, top, bottom, target, scope in TARGETS:
        cells = []
        for result in results:
            value = ratio(result, top, bottom)
            if value is None:
                cells.append("n/a")
                continue
            mark = (
                ""
                if not _applies(scope, result["label"])
                else (" ✅" if value <= target else " ❌")
            )
            cells.append(f"{value:.2f}{mark}")
        scope_text = "" if scope == "all" else f" ({scope})"
        lines.append(f"| {label} | <= {target}{scope_text} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "## Medians",
        "",
        "| case | " + " | ".join(heads) + " |",
        "|---|" + "---|" * len(heads),
    ]
    for case in CASE_ORDER:
        cells = []
        for result in results:
            value = result["medians"].get(case)
            cells.append("" if value is None else f"{value * 1e9:.1f}")
        lines.append(f"| {case} (ns) | " + " | ".join(cells) + " |")
    for variant in ("off", "native", "class"):
        cells = []
        for result in results:
            value = result["medians"].get(f"import/{variant}")
            cells.append("" if value is None else f"{value * 1e3:.1f}")
        lines.append(f"| import/{variant} (ms) | " + " | ".join(cells) + " |")
    lines.append("")
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
fig, (left, right) = plt.subplots(1, 2, figsize=(15, 5.5))
width = 0.8 / max(1, len(results))
for i, result in enumerate(results):
    values = [result["medians"].get(c, 0) * 1e9 for c in cases]
    left.bar([x + i * width for x in range(len(cases))], values, width, label=result["label"])
left.set_xticks([x + width * (len(results) - 1) / 2 for x in range(len(cases))])
left.set_xticklabels(cases, rotation=35, ha="right", fontsize=8)
left.set_ylabel("ns per operation (median)")
left.set_title("Module attribute access")
left.legend(fontsize=7)
for i, result in enumerate(results):
    values = [t["values"][i] or 0 for t in targets]
    right.bar([x + i * width for x in range(len(targets))], values, width, label=result["label"])
for x, t in enumerate(targets):
    right.hlines(t["target"], x - 0.1, x + 0.9, colors="red", linestyles="dashed")
right.set_xticks([x + width * (len(results) - 1) / 2 for x in range(len(targets))])
right.set_xticklabels([t["label"] for t in targets], rotation=20, ha="right", fontsize=8)
right.set_ylabel("ratio (red dashes: target)")
right.set_title("Ratios of the default engine")
fig.tight_layout()
fig.savefig(out, dpi=110)
"""


def plot(results: list[dict[str, Any]], pythons: list[str]) -> str | None:
    """Draw docs/benchmarks.png with an interpreter that has matplotlib; return it."""
    candidates = [sys.executable, *pythons]
    plotter = next((p for p in candidates if _probe(p, "import matplotlib")), None)
    if plotter is None:
        return None
    targets = [
        {
            "label": label,
            "target": target,
            "values": [ratio(result, top, bottom) for result in results],
        }
        for label, top, bottom, target, _ in TARGETS
    ]
    results_path = os.path.join(RAW, "results.json")
    targets_path = os.path.join(RAW, "targets.json")
    with open(results_path, "w", encoding="utf-8") as file:
        json.dump(results, file, indent=1)
    with open(targets_path, "w", encoding="utf-8") as file:
        json.dump(targets, file, indent=1)
    subprocess.run(
        [plotter, "-c", PLOT_CODE, results_path, targets_path, CHART], check=True, cwd=ROOT
    )
    return plotter


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="comma-separated versions, e.g. 3.12,3.13,pypy")
    parser.add_argument("--rounds", type=int, default=11, help="import benchmark rounds")
    args = parser.parse_args()
    started = time.monotonic()
    pythons = interpreters(args.only.split(",") if args.only else None)
    usable = []
    skipped = []
    for python in pythons:
        if not _probe(python, "import pyperf"):
            print(f"skipping {python}: pyperf is not installed there", flush=True)
            skipped.append(python)
            continue
        ensure_extension(python)
        usable.append(python)
    results = [run_interpreter(python, args.rounds) for python in usable]
    os.makedirs(os.path.dirname(MARKDOWN), exist_ok=True)
    os.makedirs(RAW, exist_ok=True)
    plotter = plot(results, usable)
    text = markdown(results, time.monotonic() - started)
    if skipped:
        text += "\nSkipped (pyperf not installed there): " + ", ".join(skipped) + "\n"
    if plotter is None:
        text += "\n(No interpreter had matplotlib: chart not drawn.)\n"
    else:
        text += "\n![benchmarks](benchmarks.png)\n"
    with open(MARKDOWN, "w", encoding="utf-8") as file:
        file.write(text)
    print(text)
    print(f"wrote {MARKDOWN}" + (f" and {CHART}" if plotter else ""))


if __name__ == "__main__":
    main()

"""The report of benchmarks/run_all.py: docs/benchmarks.md from a run's raw results.

What each ratio is held to (:data:`TARGETS`), the page's tables and notes
(:func:`markdown`), the hand-written sections a new page keeps from the old one
(:data:`KEPT_SECTIONS`), and the start-up instruction counts the page records,
which a run may not move unnoticed (:func:`check_startup_counts`).  Measuring
and plotting stay in run_all.py; this module reads and writes text only.
"""

from __future__ import annotations

import os
import platform
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Any, Callable

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RAW = os.path.join(ROOT, "build", "benchmarks")
MARKDOWN = os.path.join(ROOT, "docs", "benchmarks.md")

# Short pyperf settings (run_all.py runs with them; the page says which):
# 16 cases x 4 rounds of one process each keep one interpreter near a minute
# on the shared 2-core machine.  Rounds interleave
# the cases in time (drift hits all alike) and spread each over several
# processes (hash seed, memory layout).
PYPERF_ARGS = ["--quiet", "-p", "1", "-n", "3", "-w", "1", "--min-time", "0.05", "--rounds", "4"]
PYPERF_QUICK = ["--quiet", "-p", "1", "-n", "2", "-w", "1", "--min-time", "0.02", "--rounds", "2"]


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


# Sections of docs/benchmarks.md written by hand from other scripts' figures
# (bench_startup.py --runner, bench_pyperformance.py): a run keeps them from the
# page it replaces, unless it wrote a section of that title itself.
KEPT_SECTIONS = (
    "Class engine start-up",
    "Runner start-up",
    "Whole-program cost on pyperformance (callgrind)",
    "What a library costs the rest of a process",  # by hand
    "A store without hooks on 3.10 and 3.11",  # by hand
    "Scan (`pep726hook scan` against `grep -rl`)",  # bench_scan.py
    "PEP 562 `__getattr__` modules and the fast-getattr switch",  # bench_fast_getattr.py
    "Start-up with `PEP726HOOK=1`: what bounds it",  # bench_callgrind.py, by hand
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

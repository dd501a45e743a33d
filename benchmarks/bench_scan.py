"""Benchmark: ``pep726hook scan --stdlib`` against ``grep -rl __setattr__`` over the same files.

Run as ``python benchmarks/bench_scan.py [--python PYTHON] [--runs N] [--jobs N]
[--src DIR] [--without-memfind]``.  The scan covers the whole environment of PYTHON (its
standard library plus every distribution on its ``sys.path``); grep reads
exactly the ``.py`` files the scan reads.  Both run as fresh processes,
alternately, after one warm-up run each (so both find the files in the page
cache, and the scanner's own modules are byte-compiled as in an
installation), and the script prints a markdown table of medians and their
ratio.  The target is a ratio <= 3.

The scanner is imported from ``src/``: its optional C search
(``pep726hook._scan._memfind``) is used when it has been built in place for PYTHON
(``PYTHON setup.py build_ext --inplace``); ``--without-memfind`` measures the
``bytes.find`` fallback instead.  The first line of output says which ran.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SRC = str(Path(__file__).resolve().parent.parent / "src")

LIST_FILES = (
    "import sys\n"
    "from pep726hook._scan import collect_files\n"
    "sys.stdout.write('\\0'.join(f.path for f in collect_files(stdlib=True)))\n"
)
SCAN = "from pep726hook._scan import main; raise SystemExit(main({argv!r}))"
# Makes "import pep726hook._scan._memfind" fail, as where the extension is not built.
WITHOUT_MEMFIND = "import sys; sys.modules['pep726hook._scan._memfind'] = None; "
SEARCH = (
    "{prefix}from pep726hook._scan import _filter; "
    "print('memmem (_memfind)' if _filter.find.__module__ == 'pep726hook._scan._memfind' "
    "else 'bytes.find')"
)


def timed(
    command: list[str], env: dict[str, str], stdin_path: str | None = None
) -> tuple[float, float]:
    """Wall-clock and CPU (user + system, children included) seconds of one run of *command*."""
    with open(stdin_path or os.devnull, "rb") as stdin:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(command, stdin=stdin, stdout=subprocess.DEVNULL, env=env, check=False)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default=sys.executable, help="interpreter to benchmark")
    parser.add_argument("--runs", type=int, default=7, help="timed runs of each command")
    parser.add_argument("--jobs", type=int, help="pass --jobs N to the scan")
    parser.add_argument(
        "--src",
        default=SRC,
        help="the src/ directory to import the scanner from (default: this checkout's); another"
        " checkout's, to compare two versions under the same load",
    )
    parser.add_argument(
        "--without-memfind",
        action="store_true",
        help="measure the bytes.find fallback even where the C search is built",
    )
    args = parser.parse_args()
    if shutil.which("grep") is None or shutil.which("xargs") is None:
        parser.error("grep and xargs are needed")

    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join(filter(None, [args.src, os.environ.get("PYTHONPATH")])),
    )
    # An installed package has its .pyc files; without them every run would
    # recompile the scanner itself, which is not what a user pays for.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    listing = subprocess.run(
        [args.python, "-c", LIST_FILES], env=env, capture_output=True, check=True
    ).stdout
    paths = sorted(set(listing.split(b"\0")) - {b""})
    size = sum(os.path.getsize(p) for p in paths if os.path.exists(p))
    version = subprocess.run(
        [
            args.python,
            "-c",
            "import sys, platform; print(platform.python_implementation(), sys.version.split()[0])",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()

    scan_argv = ["--stdlib"] + (["--jobs", str(args.jobs)] if args.jobs is not None else [])
    prefix = WITHOUT_MEMFIND if args.without_memfind else ""
    scan = [args.python, "-c", prefix + SCAN.format(argv=scan_argv)]
    search = subprocess.run(
        [args.python, "-c", SEARCH.format(prefix=prefix)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    # xargs feeds grep the same NUL-separated file list the scan reads.
    grep = ["xargs", "-0", "grep", "-rl", "--", "__setattr__"]
    with tempfile.NamedTemporaryFile("wb", suffix=".lst", delete=False) as handle:
        handle.write(b"\0".join(paths))
    try:
        timed(scan, env)
        timed(grep, env, handle.name)
        scan_runs: list[tuple[float, float]] = []
        grep_runs: list[tuple[float, float]] = []
        for _ in range(args.runs):
            scan_runs.append(timed(scan, env))
            grep_runs.append(timed(grep, env, handle.name))
    finally:
        os.unlink(handle.name)

    scan_times = [wall for wall, _ in scan_runs]
    grep_times = [wall for wall, _ in grep_runs]
    scan_median = statistics.median(scan_times)
    grep_median = statistics.median(grep_times)
    scan_cpu = statistics.median(cpu for _, cpu in scan_runs)
    grep_cpu = statistics.median(cpu for _, cpu in grep_runs)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    scan_label = f"`pep726hook scan {' '.join(scan_argv)}`"
    print(
        f"{version}, {len(paths)} .py files, {size / 1e6:.1f} MB, {os.cpu_count()} CPUs, "
        f"scanner from {args.src}, "
        f"load average {load:.2f}, {args.runs} runs each, search: {search}\n"
    )
    print("| command | median wall s | min wall s | median CPU s |")
    print("|---|---:|---:|---:|")
    print(f"| {scan_label} | {scan_median:.3f} | {min(scan_times):.3f} | {scan_cpu:.3f} |")
    print(
        f"| `grep -rl __setattr__` (same files) | {grep_median:.3f} | {min(grep_times):.3f}"
        f" | {grep_cpu:.3f} |"
    )
    print(
        f"\nratio of medians, scan / grep: **{scan_median / grep_median:.2f}x** wall-clock"
        f" (target <= 3x), {scan_cpu / grep_cpu:.2f}x CPU time"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

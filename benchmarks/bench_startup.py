"""Start-up cost of the ``pep726hook.pth`` line when ``PEP726HOOK`` is unset.

Builds the wheel for the running interpreter (or takes ``--venv`` with it
installed already), then times ``python -c pass`` in that venv with the
``.pth`` file present and with it moved away, interleaving the two so that
drift on the machine hits both alike.  Prints the medians and their ratio;
the goal is a ratio within 1.01.  With ``--activated`` it also times start-up
with ``PEP726HOOK=1`` (the hook really installed), for information.

    python benchmarks/bench_startup.py [--runs 300] [--venv DIR] [--activated]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PTH = "pep726hook.pth"
_SCRUBBED = ("PEP726HOOK", "PEP726HOOK_ENGINE", "PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP")


def clean_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _SCRUBBED}
    env.update(extra or {})
    return env


def make_venv(workdir: Path) -> Path:
    """Build the wheel from a copy of the tree and install it into a new venv."""
    source = workdir / "source"
    shutil.copytree(
        ROOT,
        source,
        ignore=shutil.ignore_patterns(
            ".git", "build", "dist", "*.egg-info", "__pycache__", ".nox", ".venv*", "*.so"
        ),
    )
    wheels = workdir / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(wheels), str(source)],
        check=True,
        env=clean_env(),
    )
    (wheel,) = wheels.glob("pep726hook-*.whl")
    venv = workdir / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "-q",
            "--no-deps",
            str(wheel),
        ],
        check=True,
        env=clean_env(),
    )
    return venv


def site_packages(python: Path) -> Path:
    out = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
        env=clean_env(),
    ).stdout
    return Path(out.strip())


def time_once(python: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run([str(python), "-c", "pass"], check=True, env=env)
    return time.perf_counter() - start


def measure(python: Path, runs: int, activated: bool) -> dict[str, list[float]]:
    pth = site_packages(python) / PTH
    parked = pth.with_suffix(".pth.off")
    assert pth.exists(), f"{pth} is missing: is the wheel installed in this venv?"
    env = clean_env()
    env_on = clean_env({"PEP726HOOK": "1"})
    results: dict[str, list[float]] = {"with .pth": [], "without .pth": []}
    if activated:
        results["PEP726HOOK=1"] = []
    for _ in range(10):  # warm the file system cache and .pyc files
        time_once(python, env)
        time_once(python, env_on)
    try:
        for index in range(runs):
            order = ["with .pth", "without .pth"]
            if index % 2:
                order.reverse()
            for label in order:
                if label == "with .pth":
                    if parked.exists():
                        parked.rename(pth)
                elif pth.exists():
                    pth.rename(parked)
                results[label].append(time_once(python, env))
            if activated:
                if parked.exists():
                    parked.rename(pth)
                results["PEP726HOOK=1"].append(time_once(python, env_on))
    finally:
        if parked.exists():
            parked.rename(pth)
    return results


ADDPACKAGE = """\
import site, statistics, sys, time
directory = sys.argv[1]
times = []
for _ in range(3000):
    start = time.perf_counter()
    site.addpackage(directory, "pep726hook.pth", set())
    times.append(time.perf_counter() - start)
print(statistics.median(times))
"""


def line_cost(python: Path) -> float:
    """Median seconds site spends on our .pth (open, read, exec the line), in-process.

    Wall-clock medians of whole start-ups carry a few tenths of a millisecond
    of noise on a busy machine; this isolates what the file itself costs.
    """
    out = subprocess.run(
        [str(python), "-c", ADDPACKAGE, str(site_packages(python))],
        check=True,
        capture_output=True,
        text=True,
        env=clean_env(),
    ).stdout
    return float(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=300, help="runs of each variant")
    parser.add_argument("--venv", type=Path, help="a venv with pep726hook installed")
    parser.add_argument("--activated", action="store_true", help="also time PEP726HOOK=1")
    options = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="pep726hook-bench-") as tmp:
        venv = options.venv or make_venv(Path(tmp))
        python = venv / "bin" / "python"
        version = subprocess.run(
            [
                str(python),
                "-c",
                "import sys; print(sys.version.split()[0], sys.implementation.name)",
            ],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        results = measure(python, options.runs, options.activated)
        cost = line_cost(python)
    medians = {label: statistics.median(times) for label, times in results.items()}
    base = medians["without .pth"]
    print(f"python {version}, {options.runs} runs each of `python -c pass`")
    for label, median in medians.items():
        print(f"  {label:14} median {median * 1e3:8.3f} ms   ratio {median / base:6.4f}")
    ratio = medians["with .pth"] / base
    print(f"start-up with the .pth (PEP726HOOK unset) / without: {ratio:.4f}")
    print(
        f"site's own cost of the .pth, in-process: {cost * 1e6:.1f} us median "
        f"= {cost / base:.2%} of start-up (estimated ratio {(base + cost) / base:.4f})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

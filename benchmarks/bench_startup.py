"""Start-up cost of the ``pep726hook.pth`` line when ``PEP726HOOK`` is unset.

Builds the wheel for the running interpreter (or takes ``--venv`` with it
installed already), then times ``python -c pass`` in that venv with the
``.pth`` file present and with it moved away, interleaving the two so that
drift on the machine hits both alike.  Prints the medians of wall-clock and
of CPU time (the child's own user + system time, which other load on the
machine disturbs far less) and their ratios; the goal is a ratio within 1.01.  A ``.pth`` holding only a comment is timed
as well: it shows what site charges for the file itself before our line runs.  With ``--activated`` it also times start-up
with ``PEP726HOOK=1`` (the hook really installed), for information.

    python benchmarks/bench_startup.py [--runs 300] [--venv DIR] [--activated]

On the shared machine times drift more than the 1.005 target allows: the
targets are judged on instruction counts, ``bench_callgrind.py`` (run by
``run_all.py``).

With ``--runner`` it also times the runner side by side with python itself,
interleaved in the same way: ``python -m pep726hook -c pass`` against
``python -c pass``, ``python -m pep726hook -m PACKAGE`` against ``python -m
PACKAGE`` (an empty package), and a small script against ``python
script.py``; and,
where valgrind is installed (``--callgrind``), it counts their instructions,
with ``python -m`` of an empty package beside them: the part of the runner's
cost that any ``python -m`` pays before the package's first line (runpy and
what it imports), which no work on the runner can remove.

    python benchmarks/bench_startup.py --runner [--callgrind] [--venv DIR]
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


def time_once(python: Path, env: dict[str, str]) -> tuple[float, float]:
    """Run ``python -c pass`` once; return its wall-clock and CPU (user + system) seconds.

    CPU time is what the child itself consumed, so it is far less disturbed by
    other load on the machine than wall-clock time.
    """
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([str(python), "-c", "pass"], check=True, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def measure(python: Path, runs: int, activated: bool) -> dict[str, list[tuple[float, float]]]:
    """Time each variant *runs* times, interleaved, in alternating order.

    Variants: our ``.pth`` as installed; no ``.pth``; a ``.pth`` of the same
    name holding only a comment, which shows what site charges for any file
    before our line runs (in a venv with ``lib64 -> lib`` site reads every
    ``.pth`` twice, cpython#75723); and, with *activated*, ``PEP726HOOK=1``.
    """
    pth = site_packages(python) / PTH
    assert pth.exists(), f"{pth} is missing: is the wheel installed in this venv?"
    ours = pth.read_text(encoding="utf-8")
    env = clean_env()
    env_on = clean_env({"PEP726HOOK": "1"})
    # label -> (content of the .pth, or None for no file; environment)
    variants: dict[str, tuple[str | None, dict[str, str]]] = {
        "with .pth": (ours, env),
        "without .pth": (None, env),
        "comment .pth": ("# placeholder of the same size on disk\n", env),
    }
    if activated:
        variants["PEP726HOOK=1"] = (ours, env_on)
    results: dict[str, list[tuple[float, float]]] = {label: [] for label in variants}
    for _ in range(10):  # warm the file system cache and .pyc files
        time_once(python, env)
        time_once(python, env_on)
    labels = list(variants)
    try:
        for index in range(runs):
            for label in labels if index % 2 else reversed(labels):
                content, variant_env = variants[label]
                if content is None:
                    pth.unlink(missing_ok=True)
                else:
                    pth.write_text(content, encoding="utf-8")
                results[label].append(time_once(python, variant_env))
    finally:
        pth.write_text(ours, encoding="utf-8")
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


def python_version(python: Path) -> str:
    return subprocess.run(
        [str(python), "-c", "import sys; print(sys.version.split()[0], sys.implementation.name)"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()


def _tenth_percentile(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 10]


# What a program does at the least: the runner's share of its start-up shows.
SCRIPT = "pass\n"
EMPTY_PACKAGE = "pep726hook_bench_empty_package"


def runner_commands(python: Path, workdir: Path) -> dict[str, list[str]]:
    """The command lines compared: python's own and the runner's, for -c code and a script."""
    script = workdir / "script.py"
    script.write_text(SCRIPT, encoding="utf-8")
    return {
        "python -c pass": [str(python), "-c", "pass"],
        f"python -m {EMPTY_PACKAGE}": [str(python), "-m", EMPTY_PACKAGE],
        "python -m pep726hook -c pass": [str(python), "-m", "pep726hook", "-c", "pass"],
        f"python -m pep726hook -m {EMPTY_PACKAGE}": [
            str(python),
            "-m",
            "pep726hook",
            "-m",
            EMPTY_PACKAGE,
        ],
        "python script.py": [str(python), str(script)],
        "python -m pep726hook script.py": [str(python), "-m", "pep726hook", str(script)],
    }


def install_empty_package(python: Path) -> None:
    """Put an empty package with an empty ``__main__`` into the venv, compiled as pip would."""
    package = site_packages(python) / EMPTY_PACKAGE
    package.mkdir(exist_ok=True)
    for name in ("__init__.py", "__main__.py"):
        (package / name).write_text("", encoding="utf-8")
    subprocess.run(
        [str(python), "-m", "compileall", "-q", str(package)], check=True, env=clean_env()
    )


def time_command(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Run *argv* once; return its wall-clock and CPU (user + system) seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, check=True, env=env, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def measure_runner(
    commands: dict[str, list[str]], runs: int
) -> dict[str, list[tuple[float, float]]]:
    """Time each command *runs* times, interleaved, in alternating order."""
    env = clean_env()
    results: dict[str, list[tuple[float, float]]] = {label: [] for label in commands}
    labels = list(commands)
    for label in labels * 3:  # warm the file system cache and .pyc files
        time_command(commands[label], env)
    for index in range(runs):
        for label in labels if index % 2 else reversed(labels):
            results[label].append(time_command(commands[label], env))
    return results


def instructions(argv: list[str], cwd: Path) -> int:
    """Instructions callgrind counts for *argv*, in a small fixed environment."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ.get("HOME", "/root"),
        "LANG": "C.UTF-8",
        "PYTHONHASHSEED": "0",
    }
    result = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *argv],
        capture_output=True,
        text=True,
        env=env,
        cwd=str(cwd),
        check=True,
    )
    for line in result.stderr.splitlines():
        if "Collected :" in line:
            return int(line.rsplit(":", 1)[1])
    raise RuntimeError(f"no instruction count from callgrind:\n{result.stderr}")


def report_runner(
    commands: dict[str, list[str]], runs: int, callgrind: bool, workdir: Path
) -> None:
    """Print the runner's start-up beside python's: time medians and instruction counts."""
    # Each runner command and the python command it stands in for.
    pairs = {
        "python -m pep726hook -c pass": "python -c pass",
        f"python -m {EMPTY_PACKAGE}": "python -c pass",
        f"python -m pep726hook -m {EMPTY_PACKAGE}": f"python -m {EMPTY_PACKAGE}",
        "python -m pep726hook script.py": "python script.py",
    }
    if runs:
        results = measure_runner(commands, runs)
        print(f"runner, {runs} runs each, interleaved (median; ratio to python's own)")
        for kind, index in (("wall-clock", 0), ("CPU time", 1)):
            medians = {
                label: statistics.median(sample[index] for sample in samples)
                for label, samples in results.items()
            }
            print(f"  {kind}:")
            for label, value in medians.items():
                base = pairs.get(label)
                ratio = f"   ratio {value / medians[base]:6.3f}" if base else ""
                print(f"    {label:56} {value * 1e3:8.2f} ms{ratio}")
    if callgrind:
        if shutil.which("valgrind") is None:
            print("runner instructions: valgrind is not installed")
            return
        counts = {label: instructions(argv, workdir) for label, argv in commands.items()}
        print("runner, instructions (callgrind, PYTHONHASHSEED=0; ratio to python's own)")
        for label, count in counts.items():
            base = pairs.get(label)
            ratio = f"   ratio {count / counts[base]:6.3f}" if base else ""
            print(f"    {label:56} {count / 1e6:8.2f} M{ratio}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=300, help="runs of each variant")
    parser.add_argument("--venv", type=Path, help="a venv with pep726hook installed")
    parser.add_argument("--activated", action="store_true", help="also time PEP726HOOK=1")
    parser.add_argument(
        "--runner", action="store_true", help="time the runner beside python, not the .pth"
    )
    parser.add_argument(
        "--callgrind", action="store_true", help="with --runner: also count instructions"
    )
    options = parser.parse_args(argv)
    if options.runner:
        with tempfile.TemporaryDirectory(prefix="pep726hook-bench-") as tmp:
            venv = (options.venv or make_venv(Path(tmp))).resolve()
            python = venv / "bin" / "python"
            install_empty_package(python)
            commands = runner_commands(python, Path(tmp))
            print(f"python {python_version(python)}")
            report_runner(commands, options.runs, options.callgrind, Path(tmp))
        return 0
    with tempfile.TemporaryDirectory(prefix="pep726hook-bench-") as tmp:
        venv = options.venv or make_venv(Path(tmp))
        python = venv / "bin" / "python"
        version = python_version(python)
        results = measure(python, options.runs, options.activated)
        cost = line_cost(python)
    print(f"python {version}, {options.runs} runs each of `python -c pass`")
    ratios = {}
    # The median, and the 10th percentile: load from elsewhere on the machine
    # only ever adds time, so a low percentile is the steadier estimate.
    for kind, index in (("wall-clock", 0), ("CPU time", 1)):
        for statistic, pick in (("median", statistics.median), ("p10", _tenth_percentile)):
            values = {
                label: pick([sample[index] for sample in samples])
                for label, samples in results.items()
            }
            base = values["without .pth"]
            print(f"  {kind}, {statistic}:")
            for label, value in values.items():
                print(f"    {label:14} {value * 1e3:8.3f} ms   ratio {value / base:6.4f}")
            ratios[f"{kind} {statistic}"] = values["with .pth"] / base
            if (kind, statistic) == ("CPU time", "median"):
                cpu_base = base
    print(
        "start-up with the .pth (PEP726HOOK unset) / without: "
        + ", ".join(f"{ratio:.4f} ({name})" for name, ratio in ratios.items())
    )
    print(
        f"site's own cost of the .pth, in-process: {cost * 1e6:.1f} us median "
        f"= {cost / cpu_base:.2%} of start-up CPU time"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

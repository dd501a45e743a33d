"""Run CPython's own import-system test suites plain and under pep726hook; compare.

    python tools/cpython_import_tests.py [--engines auto,class] [--jobs 2] [TEST ...]

For the interpreter running this script (pep726hook must be installed in it),
``python -m test --junit-xml ... TESTS`` runs once plain and once per engine
with pep726hook installed before regrtest starts.  Every test that fails or
errors in a hooked run but passes (or is skipped) in the plain run, every test
that passes plain but is skipped hooked, and every test the plain run has that
a hooked run lost, is a transparency bug: the script prints them and exits 1.  Tests that fail plain as well (a distro
quirk, a missing resource) are reported but are not held against the hook.

Exclusions are listed in EXCLUDED with the reason a faithful PEP 726
implementation cannot pass them; there are none today.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import textwrap
import time
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_TESTS = (
    "test_importlib",
    "test_import",
    "test_module",
    "test_pkgutil",
    "test_runpy",
    "test_zipimport",
    "test_inspect",
)

# How a hooked run is started.  "runpy": install() then runpy.run_module("test")
# in a -c one-liner.  "runner": the project's own ``python -m pep726hook``.
DRIVER = "runner"

RUNPY_DRIVER = (
    "import sys, runpy, pep726hook; pep726hook.install({engine!r}); "
    "runpy.run_module(sys.argv.pop(1), run_name='__main__', alter_sys=True)"
)

# test id (as in the JUnit XML) -> why no faithful PEP 726 implementation can pass it.
EXCLUDED: dict[str, str] = {}

PER_RUN_TIMEOUT = 1200  # seconds; a hung run is a failure, not a hung CI
MAX_LISTED = 25  # differences listed one by one per run

PROBE_MODULE = textwrap.dedent(
    """
    import pep726hook, _pep726probe_target as target
    target.x = 1
    print("pep726hook-probe", pep726hook.engine(), target.seen == [("x", 1)])
    """
)
PROBE_TARGET = textwrap.dedent(
    """
    seen = []
    def __setattr__(name, value):
        seen.append((name, value))
    """
)


def hooked_command(engine: str, module: str, args: list[str]) -> list[str]:
    """The command that runs ``python -m module args`` with pep726hook installed."""
    if DRIVER == "runner":
        return [sys.executable, "-m", "pep726hook", "--engine", engine, "-m", module, *args]
    return [sys.executable, "-c", RUNPY_DRIVER.format(engine=engine), module, *args]


def plain_command(module: str, args: list[str]) -> list[str]:
    return [sys.executable, "-m", module, *args]


@dataclass
class RunResult:
    label: str
    returncode: int
    seconds: float
    outcomes: dict[str, str] = field(default_factory=dict)
    failed_files: set[str] = field(default_factory=set)
    log: Path | None = None

    def with_outcome(self, *wanted: str) -> set[str]:
        return {test for test, outcome in self.outcomes.items() if outcome in wanted}

    @property
    def failed(self) -> set[str]:
        return self.with_outcome("failure", "error")


def parse_junit(path: Path) -> dict[str, str]:
    """Map each test id to passed / skipped / failure / error."""
    outcomes: dict[str, str] = {}
    if not path.exists():
        return outcomes
    for case in ET.parse(path).getroot().iter("testcase"):
        name = case.get("name", "")
        classname = case.get("classname")
        test = f"{classname}.{name}" if classname else name
        outcome = "passed"
        for child in case:
            if child.tag in ("failure", "error"):
                outcome = child.tag
                break
            if child.tag == "skipped":
                outcome = "skipped"
        # A test reported twice (subtests) keeps its worst outcome.
        if outcomes.get(test) not in ("failure", "error"):
            outcomes[test] = outcome
    return outcomes


def _clean_environment() -> dict[str, str]:
    """This environment less pep726hook's own variables: a plain run must be plain."""
    return {k: v for k, v in os.environ.items() if not k.startswith("PEP726HOOK")}


def run_suite(label: str, command: list[str], workdir: Path) -> RunResult:
    xml = workdir / f"{label}.xml"
    log = workdir / f"{label}.log"
    start = time.monotonic()
    # Each run gets its own cwd: regrtest creates its temporary directories there.
    rundir = workdir / f"cwd-{label}"
    rundir.mkdir(exist_ok=True)
    xml.unlink(missing_ok=True)  # a run that dies must not be read from an older XML
    with log.open("wb") as out:
        try:
            returncode = subprocess.run(
                [*command, "--junit-xml", str(xml)],
                cwd=rundir,
                env=_clean_environment(),
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                timeout=PER_RUN_TIMEOUT,
                check=False,
            ).returncode
        except subprocess.TimeoutExpired:
            returncode = -1
            out.write(f"\n*** timed out after {PER_RUN_TIMEOUT}s ***\n".encode())
    result = RunResult(label, returncode, time.monotonic() - start, log=log)
    result.outcomes = parse_junit(xml)
    # Failing subtests are left out of regrtest's XML: take them from the -v log.
    for test in parse_verbose_failures(log):
        result.outcomes[test] = "failure"
    result.failed_files = parse_failed_files(log)
    return result


_FAILED_FILES_HEADER = re.compile(r"^\d+ tests? failed:$")


def parse_failed_files(log: Path) -> set[str]:
    """Test files regrtest's summary lists as failed (a file that fails to load has no
    test case of its own in the XML)."""
    failed: set[str] = set()
    lines = iter(log.read_text(errors="replace").splitlines())
    for line in lines:
        if _FAILED_FILES_HEADER.match(line.strip()):
            for listed in lines:
                if not listed.strip():
                    break
                failed.update(listed.split())
    return failed


_REPORT_HEADER = re.compile(r"^(?:FAIL|ERROR): (\S+) \(([^)\s]+)\)", re.MULTILINE)


def parse_verbose_failures(log: Path) -> set[str]:
    """Test ids from unittest's ``FAIL: test (module.Class[.test])`` report headers."""
    failed = set()
    for method, where in _REPORT_HEADER.findall(log.read_text(errors="replace")):
        # Python 3.11+ prints module.Class.method, earlier ones module.Class.
        failed.add(where if where.endswith("." + method) else f"{where}.{method}")
    return failed


def probe(engine: str, workdir: Path) -> str:
    """Check that the hooked driver really runs code with hooks on; return the engine name."""
    probedir = workdir / f"probe-{engine}"
    probedir.mkdir(exist_ok=True)
    (probedir / "_pep726probe.py").write_text(PROBE_MODULE, encoding="utf-8")
    (probedir / "_pep726probe_target.py").write_text(PROBE_TARGET, encoding="utf-8")
    env = dict(_clean_environment(), PYTHONPATH=str(probedir))
    done = subprocess.run(
        hooked_command(engine, "_pep726probe", []),
        cwd=probedir,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    for line in done.stdout.splitlines():
        words = line.split()
        if words[:1] == ["pep726hook-probe"] and words[2:] == ["True"]:
            return words[1]
    raise SystemExit(
        f"the hooked driver does not run code with hooks on (engine {engine!r}):\n"
        f"{done.stdout}{done.stderr}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tests", nargs="*", default=list(DEFAULT_TESTS))
    parser.add_argument("--engines", default="auto,class", help="comma-separated engine names")
    parser.add_argument("--jobs", type=int, default=2, help="runs at a time")
    parser.add_argument("--keep", type=Path, help="keep logs and XML in this directory")
    parser.add_argument("--json", type=Path, help="append a summary line (JSON) to this file")
    options = parser.parse_args(argv)

    version = ".".join(map(str, sys.version_info[:3]))
    impl = sys.implementation.name
    if impl != "cpython":
        print(f"cpython_import_tests: skipped on {impl}: its test suite is CPython's")
        return 0

    with tempfile.TemporaryDirectory(prefix="p726-cpython-tests-") as tmp:
        workdir = options.keep or Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        # Engines that resolve to the same one ("auto" -> "class" without the C
        # extension) are run once.
        engines: dict[str, str] = {}
        for requested in options.engines.split(","):
            resolved = probe(requested, workdir)
            engines.setdefault(resolved, requested)
        module_args = ["-v", *options.tests]
        runs = {"plain": plain_command("test", module_args)}
        for resolved, requested in engines.items():
            runs[f"hooked-{resolved}"] = hooked_command(requested, "test", module_args)
        with ThreadPoolExecutor(max_workers=max(1, options.jobs)) as pool:
            futures = {
                label: pool.submit(run_suite, label, cmd, workdir) for label, cmd in runs.items()
            }
            results = {label: future.result() for label, future in futures.items()}
        return report(version, results, options.json)


def report(version: str, results: dict[str, RunResult], json_path: Path | None) -> int:
    plain = results["plain"]
    status = 0
    summary: dict[str, object] = {"python": version, "driver": DRIVER}
    print(f"\n== CPython {version} import-system suites (driver: {DRIVER}) ==")
    if not plain.outcomes:
        print(f"plain run reported no tests (exit {plain.returncode}); see {plain.log}")
        print(plain.log.read_text(errors="replace")[-3000:] if plain.log else "")
        return 1
    for label, result in results.items():
        excluded = {t for t in result.failed if t in EXCLUDED}
        print(
            f"{label:>14}: {len(result.outcomes)} tests, "
            f"{len(result.with_outcome('skipped'))} skipped, {len(result.failed)} failed/errored, "
            f"exit {result.returncode}, {result.seconds:.0f}s"
        )
        summary[label] = {
            "run": len(result.outcomes),
            "skipped": len(result.with_outcome("skipped")),
            "failed": len(result.failed),
            "excluded": len(excluded),
            "exit": result.returncode,
        }
        if label == "plain":
            for test in sorted(result.failed | result.failed_files):
                print(f"    fails without the hook too (not held against it): {test}")
            continue
        if differs_from_plain(result, plain, excluded):
            status = 1
    print(f"result for {version}: {'DIFFERENCES FOUND' if status else 'hooked runs match plain'}")
    if json_path is not None:
        with json_path.open("a", encoding="utf-8") as out:
            out.write(json.dumps(summary) + "\n")
    return status


def differs_from_plain(result: RunResult, plain: RunResult, excluded: set[str]) -> bool:
    """Print how a hooked run differs from the plain one; tell whether it does."""
    new_failures = sorted(result.failed - plain.failed - set(EXCLUDED))
    lost = sorted(set(plain.outcomes) - set(result.outcomes))
    # A test skipped only when hooked would hide whatever it checks.
    new_skips = sorted(plain.with_outcome("passed") & result.with_outcome("skipped"))
    new_failed_files = sorted(result.failed_files - plain.failed_files)
    for test in new_failures:
        print(f"    FAILS ONLY HOOKED: {test}")
    for test_file in new_failed_files:
        print(f"    TEST FILE FAILS ONLY HOOKED: {test_file}")
    for test in new_skips:
        print(f"    SKIPPED ONLY HOOKED: {test}")
    for test in lost[:MAX_LISTED]:
        print(f"    MISSING FROM HOOKED RUN: {test}")
    if len(lost) > MAX_LISTED:
        print(f"    ... and {len(lost) - MAX_LISTED} more missing from the hooked run")
    if result.returncode < 0:
        print(f"    the hooked run was killed by signal {-result.returncode}")
    for test in sorted(excluded):
        print(f"    excluded ({EXCLUDED[test]}): {test}")
    run_level = result.returncode != 0 and plain.returncode == 0
    found = new_failures or lost or new_skips or new_failed_files
    if run_level and not found:
        print(f"    hooked run exited {result.returncode} where the plain run exited 0")
    if not (found or run_level):
        return False
    if result.log is not None:
        print(f"    log: {result.log}")
        print(_failure_excerpt(result.log, new_failures))
    return True


def _failure_excerpt(log: Path, tests: list[str], limit: int = 12000) -> str:
    """The unittest report blocks (FAIL:/ERROR: ... traceback) of *tests* in *log*."""
    text = log.read_text(errors="replace")
    wanted = [test.rsplit(".", 2)[-2:] for test in tests]
    blocks = []
    for block in text.split("=" * 70 + "\n"):
        header = block.split("\n", 1)[0]
        if header.startswith(("FAIL: ", "ERROR: ")) and any(
            header.split()[1] == method and f"{cls}" in header for cls, method in wanted
        ):
            blocks.append(block.split("\n" + "-" * 70 + "\n\nRan ", 1)[0])
    if not blocks:
        blocks = [_crash_excerpt(text)]
    return textwrap.indent("".join(blocks)[:limit], "    | ")


def _crash_excerpt(text: str) -> str:
    """Where a run died: the last test started and the top of a fatal-error dump."""
    started = [line for line in text.splitlines() if line.rstrip().endswith(" ...")]
    head = f"last test started: {started[-1]}\n" if started else ""
    fatal = text.find("Fatal Python error")
    if fatal >= 0:
        return head + "\n".join(text[fatal:].splitlines()[:30]) + "\n"
    return head + text[-3000:]


if __name__ == "__main__":
    sys.exit(main())

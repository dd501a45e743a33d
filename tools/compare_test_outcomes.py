"""Compare two pytest runs of the same tests, test id by test id; exit 1 if any outcome differs.

    python tools/compare_test_outcomes.py PLAIN.xml HOOKED.xml [--label NAME]

Each file is pytest's ``--junitxml`` report.  A test's outcome is ``passed``,
``failed``, ``error``, ``skipped`` or ``xfailed``/``xpassed`` as the report
records them; a test present in one run only counts as a difference too.
Prints the counts of each run and every difference.  Standard library only,
so that it runs in whatever environment ran the tests.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from xml.etree import ElementTree


def outcomes(path: str) -> dict[str, str]:
    """Map each test id (``classname::name``) of a JUnit XML report to its outcome."""
    found: dict[str, str] = {}
    for case in ElementTree.parse(path).getroot().iter("testcase"):
        test_id = f"{case.get('classname', '')}::{case.get('name', '')}"
        outcome = "passed"
        for child in case:
            if child.tag in ("failure", "error"):
                outcome = "failed" if child.tag == "failure" else "error"
                break
            if child.tag == "skipped":
                # pytest reports an expected failure as a skip of type pytest.xfail.
                outcome = "xfailed" if child.get("type") == "pytest.xfail" else "skipped"
        if outcome != "failed" or test_id not in found:
            # A test that fails and then errors in teardown appears twice: the
            # error is its outcome, as pytest's own summary counts it.
            found[test_id] = outcome
    return found


def differences(first: dict[str, str], second: dict[str, str]) -> list[str]:
    """Describe every test whose outcome differs between the two runs, sorted by id."""
    lines = []
    for test_id in sorted(set(first) | set(second)):
        before, after = first.get(test_id, "absent"), second.get(test_id, "absent")
        if before != after:
            lines.append(f"{test_id}: {before} -> {after}")
    return lines


def summary(found: dict[str, str]) -> str:
    """``N tests: P passed, F failed, ...`` for one run."""
    counts = Counter(found.values())
    parts = ", ".join(f"{counts[key]} {key}" for key in sorted(counts))
    return f"{len(found)} tests: {parts}"


def main(argv: list[str] | None = None) -> int:
    """Print both runs' counts and their differences; return 1 if there are any."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("plain", help="JUnit XML report of the run without pep726hook")
    parser.add_argument("hooked", help="JUnit XML report of the run with it")
    parser.add_argument("--label", default="", help="name of the suite, for the printed lines")
    options = parser.parse_args(argv)
    plain, hooked = outcomes(options.plain), outcomes(options.hooked)
    label = f"{options.label}: " if options.label else ""
    print(f"{label}plain:  {summary(plain)}")
    print(f"{label}hooked: {summary(hooked)}")
    changed = differences(plain, hooked)
    for line in changed:
        print(f"{label}DIFFERENT {line}")
    if not plain:
        print(f"{label}no tests ran")
        return 1
    print(f"{label}{'identical outcomes' if not changed else f'{len(changed)} differences'}")
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())

"""Compare two pytest runs of the same tests, test id by test id; exit 1 if any outcome differs.

    python tools/compare_test_outcomes.py PLAIN.xml HOOKED.xml [--label NAME] [--accept FILE]

Each file is pytest's ``--junitxml`` report.  A test's outcome is ``passed``,
``failed``, ``error``, ``skipped`` or ``xfailed``/``xpassed`` as the report
records them; a test present in one run only counts as a difference too.
Prints the counts of each run and every difference.  Standard library only,
so that it runs in whatever environment ran the tests.

``--accept FILE`` names differences that are expected, one a line, written
as this script prints them (``TEST_ID: BEFORE -> AFTER``) and followed by
``  # the reason``; blank lines and lines starting with ``#`` are comments.
An accepted difference is printed but does not fail the comparison; one that
no longer happens is printed too, so that the list can be kept short.
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


def accepted_differences(path: str) -> dict[str, str]:
    """Map each difference line of an ``--accept`` file to its reason."""
    accepted = {}
    with open(path, encoding="utf-8") as lines:
        for raw_line in lines:
            line = raw_line.strip()
            if not line or line.startswith("#"):
                continue
            difference, _, reason = line.partition("  # ")
            if not reason.strip():
                raise SystemExit(f"{path}: no reason given for {difference!r}")
            accepted[difference.strip()] = reason.strip()
    return accepted


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
    parser.add_argument("--accept", help="file of expected differences, each with its reason")
    options = parser.parse_args(argv)
    plain, hooked = outcomes(options.plain), outcomes(options.hooked)
    accepted = accepted_differences(options.accept) if options.accept else {}
    label = f"{options.label}: " if options.label else ""
    print(f"{label}plain:  {summary(plain)}")
    print(f"{label}hooked: {summary(hooked)}")
    all_differences = differences(plain, hooked)
    changed = []
    for line in all_differences:
        if line in accepted:
            print(f"{label}ACCEPTED {line}  ({accepted[line]})")
        else:
            print(f"{label}DIFFERENT {line}")
            changed.append(line)
    test_ids = set(plain) | set(hooked)
    for line in accepted:
        if line.partition(": ")[0] in test_ids and line not in all_differences:
            print(f"{label}accepted difference did not happen: {line}")
    if not plain:
        print(f"{label}no tests ran")
        return 1
    if changed:
        print(f"{label}{len(changed)} differences")
    elif len(all_differences) > len(changed):
        print(f"{label}identical outcomes but for {len(all_differences)} accepted differences")
    else:
        print(f"{label}identical outcomes")
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())

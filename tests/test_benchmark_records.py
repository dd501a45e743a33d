"""benchmarks/run_all.py holds docs/benchmarks.md's start-up figures to their record.

The comparison lives in benchmarks/_report.py, the report run_all.py writes.

Only the comparison, on small made-up pages and results: nothing is measured.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPORT = Path(__file__).resolve().parent.parent / "benchmarks" / "_report.py"

PAGE = """\
# Benchmarks

## Start-up instruction counts (callgrind)

`python -c pass` in a pip-less venv, millions of instructions.

| state | CPython 3.8.18 | CPython 3.12.1 |
|---|---|---|
| base | 40.101 | 42.174 |
| activated | 42.291 (±1.2k) | 44.915 |
| activated-class |  | 50.677 |

## Instructions per module operation (callgrind)

| case | CPython 3.8.18 | CPython 3.12.1 |
|---|---|---|
| plain/read | 378 | 67 |
"""


@pytest.fixture(scope="module")
def run_all() -> ModuleType:
    # Loaded from its file (the benchmarks are no package), and in sys.modules
    # only while its body runs, as its dataclass needs.
    spec = importlib.util.spec_from_file_location("_report_under_test", REPORT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
    return module


def results(label: str, **runs: list[int]) -> dict[str, object]:
    return {"label": label, "callgrind": {"startup_runs": runs}}


def test_the_recorded_start_up_table_is_read_by_interpreter_and_state(
    run_all: ModuleType,
) -> None:
    assert run_all.recorded_startup_counts(PAGE) == {
        ("CPython 3.8.18", "base"): 40.101,
        ("CPython 3.8.18", "activated"): 42.291,
        ("CPython 3.12.1", "base"): 42.174,
        ("CPython 3.12.1", "activated"): 44.915,
        ("CPython 3.12.1", "activated-class"): 50.677,
    }


def test_a_page_without_the_start_up_table_records_nothing(run_all: ModuleType) -> None:
    assert run_all.recorded_startup_counts("# Benchmarks\n\nnothing yet\n") == {}


def test_a_measured_figure_is_the_median_of_its_runs_in_millions(run_all: ModuleType) -> None:
    measured = run_all.measured_startup_counts(
        [results("CPython 3.12.1", activated=[45_000_000, 45_490_000, 45_100_000]), {}]
    )
    assert measured == {("CPython 3.12.1", "activated"): 45.1}


def test_a_figure_that_moved_more_than_half_a_percent_is_named(run_all: ModuleType) -> None:
    recorded = run_all.recorded_startup_counts(PAGE)
    measured = {
        ("CPython 3.12.1", "base"): 42.18,  # +0.01 %
        ("CPython 3.12.1", "activated"): 45.49,  # +1.280 %
    }
    assert run_all.startup_drifts(recorded, measured) == [
        "start-up instruction count 'activated' on CPython 3.12.1: 45.490 M, "
        "docs/benchmarks.md records 44.915 M (+1.280%, more than 0.5% either way)"
    ]


@pytest.mark.parametrize(
    ("measured", "moved"),
    [
        (42.174 * 1.0049, False),
        (42.174 * 1.0051, True),
        (42.174 * 0.9951, False),
        (42.174 * 0.9949, True),  # a fall is a change to record as well
    ],
)
def test_the_limit_is_half_a_percent_either_way(
    run_all: ModuleType, measured: float, moved: bool
) -> None:
    recorded = {("CPython 3.12.1", "base"): 42.174}
    drifts = run_all.startup_drifts(recorded, {("CPython 3.12.1", "base"): measured})
    assert bool(drifts) is moved


def test_figures_the_page_does_not_record_yet_pass(run_all: ModuleType) -> None:
    recorded = run_all.recorded_startup_counts(PAGE)
    measured = {("CPython 3.15.2", "base"): 36.1, ("CPython 3.8.18", "activated-class"): 47.7}
    assert run_all.startup_drifts(recorded, measured) == []


def test_a_run_whose_figure_moved_leaves_the_page_and_fails_unless_accepted(
    run_all: ModuleType,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    page = tmp_path / "benchmarks.md"
    page.write_text(PAGE, encoding="utf-8")
    monkeypatch.setattr(run_all, "MARKDOWN", str(page))
    moved = [results("CPython 3.12.1", activated=[45_490_000])]
    assert run_all.check_startup_counts(moved, accept=False) is False
    assert "'activated' on CPython 3.12.1: 45.490 M" in capsys.readouterr().err
    assert run_all.check_startup_counts(moved, accept=True) is True
    steady = [results("CPython 3.12.1", activated=[44_950_000])]
    assert run_all.check_startup_counts(steady, accept=False) is True
    assert page.read_text(encoding="utf-8") == PAGE


def test_the_page_records_every_start_up_state_of_each_cpython_it_lists(
    run_all: ModuleType,
) -> None:
    # The records a run is held to: a figure accepted by hand must leave the
    # table whole, or a moved figure would pass as one not recorded yet.
    page = (REPORT.parent.parent / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    recorded = run_all.recorded_startup_counts(page)
    labels = {label for label, _ in recorded}
    assert labels, "docs/benchmarks.md has no start-up table"
    expected = {(label, state) for label in labels for state in run_all.STARTUP_STATES}
    assert set(recorded) == expected

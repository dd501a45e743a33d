"""benchmarks/bench_deprecation_libraries.py runs and writes its figures into docs/benchmarks-deprecation.md.

The rendering and the section replacement on made-up results, the arithmetic
of the instruction counts on made-up totals, and one inspection run of the
script's own modules: nothing here is timed or compared with a speed.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any, Mapping

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
SCRIPT = BENCHMARKS / "bench_deprecation_libraries.py"

RESULT: dict[str, Any] = {
    "label": "CPython 3.12.1",
    "engines": ["native", "class"],
    "versions": {"pep726hook": "0.1.0.dev0", "Twisted": "26.10.0"},
    "pep726hook_commit": "f4182186b17ee3eecde7b03db447766043ec743c",
    "times": {
        "plain/x": 8e-9,
        "plain/Old": 10e-9,
        "plain/miss": 50e-9,
        "twisted/proxy/x": 800e-9,
        "attribute/native/other miss": 100e-9,
    },
    "counts": {
        "plain/x": 100.0,
        "plain/Old": 200.0,
        "plain/miss": 1000.0,
        "twisted/proxy/x": 8000.0,
        "attribute/native/x": 103.0,
        "attribute/native/other miss": 3000.0,
    },
    "facts": {
        "plain": {"instructions": {"x": "LOAD_ATTR_MODULE"}, "exact_module_type": True},
        "attribute/native": {
            "instructions": {"x": "LOAD_ATTR"},
            "exact_module_type": False,
        },
        "thousand/native": {
            "instructions": {"x": "LOAD_ATTR"},
            "exact_module_type": False,
            "module_type_version_after": 0,
            "module_type_version_assignable": False,
        },
    },
    "imports": {"import/functions/plain": 1_000_000.0, "import/functions/native": 1_010_000.0},
}


def _load(path: Path, name: str) -> ModuleType:
    # Loaded from its file (the benchmarks are no package); it imports nothing
    # but the standard library and its own sibling modules at load time.
    # The script imports its sibling modules, as it does when run.
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    sys.path.insert(0, str(path.parent))
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
        sys.path.remove(str(path.parent))
    return module


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return _load(SCRIPT, "_bench_libraries_under_test")


@pytest.fixture(scope="module")
def library_cases() -> ModuleType:
    return _load(BENCHMARKS / "_deprecation_library_cases.py", "_library_cases_under_test")


@pytest.fixture(scope="module")
def shared() -> ModuleType:
    return _load(BENCHMARKS / "_shared.py", "_bench_shared_under_test")


def test_each_read_is_compared_with_the_plain_modules_same_read(bench: ModuleType) -> None:
    table = bench.markdown([RESULT])
    assert "| `twisted/proxy/x` | 800.0 | 100.00 | 8000.0 | 80.00 |" in table
    assert "| `plain/x` | 8.0 | 1.00 | 100.0 | 1.00 |" in table
    assert "pep726hook at commit `f4182186b17e`" in table


def test_another_modules_read_is_compared_with_the_plain_modules_own_read(
    bench: ModuleType,
) -> None:
    table = bench.markdown([RESULT])
    assert "| `attribute/native/other miss` | 100.0 | 2.00 | 3000.0 | 3.00 |" in table


def test_a_case_without_a_time_keeps_its_instruction_count(bench: ModuleType) -> None:
    table = bench.markdown([RESULT])
    assert "| `plain/Old` | 10.0 | 1.00 | 200.0 | 1.00 |" in table
    assert "| `attribute/native/x` |  |  | 103.0 | 1.03 |" in table


def test_the_summary_gives_multiples_of_a_plain_read_and_times_per_interpreter(
    bench: ModuleType,
) -> None:
    summary = bench.summary_markdown([RESULT])
    assert "| | CPython 3.12.1 |" in summary
    assert "| plain module | 100 instructions, 8.0 ns |" in summary
    assert "| Twisted's `_ModuleProxy` | 80.00x, 800.0 ns |" in summary
    assert "| `deprecate_attribute()` | 1.03x |" in summary
    assert "| `deprecate_attribute()` | `LOAD_ATTR`, a subclass |" in summary
    assert "| plain module | `LOAD_ATTR_MODULE`, `ModuleType` |" in summary
    assert "| `functions`, native | 1.01x (+10,000) |" in summary
    assert "| `ModuleType` version tag after the thousand names | 0, none left |" in summary


def test_earlier_figures_stand_beside_the_same_interpreters_figures(bench: ModuleType) -> None:
    earlier = dict(
        RESULT,
        pep726hook_commit="8722263000000000000000000000000000000000",
        counts=dict(RESULT["counts"], **{"attribute/native/x": 540.0}),
    )
    summary = bench.summary_markdown([RESULT], [earlier])
    assert "commit `872226300000`" in summary
    assert "| `m.x`, `deprecate_attribute()` | 5.40x → 1.03x |" in summary
    assert '| `hasattr(o, "missing")` while `m` deprecates | 3.00x → 3.00x |' in summary
    # Against the other module's read in the same process: none measured here.
    assert "| `m.x` / `o.x`, `deprecate_attribute()` |  |" in summary


def test_without_earlier_figures_there_is_no_before_and_after_table(bench: ModuleType) -> None:
    assert "Before and after" not in bench.summary_markdown([RESULT])


def test_the_plain_module_has_no_reads_of_another_module(
    library_cases: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Looking for the libraries would import their packages into this process.
    monkeypatch.setattr(library_cases, "installed_libraries", list)
    plain = [case for case in library_cases.cases("plain/") if case.startswith("plain/")]
    assert plain == ["plain/x", "plain/Old", "plain/miss"]
    assert library_cases.base_case("zope/proxy/other x") == "plain/x"


def test_the_section_is_replaced_and_the_next_one_kept(bench: ModuleType, tmp_path: Path) -> None:
    page = tmp_path / "benchmarks.md"
    page.write_text(
        f"# Benchmarks\n\n## {bench.SECTION}\n\nold figures\n\n## Next\n\nkept\n", encoding="utf-8"
    )
    bench.write_section(f"## {bench.SECTION}\n\nnew figures\n", str(page))
    assert page.read_text(encoding="utf-8") == (
        f"# Benchmarks\n\n## {bench.SECTION}\n\nnew figures\n\n## Next\n\nkept\n"
    )


def test_a_page_without_the_section_gets_it_at_the_end(bench: ModuleType, tmp_path: Path) -> None:
    page = tmp_path / "benchmarks.md"
    page.write_text("# Benchmarks\n", encoding="utf-8")
    bench.write_section(
        f"## {bench.SUMMARY_SECTION}\n\nfigures\n", str(page), bench.SUMMARY_SECTION
    )
    assert page.read_text(encoding="utf-8") == (
        f"# Benchmarks\n\n## {bench.SUMMARY_SECTION}\n\nfigures\n"
    )


def test_each_loop_gets_its_own_count_from_one_run_more_than_it_has_loops(
    shared: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A made-up callgrind: start-up 10 000 instructions, then each loop's
    # iterations at 7, 300 and 5 instructions per operation.
    per_operation = (7, 300, 5)
    runs = []

    def fake_callgrind(argv: list[str], env: Mapping[str, str], cwd: str | None = None) -> int:
        counts = [int(n) for n in argv[-1].split(",")]
        runs.append(counts)
        return 10_000 + sum(n * 10 * cost for n, cost in zip(counts, per_operation))

    monkeypatch.setattr(shared, "callgrind", fake_callgrind)
    found = shared.per_iteration_each("", "group", [(2, 12), (1, 3), (2, 12)], 10)
    assert found == [7, 300, 5]
    assert runs == [[2, 1, 2], [12, 1, 2], [2, 3, 2], [2, 1, 12]]


def test_the_inspection_of_pep726hooks_own_forms_runs(tmp_path: Path) -> None:
    out = tmp_path / "facts.json"
    subprocess.run(
        [
            sys.executable,
            str(SCRIPT),
            "--inspect",
            "--only",
            "plain,attribute,marker",
            "--json-out",
            str(out),
        ],
        check=True,
        capture_output=True,
    )
    facts = json.loads(out.read_text(encoding="utf-8"))
    assert "plain" in facts
    assert {group.split("/")[0] for group in facts} == {"plain", "attribute", "marker"}
    for found in facts.values():
        assert found["module_type"]
        assert "exact_module_type" in found


def test_the_summary_goes_just_before_the_detailed_tables(
    bench: ModuleType, tmp_path: Path
) -> None:
    page = tmp_path / "benchmarks.md"
    page.write_text(f"# Benchmarks\n\n## {bench.SECTION}\n\ntables\n", encoding="utf-8")
    bench.write_section(
        f"## {bench.SUMMARY_SECTION}\n\nsummary\n",
        str(page),
        bench.SUMMARY_SECTION,
        ahead_of=bench.SECTION,
    )
    assert page.read_text(encoding="utf-8") == (
        f"# Benchmarks\n\n## {bench.SUMMARY_SECTION}\n\nsummary\n\n## {bench.SECTION}\n\ntables\n"
    )

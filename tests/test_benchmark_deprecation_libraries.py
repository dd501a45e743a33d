"""benchmarks/bench_deprecation_libraries.py writes its figures into docs/benchmarks.md.

Only the rendering and the section replacement, on made-up results: nothing is measured.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "bench_deprecation_libraries.py"

RESULT = {
    "label": "CPython 3.12.1",
    "engines": ["native", "class"],
    "versions": {"pep726hook": "0.1.0.dev0", "Twisted": "26.10.0"},
    "pep726hook_commit": "f4182186b17ee3eecde7b03db447766043ec743c",
    "times": {"plain/x": 8e-9, "plain/Old": 10e-9, "twisted/native/Old default": 30e-9},
    "counts": {"plain/x": 100.0, "plain/Old": 200.0, "twisted/native/Old default": 2000.0},
}


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    # Loaded from its file (the benchmarks are no package); it imports nothing
    # but the standard library at load time.
    spec = importlib.util.spec_from_file_location("_bench_libraries_under_test", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
    return module


def test_a_deprecated_read_under_either_filter_is_compared_with_the_plain_modules_same_read(
    bench: ModuleType,
) -> None:
    table = bench.markdown([RESULT])
    assert "| `twisted/native/Old default` | 30.0 | 3.00 | 2000.0 | 10.00 |" in table
    assert "| `plain/x` | 8.0 | 1.00 | 100.0 | 1.00 |" in table
    assert "pep726hook at commit `f4182186b17e`" in table


def test_a_case_without_a_time_keeps_its_instruction_count(bench: ModuleType) -> None:
    result = dict(RESULT, times={"plain/x": 8e-9})
    table = bench.markdown([result])
    assert "| `plain/Old` |  |  | 200.0 | 1.00 |" in table


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
    bench.write_section(f"## {bench.SECTION}\n\nfigures\n", str(page))
    assert page.read_text(encoding="utf-8") == f"# Benchmarks\n\n## {bench.SECTION}\n\nfigures\n"

"""tools/compare_test_outcomes.py: two JUnit reports, test by test, and the accepted differences."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

TOOL = Path(__file__).resolve().parent.parent / "tools" / "compare_test_outcomes.py"


@pytest.fixture
def tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("compare_test_outcomes_under_test", TOOL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _report(path: Path, failing: tuple[str, ...] = ()) -> str:
    cases = []
    for name in ("test_a", "test_b"):
        body = '<failure message="boom"/>' if name in failing else ""
        cases.append(f'<testcase classname="pkg.mod.Tests" name="{name}">{body}</testcase>')
    path.write_text(f"<testsuites><testsuite>{''.join(cases)}</testsuite></testsuites>")
    return str(path)


def test_an_accepted_difference_is_printed_and_does_not_fail(
    tool: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plain = _report(tmp_path / "plain.xml")
    hooked = _report(tmp_path / "hooked.xml", failing=("test_b",))
    accept = tmp_path / "accept.txt"
    accept.write_text(
        "# comment\n\npkg.mod.Tests::test_b: passed -> failed  # asserts the proxy's type\n"
    )
    assert tool.main([plain, hooked, "--label", "lib", "--accept", str(accept)]) == 0
    out = capsys.readouterr().out
    assert (
        "lib: ACCEPTED pkg.mod.Tests::test_b: passed -> failed  (asserts the proxy's type)" in out
    )
    assert out.rstrip().endswith("lib: identical outcomes but for 1 accepted differences")


def test_a_difference_not_accepted_fails(tool: ModuleType, tmp_path: Path) -> None:
    plain = _report(tmp_path / "plain.xml")
    hooked = _report(tmp_path / "hooked.xml", failing=("test_a", "test_b"))
    accept = tmp_path / "accept.txt"
    accept.write_text("pkg.mod.Tests::test_b: passed -> failed  # asserts the proxy's type\n")
    assert tool.main([plain, hooked, "--accept", str(accept)]) == 1


def test_an_accepted_difference_that_did_not_happen_is_reported(
    tool: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plain = _report(tmp_path / "plain.xml")
    accept = tmp_path / "accept.txt"
    accept.write_text("pkg.mod.Tests::test_b: passed -> failed  # asserts the proxy's type\n")
    assert tool.main([plain, plain, "--accept", str(accept)]) == 0
    out = capsys.readouterr().out
    assert "accepted difference did not happen: pkg.mod.Tests::test_b: passed -> failed" in out


def test_an_accepted_difference_without_a_reason_is_refused(
    tool: ModuleType, tmp_path: Path
) -> None:
    plain = _report(tmp_path / "plain.xml")
    accept = tmp_path / "accept.txt"
    accept.write_text("pkg.mod.Tests::test_b: passed -> failed\n")
    with pytest.raises(SystemExit, match="no reason given"):
        tool.main([plain, plain, "--accept", str(accept)])

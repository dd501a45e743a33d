"""``pep726hook scan --stdlib``: CPython's own tests left out unless asked, findings informational."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from _scan_helpers import (
    MPMATH_STYLE,
    run_json,
    write_file,
)

from pep726hook import _scan
from pep726hook._scan import _advice, _files


def test_stdlib_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    document = run_json(capsys, "--stdlib", "--site", str(tmp_path))
    stdlib = _scan.stdlib_root()
    assert document["scanned_files"] > 500
    assert all(f["path"].startswith(stdlib) for f in document["findings"])
    assert all(f["distribution"] is None for f in document["findings"])
    # CPython's own tests are left out, and nothing proposes to edit CPython.
    for finding in document["findings"]:
        parts = Path(os.path.relpath(finding["path"], stdlib)).parts
        assert not {"test", "tests", "idle_test"} & set(parts), finding["path"]
        assert finding["suggestion"] is None or finding["suggestion"].startswith(
            "informational only, not a suggestion to edit the standard library"
        )


@pytest.fixture
def fake_stdlib(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A standard library directory with a finding in its code and in each kind of test package."""
    root = tmp_path / "stdlib"
    getattr_source = "def __getattr__(name):\n    raise AttributeError(name)\n"
    for relative in [
        "lazy.py",
        "test/test_lazy.py",
        "idlelib/idle_test/mock_lazy.py",
        "lib2to3/tests/data/lazy.py",
        "unittest/test/lazy.py",
    ]:
        write_file(root / relative, getattr_source)
    write_file(root / "guard.py", MPMATH_STYLE)
    monkeypatch.setattr(_files, "stdlib_root", lambda: str(root))
    return root


def test_stdlib_leaves_cpython_tests_out_unless_asked(
    fake_stdlib: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty_site = ["--site", str(tmp_path / "no-site")]
    (tmp_path / "no-site").mkdir()
    document = run_json(capsys, "--stdlib", *empty_site)
    assert sorted(f["module"] for f in document["findings"]) == ["guard", "lazy"]
    assert document["scanned_files"] == 2
    # --stdlib-tests adds the test packages, and implies --stdlib.
    for argv in (["--stdlib", "--stdlib-tests"], ["--stdlib-tests"]):
        document = run_json(capsys, *argv, *empty_site)
        assert sorted(f["module"] for f in document["findings"]) == [
            "guard",
            "idlelib.idle_test.mock_lazy",
            "lazy",
            "lib2to3.tests.data.lazy",
            "test.test_lazy",
            "unittest.test.lazy",
        ]
    # The same through the API.
    result = _scan.scan(stdlib=True, site=[str(tmp_path / "no-site")])
    assert {f.module for f in result.findings} == {"guard", "lazy"}
    result = _scan.scan(stdlib_tests=True, site=[str(tmp_path / "no-site")])
    assert len(result.findings) == 6


def test_stdlib_findings_are_informational(
    fake_stdlib: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "no-site").mkdir()
    document = run_json(capsys, "--stdlib", "--site", str(tmp_path / "no-site"))
    by_module = {f["module"]: f for f in document["findings"]}
    # A PEP 562 __getattr__: what a program can do without editing it.
    assert by_module["lazy"]["suggestion"] == (
        "informational only, not a suggestion to edit the standard library; a program can keep"
        " this module's reads specialised without editing it: python -m pep726hook"
        ' --fast-getattr, or PEP726HOOK_FAST_GETATTR=1 (documentation, "Fast reads of'
        ' __getattr__ modules")'
    )
    # A workaround: what it is, and what it costs, but no migration to do.
    assert by_module["guard"]["kind"] == "class_workaround"
    assert by_module["guard"]["suggestion"] == _advice.STDLIB_NOTE
    assert by_module["guard"]["read_cost"].startswith("reads take the subclass path")
    # The same module in a source tree is told how to migrate.
    tree = run_json(capsys, "--path", str(fake_stdlib), "--exclude", "*test*")
    suggestions = {f["module"]: f["suggestion"] for f in tree["findings"]}
    assert suggestions["lazy"].startswith("to keep its reads specialised, opt the module in")
    assert suggestions["guard"].startswith("define module-level")

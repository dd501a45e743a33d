"""``pep726hook scan``: fixture distributions in a temporary site directory, never imported."""

from __future__ import annotations

import io
import json
import os
import sys
from pathlib import Path

import pytest
from _scan_helpers import (
    build_site,
    kinds_by_module,
    run_json,
)

import pep726hook
from pep726hook import _scan
from pep726hook._scan import _report


@pytest.fixture
def site(tmp_path: Path) -> Path:
    return build_site(tmp_path)


def test_json_schema(site: Path, capsys: pytest.CaptureFixture[str]) -> None:
    document = run_json(capsys, "--site", str(site))
    assert list(document) == ["schema", "python", "scanned_files", "skipped", "findings"]
    assert document["schema"] == "pep726hook.scan/1"
    version = ".".join(map(str, sys.version_info[:3]))
    assert document["python"].endswith(version)
    assert document["scanned_files"] == 15
    for skipped in document["skipped"]:
        assert list(skipped) == ["path", "reason"]
    fields = ["distribution", "module", "path", "line", "kind", "detail", "suggestion"]
    fields += ["confidence", "class_line", "install_line", "read_cost", "related"]
    for finding in document["findings"]:
        assert list(finding) == fields
        assert finding["kind"] in _scan.KINDS
        assert finding["confidence"] in _scan.CONFIDENCES
        assert os.path.isabs(finding["path"])
        assert isinstance(finding["line"], int)
        workaround = finding["kind"] == "class_workaround"
        advised = workaround or finding["kind"] == "module_getattr"
        assert (finding["suggestion"] is not None) == advised
        assert (finding["class_line"] == finding["line"]) == workaround
        assert isinstance(finding["install_line"], int) == workaround
        costly = workaround or finding["kind"] == "module_getattr"
        assert isinstance(finding["read_cost"], str) == costly
        assert finding["related"] == []
    order = [(f["distribution"], f["path"], f["line"]) for f in document["findings"]]
    assert order == sorted(order)


def test_module_level_hooks(site: Path, capsys: pytest.CaptureFixture[str]) -> None:
    found = kinds_by_module(run_json(capsys, "--site", str(site)))
    assert found["hooked"] == [(3, "module_setattr"), (6, "module_delattr")]
    assert found["hooked.blocks"] == [
        (3, "module_setattr"),
        (6, "module_delattr"),
        (8, "module_delattr"),
    ]


def test_nested_definitions_do_not_count(site: Path, capsys: pytest.CaptureFixture[str]) -> None:
    found = kinds_by_module(run_json(capsys, "--site", str(site)))
    assert "hooked.nested" not in found
    assert "hooked.tricky" not in found


def test_mpmath_style_workaround(site: Path, capsys: pytest.CaptureFixture[str]) -> None:
    document = run_json(capsys, "--site", str(site))
    (finding,) = [f for f in document["findings"] if f["module"] == "mpstyle.ctx"]
    assert finding["distribution"] == "mpmath-style"
    assert (finding["line"], finding["kind"]) == (3, "class_workaround")
    assert "class _MPModule(types.ModuleType)" in finding["detail"]
    assert "setter property dps" in finding["detail"]
    assert "line 12" in finding["detail"]
    suggestion = finding["suggestion"]
    assert 'define module-level "def __setattr__(name, value): ..."' in suggestion
    assert "__getattr__" in suggestion  # the getter becomes a PEP 562 read
    # The class stays as the fallback without pep726hook: the guard never disappears.
    assert "opt in with pep726hook.enable(__name__)" in suggestion
    assert "keeping class _MPModule only as the fallback where pep726hook cannot" in suggestion
    assert "drop" not in suggestion
    assert "__delattr__" not in suggestion


def test_workaround_kept_as_the_enable_fallback_needs_no_change(
    capsys: pytest.CaptureFixture[str],
) -> None:
    library = Path(__file__).resolve().parent.parent / "examples" / "library_optin"
    document = run_json(capsys, "--path", str(library))
    (finding,) = [f for f in document["findings"] if f["kind"] == "class_workaround"]
    assert finding["suggestion"].startswith("none: the module opts in with pep726hook.enable()")


def test_sys_modules_replacement_and_aliases(
    site: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    document = run_json(capsys, "--site", str(site))
    by_module = {f["module"]: f for f in document["findings"] if f["kind"] == "class_workaround"}
    assert set(by_module) == {"mpstyle.ctx", "replaced", "aliased"}
    replaced = by_module["replaced"]
    assert replaced["line"] == 4
    assert "sys.modules replacement" in replaced["detail"]
    assert "overrides __setattr__" in replaced["detail"]
    assert '"def __setattr__(name, value): ..."' in replaced["suggestion"]
    aliased = by_module["aliased"]
    assert aliased["line"] == 7  # the installed class; its base supplies __delattr__
    assert "__delattr__" in aliased["detail"] and "setter property speed" in aliased["detail"]
    assert '"def __delattr__(name): ..."' in aliased["suggestion"]
    assert '"def __setattr__(name, value): ..."' in aliased["suggestion"]


def test_pep562_is_informational(site: Path, capsys: pytest.CaptureFixture[str]) -> None:
    found = kinds_by_module(run_json(capsys, "--site", str(site)))
    assert found["lazy_pkg"] == [(1, "module_getattr"), (4, "module_dir")]
    assert found["lazy_pkg.attach"] == [(3, "module_getattr"), (3, "module_dir")]


def test_undecodable_and_unparsable_files_are_skipped(
    site: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    document = run_json(capsys, "--site", str(site))
    reasons = {Path(s["path"]).name: s["reason"] for s in document["skipped"]}
    assert set(reasons) == {"syntax.py", "latin.py"}
    assert reasons["syntax.py"].startswith("syntax error at line 1")
    assert reasons["latin.py"].startswith("cannot decode as utf-8")
    found = kinds_by_module(document)
    assert found["broken.cookie"] == [(2, "module_setattr")]
    # Only the statements of interest are parsed by default ...
    assert found["broken.elsewhere"] == [(1, "module_dir")]
    assert "broken.plain" not in found


def test_thorough_parses_whole_files(site: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fast = run_json(capsys, "--site", str(site))
    thorough = run_json(capsys, "--site", str(site), "--thorough")
    reasons = {Path(s["path"]).name: s["reason"] for s in thorough["skipped"]}
    # ... and --thorough reports a syntax error anywhere in a candidate file.
    assert set(reasons) == {"syntax.py", "latin.py", "elsewhere.py"}
    assert reasons["elsewhere.py"].startswith("syntax error at line 4")
    fast_findings = [f for f in fast["findings"] if f["module"] != "broken.elsewhere"]
    assert thorough["findings"] == fast_findings


def test_nothing_is_imported_or_executed(
    site: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = set(sys.modules)
    run_json(capsys, "--site", str(site), "--thorough")
    run_json(capsys, "--site", str(site))
    assert not (tmp_path / "EXECUTED").exists()
    fixture_names = {"hooked", "mpstyle", "replaced", "aliased", "harmless", "lazy_pkg", "broken"}
    new = {name.partition(".")[0] for name in set(sys.modules) - before}
    assert not new & fixture_names


def test_public_scan_returns_typed_findings_and_the_json_document(
    site: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    result = pep726hook.scan(site=[str(site)], jobs=1)
    assert isinstance(result, pep726hook.ScanResult)
    assert all(isinstance(f, pep726hook.ScanFinding) for f in result.findings)
    assert result.skipped and all(isinstance(s, pep726hook.ScanSkipped) for s in result.skipped)
    assert result.to_json() == run_json(capsys, "--site", str(site))
    (mpstyle,) = pep726hook.scan(["mpmath-style"], site=[str(site)]).findings
    assert (mpstyle.module, mpstyle.kind, mpstyle.line) == ("mpstyle.ctx", "class_workaround", 3)


def test_public_scan_refuses_bad_arguments_clearly(site: Path, tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="distributions must be a sequence of strings"):
        pep726hook.scan("hooked", site=[str(site)])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="paths must be a sequence"):
        pep726hook.scan(paths=str(tmp_path))  # type: ignore[arg-type]
    with pytest.raises(FileNotFoundError, match="nonexistent"):
        pep726hook.scan(paths=[str(tmp_path / "nonexistent")])
    with pytest.raises(NotADirectoryError):
        pep726hook.scan(site=[str(tmp_path / "nonexistent")])
    with pytest.raises(LookupError, match="no-such-dist"):
        pep726hook.scan(["no-such-dist"], site=[str(site)])
    with pytest.raises(ValueError, match="absolute"):
        pep726hook.scan(paths=[str(tmp_path)], exclude=[str(tmp_path)])
    with pytest.raises(ValueError, match="jobs must be 0 or more"):
        pep726hook.scan(paths=[str(tmp_path)], jobs=-1)


def test_report_round_trip(site: Path) -> None:
    result = _scan.scan(site=[str(site)])
    out = io.StringIO()
    _report.write_json(result, out)
    assert json.loads(out.getvalue()) == _report.to_json(result)

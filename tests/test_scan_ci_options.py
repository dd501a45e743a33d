"""``pep726hook scan`` in CI: ``--fail-on`` sets the exit status, ``--exclude`` leaves paths out."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from _scan_helpers import (
    build_site,
)

from pep726hook import _scan


@pytest.fixture
def site(tmp_path: Path) -> Path:
    return build_site(tmp_path)


# ---------------------------------------------------------------- CI options: --fail-on, --exclude


def scan_status(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    status = _scan.main(["--json", *argv])
    out, err = capsys.readouterr()
    assert err == ""
    document: dict[str, Any] = json.loads(out)
    return status, document


def test_fail_on_a_reported_kind_exits_1_after_the_report(
    site: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "1000")  # the summary on one line
    status, document = scan_status(capsys, "--site", str(site), "--fail-on", "module_setattr")
    assert status == 1
    assert document["findings"]  # the report is printed in full all the same
    assert _scan.main(["--site", str(site), "--fail-on", "class_workaround"]) == 1
    assert capsys.readouterr().out.splitlines()[-1].startswith("14 findings")


def test_fail_on_kinds_not_reported_exits_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "lazy.py").write_text("def __getattr__(name):\n    raise AttributeError(name)\n")
    path = ("--path", str(tmp_path))
    assert scan_status(capsys, *path, "--fail-on", "module_setattr,module_delattr")[0] == 0
    assert scan_status(capsys, *path, "--fail-on", "class_workaround, module_dir")[0] == 0
    assert scan_status(capsys, *path, "--fail-on", "module_setattr,module_getattr")[0] == 1
    assert (
        scan_status(capsys, *path, "--fail-on", "module_dir", "--fail-on", "module_getattr")[0] == 1
    )
    assert scan_status(capsys, *path)[0] == 0  # without --fail-on, findings never fail


def test_fail_on_does_not_count_skipped_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "py2.py").write_text("def __setattr__(name, value):\n    print name\n")
    status, document = scan_status(
        capsys, "--path", str(tmp_path), "--thorough", "--fail-on", "module_setattr"
    )
    assert (status, document["findings"], len(document["skipped"])) == (0, [], 1)


@pytest.mark.parametrize("value", ["module_setatr", "module_setattr,nope", ",", ""])
def test_fail_on_unknown_kind_is_a_usage_error(
    value: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _scan.main(["--path", str(tmp_path), "--fail-on", value]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert "argument --fail-on: unknown finding kind" in err
    assert "choose from module_setattr, module_delattr, class_workaround" in err


HOOK = "def __setattr__(name, value):\n    globals()[name] = value\n"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    for relative in (
        "pkg/__init__.py",
        "pkg/core.py",
        "pkg/tests/test_core.py",
        "pkg/_vendor/six.py",
        "pkg/_vendor/sub/deep.py",
        "tests/conftest.py",
        "tests/test_top.py",
        "setup.py",
    ):
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(HOOK)
    return root


def scanned_relative(capsys: pytest.CaptureFixture[str], root: Path, *excludes: str) -> set[str]:
    argv = ["--path", str(root)]
    for glob in excludes:
        argv += ["--exclude", glob]
    status, document = scan_status(capsys, *argv)
    assert status == 0
    found = {Path(f["path"]).relative_to(root).as_posix() for f in document["findings"]}
    assert document["scanned_files"] == len(found)  # every file of the tree has one finding
    return found


@pytest.mark.parametrize(
    ("globs", "left_out"),
    [
        # Without '/': any one directory or file name, at any depth.
        (["tests"], {"pkg/tests/test_core.py", "tests/conftest.py", "tests/test_top.py"}),
        (["test_*.py"], {"pkg/tests/test_core.py", "tests/test_top.py"}),
        (["_vendor"], {"pkg/_vendor/six.py", "pkg/_vendor/sub/deep.py"}),
        (["setup.py", "conftest.py"], {"setup.py", "tests/conftest.py"}),
        # With '/': the path from the root, or a directory above the file.
        (["pkg/_vendor"], {"pkg/_vendor/six.py", "pkg/_vendor/sub/deep.py"}),
        (["./pkg/_vendor/"], {"pkg/_vendor/six.py", "pkg/_vendor/sub/deep.py"}),
        (["pkg/_vendor/*.py"], {"pkg/_vendor/six.py", "pkg/_vendor/sub/deep.py"}),
        (["pkg/*/sub"], {"pkg/_vendor/sub/deep.py"}),
        (["*/tests"], {"pkg/tests/test_core.py"}),
        (["sub/deep.py"], set()),  # not a path from the root
        (["Tests"], set()),  # case matters (on a case-sensitive file system)
    ],
)
def test_exclude_globs(
    tree: Path, capsys: pytest.CaptureFixture[str], globs: list[str], left_out: set[str]
) -> None:
    if os.path.normcase("A") == "a" and globs == ["Tests"]:
        pytest.skip("globs ignore case where the file system does")
    everything = scanned_relative(capsys, tree)
    assert len(everything) == 8
    assert scanned_relative(capsys, tree, *globs) == everything - left_out


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_excluded_directories_are_not_visited(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    os.mkfifo(str(tree / "pkg" / "_vendor" / "pipe.py"))
    assert scan_status(capsys, "--path", str(tree))[1]["skipped"]  # visited: reported skipped
    status, document = scan_status(capsys, "--path", str(tree), "--exclude", "_vendor")
    assert (status, document["skipped"], document["scanned_files"]) == (0, [], 6)


def test_exclude_applies_to_installed_distributions(
    site: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, document = scan_status(capsys, "--site", str(site))
    _, without = scan_status(
        capsys, "--site", str(site), "--exclude", "broken", "--exclude", "hooked/nested.py"
    )
    assert without["skipped"] == []
    assert without["scanned_files"] == document["scanned_files"] - 6
    modules = {f["module"] for f in without["findings"]}
    assert "hooked.nested" not in modules and not any(m.startswith("broken") for m in modules)
    assert "hooked" in modules


@pytest.mark.parametrize("glob", ["/abs/*", "", "./", "/"])
def test_bad_exclude_glob_is_a_usage_error(
    glob: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _scan.main(["--path", str(tmp_path), "--exclude", glob]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "argument --exclude:" in err


def test_exclude_and_fail_on_together(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tree / "pkg" / "core.py").write_text("def __getattr__(name):\n    raise AttributeError\n")
    argv = ["--path", str(tree), "--fail-on", "module_setattr"]
    assert scan_status(capsys, *argv)[0] == 1
    excluded = ["--exclude", "tests", "--exclude", "_vendor", "--exclude", "setup.py"]
    assert scan_status(capsys, *argv, *excluded, "--exclude", "__init__.py")[0] == 0

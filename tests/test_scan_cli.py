"""``pep726hook scan`` on the command line: choosing what to scan, usage errors, help, the table and a real process."""

from __future__ import annotations

import errno
import io
import json
import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from _scan_helpers import (
    MPMATH_STYLE,
    SRC,
    build_site,
    make_dist,
    run_json,
    write_file,
)

from pep726hook import _scan
from pep726hook._scan import _report


@pytest.fixture
def site(tmp_path: Path) -> Path:
    return build_site(tmp_path)


def test_distribution_filter(site: Path, capsys: pytest.CaptureFixture[str]) -> None:
    document = run_json(capsys, "--site", str(site), "Lazy_Pkg", "mpmath.style")
    assert {f["distribution"] for f in document["findings"]} == {"lazy-pkg", "mpmath-style"}
    assert document["scanned_files"] == 3


def test_unknown_distribution_is_a_usage_error(
    site: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _scan.main(["--site", str(site), "hooked", "no-such-dist"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert "pep726hook scan: error: no installed distribution named no-such-dist" in err


@pytest.mark.parametrize("name", ["tree", "tree/mod.py", "."])
def test_a_path_given_as_dist_gets_a_hint_at_path(
    name: str,
    site: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    (tmp_path / "tree").mkdir()
    (tmp_path / "tree" / "mod.py").write_text("def __dir__():\n    return []\n")
    monkeypatch.chdir(tmp_path)
    assert _scan.main(["--site", str(site), name]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert f"no installed distribution named {name} in {site}" in err
    assert err.endswith(f"to scan a source tree or file, give it as --path {name}\n")
    assert "Traceback" not in err
    # The hint is right: the same name after --path scans it.
    document = run_json(capsys, "--path", name)
    assert "module_dir" in [f["kind"] for f in document["findings"]]


@pytest.mark.parametrize("name", ["/nonexistent", "src/pkg"])
def test_a_missing_path_given_as_dist_says_it_does_not_exist(
    name: str, site: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _scan.main(["--site", str(site), name]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.endswith(
        f"no installed distribution named {name} in {site} (nor any file or directory {name})\n"
    )
    assert "--path" not in err.splitlines()[-1]


def test_a_distribution_name_gets_no_path_hint(
    site: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(site)
    assert _scan.main(["--site", str(site), "no-such-dist"]) == 2
    assert "source tree" not in capsys.readouterr().err


def test_pep726hook_itself_is_scanned_only_when_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Its own modules define __getattr__ and __dir__: in a plain environment
    # they were most of the findings, none of them the user's to change.
    make_dist(tmp_path, "pep726hook", "1.0", {"pep726hook/__init__.py": "def __dir__(): ...\n"})
    make_dist(tmp_path, "other", "1.0", {"other.py": "def __dir__(): ...\n"})
    everything = run_json(capsys, "--site", str(tmp_path))
    assert [f["module"] for f in everything["findings"]] == ["other"]
    assert everything["scanned_files"] == 1
    named = run_json(capsys, "--site", str(tmp_path), "PEP726Hook")
    assert [f["module"] for f in named["findings"]] == ["pep726hook"]


def test_counts_of_one_are_singular(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "1000")  # the summary on one line
    (tmp_path / "one.py").write_text("def __dir__(): ...\n")
    (tmp_path / "bad.py").write_text("def __dir__(:\n")
    assert _scan.main(["--path", str(tmp_path)]) == 0
    summary = capsys.readouterr().out.splitlines()[-1]
    assert summary.startswith("1 finding in 1 module; scanned 2 files (2 parsed), 1 skipped;")
    (tmp_path / "bad.py").unlink()
    assert _scan.main(["--path", str(tmp_path)]) == 0
    summary = capsys.readouterr().out.splitlines()[-1]
    assert summary.startswith("1 finding in 1 module; scanned 1 file (1 parsed), 0 skipped;")


@pytest.mark.parametrize(
    "argv",
    [["--bogus"], ["--path", "/nonexistent/dir"], ["--site", "/nonexistent/dir"], ["--jobs", "x"]],
)
def test_usage_errors_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert _scan.main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and "usage: pep726hook scan" in err


def test_path_that_does_not_exist_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = str(tmp_path / "missing")
    (tmp_path / "dangling.py").symlink_to(tmp_path / "nowhere.py")
    for path in (missing, str(tmp_path / "dangling.py")):
        assert _scan.main(["--path", path]) == 2
        out, err = capsys.readouterr()
        assert out == "" and "Traceback" not in err
        assert err.endswith(
            f"pep726hook scan: error: argument --path: no such file or directory: {path}\n"
        )


def test_path_may_name_one_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_file(tmp_path / "pkg" / "lazy.py", "def __getattr__(name):\n    raise AttributeError\n")
    write_file(tmp_path / "pkg" / "other.py", "def __dir__():\n    return []\n")
    document = run_json(capsys, "--path", str(tmp_path / "pkg" / "lazy.py"))
    assert [(f["module"], f["kind"]) for f in document["findings"]] == [("lazy", "module_getattr")]
    assert document["scanned_files"] == 1


@pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="needs Unix sockets")
def test_path_that_cannot_be_read_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A socket cannot be opened as a file, not even by root.
    path = tmp_path / "listening.py"
    with socket.socket(socket.AF_UNIX) as listening:
        listening.bind(str(path))
        assert _scan.main(["--path", str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "Traceback" not in err
    assert err.endswith(
        f"pep726hook scan: error: argument --path: cannot read {path}: No such device or address\n"
    )


def test_directory_that_cannot_be_listed_is_reported_skipped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Listing fails as it does for a directory without read permission
    # (which root could still list, so the failure is staged).
    write_file(tmp_path / "tree" / "seen.py", "def __dir__():\n    return []\n")
    write_file(tmp_path / "tree" / "private" / "hidden.py", "def __dir__():\n    return []\n")
    private = str(tmp_path / "tree" / "private")
    scandir = os.scandir

    def failing_scandir(path: Any = ".") -> Any:
        if os.fspath(path) == private:
            raise PermissionError(errno.EACCES, "Permission denied", private)
        return scandir(path)

    monkeypatch.setattr(os, "scandir", failing_scandir)
    document = run_json(capsys, "--path", str(tmp_path / "tree"))
    assert [f["module"] for f in document["findings"]] == ["seen"]
    assert document["skipped"] == [
        {"path": private, "reason": "cannot list directory: Permission denied"}
    ]
    assert document["scanned_files"] == 1


@pytest.mark.parametrize("columns", ["0", "-3", "wide", ""])
def test_columns_that_is_no_positive_number_is_ignored(
    columns: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # As shutil.get_terminal_size() ignores it: the terminal's width, else 80.
    monkeypatch.setenv("COLUMNS", columns)
    monkeypatch.setattr(os, "get_terminal_size", _no_terminal)
    write_file(tmp_path / "lazy.py", "def __getattr__(name):\n    raise AttributeError\n")
    for argv in (["--path", str(tmp_path)], ["--help"]):
        assert _scan.main(argv) == 0
        out, err = capsys.readouterr()
        assert err == ""
        monkeypatch.setenv("COLUMNS", "80")
        assert _scan.main(argv) == 0
        assert out == capsys.readouterr().out  # laid out as at the default width
        monkeypatch.setenv("COLUMNS", columns)


def _no_terminal(*args: object) -> os.terminal_size:
    raise OSError("not a terminal")


def test_summary_keeps_counts_and_the_interpreter_whole(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # The summary of a large scan, at every width: "3.11.7" was left alone on a line at 80.
    result = _scan.ScanResult("CPython 3.11.7", 14084, 264, [], [])
    for width in range(_report.MIN_WIDTH, 121):
        out = io.StringIO()
        _report.write_table(result, out, width)
        lines = out.getvalue().splitlines()
        assert all(len(line) <= width for line in lines), (width, lines)
        for group in ("0 findings", "0 modules;", "scanned 14084 files", "(264 parsed),"):
            assert any(group in line for line in lines), (width, lines)
        assert any("0 skipped;" in line for line in lines), (width, lines)
        assert any(line.endswith("CPython 3.11.7") for line in lines), (width, lines)


def test_help(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "100")  # narrower, argparse would break the URL
    assert _scan.main(["--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: pep726hook scan")
    for option in ("--path", "--stdlib", "--site", "--json", "--thorough", "DIST"):
        assert option in out
    words = " ".join(out.split())  # argparse wraps the help to the terminal's width
    for option in ("--exclude", "--fail-on", "module_setattr, module_delattr, class_workaround"):
        assert option in words
    # Installed copies have no docs/: the help points at the document online.
    assert "https://github.com/pep726hook/pep726hook/blob/main/docs/scan.md" in out
    assert " docs/scan.md" not in out


def test_path_trees(site: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tree = tmp_path / "tree"
    (tree / "pkg" / "sub").mkdir(parents=True)
    (tree / "pkg" / "__init__.py").write_text("def __getattr__(name):\n    raise AttributeError\n")
    (tree / "pkg" / "sub" / "mod.py").write_text(textwrap.dedent(MPMATH_STYLE))
    (tree / ".hidden").mkdir()
    (tree / ".hidden" / "x.py").write_text("def __dir__():\n    return []\n")
    document = run_json(capsys, "--path", str(tree))
    found = {(f["distribution"], f["module"], f["kind"]) for f in document["findings"]}
    assert found == {(None, "pkg", "module_getattr"), (None, "pkg.sub.mod", "class_workaround")}
    assert document["scanned_files"] == 2
    # --path alone leaves installed distributions out; with a DIST or --site, both are scanned.
    both = run_json(capsys, "--path", str(tree), "--site", str(site), "lazy-pkg")
    assert {f["distribution"] for f in both["findings"]} == {None, "lazy-pkg"}
    everything = run_json(capsys, "--path", str(tree), "--site", str(site))
    assert len(everything["findings"]) == len(document["findings"]) + 14


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_fifo_is_skipped_not_waited_for(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    os.mkfifo(str(tmp_path / "pipe.py"))
    document = run_json(capsys, "--path", str(tmp_path))
    assert document["skipped"] == [
        {"path": str(tmp_path / "pipe.py"), "reason": "cannot read: not a regular file"}
    ]


def unwrapped(out: str) -> list[str]:
    """The lines of a table report with each wrapped note joined back into one line."""
    lines: list[str] = []
    for line in out.splitlines():
        if line.startswith("      ") and lines and lines[-1].startswith("    "):
            lines[-1] += " " + line.strip()
        else:
            lines.append(line)
    return lines


def test_table(
    site: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "1000")  # one row per finding, whatever the paths
    assert _scan.main(["--site", str(site)]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    lines = unwrapped(out)
    # What pep726hook changes comes first: the fixtures define module-level hooks.
    assert lines[0].startswith(
        "Under pep726hook, the hooks of the module_delattr and module_setattr findings start"
    )
    lines = lines[lines.index("") + 1 :]
    assert lines[0].split() == ["LOCATION", "DISTRIBUTION", "MODULE", "KIND", "DETAIL"]
    ctx = str(site / "mpstyle" / "ctx.py")
    (row,) = [line for line in lines if line.startswith(f"{ctx}:3 ")]
    assert row.split()[1:4] == ["mpmath-style", "mpstyle.ctx", "class_workaround"]
    following = lines[lines.index(row) + 1 : lines.index(row) + 4]
    assert following[0] == "    confidence: high"
    assert following[1].startswith("    read cost: reads take the subclass path")
    assert following[2].startswith("    suggestion: for you, as a user of the distribution:")
    assert "For its authors: define module-level" in following[2]
    assert any(line.startswith("skipped ") and "latin.py: cannot decode" in line for line in lines)
    assert lines[-1].startswith("14 findings in 9 modules; scanned 15 files")
    assert "2 skipped" in lines[-1]


@pytest.mark.parametrize("columns", ["10", "40", "60", "80", "120", "200", "1000"])
def test_table_fits_the_terminal_width(
    columns: str,
    site: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COLUMNS", columns)
    assert _scan.main(["--site", str(site)]) == 0
    out = capsys.readouterr().out
    width = max(int(columns), _report.MIN_WIDTH)
    for line in out.splitlines():
        # A word longer than the line (a path) sits alone on its line.
        assert len(line) <= width or len(line.split()) == 1, (width, line)
    # Wrapping loses nothing: every text of every finding is there, in order.
    text = " ".join(out.split())
    for finding in run_json(capsys, "--site", str(site))["findings"]:
        for field in ("detail", "read_cost", "suggestion"):
            if finding[field]:
                assert " ".join(finding[field].split()) in text
        assert f"{finding['path']}:{finding['line']}" in text


def test_narrow_table_puts_each_finding_in_a_block(
    site: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "60")
    assert _scan.main(["--site", str(site), "mpmath.style"]) == 0
    lines = capsys.readouterr().out.splitlines()
    lines = lines[lines.index("") + 1 :]  # after what pep726hook changes
    assert lines[:4] == ["LOCATION", "  KIND in MODULE (distribution DISTRIBUTION)", "  DETAIL", ""]
    assert lines[4] == f"{site / 'mpstyle' / 'ctx.py'}:3"
    assert lines[5] == "  class_workaround in mpstyle.ctx (distribution"
    assert lines[6] == "  mpmath-style)"
    assert lines[7].startswith("  class _MPModule(types.ModuleType) installed by")
    assert "    confidence: high" in lines


def test_json_ignores_the_terminal_width(
    site: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "40")
    assert _scan.main(["--site", str(site), "--json"]) == 0
    out = capsys.readouterr().out
    expected = json.dumps(_report.to_json(_scan.scan(site=[str(site)])), indent=2) + "\n"
    assert out == expected
    assert max(map(len, out.splitlines())) > 200


def test_empty_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _scan.main(["--path", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("0 findings in 0 modules; scanned 0 files")


def test_record_listing_a_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    info = make_dist(tmp_path, "gone", "1", {"gone.py": "x = 1\n"})
    (tmp_path / "gone.py").unlink()
    document = run_json(capsys, "--site", str(tmp_path))
    assert document["skipped"] == [
        {"path": str(tmp_path / "gone.py"), "reason": "cannot read: No such file or directory"}
    ]
    assert info.exists()


def test_subprocess(site: Path, tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONPATH=SRC)
    code = "from pep726hook._scan import main; raise SystemExit(main(%r))"
    done = subprocess.run(
        [sys.executable, "-c", code % (["--site", str(site), "--json"],)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert json.loads(done.stdout)["schema"] == "pep726hook.scan/1"
    assert not (tmp_path / "EXECUTED").exists()
    failed = subprocess.run(
        [sys.executable, "-c", code % (["nope", "--site", str(site)],)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert failed.returncode == 2
    assert "no installed distribution named nope" in failed.stderr


def test_closed_stdout_is_not_an_error(site: Path) -> None:
    code = "from pep726hook._scan import main; raise SystemExit(main(%r))"
    child = subprocess.Popen(
        [sys.executable, "-c", code % (["--site", str(site)],)],
        env=dict(os.environ, PYTHONPATH=SRC),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert child.stdout is not None and child.stderr is not None
    child.stdout.close()  # like "| head" that has already exited
    stderr = child.stderr.read()
    child.stderr.close()
    assert (child.wait(), stderr) == (0, b"")

"""``pep726hook scan``: fixture distributions in a temporary site directory, never imported."""

from __future__ import annotations

import _thread
import errno
import io
import json
import os
import socket
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path
from typing import Any, Dict, Union

import pytest

import pep726hook
from pep726hook import _scan
from pep726hook._scan import _advice, _files, _report, _scanner

SRC = str(Path(__file__).resolve().parent.parent / "src")

Files = Dict[str, Union[str, bytes]]


def make_dist(site: Path, name: str, version: str, files: Files) -> Path:
    """Install *files* into *site* as distribution *name* (METADATA + RECORD, by hand)."""
    info = site / f"{name}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", encoding="utf-8"
    )
    record = []
    for relative, content in files.items():
        path = site / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        data = content if isinstance(content, bytes) else textwrap.dedent(content).encode()
        path.write_bytes(data)
        record.append(f"{relative},,")
    record += [f"{info.name}/METADATA,,", f"{info.name}/RECORD,,"]
    (info / "RECORD").write_text("\n".join(record) + "\n", encoding="utf-8")
    return info


def tripwire(marker: Path) -> str:
    """Module source that leaves *marker* behind and fails if it is ever executed."""
    return (
        f"open({str(marker)!r}, 'w').close()\n"
        "raise RuntimeError('pep726hook scan executed a scanned module')\n"
    )


MPMATH_STYLE = """\
    import sys, types

    class _MPModule(types.ModuleType):
        @property
        def dps(self):
            return 15

        @dps.setter
        def dps(self, value):
            raise AttributeError("use mp.mp.dps")

    sys.modules[__name__].__class__ = _MPModule
"""


# Hook-like text at column 0 inside strings, and a method in a class inside a
# top-level "if": the byte-level filter must not be fooled into a finding.
TRICKY = '''\
"""Module docstring with an example at column 0:

def __getattr__(name):
    return name
"""
import sys
if sys.platform:
    class Proxy:
        def __getattr__(self, name):
            return name
X = """
class Fake:
"""
def helper():
    """Text at column 0 in a docstring:
def __dir__():
"""
    return 1
'''


@pytest.fixture
def site(tmp_path: Path) -> Path:
    """A site directory holding the fixture distributions."""
    root = tmp_path / "site"
    marker = tmp_path / "EXECUTED"
    make_dist(
        root,
        "hooked",
        "1.0",
        {
            "hooked/__init__.py": tripwire(marker)
            + textwrap.dedent(
                """\
                def __setattr__(name, value):
                    globals()[name] = value

                def __delattr__(name):
                    raise AttributeError(name)
                """
            ),
            "hooked/blocks.py": """\
                import sys
                if sys.version_info >= (3, 8):
                    def __setattr__(name, value):
                        pass
                try:
                    from ._impl import __delattr__
                except ImportError:
                    __delattr__ = None
            """,
            "hooked/nested.py": """\
                class Point:
                    def __setattr__(self, name, value):
                        object.__setattr__(self, name, value)

                    def __delattr__(self, name):
                        object.__delattr__(self, name)

                def factory():
                    def __setattr__(name, value):
                        pass
                    return __setattr__

                if True:
                    class Inner:
                        def __getattr__(self, name):
                            return name
                # def __setattr__(name, value): a comment, not code
                DOC = "__dir__ mentioned in a string"
            """,
            "hooked/tricky.py": TRICKY,
        },
    )
    make_dist(root, "mpmath-style", "1.4.1", {"mpstyle/ctx.py": MPMATH_STYLE})
    make_dist(
        root,
        "replaced",
        "0.1",
        {
            "replaced.py": """\
                import sys
                from types import ModuleType

                class _Guard(ModuleType):
                    def __setattr__(self, name, value):
                        raise AttributeError("read-only module")

                    def __repr__(self):
                        return "<guarded>"

                sys.modules[__name__] = _Guard(__name__)
            """,
            "aliased.py": """\
                import sys as _sys

                class _Base(type(_sys)):
                    def __delattr__(self, name):
                        raise AttributeError(name)

                class _Final(_Base):
                    speed = property(lambda self: 1, lambda self, value: None)

                _this = _sys.modules[__name__]
                _this.__class__ = _Final
            """,
            "harmless.py": """\
                import sys, types

                class _Lazy(types.ModuleType):
                    def __getattr__(self, name):
                        return name

                sys.modules[__name__].__class__ = _Lazy
            """,
        },
    )
    make_dist(
        root,
        "lazy-pkg",
        "2.0",
        {
            "lazy_pkg/__init__.py": """\
                def __getattr__(name):
                    raise AttributeError(name)

                def __dir__():
                    return []
            """,
            "lazy_pkg/attach.py": """\
                import lazy_loader as lazy

                (
                    __getattr__,
                    __dir__,
                    __all__,
                ) = lazy.attach(__name__, submodules=["a"])
            """,
        },
    )
    make_dist(
        root,
        "broken",
        "0.0",
        {
            "broken/syntax.py": "def __setattr__(name, value)\n    pass\n",
            "broken/latin.py": b"def __setattr__(name, value):\n    return '\xe9t\xe9'\n",
            "broken/cookie.py": b"# -*- coding: latin-1 -*-\n"
            b"def __setattr__(name, value):\n    return '\xe9t\xe9'\n",
            "broken/elsewhere.py": "def __dir__():\n    return []\n\nx = = 1\n",
            "broken/plain.py": "x = 1 +\n",
        },
    )
    return root


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    assert _scan.main(["--json", *argv]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    document: dict[str, Any] = json.loads(out)
    return document


def kinds_by_module(document: dict[str, Any]) -> dict[str, list[tuple[int, str]]]:
    result: dict[str, list[tuple[int, str]]] = {}
    for finding in document["findings"]:
        result.setdefault(finding["module"], []).append((finding["line"], finding["kind"]))
    return result


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


def write_file(path: Path, source: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source), encoding="utf-8")


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


def test_progress_only_on_a_terminal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for index in range(300):
        (tmp_path / f"m{index}.py").write_text("x = 1\n")

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    _scan.scan(paths=[str(tmp_path)], jobs=1)
    assert "pep726hook scan:" in terminal.getvalue()
    assert terminal.getvalue().endswith("\r\x1b[K")


def test_forked_workers_give_the_same_result(site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files = _scan.collect_files(site=[str(site)])
    serial = _scan.scan_files(files, jobs=1)
    forks = []
    fork_child = _scanner._fork_child

    def counting_fork_child(*args: Any) -> Any:
        forks.append(args)
        return fork_child(*args)

    monkeypatch.setattr(_scanner, "_fork_child", counting_fork_child)
    assert _scan.scan_files(files, jobs=3) == serial
    assert len(forks) == (2 if _scanner._can_fork() else 0)

    # A child that fails has its share scanned by the parent.
    def failed_child(pid: int, read_end: int) -> None:
        os.close(read_end)
        os.waitpid(pid, 0)

    monkeypatch.setattr(_scanner, "_child_result", failed_child)
    assert _scan.scan_files(files, jobs=2) == serial


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="workers are forked on Linux only")
def test_no_fork_beside_a_thread_that_threading_does_not_know(site: Path) -> None:
    # pytest-xdist's execnet starts its threads with _thread, which
    # threading.active_count() does not see; forking beside one of them is
    # what CPython 3.12+ warns about ("This process is multi-threaded").
    started, release = _thread.allocate_lock(), _thread.allocate_lock()
    started.acquire()
    release.acquire()

    def wait() -> None:
        started.release()
        with release:
            pass

    _thread.start_new_thread(wait, ())
    started.acquire()
    try:
        assert not _scanner._can_fork()
        with warnings.catch_warnings():
            warnings.simplefilter("error", DeprecationWarning)
            _scan.scan_files(_scan.collect_files(site=[str(site)]), jobs=3)
    finally:
        release.release()


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


# The order in which pep726hook/_scan/__init__.py lists its modules: each may
# import only those before it, so the package has no import cycle.
SCAN_MODULES = (
    "_model",
    "_files",
    "_filter",
    "_markers",
    "_advice",
    "_parsing",
    "_static_getattr",
    "_analysis",
    "_callers",
    "_scanner",
    "_report",
    "_declarations",
    "_command",
)


def _sibling_imports(module: str) -> set[str]:
    import ast

    path = Path(_scan.__file__).parent / f"{module}.py"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module:
                found.add(node.module)
            else:
                found.update(alias.name for alias in node.names)
    return found


@pytest.mark.parametrize("module", SCAN_MODULES)
def test_scan_modules_import_only_earlier_siblings(module: str) -> None:
    earlier = set(SCAN_MODULES[: SCAN_MODULES.index(module)]) | {"_memfind"}
    assert _sibling_imports(module) <= earlier


def test_scan_package_lists_every_module() -> None:
    directory = Path(_scan.__file__).parent
    modules = {p.stem for p in directory.glob("_*.py") if p.stem != "__init__"}
    assert modules == set(SCAN_MODULES)


def test_scan_start_up_leaves_the_parser_and_report_unimported() -> None:
    # `pep726hook scan` imports our parser only for a file that needs it, and
    # the renderer only to print; runpy, which runs programs, never.  (ast
    # itself comes with importlib.metadata, which imports inspect.  The
    # command shares the runner's parser, messages and output helpers; the
    # runner imports only the package's start-up modules, and starts nothing.)
    lazy = ("runpy", "pep726hook._scan._analysis", "pep726hook._scan._report")
    code = f"import sys, pep726hook._cli, pep726hook._scan; print([m for m in {lazy!r} if m in sys.modules])"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


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

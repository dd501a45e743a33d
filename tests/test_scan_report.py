"""The people's report of ``pep726hook scan``: what it says first, once, and to whom."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from pep726hook import _scan

LAZY = "def __getattr__(name):\n    return name.upper()\n"
DIR = "def __dir__():\n    return []\n"
SETATTR = "def __setattr__(name, value):\n    pass\n"


def write(root: Path, files: dict[str, str]) -> None:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")


def install(site: Path, name: str, files: dict[str, str]) -> None:
    """*files* as distribution *name* in *site* (METADATA and RECORD written by hand)."""
    write(site, files)
    info = site / f"{name}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (info / "RECORD").write_text("".join(f"{relative},,\n" for relative in files))


def report(capsys: pytest.CaptureFixture[str], *argv: str, columns: int = 80) -> str:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("COLUMNS", str(columns))
        assert _scan.main(list(argv)) == 0
    out, err = capsys.readouterr()
    assert err == ""
    return out


def test_a_suggestion_several_findings_share_is_said_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path, {"a.py": LAZY, "b.py": LAZY, "c.py": LAZY, "d.py": LAZY + "import warnings\n"})
    write(tmp_path, {"e.py": "import warnings\ndef __getattr__(name):\n    return warnings\n"})
    out = report(capsys, "--path", str(tmp_path))
    document = _scan.scan(paths=[str(tmp_path)])
    suggestion = document.findings[0].suggestion
    assert suggestion is not None
    text = " ".join(out.split())
    # Said once, after the findings, with where it applies.
    assert text.count(" ".join(suggestion.split())) == 1
    assert "[1] for 5 modules: a, b, c, d, e read cost:" in text
    for module in "abcde":
        assert f"module_getattr in {module}; see note [1]" in text
    assert "[2]" not in text


def test_a_suggestion_of_one_finding_stays_under_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path, {"a.py": LAZY, "b.py": "class C:\n    pass\n" + SETATTR})
    out = report(capsys, "--path", str(tmp_path), columns=1000)
    assert "see note" not in out and "[1]" not in out
    assert "    suggestion: to keep its reads specialised" in out


def test_what_pep726hook_changes_is_said_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path / "reads", {"a.py": LAZY, "b.py": DIR})
    first = report(capsys, "--path", str(tmp_path / "reads")).split("\n\n")[0]
    assert " ".join(first.split()) == (
        "None of these findings changes how the code behaves under pep726hook, which runs only"
        " module-level __setattr__/__delattr__ hooks (there are none here) and leaves other"
        " modules as they are: they say what reads of these modules cost and how the code could"
        " be written with PEP 726."
    )
    write(tmp_path / "hooks", {"a.py": LAZY, "b.py": SETATTR})
    first = report(capsys, "--path", str(tmp_path / "hooks")).split("\n\n")[0]
    assert " ".join(first.split()).startswith(
        "Under pep726hook, the hooks of the module_setattr findings start running on stores and"
        " deletions through their modules (PEP 726); none of the other findings changes"
    )
    # Nothing found, nothing to say.
    (tmp_path / "empty").mkdir()
    assert report(capsys, "--path", str(tmp_path / "empty")).startswith("0 findings")


def test_dir_findings_are_explained_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path, {"a.py": DIR, "b.py": DIR})
    out = " ".join(report(capsys, "--path", str(tmp_path)).split())
    assert out.count("module_dir: a PEP 562 __dir__ only changes what dir(module) lists") == 1
    write(tmp_path / "other", {"c.py": LAZY})
    out = report(capsys, "--path", str(tmp_path / "other"))
    assert "__dir__ only changes" not in out


def test_a_distribution_finding_speaks_to_its_user_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    site = tmp_path / "site"
    install(site, "lazylib", {"lazylib/__init__.py": LAZY})
    write(tmp_path / "mine", {"mine.py": LAZY})
    result = _scan.scan(paths=[str(tmp_path / "mine")], site=[str(site)])
    advice = {f.module: f.suggestion or "" for f in result.findings}
    assert advice["lazylib"].startswith(
        "for you, as a user of the distribution: nothing to change; to keep this module's reads"
        " specialised in your program, without editing it: python -m pep726hook --fast-getattr,"
        " or PEP726HOOK_FAST_GETATTR=1"
    )
    authors = advice["lazylib"].partition(". For its authors: ")[2]
    assert authors.startswith("to keep its reads specialised, opt the module in with")
    # The switch is said once, in the user's part.
    assert "--fast-getattr" not in authors
    # Your own code (a --path tree) is yours to change: the authors' advice alone.
    assert advice["mine"].startswith("to keep its reads specialised, opt the module in with")
    assert "--fast-getattr" in advice["mine"]


def test_a_distribution_getattr_serving_deprecated_names_tells_its_user(
    tmp_path: Path,
) -> None:
    site = tmp_path / "site"
    source = (
        "def __getattr__(attr_name):\n    from ._new import values\n"
        "    value = getattr(values, attr_name)\n    _raise_warning(attr_name)\n"
        "    return value\n"
    )
    install(site, "oldlib", {"oldlib/core.py": source})
    (finding,) = _scan.scan(site=[str(site)]).findings
    assert finding.suggestion is not None
    assert finding.suggestion.startswith(
        "for you, as a user of the distribution: nothing to change unless your code reads names"
        " through this module: each such read warns, as the names are deprecated"
    )
    assert "For its authors: this __getattr__ only serves deprecated names" in finding.suggestion

"""What the ``pep726hook scan`` tests share: fixture distributions written by hand, never imported."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any, Dict, Union

import pytest

from pep726hook import _scan

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


def build_site(tmp_path: Path) -> Path:
    """A site directory holding the fixture distributions (the ``site`` fixture of the scan tests)."""
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


def write_file(path: Path, source: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source), encoding="utf-8")

"""Sphinx configuration of pep726hook's documentation site.

Sphinx with MyST rather than MkDocs: the pages were already Markdown, MyST reads
them unchanged, and Sphinx's autodoc builds the API reference from the installed
package's own docstrings while ``-W -n`` (noxfile.py's docs session) turns every
warning, broken internal link or unresolved cross-reference into a failed build.
Read the Docs builds it natively (.readthedocs.yaml).
"""

from __future__ import annotations

import re
from pathlib import Path

_INIT = Path(__file__).resolve().parents[1] / "src" / "pep726hook" / "__init__.py"

project = "pep726hook"
author = "pep726hook developers"
copyright = "pep726hook developers"
# The one place the version is written, read without importing the package.
_match = re.search(r'^__version__ = "([^"]+)"', _INIT.read_text(encoding="utf-8"), re.M)
assert _match is not None, f"no __version__ in {_INIT}"
release = version = _match.group(1)

extensions = ["myst_parser", "sphinx.ext.autodoc"]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build"]

# GitHub-style anchors (#the-pth-line-pep726hook1), as the pages link to each other
# on GitHub too.
myst_heading_anchors = 4
myst_enable_extensions = ["colon_fence"]

autodoc_member_order = "bysource"
autodoc_typehints = "signature"
# Defaults as written in the source (category=DeprecationWarning), not their
# repr (<class 'DeprecationWarning'>).
autodoc_preserve_defaults = True
# Names in signatures that are not part of this site (the standard library's, and
# typing constructs); every other cross-reference must resolve (-n).
nitpick_ignore_regex = [
    ("py:class", r"(types\.)?ModuleType|str|bool|int|object|None|tuple|list|dict"),
    ("py:class", r"(typing\.|collections\.abc\.)?\w+"),
    ("py:class", r"TracebackType|BaseException|type\[BaseException\]|Self|typing_extensions\.\w+"),
]

html_theme = "furo"
html_title = f"pep726hook {release}"
html_static_path = ["_static"]
html_css_files = ["wrap-output.css"]

# The package docstring's last line is pytest's marker (see the comment after it
# in src/pep726hook/__init__.py), not something a reader of the API needs.
_PYTEST_MARKER = "PYTEST_DONT_REWRITE"
# deprecated() returns its argument's own type; the type variable that says so is
# private (_T), and the page names it T.
_PRIVATE_TYPE_VARIABLE = re.compile(r"\b_T\b")


def _drop_pytest_marker(  # noqa: PLR0917 (Sphinx's event signature)
    app: object, what: str, name: str, obj: object, options: object, lines: list[str]
) -> None:
    if what == "module" and name == "pep726hook":
        lines[:] = [line for line in lines if line.strip() != _PYTEST_MARKER]


def _public_type_variable(  # noqa: PLR0917 (Sphinx's event signature)
    app: object,
    what: str,
    name: str,
    obj: object,
    options: object,
    signature: str | None,
    return_annotation: str | None,
) -> tuple[str | None, str | None]:
    def public(text: str | None) -> str | None:
        return None if text is None else _PRIVATE_TYPE_VARIABLE.sub("T", text)

    return public(signature), public(return_annotation)


def setup(app: object) -> None:
    app.connect("autodoc-process-docstring", _drop_pytest_marker)  # type: ignore[attr-defined]
    app.connect("autodoc-process-signature", _public_type_variable)  # type: ignore[attr-defined]

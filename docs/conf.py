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
# Names in signatures that are not part of this site (the standard library's, and
# typing constructs); every other cross-reference must resolve (-n).
nitpick_ignore_regex = [
    ("py:class", r"(types\.)?ModuleType|str|bool|int|object|None|tuple|list|dict"),
    ("py:class", r"(typing\.|collections\.abc\.)?\w+"),
    ("py:class", r"TracebackType|BaseException|type\[BaseException\]|Self|typing_extensions\.\w+"),
]

html_theme = "furo"
html_title = f"pep726hook {release}"
html_static_path: list[str] = []

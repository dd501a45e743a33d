"""The modules of ``pep726hook._scan`` import each other in order and leave the parser and renderer unloaded."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from pep726hook import _scan

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

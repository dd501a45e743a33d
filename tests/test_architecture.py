"""The package's modules import each other in layers, never in a circle, and keep their privates.

Read from the source of the installed package with :mod:`ast`, nothing
imported: every ``import`` / ``from ... import`` statement between two modules
of ``pep726hook`` counts, at module level and inside functions alike (an
import inside a function runs later, but it still ties the two modules both
ways), and so does ``importlib.import_module`` / ``__import__`` of a name
spelt in the call.  Only the imports under ``if TYPE_CHECKING:``, which never
run, are left out.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pep726hook

PACKAGE = "pep726hook"
ROOT = Path(pep726hook.__file__).parent


def module_files(root: Path = ROOT) -> dict[str, Path]:
    """Each module of the package (subpackages included) by its dotted name."""
    modules = {}
    for path in sorted(root.rglob("*.py")):
        parts = [PACKAGE, *path.relative_to(root).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def _is_package(name: str, modules: dict[str, Path]) -> bool:
    return modules[name].name == "__init__.py"


def _resolve(importer: str, level: int, target: str | None, modules: dict[str, Path]) -> str:
    """The absolute name of ``from <level dots><target> import ...`` in *importer*."""
    if level == 0:
        return target or ""
    base = importer.split(".")
    if not _is_package(importer, modules):
        base.pop()
    if level > 1:
        base = base[: len(base) - level + 1]
    return ".".join([*base, target] if target else base)


class _Imports(ast.NodeVisitor):
    """Collect (line, imported module, imported name or None) from a module's tree."""

    def __init__(self, name: str, modules: dict[str, Path]) -> None:
        self.name = name
        self.modules = modules
        self.found: list[tuple[int, str, str | None]] = []

    def visit_If(self, node: ast.If) -> None:
        test = node.test
        if isinstance(test, ast.Name) and test.id == "TYPE_CHECKING":
            for statement in node.orelse:
                self.visit(statement)
            return
        self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self.found.append((node.lineno, alias.name, None))

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        source = _resolve(self.name, node.level, node.module, self.modules)
        for alias in node.names:
            self.found.append((node.lineno, source, alias.name))

    def visit_Call(self, node: ast.Call) -> None:
        function = node.func
        called = (
            function.attr
            if isinstance(function, ast.Attribute)
            else function.id
            if isinstance(function, ast.Name)
            else ""
        )
        if called in ("import_module", "__import__") and node.args:
            spelt = _spelt_module(node.args[0])
            if spelt is not None:
                self.found.append((node.lineno, spelt, None))
        self.generic_visit(node)


def _spelt_module(argument: ast.expr) -> str | None:
    """The module a literal ``"pkg.mod"`` or ``f"{__package__}.mod"`` argument names."""
    if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
        return argument.value
    if isinstance(argument, ast.JoinedStr) and len(argument.values) == 2:
        head, tail = argument.values
        if (
            isinstance(head, ast.FormattedValue)
            and isinstance(head.value, ast.Name)
            and head.value.id == "__package__"
            and isinstance(tail, ast.Constant)
            and isinstance(tail.value, str)
        ):
            return PACKAGE + tail.value
    return None


def imports_of(name: str, modules: dict[str, Path]) -> list[tuple[int, str, str | None]]:
    """What module *name* imports, as (line, module, name imported from it or None)."""
    collector = _Imports(name, modules)
    collector.visit(ast.parse(modules[name].read_text(encoding="utf-8"), str(modules[name])))
    return collector.found


def import_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    """For each module, the package's modules it imports (``from pkg import sub``: *sub*)."""
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name in modules:
        for _line, source, imported in imports_of(name, modules):
            submodule = f"{source}.{imported}"
            if imported is not None and submodule in modules:
                graph[name].add(submodule)
            elif source in modules:
                graph[name].add(source)
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """Return one import circle of *graph* (its first module repeated at the end), or None."""
    finished: set[str] = set()
    for start in sorted(graph):
        if start in finished:
            continue
        path = [start]
        following = [iter(sorted(graph[start]))]
        while path:
            successor = next(following[-1], None)
            if successor is None:
                finished.add(path.pop())
                following.pop()
            elif successor in path:
                return [*path[path.index(successor) :], successor]
            elif successor not in finished:
                path.append(successor)
                following.append(iter(sorted(graph[successor])))
    return None


def private_imports(modules: dict[str, Path]) -> list[str]:
    """Every import of a private name that another module defines, as ``module:line: name``.

    A private submodule (``from . import _native``) is a module, not a name of
    another module's, and so are the names a package's ``__init__`` defines
    for the modules inside it (its underscore keeps them out of the public
    namespace, not away from the package's own modules).
    """
    found = []
    for name in modules:
        for line, source, imported in imports_of(name, modules):
            if imported is None or not imported.startswith("_") or imported.startswith("__"):
                continue
            if f"{source}.{imported}" in modules or source not in modules:
                continue
            if _is_package(source, modules) and name.startswith(source + "."):
                continue
            found.append(f"{name}:{line}: {imported} from {source}")
    return found


def test_reads_every_module_of_the_package() -> None:
    # The checks below see what this finds: the package's modules, the
    # scanner's subpackage included, and their imports of each other.
    modules = module_files()
    assert {f"{PACKAGE}._runner", f"{PACKAGE}._install", f"{PACKAGE}._scan._command"} <= set(
        modules
    )
    graph = import_graph(modules)
    assert f"{PACKAGE}._compat" in graph[f"{PACKAGE}._runner"]
    # Inside a function, and through importlib with the name spelt out.
    assert f"{PACKAGE}._install" in graph[f"{PACKAGE}._runner"]
    assert f"{PACKAGE}._scan" in graph[f"{PACKAGE}._cli"]


def test_no_import_circle_among_the_modules() -> None:
    cycle = find_cycle(import_graph(module_files()))
    assert cycle is None, "import circle: " + " -> ".join(cycle or [])


def test_no_module_imports_a_private_name_of_another() -> None:
    assert private_imports(module_files()) == []


def test_only_the_deprecations_package_imports_its_modules() -> None:
    # The engines, the composition, the state and enable() call it back only
    # through what it registers as it loads; the public names reach it
    # through the package's lazy loader, which this reading cannot see
    # (lazy_attribute() and removed_attribute() included, whose common case
    # loads none of it).
    deprecations = f"{PACKAGE}._deprecations"
    graph = import_graph(module_files())
    importers = [
        name
        for name, imported in graph.items()
        if not (name == deprecations or name.startswith(deprecations + "."))
        and any(m == deprecations or m.startswith(deprecations + ".") for m in imported)
    ]
    assert importers == []
    assert f"{deprecations}._deprecating" in graph[f"{deprecations}._api"]
    # Nor looks it up by name in sys.modules (a string naming it, docstrings aside).
    spelt = [
        f"{name}: {text!r}"
        for name, path in module_files().items()
        if name not in (PACKAGE, deprecations) and not name.startswith(deprecations + ".")
        for text in _strings_in_code(path)
        if text.lstrip(".").startswith("_deprecation") or f"{PACKAGE}._deprecation" in text
    ]
    assert spelt == []


def _strings_in_code(path: Path) -> list[str]:
    """The string constants of a module's code, its docstrings left out."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
    ]


def test_the_checks_catch_a_circle_and_a_private_import(tmp_path: Path) -> None:
    # The same functions on a small package that has both faults.
    for name, text in {
        "__init__.py": "_shared = 1\n",
        "_a.py": "from . import _shared\nfrom ._b import _helper\n",
        "_b.py": "def _helper():\n    from . import _c\n",
        "_c.py": "from . import _a\n",
        "_d.py": "TYPE_CHECKING = False\nif TYPE_CHECKING:\n    from ._a import _x\n",
    }.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    modules = module_files(tmp_path)
    cycle = find_cycle(import_graph(modules))
    assert cycle is not None
    assert sorted(set(cycle)) == [f"{PACKAGE}._a", f"{PACKAGE}._b", f"{PACKAGE}._c"]
    assert private_imports(modules) == [f"{PACKAGE}._a:2: _helper from {PACKAGE}._b"]


# --- No file over 800 lines -------------------------------------------------

MAX_LINES = 800
CHECKOUT = Path(__file__).resolve().parents[1]

# Files a person does not maintain line by line, so their length says nothing
# about how the code or prose is split: a picture, and diffs made by ``diff``
# against third-party sources (their length is the upstream file's business).
NOT_MAINTAINED_BY_HAND = ("docs/benchmarks.png",)
NOT_MAINTAINED_SUFFIXES = (".patch",)


def tracked_files() -> list[str]:
    """The files git tracks in the checkout the tests run from, or skip the test."""
    import shutil
    import subprocess

    if not (CHECKOUT / ".git").exists() or shutil.which("git") is None:
        import pytest

        pytest.skip(
            "not run from a git checkout (e.g. from an unpacked sdist): no list of tracked files"
        )
    listing = subprocess.run(
        ["git", "ls-files", "-z"], cwd=CHECKOUT, capture_output=True, check=True
    ).stdout.decode("utf-8")
    return [name for name in listing.split("\0") if name]


def test_no_tracked_file_is_over_800_lines() -> None:
    too_long = {}
    for name in tracked_files():
        if name in NOT_MAINTAINED_BY_HAND or name.endswith(NOT_MAINTAINED_SUFFIXES):
            continue
        path = CHECKOUT / name
        if not path.is_file():  # deleted in the work tree, not yet committed
            continue
        lines = path.read_bytes().count(b"\n")
        if lines > MAX_LINES:
            too_long[name] = lines
    assert not too_long, (
        f"split these files along their responsibilities (over {MAX_LINES} lines): {too_long}"
    )

"""The parsing half of ``pep726hook scan``: decode, parse and read syntax trees.

:func:`analyse_source` parses a whole file and reports its module-level hooks
and ``__class__`` workarounds; :func:`analyse_statements` parses only the
statements :func:`~pep726hook._scan._filter.plan_parse` picked out.  Nothing is
compiled to bytecode or executed.
"""

from __future__ import annotations

import ast
import gc
import io
import tokenize
import warnings
from typing import TYPE_CHECKING, List, Optional, Tuple

from ._filter import Index, statement_span

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

_HOOK_KINDS = {
    "__setattr__": "module_setattr",
    "__delattr__": "module_delattr",
    "__getattr__": "module_getattr",
    "__dir__": "module_dir",
}

_TRY_TYPES: tuple[type[ast.stmt], ...] = tuple(
    t for t in (ast.Try, getattr(ast, "TryStar", None)) if isinstance(t, type)
)


# --------------------------------------------------------------------------- parsing


class Unparsable(Exception):
    """Why a candidate file was skipped."""


def decode_source(data: bytes) -> str:
    """Decode Python source the way the interpreter would (PEP 263 cookie, BOM)."""
    return _decode(data)[0]


def _decode(data: bytes) -> tuple[str, str]:
    """The text of *data* and its encoding, or :class:`Unparsable` with the reason."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        raise Unparsable(f"cannot decode: {exc.msg}") from None
    try:
        return data.decode(encoding), encoding
    except UnicodeDecodeError as exc:
        raise Unparsable(f"cannot decode as {encoding}: {exc.reason} at byte {exc.start}") from None
    except LookupError:
        raise Unparsable(f"cannot decode: unknown encoding {encoding}") from None


def parse_source(data: bytes, path: str) -> tuple[ast.Module, list[str]]:
    """The syntax tree and lines of *data*, or :class:`Unparsable` with the reason."""
    return _parse_text(decode_source(data), path)


def _parse_text(text: str, path: str) -> tuple[ast.Module, list[str]]:
    # A syntax tree is many small objects and no cycles: collections triggered
    # while building one cost more than the parse itself on big files.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        with warnings.catch_warnings():
            # Invalid escape sequences and the like would otherwise reach stderr.
            warnings.simplefilter("ignore")
            tree = ast.parse(text, filename=path)
    except SyntaxError as exc:
        raise Unparsable(f"syntax error at line {exc.lineno}: {exc.msg}") from None
    except (ValueError, RecursionError, MemoryError) as exc:
        raise Unparsable(f"cannot parse: {type(exc).__name__}: {exc}") from None
    finally:
        if gc_was_enabled:
            gc.enable()
    return tree, text.splitlines()


# --------------------------------------------------------------------------- analysis


def _top_level(body: Iterable[ast.stmt]) -> Iterator[ast.stmt]:
    """Module-level statements, including those inside top-level ``if``/``try`` blocks."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, ast.If):
            yield from _top_level(stmt.body)
            yield from _top_level(stmt.orelse)
        elif isinstance(stmt, _TRY_TYPES):
            yield from _top_level(stmt.body)  # type: ignore[attr-defined]
            for handler in stmt.handlers:  # type: ignore[attr-defined]
                yield from _top_level(handler.body)
            yield from _top_level(stmt.orelse)  # type: ignore[attr-defined]
            yield from _top_level(stmt.finalbody)  # type: ignore[attr-defined]


def _statements(body: Iterable[ast.AST]) -> Iterator[ast.AST]:
    """Every statement, at any depth (expressions are not entered: that is what makes it cheap)."""
    for node in body:
        yield node
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            inner = getattr(node, field, None)
            if isinstance(inner, list):
                yield from _statements(inner)


def _target_names(target: ast.expr) -> Iterator[str]:
    if isinstance(target, ast.Name):
        yield target.id
    elif isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            yield from _target_names(element)
    elif isinstance(target, ast.Starred):
        yield from _target_names(target.value)


def _bound_names(stmt: ast.stmt) -> Iterator[str]:
    """Names a module-level statement binds in the module namespace."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
        yield stmt.name
    elif isinstance(stmt, ast.Assign):
        for target in stmt.targets:
            yield from _target_names(target)
    elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
        yield from _target_names(stmt.target)
    elif isinstance(stmt, ast.ImportFrom):
        for alias in stmt.names:
            yield alias.asname or alias.name
    elif isinstance(stmt, ast.Import):
        for alias in stmt.names:
            yield alias.asname or alias.name.partition(".")[0]


def _dotted(node: ast.expr) -> str:
    """A short rendering of a class base or callee, enough for a report line."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    if isinstance(node, ast.Call):
        args = ", ".join(_dotted(arg) for arg in node.args)
        return f"{_dotted(node.func)}({args})"
    return "..."


def _unwrap_index(node: ast.AST) -> ast.AST:
    # Python 3.8 wraps subscripts in ast.Index; later versions do not.
    if type(node).__name__ == "Index":
        value: ast.AST = getattr(node, "value", node)
        return value
    return node


def _is_module_type_base(node: ast.expr, module_classes: set[str]) -> bool:
    if isinstance(node, ast.Name):
        return node.id == "ModuleType" or node.id in module_classes
    if isinstance(node, ast.Attribute):
        return node.attr == "ModuleType"
    # type(sys), type(os): the class of a module object.
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "type"
        and len(node.args) == 1
        and isinstance(node.args[0], ast.Name)
    )


class _Analysis:
    """The findings of one parsed module."""

    def __init__(self, tree: ast.Module, lines: list[str], module: str) -> None:
        self.tree = tree
        self.lines = lines
        self.module = module
        self.classes: dict[str, ast.ClassDef] = {}
        self.module_classes: set[str] = set()
        self.self_aliases: set[str] = set()

    def source_line(self, lineno: int) -> str:
        text = self.lines[lineno - 1].strip() if 0 < lineno <= len(self.lines) else ""
        return text if len(text) <= 100 else text[:97] + "..."

    def findings(self) -> list[tuple[int, str, str, str | None]]:
        """``(line, kind, detail, suggestion)`` for every finding in the module."""
        result = self.hooks()
        for stmt in _top_level(self.tree.body):
            if isinstance(stmt, ast.ClassDef):
                self.classes[stmt.name] = stmt
                if any(_is_module_type_base(b, self.module_classes) for b in stmt.bases):
                    self.module_classes.add(stmt.name)
            elif isinstance(stmt, ast.Assign) and self._is_self_module(stmt.value):
                for target in stmt.targets:
                    self.self_aliases.update(_target_names(target))
        result.extend(self._workarounds())
        return result

    def hooks(self) -> list[tuple[int, str, str, str | None]]:
        """Module-level bindings of the hook names."""
        return [
            (stmt.lineno, kind, self.source_line(stmt.lineno), None)
            for stmt in _top_level(self.tree.body)
            for kind in map(_HOOK_KINDS.get, _bound_names(stmt))
            if kind is not None
        ]

    # ---- the __class__ workaround

    def _is_own_key(self, node: ast.AST) -> bool:
        node = _unwrap_index(node)
        if isinstance(node, ast.Name):
            return node.id == "__name__"
        if isinstance(node, ast.Constant):
            return node.value == self.module
        return (
            isinstance(node, ast.Attribute)
            and node.attr == "name"
            and isinstance(node.value, ast.Name)
            and node.value.id == "__spec__"
        )

    def _is_self_module(self, node: ast.expr) -> bool:
        """``sys.modules[__name__]`` (any alias of sys), ``.get(__name__)``, or an alias of it."""
        if isinstance(node, ast.Subscript):
            return (
                isinstance(node.value, ast.Attribute)
                and node.value.attr == "modules"
                and self._is_own_key(node.slice)
            )
        if isinstance(node, ast.Call):
            func = node.func
            return (
                isinstance(func, ast.Attribute)
                and func.attr == "get"
                and isinstance(func.value, ast.Attribute)
                and func.value.attr == "modules"
                and len(node.args) >= 1
                and self._is_own_key(node.args[0])
            )
        return isinstance(node, ast.Name) and node.id in self.self_aliases

    def _installations(self) -> dict[str, tuple[int, str]]:
        """Local classes installed on this module: name -> (line, how)."""
        installed: dict[str, tuple[int, str]] = {}
        if not self.classes:
            return installed
        for node in _statements(self.tree.body):
            if isinstance(node, ast.Assign):
                value = node.value
                for target in node.targets:
                    if (
                        isinstance(target, ast.Attribute)
                        and target.attr == "__class__"
                        and isinstance(value, ast.Name)
                        and value.id in self.classes
                        and self._is_self_module(target.value)
                    ):
                        installed.setdefault(value.id, (node.lineno, "__class__ assignment"))
                    elif (
                        isinstance(target, ast.Subscript)
                        and self._is_self_module(target)
                        and isinstance(value, ast.Call)
                        and isinstance(value.func, ast.Name)
                        and value.func.id in self.module_classes
                    ):
                        installed.setdefault(
                            value.func.id, (node.lineno, "sys.modules replacement")
                        )
            elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
                call = node.value
                if (
                    isinstance(call.func, ast.Name)
                    and call.func.id == "setattr"
                    and len(call.args) == 3
                    and self._is_self_module(call.args[0])
                    and isinstance(call.args[1], ast.Constant)
                    and call.args[1].value == "__class__"
                    and isinstance(call.args[2], ast.Name)
                    and call.args[2].id in self.classes
                ):
                    installed.setdefault(
                        call.args[2].id, (node.lineno, "setattr(..., '__class__')")
                    )
        return installed

    def _class_members(self, name: str, seen: set[str]) -> tuple[list[str], bool]:
        """What class *name* and its local bases override, and whether it has getters."""
        cls = self.classes.get(name)
        if cls is None or name in seen:
            return [], False
        seen.add(name)
        overrides: list[str] = []
        getters = False
        for stmt in cls.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if stmt.name in ("__setattr__", "__delattr__"):
                    overrides.append(stmt.name)
                for decorator in stmt.decorator_list:
                    if isinstance(decorator, ast.Attribute) and decorator.attr in (
                        "setter",
                        "deleter",
                    ):
                        overrides.append(f"{decorator.attr} property {stmt.name}")
                    elif isinstance(decorator, ast.Name) and decorator.id == "property":
                        getters = True
            elif isinstance(stmt, ast.Assign):
                names = [n for t in stmt.targets for n in _target_names(t)]
                overrides.extend(n for n in names if n in ("__setattr__", "__delattr__"))
                value = stmt.value
                if isinstance(value, ast.Call) and _dotted(value.func).endswith("property"):
                    getters = True
                    overrides.extend(_property_call_overrides(value, names))
        for base in cls.bases:
            if isinstance(base, ast.Name):
                inherited, inherited_getters = self._class_members(base.id, seen)
                overrides.extend(inherited)
                getters = getters or inherited_getters
        return overrides, getters

    def _workarounds(self) -> Iterator[tuple[int, str, str, str | None]]:
        opted_in = any("pep726hook.enable(" in line for line in self.lines)
        for name, (line, how) in sorted(self._installations().items()):
            overrides, getters = self._class_members(name, set())
            if not overrides:
                continue
            cls = self.classes[name]
            bases = ", ".join(_dotted(b) for b in cls.bases)
            detail = (
                f"class {name}({bases}) installed by {how} at line {line};"
                f" overrides {', '.join(dict.fromkeys(overrides))}"
            )
            suggestion = (
                f"none: the module opts in with pep726hook.enable() and keeps class {name}"
                " as its fallback without pep726hook"
                if opted_in
                else _suggestion(name, overrides, getters)
            )
            yield cls.lineno, "class_workaround", detail, suggestion


def _property_call_overrides(call: ast.Call, names: list[str]) -> Iterator[str]:
    """``setter property x`` etc. for ``x = property(fget, fset, fdel)``."""
    keywords = {k.arg for k in call.keywords}
    if (len(call.args) >= 2 and not _is_none(call.args[1])) or "fset" in keywords:
        yield from (f"setter property {name}" for name in names)
    if (len(call.args) >= 3 and not _is_none(call.args[2])) or "fdel" in keywords:
        yield from (f"deleter property {name}" for name in names)


def _is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _suggestion(name: str, overrides: list[str], getters: bool) -> str:
    hooks = []
    if any(o == "__setattr__" or o.startswith("setter ") for o in overrides):
        hooks.append('"def __setattr__(name, value): ..."')
    if any(o == "__delattr__" or o.startswith("deleter ") for o in overrides):
        hooks.append('"def __delattr__(name): ..."')
    reads = ' (with a PEP 562 "def __getattr__(name): ..." for its properties\' reads)'
    # Dropping the class would silently remove the guard for users without
    # pep726hook: keep it as the fallback (README "For library authors").
    return (
        f"define module-level {' and '.join(hooks)}{reads if getters else ''}"
        f" and opt in with pep726hook.enable(__name__), keeping class {name} only as the"
        ' fallback where pep726hook cannot be imported (README, "For library authors"):'
        " reads on this module are ~3x slower on CPython 3.11+ while its class is a"
        " ModuleType subclass"
    )


Found = List[Tuple[int, str, str, Optional[str]]]


def analyse_source(data: bytes, path: str, module: str) -> Found:
    """Parse all of *data* and return ``(line, kind, detail, suggestion)`` tuples.

    Raises :class:`Unparsable` when the file cannot be decoded or parsed.
    """
    tree, lines = parse_source(data, path)
    return _Analysis(tree, lines, module).findings()


def analyse_statements(
    data: bytes, hook_lines: list[int], path: str, index: Index | None = None
) -> Found | None:
    """Findings of the top-level statements that contain *hook_lines*, parsed alone.

    Parsing a few statements instead of a whole module is what keeps a scan
    of a large environment fast: most files with a hook name have just a
    small ``def __getattr__`` to confirm.  Returns None when a statement's
    extent is uncertain (it does not parse alone, or may start inside a
    string); the caller then parses the whole file.  Raises
    :class:`Unparsable` when the file cannot be decoded.
    """
    _, encoding = _decode(data)
    if index is None:
        index = Index(data)
    spans = dict.fromkeys(statement_span(data, line) for line in hook_lines)
    found: Found = []
    for span in spans:
        if span is None or not index.is_code(span[0]):
            return None
        start, end = span
        chunk_encoding = "utf-8" if encoding == "utf-8-sig" and start else encoding
        try:
            chunk = data[start:end].decode(chunk_encoding)
            tree, lines = _parse_text(chunk, path)
        except (UnicodeDecodeError, Unparsable):
            return None
        offset = data.count(b"\n", 0, start)
        analysis = _Analysis(tree, lines, "")
        found.extend(
            (line + offset, kind, detail, hint) for line, kind, detail, hint in analysis.hooks()
        )
    return found

"""The callers of installing helpers: a second, narrow pass over the scanned files.

A helper such as ``def deprecated(value, module_name): sys.modules[module_name]
= Wrapper(...)`` installs its workaround on modules elsewhere, in the same
distribution or in others.  Once the first pass has found the helpers, each
file is searched for the helpers' names as bytes; the few files that mention
one are parsed, and a call counts when it reaches the helper through what the
file imports (``from pkg.mod import deprecated``, ``import pkg.mod as m;
m.deprecated(...)``, relative imports) or, in the helper's own module, by its
bare name.  Calls through other indirections are not followed.
"""

from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING, NamedTuple, Protocol

from ._files import normalize
from ._filter import mentions
from ._model import ScanFinding, ScanRelated, SourceFile
from ._parsing import Unparsable, parse_source

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator


class Reader(Protocol):
    """How files are read: into a reused buffer (the scanner's reader)."""

    buffer: bytearray

    def read(self, path: str) -> int: ...

    def data(self, length: int) -> bytes: ...


class Helper(NamedTuple):
    """A module-level function that installs a workaround on a module it is given."""

    module: str
    function: str
    finding: ScanFinding


def helpers(findings: Iterable[ScanFinding]) -> list[Helper]:
    """The helpers among *findings* that other code can import and call."""
    found = []
    for finding in findings:
        if finding.kind != "helper_workaround":
            continue
        for related in finding.related:
            if related.role == "helper" and related.name:
                function = related.name[len(finding.module) + 1 :]
                if function.isidentifier():  # not a method nor a nested function
                    found.append(Helper(finding.module, function, finding))
    return found


def _package(source: SourceFile) -> str:
    module = source.module
    if source.relative.endswith("__init__.py"):
        return module
    return module.rpartition(".")[0]


def _absolute(node: ast.ImportFrom, source: SourceFile) -> str | None:
    """The module an ``from ... import`` names, relative imports resolved against *source*."""
    if not node.level:
        return node.module
    parts = _package(source).split(".")
    if node.level - 1 > len(parts) or not parts[0]:
        return None
    base = parts[: len(parts) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        value = _dotted(node.value)
        return None if value is None else f"{value}.{node.attr}"
    return None


_BLOCK_FIELDS = frozenset(("body", "orelse", "finalbody", "handlers", "cases"))


def _statements(body: Iterable[ast.AST]) -> Iterator[ast.AST]:
    """Every statement (and except/case clause), at any depth, without entering expressions."""
    for node in body:
        yield node
        for field in _BLOCK_FIELDS:
            inner = getattr(node, field, None)
            if isinstance(inner, list):
                yield from _statements(inner)


def _expressions(stmt: ast.AST) -> Iterator[ast.AST]:
    """The expression nodes of *stmt* itself (a compound statement's header, not its blocks)."""
    for field, value in ast.iter_fields(stmt):
        if field in _BLOCK_FIELDS:
            continue
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, ast.AST):
                yield from ast.walk(item)


def calls(
    statements: list[ast.AST], source: SourceFile, helper: Helper, lines: set[int]
) -> Iterator[int]:
    """Lines of the calls of *helper* in *statements* (all those of the module of *source*).

    Only statements that span one of *lines* (where the bytes show the name
    followed by a parenthesis) have their expressions walked: walking every
    node of a large module costs several times its parse.
    """
    functions, modules = _bindings(statements, source, helper)
    if not functions and not modules:
        return
    for stmt in statements:
        first: int | None = getattr(stmt, "lineno", None)
        if first is None:
            continue
        last: int = getattr(stmt, "end_lineno", None) or first
        if not any(first <= line <= last for line in lines):
            continue
        for node in _expressions(stmt):
            if isinstance(node, ast.Call) and _reaches(node.func, helper, functions, modules):
                yield node.lineno


def _reaches(func: ast.expr, helper: Helper, functions: set[str], modules: dict[str, str]) -> bool:
    if isinstance(func, ast.Name):
        return func.id in functions
    if not (isinstance(func, ast.Attribute) and func.attr == helper.function):
        return False
    dotted = _dotted(func.value)
    if dotted is None:
        return False
    first, _, rest = dotted.partition(".")
    return first in modules and modules[first] + (f".{rest}" if rest else "") == helper.module


def _bindings(
    statements: list[ast.AST], source: SourceFile, helper: Helper
) -> tuple[set[str], dict[str, str]]:
    """The names that bind *helper*, and the names bound to modules (with their modules).

    Imports anywhere in the file count, as if made at its top.
    """
    functions: set[str] = set()
    modules: dict[str, str] = {}  # local name -> module it is bound to
    if source.module == helper.module:
        functions.add(helper.function)
    for node in statements:
        if isinstance(node, ast.ImportFrom):
            origin = _absolute(node, source)
            if origin is None:
                continue
            for alias in node.names:
                local = alias.asname or alias.name
                if origin == helper.module and alias.name == helper.function:
                    functions.add(local)
                elif f"{origin}.{alias.name}" == helper.module or helper.module.startswith(
                    f"{origin}.{alias.name}."
                ):
                    modules[local] = f"{origin}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    modules[alias.asname] = alias.name
                else:
                    top = alias.name.partition(".")[0]
                    modules[top] = top
    return functions, modules


class _Wanted:
    """What the bytes of a file must show for it to call a helper, checked before parsing."""

    def __init__(self, helper: Helper) -> None:
        self.helper = helper
        self.name = helper.function.encode()
        # Every import that reaches the helper names its module's last part:
        # ``from pkg.utils import f``, ``from . import utils``, ``import pkg.utils``.
        self.module_part = helper.module.rpartition(".")[2].encode()

    def lines(self, data: bytes, source: SourceFile) -> set[int]:
        """Lines where *data* may call the helper (empty when it cannot)."""
        if source.module != self.helper.module and self.module_part not in data:
            return set()
        lines: set[int] = set()
        names = [self.name]
        while names:
            name = names.pop()
            for position in _words(data, name):
                follows = _FOLLOWING_RE.match(data, position + len(name))
                if follows is None:
                    continue
                if follows.group(1):  # ``from pkg.mod import helper as other``
                    names.append(follows.group(1))
                else:
                    lines.add(data.count(b"\n", 0, position) + 1)
        return lines


# What follows a name that is called, or renamed by an import.
_FOLLOWING_RE = re.compile(rb"[ \t]*(?:\(|as[ \t]+(\w+))")
_NAME_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


def _words(data: bytes, name: bytes) -> Iterator[int]:
    """Starts of *name* in *data* as a whole word (literal searches: regexes starting
    with a look-behind are many times slower)."""
    position = data.find(name)
    while position >= 0:
        end = position + len(name)
        if (not position or data[position - 1] not in _NAME_BYTES) and (
            end == len(data) or data[end] not in _NAME_BYTES
        ):
            yield position
        position = data.find(name, end)


def importers(files: Iterable[SourceFile], found: list[Helper]) -> list[SourceFile]:
    """The *files* that :func:`may_import` one of *found*.

    Files of one distribution share the answer: it is worked out once per
    distribution, not once per file.
    """
    known: dict[tuple[str | None, bool, frozenset[str]], bool] = {}
    kept = []
    for source in files:
        key = (source.distribution, source.stdlib, source.requires)
        answer = known.get(key)
        if answer is None:
            answer = known[key] = any(may_import(source, helper) for helper in found)
        if answer:
            kept.append(source)
    return kept


def may_import(source: SourceFile, helper: Helper) -> bool:
    """Whether *source* can import *helper*'s module, by the distributions' metadata.

    A file calls a helper of its own distribution or of one its distribution
    requires (Requires-Dist); files outside distributions (``--path`` trees)
    may call any, the standard library only its own.  Reading only those
    files keeps this second pass cheap.
    """
    wanted = helper.finding.distribution
    if source.distribution is None:
        return not source.stdlib or wanted is None
    if wanted is None or source.distribution == wanted:
        return True
    return normalize(wanted) in source.requires


def find_callers(
    files: Iterable[SourceFile], found: list[Helper], reader: Reader
) -> tuple[list[ScanFinding], dict[ScanFinding, list[ScanRelated]]]:
    """``helper_call`` findings for every call of *found*, and the callers of each helper."""
    wanted = [_Wanted(helper) for helper in found]
    names = {want.name for want in wanted}
    new: list[ScanFinding] = []
    callers: dict[ScanFinding, list[ScanRelated]] = {}
    for source in files:
        try:
            length = reader.read(source.path)
        except OSError:
            continue  # already reported by the first pass
        if not mentions(reader.buffer, names, length):
            continue
        data = reader.data(length)
        # A helper's own module was searched in the first pass (:func:`own_calls`).
        others = [want for want in wanted if want.helper.finding.path != source.path]
        candidates = _candidates(others, data, source)
        if not candidates:
            continue
        try:
            tree = parse_source(data, source.path)
        except Unparsable:
            continue  # already reported by the first pass, if it mattered there
        _add_calls(tree, source, candidates, new, callers)
    return new, callers


def own_calls(
    tree: ast.Module, data: bytes, source: SourceFile, found: list[Helper]
) -> tuple[list[ScanFinding], dict[ScanFinding, list[ScanRelated]]]:
    """What :func:`find_callers` finds for *found* in their own module, whose tree is at hand."""
    new: list[ScanFinding] = []
    callers: dict[ScanFinding, list[ScanRelated]] = {}
    candidates = _candidates([_Wanted(helper) for helper in found], data, source)
    _add_calls(tree, source, candidates, new, callers)
    return new, callers


def _candidates(
    wanted: list[_Wanted], data: bytes, source: SourceFile
) -> list[tuple[Helper, set[int]]]:
    """The helpers *data* may call, each with the lines where it may."""
    found = [(want.helper, want.lines(data, source)) for want in wanted]
    return [(helper, lines) for helper, lines in found if lines]


def _add_calls(
    tree: ast.Module,
    source: SourceFile,
    candidates: list[tuple[Helper, set[int]]],
    new: list[ScanFinding],
    callers: dict[ScanFinding, list[ScanRelated]],
) -> None:
    statements = list(_statements(tree.body))  # once for all the helpers
    for helper, lines in candidates:
        for line in calls(statements, source, helper, lines):
            new.append(_call_finding(source, line, helper))
            callers.setdefault(helper.finding, []).append(
                ScanRelated("caller", source.path, line, source.module, source.distribution)
            )


def _call_finding(source: SourceFile, line: int, helper: Helper) -> ScanFinding:
    origin = helper.finding
    name = f"{helper.module}.{helper.function}"
    same = source.distribution == origin.distribution
    related = [
        ScanRelated("helper", origin.path, r.line, origin.module, origin.distribution, name)
        for r in origin.related
        if r.role == "helper"
    ]
    if origin.class_line is not None:
        related.append(
            ScanRelated("class", origin.path, origin.class_line, origin.module, origin.distribution)
        )
    if origin.install_line is not None:
        related.append(
            ScanRelated(
                "install", origin.path, origin.install_line, origin.module, origin.distribution
            )
        )
    where = "" if same else f" of distribution {origin.distribution or '-'}"
    return ScanFinding(
        source.distribution,
        source.module,
        source.path,
        line,
        "helper_call",
        f"calls {name}{where} ({origin.path}:{origin.line}), which installs a workaround"
        " on a module it is given",
        f"nothing to change in this call once {name} installs PEP 726 hooks (see its"
        f" helper_workaround finding); until then this module pays the read cost stated with it",
        "medium" if same else "low",
        None,
        None,
        origin.read_cost,
        tuple(related),
    )

"""``pep726hook scan``: find the modules that PEP 726 hooks concern, without importing them.

The scanner reads installed distributions (through ``importlib.metadata``, or
the ``importlib_metadata`` backport before Python 3.10), the standard library
or plain source trees, and reports, per module:

* module-level ``__setattr__`` / ``__delattr__`` (their behaviour changes
  once pep726hook is installed),
* the ``__class__`` workaround: a ``ModuleType`` subclass that overrides
  ``__setattr__`` / ``__delattr__`` or has setter properties, installed on the
  module itself, with the PEP 726 spelling that replaces it,
* PEP 562 ``__getattr__`` / ``__dir__`` (informational).

Nothing scanned is imported or executed: files are read as bytes, filtered
cheaply, and only the remaining candidates are parsed with :mod:`ast`.
"""

from __future__ import annotations

import argparse
import ast
import bisect
import csv
import errno
import gc
import io
import os
import re
import stat
import sys
import sysconfig
import tokenize
import warnings
from typing import TYPE_CHECKING, List, NamedTuple, Optional, Tuple

if sys.version_info >= (3, 10):
    import importlib.metadata as importlib_metadata
else:  # pragma: no cover - exercised on 3.8/3.9 only
    try:
        import importlib_metadata
    except ImportError:  # the backport is a declared dependency; degrade rather than fail
        import importlib.metadata as importlib_metadata  # type: ignore[no-redef]

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Sequence

SCHEMA = "pep726hook.scan/1"

#: The finding kinds, in the order the report explains them.
KINDS = ("module_setattr", "module_delattr", "class_workaround", "module_getattr", "module_dir")

_KIND_ORDER = {kind: index for index, kind in enumerate(KINDS)}

_HOOK_KINDS = {
    "__setattr__": "module_setattr",
    "__delattr__": "module_delattr",
    "__getattr__": "module_getattr",
    "__dir__": "module_dir",
}

# A file none of whose bytes spell one of these cannot hold any finding, so it is
# never decoded or parsed; this is what keeps a whole-environment scan cheap.
_TOKENS = (b"__setattr__", b"__delattr__", b"__getattr__", b"__dir__", b"__class__", b"ModuleType")

_HOOK_NAMES = (b"__setattr__", b"__delattr__", b"__getattr__", b"__dir__")
# Any installation of a class on the module goes through ``X.modules[...]``
# (``sys.modules[__name__]``, ``.get(__name__)``, or a name bound to either).
_SELF_MODULE_RE = re.compile(rb"\.[ \t]*modules[ \t]*(?:\[|\.[ \t]*get\b)")
# A reported workaround class overrides one of these, or defines a property.
_OVERRIDE_TOKENS = (b"setattr__", b"delattr__", b"setter", b"deleter", b"property")
# A class statement whose bases mention ModuleType or type(...): the only way a
# module-type class is defined that the analysis below recognises.  (Patterns
# start with a literal so that the regex engine can skip ahead quickly.)
_MODULE_CLASS_RE = re.compile(rb"class[ \t]+\w+[ \t]*\([^:]*?(?:ModuleType|\btype[ \t]*\()")
# ``<something>.__class__ = ...`` (the "." is checked separately) and
# ``setattr(m, "__class__", C)``.
_CLASS_ASSIGN_RE = re.compile(rb"__class__[ \t]*=(?!=)")
# ``X.modules[...] = Name(``: a module replaced by an instance.
_REPLACES_MODULE_RE = re.compile(rb"modules[ \t]*\[[^\]\n]*\][ \t]*=[ \t]*[\w.]+[ \t]*\(")
_SETATTR_CLASS_RE = re.compile(rb"setattr\([^,\n]*,[ \t]*['\"]__class__['\"]")
# Starts of lines that begin at column 0 with something other than a comment
# or a closing bracket: top-level statements, or text that looks like one.
_COLUMN0_RE = re.compile(rb"^[^ \t\r\n\f#)\]}]", re.MULTILINE)
_CONTINUATION_RE = re.compile(rb"(?:else|elif|except|finally)\b")
_BODY_STATEMENT_RE = re.compile(rb"(?:class|def|async[ \t]+def)\b")
_NAME_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")

_SKIPPED_DIRS = frozenset(("__pycache__", "site-packages", "dist-packages"))

_TRY_TYPES: tuple[type[ast.stmt], ...] = tuple(
    t for t in (ast.Try, getattr(ast, "TryStar", None)) if isinstance(t, type)
)


class SourceFile(NamedTuple):
    """One ``.py`` file to scan and where it comes from."""

    path: str
    #: ``/``-separated path relative to the import root (site or source directory).
    relative: str
    distribution: str | None

    @property
    def module(self) -> str:
        """The dotted module name (computed on demand: few files ever need it)."""
        return _module_name(self.relative)


class Finding(NamedTuple):
    """One reported construct; the fields are those of the JSON schema."""

    distribution: str | None
    module: str
    path: str
    line: int
    kind: str
    detail: str
    suggestion: str | None


class Skipped(NamedTuple):
    """A candidate file that could not be read, decoded or parsed."""

    path: str
    reason: str


class ScanResult(NamedTuple):
    """Everything one scan found."""

    python: str
    scanned_files: int
    parsed_files: int
    skipped: list[Skipped]
    findings: list[Finding]


class UnknownDistributionError(LookupError):
    """Raised for DIST names that no visible distribution has."""


# --------------------------------------------------------------------------- enumeration


_NAME_HEADER_RE = re.compile(r"^Name:[ \t]*(\S.*?)[ \t\r]*$", re.MULTILINE)


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _module_name(relative: str) -> str:
    """The dotted module name of a ``/``-separated path relative to an import root.

    Paths that cannot be imported under a dotted name (a ``..`` part, a
    directory called ``foo-1.0``) are reported by that relative path instead.
    """
    parts = relative.split("/")
    stem = parts[-1][:-3] if parts[-1].endswith(".py") else parts[-1]
    parts[-1] = stem
    if stem == "__init__" and len(parts) > 1:
        del parts[-1]
    if all(part.isidentifier() for part in parts):
        return ".".join(parts)
    return relative


def _distribution_name(dist: importlib_metadata.Distribution) -> str | None:
    # The Name header is all that is needed; a regex over the head of METADATA
    # is much cheaper than the full email parse behind ``dist.metadata``.
    try:
        text = dist.read_text("METADATA")
    except Exception:  # a broken distribution must not end the scan
        text = None
    if text:
        match = _NAME_HEADER_RE.search(text.partition("\n\n")[0])
        if match:
            return match.group(1)
    try:
        name = dist.metadata["Name"]
    except Exception:  # a broken METADATA must not end the scan
        return None
    return name if isinstance(name, str) and name else None


def find_distributions(
    names: Sequence[str] = (), site: Sequence[str] | None = None
) -> list[tuple[str, importlib_metadata.Distribution]]:
    """The distributions to scan, as ``(name, distribution)`` pairs.

    *site* is the list of directories searched (``sys.path`` when None).  A
    name seen twice keeps its first distribution, as an import would.  With
    *names*, only those are returned, and :class:`UnknownDistributionError`
    lists any that were not found.
    """
    if site is None:
        found = importlib_metadata.distributions()
    else:
        found = importlib_metadata.distributions(path=list(site))
    by_name: dict[str, tuple[str, importlib_metadata.Distribution]] = {}
    for dist in found:
        name = _distribution_name(dist)
        if name is not None:
            by_name.setdefault(_normalize(name), (name, dist))
    if not names:
        return [by_name[key] for key in sorted(by_name)]
    wanted = [_normalize(name) for name in names]
    missing = [name for name, key in zip(names, wanted) if key not in by_name]
    if missing:
        raise UnknownDistributionError(", ".join(missing))
    return [by_name[key] for key in dict.fromkeys(wanted)]


def distribution_files(name: str, dist: importlib_metadata.Distribution) -> Iterator[SourceFile]:
    """The ``.py`` files that *dist* installed."""
    # Reading RECORD directly avoids building a PackagePath object per line,
    # which dominates the cost of ``dist.files`` for large distributions.
    record = dist.read_text("RECORD")
    if record is not None:
        base = str(dist.locate_file(""))
        for line in record.splitlines():
            # Rows are "path,hash,size"; only a path with a comma or quote is quoted.
            relative = line.rsplit(",", 2)[0]
            if relative.startswith('"'):
                relative = next(csv.reader([line]))[0]
            if relative.endswith(".py"):
                path = os.path.join(base, relative)
                if "/." in relative or relative.startswith("."):
                    path = os.path.normpath(path)
                yield SourceFile(path, relative, name)
        return
    # Without RECORD (egg-info), the list comes from SOURCES.txt or
    # installed-files.txt, whose paths are often relative to a source checkout
    # rather than to the install; only the files that exist are the module's.
    for file in dist.files or ():
        if file.suffix == ".py":
            path = os.path.normpath(str(dist.locate_file(file)))
            if os.path.isfile(path):
                yield SourceFile(path, file.as_posix(), name)


def tree_files(root: str, prune_site: bool = False) -> Iterator[SourceFile]:
    """The ``.py`` files under *root*, named by their path relative to it.

    Hidden directories and ``__pycache__`` are skipped; with *prune_site*, so
    are ``site-packages``/``dist-packages`` (left to distribution scanning).
    """
    root = os.path.abspath(root)
    for directory, dirs, files in os.walk(root):
        dirs[:] = sorted(
            d
            for d in dirs
            if not d.startswith(".")
            and not (d in _SKIPPED_DIRS and (prune_site or d == "__pycache__"))
        )
        relative_dir = os.path.relpath(directory, root).replace(os.sep, "/")
        prefix = "" if relative_dir == "." else relative_dir + "/"
        for file in sorted(files):
            if file.endswith(".py"):
                yield SourceFile(os.path.join(directory, file), prefix + file, None)


def stdlib_root() -> str:
    """The directory of the running interpreter's standard library."""
    return sysconfig.get_paths()["stdlib"]


# --------------------------------------------------------------------------- pre-filter


def has_token(data: bytes) -> bool:
    """True when *data* mentions one of the names any finding needs (the first, cheapest test)."""
    return any(token in data for token in _TOKENS)


def _may_matter(data: bytes) -> bool:
    """:func:`has_token`, narrowed to what :func:`plan_parse` can use, with fewer scans.

    ``__class__`` and ``ModuleType`` only matter where a class can be
    installed, which always spells ``modules``.
    """
    # Every scan of the bytes costs about as much as reading them.  b"ttr__"
    # stands for the three __*attr__ names, and b"r__" ends both it and
    # b"__dir__": most files, which have neither, cost two scans instead of three.
    if b"r__" in data and (b"ttr__" in data or b"__dir__" in data):
        return True
    return b"modules" in data and (b"__class__" in data or b"ModuleType" in data)


class ParsePlan(NamedTuple):
    """What of a file must be parsed: all of it, some statements, or nothing."""

    whole_file: bool
    #: Starts of the lines that may bind a hook name at module level.
    hook_lines: list[int]


def plan_parse(data: bytes) -> ParsePlan:
    """Cheap, conservative look at raw bytes: which parts parsing must examine.

    It rules out the common case of hook names that appear only as attribute
    accesses (``object.__setattr__(self, ...)``), in comments, or as methods in
    the body of a top-level ``class``/``def``, and workaround-like classes that
    are never installed through ``X.modules[...]``.  What it cannot rule out is
    left to the parser: the whole file when a workaround is possible (that
    needs the class and its installation together), otherwise just the
    top-level statements around the possible hook bindings.
    """
    if (
        b"modules" in data
        and _SELF_MODULE_RE.search(data)
        and any(token in data for token in _OVERRIDE_TOKENS)
        and (
            _assigns_class(data)
            or (_MODULE_CLASS_RE.search(data) and _REPLACES_MODULE_RE.search(data))
        )
    ):
        return ParsePlan(True, [])
    lines: list[int] = []
    index = _Index(data)
    for token in _HOOK_NAMES:
        start = data.find(token)
        while start >= 0:
            end = start + len(token)
            if _may_bind_at_top_level(data, start, end) and not _inside_class_or_def(index, start):
                lines.append(data.rfind(b"\n", 0, start) + 1)
            start = data.find(token, end)
    return ParsePlan(False, sorted(set(lines)))


def _assigns_class(data: bytes) -> bool:
    """Whether *data* may assign an object's ``__class__`` (``x.__class__ = C``, ``setattr``)."""
    for match in _CLASS_ASSIGN_RE.finditer(data):
        before = match.start() - 1
        while before >= 0 and data[before] in b" \t":
            before -= 1
        if before >= 0 and data[before] == 0x2E:  # "."
            return True
    for match in _SETATTR_CLASS_RE.finditer(data):
        start = match.start()
        if not start or (data[start - 1] not in _NAME_BYTES and data[start - 1] != 0x2E):
            return True
    return False


def _may_bind_at_top_level(data: bytes, start: int, end: int) -> bool:
    """Whether the hook name at ``data[start:end]`` could be a name being bound."""
    before = data[start - 1] if start else 0x0A
    after = data[end] if end < len(data) else 0x0A
    # ``x.__getattr__``, ``"__getattr__"``, ``my__dir__`` are never bindings.
    if before in b".'\"" or before in _NAME_BYTES or after in _NAME_BYTES:
        return False
    line_start = data.rfind(b"\n", 0, start) + 1
    prefix = data[line_start:start]
    hash_at = prefix.find(b"#")
    # A "#" after a quote might be inside a string, so only a plain one marks a comment.
    return hash_at < 0 or b"'" in prefix[:hash_at] or b'"' in prefix[:hash_at]


def _indent_width(data: bytes, line_start: int) -> tuple[int, int]:
    """Width (tabs to multiples of 8, as Python counts) and byte length of a line's indent."""
    end = line_start
    while end < len(data) and data[end] in b" \t\f":
        end += 1
    return len(data[line_start:end].expandtabs(8)), end - line_start


class _Index:
    """Per-file facts that several hook names in one file ask about, computed once."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self._column0: list[int] | None = None
        self._outside: dict[int, bool] = {}

    def nearest_column0(self, line_start: int) -> int:
        """Start of the nearest line before *line_start* that begins at column 0, or -1."""
        if self._column0 is None:
            self._column0 = [m.start() for m in _COLUMN0_RE.finditer(self.data)]
        index = bisect.bisect_left(self._column0, line_start) - 1
        return self._column0[index] if index >= 0 else -1

    def outside_triple_quotes(self, position: int) -> bool:
        known = self._outside.get(position)
        if known is None:
            known = self._outside[position] = _outside_triple_quotes(self.data, position)
        return known


def _inside_class_or_def(index: _Index, start: int) -> bool:
    """Whether the code at *start* lies in the body of a ``class`` or ``def``.

    A line's enclosing blocks start at the earlier lines indented less than it; if one
    of them is a ``class`` or ``def``, the line is in its body.  The usual case
    is settled by the nearest column-0 line alone.  A ``class``/``def`` line
    can be fake (text inside a triple-quoted string); an odd count of triple
    quotes before it reveals that, and the answer is then "not known to be
    inside", so the file gets parsed.
    """
    data = index.data
    line_start = data.rfind(b"\n", 0, start) + 1
    indent, _ = _indent_width(data, line_start)
    if indent == 0:
        return False
    owner = index.nearest_column0(line_start)
    if owner >= 0 and _BODY_STATEMENT_RE.match(data, owner):
        return index.outside_triple_quotes(owner)
    end = line_start
    while True:
        owner = _shallower_line(data, end, indent)
        if owner < 0:
            return False
        width, skip = _indent_width(data, owner)
        if _BODY_STATEMENT_RE.match(data, owner + skip):
            return index.outside_triple_quotes(owner)
        if width == 0:
            return False
        indent, end = width, owner


_SHALLOW_LINE_RES: dict[int, re.Pattern[bytes]] = {}


def _shallower_line(data: bytes, end: int, indent: int) -> int:
    """Start of the last code line before *end* indented less than *indent*, or -1.

    Searching forward through growing windows below *end* with a regex is
    much faster than stepping back line by line in Python.
    """
    if b"\t" in data:
        return _shallower_line_slow(data, end, indent)
    pattern = _SHALLOW_LINE_RES.get(indent)
    if pattern is None:
        pattern = re.compile(rb"^ {0,%d}[^ \t\r\n\f#]" % (indent - 1), re.MULTILINE)
        _SHALLOW_LINE_RES[indent] = pattern
    window = 4096
    while True:
        low = max(0, end - window)
        found = -1
        for match in pattern.finditer(data, low, end):
            found = match.start()
        if found >= 0 or low == 0:
            return found
        window *= 4


def _shallower_line_slow(data: bytes, end: int, indent: int) -> int:
    # Tabs make the width of an indent depend on more than its length.
    while end > 0:
        owner = data.rfind(b"\n", 0, end - 1) + 1
        width, skip = _indent_width(data, owner)
        first = data[owner + skip : owner + skip + 1]
        if width < indent and first and first not in b"#\r\n":
            return owner
        end = owner
    return -1


def _outside_triple_quotes(data: bytes, position: int) -> bool:
    return data.count(b'"""', 0, position) % 2 == 0 and data.count(b"'''", 0, position) % 2 == 0


# --------------------------------------------------------------------------- parsing


class _Unparsable(Exception):
    """Why a candidate file was skipped."""


def decode_source(data: bytes) -> str:
    """Decode Python source the way the interpreter would (PEP 263 cookie, BOM)."""
    return _decode(data)[0]


def _decode(data: bytes) -> tuple[str, str]:
    """The text of *data* and its encoding, or :class:`_Unparsable` with the reason."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        raise _Unparsable(f"cannot decode: {exc.msg}") from None
    try:
        return data.decode(encoding), encoding
    except UnicodeDecodeError as exc:
        raise _Unparsable(
            f"cannot decode as {encoding}: {exc.reason} at byte {exc.start}"
        ) from None
    except LookupError:
        raise _Unparsable(f"cannot decode: unknown encoding {encoding}") from None


def parse_source(data: bytes, path: str) -> tuple[ast.Module, list[str]]:
    """The syntax tree and lines of *data*, or :class:`_Unparsable` with the reason."""
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
        raise _Unparsable(f"syntax error at line {exc.lineno}: {exc.msg}") from None
    except (ValueError, RecursionError, MemoryError) as exc:
        raise _Unparsable(f"cannot parse: {type(exc).__name__}: {exc}") from None
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
            yield cls.lineno, "class_workaround", detail, _suggestion(name, overrides, getters)


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
    return (
        f"define module-level {' and '.join(hooks)}{reads if getters else ''}"
        f" and drop class {name} (reads on this module are ~3x slower on CPython 3.11+"
        " while its class is a ModuleType subclass)"
    )


Found = List[Tuple[int, str, str, Optional[str]]]


def analyse_source(data: bytes, path: str, module: str) -> Found:
    """Parse all of *data* and return ``(line, kind, detail, suggestion)`` tuples.

    Raises :class:`_Unparsable` when the file cannot be decoded or parsed.
    """
    tree, lines = parse_source(data, path)
    return _Analysis(tree, lines, module).findings()


def analyse_statements(data: bytes, hook_lines: list[int], path: str) -> Found | None:
    """Findings of the top-level statements that contain *hook_lines*, parsed alone.

    Parsing a few statements instead of a whole module is what keeps a scan
    of a large environment fast: most files with a hook name have just a
    small ``def __getattr__`` to confirm.  Returns None when a statement's
    extent is uncertain (it does not parse alone, or may start inside a
    string); the caller then parses the whole file.  Raises
    :class:`_Unparsable` when the file cannot be decoded.
    """
    _, encoding = _decode(data)
    column0 = [m.start() for m in _COLUMN0_RE.finditer(data)]
    spans = dict.fromkeys(_statement_span(data, column0, line) for line in hook_lines)
    found: Found = []
    for span in spans:
        if span is None or not _outside_triple_quotes(data, span[0]):
            return None
        start, end = span
        chunk_encoding = "utf-8" if encoding == "utf-8-sig" and start else encoding
        try:
            chunk = data[start:end].decode(chunk_encoding)
            tree, lines = _parse_text(chunk, path)
        except (UnicodeDecodeError, _Unparsable):
            return None
        offset = data.count(b"\n", 0, start)
        analysis = _Analysis(tree, lines, "")
        found.extend(
            (line + offset, kind, detail, hint) for line, kind, detail, hint in analysis.hooks()
        )
    return found


def _statement_span(data: bytes, column0: list[int], line_start: int) -> tuple[int, int] | None:
    """Byte range of the top-level statement holding the line at *line_start*."""
    index = bisect.bisect_right(column0, line_start) - 1
    while index > 0 and _CONTINUATION_RE.match(data, column0[index]):
        index -= 1
    if index < 0:
        return None
    end = index + 1
    # else/except/finally continue a compound statement; a decorator continues onto its def.
    while end < len(column0) and (
        _CONTINUATION_RE.match(data, column0[end]) or data[column0[end - 1]] == 0x40
    ):
        end += 1
    return column0[index], column0[end] if end < len(column0) else len(data)


# --------------------------------------------------------------------------- scanning


def _python_description() -> str:
    version = ".".join(str(part) for part in sys.version_info[:3])
    implementation = {"cpython": "CPython", "pypy": "PyPy"}.get(
        sys.implementation.name, sys.implementation.name
    )
    return f"{implementation} {version}"


class _Progress:
    """A one-line counter on a terminal's stderr; silent otherwise."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.enabled = total > 200 and sys.stderr.isatty()
        self.last = 0.0
        self.shown = False

    def update(self, done: int) -> None:
        if not self.enabled:
            return
        import time

        now = time.monotonic()
        if now - self.last >= 0.1:
            self.last = now
            self.shown = True
            sys.stderr.write(f"\rpep726hook scan: {done}/{self.total} files")
            sys.stderr.flush()

    def close(self) -> None:
        if self.shown:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()


def _read(path: str) -> bytes:
    # os.read skips the buffered-file machinery of open(), which is a
    # noticeable part of reading ten thousand small files.  O_NONBLOCK keeps a
    # FIFO that happens to end in ".py" from blocking the scan.
    flags = os.O_RDONLY | getattr(os, "O_BINARY", 0) | getattr(os, "O_NONBLOCK", 0)
    fd = os.open(path, flags)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        size = info.st_size
        data = os.read(fd, size + 1)
        if len(data) <= size:
            return data
        # The file grew since fstat; read on to its end.
        chunks = [data]
        while True:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
    finally:
        os.close(fd)


def scan_file(
    source: SourceFile, thorough: bool = False
) -> tuple[list[Finding], Skipped | None, bool]:
    """Scan one file: its findings, why it was skipped (or None), whether it was parsed.

    By default only files that :func:`plan_parse` cannot rule out are parsed,
    and only as far as needed.  With *thorough*, every file that mentions one
    of the names is parsed whole; the findings are the same (tests check that),
    but syntax errors anywhere in those files are reported.
    """
    try:
        data = _read(source.path)
    except OSError as exc:
        return [], Skipped(source.path, f"cannot read: {exc.strerror or exc}"), False
    if not (has_token(data) if thorough else _may_matter(data)):
        return [], None, False
    plan = ParsePlan(True, []) if thorough else plan_parse(data)
    if not plan.whole_file and not plan.hook_lines:
        return [], None, False
    try:
        found = None
        if not plan.whole_file:
            found = analyse_statements(data, plan.hook_lines, source.path)
        if found is None:
            found = analyse_source(data, source.path, source.module)
    except _Unparsable as exc:
        return [], Skipped(source.path, str(exc)), True
    findings = [
        Finding(source.distribution, source.module, source.path, line, kind, detail, hint)
        for line, kind, detail, hint in found
    ]
    return findings, None, True


class _BatchResult(NamedTuple):
    findings: list[Finding]
    skipped: list[Skipped]
    parsed: int


def _scan_batch(
    batch: Sequence[SourceFile], thorough: bool, progress: _Progress | None = None, scale: int = 1
) -> _BatchResult:
    findings: list[Finding] = []
    skipped: list[Skipped] = []
    parsed = 0
    for done, source in enumerate(batch):
        if progress is not None and not done % 64:
            progress.update(done * scale)
        found, skip, was_parsed = scan_file(source, thorough)
        findings.extend(found)
        if skip is not None:
            skipped.append(skip)
        parsed += was_parsed
    return _BatchResult(findings, skipped, parsed)


# Below this many files, forking costs more than it saves.
_FORK_THRESHOLD = 3000


def _can_fork() -> bool:
    # Only where fork() is the native way to start a process: macOS system
    # libraries are not fork-safe, and spawning would re-import everything,
    # which costs more than it saves.  A child forked while another thread holds
    # a lock can deadlock, so only from a single-threaded process.
    if not sys.platform.startswith("linux") or not hasattr(os, "fork"):
        return False
    threading = sys.modules.get("threading")
    return threading is None or threading.active_count() == 1


def _fork_child(share: Sequence[SourceFile], thorough: bool) -> tuple[int, int] | None:
    """Scan *share* in a forked child; ``(pid, pipe to read its pickled result)``, or None."""
    import pickle

    read_end, write_end = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(read_end)
        os.close(write_end)
        return None
    if pid == 0:  # pragma: no cover - the child's coverage is not collected
        status = 1
        try:
            os.close(read_end)
            payload = pickle.dumps(_scan_batch(share, thorough), pickle.HIGHEST_PROTOCOL)
            with os.fdopen(write_end, "wb") as pipe:
                pipe.write(payload)
            status = 0
        finally:
            # Skip atexit handlers and the parent's buffered output copied into the child.
            os._exit(status)
    os.close(write_end)
    return pid, read_end


def _child_result(pid: int, read_end: int) -> _BatchResult | None:
    import pickle

    with os.fdopen(read_end, "rb") as pipe:
        payload = pipe.read()
    _, status = os.waitpid(pid, 0)
    if status != 0 or not payload:
        return None
    result: _BatchResult = pickle.loads(payload)  # our own child's output
    return result


def _scan_all(
    files: list[SourceFile], thorough: bool, jobs: int | None, progress: _Progress
) -> _BatchResult:
    """Scan *files*, spread over *jobs* processes where that pays (see :func:`scan_files`)."""
    if jobs is None:
        jobs = 1 if len(files) < _FORK_THRESHOLD else min(os.cpu_count() or 1, 8)
    if jobs <= 1 or not _can_fork():
        return _scan_batch(files, thorough, progress)
    # Interleaved shares balance the work: neighbouring files are alike in size.
    children = []
    own = files[0::jobs]
    for index in range(1, jobs):
        share = files[index::jobs]
        child = _fork_child(share, thorough)
        if child is None:
            own = own + share
        else:
            children.append((child, share))
    result = _scan_batch(own, thorough, progress, scale=jobs)
    for (pid, read_end), share in children:
        child_result = _child_result(pid, read_end)
        if child_result is None:  # the child failed: do its share here
            child_result = _scan_batch(share, thorough)
        result.findings.extend(child_result.findings)
        result.skipped.extend(child_result.skipped)
        result = result._replace(parsed=result.parsed + child_result.parsed)
    return result


def scan_files(
    files: Iterable[SourceFile], thorough: bool = False, *, jobs: int | None = None
) -> ScanResult:
    """Scan *files* (duplicates by path are scanned once); see :func:`scan_file`.

    *jobs* is the number of processes (None: one per CPU, at most 8, for scans
    of 3000 files or more on Linux; 0 or 1: this process only).  Workers are
    forked, so nothing is re-imported.
    """
    unique: dict[str, SourceFile] = {}
    for source in files:
        unique.setdefault(os.path.normcase(source.path), source)
    progress = _Progress(len(unique))
    try:
        result = _scan_all(list(unique.values()), thorough, jobs, progress)
    finally:
        progress.close()
    findings = sorted(
        result.findings,
        key=lambda f: (
            f.distribution is None,
            f.distribution or "",
            f.path,
            f.line,
            _KIND_ORDER[f.kind],
        ),
    )
    skipped = sorted(result.skipped)
    return ScanResult(_python_description(), len(unique), result.parsed, skipped, findings)


def collect_files(
    distributions: Sequence[str] = (),
    paths: Sequence[str] = (),
    stdlib: bool = False,
    site: Sequence[str] | None = None,
) -> list[SourceFile]:
    """The files a scan covers.

    Installed distributions (all of them, or those named in *distributions*)
    are included unless *paths* were given without *distributions* or *site*;
    *site* replaces ``sys.path`` as the place they are looked up.  *stdlib* adds the standard library.
    """
    files: list[SourceFile] = []
    if distributions or site is not None or not paths:
        for name, dist in find_distributions(distributions, site):
            files.extend(distribution_files(name, dist))
    if stdlib:
        files.extend(tree_files(stdlib_root(), prune_site=True))
    for root in paths:
        files.extend(tree_files(root))
    return files


def scan(
    distributions: Sequence[str] = (),
    paths: Sequence[str] = (),
    *,
    stdlib: bool = False,
    site: Sequence[str] | None = None,
    thorough: bool = False,
    jobs: int | None = None,
) -> ScanResult:
    """Collect the files (see :func:`collect_files`) and scan them (see :func:`scan_files`)."""
    return scan_files(collect_files(distributions, paths, stdlib, site), thorough, jobs=jobs)


# --------------------------------------------------------------------------- command line


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``pep726hook scan``."""
    parser = argparse.ArgumentParser(
        prog="pep726hook scan",
        description=(
            "Report modules with module-level __setattr__/__delattr__, the ModuleType "
            "__class__ workaround, and PEP 562 __getattr__/__dir__, without importing "
            "or executing anything."
        ),
        epilog=(
            "Installed distributions are scanned unless --path is given without DIST or --site. "
            "Exit status: 0 when the scan completed (findings or not), 2 on a usage error. "
            "The --json schema is described in docs/scan.md."
        ),
    )
    parser.add_argument(
        "distributions",
        nargs="*",
        metavar="DIST",
        help="scan only these installed distributions (default: all on sys.path)",
    )
    parser.add_argument(
        "--path",
        action="append",
        default=[],
        metavar="DIR",
        help="scan the source tree DIR; modules are named relative to it (repeatable)",
    )
    parser.add_argument(
        "--stdlib", action="store_true", help="also scan the standard library of this interpreter"
    )
    parser.add_argument(
        "--site",
        action="append",
        metavar="DIR",
        help="look for distributions in DIR instead of sys.path (repeatable)",
    )
    parser.add_argument(
        "--thorough",
        action="store_true",
        help="parse every file that mentions a hook name in full (slower; also reports "
        "syntax errors outside the statements of interest)",
    )
    parser.add_argument(
        "--jobs",
        type=int,
        metavar="N",
        help="worker processes (default: one per CPU for large scans; 1: none)",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="print JSON (schema pep726hook.scan/1) instead of a table",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``pep726hook scan`` with *argv* (without the ``scan`` word); return the exit status."""
    from . import _scan_report

    parser = build_parser()
    try:
        args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
        for directory in [*args.path, *(args.site or ())]:
            if not os.path.isdir(directory):
                parser.error(f"not a directory: {directory}")
        if args.jobs is not None and args.jobs < 0:
            parser.error("--jobs must be 0 or more")
        try:
            result = scan(
                args.distributions,
                args.path,
                stdlib=args.stdlib,
                site=args.site,
                thorough=args.thorough,
                jobs=args.jobs,
            )
        except UnknownDistributionError as exc:
            where = "in " + os.pathsep.join(args.site) if args.site else "on sys.path"
            parser.error(f"no installed distribution named {exc} {where}")
    except SystemExit as exc:
        # argparse exits for --help and usage errors; callers get a status instead.
        return exc.code if isinstance(exc.code, int) else 2
    try:
        if args.json:
            _scan_report.write_json(result, sys.stdout)
        else:
            _scan_report.write_table(result, sys.stdout)
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader (``| head``) has gone; that is not a failed scan.  Point
        # stdout at devnull so the interpreter's final flush stays quiet.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    return 0

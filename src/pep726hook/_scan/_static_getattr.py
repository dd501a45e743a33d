"""Whether a PEP 562 ``__getattr__`` serves a static set of names, and which.

A module-level ``__getattr__`` often serves names fixed when the module is
written: submodules imported on first use, names removed with a message,
names that warn before they fail.  Such a function can be replaced by
declarations (``pep726hook.lazy_attribute()``, ``pep726hook.removed_attribute()``),
which leave the namespace without ``__getattr__`` and its reads specialised.

:func:`plan_getattr` reads the function's statements, never runs them, and
returns a :class:`Plan` (the ordered rules its branches follow) or a
:class:`Refusal` saying which statement it cannot convert exactly and why.
It recognises:

* tests of the name: ``name == "x"``, ``name in ("x", "y")`` (a tuple, list
  or set of strings), ``name in NAMES`` with ``NAMES`` bound once at module
  level before the function, and ``or`` of those;
* what a branch does: returns a submodule of this module (``import pkg.x as
  x; return x``, ``from . import x; return x``, ``importlib.import_module(
  f"{__name__}.{name}")`` or with the package's own dotted name),
  ``raise AttributeError(message)``, or ``warnings.warn(message, Category)``
  before going on;
* the end: ``raise AttributeError(...)``, also behind scipy's ``try: return
  globals()[name] except KeyError: raise AttributeError(...)`` (a name the
  namespace holds never reaches ``__getattr__``); and plain imports, a
  docstring, ``pass`` anywhere.

The expressions a conversion copies (messages, categories) may use only the
function's parameter, ``__name__``, builtins and names bound at module level
before the function.
"""

from __future__ import annotations

import ast
import builtins
from typing import TYPE_CHECKING, Dict, List, NamedTuple

if TYPE_CHECKING:
    from collections.abc import Iterator

_BUILTINS = frozenset(dir(builtins))


class Rule(NamedTuple):
    """One branch of the function, in the order the function tries them."""

    #: ``"lazy"``, ``"removed"`` or ``"warn"`` (which goes on to the next rules).
    action: str
    #: The source of the test of the name (``attr == "linalg"``).
    test: str
    #: The names it lists as literals.
    names: tuple[str, ...]
    #: The module-level collections it tests membership in.
    collections: tuple[str, ...]
    #: The source of the message (of the error, or of the warning).
    message: str | None = None
    #: The source of the warning's category.
    category: str | None = None


class Plan(NamedTuple):
    """A ``__getattr__`` that declarations can replace exactly."""

    function: ast.FunctionDef
    #: The name of the function's parameter (the copied expressions use it).
    parameter: str
    rules: list[Rule]
    #: The source of the message of the final ``raise AttributeError``.
    default_message: str

    def count(self, action: str) -> int:
        return sum(len(rule.names) for rule in self.rules if rule.action == action)

    def summary(self) -> str:
        """What the function serves, in a few words."""
        parts = []
        for action, noun in (
            ("lazy", "submodule"),
            ("removed", "removed name"),
            ("warn", "warning"),
        ):
            listed = self.count(action)
            collections = sorted(
                {c for rule in self.rules if rule.action == action for c in rule.collections}
            )
            if listed:
                parts.append(f"{listed} {noun}{'s' * (listed != 1)}")
            if collections:
                parts.append(f"the {noun}s listed in {', '.join(collections)}")
        return ", ".join(parts)


class Refusal(NamedTuple):
    """Why a ``__getattr__`` cannot be converted exactly."""

    line: int
    reason: str


#: Returned when the function names module-level collections and only its own
#: statement was parsed: the caller parses the whole module and asks again.
NEEDS_MODULE = Refusal(0, "needs the whole module")

Bindings = Dict[str, List[int]]


def module_bindings(tree: ast.Module) -> Bindings:
    """The lines at which each name is bound or changed at module level (any depth of if/try)."""
    bindings: Bindings = {}

    def add(name: str, line: int) -> None:
        bindings.setdefault(name, []).append(line)

    # The module's own scope: not the bodies of functions, classes, lambdas
    # and comprehensions, whose names are their own (numpy's __getattr__
    # sits in an if block and imports its submodules under their names).
    stack: list[ast.AST] = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            add(node.name, node.lineno)
            continue
        if isinstance(node, _OWN_SCOPES):
            continue
        stack.extend(ast.iter_child_nodes(node))
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            add(node.id, node.lineno)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            add(node.name, node.lineno)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                add(alias.asname or alias.name.partition(".")[0], node.lineno)
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.attr in _MUTATORS
        ) or (
            isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Name)
            and not isinstance(node.ctx, ast.Load)
        ):
            # NAMES.append(...), NAMES[key] = ...: a change of the collection.
            add(node.value.id, node.lineno)
    for lines in bindings.values():
        lines.sort()
    return bindings


_OWN_SCOPES = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


_MUTATORS = frozenset(
    (
        "append",
        "extend",
        "insert",
        "remove",
        "pop",
        "clear",
        "add",
        "discard",
        "update",
        "setdefault",
        "popitem",
        "sort",
        "reverse",
        "difference_update",
        "intersection_update",
    )
)


def find_getattr(tree: ast.Module, line: int) -> ast.FunctionDef | None:
    """The ``def __getattr__`` at *line*, at module level or in top-level if/try blocks."""
    for node in _top_statements(tree.body):
        if isinstance(node, ast.FunctionDef) and node.name == "__getattr__" and node.lineno == line:
            return node
    return None


def _top_statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    for stmt in body:
        yield stmt
        for field in ("body", "orelse", "finalbody"):
            if isinstance(stmt, (ast.If, ast.Try)):
                yield from _top_statements(getattr(stmt, field, []))
        if isinstance(stmt, ast.Try):
            for handler in stmt.handlers:
                yield from _top_statements(handler.body)


class _Cannot(Exception):
    def __init__(self, node: ast.AST, reason: str) -> None:
        super().__init__(reason)
        self.line = getattr(node, "lineno", 0)
        self.reason = reason


def plan_getattr(
    function: ast.FunctionDef | ast.AsyncFunctionDef,
    text: str,
    module: str,
    bindings: Bindings | None,
) -> Plan | Refusal:
    """The :class:`Plan` of *function* (a ``def __getattr__`` of *text*), or why there is none.

    *module* is the module's dotted name (its package's, for an
    ``__init__``), empty when unknown; *bindings* the module-level bindings
    (:func:`module_bindings`), None when only the function's own statement
    was parsed (then :data:`NEEDS_MODULE` is returned where they matter).
    """
    if isinstance(function, ast.AsyncFunctionDef):
        return Refusal(function.lineno, "it is a coroutine function")
    try:
        return _Reader(function, text, module, bindings).plan()
    except _NeedsModule:
        return NEEDS_MODULE
    except _Cannot as cannot:
        return Refusal(cannot.line, cannot.reason)


class _NeedsModule(Exception):
    pass


class _Reader:
    def __init__(
        self, function: ast.FunctionDef, text: str, module: str, bindings: Bindings | None
    ) -> None:
        self.function = function
        self.text = text
        self.module = module
        self.bindings = bindings
        self.aliases: dict[str, str] = {}  # local name -> module it imports
        self.rules: list[Rule] = []
        #: Module-level names to check once the whole module is parsed: with
        #: only the function's statement at hand, the rest is read first, so
        #: that a function refused anyway costs no parse of its module.
        self.deferred: list[str] = []

    def plan(self) -> Plan:
        function = self.function
        args = function.args
        positional = [*getattr(args, "posonlyargs", []), *args.args]
        if function.decorator_list:
            raise _Cannot(function, "it is decorated")
        if len(positional) != 1 or args.vararg or args.kwarg or args.kwonlyargs:
            raise _Cannot(function, "it does not take exactly one parameter, the name")
        self.parameter = positional[0].arg
        default = self._block(function.body)
        if default is None:
            raise _Cannot(function, "it does not end by raising AttributeError")
        warned = False
        for rule in self.rules:
            warned = warned or rule.action == "warn"
            if warned and rule.action == "lazy":
                # A declared submodule cannot warn first, as this name might.
                raise _Cannot(function, "a submodule is served after a branch that warns")
        if not any(rule.action in ("lazy", "removed") for rule in self.rules):
            raise _Cannot(function, "it serves no name it lists")
        for rule in self.rules:
            dunders = [n for n in rule.names if n.startswith("__") and n.endswith("__")]
            if dunders:
                raise _Cannot(function, f"declarations cannot serve the dunder name {dunders[0]}")
        if self.bindings is not None and len(self.bindings.get("__getattr__", [])) > 1:
            lines = self.bindings["__getattr__"]
            raise _Cannot(function, f"__getattr__ is bound more than once, at lines {lines}")
        if self.deferred:
            raise _NeedsModule
        return Plan(function, self.parameter, self.rules, default)

    # ---- statements

    def _block(self, body: list[ast.stmt]) -> str | None:
        """Read *body*; return the default message if it ends raising AttributeError."""
        for index, stmt in enumerate(body):
            if (index == 0 and _is_docstring(stmt)) or isinstance(stmt, ast.Pass):
                continue
            if isinstance(stmt, ast.Import):
                for alias in stmt.names:
                    self.aliases[alias.asname or alias.name.partition(".")[0]] = alias.name
                continue
            if isinstance(stmt, ast.ImportFrom) and stmt.module in ("importlib", "warnings"):
                for alias in stmt.names:
                    self.aliases[alias.asname or alias.name] = f"{stmt.module}.{alias.name}"
                continue
            last = index == len(body) - 1
            if isinstance(stmt, ast.If):
                default = self._branch(stmt)
                if default is not None:
                    if not last:
                        raise _Cannot(body[index + 1], "a statement follows the final raise")
                    return default
                continue
            if last and isinstance(stmt, ast.Raise):
                return self._default(stmt)
            if last and isinstance(stmt, ast.Try):
                return self._globals_lookup(stmt)
            if self._warning(stmt) is not None:
                raise _Cannot(stmt, "it warns for every name it is asked for")
            raise _Cannot(
                stmt,
                f"{self._first_line(stmt)!r} is neither a test of the name, an import, a warning"
                " nor the final raise: what the function serves is not a static set of names",
            )
        return None

    def _branch(self, stmt: ast.If) -> str | None:
        """Read an if statement; return the default message if its else branch ends the function."""
        names, collections = self._test(stmt.test)
        test = self._source(stmt.test)
        body = [s for s in stmt.body if not isinstance(s, ast.Pass) and not _is_docstring(s)]
        while body and isinstance(body[0], ast.Import) and not body[0].names[0].asname:
            # "import warnings" before the warning: a module for the branch's own use.
            for alias in body.pop(0).names:  # type: ignore[attr-defined]
                self.aliases[alias.name.partition(".")[0]] = alias.name.partition(".")[0]
        warnings: list[tuple[str, str]] = []
        while body and self._warning(body[0]) is not None:
            warning = self._warning(body.pop(0))
            assert warning is not None
            warnings.append(warning)
        if len(warnings) > 1:
            raise _Cannot(stmt, "a branch warns twice")
        if not body:
            if not warnings:
                raise _Cannot(stmt, "a branch does nothing")
            if stmt.orelse:
                raise _Cannot(stmt, "a branch that only warns has an else branch")
            message, category = warnings[0]
            self.rules.append(Rule("warn", test, names, collections, message, category))
            return None
        for warning in warnings:
            self.rules.append(Rule("warn", test, names, collections, *warning))
        self.rules.append(self._outcome(body, test, names, collections))
        return self._block(stmt.orelse) if stmt.orelse else None

    def _outcome(
        self, body: list[ast.stmt], test: str, names: tuple[str, ...], collections: tuple[str, ...]
    ) -> Rule:
        last = body[-1]
        local: dict[str, str] = {}
        for stmt in body[:-1]:
            if isinstance(stmt, ast.Import) and len(stmt.names) == 1:
                alias = stmt.names[0]
                if alias.asname:
                    local[alias.asname] = alias.name
                    continue
            if isinstance(stmt, ast.ImportFrom) and len(stmt.names) == 1:
                alias = stmt.names[0]
                base = self._absolute(stmt.module or "", stmt.level)
                if base is not None:
                    local[alias.asname or alias.name] = f"{base}.{alias.name}"
                    continue
            raise _Cannot(
                stmt,
                f"a branch computes what it returns ({self._first_line(stmt)!r}): only a"
                " submodule of this module or a removal can be declared",
            )
        if isinstance(last, ast.Raise):
            message = self._attribute_error(last)
            return Rule("removed", test, names, collections, message)
        if not isinstance(last, ast.Return) or last.value is None:
            raise _Cannot(last, "a branch neither returns nor raises")
        value = last.value
        if isinstance(value, ast.Name) and value.id in local:
            imported = local[value.id]
            if len(names) == 1 and not collections and imported == self._submodule(names[0]):
                return Rule("lazy", test, names, collections)
            raise _Cannot(last, f"it returns {imported}, not the submodule the name names")
        if self._imports_submodule(value, names, collections):
            return Rule("lazy", test, names, collections)
        raise _Cannot(
            last,
            f"it returns {self._source(value)!r}, a value computed here rather than a submodule"
            " of this module",
        )

    def _default(self, stmt: ast.Raise) -> str:
        if self._is_a_plain_miss(stmt):
            # CPython's own miss (its message, the name the interpreter fills
            # in): a name that warned first is declared with no message, and
            # then misses as on a plain module.
            return "None"
        return self._attribute_error(stmt)

    def _is_a_plain_miss(self, stmt: ast.Raise) -> bool:
        """Whether *stmt* raises ``AttributeError`` with CPython's message for a module's miss."""
        exc = stmt.exc
        if not (
            isinstance(exc, ast.Call)
            and isinstance(exc.func, ast.Name)
            and exc.func.id == "AttributeError"
            and len(exc.args) == 1
            and not exc.keywords
        ):
            return False
        p = self.parameter
        plain = (
            f"f'module {{__name__!r}} has no attribute {{{p}!r}}'",
            f"'module {{!r}} has no attribute {{!r}}'.format(__name__, {p})",
        )
        found = ast.dump(exc.args[0])
        return any(found == ast.dump(ast.parse(text, mode="eval").body) for text in plain)

    def _globals_lookup(self, stmt: ast.Try) -> str:
        # try: return globals()[name] / except KeyError: raise AttributeError(...)
        if not isinstance(stmt, ast.Try) or stmt.orelse or stmt.finalbody or len(stmt.body) != 1:
            raise _Cannot(stmt, "its try statement is not a form the scan converts")
        ret = stmt.body[0]
        handler = stmt.handlers[0] if len(stmt.handlers) == 1 else None
        if not (
            isinstance(ret, ast.Return)
            and isinstance(ret.value, ast.Subscript)
            and _is_call_of(ret.value.value, "globals")
            and self._is_parameter(_index(ret.value))
            and handler is not None
            and isinstance(handler.type, ast.Name)
            and handler.type.id == "KeyError"
            and len(handler.body) == 1
            and isinstance(handler.body[0], ast.Raise)
        ):
            raise _Cannot(stmt, "its try statement is not a form the scan converts")
        return self._attribute_error(handler.body[0])

    # ---- expressions

    def _test(self, test: ast.expr) -> tuple[tuple[str, ...], tuple[str, ...]]:
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
            names: list[str] = []
            collections: list[str] = []
            for value in test.values:
                more, more_collections = self._test(value)
                names += more
                collections += more_collections
            return tuple(names), tuple(collections)
        if isinstance(test, ast.Compare) and len(test.ops) == 1:
            left, op, right = test.left, test.ops[0], test.comparators[0]
            if isinstance(op, ast.Eq):
                if self._is_parameter(right):
                    left, right = right, left
                if self._is_parameter(left) and _is_str(right):
                    return (right.value,), ()  # type: ignore[attr-defined]
            if isinstance(op, ast.In) and self._is_parameter(left):
                if isinstance(right, (ast.Tuple, ast.List, ast.Set)) and all(
                    _is_str(e) for e in right.elts
                ):
                    return tuple(e.value for e in right.elts), ()  # type: ignore[attr-defined]
                if isinstance(right, ast.Name):
                    self._check_collection(right)
                    return (), (right.id,)
        raise _Cannot(
            test, f"the test {self._source(test)!r} is not a test of the name it converts"
        )

    def _check_collection(self, node: ast.Name) -> None:
        if self.bindings is None:
            self.deferred.append(node.id)
            return
        lines = self.bindings.get(node.id, [])
        if len(lines) != 1:
            how = "never bound" if not lines else f"bound or changed at lines {lines}"
            raise _Cannot(node, f"{node.id} is {how} at module level, not once")
        if lines[0] >= self.function.lineno:
            raise _Cannot(node, f"{node.id} is bound after the function (line {lines[0]})")

    def _warning(self, stmt: ast.stmt) -> tuple[str, str] | None:
        """The message and category sources of ``warnings.warn(...)``; None if *stmt* is not one."""
        if not isinstance(stmt, ast.Expr) or not isinstance(stmt.value, ast.Call):
            return None
        call = stmt.value
        func = call.func
        target = (
            self.aliases.get(func.id, "")
            if isinstance(func, ast.Name)
            else (
                f"{self.aliases.get(func.value.id, func.value.id)}.{func.attr}"
                if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
                else ""
            )
        )
        if target != "warnings.warn":
            return None
        keywords = {k.arg: k.value for k in call.keywords}
        if set(keywords) - {"category", "stacklevel"} or not 1 <= len(call.args) <= 3:
            raise _Cannot(stmt, "its warnings.warn() call is not a form the scan converts")
        category = call.args[1] if len(call.args) > 1 else keywords.get("category")
        message = self._copy(call.args[0])
        return message, self._copy(category) if category is not None else "UserWarning"

    def _attribute_error(self, stmt: ast.Raise) -> str:
        exc = stmt.exc
        if isinstance(exc, ast.Call) and isinstance(exc.func, ast.Name):
            kind = exc.func.id
            if kind == "AttributeError":
                if len(exc.args) != 1 or any(k.arg != "name" for k in exc.keywords):
                    raise _Cannot(stmt, "its AttributeError does not take one message")
                return self._copy(exc.args[0])
            raise _Cannot(
                stmt,
                f"it raises {kind}, where a declared removal raises AttributeError"
                " (from-imports and hasattr() would see the difference)",
            )
        raise _Cannot(
            stmt, f"it raises {self._source(exc) if exc else 'again'}, not AttributeError"
        )

    def _imports_submodule(  # noqa: PLR0911, PLR0912 - one return per recognised spelling
        self, value: ast.expr, names: tuple[str, ...], collections: tuple[str, ...]
    ) -> bool:
        """``importlib.import_module(...)`` of the submodule that the name names."""
        if not isinstance(value, ast.Call) or (value.keywords and len(value.args) > 1):
            return False
        func = value.func
        if isinstance(func, ast.Name):
            # A local "from importlib import import_module", or one at module level.
            callee = self.aliases.get(func.id, func.id)
        elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            # importlib, or an alias of it at module level (scipy's "_importlib").
            owner = func.value.id
            owner = self.aliases.get(owner, "importlib" if owner.endswith("importlib") else owner)
            callee = f"{owner}.{func.attr}"
        else:
            return False
        if callee not in ("importlib.import_module", "import_module"):
            return False
        package = value.args[1] if len(value.args) > 1 else None
        for keyword in value.keywords:
            if keyword.arg == "package":
                package = keyword.value
        target = value.args[0] if value.args else None
        if target is None:
            return False
        if _is_str(target) and len(names) == 1 and not collections:
            dotted = target.value  # type: ignore[attr-defined]
            if package is not None and _is_name(package, "__name__") and dotted == f".{names[0]}":
                return True
            return package is None and dotted == self._submodule(names[0])
        parts = _concatenation(target)
        if parts is None or not self._is_parameter(parts[1]):
            return False
        prefix = parts[0]
        if package is not None:
            return _is_name(package, "__name__") and prefix == "."
        if prefix == _OWN_NAME:
            return True
        return bool(self.module) and prefix == f"{self.module}."

    def _submodule(self, name: str) -> str | None:
        return f"{self.module}.{name}" if self.module else None

    def _absolute(self, module: str, level: int) -> str | None:
        if not level:
            return module
        if not self.module or level != 1:
            return None
        return f"{self.module}.{module}" if module else self.module

    def _is_parameter(self, node: ast.AST | None) -> bool:
        return isinstance(node, ast.Name) and node.id == self.parameter

    def _copy(self, node: ast.expr) -> str:
        """The source of *node*, which a conversion evaluates at module level after the function."""
        for inner in ast.walk(node):
            if not isinstance(inner, ast.Name) or inner.id in (self.parameter, "__name__"):
                continue
            if not isinstance(inner.ctx, ast.Load):
                raise _Cannot(node, f"{self._source(node)!r} binds a name")
            if self.bindings is None:
                self.deferred.append(inner.id)
                continue
            lines = self.bindings.get(inner.id)
            # Bound only before the function: its value when the declarations
            # run is the one every read of the function saw.
            if lines and max(lines) < self.function.lineno:
                continue
            if inner.id in _BUILTINS and not lines:
                continue
            raise _Cannot(
                node,
                f"{self._source(node)!r} uses {inner.id}, which is not bound at module level"
                " before the function only",
            )
        return self._source(node)

    def _source(self, node: ast.AST) -> str:
        segment = ast.get_source_segment(self.text, node) or "..."
        # Exactly as written (a triple-quoted message keeps its lines), with
        # the line ends the generated code uses.
        return segment.replace("\r\n", "\n").replace("\r", "\n")

    def _first_line(self, stmt: ast.stmt) -> str:
        segment = ast.get_source_segment(self.text, stmt) or ""
        return segment.splitlines()[0] if segment else type(stmt).__name__


def _is_docstring(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and _is_str(stmt.value)


def _is_str(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _is_name(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _is_call_of(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Call) and _is_name(node.func, name) and not node.args


def _index(node: ast.Subscript) -> ast.AST:
    # Python 3.8 wraps subscripts in ast.Index; later versions do not.
    value: ast.AST = node.slice
    return getattr(value, "value", value) if type(value).__name__ == "Index" else value


#: Stands for ``f"{__name__}."``: the module's own name, whatever it is.
_OWN_NAME = "{__name__}."


def _concatenation(node: ast.expr) -> tuple[str, ast.expr] | None:
    """``"pkg." + name``, ``f"pkg.{name}"`` or ``f"{__name__}.{name}"`` as (prefix, name)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and _is_str(node.left):
        return node.left.value, node.right  # type: ignore[attr-defined]
    if not isinstance(node, ast.JoinedStr):
        return None
    values: list[ast.expr] = [
        v.value
        if isinstance(v, ast.FormattedValue) and v.conversion == -1 and not v.format_spec
        else v
        for v in node.values
    ]
    if (
        len(values) == 3
        and _is_name(values[0], "__name__")
        and _is_str(values[1])
        and values[1].value == "."  # type: ignore[attr-defined]
    ):
        return _OWN_NAME, values[2]
    if len(values) == 2 and _is_str(values[0]):
        return values[0].value, values[1]  # type: ignore[attr-defined]
    return None


def only_warns_and_returns(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether every value *function* returns comes right after a call of a warning function.

    numpy.core's modules are such: ``warn(name); return value`` for every
    name, ``raise AttributeError`` otherwise.  A function whose name says it
    warns (``warnings.warn``, ``_raise_warning``, ``warn_deprecated``) counts.
    """
    returns = 0
    for node in ast.walk(function):
        body = getattr(node, "body", None)
        if not isinstance(body, list):
            continue
        for blocks in (body, getattr(node, "orelse", []), getattr(node, "finalbody", [])):
            for index, stmt in enumerate(blocks):
                if not isinstance(stmt, ast.Return):
                    continue
                returns += 1
                before = blocks[index - 1] if index else None
                if not (
                    isinstance(before, ast.Expr)
                    and isinstance(before.value, ast.Call)
                    and "warn" in _callee(before.value.func).lower()
                ):
                    return False
    return returns > 0


def _callee(func: ast.expr) -> str:
    if isinstance(func, ast.Name):
        return func.id
    return func.attr if isinstance(func, ast.Attribute) else ""

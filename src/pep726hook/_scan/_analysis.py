"""The parsing half of ``pep726hook scan``: decode, parse and read syntax trees.

:func:`analyse` parses a whole file and reports its module-level hooks and
``__class__`` workarounds, or parses only the statements
:func:`~pep726hook._scan._filter.plan_parse` picked out.  Each file is decoded
and parsed at most once, and its tree walked as little as the findings need.
Nothing is compiled to bytecode or executed.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, List, NamedTuple, Tuple

from ._advice import (
    ClassFacts,
    fallback_advice,
    getattr_advice,
    getattr_read_cost,
    read_cost,
    suggestion,
)
from ._filter import Index, statement_span
from ._markers import declares, opts_in
from ._parsing import Unparsable, decode, parse_text
from ._static_getattr import Bindings, plan_getattr

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


class _NeedsWholeModule(Exception):
    """A statement parsed alone cannot be judged without the rest of its module."""


# --------------------------------------------------------------------------- analysis


def _top_level(body: Iterable[ast.stmt], on_import_error: bool = False) -> Iterator[_Placed]:
    """Module-level statements, including those inside top-level ``if``/``try`` blocks.

    Each comes with whether it runs only when an import failed: inside an
    ``except ImportError:`` (or ``ModuleNotFoundError``, or bare) handler.
    """
    for stmt in body:
        yield stmt, on_import_error
        if isinstance(stmt, ast.If):
            yield from _top_level(stmt.body, on_import_error)
            yield from _top_level(stmt.orelse, on_import_error)
        elif isinstance(stmt, _TRY_TYPES):
            yield from _top_level(stmt.body, on_import_error)  # type: ignore[attr-defined]
            for handler in stmt.handlers:  # type: ignore[attr-defined]
                fallback = on_import_error or _catches_import_error(handler)
                yield from _top_level(handler.body, fallback)
            yield from _top_level(stmt.orelse, on_import_error)  # type: ignore[attr-defined]
            yield from _top_level(stmt.finalbody, on_import_error)  # type: ignore[attr-defined]


_Placed = Tuple[ast.stmt, bool]
_IMPORT_ERRORS = frozenset(("ImportError", "ModuleNotFoundError"))


def _catches_import_error(handler: ast.ExceptHandler) -> bool:
    if handler.type is None:
        return True
    types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(_dotted(t).rpartition(".")[2] in _IMPORT_ERRORS for t in types)


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


class Item(NamedTuple):
    """One finding of a file, before the scanner adds where the file comes from."""

    line: int
    kind: str
    detail: str
    suggestion: str | None = None
    confidence: str = "high"
    class_line: int | None = None
    install_line: int | None = None
    read_cost: str | None = None
    #: For ``helper_workaround``: the installing function's qualified name and line.
    helper: str | None = None
    helper_line: int | None = None


Found = List[Item]

_FRAME_NAMES = frozenset(("_getframe", "currentframe", "f_globals", "f_back"))
_IMPORT_CALLS = frozenset(("import_module", "__import__"))
_DEPRECATION_NAMES = frozenset(("DeprecationWarning", "PendingDeprecationWarning", "FutureWarning"))
_FunctionDef = (ast.FunctionDef, ast.AsyncFunctionDef)


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


def _is_modules(node: ast.expr) -> bool:
    """``X.modules`` (``sys.modules`` under any alias)."""
    return isinstance(node, ast.Attribute) and node.attr == "modules"


def _names_in(node: ast.AST) -> Iterator[str]:
    for inner in ast.walk(node):
        if isinstance(inner, ast.Name):
            yield inner.id
        elif isinstance(inner, ast.Attribute):
            yield inner.attr


class _Scope:
    """The statements of one function (or of the module body), nested functions left out.

    What a scope knows about its local names is what lets the analysis follow a
    module or a wrapper through an intermediate name.
    """

    def __init__(
        self,
        function: ast.FunctionDef | ast.AsyncFunctionDef | None,
        qualname: str | None,
        is_method: bool,
    ) -> None:
        self.function = function
        self.qualname = qualname
        self.statements: list[ast.AST] = []
        self.params: set[str] = set()
        if function is not None:
            args = function.args
            positional = [*getattr(args, "posonlyargs", []), *args.args]
            if is_method and positional:
                positional = positional[1:]  # self or cls: an object, not a module
            every = [*positional, *args.kwonlyargs, args.vararg, args.kwarg]
            self.params = {arg.arg for arg in every if arg is not None}
        #: Local names computed from a parameter, or from the caller's frame.
        self.derived: set[str] = set()
        self.frame: set[str] = set()
        #: Local names bound to a module: name -> "own", "param" or "frame".
        self.modules: dict[str, str] = {}
        #: Local names bound to an instance of a class of this file: name -> (class, line).
        self.instances: dict[str, tuple[str, int]] = {}


def _scopes(body: list[ast.stmt]) -> list[_Scope]:
    """The module body and every function and method in it, each as a :class:`_Scope`."""
    scopes: list[_Scope] = []

    def collect(scope: _Scope, nodes: Iterable[ast.AST], prefix: str, in_class: bool) -> None:
        for node in nodes:
            if isinstance(node, _FunctionDef):
                qualname = f"{prefix}{node.name}"
                inner = _Scope(node, qualname, in_class)
                scopes.append(inner)
                collect(inner, node.body, f"{qualname}.<locals>.", False)
            elif isinstance(node, ast.ClassDef):
                collect(scope, node.body, f"{prefix}{node.name}.", True)
            else:
                if not in_class:  # a class body's own statements run in no function
                    scope.statements.append(node)
                for field in ("body", "orelse", "finalbody", "handlers", "cases"):
                    inner_nodes = getattr(node, field, None)
                    if isinstance(inner_nodes, list):
                        collect(scope, inner_nodes, prefix, in_class)

    top = _Scope(None, None, False)
    scopes.append(top)
    collect(top, body, "", False)
    return scopes


class _Install(NamedTuple):
    cls: str
    line: int
    how: str
    #: What the class is installed on: "own" (this module), "main", "param" or "frame".
    target: str
    scope: _Scope


class _Analysis:
    """The findings of one parsed module."""

    def __init__(
        self,
        tree: ast.Module,
        text: str,
        module: str,
        opted_in: bool,
        *,
        whole: bool = True,
        declared: bool = False,
    ) -> None:
        self.tree = tree
        #: Whether *tree* is the whole module, not only some of its statements.
        self.whole = whole
        self._bindings: Bindings | None = None
        self.text = text
        #: Whether the whole module (not only *text*) opts in: see :func:`opts_in`.
        self.opted_in = opted_in
        #: Whether the whole module declares names with pep726hook: see :func:`declares`.
        self.declared = declared
        self._lines: list[str] | None = None
        self.module = module
        self.classes: dict[str, ast.ClassDef] = {}
        self.module_classes: set[str] = set()
        self.self_aliases: set[str] = set()
        # Searched once in the whole text rather than line by line: none of
        # these names spans a line break.
        self.looks_at_frames = "_getframe" in text or "currentframe" in text or "f_globals" in text
        self._facts_of: dict[str, ClassFacts] = {}

    def source_line(self, lineno: int) -> str:
        # Only lines that get reported are needed: split the text on first use.
        if self._lines is None:
            self._lines = self.text.splitlines()
        lines = self._lines
        text = lines[lineno - 1].strip() if 0 < lineno <= len(lines) else ""
        return text if len(text) <= 100 else text[:97] + "..."

    def findings(self) -> Found:
        """Every finding in the module.

        One walk over the module-level statements finds the hook bindings and
        learns the classes and the names bound to the module itself; only a
        module that defines a class is walked further, once.
        """
        result: Found = []
        for stmt, on_import_error in _top_level(self.tree.body):
            result.extend(self._hooks_of(stmt, on_import_error))
            if isinstance(stmt, ast.ClassDef):
                self.classes[stmt.name] = stmt
                if any(_is_module_type_base(b, self.module_classes) for b in stmt.bases):
                    self.module_classes.add(stmt.name)
            elif isinstance(stmt, ast.Assign) and self._is_self_module(stmt.value):
                for target in stmt.targets:
                    self.self_aliases.update(_target_names(target))
        if self.classes:
            result.extend(self._workarounds())
        return result

    def hooks(self) -> Found:
        """Module-level bindings of the hook names."""
        return [
            item
            for stmt, on_import_error in _top_level(self.tree.body)
            for item in self._hooks_of(stmt, on_import_error)
        ]

    def _hooks_of(self, stmt: ast.stmt, on_import_error: bool) -> Iterator[Item]:
        for kind in map(_HOOK_KINDS.get, _bound_names(stmt)):
            if kind is None:
                continue
            detail = self.source_line(stmt.lineno)
            if kind != "module_getattr":
                yield Item(stmt.lineno, kind, detail)
            elif self.declared:
                # Converted (by hand or by scan --diff): the function is the fallback.
                advice, cost = fallback_advice(
                    "__getattr__",
                    getattr_read_cost(),
                    "declares its names with pep726hook (lazy_attribute(), removed_attribute())",
                )
                yield Item(stmt.lineno, kind, detail, advice, read_cost=cost)
            elif self.opted_in and on_import_error:
                # Bound only where pep726hook cannot be imported, in a module
                # that opts in otherwise: the same rule as a fallback class.
                advice, cost = fallback_advice("__getattr__", getattr_read_cost())
                yield Item(stmt.lineno, kind, detail, advice, read_cost=cost)
            else:
                static, only_deprecated = self._getattr_shape(stmt)
                advice = getattr_advice(
                    self.opted_in,
                    _mentions_deprecation(stmt) or only_deprecated,
                    static=static,
                    only_deprecated=only_deprecated,
                )
                cost = getattr_read_cost(self.opted_in)
                yield Item(stmt.lineno, kind, detail, advice, read_cost=cost)

    def _getattr_shape(self, stmt: ast.stmt) -> tuple[str | None, bool]:
        """What a ``def __getattr__`` serves: its static names (a summary) or deprecated ones only.

        Raises :class:`_NeedsWholeModule` when only the statement was parsed
        and the answer depends on the rest of the module.
        """
        if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return None, False
        from ._static_getattr import NEEDS_MODULE, Plan, module_bindings, only_warns_and_returns

        if only_warns_and_returns(stmt):
            return None, True
        if self.whole and self._bindings is None:
            self._bindings = module_bindings(self.tree)
        plan = plan_getattr(stmt, self.text, self.module, self._bindings)
        if plan is NEEDS_MODULE:
            raise _NeedsWholeModule
        return (plan.summary() if isinstance(plan, Plan) else None), False

    # ---- what a module is, in an expression

    def _is_own_key(self, node: ast.AST) -> bool:
        node = _unwrap_index(node)
        if isinstance(node, ast.Name):
            return node.id == "__name__"
        if isinstance(node, ast.Constant):
            return bool(self.module) and node.value == self.module
        return (
            isinstance(node, ast.Attribute)
            and node.attr == "name"
            and isinstance(node.value, ast.Name)
            and node.value.id == "__spec__"
        )

    def _is_self_module(self, node: ast.expr) -> bool:
        """``sys.modules[__name__]`` (any alias of sys), ``.get(__name__)``, or an alias of it."""
        if isinstance(node, ast.Subscript):
            return _is_modules(node.value) and self._is_own_key(node.slice)
        if isinstance(node, ast.Call):
            func = node.func
            return (
                isinstance(func, ast.Attribute)
                and func.attr == "get"
                and _is_modules(func.value)
                and len(node.args) >= 1
                and self._is_own_key(node.args[0])
            )
        return isinstance(node, ast.Name) and node.id in self.self_aliases

    def _key_kind(self, key: ast.AST, scope: _Scope) -> str | None:
        """Whose ``sys.modules`` entry *key* names: "own", "main", "frame", "param", or None."""
        key = _unwrap_index(key)
        if self._is_own_key(key):
            return "own"
        if isinstance(key, ast.Constant) and key.value == "__main__":
            return "main"
        names = set(_names_in(key))
        if names & _FRAME_NAMES or names & scope.frame:
            return "frame"
        if names & (scope.params | scope.derived):
            return "param"
        return None

    def _module_kind(self, node: ast.expr, scope: _Scope) -> str | None:
        """Which module *node* is: "own", "main", "frame", "param", or None (not a module)."""
        if isinstance(node, ast.Name):
            return self._name_kind(node.id, scope)
        if isinstance(node, ast.Subscript) and _is_modules(node.value):
            return self._key_kind(node.slice, scope)
        if isinstance(node, ast.Call) and node.args:
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr == "get" and _is_modules(func.value):
                return self._key_kind(node.args[0], scope)
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if name in _IMPORT_CALLS:
                return self._key_kind(node.args[0], scope)
        return None

    def _name_kind(self, name: str, scope: _Scope) -> str | None:
        if name in scope.modules:
            return scope.modules[name]
        if name in scope.params:
            return "param"
        return "own" if name in self.self_aliases else None

    # ---- installations

    def _local_class(self, node: ast.expr) -> str | None:
        if isinstance(node, ast.Name) and node.id in self.classes:
            return node.id
        return None

    def _instance_of(self, node: ast.expr, scope: _Scope) -> tuple[str, int | None] | None:
        """The class of this file that *node* is an instance of, and the line of its binding."""
        if isinstance(node, ast.Call):
            cls = self._local_class(node.func)
            return None if cls is None else (cls, None)
        if isinstance(node, ast.Name) and node.id in scope.instances:
            return scope.instances[node.id]
        return None

    def _learn(self, node: ast.Assign, scope: _Scope) -> None:
        """Record what the local names bound by *node* hold."""
        names = [n for t in node.targets for n in _target_names(t)]
        if not names:
            return
        value = node.value
        kind = self._module_kind(value, scope)
        instance = self._instance_of(value, scope) if isinstance(value, ast.Call) else None
        for name in names:
            if kind is not None:
                scope.modules[name] = kind
            if instance is not None:
                scope.instances[name] = (instance[0], node.lineno)
        # What a name is computed from only matters for a key of sys.modules in
        # a function, or where the file looks at frames: most files need no walk.
        if not (scope.params or self.looks_at_frames):
            return
        used = set(_names_in(value))
        for name in names:
            if used & _FRAME_NAMES or used & scope.frame:
                scope.frame.add(name)
            elif used & (scope.params | scope.derived):
                scope.derived.add(name)

    def _installs(self, scope: _Scope) -> Iterator[_Install]:
        for node in scope.statements:
            if isinstance(node, ast.Assign):
                yield from self._assignment_installs(node, scope)
                self._learn(node, scope)
            elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
                call = node.value
                if (
                    isinstance(call.func, ast.Name)
                    and call.func.id == "setattr"
                    and len(call.args) == 3
                    and isinstance(call.args[1], ast.Constant)
                    and call.args[1].value == "__class__"
                ):
                    cls = self._local_class(call.args[2])
                    target = self._module_kind(call.args[0], scope)
                    if cls is not None and target is not None:
                        yield _Install(cls, node.lineno, "setattr(..., '__class__')", target, scope)

    def _assignment_installs(self, node: ast.Assign, scope: _Scope) -> Iterator[_Install]:
        value = node.value
        for target in node.targets:
            if isinstance(target, ast.Attribute) and target.attr == "__class__":
                cls = self._local_class(value)
                kind = self._module_kind(target.value, scope)
                if cls is not None and kind is not None:
                    yield _Install(cls, node.lineno, "__class__ assignment", kind, scope)
            elif isinstance(target, ast.Subscript) and _is_modules(target.value):
                instance = self._instance_of(value, scope)
                kind = self._key_kind(target.slice, scope)
                if instance is None or kind is None:
                    continue
                cls, bound = instance
                how = "sys.modules replacement"
                if bound is not None and isinstance(value, ast.Name):
                    how += f" through the name {value.id} (bound at line {bound})"
                yield _Install(cls, node.lineno, how, kind, scope)

    # ---- what an installed class does

    def _facts(self, name: str) -> ClassFacts:
        # A class installed at several places is looked at once.
        facts = self._facts_of.get(name)
        if facts is None:
            facts = self._facts_of[name] = self._class_facts(name)
        return facts

    def _class_facts(self, name: str) -> ClassFacts:
        overrides: list[str] = []
        getters: list[str] = []
        flags = {"getattribute": False, "getattr": False, "dict": False, "deprecation": False}
        self._collect(name, set(), overrides, getters, flags)
        return ClassFacts(
            name,
            tuple(dict.fromkeys(overrides)),
            tuple(dict.fromkeys(getters)),
            flags["getattribute"],
            flags["getattr"],
            flags["dict"],
            name in self.module_classes,
            flags["deprecation"] or "deprecat" in name.lower(),
        )

    def _collect(
        self,
        name: str,
        seen: set[str],
        overrides: list[str],
        getters: list[str],
        flags: dict[str, bool],
    ) -> None:
        """What class *name* and its local bases define, added to the lists and flags."""
        cls = self.classes.get(name)
        if cls is None or name in seen:
            return
        seen.add(name)
        for stmt in cls.body:
            if isinstance(stmt, _FunctionDef):
                self._method(stmt, overrides, getters, flags)
            elif isinstance(stmt, ast.Assign):
                names = [n for t in stmt.targets for n in _target_names(t)]
                overrides.extend(n for n in names if n in ("__setattr__", "__delattr__"))
                flags["getattribute"] |= "__getattribute__" in names
                flags["getattr"] |= "__getattr__" in names
                value = stmt.value
                if isinstance(value, ast.Call) and _dotted(value.func).endswith("property"):
                    flags["dict"] |= "__dict__" in names
                    has_getter, stores = _property_call(value)
                    if has_getter:
                        getters.extend(names)
                    overrides.extend(f"{store} property {n}" for store in stores for n in names)
        if _mentions_deprecation(cls):
            flags["deprecation"] = True
        for base in cls.bases:
            if isinstance(base, ast.Name):
                self._collect(base.id, seen, overrides, getters, flags)

    @staticmethod
    def _method(
        stmt: ast.FunctionDef | ast.AsyncFunctionDef,
        overrides: list[str],
        getters: list[str],
        flags: dict[str, bool],
    ) -> None:
        if stmt.name in ("__setattr__", "__delattr__"):
            overrides.append(stmt.name)
        flags["getattribute"] |= stmt.name == "__getattribute__"
        flags["getattr"] |= stmt.name == "__getattr__"
        for decorator in stmt.decorator_list:
            if isinstance(decorator, ast.Attribute) and decorator.attr in ("setter", "deleter"):
                overrides.append(f"{decorator.attr} property {stmt.name}")
            elif isinstance(decorator, ast.Name) and decorator.id == "property":
                getters.append(stmt.name)
                flags["dict"] |= stmt.name == "__dict__"

    # ---- findings

    def _workarounds(self) -> Iterator[Item]:
        opted_in = self.opted_in
        reported: set[tuple[str, str | None]] = set()
        for scope in _scopes(self.tree.body):
            for install in self._installs(scope):
                key = (install.cls, scope.qualname)
                if key in reported:
                    continue
                item = self._finding(install, opted_in)
                if item is not None:
                    reported.add(key)
                    yield item

    def _finding(self, install: _Install, opted_in: bool) -> Item | None:
        facts = self._facts(install.cls)
        scope = install.scope
        replaced = install.how.startswith("sys.modules")
        wrapper = not facts.module_type and replaced
        if install.target == "param" and not replaced and not facts.module_type:
            # Only a ModuleType subclass can be a module's __class__: a parameter
            # given any other class is some other object.
            return None
        if facts.dict_property:
            kind = "dict_property_module"
        elif facts.intercepts_stores or (wrapper and (facts.getattr or facts.getattribute)):
            if install.target != "own" and scope.function is not None:
                kind = "helper_workaround"
            else:
                kind = "wrapper_workaround" if wrapper else "class_workaround"
        else:
            return None
        cls = self.classes[install.cls]
        bases = ", ".join(_dotted(b) for b in cls.bases)
        if install.target == "own":
            on = ""
        elif install.target == "main":
            on = " as __main__"
        elif install.target == "frame":
            caller = f"the caller of {scope.qualname}" if scope.qualname else "the importer"
            on = f" on the module of {caller} (from its frame)"
        else:
            on = f" on a module passed to {scope.qualname}"
        what = [*facts.overrides]
        what += ["__getattribute__"] * facts.getattribute + ["__getattr__"] * facts.getattr
        what += ["__dict__ property"] * facts.dict_property
        detail = (
            f"class {install.cls}({bases}) installed{on} by {install.how} at line {install.line};"
            f" {'overrides' if what else 'defines nothing of'} {', '.join(what) or 'interest'}"
        )
        helper = scope.qualname if kind == "helper_workaround" else None
        deprecation = facts.deprecation or "deprecat" in (helper or "").lower()
        facts = facts._replace(deprecation=deprecation)
        cost = read_cost(facts)
        if opted_in and kind in ("class_workaround", "helper_workaround"):
            advice, cost = fallback_advice(f"class {install.cls}", cost)
        else:
            advice = suggestion(facts, helper)
        top = scope.function is None
        confident = install.target == "own" and top and (facts.intercepts_stores or not wrapper)
        return Item(
            cls.lineno,
            kind,
            detail,
            advice,
            "high" if confident and kind != "dict_property_module" else "medium",
            cls.lineno,
            install.line,
            cost,
            helper,
            scope.function.lineno if helper and scope.function is not None else None,
        )


def _mentions_deprecation(node: ast.AST) -> bool:
    """Whether *node* names a deprecation warning class or spells "deprecat" in a string."""
    return any(
        (isinstance(inner, ast.Name) and inner.id in _DEPRECATION_NAMES)
        or (
            isinstance(inner, ast.Constant)
            and isinstance(inner.value, str)
            and "deprecat" in inner.value.lower()
        )
        for inner in ast.walk(node)
    )


def _property_call(call: ast.Call) -> tuple[bool, list[str]]:
    """Whether ``property(fget, fset, fdel)`` has a getter, and which of setter/deleter it has."""
    keywords = {k.arg: k.value for k in call.keywords}
    args: list[ast.expr | None] = [*call.args[:3]] + [None] * (3 - len(call.args[:3]))
    for index, name in enumerate(("fget", "fset", "fdel")):
        if name in keywords:
            args[index] = keywords[name]
    present = [node is not None and not _is_none(node) for node in args]
    return present[0], [store for store, there in zip(("setter", "deleter"), present[1:]) if there]


def _is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


class Analysed(NamedTuple):
    """The findings of one file, and its syntax tree when the whole file was parsed."""

    found: Found
    #: None when only the statements around the hook names were parsed.
    tree: ast.Module | None


def analyse(
    data: bytes,
    path: str,
    module: str,
    hook_lines: list[int] | None = None,
    index: Index | None = None,
) -> Analysed:
    """The findings of *data*: of the statements around *hook_lines*, or of the whole file.

    With *hook_lines* (from :func:`~pep726hook._scan._filter.plan_parse`), only
    the top-level statements that contain those lines are parsed, each alone,
    unless one's extent is uncertain; then, as without *hook_lines*, the whole
    file is parsed, once.  The file is decoded once either way.  Raises
    :class:`Unparsable` when the file cannot be decoded or parsed.
    """
    text, encoding = decode(data)
    opted_in = opts_in(text)
    declared = declares(text)
    if hook_lines is not None:
        found = _statement_findings(
            data,
            encoding,
            hook_lines,
            path,
            index,
            opted_in=opted_in,
            module=module,
            declared=declared,
        )
        if found is not None:
            return Analysed(found, None)
    tree = parse_text(text, path)
    analysis = _Analysis(tree, text, module, opted_in, declared=declared)
    return Analysed(analysis.findings(), tree)


def _statement_findings(
    data: bytes,
    encoding: str,
    hook_lines: list[int],
    path: str,
    index: Index | None,
    *,
    opted_in: bool,
    module: str,
    declared: bool,
) -> Found | None:
    """Findings of the top-level statements that contain *hook_lines*, parsed alone.

    Parsing a few statements instead of a whole module is what keeps a scan
    of a large environment fast: most files with a hook name have just a
    small ``def __getattr__`` to confirm.  Returns None when a statement's
    extent is uncertain (it does not parse alone, or may start inside a
    string); the caller then parses the whole file.
    """
    if index is None:
        index = Index(data)
    spans = dict.fromkeys(statement_span(index, line) for line in hook_lines)
    found: Found = []
    for span in spans:
        if span is None or not index.is_code(span[0]):
            return None
        start, end = span
        chunk_encoding = "utf-8" if encoding == "utf-8-sig" and start else encoding
        try:
            chunk = data[start:end].decode(chunk_encoding)
            tree = parse_text(chunk, path)
        except (UnicodeDecodeError, Unparsable):
            return None
        offset = data.count(b"\n", 0, start)
        analysis = _Analysis(tree, chunk, module, opted_in, whole=False, declared=declared)
        try:
            hooks = analysis.hooks()
        except _NeedsWholeModule:
            return None
        found.extend(item._replace(line=item.line + offset) for item in hooks)
    return found

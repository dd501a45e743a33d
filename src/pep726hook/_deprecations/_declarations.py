"""Declared names: ``lazy_attribute()`` and ``removed_attribute()``, and their argument checks.

What a PEP 562 ``__getattr__`` serves when its names are known as the
module is imported, declared instead, so that the module needs no
``__getattr__`` in its namespace (which keeps CPython 3.11-3.14 from
specialising every read of the module):

* a lazy name (``lazy_attribute()``): the first read through the module
  imports the submodule of that name, or calls a factory, stores the value
  in the namespace and returns it, with no warning; from then on the name
  is a plain entry of the namespace.
* a removed name (``removed_attribute()``): every read through the module
  raises ``AttributeError(message)`` with the library's message (after a
  warning, if it has one); a store binds the name and ends the removal.

Both are entries of the module's table (:mod:`._entries`, kinds ``LAZY``
and ``REMOVED``) served as deprecated names are: by the deprecating class
while the module's import runs and under the class engine, then under the
native engine by the C descriptor in ``ModuleType``'s dict
(``src/c/native/deprecated_descriptor.c``).  A name carries one
declaration: a later one of the same name (lazy, removed or deprecated)
replaces it.  Every check runs before anything changes.
"""

import _weakref

from .. import _state
from .._enable import module_named
from ._deprecating import deprecate_opting_in, replace_deprecation
from ._entries import (
    DEPRECATED,
    LAZY,
    REMOVED,
    Deprecation,
    check_name,
    deprecations_of,
    unrun_submodule,
)
from ._entries import namespace as _namespace
from ._moved import body_runs_again, moved_values, sync_served

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType
    from typing import Any, Callable

__all__ = ["lazy_attribute", "removed_attribute"]

_MISSING: "Any" = object()


class LazyLoad:
    """A lazy name's load: compute the value, store it in the namespace, end the declaration.

    Called by the first read through the module (the C descriptor, or the
    deprecating class's ``__getattr__``).  Threads reading the name for the
    first time at once may each compute it; the first value stored in the
    namespace wins, and every reader gets that one.  An exception from
    *compute* propagates, and nothing is stored: the next read tries again.
    Holds the module weakly (its table, which holds this, lives as long as
    the module).
    """

    __slots__ = ("compute", "module", "name")

    def __init__(self, module: "ModuleType", name: str, compute: "Callable[[], object]") -> None:
        self.module = _weakref.ref(module)
        self.name = name
        self.compute = compute

    def __call__(self) -> object:
        value = self.compute()
        module = self.module()
        if module is None:
            return value
        name = self.name
        with _state.lock:  # lock rule 1: dict operations only
            # The import system may have bound the submodule meanwhile, or
            # another thread stored its value: that one wins.
            value = _namespace(module).setdefault(name, value)
            table = deprecations_of(module)
            entry = None if table is None else table.get(name)
            if table is not None and entry is not None and entry.load is self:
                del table[name]
                sync_served(module)
        return value

    def __repr__(self) -> str:
        return f"<lazy load of {self.name!r} (pep726hook.lazy_attribute())>"


def _check_name(name: object, caller: str) -> str:
    if not isinstance(name, str):
        raise TypeError(f"{caller}: name must be a str, not {type(name).__name__}")
    check_name(name, caller)
    return name


def _has_value(target: "ModuleType", name: str, existing: "Deprecation | None") -> bool:
    # The name reads as a value the module holds: in its namespace, or a
    # deprecated value moved into its private builtins (not the builtin of
    # the same name a lazy deprecation not loaded yet leaves there).
    if name in _namespace(target):
        return True
    if existing is None or existing.kind != DEPRECATED:
        return False
    if existing.load is None:
        return True
    private = moved_values(target)
    import builtins

    return name in private and private[name] is not vars(builtins).get(name, _MISSING)


def _declare(target: "ModuleType", name: str, entry: Deprecation, caller: str) -> bool:
    """Put *entry* into *target*'s table, replacing a declaration of *name*; opt it in.

    Returns False, changing nothing, when *name* has a value and the
    module's body runs again under ``importlib.reload()`` (the value the
    first run's declaration loaded, or a store bound, stays).  Raises
    ValueError, changing nothing, when *name* has a value otherwise.
    """
    table = deprecations_of(target)
    existing = None if table is None else table.get(name)
    if _has_value(target, name, existing):
        if body_runs_again(target):
            return False
        raise ValueError(
            f"{caller}: module {_namespace(target).get('__name__')!r} already has a value "
            f"for {name!r}; only a name the module does not hold can be declared"
        )
    if existing is not None:
        replace_deprecation(target, name, entry)
    else:
        deprecate_opting_in(target, {name: entry})
    return True


def lazy_attribute(
    module: "str | ModuleType",
    name: str,
    *,
    factory: "Callable[[], object] | None" = None,
) -> None:
    """Declare *name* of *module* lazy: its first read through the module loads it.

    Without *factory*, ``f"{module.__name__}.{name}"`` must be an importable
    submodule (found as ``importlib.util.find_spec`` finds it, not run): the first
    read through the module (``mod.name``, ``getattr``, ``hasattr``, ``from
    mod import name``, a star-import whose ``__all__`` names it) imports it;
    with *factory*, it calls ``factory()``.  The value is stored in the
    namespace and returned, with no warning; from then on the name is a
    plain entry of the namespace.  ``import pkg.name`` binds the submodule
    as usual, which ends the declaration, as any store of the name does.
    An exception from the import or from *factory* (an ``AttributeError``
    or ``ImportError`` too) propagates unchanged, nothing is stored, and the
    next read tries again.  ``dir(module)`` lists the name.

    *module* is a module object or a name in ``sys.modules``; it is opted in
    as ``enable()`` does.  A name carries one declaration: declaring a name
    that has one (lazy, removed, or deprecated without a value yet) replaces
    it.  Under ``importlib.reload()``, a name whose value the first run
    loaded keeps it.

    Raises TypeError for a *name* that is not a str or a *factory* that is
    not callable, ValueError for a name not in ``sys.modules``, a dunder
    *name*, a name the module already holds, and, without *factory*, a name
    that is not an importable submodule.  On any error nothing has changed.
    """
    caller = "lazy_attribute()"
    target = module_named(module, caller)
    _check_name(name, caller)
    if factory is not None and not callable(factory):
        raise TypeError(f"{caller}: factory must be callable, not {type(factory).__name__}")
    submodule = None
    if factory is None:
        submodule = _find_submodule(target, name, caller)
        compute: Callable[[], object] = _ImportSubmodule(submodule)
    else:
        compute = factory
    load = LazyLoad(target, name, compute)
    entry = Deprecation("", DeprecationWarning, None, load, submodule, kind=LAZY)
    _declare(target, name, entry, caller)


def removed_attribute(
    module: "str | ModuleType",
    name: str,
    message: "str | None",
    *,
    warning: "str | None" = None,
    category: "type[Warning]" = DeprecationWarning,
) -> None:
    """Declare *name* of *module* removed: a read through the module raises ``AttributeError(message)``.

    Every read through the module (``mod.name``, ``getattr``, ``from mod
    import name``) raises ``AttributeError(message)``, with *message* as
    given; ``hasattr()`` is False and ``getattr(mod, name, default)``
    returns *default*.  With *warning*, each read first warns
    ``warnings.warn(warning, category)`` at the reader's line (so
    ``-W error`` raises the warning instead).  With *message* None (only
    with a *warning*), a read misses after the warning as on a plain module:
    the module's own ``__getattr__``, if it has one, then CPython's own
    error, name and guess included (numpy's ``np.bytes``).  A store of the name through
    the module binds it as on a plain module and ends the removal.
    ``dir(module)`` does not list it.

    *module* is a module object or a name in ``sys.modules``; it is opted in
    as ``enable()`` does.  A name carries one declaration: declaring a name
    that has one (lazy, removed, or deprecated without a value yet) replaces
    it.  Under ``importlib.reload()``, a name bound since (a store) keeps
    its value.

    Raises TypeError for a *name*, *message* or *warning* that is not a str
    (or None), a *message* None without a *warning*, or a *category* that is
    not a ``Warning`` subclass, ValueError for a name not in
    ``sys.modules``, a dunder *name*, a name the module already holds, or an
    empty *message* or *warning*.  On any error nothing has changed.
    """
    caller = "removed_attribute()"
    target = module_named(module, caller)
    _check_name(name, caller)
    if message is not None:
        _check_text(message, "message", caller)
    elif warning is None:
        raise TypeError(
            f"{caller}: message None (a read misses as on a plain module) needs a warning; "
            "without one the declaration would change nothing"
        )
    if warning is not None:
        _check_text(warning, "warning", caller)
    if not (isinstance(category, type) and issubclass(category, Warning)):
        raise TypeError(f"{caller}: category must be a Warning subclass, not {category!r}")
    entry = Deprecation(message, category, None, kind=REMOVED, warning=warning)
    _declare(target, name, entry, caller)


def _check_text(text: object, what: str, caller: str) -> None:
    if not isinstance(text, str):
        raise TypeError(f"{caller}: {what} must be a str, not {type(text).__name__}")
    if not text:
        raise ValueError(f"{caller}: {what} must not be empty")


class _ImportSubmodule:
    # A lazy submodule's computation: importlib.import_module(full_name).
    __slots__ = ("full_name",)

    def __init__(self, full_name: str) -> None:
        self.full_name = full_name

    def __call__(self) -> object:
        import importlib

        return importlib.import_module(self.full_name)


def _find_submodule(target: "ModuleType", name: str, caller: str) -> str:
    namespace = _namespace(target)
    full_name = unrun_submodule(namespace, name)
    if full_name is None:
        raise ValueError(
            f"{caller}: '{namespace.get('__name__')}.{name}' is not an importable "
            f"submodule; give factory= to compute {name!r}"
        )
    return full_name

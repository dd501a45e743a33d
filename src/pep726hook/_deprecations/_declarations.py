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

from .._enable import module_named
from ._deprecating import deprecate_opting_in, replace_deprecation
from ._entries import (
    DEPRECATED,
    LAZY,
    REMOVED,
    Deprecation,
    check_name,
    deprecations_of,
)
from ._entries import namespace as _namespace
from ._moved import ImportSubmodule, LazyLoad, body_runs_again, moved_values
from ._submodules import unrun_submodule

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType
    from typing import Any, Callable

__all__ = ["lazy_attribute", "removed_attribute"]

_MISSING: "Any" = object()


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
    """Do all of :func:`pep726hook.lazy_attribute`, whose docstring says what it does.

    The package's own function serves the common case through the C
    extension alone and comes here for the rest.
    """
    caller = "lazy_attribute()"
    target = module_named(module, caller)
    _check_name(name, caller)
    if factory is not None and not callable(factory):
        raise TypeError(f"{caller}: factory must be callable, not {type(factory).__name__}")
    submodule = None
    if factory is None:
        submodule = _find_submodule(target, name, caller)
        compute: Callable[[], object] = ImportSubmodule(submodule)
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
    """Do all of :func:`pep726hook.removed_attribute`, whose docstring says what it does.

    The package's own function serves the common case through the C
    extension alone and comes here for the rest.
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


def _find_submodule(target: "ModuleType", name: str, caller: str) -> str:
    namespace = _namespace(target)
    full_name = unrun_submodule(namespace, name)
    if full_name is None:
        raise ValueError(
            f"{caller}: '{namespace.get('__name__')}.{name}' is not an importable "
            f"submodule; give factory= to compute {name!r}"
        )
    return full_name

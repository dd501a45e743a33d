"""The deprecation API: ``deprecated()`` and ``deprecate_attribute()``, and their argument checks.

A deprecated name stays readable by the module's own code (the rest of its
body, its functions, closures and class bodies) with no warning, while a
read through the module object (``mod.Old``, ``getattr``, ``hasattr``,
``from mod import Old``) warns; a store through the module warns, stores
and ends the deprecation, a deletion warns, deletes and ends it.  How, under
each engine: :mod:`pep726hook._deprecations`.  Every check runs before
anything changes; the work is :func:`._deprecating.deprecate`'s.
"""

import sys

from .._enable import module_named
from ._deprecating import convert_at_first_read, deprecate_opting_in, replace_deprecation
from ._entries import (
    DEPRECATED,
    LAZY,
    DeprecatedValue,
    Deprecation,
    check_name,
    deprecations_of,
)
from ._entries import namespace as _namespace
from ._moved import body_runs_again, moved_values

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType
    from typing import Any, Callable, TypeVar

    _T = TypeVar("_T")
    WarnCallable = Callable[[str, "type[Warning]", int], object]

__all__ = ["DeprecatedValue", "deprecate_attribute", "deprecated"]


def _check_arguments(message: object, category: object, warn: object, caller: str) -> None:
    if not isinstance(message, str):
        raise TypeError(f"{caller}: message must be a str, not {type(message).__name__}")
    if not message:
        raise ValueError(f"{caller}: message must not be empty; say what to use instead")
    if not (isinstance(category, type) and issubclass(category, Warning)):
        raise TypeError(f"{caller}: category must be a Warning subclass, not {category!r}")
    if warn is not None and not callable(warn):
        raise TypeError(
            f"{caller}: warn must be a callable warn(message, category, stacklevel) or "
            f"None, not {type(warn).__name__}"
        )


def _own_warn(warn: "WarnCallable | None") -> "WarnCallable | None":
    # warnings.warn itself is what pep726hook calls anyway (by the same C
    # function, one frame less).  Looked up, not imported: a caller holding
    # warnings.warn has imported that module, and a library that deprecates
    # must not pay for importing it (1.3M instructions, 3 % of a start-up)
    # before its first warning.
    if warn is None:
        return None
    warnings = sys.modules.get("warnings")
    return None if warn is getattr(warnings, "warn", None) else warn


def deprecated(
    value: "_T",
    message: str,
    *,
    category: "type[Warning]" = DeprecationWarning,
    warn: "Callable[[str, type[Warning], int], object] | None" = None,
) -> "_T":
    """Mark *value*, assigned to a module attribute, as deprecated under that name.

    In a module body::

        OldName = pep726hook.deprecated(NewName, "OldName is deprecated; use NewName")
        pep726hook.enable(__name__)

    ``enable()`` (before or after the assignment: then at the first read
    through the module or the end of its import) turns the marker into a
    deprecation of ``OldName``: the namespace holds *value* again, so the
    module's own code reads it with no warning, while a read through the
    module (``mod.OldName``, ``getattr()``, ``hasattr()``, ``from mod import
    OldName``, once per statement) warns at the line that read it and returns
    *value*.  Setting it through the module warns, stores and ends the
    deprecation; deleting it warns, deletes and ends it.  ``setattr(mod,
    "OldName", deprecated(value, msg))`` on an enabled module deprecates the
    name the same way.  No read through the module returns the marker; the
    module's own code reading the name between the assignment and its
    conversion (the body's lines up to its ``enable()`` call, or, for an
    assignment after ``enable()``, up to the first read through the module)
    sees the marker itself.

    The module gets a ``ModuleType`` subclass, the deprecating class, with
    one data descriptor per deprecated name (the same under both engines):
    ``type(mod)`` changes (``isinstance(mod, types.ModuleType)`` stays
    true, and ``sys.modules`` keeps the same object), reads of its
    other names cost what they cost on any ``ModuleType`` subclass, and
    ``dir()``, ``vars()`` and ``from mod import *`` list the name (the last
    warns for it unless ``__all__`` leaves it out).

    The warning is ``warnings.warn(message, category, stacklevel)``, or, with
    *warn*, ``warn(message, category, stacklevel)``, *stacklevel* being what
    ``warnings.warn`` called directly inside *warn* needs to name the
    reader's line (a library's own warning function or switch).  An
    exception from *warn* propagates from the read, as a warnings filter
    ``"error"`` does, and changes nothing.

    Returns a :class:`DeprecatedValue` marker, for the assignment to hold
    until the conversion.  It is annotated as returning ``T``, *value*'s own
    type, because that is what the name reads as: no read through the module
    returns the marker, so a type checker gives the attribute *value*'s type.
    Raises TypeError when *message* is not a str, *category* not a
    ``Warning`` subclass or *warn* not callable, and ValueError for an empty
    *message* or a *value* that is already a marker.
    """
    _check_arguments(message, category, warn, "deprecated()")
    if type(value) is DeprecatedValue:
        raise ValueError("deprecated(): the value is already a deprecated() marker")
    marker: Any = DeprecatedValue(value, message, category, _own_warn(warn))
    convert_at_first_read(sys._getframe(1).f_globals)
    return marker  # type: ignore[no-any-return]


def deprecate_attribute(
    module: "str | ModuleType",
    name: str,
    message: str,
    *,
    category: "type[Warning]" = DeprecationWarning,
    warn: "Callable[[str, type[Warning], int], object] | None" = None,
    factory: "Callable[[], object] | None" = None,
) -> None:
    """Do all of :func:`pep726hook.deprecate_attribute`, whose docstring says what it does.

    The package's own function hands a call here where the extension cannot
    declare the name alone.
    """
    caller = "deprecate_attribute()"
    target = module_named(module, caller)
    if not isinstance(name, str):
        raise TypeError(f"{caller}: name must be a str, not {type(name).__name__}")
    check_name(name, caller)
    _check_arguments(message, category, warn, caller)
    if factory is not None and not callable(factory):
        raise TypeError(f"{caller}: factory must be callable, not {type(factory).__name__}")
    warn = _own_warn(warn)
    namespace = _namespace(target)
    table = deprecations_of(target)
    existing = None if table is None else table.get(name)
    declared = existing
    if existing is not None and existing.kind != DEPRECATED:
        # A lazy or removed name: this deprecation replaces that declaration
        # (a lazy one's load stays, unless a factory is given).
        existing = None
    # A moved module's deprecated value lives in its private builtins, with
    # a copy of every builtin: a name that is also a builtin (float, int)
    # and is not deprecated there has no value of the module's.
    present = name in namespace or (existing is not None and name in moved_values(target))
    if factory is not None and (present or existing is not None) and not body_runs_again(target):
        raise ValueError(
            f"{caller}: module {namespace.get('__name__')!r} already has a value or a "
            f"deprecation for {name!r}; a factory is only for a name without one"
        )
    if existing is not None:
        # Replaced whole, under the install lock.  A factory replaces the
        # entry's, as its message does: importlib.reload() runs a body that
        # deprecated a name lazily again, with the name deprecated (and
        # perhaps loaded) by the first run; a loaded value stays.
        load, submodule = (
            (existing.load, existing.submodule) if factory is None else (factory, None)
        )
        replace_deprecation(target, name, Deprecation(message, category, warn, load, submodule))
        return
    if declared is not None and declared.kind == LAZY and factory is None:
        load = getattr(declared.load, "compute", None)
        replace_deprecation(
            target, name, Deprecation(message, category, warn, load, declared.submodule)
        )
        return
    if present:
        # With a factory, a body that importlib.reload() runs again after the
        # deprecation ended: the value stays, and the factory serves the name
        # if it is deleted from the namespace by the module's own code.
        entry = Deprecation(message, category, warn, factory)
    elif factory is not None:
        entry = Deprecation(message, category, warn, factory)
    else:
        entry = _submodule_deprecation(
            namespace, name, message, category=category, warn=warn, caller=caller
        )
    del namespace  # a move counts the references to it
    if declared is not None:
        replace_deprecation(target, name, entry)
        return
    deprecate_opting_in(target, {name: entry})


def _submodule_deprecation(
    namespace: "dict[str, Any]",
    name: str,
    message: str,
    *,
    category: "type[Warning]",
    warn: "WarnCallable | None",
    caller: str,
) -> Deprecation:
    # Loaded here: a deprecation of a name the module holds never needs it.
    from ._submodules import unrun_submodule

    full_name = unrun_submodule(namespace, name)
    if full_name is None:
        package = namespace.get("__name__")
        raise AttributeError(
            f"{caller}: module {package!r} has no attribute {name!r} in its namespace to "
            "deprecate, no importable submodule of that name, and no factory was given"
        )

    def import_submodule() -> object:
        import importlib

        return importlib.import_module(full_name)

    return Deprecation(message, category, warn, import_submodule, full_name)

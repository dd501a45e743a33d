"""Deprecated module attributes: the markers, the per-module tables, and the deprecating class.

A deprecated name stays in its module's namespace, so the module's own code
(the rest of its body, its functions, closures and class bodies,
``typing.get_type_hints()``) reads it as any other global, with no warning.
Reads through the module object (``mod.Old``, ``getattr``, ``hasattr``,
``from mod import Old``) warn: a module with deprecated names gets the
*deprecating class*, a ``ModuleType`` subclass composed with the module's own
class (:mod:`._composition`, under both engines) that holds one data
descriptor per deprecated name.  Generic attribute lookup runs a type's data
descriptor before it looks in the instance's namespace; the descriptor warns
and returns the namespace's value.  The class's Python-level ``__getattr__``
keeps the interpreter from specialising reads of the module (a specialised
read would skip the descriptor on CPython 3.14+), which makes reads of its
other names about as slow as on any ``ModuleType`` subclass; every other
module is untouched.  A store through the module warns, stores and ends the
deprecation; a deletion warns, deletes and ends it.  A module whose
deprecations all ended keeps the class.

A lazy deprecation (a submodule not imported yet, or a ``factory``) has no
value in the namespace until the first read through the module, which the
class's ``__getattr__`` serves.

One table per module, ``{name: Deprecation}``, registered in :mod:`._state`
(held weakly, by id) where the classes' stores and reads find it.  Imports
nothing but built-in modules and the package's own; ``enable()`` of a library
without deprecations never loads this module.
"""

import _weakref
import sys

from . import _state
from ._composition import DeprecatedValue, Deprecation, namespace_of
from ._state import deprecation_table_of, deprecation_tables

# Named here too: the tables' own module.
deprecations_of = deprecation_table_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType
    from typing import Any, Callable, Dict, TypeVar

    _T = TypeVar("_T")
    Table = Dict[str, Deprecation]
    WarnCallable = Callable[[str, "type[Warning]", int], object]
else:
    ModuleType = type(sys)

__all__ = ["DeprecatedValue", "deprecate_attribute", "deprecated"]

_ENABLE_MODULE = __name__.rpartition(".")[0] + "._enable"
_NATIVE_MODULE = __name__.rpartition(".")[0] + "._native"

# id(module) -> (weak reference to the module, its table).  By id, as the
# opted-in modules are: a module class of the library's own may define
# __eq__ or __hash__, which a WeakKeyDictionary would run.
_tables = deprecation_tables


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
    # function, one frame less).
    import warnings

    return None if warn is warnings.warn else warn


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
    _convert_at_first_read(sys._getframe(1).f_globals)
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
    """Deprecate the attribute *name* of *module*; opt *module* in as ``enable()`` does.

    For a module deprecating a name it has already defined, or a package
    deprecating one of its modules' names from outside::

        pep726hook.deprecate_attribute(__name__, "OldName",
                                       "OldName is deprecated; use NewName")

    * *name* in the namespace: deprecated in place, as with
      :func:`pep726hook.deprecated` (the value stays; the module's own code
      reads it with no warning).
    * *name* absent and ``f"{module.__name__}.{name}"`` an importable
      submodule (found, not run, by ``importlib.util.find_spec``): the first
      read through the package imports it, warns and returns it.  ``import
      pkg.name`` keeps working, and its binding of the submodule on the
      package neither warns nor ends the deprecation.
    * *name* absent, *factory* given: the first read through the module
      stores ``factory()`` in the namespace, warns and returns it; later reads
      warn without calling it again.  An exception from *factory* propagates
      from the read, nothing is stored, and the next read tries again.

    Deprecating a name that is already deprecated replaces its message,
    category and *warn*.  *category* and *warn* are as for
    :func:`pep726hook.deprecated`.  *module* is a module object or a name in
    ``sys.modules``.

    Raises TypeError for a bad argument type (a *factory* that is not
    callable), ValueError for a name not in ``sys.modules``, an empty
    message, a dunder *name* (the interpreter reads those itself) or a
    *factory* for a name that has a value, AttributeError when *name* is
    neither in the namespace, nor an importable submodule, nor given a
    *factory*.  On any error nothing has changed.
    """
    from ._enable import enable, module_named

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
    present = name in namespace
    if factory is not None and (present or existing is not None):
        raise ValueError(
            f"{caller}: module {namespace.get('__name__')!r} already has a value or a "
            f"deprecation for {name!r}; a factory is only for a name without one"
        )
    if existing is not None:
        # Replaced whole, under the install lock.
        replaced = Deprecation(message, category, warn, existing.load, existing.submodule)
        with _state.lock:
            if table is not None:
                table[name] = replaced
        return
    if present:
        entry = Deprecation(message, category, warn)
    elif factory is not None:
        entry = Deprecation(message, category, warn, factory)
    else:
        entry = _submodule_deprecation(
            namespace, name, message, category=category, warn=warn, caller=caller
        )
    enable(target)
    _deprecate(target, {name: entry})


def _submodule_deprecation(
    namespace: "dict[str, Any]",
    name: str,
    message: str,
    *,
    category: "type[Warning]",
    warn: "WarnCallable | None",
    caller: str,
) -> Deprecation:
    package = namespace.get("__name__")
    full_name = f"{package}.{name}"
    spec = None
    if isinstance(package, str) and "__path__" in namespace:
        import importlib.util

        try:
            # Finds the submodule without running it.
            spec = importlib.util.find_spec(full_name)
        except (ImportError, ValueError):
            spec = None
    if spec is None:
        raise AttributeError(
            f"{caller}: module {package!r} has no attribute {name!r} in its namespace to "
            "deprecate, no importable submodule of that name, and no factory was given"
        )

    def import_submodule() -> object:
        import importlib

        return importlib.import_module(full_name)

    return Deprecation(message, category, warn, import_submodule, full_name)


def check_name(name: str, caller: str) -> None:
    """Refuse a dunder *name*: the interpreter and the import system read those themselves."""
    if _is_dunder(name):
        raise ValueError(
            f"{caller}: {name!r} cannot be deprecated: the interpreter and the import "
            "system read dunder names themselves"
        )


def _namespace(module: ModuleType) -> "dict[str, Any]":
    # A module made with ModuleType.__new__ alone has no namespace before
    # Python 3.11 (its __dict__ is None): it holds no names, deprecated or not.
    namespace: dict[str, Any] | None = namespace_of(module)
    return {} if namespace is None else namespace


def markers_in(module: ModuleType) -> "list[tuple[str, DeprecatedValue]]":
    """Return the ``deprecated()`` markers in *module*'s namespace, checking their names.

    Raises ValueError, before anything changes, for a marker under a dunder name.
    """
    found = [
        (name, value)
        for name, value in list(_namespace(module).items())
        if type(value) is DeprecatedValue
    ]
    for name, _marker in found:
        check_name(name, "pep726hook.enable()")
    return found


def convert_markers(module: ModuleType) -> None:
    """Turn the markers in the opted-in *module*'s namespace into deprecations.

    Raises ValueError, before anything changes, for a marker under a dunder name.
    """
    markers = markers_in(module)
    if markers:
        _deprecate(
            module,
            {
                name: Deprecation(marker.message, marker.category, marker.warn)
                for name, marker in markers
            },
        )


def enable_if_marked(module: ModuleType) -> None:
    """Enable *module*, whose import by pep726hook's finder just ended, if it holds markers.

    ``enable()`` then turns them into deprecations.  The enable module is
    looked up, not imported: ``deprecated()`` loaded it, and no import may
    start from here (the end of an ``exec_module``).
    """
    names = [
        name for name, value in list(_namespace(module).items()) if type(value) is DeprecatedValue
    ]
    # A marker under a dunder name, which enable() refuses, leaves it alone.
    if names and not any(_is_dunder(name) for name in names):
        sys.modules[_ENABLE_MODULE].enable(module)


def _table_for(module: ModuleType) -> "Table":
    # Under the install lock, so two threads never make two tables.
    table = deprecations_of(module)
    if table is None:
        table = {}
        key = id(module)

        # Bound as defaults: the callback may run while the interpreter
        # clears this module's globals at exit.
        def forget(ref: "Any", key: int = key, tables: "Any" = _tables) -> None:
            entry = tables.get(key)
            if entry is not None and entry[0] is ref:
                tables.pop(key, None)

        _tables[key] = (_weakref.ref(module, forget), table)
    return table


def _deprecate(module: ModuleType, entries: "Table") -> None:
    """Give the opted-in *module* the deprecating class and *entries*; markers become values.

    The class comes first (on its own it changes nothing a reader sees), then
    the entries, then each marker in the namespace is replaced by its value:
    a reader in another thread sees the name deprecated or not yet, never
    missing.  Composing the class runs user code (the metaclass of the
    module's own class), so it is done without the install lock; an error
    there leaves the deprecations as they were.
    """
    from ._class_engine import deprecating_mixin_class, give_deprecating_class

    mixin = deprecating_mixin_class()
    pending: object = None  # alive until the module has it (the class cache is weak)
    while True:
        with _state.lock:  # lock rule 1: no user code below
            engine = _state.opt_in_engine
            assert engine is not None, "enable() chose the engine"
            work = give_deprecating_class(module)
            if work is None:
                engine.release_held_getattr(module)
                for name in entries:
                    add_descriptor(mixin, name)
                table = _table_for(module)
                table.update(entries)
                namespace = _namespace(module)
                for name in entries:
                    current = namespace.get(name)
                    if type(current) is DeprecatedValue:
                        # Only the marker itself: a store may replace it meanwhile.
                        namespace[name] = current.value
                break
        pending = work()
    del pending


def add_descriptor(mixin: type, name: str) -> None:
    """Give the deprecating class (and every class composed with it) *name*'s descriptor."""
    from ._composition import add_deprecated_name

    add_deprecated_name(mixin, name)


def _convert_at_first_read(caller_globals: "dict[str, Any]") -> None:
    """Have the first read through the module whose body called ``deprecated()`` convert it.

    Only for a module already opted in (otherwise ``enable()`` converts the
    markers when it runs): it gets the pending-markers class, whose reads
    turn markers into deprecations.  The marker is assigned after
    ``deprecated()`` returns, so nothing can be converted here.
    """
    # Also loads the enable module, which the finder's end of an import
    # (enable_if_marked) then finds loaded.
    from ._enable import is_opted_in

    module = sys.modules.get(str(caller_globals.get("__name__")))
    if module is None or not is_opted_in(module) or _namespace(module) is not caller_globals:
        return
    from ._class_engine import give_pending_markers_class

    pending: object = None  # alive until the module has it (the class cache is weak)
    while True:
        with _state.lock:  # lock rule 1: no user code below
            work = give_pending_markers_class(module)
            if work is None:
                engine = _state.opt_in_engine
                if engine is not None:
                    engine.release_held_getattr(module)
                break
        pending = work()
    del pending


def convert_pending_markers(module: ModuleType) -> None:
    """Turn the markers in the opted-in *module*'s namespace into deprecations, if any.

    Called by a read through a module with the pending-markers class and by a
    store of a marker through an enabled module.  Markers under dunder names
    stay (``enable()`` refuses them).
    """
    from ._enable import is_opted_in

    if not is_opted_in(module):
        return
    markers = [
        (name, value)
        for name, value in list(_namespace(module).items())
        if type(value) is DeprecatedValue and not _is_dunder(name)
    ]
    if markers:
        _deprecate(
            module,
            {
                name: Deprecation(marker.message, marker.category, marker.warn)
                for name, marker in markers
            },
        )


def marker_stored(module: ModuleType, name: str, stored: bool) -> None:
    """The native engine's store slot, around a store of a marker through *module*.

    Before the store (*stored* False) a dunder *name* is refused on an
    enabled module, as ``enable()`` refuses it; after it, the marker becomes
    a deprecation.  The class engine's classes do the same in their
    ``__setattr__``.
    """
    if not stored:
        from ._enable import is_opted_in

        if is_opted_in(module):
            check_name(name, "a deprecated() value stored through a module")
        return
    convert_pending_markers(module)


def register_with_native_engine() -> None:
    """Have the native engine's store slot call :func:`marker_stored`, if its extension is loaded."""
    native = sys.modules.get(_NATIVE_MODULE)
    if native is not None:
        native.set_marker_hook(DeprecatedValue, marker_stored)


def _is_dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


# The extension may be loaded before or after this module: NativeEngine.opt_in
# registers too.
register_with_native_engine()

"""Deprecated module attributes: the markers, the per-module tables, and their checks.

``Old = pep726hook.deprecated(New, "use New")`` puts a :class:`DeprecatedValue`
marker into the module's namespace; ``pep726hook.enable(__name__)`` moves every
marker out of the namespace into the module's *deprecation table*, a plain
``dict`` ``{name: (value, message, category)}`` that the engine serves:
a read that misses the namespace (and the module's own ``__getattr__``, if
any) finds the name there, warns and returns the value; a store or deletion
warns and ends the deprecation.  The name has to leave the namespace: a name
found there is read by CPython's specialised fast path, which no engine sees.

An entry may carry the library's own warning callable (``warn=``), which the
engine then calls as ``warn(message, category, stacklevel)`` instead of
calling ``warnings.warn`` itself.

One table per module, kept here and handed by reference to the engine
(:meth:`Engine.set_deprecations`): whichever engine serves an access edits that
same dict; the dicts themselves are registered in :mod:`._state`, where the
class engine's stores find them.  Modules are held weakly.  Imports nothing
but built-in modules and ``_state``; ``enable()`` of a library without
deprecations never loads this module.
"""

import _warnings
import _weakref
import sys

from . import _state
from ._state import deprecation_table_of, deprecation_tables

# Named here too: the tables' own module.
deprecations_of = deprecation_table_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType
    from typing import Any, Callable, Dict, Optional, Tuple, Type, TypeVar

    _T = TypeVar("_T")
    # warn(message, category, stacklevel): the library's own warning function.
    WarnFunction = Callable[[str, Type[Warning], int], object]
    # (value, message, category, warn or None)
    Entry = Tuple[object, str, Type[Warning], Optional[WarnFunction]]
    Table = Dict[str, Entry]
    # (name, entry, the object to take out of the namespace once the table serves it)
    Found = Tuple[str, Entry, object]
else:
    ModuleType = type(sys)

_ENABLE_MODULE = __name__.rpartition(".")[0] + "._enable"

# id(module) -> (weak reference to the module, its table).  By id, as the
# opted-in modules are: a module class of the library's own may define
# __eq__ or __hash__, which a WeakKeyDictionary would run.
_tables = deprecation_tables


class DeprecatedValue:
    """A value that warns when it is read, set or deleted as a module attribute.

    Made by :func:`pep726hook.deprecated`; :func:`pep726hook.enable` moves it out
    of the module's namespace into the module's deprecation table.  One still
    found in a namespace (``enable()`` not called after the assignment) is
    returned as it is by a read: its ``repr`` says so.
    """

    __slots__ = ("category", "message", "value", "warn")

    def __init__(
        self,
        value: object,
        message: str,
        category: "type[Warning]",
        warn: "WarnFunction | None" = None,
    ) -> None:
        self.value = value
        self.message = message
        self.category = category
        self.warn = warn

    def entry(self) -> "Entry":
        """Return the deprecation table entry this marker becomes."""
        return (self.value, self.message, self.category, self.warn)

    def __repr__(self) -> str:
        return (
            f"<pep726hook.deprecated({self.value!r}) not in effect: call "
            "pep726hook.enable(__name__) after the deprecated() assignments>"
        )


def _check_message_and_category(message: object, category: object, caller: str) -> None:
    if not isinstance(message, str):
        raise TypeError(f"{caller}: message must be a str, not {type(message).__name__}")
    if not message:
        raise ValueError(f"{caller}: message must not be empty; say what to use instead")
    if not (isinstance(category, type) and issubclass(category, Warning)):
        raise TypeError(f"{caller}: category must be a Warning subclass, not {category!r}")


def _checked_warn(warn: object, caller: str) -> "WarnFunction | None":
    """Return *warn* as the table keeps it: None for the default ``warnings.warn``.

    ``warnings.warn`` itself is the default: passed as *warn* it would be
    called without a Python frame of its own, one frame short of what the
    stacklevel given to a *warn* function counts.
    """
    if warn is None or warn is _warnings.warn:
        return None
    if not callable(warn):
        raise TypeError(
            f"{caller}: warn must be a callable taking (message, category, stacklevel), "
            f"not {type(warn).__name__}"
        )
    checked: WarnFunction = warn
    return checked


def deprecated(
    value: "_T",
    message: str,
    *,
    category: "type[Warning]" = DeprecationWarning,
    warn: "WarnFunction | None" = None,
) -> "_T":
    """Mark *value*, assigned to a module attribute, as deprecated under that name.

    In a module body, before :func:`pep726hook.enable`::

        OldName = pep726hook.deprecated(NewName, "OldName is deprecated; use NewName")
        pep726hook.enable(__name__)     # after the deprecated() assignments

    ``enable()`` moves the name out of the module's namespace into its
    deprecation table.  From then on, reading ``mod.OldName`` (also with
    ``getattr()``, ``hasattr()`` and ``from mod import OldName``) issues
    ``warnings.warn(message, category)`` attributed to the line that read it
    and returns *value*; setting or deleting it warns the same way and ends
    the deprecation (the name is then an ordinary attribute, or gone).  Every
    other name of the module reads as fast as before.  ``dir()``, ``vars()``
    and ``from mod import *`` no longer list the name (unless ``__all__``
    does): see the documentation page "Deprecating module attributes".

    *warn*, when given, is the library's own warning function, called as
    ``warn(message, category, stacklevel)`` instead of ``warnings.warn``:
    ``warnings.warn(message, category, stacklevel)`` called directly in its
    body names the user's line (one more per frame of the library's own in
    between).  Whatever it raises propagates from the access, which then
    changes nothing.

    Returns a :class:`DeprecatedValue` marker.  It is typed as *value*'s own
    type, which is what the attribute reads as once ``enable()`` has run.
    Raises TypeError when *message* is not a str, *category* not a
    ``Warning`` subclass or *warn* not callable, and ValueError for an empty
    *message* or a *value* that is already such a marker.
    """
    _check_message_and_category(message, category, "deprecated()")
    checked_warn = _checked_warn(warn, "deprecated()")
    if type(value) is DeprecatedValue:
        raise ValueError("deprecated(): the value is already a deprecated() marker")
    marker: Any = DeprecatedValue(value, message, category, checked_warn)
    return marker  # type: ignore[no-any-return]


def deprecate_attribute(
    module: "str | ModuleType",
    name: str,
    message: str,
    *,
    category: "type[Warning]" = DeprecationWarning,
    warn: "WarnFunction | None" = None,
) -> None:
    """Deprecate the existing attribute *name* of *module*; opt *module* in as ``enable()`` does.

    For a module deprecating a name it has already defined, or for a package
    deprecating one of its modules' names from outside::

        pep726hook.deprecate_attribute(__name__, "OldName",
                                       "OldName is deprecated; use NewName")

    The name then behaves as one assigned with :func:`pep726hook.deprecated`
    (the value is the attribute's current value; *warn* as there).  For a
    package, a *name* it does not hold yet may be a submodule: it is imported
    first.  Deprecating a name that is already deprecated replaces its
    message, category and *warn*; a value found in the namespace under a name
    the table holds (the module body assigned it again, as ``reload()`` does)
    becomes the deprecated value.  *module* is a module object or a name in
    ``sys.modules``.

    Raises TypeError for a bad argument type (also a *warn* that is not
    callable), ValueError for a name in ``sys.modules`` that is missing, an
    empty message or a dunder *name* (the interpreter reads those itself),
    AttributeError when *module* has no attribute *name* in its namespace,
    no deprecated one and no submodule of that name.  On any error nothing
    has changed.
    """
    from ._enable import deprecate_names, module_named

    caller = "deprecate_attribute()"
    target = module_named(module, caller)
    if not isinstance(name, str):
        raise TypeError(f"{caller}: name must be a str, not {type(name).__name__}")
    check_name(name, caller)
    _check_message_and_category(message, category, caller)
    checked_warn = _checked_warn(warn, caller)
    namespace = _namespace(target)
    if name not in namespace and name not in (deprecations_of(target) or ()):
        _import_submodule(namespace, name, caller)

    def found() -> "list[Found]":
        # Under the install lock: the value is read where it is now, so a
        # store by another thread meanwhile is neither lost nor doubled.
        current = namespace.get(name, _NOTHING)
        if current is not _NOTHING:
            value = current.value if type(current) is DeprecatedValue else current
            return [(name, (value, message, category, checked_warn), current)]
        table = deprecations_of(target)
        entry = None if table is None else table.get(name)
        if entry is None:
            raise AttributeError(
                f"{caller}: module {namespace.get('__name__')!r} has no attribute {name!r} "
                "to deprecate"
            )
        return [(name, (entry[0], message, category, checked_warn), _NOTHING)]

    deprecate_names(target, found)


def _import_submodule(namespace: "dict[str, Any]", name: str, caller: str) -> None:
    """Import the submodule *name* of the package whose namespace this is, if it has one.

    The import system stores it in the package's namespace.  A module that is
    not a package, or no such submodule, is an AttributeError.
    """
    package = namespace.get("__name__")
    if "__path__" not in namespace or not isinstance(package, str):
        raise AttributeError(
            f"{caller}: module {package!r} has no attribute {name!r} in its namespace to deprecate"
        )
    import importlib

    qualified = f"{package}.{name}"
    try:
        importlib.import_module(qualified)
    except ModuleNotFoundError as error:
        if error.name != qualified:
            raise
        raise AttributeError(
            f"{caller}: package {package!r} has neither an attribute nor a submodule "
            f"{name!r} to deprecate"
        ) from None


# What a Found names for removal from the namespace when nothing is there.
_NOTHING: "Any" = object()


def check_name(name: str, caller: str) -> None:
    """Refuse a dunder *name*: the interpreter and the import system read those themselves."""
    if len(name) > 4 and name.startswith("__") and name.endswith("__"):
        raise ValueError(
            f"{caller}: {name!r} cannot be deprecated: the interpreter and the import "
            "system read dunder names themselves"
        )


def _namespace(module: ModuleType) -> "dict[str, Any]":
    # A module made with ModuleType.__new__ alone has no namespace before
    # Python 3.11 (its __dict__ is None): it holds no names, deprecated or not.
    namespace: dict[str, Any] | None = vars(ModuleType)["__dict__"].__get__(module)
    return {} if namespace is None else namespace


def markers_in(module: ModuleType) -> "list[Found]":
    """Return the ``deprecated()`` markers in *module*'s namespace, checking their names.

    Raises ValueError, before anything changes, for a marker under a dunder name.
    """
    found: list[Found] = [
        (name, value.entry(), value)
        for name, value in list(_namespace(module).items())
        if type(value) is DeprecatedValue
    ]
    for name, _entry, _marker in found:
        check_name(name, "pep726hook.enable()")
    return found


def fill_table(module: ModuleType, found: "list[Found]") -> "Table":
    """Add the entries *found* to *module*'s table, made if needed; return it.

    Nothing leaves the namespace yet.  Under the install lock (``enable()``),
    so two threads never make two tables.
    """
    table = deprecations_of(module)
    if table is None:
        table = {}
        key = id(module)
        # The callback may run while the interpreter shuts down, after this
        # module's globals were set to None: it uses only what it holds.
        tables = _tables

        def forget(ref: "Any") -> None:
            entry = tables.get(key)
            if entry is not None and entry[0] is ref:
                del tables[key]

        _tables[key] = (_weakref.ref(module, forget), table)
    for name, entry, _moved in found:
        table[name] = entry
    return table


def remove_moved(module: ModuleType, found: "list[Found]") -> None:
    """Take what *found* moved into the table out of *module*'s namespace, once it serves it."""
    namespace = _namespace(module)
    for name, _entry, moved in found:
        # Only that object itself: a store may have replaced it meanwhile.
        if moved is not _NOTHING and namespace.get(name, _NOTHING) is moved:
            # Another thread may store meanwhile (free-threaded builds): what
            # it stored goes back rather than being lost.
            with _state.namespace_lock:  # lock rule 6: a reader never sees it gone
                taken = namespace.pop(name, _NOTHING)
                if taken is not moved and taken is not _NOTHING:
                    namespace.setdefault(name, taken)


def stored_through(module: ModuleType, name: str) -> None:
    """A marker, or ``__spec__``, was just stored through *module* as *name*.

    Called by the engines after the store (the module's ``__setattr__`` hook
    or the ordinary store made it).  An opted-in module deprecates a stored
    marker now; a module that never called ``enable()`` keeps it, as it keeps
    one its body assigns.  ``__spec__`` is stored by ``importlib.reload()``
    before it runs the body again: see :func:`_deprecate_again_after_reload`.
    """
    # Nothing is imported here: this runs inside stores the import system
    # makes (__spec__), also while pep726hook's own modules are imported.
    opt_in = sys.modules.get(_ENABLE_MODULE)
    if not _state.registered_opt_in(module) or opt_in is None:
        return
    enable, is_opted_in = opt_in.enable, opt_in.is_opted_in
    if not is_opted_in(module):
        return
    if name == "__spec__":
        _deprecate_again_after_reload(module)
    else:
        enable(module)


def _deprecate_again_after_reload(module: ModuleType) -> None:
    """Have the body's rerun under way (``importlib.reload()``) keep every deprecation.

    The body stores straight into the namespace, unseen by any engine: an
    assignment ``Old = 1`` of a name deprecated from outside would put the
    name back, plain.  So the loader's ``exec_module`` gets a one-call
    wrapper, an attribute of the loader object (``module.__loader__`` stays
    the very loader), that afterwards moves each such name back into the
    table with its message, and every marker the body assigned.
    """
    namespace = _namespace(module)
    spec = namespace.get("__spec__")
    importlib = sys.modules.get("importlib")
    reloading = getattr(importlib, "_RELOADING", None)
    if not isinstance(reloading, dict) or getattr(spec, "name", None) not in reloading:
        return  # not a reload: a __spec__ of the program's own
    loader: Any = getattr(spec, "loader", None)
    own = getattr(loader, "__dict__", None)
    if (
        isinstance(loader, type)
        or not isinstance(own, dict)
        or "exec_module" in own
        or not callable(getattr(loader, "exec_module", None))
    ):
        return  # a class as loader (shared), no exec_module, or armed already
    original = loader.exec_module

    def exec_module(target: ModuleType) -> None:
        own.pop("exec_module", None)
        try:
            original(target)
        finally:
            if target is module:
                _deprecate_reassigned(module)

    own["exec_module"] = exec_module


def _deprecate_reassigned(module: ModuleType) -> None:
    """Deprecate again each table name the body assigned anew, and its markers."""
    # Loaded: the module opted in.  Nothing is imported inside exec_module.
    deprecate_names = sys.modules[_ENABLE_MODULE].deprecate_names
    namespace = _namespace(module)

    def found() -> "list[Found]":
        table = deprecations_of(module) or {}
        again: list[Any] = []
        for name, entry in list(table.items()):
            value = namespace.get(name, _NOTHING)
            if value is not _NOTHING and type(value) is not DeprecatedValue:
                again.append((name, (value, *entry[1:]), value))
        return again

    deprecate_names(module, found)


# The engines' stores recognise markers from now on.  The class engine looks
# them up in _state; the native engine's store slot is told here, or by the
# native engine when it loads after this module.
_state.marker_type = DeprecatedValue
_state.deprecation_module = sys.modules[__name__]
_native_module = sys.modules.get(__name__.rpartition(".")[0] + "._native")
if _native_module is not None:
    _native_module.watch_markers(DeprecatedValue, stored_through)

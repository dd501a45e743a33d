"""Deprecated module attributes: the markers, the per-module tables, and their checks.

``Old = pep726hook.deprecated(New, "use New")`` puts a :class:`DeprecatedValue`
marker into the module's namespace; ``pep726hook.enable(__name__)`` moves every
marker out of the namespace into the module's *deprecation table*, a plain
``dict`` ``{name: (value, message, category)}`` that the engine serves:
a read that misses the namespace (and the module's own ``__getattr__``, if
any) finds the name there, warns and returns the value; a store or deletion
warns and ends the deprecation.  The name has to leave the namespace: a name
found there is read by CPython's specialised fast path, which no engine sees.

One table per module, kept here and handed by reference to the engine
(:meth:`Engine.set_deprecations`): whichever engine serves an access edits that
same dict; the dicts themselves are registered in :mod:`._state`, where the
class engine's stores find them.  Modules are held weakly.  Imports nothing
but built-in modules and ``_state``; ``enable()`` of a library without
deprecations never loads this module.
"""

import _weakref
import sys

from ._state import deprecation_table_of, deprecation_tables

# Named here too: the tables' own module.
deprecations_of = deprecation_table_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType
    from typing import Any, Dict, Tuple, Type, TypeVar

    _T = TypeVar("_T")
    # (value, message, category)
    Entry = Tuple[object, str, Type[Warning]]
    Table = Dict[str, Entry]
else:
    ModuleType = type(sys)

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

    __slots__ = ("category", "message", "value")

    def __init__(self, value: object, message: str, category: "type[Warning]") -> None:
        self.value = value
        self.message = message
        self.category = category

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


def deprecated(
    value: "_T", message: str, *, category: "type[Warning]" = DeprecationWarning
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

    Returns a :class:`DeprecatedValue` marker.  It is typed as *value*'s own
    type, which is what the attribute reads as once ``enable()`` has run.
    Raises TypeError when *message* is not a str or *category* not a
    ``Warning`` subclass, and ValueError for an empty *message* or a *value*
    that is already such a marker.
    """
    _check_message_and_category(message, category, "deprecated()")
    if type(value) is DeprecatedValue:
        raise ValueError("deprecated(): the value is already a deprecated() marker")
    marker: Any = DeprecatedValue(value, message, category)
    return marker  # type: ignore[no-any-return]


def deprecate_attribute(
    module: "str | ModuleType",
    name: str,
    message: str,
    *,
    category: "type[Warning]" = DeprecationWarning,
) -> None:
    """Deprecate the existing attribute *name* of *module*; opt *module* in as ``enable()`` does.

    For a module deprecating a name it has already defined, or for a package
    deprecating one of its modules' names from outside::

        pep726hook.deprecate_attribute(__name__, "OldName",
                                       "OldName is deprecated; use NewName")

    The name then behaves as one assigned with :func:`pep726hook.deprecated`
    (the value is the attribute's current value).  Deprecating a name that is
    already deprecated replaces its message and category.  *module* is a
    module object or a name in ``sys.modules``.

    Raises TypeError for a bad argument type, ValueError for a name in
    ``sys.modules`` that is missing, an empty message or a dunder *name* (the
    interpreter reads those itself), AttributeError when *module* has no
    attribute *name* in its namespace.  On any error nothing has changed.
    """
    from ._enable import enable, module_named

    caller = "deprecate_attribute()"
    target = module_named(module, caller)
    if not isinstance(name, str):
        raise TypeError(f"{caller}: name must be a str, not {type(name).__name__}")
    check_name(name, caller)
    _check_message_and_category(message, category, caller)
    namespace = _namespace(target)
    table = deprecations_of(target)
    entry = None if table is None else table.get(name)
    if table is not None and entry is not None:
        table[name] = (entry[0], message, category)
        return
    if name not in namespace:
        raise AttributeError(
            f"{caller}: module {namespace.get('__name__')!r} has no attribute {name!r} "
            "in its namespace to deprecate"
        )
    current = namespace[name]
    value = current.value if type(current) is DeprecatedValue else current
    marker = DeprecatedValue(value, message, category)
    namespace[name] = marker
    try:
        enable(target)
    except BaseException:
        # Nothing half-done: the attribute is back as it was.
        if namespace.get(name) is marker:
            namespace[name] = current
        raise


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


def fill_table(module: ModuleType, markers: "list[tuple[str, DeprecatedValue]]") -> "Table":
    """Add *markers* to *module*'s table, made if needed; return it.  The markers stay.

    Under the install lock (``enable()``), so two threads never make two tables.
    """
    table = deprecations_of(module)
    if table is None:
        table = {}
        key = id(module)

        def forget(ref: "Any") -> None:
            entry = _tables.get(key)
            if entry is not None and entry[0] is ref:
                del _tables[key]

        _tables[key] = (_weakref.ref(module, forget), table)
    for name, marker in markers:
        table[name] = (marker.value, marker.message, marker.category)
    return table


def remove_markers(module: ModuleType, markers: "list[tuple[str, DeprecatedValue]]") -> None:
    """Take *markers* out of *module*'s namespace, once its table serves them."""
    namespace = _namespace(module)
    for name, marker in markers:
        # Only the marker itself: a store may have replaced it meanwhile.
        if namespace.get(name) is marker:
            del namespace[name]

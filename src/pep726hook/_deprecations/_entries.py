"""What is deprecated: the ``deprecated()`` markers, the entries and each module's table.

One table per module, ``{name: Deprecation}``, held weakly by id (as the
opted-in modules are: a module class of the library's own may define
``__eq__`` or ``__hash__``, which a ``WeakKeyDictionary`` would run).  The
rest of the package reads and writes the tables through this module alone.
"""

import _weakref
import sys

from .._composition import namespace_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType
    from typing import Any, Callable, Container, Dict

    Table = Dict[str, "Deprecation"]
else:
    ModuleType = type(sys)


class DeprecatedValue:
    """The marker :func:`pep726hook.deprecated` returns: a value to deprecate under its name.

    Assigned to a module attribute, it becomes a deprecation of that name
    once the module is enabled (``enable()``, the end of its import, a store
    through the enabled module, or the first read through it): the namespace
    then holds the value again.  The module's own code reading the name
    before any of these sees the marker; its ``repr`` says so.
    """

    __slots__ = ("category", "message", "value", "warn")

    def __init__(
        self,
        value: object,
        message: str,
        category: "type[Warning]",
        warn: "Callable[[str, type[Warning], int], object] | None" = None,
    ) -> None:
        self.value = value
        self.message = message
        self.category = category
        self.warn = warn
        _unconverted[id(self)] = None

    def __repr__(self) -> str:
        return (
            f"<pep726hook.deprecated({self.value!r}) not in effect yet: call "
            "pep726hook.enable(__name__) in the module>"
        )

    # Code that meets the marker itself uses it as the value it stands for:
    # its module never called enable() (or had not yet).  A call or an
    # attribute read would otherwise fail with Python's bare "'DeprecatedValue'
    # object is not callable" or "has no attribute", which names neither
    # pep726hook nor the fix.

    def __call__(self, *args: object, **kwargs: object) -> "Any":
        raise TypeError(_misuse(self, "called"))

    def __getattr__(self, name: str) -> "Any":
        # An AttributeError still, so that hasattr() and getattr(..., default)
        # answer as they would for any object without the attribute.
        raise AttributeError(_misuse(self, f"asked for its attribute {name!r}"))


def _misuse(marker: DeprecatedValue, what: str) -> str:
    return (
        f"pep726hook.deprecated({marker.value!r}, ...) returned a marker, not the value, and "
        f"the marker was {what}: the module that assigned it has not called "
        "pep726hook.enable(__name__), which turns its deprecated() markers into "
        "deprecations; call pep726hook.enable(__name__) in that module"
    )


# Documented as pep726hook.DeprecatedValue.
DeprecatedValue.__module__ = __name__.split(".")[0]

# The ids of the markers made and not yet converted into a deprecation
# (converted(), at the first conversion of each).  While it is empty no
# namespace holds a marker, so markers_in() scans none: a library declaring
# a thousand names with deprecate_attribute() pays for no scan of its
# namespace per call.  A dict's single insertions and removals are atomic,
# also on free-threaded builds.  A marker that dies unconverted (never
# assigned) leaves its id, which only costs later calls their scan.
_unconverted: "dict[int, None]" = {}


def may_hold_markers() -> bool:
    """Tell whether some namespace may hold a marker waiting for its conversion."""
    return bool(_unconverted)


def converted(marker: DeprecatedValue) -> object:
    """Note that *marker* became a deprecation (its value is back in the namespace); return the value."""
    _unconverted.pop(id(marker), None)
    return marker.value


# What a declaration of a name does (Deprecation.kind).
DEPRECATED = 0  # deprecate_attribute(), deprecated(): warns, returns the value
LAZY = 1  # lazy_attribute(): loads the value into the namespace, no warning
REMOVED = 2  # removed_attribute(): (warns, then) raises AttributeError(message), or misses


class Deprecation:
    """One declared name of one module: how to warn, and how to load a lazy value.

    *kind* is :data:`DEPRECATED`, :data:`LAZY` or :data:`REMOVED`.  *load*
    is None when the value is in the module's namespace (where the module's
    own code reads it), else a callable that computes it on the first read
    through the module (a factory, or the import of the submodule
    *submodule*, the full name the import system binds on the package); a
    lazy name's *load* also stores the value in the namespace and ends the
    declaration.  A removed name's *message* is its ``AttributeError``'s
    (None: a read misses as on a plain module), *warning* the text of the
    warning each read issues first (or None).
    """

    __slots__ = ("category", "kind", "load", "message", "submodule", "warn", "warning")

    def __init__(
        self,
        message: "str | None",
        category: "type[Warning]",
        warn: "Callable[[str, type[Warning], int], object] | None",
        load: "Callable[[], object] | None" = None,
        submodule: "str | None" = None,
        *,
        kind: int = DEPRECATED,
        warning: "str | None" = None,
    ) -> None:
        self.message = message
        self.category = category
        self.warn = warn
        self.load = load
        self.submodule = submodule
        self.kind = kind
        self.warning = warning


# id(module) -> (weak reference to the module, its table).
_tables: "dict[int, tuple[Any, Table]]" = {}


def ids_with_tables() -> "Container[int]":
    """Return the live collection of the ids of the modules that have a table."""
    return _tables


def deprecations_of(module: object) -> "Table | None":
    """Return *module*'s deprecation table (the shared dict), or None if it has none."""
    found = _tables.get(id(module))
    if found is None or found[0]() is not module:
        return None  # none, or the table of a dead module whose id *module* reuses
    return found[1]


def has_deprecations(module: object) -> bool:
    """Tell whether *module* has a deprecation table (its deprecations may all have ended)."""
    return deprecations_of(module) is not None


def deprecation_entry(module: ModuleType, name: str) -> "Any":
    """Return *module*'s deprecation table and its entry for *name*, or None."""
    found = _tables.get(id(module))
    if found is None or found[0]() is not module:
        return None
    table = found[1]
    entry = table.get(name)
    return None if entry is None else (table, entry)


def table_for(module: ModuleType) -> "Table":
    """Return *module*'s table, made if it has none.

    Under the install lock, so two threads never make two tables.
    """
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


def end_deprecation(deprecation: "Any", name: str) -> None:
    """Remove the entry of (table, entry) *deprecation*, if it is still that one."""
    # Only the entry that warned: another thread may have deprecated the
    # name anew meanwhile.
    table, entry = deprecation
    if table.get(name) is entry:
        table.pop(name, None)


def load_lazy(entry: Deprecation) -> "Any":
    """Compute *entry*'s lazy value (a factory's, or the import of its submodule).

    The caller warns, then stores it in the namespace unless a value got
    there meanwhile (another thread, or the import system binding the
    submodule), which wins.  A load or a warning that raises stores nothing:
    the next read tries again.
    """
    load = entry.load
    assert load is not None
    return load()


def check_name(name: str, caller: str) -> None:
    """Refuse a dunder *name*: the interpreter and the import system read those themselves."""
    if is_dunder(name):
        raise ValueError(
            f"{caller}: {name!r} cannot be deprecated: the interpreter and the import "
            "system read dunder names themselves"
        )


def is_dunder(name: str) -> bool:
    """Tell whether *name* is a dunder name (``__x__``)."""
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def namespace(module: ModuleType) -> "dict[str, Any]":
    """Return *module*'s namespace, read without running code of its class."""
    # A module made with ModuleType.__new__ alone has no namespace before
    # Python 3.11 (its __dict__ is None): it holds no names, deprecated or not.
    found: dict[str, Any] | None = namespace_of(module)
    return {} if found is None else found


def markers_in(module: ModuleType) -> "list[tuple[str, DeprecatedValue]]":
    """Return the ``deprecated()`` markers in *module*'s namespace, checking their names.

    Raises ValueError, before anything changes, for a marker under a dunder name.
    Scans nothing while no marker made in the process is waiting for its
    conversion (a marker under a dunder name, refused, keeps waiting).
    """
    if not _unconverted:
        return []
    found = [
        (name, value)
        for name, value in list(namespace(module).items())
        if type(value) is DeprecatedValue
    ]
    for name, _marker in found:
        check_name(name, "pep726hook.enable()")
    return found

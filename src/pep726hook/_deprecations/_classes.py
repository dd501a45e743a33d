"""The deprecating classes: what serves reads of deprecated names through a module's class.

A module with deprecated names gets :data:`DeprecatingModule` composed with
its own class (through the class engine, :func:`give_deprecating_class`),
under the class engine for good and under the native engine while its
import runs (:mod:`._moved`).  ``DeprecatingModule`` holds one
:class:`DeprecatedName` data descriptor per deprecated name: generic
attribute lookup runs a type's data descriptor before it looks in the
instance's namespace, so a read through the module (``mod.Old``,
``getattr``, ``hasattr``, ``from mod import Old``) warns there and returns
the namespace's value, while the module's own code reads the name as any
global.  The class's Python-level ``__getattr__`` keeps the interpreter from
specialising reads of the module (a specialised read would skip the
descriptor on CPython 3.14+), which makes reads of its other names about as
slow as on any ``ModuleType`` subclass; every other module is untouched.  A
lazy deprecation (a submodule not imported yet, or a ``factory``) has no
value in the namespace until the first read through the module, which that
``__getattr__`` serves.

:data:`PendingMarkersModule` is ``DeprecatingModule`` for a module whose
body made ``deprecated()`` markers after ``enable()``: its first read turns
them into deprecations (:mod:`._deprecating` registers that call,
:func:`serve_pending_reads`).

Pickle finds both classes here, and a class composed with either under a
name that this module's ``__getattr__`` resolves.
"""

import sys

from .._class_engine import (
    add_opted_in_mixin,
    give_opted_in_class_with,
    opted_in_mixin,
    original_of_opted_in,
)
from .._composition import (
    class_for_pickled_name,
    module_miss,
    namespace_of,
    register_mixin,
    skipped_by_warnings,
)
from ._entries import (
    DEPRECATED,
    LAZY,
    REMOVED,
    DeprecatedValue,
    deprecation_entry,
    deprecations_of,
    has_deprecations,
    load_lazy,
)
from ._warning import is_fromlist_probe, removed_error, warn_for, warn_removed

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType
    from typing import Any, Callable
else:
    ModuleType = type(sys)

_MISSING: "Any" = object()


class DeprecatedName:
    """The data descriptor that a deprecating class holds for each deprecated name.

    Generic attribute lookup runs a type's data descriptor before looking in
    the instance's namespace, on every Python version and under every
    engine, so a read through the module (``m.name``, ``getattr``,
    ``hasattr``, ``from m import name``) comes here while the module's own
    code, which reads its globals directly, never does.  On a module that
    does not deprecate the name (the class is shared) it reads and writes
    the namespace exactly as the generic lookup would.
    """

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, module: "ModuleType | None", owner: "type | None" = None) -> "Any":
        if module is None:
            return self
        name = self.name
        value = namespace_of(module).get(name, _MISSING)
        if value is _MISSING:
            # Not in the namespace: the class's __getattr__ (a lazy value,
            # the module's PEP 562 __getattr__, then ModuleType's error).
            raise AttributeError(name)
        deprecation = deprecation_entry(module, name)
        if deprecation is None or deprecation[1].kind != DEPRECATED:
            return value
        if type(value) is DeprecatedValue:
            value = value.value  # a marker not converted yet: never returned
        # Called straight from the interpreter's attribute lookup: the
        # caller's frame is the reader's.
        if not is_fromlist_probe(sys._getframe(1)):
            warn_for(deprecation[1], 3)
        return value

    def __set__(self, module: ModuleType, value: object) -> None:
        # The plain store the generic path would make; the deprecating
        # class's __setattr__ has warned and ends the deprecation.
        namespace_of(module)[self.name] = value

    def __delete__(self, module: ModuleType) -> None:
        namespace = namespace_of(module)
        try:
            del namespace[self.name]
        except KeyError:
            raise AttributeError(
                f"module {namespace.get('__name__')!r} has no attribute {self.name!r}"
            ) from None


def deprecating_mixin(opted_in: type, home: str, qualname: str, doc: str) -> type:
    """Make the subclass of *opted_in* that serves reads of deprecated names.

    Given to modules with deprecated names, under either engine.  It holds
    one :class:`DeprecatedName` data descriptor per name deprecated in any
    such module (:func:`add_deprecated_name`): reads through the module warn
    there, while the value stays in the namespace for the module's own code.
    Its Python-level ``__getattr__`` keeps the interpreter from specialising
    reads of the module's other names (a specialised read would bypass the
    descriptor on CPython 3.14+), and serves names not in the namespace: a
    lazy deprecated value first, then the module's own ``__getattr__``
    (PEP 562), then ``ModuleType``'s own error.  Reads take
    ``object.__getattribute__``, the generic lookup CPython calls without a
    Python frame.  Pickled as *qualname* of *home*.
    """

    def __getattr__(self: ModuleType, name: str) -> "Any":
        deprecation = deprecation_entry(self, name)
        if deprecation is not None and deprecation[1].kind == REMOVED:
            if not is_fromlist_probe(sys._getframe(1)):
                warn_removed(deprecation[1], 2)
            if deprecation[1].message is not None:
                raise removed_error(deprecation[1], self)
            deprecation = None  # removed without a message: a plain miss
        if deprecation is not None and deprecation[1].kind == LAZY:
            # The load stores the value in the namespace and ends the declaration.
            return load_lazy(deprecation[1])
        if deprecation is not None and deprecation[1].load is not None:
            value = load_lazy(deprecation[1])
            if not is_fromlist_probe(sys._getframe(1)):
                # Warnings skip this frame: 2 is the reader's line.
                warn_for(deprecation[1], 2)
            return namespace_of(self).setdefault(name, value)
        own = namespace_of(self).get("__getattr__")
        if own is not None:
            return own(name)
        # ModuleType's exact error (the message, name and obj its own miss
        # path gives), with no getter run twice.
        return module_miss(self, name)

    def __dir__(self: ModuleType) -> "list[str]":
        # ModuleType's own dir(): the namespace's __dir__ (PEP 562) wins,
        # else the namespace's names, and here the declared names that
        # read as a value (lazy ones not loaded yet), but not removed ones.
        namespace = namespace_of(self)
        own = namespace.get("__dir__")
        if own is not None:
            return list(own())
        table = deprecations_of(self) or {}
        declared = [name for name, entry in table.items() if entry.kind != REMOVED]
        return sorted(set(namespace).union(declared))

    # The module's own __getattr__ warning with stacklevel=2 names its
    # caller's line, as under ModuleType, which calls it from C.
    skipped_by_warnings(__getattr__)
    namespace = {
        "__slots__": (),
        "__doc__": doc,
        "__module__": home,
        "__qualname__": qualname,
        "__getattribute__": object.__getattribute__,
        "__getattr__": __getattr__,
        "__dir__": __dir__,
    }
    mixin: type = type(ModuleType.__name__, (opted_in,), namespace)
    return mixin


def pending_markers_mixin(deprecating: type, home: str, qualname: str, doc: str) -> type:
    """Make the subclass of *deprecating* whose reads first convert ``deprecated()`` markers.

    Given by ``deprecated()`` to the opted-in module whose body called it:
    the marker is assigned after the call returns, so it is turned into a
    deprecation at the first read through the module (which gives the module
    the deprecating class, ending this class's extra cost).  The import
    system reads the module when its import ends, so that is a conversion
    point too.  Pickled as *qualname* of *home*.
    """

    def __getattribute__(self: ModuleType, name: str) -> "Any":
        _convert_pending_markers(self)
        if not isinstance(self, mixin):
            # The names moved out of the namespace (the native engine, once
            # the import has ended) and the module is plain again: this read
            # is served here, warnings skipping this frame.
            found = _read_moved(self, name)
            if found is not None:
                if not is_fromlist_probe(sys._getframe(1)):
                    try:
                        warn_for(found[0], 2)
                    except Warning as error:
                        # An error by the warnings filter (-W error) ends at
                        # the reader's line, as later reads' (the extension
                        # warns from C): a bare raise adds no frame, and
                        # raises the traceback the error holds (from 3.11;
                        # before, the one it had here: this frame's entry).
                        if error.__traceback__ is not None:
                            error.__traceback__.tb_next = None
                        error.__traceback__ = None
                        raise
                return found[1]
            removal = deprecation_entry(self, name)
            if removal is not None and removal[1].kind == REMOVED:
                # This class's __getattr__, which the interpreter calls next,
                # warns at the reader's line; the extension's descriptor,
                # asked from this frame, would warn here, and twice.
                raise AttributeError(name)
            # ModuleType's read slot as it is now (the native engine may
            # serve a PEP 562 __getattr__ it holds outside the namespace).
            return getattr(self, name)
        return object.__getattribute__(self, name)

    skipped_by_warnings(__getattribute__)
    namespace = {
        "__slots__": (),
        "__doc__": doc,
        "__module__": home,
        "__qualname__": qualname,
        "__getattribute__": __getattribute__,
    }
    mixin: type = type(ModuleType.__name__, (deprecating,), namespace)
    return mixin


def add_deprecated_name(mixin: type, name: str) -> None:
    """Give the deprecating class *mixin* (and so every class composed with it) *name*'s descriptor.

    Kept once added: on a module that does not deprecate *name* it behaves as
    the generic lookup.
    """
    if not isinstance(vars(mixin).get(name), DeprecatedName):
        setattr(mixin, name, DeprecatedName(name))


# What a read through a module of the pending-markers class calls first
# (serve_pending_reads); None until the package's top registers them.
_convert_pending_markers: "Any" = None
_read_moved: "Any" = None


def serve_pending_reads(
    convert_pending_markers: "Callable[[ModuleType], None]",
    read_moved: "Callable[[ModuleType, str], Any]",
) -> None:
    """Have each read through a module of the pending-markers class call these first.

    ``convert_pending_markers(module)`` turns the markers in its namespace
    into deprecations; ``read_moved(module, name)`` returns the entry and
    value of a name that moved out of the namespace meanwhile, or None.
    Called once, by :mod:`._deprecating` as it loads: they build on this
    module.
    """
    global _convert_pending_markers, _read_moved
    _convert_pending_markers = convert_pending_markers
    _read_moved = read_moved


DeprecatingModule = deprecating_mixin(
    opted_in_mixin(),
    __name__,
    "DeprecatingModule",
    "A module type for an opted-in module with deprecated attributes "
    "(pep726hook.deprecated(), pep726hook.deprecate_attribute()).",
)
PendingMarkersModule = pending_markers_mixin(
    DeprecatingModule,
    __name__,
    "PendingMarkersModule",
    "A module type for an opted-in module whose body made pep726hook.deprecated() "
    "markers: its first read turns them into deprecations.",
)
register_mixin(DeprecatingModule, "deprecating", __name__)
register_mixin(PendingMarkersModule, "pending_markers", __name__)
# A module with a deprecation table keeps the deprecating class when its
# own code stores a class to __class__; one with pending markers passes
# through its class.
add_opted_in_mixin(DeprecatingModule, kept_by=has_deprecations)
add_opted_in_mixin(PendingMarkersModule, passing=True)


def give_deprecating_class(module: ModuleType) -> "Callable[[], object] | None":
    """Give *module* the class that serves its deprecated names, under either engine.

    ``class X(X, DeprecatingModule)`` for a module of class ``X``.  Returns
    None once the module has it, or the composing to do without the install
    lock (lock rule 1) before calling again, whose result the caller keeps
    alive until then (the cache is weak).  Runs no user code itself.
    """
    return give_opted_in_class_with(module, DeprecatingModule)


def give_pending_markers_class(module: ModuleType) -> "Callable[[], object] | None":
    """Give *module* ``PendingMarkersModule`` composed with its class, as :func:`give_deprecating_class`."""
    return give_opted_in_class_with(module, PendingMarkersModule)


def lasting_type(module: ModuleType) -> type:
    """Return *module*'s class without pep726hook's opted-in and deprecating classes."""
    return original_of_opted_in(type(module))


def _resolve_pickled_name(name: str) -> type:
    if name.startswith("__"):
        # What the import system asks of every module (__path__ for
        # `from ._classes import X`): never a pickled name.
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return class_for_pickled_name(__name__, name)


if not TYPE_CHECKING:
    # Module __getattr__ (PEP 562), hidden from mypy, which would otherwise
    # accept any name imported from this module.
    __getattr__ = _resolve_pickled_name

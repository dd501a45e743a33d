"""Hook-aware module classes: the one ``__setattr__``/``__delattr__``, and composed classes.

The class engine gives a module PEP 726 behaviour by giving it a class whose
``__setattr__``/``__delattr__`` call the hooks in the module's namespace.
Every such class (the process-wide hook's and the opt-in's) is made by
:func:`hook_aware_mixin`, so both call a hook from exactly as deep, skip the
same frame for ``warnings``, and leave ``importlib``'s lazy loader alone.

A module whose class is a ``ModuleType`` subclass ``X`` gets
``class X(X, mixin)``, composed once per pair and kept in a weak cache
(:func:`composed_class`): ``X.__setattr__`` runs first and reaches the hook
when it calls ``super().__setattr__``, the order PEP 726's reference
implementation gives by putting the hook inside ``ModuleType``.

The deprecations package (:mod:`._deprecations`) owns deprecated names;
what the hook-aware ``__setattr__``/``__delattr__`` do for them is the
one interface it registers here when it loads (:func:`register_deprecations`).

Also the module-inspection helpers every engine needs: they tell modules by
their real type and read namespaces without running any code of the module's
class.
"""

import _thread
import _weakref
import sys

from . import _state
from ._state import is_module

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType
    from typing import Any, Callable, Container, TypeGuard
else:
    ModuleType = type(sys)

HOOK_NAMES = ("__setattr__", "__delattr__")
NO_HOOK: "Any" = object()


class _NeverAMarker:
    # The type of no value: no deprecated() marker exists before the
    # deprecations package registers its marker type.
    __slots__ = ()


# What the deprecations package registers (register_deprecations) for the
# hook-aware classes' stores and deletions: the ids of the modules with
# deprecated names, the type of its markers, and the functions called for
# them.  Until it loads, no module has a deprecated name and no value is a
# marker, and these cost a store what they cost before.
_deprecating_ids: "Container[int]" = ()
_marker_type: type = _NeverAMarker
_deprecation_calls: "Any" = None


def register_deprecations(
    deprecating_ids: "Container[int]", marker_type: type, calls: "Any"
) -> None:
    """Have the hook-aware classes call *calls* for deprecated names and markers.

    Called once, by the deprecations package as it loads.
    *deprecating_ids* holds the id of each module with deprecated names,
    *marker_type* is the type of a ``deprecated()`` marker, and *calls*
    offers ``check_name(name, caller)`` (a marker stored under *name* is
    refused before anything changes), ``warn_deprecated(module, name,
    value)`` (called from the hook-aware method itself, *value* ``NO_HOOK``
    for a deletion, it warns for a deprecated *name* and returns what to
    pass to ``end_deprecation(found, name)`` once the store or deletion
    succeeded, or None), ``has_no_value(module, found, name)`` (a lazy value
    never loaded: the deletion just ends the deprecation) and
    ``convert_pending_markers(module)`` (after a marker was stored).
    """
    global _deprecating_ids, _marker_type, _deprecation_calls
    # The calls first: a store in another thread that finds a marker or a
    # deprecating module finds them too.
    _deprecation_calls = calls
    _marker_type = marker_type
    _deprecating_ids = deprecating_ids


# ModuleType's ``__dict__`` descriptor reads the namespace without running any
# ``__getattribute__`` a subclass (``importlib.util._LazyModule``) defines.
namespace_of: "Callable[[ModuleType], dict[str, Any]]" = vars(ModuleType)["__dict__"].__get__
set_class_bypassing_hooks: "Callable[[object, str, object], None]" = object.__setattr__
_module_setattr: "Any" = ModuleType.__setattr__
_module_delattr: "Any" = ModuleType.__delattr__
_module_getattribute: "Any" = ModuleType.__getattribute__
# Whether an AttributeError leaving a class's __getattr__ with its name and
# object None gets both filled in (and a "Did you mean" guess appended when
# printed), where CPython leaves an explicit None alone: PyPy 3.10+.
FILLS_IN_A_NONE_OBJECT = sys.implementation.name == "pypy" and sys.version_info >= (3, 10)


def module_miss(module: ModuleType, name: str) -> "Any":
    """Raise the error ModuleType gives for a read of *name* that missed *module*.

    Called after ``object.__getattribute__`` missed.  ModuleType's own miss
    path formats the error (its message depends on ``__name__`` and
    ``__spec__``), so it is asked again, unless a class of the module's own
    or ModuleType itself (where the native engine keeps a descriptor per
    declared name) defines *name*: then a getter there raised
    AttributeError, and asking again would run it a second time (and warn
    twice).  A bare module holding the same ``__name__``, ``__spec__`` and
    ``__file__`` is asked instead, and the error names *module*.
    """
    if not any(name in vars(cls) for cls in type(module).__mro__ if cls is not object):
        return _module_getattribute(module, name)
    namespace = namespace_of(module)
    stand_in = ModuleType("")
    stand_namespace = namespace_of(stand_in)
    stand_namespace.clear()
    for key in ("__name__", "__spec__", "__file__"):
        if key in namespace:
            stand_namespace[key] = namespace[key]
    try:
        return _module_getattribute(stand_in, name)
    except AttributeError as error:
        # PyPy leaves the object None, and would fill in the name and object
        # once the error leaves the class's __getattr__, where a plain
        # module's miss has neither.
        found = getattr(error, "obj", None)
        if found is stand_in or (found is None and FILLS_IN_A_NONE_OBJECT and error.name is None):
            error.obj = module  # type: ignore[attr-defined,unused-ignore]
        raise


def hook_of(module: ModuleType, name: str) -> "Any":
    """Return the hook *name* in *module*'s namespace, or :data:`NO_HOOK`."""
    try:
        return namespace_of(module).get(name, NO_HOOK)
    except AttributeError:
        # Python 3.8: ModuleType.__new__(ModuleType) has no namespace yet (None);
        # the generic store creates it, as CPython does.
        return NO_HOOK


def defines_hooks(module: object) -> "TypeGuard[ModuleType]":
    """Tell whether *module*'s namespace defines ``__setattr__`` or ``__delattr__``."""
    # One call, no generator: install() asks it of every module in
    # sys.modules, twice, during PEP726HOOK=1 start-up.
    if not is_module(module):
        return False
    try:
        namespace = namespace_of(module)
    except TypeError:
        # PyPy's _cffi_backend.Lib claims to be a module but has no module namespace.
        return False
    return "__setattr__" in namespace or "__delattr__" in namespace


def is_lazy_module_class(cls: type) -> bool:
    """Tell whether *cls* is ``importlib.util._LazyModule`` (a lazy load under way)."""
    # Matched by name, not identity: importlib.util can exist in several copies
    # (CPython's test_importlib imports fresh ones), each with its own
    # _LazyModule, and sys.modules may hold another copy than the one that made
    # the module (test_importlib test_lazy test_lazy_self_referential_modules).
    # Nothing is imported here: nothing may be imported during an import.
    return cls.__name__ == "_LazyModule" and cls.__module__ == "importlib.util"


def lasting_class(module: ModuleType) -> type:
    """Return the class *module* keeps once a lazy load under way has ended.

    Under ``LazyLoader`` (3.12.3+) a module is still a ``_LazyModule`` while its
    body runs, and ``LazyLoader`` restores ``loader_state["__class__"]``
    afterwards unless the module is no longer a ``_LazyModule``: a class built
    on that one survives the end of the lazy load.
    """
    current = type(module)
    if not is_lazy_module_class(current):
        return current
    spec: Any = namespace_of(module).get("__spec__")
    lasting: type = spec.loader_state["__class__"]
    return lasting


def _lazy_loader_is_storing() -> bool:
    """Tell whether the ``__class__`` store under way is LazyLoader ending a lazy load.

    PyPy 3.11 and CPython 3.12.3-3.12.x end it with a plain
    ``self.__class__ = types.ModuleType`` in ``_LazyModule.__getattribute__``
    (CPython 3.13+ uses ``object.__setattr__``, gh-117182): import-system
    bookkeeping that no hook should see.
    """
    store = sys._getframe(2)  # 0: here, 1: the hook-aware __setattr__
    return (
        store.f_code.co_name == "__getattribute__"
        and store.f_globals.get("__name__") == "importlib.util"
    )


def skipped_by_warnings(function: "Any") -> None:
    # The native engine calls a hook straight from the module type's slot, so
    # a hook's warnings.warn(..., stacklevel=2) names the line that stored the
    # attribute.  Here our method's frame sits in between.  Both warnings
    # implementations (C and Python, CPython 3.8+ and PyPy) skip frames whose
    # file name contains "importlib" and "_bootstrap" when they count
    # stacklevel, as they skip the import system's own frames: the count is
    # then the same under both engines.  (skip_file_prefixes is 3.12+ and the
    # caller's to pass, so it cannot do this.)
    function.__code__ = function.__code__.replace(
        co_filename="<pep726hook hook call; warnings skip it as importlib._bootstrap>"
    )


def hook_aware_mixin(home: str, doc: str, class_for: "Callable[[type, ModuleType], type]") -> type:
    """Make a ``ModuleType`` subclass whose stores and deletions call the module's hooks.

    ``mod.x = v`` calls ``mod.__dict__["__setattr__"](name, value)`` and
    ``del mod.x`` calls ``mod.__dict__["__delattr__"](name)`` when the module
    defines them; otherwise the attribute is stored or deleted as usual.  The
    hooks are looked up in the module's namespace on every operation and never
    on its type, as in PEP 726's reference implementation.  A ``ModuleType``
    subclass assigned to ``__class__`` is replaced by ``class_for(it, module)``,
    so the module keeps calling its hooks, as the reference implementation does.

    A name the deprecations package deprecates (:func:`register_deprecations`) warns
    when stored or deleted: the warning names the caller's line, and the
    deprecation ends once the store or deletion succeeded (a failing one
    leaves it as it was).

    The class passes for ``ModuleType`` by name (CPython's error messages name
    the object's type: "'module' object has no attribute 'x'") and is
    pickled as ``module`` of the module *home*, which must define that name.
    """

    def __setattr__(self: ModuleType, name: str, value: "Any") -> None:
        # A deprecated name: warn (the caller's line), store as usual, then
        # end the deprecation.  In that order, another thread's read finds
        # the old value (deprecated) or the new one; a failing store leaves
        # the deprecation as it was.
        if type(value) is _marker_type:
            # Refused before anything changes, as enable() refuses it.
            _deprecation_calls.check_name(name, "a deprecated() value stored through a module")
        deprecation = (
            _deprecation_calls.warn_deprecated(self, name, value)
            if id(self) in _deprecating_ids
            else None
        )
        hook = hook_of(self, "__setattr__")
        if hook is not NO_HOOK and not (name == "__class__" and _lazy_loader_is_storing()):
            hook(name, value)
        else:
            if (
                name == "__class__"
                and issubclass(type(value), type)
                and issubclass(value, ModuleType)
            ):
                value = class_for(value, self)
            try:
                store = super(mixin, self).__setattr__
            except TypeError:
                # Another thread put the module back on its own class since this
                # call began (uninstall(), or settle() at the end of an import):
                # store as that class's generic path would.
                store = _module_setattr.__get__(self)
            store(name, value)
        if deprecation is not None:
            _deprecation_calls.end_deprecation(deprecation, name)
        if type(value) is _marker_type:
            # A deprecated() marker stored through the module: a deprecation.
            _deprecation_calls.convert_pending_markers(self)

    def __delattr__(self: ModuleType, name: str) -> None:
        # A deprecated name: warn, delete as usual, then end the deprecation
        # (a failing deletion leaves it as it was).  A lazy value never
        # loaded has nothing to delete: the deprecation just ends.
        deprecation = (
            _deprecation_calls.warn_deprecated(self, name, NO_HOOK)
            if id(self) in _deprecating_ids
            else None
        )
        if deprecation is not None and _deprecation_calls.has_no_value(self, deprecation, name):
            _deprecation_calls.end_deprecation(deprecation, name)
            return
        hook = hook_of(self, "__delattr__")
        if hook is not NO_HOOK:
            hook(name)
        else:
            try:
                delete = super(mixin, self).__delattr__
            except TypeError:
                delete = _module_delattr.__get__(self)  # put back meanwhile, as above
            delete(name)
        if deprecation is not None:
            _deprecation_calls.end_deprecation(deprecation, name)

    skipped_by_warnings(__setattr__)
    skipped_by_warnings(__delattr__)
    namespace = {
        "__slots__": (),
        "__doc__": doc,
        "__module__": home,
        "__qualname__": ModuleType.__name__,
        "__setattr__": __setattr__,
        "__delattr__": __delattr__,
    }
    mixin: type[ModuleType] = type(ModuleType.__name__, (ModuleType,), namespace)
    return mixin


# Composed classes, found by (id(base), id(mixin)) -> (weak reference to the
# base, weak reference to the composed class). Nothing here keeps a class
# alive: a composed class holds its base through __bases__, so a strong table
# would keep every class ever given to a module, and its twin, for ever.
# A composed class lives while a module has it; composing again after that
# costs what the first time did.
_composed_by_base: "dict[tuple[int, int], tuple[Any, Any]]" = {}
# id(composed class) -> (weak reference to it, its mixin): how
# base_of_composition() knows ours.
_composed_ids: "dict[int, tuple[Any, type]]" = {}
# Makes "is a class stored for this pair?" and storing one a single step, so
# that of two threads composing for one pair only the first to store has its
# class seen (pickle checks that the name resolves to that very class).
# Lock rule 5 (_state): never held while a class is composed; reentrant.
_tables_lock = _thread.RLock()
# The tag of each mixin in the names compositions are pickled under.
_mixin_tags: "dict[type, str]" = {}
_mixins_by_tag: "dict[str, type]" = {}
# The module whose __getattr__ resolves pickled names (class_for_pickled_name).
_pickle_home: "dict[type, str]" = {}


# This module's globals, for the callbacks that may outlive their values.
_MODULE_GLOBALS = globals()


def _renew_tables_lock() -> None:
    # Lock rule 4: a child forked while another thread held it would hang composing.
    global _tables_lock
    _tables_lock = _thread.RLock()


_state.renew_in_child(_renew_tables_lock)


def register_mixin(mixin: type, tag: str, pickle_home: str) -> None:
    """Let :func:`composed_class` build classes from *mixin*.

    They are pickled as ``pickle_home.<tag>:<base module>:<base qualname>``;
    *pickle_home*'s ``__getattr__`` must be :func:`class_for_pickled_name`.
    """
    _mixin_tags[mixin] = tag
    _mixins_by_tag[tag] = mixin
    _pickle_home[mixin] = pickle_home


def stored_composition(base: type, mixin: type) -> "type | None":
    """Return the class composed from *base* and *mixin* if one is alive, else None."""
    entry = _composed_by_base.get((id(base), id(mixin)))
    if entry is None or entry[0]() is not base:
        return None  # never composed, or for a dead class whose id *base* reuses
    found: type | None = entry[1]()
    return found


def composed_class(base: type, mixin: type) -> type:
    """Return ``class base(base, mixin)``, made once per pair while in use.

    It passes for *base* by ``__name__`` (error messages) and docstring, and
    pickles by reference under a name that :func:`class_for_pickled_name`
    resolves to the same class.  Composing runs the metaclass of *base* and its
    ``__init_subclass__``: never call this under the install lock (lock rule 1).
    """
    found = stored_composition(base, mixin)
    if found is not None:
        return found
    key = (id(base), id(mixin))
    namespace = {
        "__slots__": (),
        "__module__": _pickle_home[mixin],
        "__qualname__": _pickled_name(_mixin_tags[mixin], base),
        "__doc__": base.__doc__,
    }
    metaclass: Any = type(base)
    composed: type = metaclass(base.__name__, (base, mixin), namespace)

    def forget(ref: "Any", namespace: "dict[str, Any]" = _MODULE_GLOBALS) -> None:
        # Only this class's own entries: ids are reused once it is gone.  The
        # globals are looked up in the namespace bound here, which the
        # interpreter may have cleared at exit (the lock is rebound in a
        # forked child, so it cannot be bound itself).
        lock, ids, by_base = (
            namespace.get("_tables_lock"),
            namespace.get("_composed_ids"),
            namespace.get("_composed_by_base"),
        )
        if lock is None or ids is None or by_base is None:
            return
        with lock:  # lock rule 5
            if ids.get(composed_key, (None,))[0] is ref:
                del ids[composed_key]
            current = by_base.get(key)
            if current is not None and current[1] is ref:
                del by_base[key]

    composed_key = id(composed)
    with _tables_lock:  # lock rule 5
        # Two threads composing at once: the first one stored wins and every
        # caller gets its class; the other one is never seen.
        winner = stored_composition(base, mixin)
        if winner is not None:
            return winner
        composed_ref = _weakref.ref(composed, forget)
        _composed_ids[composed_key] = (composed_ref, mixin)
        _composed_by_base[key] = (_weakref.ref(base), composed_ref)
    return composed


def base_of_composition(cls: type, mixin: type) -> type:
    """Return the class *cls* was composed from with *mixin*, or *cls* if it is not ours."""
    if cls is mixin:
        return ModuleType
    entry = _composed_ids.get(id(cls))
    if entry is not None and entry[0]() is cls and entry[1] is mixin:
        original: type = cls.__bases__[0]
        return original
    return cls


# Pickle looks a class up by __module__ and __qualname__, splitting the latter
# at dots; no dot, newline or non-ASCII character (pickle protocols 0-2) can be
# in this name.  "/" is in no module name or qualname.
def _pickled_name(tag: str, base: type) -> str:
    return f"{tag}:{base.__module__}:{base.__qualname__}".replace(".", "/")


def class_for_pickled_name(home: str, name: str) -> type:
    """Resolve the pickled name of a composed class to that class.

    In another process the class is composed again from its base, imported as
    pickle imports a class's module; a base that cannot be found there is an
    error, never another class.
    """
    tag, _, rest = name.partition(":")
    module_name, _, qualname = rest.partition(":")
    mixin = _mixins_by_tag.get(tag)
    if mixin is None or not qualname:
        raise AttributeError(f"module {home!r} has no attribute {name!r}")
    module_name, qualname = module_name.replace("/", "."), qualname.replace("/", ".")
    __import__(module_name)
    found: Any = sys.modules[module_name]
    for part in qualname.split("."):
        found = getattr(found, part, None)
    if not (isinstance(found, type) and issubclass(found, ModuleType)):
        raise AttributeError(
            f"cannot recreate the PEP 726 module class {name!r}: {module_name!r} has "
            f"no ModuleType subclass {qualname!r}"
        )
    return composed_class(found, mixin)

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
    from typing import Any, Callable, Dict, Iterable, TypeVar

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
    category and *warn* (and its factory, with *factory*; a value it has
    stays).  *category* and *warn* are as for
    :func:`pep726hook.deprecated`.  *module* is a module object or a name in
    ``sys.modules``.

    Raises TypeError for a bad argument type (a *factory* that is not
    callable), ValueError for a name not in ``sys.modules``, an empty
    message, a dunder *name* (the interpreter reads those itself) or a
    *factory* for a name that has a value or a deprecation (but for a body
    that ``importlib.reload()`` runs again, whose first run made them),
    AttributeError when *name* is
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
    # A moved module's deprecated value lives in its private builtins.
    present = name in namespace or name in _moved_values(target)
    if factory is not None and (present or existing is not None) and not _body_runs_again(target):
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
        replaced = Deprecation(message, category, warn, load, submodule)
        with _state.lock:
            if table is not None:
                table[name] = replaced
                _sync_served(target)
            _move_again(target)
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
    """Deprecate *entries* of the opted-in *module*; markers become values.

    Under the native engine, once the module's import has ended, the names
    move out of the namespace into the module's private builtins
    (:func:`_move`) and the module stays an exact ``ModuleType``.  Before
    that (the body still running), and under the class engine, the module
    gets the deprecating class: the class comes first (on its own it changes
    nothing a reader sees), then the entries, then each marker in the
    namespace is replaced by its value: a reader in another thread sees the
    name deprecated or not yet, never missing.  Composing the class runs user
    code (the metaclass of the module's own class), so it is done without
    the install lock; an error there leaves the deprecations as they were.
    """
    from ._class_engine import (
        deprecating_mixin_class,
        give_deprecating_class,
        give_pending_markers_class,
    )

    mixin = deprecating_mixin_class()
    pending: object = None  # alive until the module has it (the class cache is weak)
    while True:
        with _state.lock:  # lock rule 1: no user code below
            engine = _state.opt_in_engine
            assert engine is not None, "enable() chose the engine"
            movable = _can_move(module, engine)
            if movable:
                _give_private_builtins(module)
            if movable and _import_ended(module):
                work = None
            elif movable:
                # The window: the body still runs with the builtins it
                # started with, so the names stay in the namespace; the
                # first read through the module once the import has ended
                # moves them (the pending-markers class's reads).
                work = give_pending_markers_class(module)
            else:
                work = give_deprecating_class(module)
            if work is None:
                if not movable or not _import_ended(module):
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
                del namespace  # the move counts the references to it
                if movable and _import_ended(module):
                    _move(module, entries)
                break
        pending = work()
    del pending


# -- the native engine: deprecated names in the module's private builtins -------------
#
# Once a deprecating module's import has ended, its deprecated names leave its
# namespace for a builtins dict of its own: a copy of the interpreter's
# builtins plus those names, which the module's own code (its functions,
# closures, class bodies, methods, eval with its globals) reads after the
# namespace, as any global.  A read through the module misses the namespace
# and reaches the C descriptor that the extension puts into ModuleType's dict
# under each deprecated name: it warns and returns the value.  The module
# stays an exact ModuleType, whose other names the interpreter reads on its
# fast path.

# id(module) -> (weak reference, private builtins, the extension's entries
# {name: (message, category, warn, load, submodule)}, [moved, rebound]).
_privates: "dict[int, tuple[Any, dict[str, Any], dict[str, tuple[Any, ...]], list[bool]]]" = {}


def _native() -> "Any":
    return sys.modules[_NATIVE_MODULE]


def _interpreter_builtins() -> "dict[str, Any]":
    import builtins

    return vars(builtins)


def _can_move(module: ModuleType, engine: "Any") -> bool:
    """Tell whether *module*'s deprecated names can live in private builtins of its own.

    Under the native engine, for an exact ``ModuleType`` whose
    ``__builtins__`` is the interpreter's (the dict or, as in ``__main__``,
    the module), absent, or already its private copy.  A module whose author gave it
    other builtins keeps its names in its namespace, with the deprecating
    class, as does a module of a sub-interpreter.
    """
    if engine.name != "native" or lasting_type(module) is not ModuleType:
        return False
    if not _native().state()["main"]:
        # The descriptors live in the main interpreter's ModuleType dict.
        return False
    found = _privates.get(id(module))
    current = _namespace(module).get("__builtins__")
    if found is not None and found[0]() is module:
        return current is found[1]
    interpreter = _interpreter_builtins()
    # None: a namespace no code ran in yet (types.ModuleType()); exec() would
    # give it the interpreter's builtins.
    return current is None or current is interpreter or current is sys.modules.get("builtins")


def lasting_type(module: ModuleType) -> type:
    """Return *module*'s class without pep726hook's deprecating classes."""
    from ._class_engine import original_of_opted_in

    return original_of_opted_in(type(module))


def _give_private_builtins(module: ModuleType) -> None:
    """Give *module* its private builtins, once.

    Under the install lock.  Functions made from now on get them; those made
    before are rebound at the move (:func:`_rebind_functions`).  The body
    that called this keeps the interpreter's builtins until it ends.
    """
    found = _privates.get(id(module))
    if found is not None and found[0]() is module:
        return
    namespace = _namespace(module)
    interpreter = _interpreter_builtins()
    # A namespace without __builtins__ never ran code (exec() and the import
    # system put it there first): no function of it waits for rebinding.
    ran_code = "__builtins__" in namespace
    private = dict(interpreter)
    namespace["__builtins__"] = private
    key = id(module)

    def forget(ref: "Any", key: int = key, privates: "Any" = _privates) -> None:
        entry = privates.get(key)
        if entry is not None and entry[0] is ref:
            privates.pop(key, None)

    served: dict[str, tuple[Any, ...]] = {}
    # [moved, functions made before rebound]
    _privates[key] = (_weakref.ref(module, forget), private, served, [False, not ran_code])
    # From now on the extension mirrors changes of the interpreter's
    # builtins into the private ones.
    _native().set_deprecating(module, private, served, interpreter)
    _native().set_deprecated_store_callback(_store_moved)


_IMPORT_SYSTEM = ("_frozen_importlib", "importlib._bootstrap")


def _import_ended(module: ModuleType) -> bool:
    """Tell whether no body of *module* that needs the names in its namespace runs.

    A body running on this thread (a ``<module>`` frame with the module's
    namespace: an import, ``runpy``, ``exec``) needs them there while it
    runs with the interpreter's builtins, as a body that started before the
    private builtins existed does; one started after them (``reload()``)
    reads them there; neither has ended while ``importlib.reload()`` prepares
    to run it.  Otherwise the import by importlib has ended once the
    module's spec is no longer ``_initializing``.
    """
    namespace = _namespace(module)
    found = _privates.get(id(module))
    private = None if found is None else found[1]
    frame: Any = sys._getframe(1)
    while frame is not None:
        code_name = frame.f_code.co_name
        if frame.f_globals is namespace and code_name == "<module>":
            return frame.f_builtins is private
        if _reloads(frame, module):
            # importlib.reload() is about to run the body again.
            return False
        frame = frame.f_back
    spec = namespace.get("__spec__")
    try:
        return getattr(spec, "_initializing", False) is not True
    except Exception:
        return False


def _reloads(frame: "Any", module: ModuleType) -> bool:
    # importlib.reload(module)'s frame that runs (or is about to run) its body again.
    return (
        frame.f_code.co_name == "_exec"
        and frame.f_globals.get("__name__") in _IMPORT_SYSTEM
        and frame.f_locals.get("module") is module
    )


def _body_runs_again(module: ModuleType) -> bool:
    """Tell whether ``importlib.reload()`` runs *module*'s body again on this thread.

    The namespace then still holds what the first run bound.
    """
    frame: Any = sys._getframe(1)
    while frame is not None:
        if _reloads(frame, module):
            return True
        frame = frame.f_back
    return False


def _rebind_functions(moving: ModuleType) -> None:
    """Give the functions and frames made before their module's private builtins existed those builtins.

    Under the install lock, before *moving* moves.  From 3.10 on a function
    keeps the builtins of the globals it was made in (before 3.10 each call
    looks ``__builtins__`` up); a frame keeps those it started with: a
    suspended generator, coroutine or async generator, and a function
    running in any thread.  The extension
    walks each waiting module's namespace and proves by reference counts
    that it found every function made in it; one pass over the objects the
    collector tracks serves the modules it could not prove (a function a C
    extension made untracked is not found), and runs only when *moving* is
    one of them (it is also where suspended generators are found).  Another
    module it could not prove (its import still runs, and its frames hold its
    namespace) waits for its own move.
    """
    waiting = [
        found for found in list(_privates.values()) if not found[3][1] and found[0]() is not None
    ]
    if not waiting:
        return
    # The modules, not their namespaces: a reference to a namespace held
    # here would be one the proof cannot explain.  The moving one first.
    waiting.sort(key=lambda found: found[0]() is not moving)
    modules = []
    privates = []
    served = []
    for found in waiting:
        module = found[0]()
        if module is not None:
            modules.append(module)
            privates.append(found[1])
            served.append(found)
    needed = 1 if modules and modules[0] is moving else 0
    _, pass_ran, outcomes = _native().rebind_builtins(
        modules, privates, _interpreter_builtins(), needed
    )
    for found, (_, not_proved) in zip(served, outcomes):
        if pass_ran or not_proved is None:
            found[3][1] = True


def _entry_tuple(entry: Deprecation) -> "tuple[Any, ...]":
    return (entry.message, entry.category, entry.warn, entry.load, entry.submodule)


def _move(module: ModuleType, names: "Iterable[str] | None" = None) -> None:
    """Move *module*'s deprecated names into its private builtins; the module is plain again.

    Under the install lock.  *names*: only those, newly deprecated on a
    module whose names moved already (None: all).  Each name goes into the
    private builtins before it leaves the namespace, and the extension
    serves it before either: a reader in another thread finds it deprecated
    throughout.
    """
    found = _privates[id(module)]
    private, served, moved = found[1], found[2], found[3]
    table = deprecations_of(module) or {}
    _rebind_functions(module)  # before this frame holds the namespace (see there)
    namespace = _namespace(module)
    if names is None or not moved[0]:
        names = table
    # Added before any is dropped: a reader in another thread never finds a
    # moved name unserved.
    served.update({name: _entry_tuple(table[name]) for name in names if name in table})
    for name in [name for name in served if name not in table]:
        del served[name]
    _native().set_deprecating(module, private, served, _interpreter_builtins())
    for name in names:
        if name in namespace:
            value = namespace[name]
            private[name] = value.value if type(value) is DeprecatedValue else value
            del namespace[name]
    moved[0] = True
    if "__dir__" not in namespace:
        # dir() keeps listing them, as before the move and as the proxies do.
        namespace["__dir__"] = _DirWithDeprecatedNames(namespace, table)
    cls = lasting_type(module)
    if type(module) is not cls:
        from ._composition import set_class_bypassing_hooks

        set_class_bypassing_hooks(module, "__class__", cls)


class _DirWithDeprecatedNames:
    """A moved module's PEP 562 ``__dir__``: its namespace's names and its deprecated ones."""

    __slots__ = ("namespace", "table")

    def __init__(self, namespace: "dict[str, Any]", table: "Table") -> None:
        self.namespace = namespace
        self.table = table

    def __call__(self) -> "list[str]":
        names = {name for name in self.namespace if name != "__dir__"}
        return sorted(names.union(self.table))

    def __repr__(self) -> str:
        return "<dir() of a module with deprecated names (pep726hook)>"


def move_if_ended(module: ModuleType) -> None:
    """Move *module*'s names if it waits for the end of its import and that has come.

    Called by the pending-markers class's reads, after their markers are converted.
    """
    found = _privates.get(id(module))
    if found is None or found[0]() is not module or found[3][0] or not _import_ended(module):
        return
    with _state.lock:
        engine = _state.opt_in_engine
        if engine is not None and _can_move(module, engine) and not found[3][0]:
            _move(module)


def _move_again(module: ModuleType) -> None:
    """Move the deprecated names a moved *module*'s code bound again (``reload()``).

    Under the install lock.
    """
    found = _privates.get(id(module))
    if found is not None and found[0]() is module and found[3][0] and _import_ended(module):
        _move(module)


def read_moved(module: ModuleType, name: str) -> "tuple[Deprecation, Any] | None":
    """Return the entry and value of *module*'s moved deprecated *name*, or None.

    For the one read that moves the names (the caller warns); later reads
    reach the extension's descriptor.  A lazy value is loaded and kept.
    """
    found = _privates.get(id(module))
    table = deprecations_of(module)
    entry = None if table is None else table.get(name)
    if found is None or found[0]() is not module or entry is None:
        return None
    private = found[1]
    if name in private:
        return entry, private[name]
    if entry.load is None:
        return None
    return entry, private.setdefault(name, entry.load())


def _moved_values(module: ModuleType) -> "dict[str, Any]":
    # The private builtins of a module whose names moved, else an empty dict.
    found = _privates.get(id(module))
    if found is None or found[0]() is not module or not found[3][0]:
        return {}
    return found[1]


def _run_again(module: ModuleType) -> None:
    """A moved *module*'s ``__spec__`` was stored (``importlib.reload()`` runs its body again).

    Before 3.12 no dict watcher sees the body bind the deprecated names
    again in the namespace: the module gets the pending-markers class, whose
    first read moves them again.  Under the install lock.
    """
    from ._class_engine import give_pending_markers_class

    found = _privates.get(id(module))
    if found is None or found[0]() is not module or not found[3][0]:
        return
    if give_pending_markers_class(module) is None:
        found[3][0] = False


def _sync_served(module: ModuleType) -> None:
    # The extension's entries follow the table (under the install lock).
    found = _privates.get(id(module))
    if found is None or found[0]() is not module or not found[3][0]:
        return
    table = deprecations_of(module) or {}
    served = found[2]
    for name in list(served):
        if name not in table:
            del served[name]
    for name, entry in table.items():
        served[name] = _entry_tuple(entry)


_ABSENT: "Any" = object()

# (id(module), name) -> how many stores or deletions of that moved deprecated
# name through its module run now, in any thread (under the install lock).
_stores_running: "dict[tuple[int, str], int]" = {}


def _store_moved(module: ModuleType, name: str, value: object = _ABSENT) -> None:
    """The patched slot's call for a store or deletion of a moved deprecated name.

    As before the move: warn at the line that stored (or deleted), then store
    through the module's hooks with the name back in the namespace, then end
    the deprecation; a failing store leaves it as it was (the last one of the
    name running moves the value back out).  The import system
    binding a lazily deprecated submodule on its package neither warns nor
    ends it: the submodule goes into the private builtins.  A
    ``deprecated()`` marker deprecates the name anew.
    """
    found = _privates.get(id(module))
    table = deprecations_of(module)
    entry = None if table is None else table.get(name)
    if found is None or found[0]() is not module or entry is None:
        _native().store_through_hooks(module, name, *(() if value is _ABSENT else (value,)))
        if name == "__spec__" and value is not _ABSENT:
            with _state.lock:
                _run_again(module)
        return
    private = found[1]
    if (
        entry.submodule is not None
        and value is not _ABSENT
        and value is sys.modules.get(entry.submodule)
    ):
        private[name] = value
        return
    marker = type(value) is DeprecatedValue
    if not marker:
        warn = entry.warn
        if warn is None:
            import warnings

            warnings.warn(entry.message, entry.category, 2)
        else:
            warn(entry.message, entry.category, 3)
    namespace = _namespace(module)
    interpreter = _interpreter_builtins()
    native = _native()
    key = (id(module), name)
    # The name goes back into the namespace for the store (the module's
    # hooks see it there, as before the move): not a rebinding to undo.
    with _state.lock:
        _count_running_store(key, 1)
    native.set_storing(module, True)
    try:
        with _state.lock:
            if name in private:
                namespace[name] = private[name]
                _restore_builtin(private, interpreter, name)
        try:
            native.store_through_hooks(module, name, *(() if value is _ABSENT else (value,)))
        except BaseException:
            with _state.lock:
                # Only the last store of the name still running moves it
                # back: another one's hooks may have stored a new value,
                # and a successful one ends the deprecation, which a value
                # moved out of the namespace under it would lose.
                if (
                    _stores_running[key] == 1
                    and table is not None
                    and table.get(name) is entry
                    and name in namespace
                ):
                    # Into the private builtins before out of the namespace:
                    # a reader in another thread finds it in one of them.
                    private[name] = namespace[name]
                    del namespace[name]
            raise
        with _state.lock:
            if table is not None and table.get(name) is entry:
                del table[name]
            _sync_served(module)
    finally:
        with _state.lock:
            _count_running_store(key, -1)
        native.set_storing(module, False)


def _count_running_store(key: "tuple[int, str]", step: int) -> None:
    # Under the install lock.
    running = _stores_running.get(key, 0) + step
    if running:
        _stores_running[key] = running
    else:
        del _stores_running[key]


def _restore_builtin(private: "dict[str, Any]", interpreter: "dict[str, Any]", name: str) -> None:
    # A deprecated name that shadowed a builtin (open, id) gives it back.
    if name in interpreter:
        private[name] = interpreter[name]
    else:
        private.pop(name, None)


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
    move_if_ended(module)


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

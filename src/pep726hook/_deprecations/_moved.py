"""The window and the move: under the native engine, deprecated names leave the namespace.

While a deprecating module's import runs, its body reads the names from its
namespace, and the module has the deprecating class (:mod:`._classes`).
Once the import has ended (:func:`import_ended`, which wraps nothing of
importlib's), the names move into the module's private builtins
(:func:`_move`), the module is an exact ``ModuleType`` again, and the native
engine's extension serves reads, stores and deletions of the names through
it (:func:`_store_moved` is the store callback it calls).
"""

import _weakref
import sys

from .. import _state
from .._composition import set_class_bypassing_hooks
from ._classes import give_pending_markers_class, lasting_type
from ._entries import (
    DEPRECATED,
    LAZY,
    REMOVED,
    DeprecatedValue,
    Deprecation,
    converted,
    deprecations_of,
    table_for,
)
from ._entries import namespace as _namespace

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType
    from typing import Any, Callable, Iterable

    from ._entries import Table
else:
    ModuleType = type(sys)

_NATIVE_MODULE = __name__.split(".")[0] + "._native"

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

# id(module) -> (weak reference, [moved, rebound]).  The private builtins and
# the extension's entries {name: (message, category, warn, load, submodule)}
# are read from the extension's record (_found()), which the module holds as
# the collector sees: held here, they would keep alive a module that refers
# to itself (its moved functions' globals, a warn callable), as a root.
_privates: "dict[int, tuple[Any, list[bool]]]" = {}


def _found(
    module: ModuleType,
) -> "tuple[Any, dict[str, Any], dict[str, tuple[Any, ...]], list[bool]] | None":
    """(weak reference, private builtins, entries, [moved, rebound]) of *module*, or None."""
    state = _privates.get(id(module))
    if state is None or state[0]() is not module:
        return None
    record = _native().deprecating_record(module)
    if record is None:
        return None
    return (state[0], record[0], record[1], state[1])


def _native() -> "Any":
    return sys.modules[_NATIVE_MODULE]


# Whether this interpreter is the main one, asked of the extension once (each
# interpreter has its own copy of this module); every declaration asks.
_main: "list[bool]" = []


def _in_main_interpreter() -> bool:
    if not _main:
        _main.append(bool(_native().state()["main"]))
    return _main[0]


def _interpreter_builtins() -> "dict[str, Any]":
    import builtins

    return vars(builtins)


def can_move(module: ModuleType, engine: "Any") -> bool:
    """Tell whether *module*'s deprecated names can live in private builtins of its own.

    Under the native engine, for an exact ``ModuleType`` whose
    ``__builtins__`` is the interpreter's (the dict or, as in ``__main__``,
    the module), absent, or already its private copy.  A module whose author gave it
    other builtins keeps its names in its namespace, with the deprecating
    class, as does a module of a sub-interpreter.
    """
    if engine.name != "native" or lasting_type(module) is not ModuleType:
        return False
    if not _in_main_interpreter():
        # The descriptors live in the main interpreter's ModuleType dict.
        return False
    found = _found(module)
    current = _namespace(module).get("__builtins__")
    if found is not None and found[0]() is module:
        return current is found[1]
    interpreter = _interpreter_builtins()
    # None: a namespace no code ran in yet (types.ModuleType()); exec() would
    # give it the interpreter's builtins.
    return current is None or current is interpreter or current is sys.modules.get("builtins")


def _remember_privates(module: ModuleType, *, moved: bool, rebound: bool) -> None:
    # [names moved, functions made before the private builtins rebound]
    key = id(module)

    def forget(ref: "Any", key: int = key, privates: "Any" = _privates) -> None:
        entry = privates.get(key)
        if entry is not None and entry[0] is ref:
            privates.pop(key, None)

    _privates[key] = (_weakref.ref(module, forget), [moved, rebound])


def give_private_builtins(module: ModuleType) -> None:
    """Give *module* its private builtins, once.

    Under the install lock.  Functions made from now on get them; those made
    before are rebound at the move (:func:`_rebind_functions`).  The body
    that called this keeps the interpreter's builtins until it ends.
    """
    found = _found(module)
    if found is not None and found[0]() is module:
        return
    namespace = _namespace(module)
    interpreter = _interpreter_builtins()
    # A namespace without __builtins__ never ran code (exec() and the import
    # system put it there first): no function of it waits for rebinding.
    ran_code = "__builtins__" in namespace
    private = dict(interpreter)
    namespace["__builtins__"] = private
    served: dict[str, tuple[Any, ...]] = {}
    _remember_privates(module, moved=False, rebound=not ran_code)
    # From now on the extension mirrors changes of the interpreter's
    # builtins into the private ones.
    _native().set_deprecating(module, private, served, interpreter)
    _native().set_deprecated_store_callback(_store_moved)


_IMPORT_SYSTEM = ("_frozen_importlib", "importlib._bootstrap")


def import_ended(module: ModuleType) -> bool:
    """Tell whether no body of *module* that needs the names in its namespace runs.

    A body running on this thread (a ``<module>`` frame with the module's
    namespace: an import, ``runpy``, ``exec``) needs them there while it
    runs with the interpreter's builtins, as a body that started before the
    private builtins existed does; one started after them (``reload()``)
    reads them there; neither has ended while ``importlib.reload()`` prepares
    to run it.  So does a body running in another thread of this interpreter
    (importlib's ``module_from_spec()`` and ``exec_module()`` recipe, which
    marks nothing ``_initializing``, or ``__main__``, read from a thread it
    started).  Otherwise the import by importlib has ended once the
    module's spec is no longer ``_initializing``.
    """
    namespace = _namespace(module)
    found = _found(module)
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
    if private is not None and _native().body_runs_elsewhere(module, private):
        return False
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


def body_runs_again(module: ModuleType) -> bool:
    """Tell whether ``importlib.reload()`` runs *module*'s body again on this thread.

    The namespace then still holds what the first run bound.
    """
    frame: Any = sys._getframe(1)
    while frame is not None:
        if _reloads(frame, module):
            return True
        frame = frame.f_back
    return False


def _rebind_functions(moving: ModuleType) -> bool:
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

    Tell whether *moving* may move: after ``gc.freeze()`` the pass would
    miss the frozen objects, so it does not run, and a module its walk
    could not prove keeps its names in its namespace (with the
    pending-markers class) until a walk proves it.
    """
    waiting = []
    for state in list(_privates.values()):
        alive = state[0]()
        found = None if alive is None or state[1][1] else _found(alive)
        if found is not None:
            waiting.append(found)
        alive = None
    if not waiting:
        return True
    import gc

    frozen = gc.get_freeze_count() > _FROZEN_AT_START
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
    needed = 1 if modules and modules[0] is moving and not frozen else 0
    _, pass_ran, outcomes = _native().rebind_builtins(
        modules, privates, _interpreter_builtins(), needed
    )
    ready = not (modules and modules[0] is moving)
    for module, found, (_, not_proved) in zip(modules, served, outcomes):
        if not (pass_ran or not_proved is None):
            continue
        if module is moving:
            ready = True
        elif _BUILTINS_FROM_CALLER and not import_ended(module):
            # Before 3.10 a frame its body starts copies the body's
            # builtins: a generator it suspends after this pass waits with
            # the interpreter's, for its own move to find.
            continue
        found[3][1] = True
    return ready


def _frozen_at_start() -> int:
    # 3.12 puts objects of its own start-up into the permanent generation
    # (gc.get_freeze_count() is 375 on 3.12.1 before any code runs); the
    # other versions none.  Only a gc.freeze() after the first deprecation
    # counts: the extension's count where it deprecated a name alone before
    # this package loaded, else this one.
    if sys.version_info[:2] != (3, 12):
        return 0
    native: Any = sys.modules.get(_NATIVE_MODULE)
    noted = -1 if native is None else native.frozen_at_start()
    if noted >= 0:
        return int(noted)
    import gc

    return gc.get_freeze_count()


_FROZEN_AT_START = _frozen_at_start()

# Before 3.10 a frame with the globals of its caller's copies the caller's builtins.
_BUILTINS_FROM_CALLER = sys.version_info < (3, 10)


def _entry_tuple(entry: Deprecation) -> "tuple[Any, ...]":
    return (
        entry.message,
        entry.category,
        entry.warn,
        entry.load,
        entry.submodule,
        entry.kind,
        entry.warning,
    )


def move_ready(module: ModuleType) -> bool:
    """Tell whether *module*'s names may move now (its functions and frames were rebound).

    Under the install lock, with no reference to its namespace held
    (:func:`_rebind_functions`).
    """
    return import_ended(module) and _rebind_functions(module)


def _move(module: ModuleType, names: "Iterable[str] | None" = None) -> bool:
    """Move *module*'s deprecated names into its private builtins; the module is plain again.

    Under the install lock.  *names*: only those, newly deprecated on a
    module whose names moved already (None: all).  Each name goes into the
    private builtins before it leaves the namespace, and the extension
    serves it before either: a reader in another thread finds it deprecated
    throughout.  False, and nothing done, if its functions could not all be
    rebound (:func:`_rebind_functions`).
    """
    found = _found(module)
    assert found is not None
    private, served, moved = found[1], found[2], found[3]
    table = deprecations_of(module) or {}
    if not _rebind_functions(module):  # before this frame holds the namespace (see there)
        return False
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
        # Only deprecated values move: a lazy or removed name has none.
        if name in namespace and name in table and table[name].kind == DEPRECATED:
            value = namespace[name]
            private[name] = converted(value) if type(value) is DeprecatedValue else value
            del namespace[name]
    moved[0] = True
    if "__dir__" not in namespace:
        # dir() keeps listing them, as before the move and as the proxies do.
        namespace["__dir__"] = _DirWithDeprecatedNames(namespace, table)
    cls = lasting_type(module)
    if type(module) is not cls:
        set_class_bypassing_hooks(module, "__class__", cls)
    return True


def move_now(module: ModuleType, names: "Iterable[str]") -> None:
    """Move *module*'s newly deprecated *names* (all, on its first move): :func:`_move`.

    Under the install lock, once its import has ended.
    """
    _move(module, names)


class _DirWithDeprecatedNames:
    """A moved module's PEP 562 ``__dir__``: its namespace's names and its deprecated ones."""

    __slots__ = ("namespace", "table")

    def __init__(self, namespace: "dict[str, Any]", table: "Table") -> None:
        self.namespace = namespace
        self.table = table

    def __call__(self) -> "list[str]":
        names = {name for name in self.namespace if name != "__dir__"}
        return sorted(
            names.union(name for name, entry in self.table.items() if entry.kind != REMOVED)
        )

    def __repr__(self) -> str:
        return "<dir() of a module with deprecated names (pep726hook)>"


def move_if_ended(module: ModuleType) -> None:
    """Move *module*'s names if it waits for the end of its import and that has come.

    Called by the pending-markers class's reads, after their markers are converted.
    """
    found = _found(module)
    if found is None or found[0]() is not module or found[3][0] or not import_ended(module):
        return
    with _state.lock:
        engine = _state.opt_in_engine
        if engine is not None and can_move(module, engine) and not found[3][0]:
            _move(module)


def move_again(module: ModuleType) -> None:
    """Move the deprecated names a moved *module*'s code bound again (``reload()``).

    Under the install lock.
    """
    found = _found(module)
    if found is not None and found[0]() is module and found[3][0] and import_ended(module):
        _move(module)


def read_moved(module: ModuleType, name: str) -> "tuple[Deprecation, Any] | None":
    """Return the entry and value of *module*'s moved deprecated *name*, or None.

    For the one read that moves the names (the caller warns); later reads
    reach the extension's descriptor.  A lazy value is loaded and kept.
    """
    found = _found(module)
    table = deprecations_of(module)
    entry = None if table is None else table.get(name)
    if found is None or found[0]() is not module or entry is None or entry.kind != DEPRECATED:
        return None
    private = found[1]
    if name in private and not (
        entry.load is not None and private[name] is _interpreter_builtins().get(name, _ABSENT)
    ):
        # (A lazy value not loaded yet leaves the builtin of its name there.)
        return entry, private[name]
    if entry.load is None:
        return None
    return entry, private.setdefault(name, entry.load())


def moved_values(module: ModuleType) -> "dict[str, Any]":
    # The private builtins of a module whose names moved, else an empty dict.
    found = _found(module)
    if found is None or found[0]() is not module or not found[3][0]:
        return {}
    return found[1]


def run_again(module: ModuleType) -> None:
    """A moved *module*'s body runs again (``importlib.reload()`` stored its ``__spec__``).

    Before 3.12 no dict watcher sees the body bind the deprecated names
    again in the namespace: the module gets the pending-markers class, whose
    first read moves them again.  Under the install lock.
    """
    found = _found(module)
    if found is None or found[0]() is not module or not found[3][0]:
        return
    if give_pending_markers_class(module) is None:
        found[3][0] = False


def sync_served(module: ModuleType) -> None:
    # The extension's entries follow the table (under the install lock).
    found = _found(module)
    if found is None or found[0]() is not module or not found[3][0]:
        return
    table = deprecations_of(module) or {}
    served = found[2]
    for name in list(served):
        if name not in table:
            del served[name]
    for name, entry in table.items():
        served[name] = _entry_tuple(entry)


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


class ImportSubmodule:
    """A lazy submodule's computation: ``importlib.import_module(full_name)``."""

    __slots__ = ("full_name",)

    def __init__(self, full_name: str) -> None:
        self.full_name = full_name

    def __call__(self) -> object:
        import importlib

        return importlib.import_module(self.full_name)


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
    found = _found(module)
    table = deprecations_of(module)
    entry = None if table is None else table.get(name)
    if found is None or found[0]() is not module or entry is None:
        _native().store_through_hooks(module, name, *(() if value is _ABSENT else (value,)))
        if name == "__spec__" and value is not _ABSENT:
            with _state.lock:
                run_again(module)
        return
    if entry.kind != DEPRECATED:
        return _store_declared(module, name, value, table, entry)
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
        assert entry.message is not None  # only a removed name's may be None
        if entry.warn is None:
            import warnings

            warnings.warn(entry.message, entry.category, 2)
        else:
            entry.warn(entry.message, entry.category, 3)
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
                # A value the module's own code bound since the move is the
                # name's newest (before 3.12 nothing moves it back, from
                # 3.12 its move back may still wait): it stays, and a
                # refused store moves it, not the older one, back out.
                namespace.setdefault(name, private[name])
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
            sync_served(module)
    finally:
        with _state.lock:
            _count_running_store(key, -1)
        native.set_storing(module, False)


def _store_declared(
    module: ModuleType, name: str, value: object, table: "Table | None", entry: Deprecation
) -> None:
    # A store of a lazy or removed name binds it as on a plain module (the
    # import system's binding of a lazy submodule too), and the declaration
    # ends; a deletion of a lazy name never loaded just ends it.
    native = _native()
    if value is _ABSENT and entry.load is not None and name not in _namespace(module):
        pass
    else:
        native.store_through_hooks(module, name, *(() if value is _ABSENT else (value,)))
    with _state.lock:
        if table is not None and table.get(name) is entry:
            del table[name]
        sync_served(module)


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


def take_declared_alone() -> "list[tuple[ModuleType, Table]]":
    """Take over the modules whose names the extension declared alone.

    ``pep726hook.lazy_attribute()``, ``removed_attribute()`` and
    ``deprecate_attribute()`` declare a name through the extension alone
    while this package is not loaded (``_native.lazy_alone``,
    ``removed_alone``, ``deprecated_alone``), leaving the module as
    :func:`_move` leaves one: private builtins, the extension's entries,
    the names served from ``ModuleType``'s dict, a deprecated value in the
    private builtins (moved when the extension ended the module's window,
    here at the latest).  From now on this package keeps their tables, their
    loads are :class:`LazyLoad`, and its store callback serves them.
    Returns, for each module whose body still runs (or is about to run
    again for ``importlib.reload()``), the deprecated names whose values are
    still in its namespace: the caller deprecates them again, with this
    package's own window.  Called as the package loads (no
    lock: lock rule 2), and under the install lock by a declaration that ran
    while it loaded.
    """
    native: Any = sys.modules.get(_NATIVE_MODULE)
    taken = [] if native is None else native.declared_alone()
    handed_over = []
    for module, rebound, handed in taken:
        record = native.deprecating_record(module)
        if record is None:
            continue
        # Handed-over values wait in the namespace for this package's move.
        _remember_privates(module, moved=not handed, rebound=rebound)
        table = table_for(module)
        for name, served in list(record[1].items()):
            entry = _deprecation_of(served)
            if entry.kind == LAZY:
                factory = getattr(entry.load, "factory", None)
                compute = factory if factory is not None else ImportSubmodule(served[4])
                entry.load = LazyLoad(module, name, compute)
            table[name] = entry
        sync_served(module)
        if handed or body_runs_again(module):
            handed_over.append((module, {n: _deprecation_of(e) for n, e in handed.items()}))
    if taken:
        native.set_deprecated_store_callback(_store_moved)
    return handed_over


def _deprecation_of(served: "tuple[Any, ...]") -> Deprecation:
    # The entry of a deprecated name, from the extension's tuple.
    message, category, warn, load, submodule, kind, warning = served
    return Deprecation(message, category, warn, load, submodule, kind=kind, warning=warning)

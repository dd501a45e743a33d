"""The state the process-wide hook and the opt-ins share, and the rules for its locks.

One place holds what ``install()``, ``uninstall()`` and ``enable()`` must agree
on: the install lock, the engine of the process-wide hook and how it was
turned on (the route), the engine serving modules opted in with ``enable()``
and those modules, and what happens to the locks across ``fork()``.  The other
modules read and write these names only while holding :data:`lock`.

Lock rules, cited by number where a lock is taken (as wrapt's importer does):

1. Nothing under the install lock waits for an import another thread runs.
   ``enable()`` takes the lock inside a module body, that is, after the import
   system's lock for that module; a thread holding the install lock and
   waiting for that import would wait for ever (deadlock).  So no user code
   runs under it: no class is composed (that runs the base class's metaclass
   and ``__init_subclass__``, which may import: compose first, then take or
   retake the lock, as ``install()`` and ``enable()`` do), no warning is
   issued (``warnings.showwarning`` may import), and modules are told apart by
   their real type, never ``isinstance`` (which runs the ``__getattribute__``
   of a lazy-import placeholder).
2. Only pep726hook's own modules are imported under the install lock, and
   their bodies never take it: a body that waited for it while another thread
   held it and imported that module would deadlock against rule 1's thread.
3. A finder's ``find_spec()`` never waits for the install lock; it only tries
   it.  The import system calls ``find_spec()`` with its locks held (PyPy even
   for a module already in ``sys.modules``): waiting would deadlock against an
   ``install()`` that holds the lock and imports one of our modules (rule 2).
4. ``fork()`` takes the install lock first and the child gets a fresh one.  A
   child forked while another thread held it would inherit it held by a thread
   that does not exist there and hang in its first ``install()``; taken around
   ``fork()``, as CPython takes its import lock, the child also never sees a
   half-done ``install()`` nor a module that ``install()`` was importing.
   Before that, the fork waits until no other thread imports one of the
   package's modules (the package's ``__init__``): a child forked meanwhile
   got that module's import lock held.  Other locks register a fresh copy
   for the child with :func:`renew_in_child`.
5. The composed-classes lock (``_composition``) is held for a few dictionary
   operations only, never while a class is composed (rule 1's deadlock
   again), and is reentrant: its weak references' callbacks run whenever a
   class dies, in any thread, also the one holding it.

Every change to ``sys.meta_path`` binds a new list rather than editing the old
one, which is not a lock rule but the same kind of promise: the import system
walks the list by index while other threads import, and a finder inserted or
removed under a walk makes it skip the next finder, ``PathFinder`` included.

Start-up with the native engine does not import this module
(the package's ``__init__`` patches the module type alone); the first use of the API does,
and takes that patch over as the installation.
"""

import _thread
import _weakref
import sys

from . import _is_module, _register_at_fork

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType
    from typing import Any, Callable

    from ._engine_protocols import Engine
else:
    ModuleType = type(sys)

# The install lock (rules 1 to 4).  Rebound in a forked child: always read it
# as ``_state.lock``, never keep a reference.
lock = _thread.RLock()
# The engine of the process-wide hook (install(), the runner, $PEP726HOOK, the
# pytest plugin), or None while it is off.
active_engine: "Engine | None" = None
# How the process-wide hook was turned on, for `pep726hook info` and pytest's
# report header.
route: "str | None" = None
# Whether the fast-getattr switch is on (_fast_getattr): the process-wide hook
# then also passes every module that defines a PEP 562 __getattr__ to enable(),
# under the native engine (under the class engine it is recorded and does
# nothing); False while the hook is off.
fast_getattr = False
# The engine serving modules opted in with enable(), or None before the first
# opt-in and once none of them is alive.
opt_in_engine: "Engine | None" = None
# id(module) -> weak reference to each module that opted in.  A weak table:
# a library's module lives as long as the program keeps it, not longer.
_opted_in: "dict[int, Any]" = {}
# The deprecations package's marker type and the call the native engine's
# store slot makes around a store of a marker, marker_stored(module, name,
# stored): set as that package loads, None until then.  Here so that the
# native engine finds it when its extension loads after that package.
marker_store_hook: "tuple[type, Callable[[ModuleType, str, bool], None]] | None" = None


# In the package's __init__, whose enable() asks it before anything else of
# the package loads; here for the modules that import the state anyway.
is_module = _is_module


def register_opt_in(module: "ModuleType") -> None:
    """Remember that *module* opted in (until it dies)."""
    key = id(module)

    # What it needs is bound as defaults: the callback may run after the
    # interpreter cleared this module's globals at exit.  Only its own entry:
    # the id may belong to a new module by then.
    def forget(ref: "Any", key: int = key, table: "dict[int, Any]" = _opted_in) -> None:
        if table.get(key) is ref:
            table.pop(key, None)

    _opted_in[key] = _weakref.ref(module, forget)


def registered_opt_in(module: object) -> bool:
    """Tell whether *module* itself (not a new object at its address) opted in."""
    ref = _opted_in.get(id(module))
    return ref is not None and ref() is module


def live_opt_ins() -> "list[ModuleType]":
    """Return the opted-in modules still alive."""
    modules = [ref() for ref in list(_opted_in.values())]
    return [m for m in modules if m is not None]


def opt_in_engine_in_use() -> "Engine | None":
    """Return the engine of the opted-in modules while any is alive, else None."""
    engine = opt_in_engine
    return engine if engine is not None and live_opt_ins() else None


_renewals: "list[Callable[[], None]]" = []


def renew_in_child(renew: "Callable[[], None]") -> None:
    """Have *renew* run in every forked child, to replace a lock of its module (rule 4)."""
    _renewals.append(renew)


# Functions rather than bound methods: the child rebinds `lock`.
def _acquire_before_fork() -> None:
    lock.acquire()


def _release_after_fork_in_parent() -> None:
    lock.release()


def _renew_in_child() -> None:
    global lock
    lock = _thread.RLock()
    for renew in _renewals:
        renew()


# Through the package's own fork handler, which first waits for any import of
# the package's modules another thread runs, then takes this lock: registered
# with os.register_at_fork while a fork waited for this very module's import,
# the parent's handler would release a lock it never took.
_register_at_fork(0, _acquire_before_fork, _release_after_fork_in_parent, _renew_in_child)


def _adopt_start_up_patch() -> None:
    # The .pth line's activation, and the runner through it, patch the module
    # type without importing this module (they import only what the native
    # engine needs): that patch is the installation, and the route comes with
    # it.  The package hands it over once, so that a copy of this module
    # imported again after uninstall() does not adopt a patch that is gone.
    # Looked up, not imported: a copy of the package whose __init__ has no
    # activation never patched anything.
    global active_engine, route
    package = sys.modules.get(__name__.rpartition(".")[0])
    claim = getattr(package, "_claim_start_up_patch", None)
    start_up_route = claim() if claim is not None else None
    if start_up_route is None:
        return
    from ._native_engine import NativeEngine, slot_is_patched

    if slot_is_patched():
        active_engine = NativeEngine()
        route = start_up_route


def adopt_opt_ins_made_alone() -> None:
    """Take over the modules the package's ``enable()`` opted in through the extension alone.

    While this module is not loaded, ``enable()`` (and a declaration) opts a
    library's module in with one call of the extension, which makes sure
    in the same call: those are opt-ins of the native engine, and this
    state's from now on.  Called as this module loads (no lock: lock rule
    2), and under the lock by an opt-in that ran while it loaded.
    """
    global opt_in_engine
    native = sys.modules.get(__name__.rpartition(".")[0] + "._native")
    modules = native.opted_in_modules() if native is not None else []
    modules = [module for module in modules if not registered_opt_in(module)]
    if not modules:
        return
    if opt_in_engine is None:
        from ._native_engine import NativeEngine

        opt_in_engine = NativeEngine()
    for module in modules:
        register_opt_in(module)


_adopt_start_up_patch()
adopt_opt_ins_made_alone()

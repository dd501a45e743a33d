"""Turning PEP 726 behaviour on and off for the whole interpreter."""

import _thread
import sys

from . import _register_at_fork
from ._engines import create_engine, requested_engine_name

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType, TracebackType
    from types import ModuleType as _EnableModule
    from typing import Any, Iterable

    from ._engines import Engine
    from ._finder import Pep726Finder
else:
    ModuleType = type(sys)

# Every change to sys.meta_path here binds a new list rather than editing the
# old one: the import system walks the list by index while other threads
# import, and a finder inserted or removed under a walk makes it skip the next
# finder, PathFinder included (tests/test_stress.py, the meta path walk test).
#
# Serialises install(), uninstall() and enable().  enable() takes it inside a
# module body, after that module's import lock, so nothing done under it may
# wait for an import another thread runs: that thread may be in a module body
# calling enable(), waiting for this lock (deadlock).  So no user code runs
# under it: only pep726hook's own modules are imported under it, whose bodies
# never take it; no warning is issued under it (warnings.showwarning may
# import); no class is composed under it (that runs the metaclass and
# __init_subclass__ of a module's class: install(), enable() and
# _reclaim_front compose first and take or retake the lock after, and the
# composed classes' cache keeps one class per pair); modules are told apart
# by their real type, never isinstance (a placeholder's __class__); and
# find_spec() never waits for it (_reclaim_front).
_lock = _thread.RLock()
# Finders are recognised by class name (the finder module is imported only by
# the class engine), which also catches one left by an earlier copy of the package.
_FINDER_CLASS_NAME = "Pep726Finder"
_active_engine: "Engine | None" = None
# How the hook was turned on, for `pep726hook info` and pytest's report header.
_route: "str | None" = None
_ENABLE_MODULE = __name__.rpartition(".")[0] + "._enable"
# pep726hook._meta_path once the class engine has been activated (the native
# engine needs no finder, nor this module).
_lists: "ModuleType | None" = None


def _opt_ins() -> "_EnableModule | None":
    # pep726hook._enable is imported by the first enable() call (it needs the
    # class engine, which activation with the native engine must not load):
    # until it exists no module has opted in.  Nor while another thread still
    # runs its body (the first enable() call imports it, and waits for that
    # import to finish): install()/uninstall() then met a partly initialised
    # module and failed with AttributeError (tests/test_enable.py).
    module = sys.modules.get(_ENABLE_MODULE)
    if module is None or getattr(module.__spec__, "_initializing", False):
        return None
    return module


# Functions rather than bound methods: the child rebinds _lock.
def _acquire_lock_before_fork() -> None:
    _lock.acquire()


def _release_lock_after_fork() -> None:
    _lock.release()


def _reinit_lock_in_child() -> None:
    global _lock
    _lock = _thread.RLock()


# A child forked while another thread held _lock would inherit it held by a
# thread that does not exist there, and hang in its first install() or
# uninstall(). Taken around fork(), as CPython takes its import lock, the
# child also never sees a half-done install(), nor a module that install()
# was importing; the child gets a fresh lock.
_register_at_fork(0, _acquire_lock_before_fork, _release_lock_after_fork, _reinit_lock_in_child)


class Installation:
    """What :func:`install` returns; as a context manager it undoes that call.

    Leaving the ``with`` block uninstalls only if this call was the one that
    installed, so nested or repeated installs leave an outer one in place.
    """

    def __init__(self, engine_name: str, installed_now: bool) -> None:
        self.engine = engine_name
        self.installed_now = installed_now

    def __repr__(self) -> str:
        return (
            f"<pep726hook.Installation engine={self.engine!r} installed_now={self.installed_now}>"
        )

    def __enter__(self) -> "Installation":
        return self

    def __exit__(
        self,
        exc_type: "type[BaseException] | None",
        exc: "BaseException | None",
        traceback: "TracebackType | None",
    ) -> None:
        if self.installed_now:
            uninstall()


def install(engine: "str | None" = None) -> "Installation":
    """Give every module imported from now on PEP 726 behaviour.

    *engine* is ``"auto"`` (native where available, else class), ``"native"``
    or ``"class"``; None means ``$PEP726HOOK_ENGINE``, or ``"auto"`` when that
    is unset.  Calling it again while installed changes nothing.  Modules
    already imported whose namespace defines ``__setattr__`` or
    ``__delattr__`` are upgraded on the spot, and so is ``__main__``, whose
    body does not run through the import system: installed at start-up
    (``$PEP726HOOK``, ``sitecustomize``), its hooks work while it runs.

    Modules opted in with :func:`enable` fix the engine: ``"auto"`` means
    theirs, and the other one is refused.

    Raises ValueError for an unknown engine name, EngineUnavailableError when
    ``"native"`` cannot run here or opted-in modules use the other engine, and
    RuntimeError when already installed with a different engine than the one
    named.
    """
    name = requested_engine_name(engine)
    # Classes composed for this call outside the lock, alive until the
    # modules have them (the composed classes' cache is weak).
    composed: list[type] = []
    while True:
        with _lock:
            if _active_engine is not None:
                if name not in ("auto", _active_engine.name):
                    raise RuntimeError(
                        f"pep726hook is already installed with the {_active_engine.name!r} "
                        f"engine; call uninstall() before installing the {name!r} engine"
                    )
                return Installation(_active_engine.name, installed_now=False)
            chosen = name
            opt_ins = _opt_ins()
            if opt_ins is not None:
                # Opted-in modules that are gone no longer hold their engine (and its patch).
                opt_ins.release_unused()
                chosen = opt_ins.engine_for_install(name)
            new_engine = create_engine(chosen)
            modules = list(sys.modules.values())
            waiting = new_engine.needing_composition(modules)
            if not waiting:
                later, main = _activate(new_engine, modules)
                break
        # Composing runs the classes' metaclasses and __init_subclass__, user
        # code that may import: not under the lock (see there).  Their error
        # propagates with nothing installed; then everything is checked again.
        composed += new_engine.compose_for(waiting)
    # Upgraded as upgrade() does, the lock released: the engine undoes an
    # upgrade that an uninstall() overtakes.
    for module in later:
        new_engine.upgrade(module)
    if main is not None:
        # Not contextlib.suppress: contextlib is not imported at start-up.
        try:  # noqa: SIM105
            new_engine.upgrade(main)
        except TypeError:
            pass  # its class refuses subclasses or __class__ assignment, as below
    return Installation(new_engine.name, installed_now=True)


def _activate(
    new_engine: "Engine", modules: "Iterable[object]"
) -> "tuple[list[ModuleType], ModuleType | None]":
    """Finish install() under the lock, the classes *modules* need composed.

    Returns what is to be upgraded once the lock is released, as its class
    needs composing: modules given another class since that check, and
    ``__main__``, whose class a failed composition must not refuse the install.
    """
    global _active_engine, _route, _lists
    new_engine.activate()
    try:
        if new_engine.uses_finder:
            # Imported here: activation with the native engine needs no finder.
            from . import _meta_path
            from ._finder import Pep726Finder

            _lists = _meta_path
            _remove_finders()
            finder = Pep726Finder(new_engine, _reclaim_front)
            sys.meta_path = _meta_path.finder_first(
                [finder, *sys.meta_path], finder, _meta_path_dropped
            )
        later = new_engine.upgrade_existing(modules)
        main = _main_to_upgrade()
        try:
            if main is not None and new_engine.upgrade_if_composed(main):
                main = None
        except TypeError:
            # A __main__ whose class refuses __class__ assignment keeps its
            # class, as before; it must not cost the whole installation.
            main = None
    except BaseException:
        _remove_finders()
        new_engine.deactivate()
        raise
    _active_engine = new_engine
    _route = "install()"
    return later, main


def _main_to_upgrade() -> "ModuleType | None":
    # The interpreter makes __main__ before site runs, and `python script`,
    # `-c` and `-m` (runpy) all run the program in that module, so upgrading
    # it now is what the runner does for its own __main__.
    is_main_interpreter = getattr(_thread, "_is_main_interpreter", None)
    if is_main_interpreter is not None and not is_main_interpreter():
        # A sub-interpreter runs code through interpreters.exec(), which on
        # 3.14+ refuses a __main__ that is not exactly ModuleType ("invalid
        # __main__ module", _Py_CheckMainModule; CPython's test_import and
        # test_importlib own-GIL tests).
        return None
    main = sys.modules.get("__main__")
    # By the real type, as upgrade() does: isinstance would run the
    # __getattribute__ of whatever sits there (issue 13, finding 10).
    return main if issubclass(type(main), ModuleType) else None


def uninstall() -> None:
    """Undo :func:`install`: remove the finder and put every upgraded module back.

    Modules opted in with :func:`enable` keep their hooks (the native patch
    stays while any of them is alive).  Does nothing else when not installed.
    """
    global _active_engine, _route
    with _lock:
        if _active_engine is not None:
            _remove_finders()
            opt_ins = _opt_ins()
            keeps_patch = opt_ins is not None and opt_ins.keeps_native_patch()
            if not (_active_engine.name == "native" and keeps_patch):
                _active_engine.deactivate()
            _active_engine = None
            _route = None
        opt_ins = _opt_ins()
        if opt_ins is not None:
            opt_ins.release_unused()


def is_installed() -> bool:
    """Tell whether :func:`install` is in effect."""
    return _active_engine is not None


def engine(module: "ModuleType | None" = None) -> "str | None":
    """Return the name of the active engine (``"native"`` or ``"class"``), or None.

    Without *module*, the engine of :func:`install`; with it, the engine that
    calls that module's hooks now (through install() or :func:`enable`).
    """
    active = _active_engine
    if module is None:
        return None if active is None else active.name
    if active is not None and active.is_upgraded(module):
        return active.name
    opt_ins = _opt_ins()
    return None if opt_ins is None else opt_ins.serving_engine(module)


def record_route(route: str) -> None:
    """Note how the hook was turned on (the runner, ``$PEP726HOOK``, pytest) while installed."""
    global _route
    with _lock:
        if _active_engine is not None:
            _route = route


def route() -> "str | None":
    """Return how the hook was turned on (``"install()"`` unless a route said), or None."""
    return _route


def upgrade(module: "ModuleType") -> "ModuleType":
    """Give one module object PEP 726 behaviour now, and return it.

    For modules that did not come through the import system (``types.ModuleType``
    objects, ``__main__`` set up by hand) or that defined their hooks after
    being imported.  A module opted in with :func:`enable` is returned as it
    is.  Raises RuntimeError when not installed and TypeError when *module* is
    not a module.
    """
    # By the real type: isinstance would run a placeholder's __getattribute__
    # (issue 13, finding 10).
    if not issubclass(type(module), ModuleType):
        raise TypeError(f"upgrade() needs a module, not {type(module).__name__}")
    active = _active_engine
    if active is None:
        opt_ins = _opt_ins()
        if opt_ins is not None and opt_ins.is_opted_in(module):
            return module
        raise RuntimeError(
            "pep726hook is not installed; call pep726hook.install() first, or have the "
            "module opt itself in with pep726hook.enable(__name__)"
        )
    active.upgrade(module)
    return module


def is_upgraded(module: "ModuleType") -> bool:
    """Tell whether stores and deletions on *module* call its hooks right now."""
    active = _active_engine
    if active is not None and active.is_upgraded(module):
        return True
    opt_ins = _opt_ins()
    return opt_ins is not None and opt_ins.serving_engine(module) is not None


def ensure_finder_first() -> bool:
    """Move our finder back to the front of ``sys.meta_path`` (pytest inserts its own there).

    Returns whether the finder is installed.
    """
    from . import _meta_path

    with _lock:
        meta_path = _in_place_order(sys.meta_path)
        finders = [f for f in meta_path if type(f).__name__ == _FINDER_CLASS_NAME]
        if not finders:
            return False
        finder = finders[0]
        if meta_path[0] is not finder or type(sys.meta_path) is not _meta_path.FinderFirstList:
            meta_path = [finder, *(f for f in meta_path if f is not finder)]
            sys.meta_path = _meta_path.finder_first(meta_path, finder, _meta_path_dropped)
        return True


def _reclaim_front(finder: "Pep726Finder", compose: bool = True) -> None:
    """Have the import system ask *finder* first again; upgrade what was imported past it.

    ``sys.meta_path`` was bound to a list that is not a :class:`FinderFirstList`
    walking *finder* first (``sys.meta_path = [f, *sys.meta_path]``).  A finder
    in front of ours serves its modules without our loader wrapper, so their
    hooks were never switched on: going first again is invisible to it (we ask
    it before anything else), and the modules it served meanwhile are upgraded
    now if they define a hook.  With *compose* false, modules whose class needs
    composing (user code) are left as they are.
    """
    # Called from find_spec(), with the import system's locks held: waiting
    # for _lock here would deadlock against an install()/uninstall() that
    # holds it and imports (PyPy takes its import lock even for a module
    # already in sys.modules; tests/test_stress.py).  A later import retries.
    if not _lock.acquire(blocking=False):
        return
    try:
        engine = _active_engine
        lists = _lists
        if engine is None or finder.engine is not engine or lists is None:
            return  # uninstalled, or an old finder on a list an import still walks
        meta_path: Any = sys.meta_path
        if type(meta_path) is lists.FinderFirstList and meta_path.finder is finder:
            return
        if not isinstance(meta_path, list) or not any(f is finder for f in meta_path):
            return  # gone: its owner took it out
        # The items stay where their owners put them: only the walk changes.
        sys.meta_path = lists.finder_first(meta_path, finder, _meta_path_dropped)
        if meta_path and meta_path[0] is finder:
            return  # nothing was imported past it
        left = engine.upgrade_existing(list(sys.modules.values()))
    finally:
        _lock.release()
    if not compose:
        return
    for module in left:
        # Classes are composed without the lock (see there), as upgrade() does.
        # Still inside find_spec(), though, which CPython calls holding its
        # global import lock: a metaclass that waits there for another
        # thread's import still hangs.
        engine.upgrade(module)


def _meta_path_dropped(finder: "Pep726Finder") -> None:
    # The FinderFirstList of sys.meta_path was freed, most likely because the
    # program bound another list there.  Runs as a finalizer, anywhere: never
    # waits (_reclaim_front) and runs no user code (no class is composed).
    meta_path = sys.meta_path
    if getattr(meta_path, "finder", None) is finder:
        return  # still ours (our own rebinding, or a concatenation of it)
    _reclaim_front(finder, compose=False)


def _remove_finders() -> None:
    # Any instance counts, including one left by an earlier copy of this
    # package, so that activation stays idempotent (site runs a venv's .pth
    # line twice before 3.15).
    meta_path = _in_place_order(sys.meta_path)
    sys.meta_path = [f for f in meta_path if type(f).__name__ != _FINDER_CLASS_NAME]


def _in_place_order(meta_path: "Iterable[Any]") -> "list[Any]":
    # Iterating a FinderFirstList gives the walk order: copied as it stands.
    return list.copy(meta_path) if isinstance(meta_path, list) else list(meta_path)


def _adopt_start_up_patch() -> None:
    # The .pth line's bootstrap patches the module type without importing us
    # (_bootstrap._start_native_engine_alone): that patch is the installation.
    # The flag is taken once, so that a copy of this module imported again
    # after uninstall() does not adopt a patch that is gone.
    global _active_engine, _route
    bootstrap = sys.modules.get(__name__.rpartition(".")[0] + "._bootstrap")
    if not getattr(bootstrap, "started_native", False):
        return
    from . import _bootstrap, _native_engine

    _bootstrap.started_native = False
    if _native_engine.slot_is_patched():
        _active_engine = create_engine("native")
        _route = _bootstrap.START_UP_ROUTE


_adopt_start_up_patch()

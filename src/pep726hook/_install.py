"""Turning PEP 726 behaviour on and off for the whole interpreter."""

import _thread
import os
import sys

from . import _FAST_GETATTR_VARIABLE as FAST_GETATTR_VARIABLE
from . import _state
from ._composition import namespace_of
from ._engines import (
    EngineUnavailableError,
    create_engine,
    engine_from_environment,
    native_unavailable_reason,
    requested_engine_name,
    upgrades_modules,
)
from ._state import is_module

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType, TracebackType
    from typing import Any, Iterable

    from ._engine_protocols import Engine, LoadingEngine
    from ._finder import Pep726Finder

# Finders are recognised by class name (the finder module is imported only by
# the class engine and the fast-getattr switch), which also catches one left by
# an earlier copy of the package.
_FINDER_CLASS_NAME = "Pep726Finder"
# pep726hook._meta_path once a finder has been installed (the native engine
# needs no finder, nor this module, unless the fast-getattr switch is on).
_lists: "ModuleType | None" = None
# The engine our current finder hands each module to (the class engine, or
# the fast-getattr switch's loader under the native engine), None while there
# is no finder.
_loading: "LoadingEngine | None" = None


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


def install(engine: "str | None" = None, fast_getattr: "bool | None" = None) -> "Installation":
    """Give every module imported from now on PEP 726 behaviour.

    *engine* is ``"auto"`` (native where available, else class), ``"native"``
    or ``"class"``; None means ``$PEP726HOOK_ENGINE``, or ``"auto"`` when that
    is unset.  Calling it again while installed changes nothing, but for
    turning *fast_getattr* on.

    *fast_getattr* true also passes to :func:`enable` every module whose
    namespace defines a PEP 562 ``__getattr__``, once its body has run, and
    every such module already imported: on CPython 3.11-3.14 their attribute
    reads then stay specialised, as a plain module's.  The native engine only:
    under the class engine the switch does nothing (``enable()`` cannot make
    those reads faster there, and would change each module's class).  None means
    ``$PEP726HOOK_FAST_GETATTR`` (``1``/``true``/``yes``/``on`` turn it on),
    False when that is unset.  It stays on until :func:`uninstall`; the
    modules it enabled stay opted in.  Modules
    already imported whose namespace defines ``__setattr__`` or
    ``__delattr__`` are upgraded on the spot, and so is ``__main__``, whose
    body does not run through the import system: installed at start-up
    (``$PEP726HOOK``, ``sitecustomize``), its hooks work while it runs.

    Modules opted in with :func:`enable` fix the engine: ``"auto"`` means
    theirs, and the other one is refused.

    Raises ValueError for an unknown engine name or a bad
    ``$PEP726HOOK_FAST_GETATTR``, TypeError for a *fast_getattr* that is
    neither a bool nor None, EngineUnavailableError when
    ``"native"`` cannot run here or opted-in modules use the other engine, and
    RuntimeError when already installed with a different engine than the one
    named.
    """
    name = engine_from_environment() if engine is None else requested_engine_name(engine)
    fast = _requested_fast_getattr(fast_getattr)
    # Classes composed for this call outside the lock, alive until the
    # modules have them (the composed classes' cache is weak).
    composed: list[type] = []
    while True:
        with _state.lock:  # lock rules 1 and 2: nothing below composes or warns
            active = _state.active_engine
            if active is None:
                # Opted-in modules that are gone no longer hold their engine (and its patch).
                _release_unused_opt_in_engine()
                new_engine = create_engine(_engine_beside_opt_ins(name))
                modules = list(sys.modules.values())
                waiting = (
                    new_engine.needing_composition(modules) if upgrades_modules(new_engine) else []
                )
                if not waiting:
                    later, main = _activate(new_engine, modules, fast)
                    break
            elif name not in ("auto", active.name):
                raise RuntimeError(
                    f"pep726hook is already installed with the {active.name!r} "
                    f"engine; call uninstall() before installing the {name!r} engine"
                )
            else:
                switched_on = fast and _turn_fast_getattr_on(active)
        if active is not None:
            if switched_on:
                _enable_existing()  # the lock released: enable() takes it itself
            return Installation(active.name, installed_now=False)
        # Composing runs the classes' metaclasses and __init_subclass__, user
        # code that may import: not under the lock (lock rule 1).  Their error
        # propagates with nothing installed; then everything is checked again.
        if upgrades_modules(new_engine):
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
    if fast and not upgrades_modules(new_engine):
        _enable_existing()
    return Installation(new_engine.name, installed_now=True)


def _requested_fast_getattr(value: "bool | None") -> bool:
    # The switch's module (and enable()'s) is loaded only when the switch may be
    # on: with it off, this module's start-up (the class engine) pays one
    # environment lookup for it, and the switch's code lives in _fast_getattr.
    if value is None and not os.environ.get(FAST_GETATTR_VARIABLE, "").strip():
        return False
    if value is False:
        return False
    from ._fast_getattr import requested_fast_getattr

    return requested_fast_getattr(value)


def _turn_fast_getattr_on(active: "Engine") -> bool:
    # Under the lock; True when the modules imported so far are to be enabled.
    from ._fast_getattr import turn_on

    return turn_on(active, _install_finder)


def _enable_existing() -> None:
    # The modules imported so far that define __getattr__ (the switch's sweep).
    from ._fast_getattr import enable_existing

    enable_existing(list(sys.modules.values()))


def _install_finder(loading: "LoadingEngine") -> None:
    """Put a finder handing modules to *loading* first on ``sys.meta_path``; under the lock."""
    global _lists, _loading
    # Imported here: activation with the native engine needs no finder.  Our
    # own modules, whose bodies take no lock (lock rule 2).
    from . import _meta_path
    from ._finder import Pep726Finder

    _lists = _meta_path
    _remove_finders()
    finder = Pep726Finder(loading, _reclaim_front)
    sys.meta_path = _meta_path.finder_first([finder, *sys.meta_path], finder, _meta_path_dropped)
    _loading = loading


def install_replacing(requested: str, fast_getattr: "bool | None" = None) -> "Installation":
    """Install the engine *requested* by a route's option, replacing a different active one.

    The rule of every route that takes an engine option (the runner's
    ``--engine``, the pytest plugin's options): an engine named there replaces
    the active one (turned on by ``PEP726HOOK=1``, say); ``auto``, or naming
    none, keeps it.  ``install()`` itself is stricter and raises instead.
    ``install()``'s *fast_getattr* is passed on.
    """
    active = _state.active_engine
    if active is not None and requested not in ("auto", active.name):
        uninstall()
    return install(requested, fast_getattr)


def _engine_beside_opt_ins(requested: str) -> str:
    """Return the engine ``install(requested)`` must use given the opted-in modules.

    Raises EngineUnavailableError when *requested* names the other engine:
    the two engines never serve one process together.  Under the install lock.
    """
    engine = _state.opt_in_engine_in_use()
    if engine is None or requested in ("auto", engine.name):
        return requested if engine is None else engine.name
    if requested == "native":
        # Where native cannot run at all, that is the news, not the conflict.
        reason = native_unavailable_reason()
        if reason is not None:
            raise EngineUnavailableError(reason)
    names = sorted({str(namespace_of(m).get("__name__")) for m in _state.live_opt_ins()})
    shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    raise EngineUnavailableError(
        f"modules opted in with pep726hook.enable() ({shown}) use the {engine.name!r} "
        f"engine, and the two engines never mix in one process; install the {engine.name!r} "
        f"or 'auto' engine instead of {requested!r}, or, to have {requested!r} everywhere, "
        f"set $PEP726HOOK_ENGINE={requested} before those modules are imported"
    )


def _release_unused_opt_in_engine() -> None:
    """Forget the engine of opted-in modules once none is alive, undoing what it set up."""
    engine = _state.opt_in_engine
    if engine is None or _state.live_opt_ins():
        return
    _state.opt_in_engine = None
    engine.release_opt_ins()


def _activate(
    new_engine: "Engine", modules: "Iterable[object]", fast_getattr: bool
) -> "tuple[list[ModuleType], ModuleType | None]":
    """Finish install() under the lock, the classes *modules* need composed.

    Returns what is to be upgraded once the lock is released, as its class
    needs composing: modules given another class since that check, and
    ``__main__``, whose class a failed composition must not refuse the install.
    """
    new_engine.activate()
    later: list[ModuleType] = []
    try:
        main = _main_to_upgrade()
        loading: LoadingEngine | None = new_engine if upgrades_modules(new_engine) else None
        if fast_getattr and loading is None:
            # The switch under the native engine (it does nothing under the class engine).
            from ._fast_getattr import EnablingLoader

            loading = EnablingLoader()
        if loading is not None:
            _install_finder(loading)
        if upgrades_modules(new_engine):
            later = new_engine.upgrade_existing(modules)
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
    _state.active_engine = new_engine
    _state.route = "install()"
    _state.fast_getattr = fast_getattr
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
    # __getattribute__ of whatever sits there (lock rule 1).
    return main if is_module(main) else None


def uninstall() -> None:
    """Undo :func:`install`: remove the finder and put every upgraded module back.

    Modules opted in with :func:`enable` (by the fast-getattr switch too) keep their hooks (the native patch
    stays while any of them is alive).  Does nothing else when not installed.
    """
    with _state.lock:  # lock rules 1 and 2
        active = _state.active_engine
        if active is not None:
            _remove_finders()
            active.deactivate()
            _state.active_engine = None
            _state.route = None
            _state.fast_getattr = False
        _release_unused_opt_in_engine()


def is_installed() -> bool:
    """Tell whether :func:`install` is in effect."""
    return _state.active_engine is not None


def engine(module: "ModuleType | None" = None) -> "str | None":
    """Return the name of the active engine (``"native"`` or ``"class"``), or None.

    Without *module*, the engine of :func:`install`; with it, the engine that
    calls that module's hooks now (through install() or :func:`enable`).
    """
    active = _state.active_engine
    if module is None:
        return None if active is None else active.name
    if active is not None and active.is_upgraded(module):
        return active.name
    opted = _engine_of_opt_in(module)
    return None if opted is None else opted.name


def _engine_of_opt_in(module: object) -> "Engine | None":
    """Return the engine calling *module*'s hooks because it opted in, or None."""
    engine = _state.opt_in_engine
    if engine is None or not _state.registered_opt_in(module):
        return None
    opted_in: ModuleType = module  # type: ignore[assignment]  # registered ones are modules
    return engine if engine.is_opted_in(opted_in) else None


def record_route(route: str) -> None:
    """Note how the hook was turned on (the runner, ``$PEP726HOOK``, pytest) while installed."""
    with _state.lock:  # lock rule 2: a few assignments
        if _state.active_engine is not None:
            _state.route = route


def fast_getattr_is_on() -> bool:
    """Tell whether the installation passes modules defining ``__getattr__`` to ``enable()``."""
    return _state.fast_getattr


def route() -> "str | None":
    """Return how the hook was turned on (``"install()"`` unless a route said), or None."""
    return _state.route


def upgrade(module: "ModuleType") -> "ModuleType":
    """Give one module object PEP 726 behaviour now, and return it.

    For modules that did not come through the import system (``types.ModuleType``
    objects, ``__main__`` set up by hand) or that defined their hooks after
    being imported.  A module opted in with :func:`enable` is returned as it
    is.  Raises RuntimeError when not installed and TypeError when *module* is
    not a module.
    """
    # By the real type: isinstance would run a placeholder's __getattribute__.
    if not is_module(module):
        raise TypeError(f"upgrade() needs a module, not {type(module).__name__}")
    active = _state.active_engine
    if active is None:
        if _engine_of_opt_in(module) is not None:
            return module
        raise RuntimeError(
            "pep726hook is not installed; call pep726hook.install() first, or have the "
            "module opt itself in with pep726hook.enable(__name__)"
        )
    active.upgrade(module)
    return module


def is_upgraded(module: "ModuleType") -> bool:
    """Tell whether stores and deletions on *module* call its hooks right now."""
    return engine(module) is not None


def ensure_finder_first() -> bool:
    """Move our finder back to the front of ``sys.meta_path`` (pytest inserts its own there).

    Returns whether the finder is installed.
    """
    from . import _meta_path

    with _state.lock:  # lock rule 2
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
    # Called from find_spec(), with the import system's locks held: lock
    # rule 3, only try the lock.  A later import retries.
    lock = _state.lock
    if not lock.acquire(blocking=False):
        return
    try:
        engine = _state.active_engine
        lists = _lists
        if engine is None or _loading is None or finder.engine is not _loading or lists is None:
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
        modules = list(sys.modules.values())
        left = engine.upgrade_existing(modules) if upgrades_modules(engine) else []
        fast_getattr = _state.fast_getattr and not upgrades_modules(engine)
    finally:
        lock.release()
    if not compose:
        return
    for module in left:
        # Classes are composed without the lock (lock rule 1), as upgrade()
        # does.  Still inside find_spec(), though, which CPython calls holding
        # its global import lock: a metaclass that waits there for another
        # thread's import still hangs.
        engine.upgrade(module)
    if fast_getattr:
        # The modules imported past the finder: enable() takes the lock
        # itself (and may compose a class), so not under ours either.
        from ._fast_getattr import enable_existing

        enable_existing(modules)


def _meta_path_dropped(finder: "Pep726Finder") -> None:
    # The FinderFirstList of sys.meta_path was freed, most likely because the
    # program bound another list there.  Runs as a finalizer, anywhere: never
    # waits (lock rule 3) and runs no user code (no class is composed).
    if getattr(sys.meta_path, "finder", None) is finder:
        return  # still ours (our own rebinding, or a concatenation of it)
    _reclaim_front(finder, compose=False)


def _remove_finders() -> None:
    # Any instance counts, including one left by an earlier copy of this
    # package, so that activation stays idempotent (site runs a venv's .pth
    # line twice before 3.15).  A new list, never an edit (see _state).
    global _loading
    meta_path = _in_place_order(sys.meta_path)
    sys.meta_path = [f for f in meta_path if type(f).__name__ != _FINDER_CLASS_NAME]
    _loading = None


def _in_place_order(meta_path: "Iterable[Any]") -> "list[Any]":
    # Iterating a FinderFirstList gives the walk order: copied as it stands.
    return list.copy(meta_path) if isinstance(meta_path, list) else list(meta_path)

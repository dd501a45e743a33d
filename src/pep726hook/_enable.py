"""A module opting itself in to PEP 726: ``pep726hook.enable(__name__)``.

For libraries, which cannot ask their users to start Python with the hook on.
No finder is installed and no other module's import is touched: the native
engine's patch of the module type (process-wide, but inert for every module
whose namespace defines no hook) or, where it cannot run, the class engine for
this one module.

The rules against the process-wide hook (:mod:`._install`):

* the engine is the one already serving opted-in modules, else the one the
  process-wide hook uses, else chosen as ``install()`` chooses
  (``$PEP726HOOK_ENGINE``, else ``auto``), so the two never differ;
* ``install()`` afterwards uses that engine for ``auto`` and refuses any other;
* ``uninstall()`` leaves opted-in modules hooked: it keeps the native patch
  while an opted-in module is alive, and the class engine puts back only the
  modules it upgraded itself (opted-in ones have a class it does not know).
"""

from __future__ import annotations

import _warnings
import _weakref
import sys

from . import _install as _installation
from ._class_engine import (
    _NO_HOOK,
    HookAwareModule,
    _hook_of,
    _is_lazy_module_class,
    _module_setattr,
    composed_class,
    is_module,
    original_class_of,
    register_mixin,
    stored_composition,
)
from ._engines import (
    EngineUnavailableError,
    create_engine,
    native_unavailable_reason,
    requested_engine_name,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType
    from typing import Any, Callable
    from weakref import ReferenceType

    from ._engines import Engine
    from ._native_engine import NativeEngine
else:
    ModuleType = type(sys)

_namespace_of: Callable[[ModuleType], dict[str, Any]] = vars(ModuleType)["__dict__"].__get__
_set_class_bypassing_hooks: Callable[[object, str, object], None] = object.__setattr__


class OptedInModule(HookAwareModule):
    """The class engine's class for a module that opted in with :func:`enable`.

    It behaves as :class:`HookAwareModule`, but the class engine of the
    process-wide hook does not know it as one of its own compositions, so
    neither its ``settle()`` (a module with no hook yet) nor ``uninstall()``
    ever puts such a module back on its original class.
    """

    __slots__ = ()

    def __setattr__(self, name: str, value: Any) -> None:
        # Written out rather than delegating to HookAwareModule.__setattr__, so
        # that a hook is called from exactly as deep as under install().
        hook = _hook_of(self, "__setattr__")
        if hook is not _NO_HOOK:
            hook(name, value)
            return
        if name == "__class__" and issubclass(type(value), type) and issubclass(value, ModuleType):
            # The fallback of the library pattern (README "For library
            # authors") assigns its own class: it must stay opted in.
            value = opted_in_class_for(value)
        try:
            store = super(HookAwareModule, self).__setattr__
        except TypeError:
            # Put on another class by another thread since this call began,
            # as in HookAwareModule.__setattr__ (issue 13, finding 6).
            store = _module_setattr.__get__(self)
        store(name, value)


OptedInModule.__name__ = OptedInModule.__qualname__ = ModuleType.__name__
# Findable under that name, as HookAwareModule is: pickle refers to the class
# of an opted-in module by name (issue 13, finding 16).
module = OptedInModule
register_mixin(OptedInModule, "opted_in")


def opted_in_class_for(base: type) -> type:
    """Return the opted-in class for a module whose class is *base*.

    ``class X(X, OptedInModule)`` for a ``ModuleType`` subclass ``X``, made once
    per base while in use (the class engine's weak cache), so ``X.__setattr__``
    runs first and reaches the module hook through ``super()``, as under the
    process-wide class engine.
    """
    found = composed_opted_in_class_for(base)
    return composed_class(original_class_of(base), OptedInModule) if found is None else found


def composed_opted_in_class_for(base: type) -> type | None:
    """Return :func:`opted_in_class_for` *base* if it needs no composing now, else None.

    Runs no user code, so it may be called under the install lock.
    """
    if issubclass(base, OptedInModule):
        return base
    base = original_class_of(base)
    return OptedInModule if base is ModuleType else stored_composition(base, OptedInModule)


# id(module) -> weak reference to each module that opted in, and the engine
# they share.  Kept small and read without the lock on the fast path.
_opted_in: dict[int, ReferenceType[ModuleType]] = {}
_engine: Engine | None = None


def enable(module: str | ModuleType) -> ModuleType:
    """Make *module* call its own ``__setattr__``/``__delattr__`` from now on; return it.

    Meant for a library, about itself, in any process however it was started::

        def __setattr__(name, value): ...

        import pep726hook
        pep726hook.enable(__name__)

    *module* is a name in ``sys.modules`` or a module object.  Stores after the
    call go through the hooks, also later in the module body.  A module that
    defines no hook yet stays enabled: hooks are looked up at every store.
    Uses the native engine where it can run (reads stay as fast as on a plain
    module) and otherwise the class engine for this module only; installs no
    finder.  Idempotent and thread-safe.

    The engine is the one opted-in modules or :func:`install` already use,
    else ``$PEP726HOOK_ENGINE``, else ``auto``; a variable naming an unknown
    engine or one that cannot run here gives a RuntimeWarning and ``auto``.

    Raises TypeError when *module* is not a module or a name, and ValueError
    for a name not in ``sys.modules``.
    """
    target = _module_named(module)
    ref = _opted_in.get(id(target))
    if ref is not None and ref() is target and _serves(target):
        return target
    # The process-wide lock: engine choice and the native patch must agree
    # with a concurrent install()/uninstall().  enable() runs inside a module
    # body, under that module's import lock, so nothing under _lock may wait
    # for an import another thread is running: such a thread may be in a
    # module body that calls enable() and waits here (deadlock).  Hence no
    # warning is issued under the lock: warnings.showwarning can be anyone's
    # code, and a handler that imports deadlocked (tests/test_enable.py).
    # Nor is a class composed under it: that runs its metaclass and
    # __init_subclass__, which may import as well.
    refused_variable: EngineUnavailableError | ValueError | None = None
    composed: type | None = None  # alive until the module has it (the cache is weak)
    while True:
        with _installation._lock:
            engine, refused = _engine_for_enable()
            refused_variable = refused_variable or refused
            if engine.name == "native":
                engine.upgrade(target)
                base = None
            else:
                base = _upgrade_with_class(target)
            if base is None:
                _register(target)
                break
        # Outside the lock; a failing metaclass raises here with *target*
        # untouched.  Then everything is checked again under the lock.
        composed = opted_in_class_for(base)
    del composed
    if refused_variable is not None:
        _warn_never_failing(
            f"pep726hook.enable(): {refused_variable}; using the 'auto' engine", stacklevel=3
        )
    return target


def _register(module: ModuleType) -> None:
    key = id(module)
    _opted_in[key] = _weakref.ref(module, lambda _ref: _opted_in.pop(key, None))


def _warn_never_failing(message: str, stacklevel: int) -> None:
    # The variable is the user's, not the library's: as with the .pth line, a
    # bad value is reported and never fails the library's import, not even
    # when -W error makes the warning an exception.
    try:
        _warnings.warn(message, RuntimeWarning, stacklevel=stacklevel)
    except Exception:
        if sys.stderr is not None:
            sys.stderr.write(f"RuntimeWarning (not raised during an import): {message}\n")


def _module_named(module: str | ModuleType) -> ModuleType:
    if is_module(module):
        return module
    if not isinstance(module, str):
        raise TypeError(f"enable() needs a module or its name, not {type(module).__name__}")
    found = sys.modules.get(module)
    if not is_module(found):
        raise ValueError(
            f"enable({module!r}): sys.modules has no module of that name; call "
            "pep726hook.enable(__name__) from the module's own code, or pass the module object"
        )
    return found


def _serves(module: ModuleType) -> bool:
    engine = _engine
    return engine is not None and (
        engine.name == "native" or issubclass(type(module), OptedInModule)
    )


def _engine_for_enable() -> tuple[Engine, EngineUnavailableError | ValueError | None]:
    """Return the engine opted-in modules use, activating it the first time.

    Also returns the error of a ``$PEP726HOOK_ENGINE`` that could not be used,
    for the caller to report once it has released the lock.
    """
    global _engine
    active = _installation._active_engine
    if _engine is not None and (_live_modules() or active is None or active.name == _engine.name):
        return _engine, None
    if active is not None:
        _engine = active
        return active, None
    refused_variable: EngineUnavailableError | ValueError | None = None
    try:
        engine = create_engine(requested_engine_name(None))
    except (ValueError, EngineUnavailableError) as error:
        refused_variable = error
        engine = create_engine("auto")
    if engine.name == "native":
        # Process-wide, and idempotent if a sub-interpreter's main
        # interpreter patched already; kept until no opted-in module is left.
        engine.activate()
    _engine = engine
    return engine, refused_variable


def _upgrade_with_class(module: ModuleType) -> type | None:
    # Returns None, or the class to compose an opted-in class from first.
    current = type(module)
    base = current
    if _is_lazy_module_class(current):
        # Enabled from the body of a lazily loaded module (3.12.3+): LazyLoader
        # puts loader_state["__class__"] back unless the class changed, so the
        # opted-in class is built on that one (see ClassEngine.begin).
        spec: Any = _namespace_of(module).get("__spec__")
        base = spec.loader_state["__class__"]
    cls = composed_opted_in_class_for(base)
    if cls is None:
        return base
    if current is not cls:
        _set_class_bypassing_hooks(module, "__class__", cls)
    return None


def _live_modules() -> list[ModuleType]:
    modules = [ref() for ref in list(_opted_in.values())]
    return [m for m in modules if m is not None]


def opted_in_engine() -> str | None:
    """Return the engine name opted-in modules use while any is alive, else None."""
    engine = _engine
    return engine.name if engine is not None and _live_modules() else None


def engine_for_install(requested: str) -> str:
    """Return the engine ``install(requested)`` must use given the opted-in modules.

    Raises EngineUnavailableError when *requested* names the other engine:
    the two engines never serve one process together.
    """
    opted = opted_in_engine()
    if opted is None or requested in ("auto", opted):
        return requested if opted is None else opted
    if requested == "native":
        # Where native cannot run at all, that is the news, not the conflict.
        reason = native_unavailable_reason()
        if reason is not None:
            raise EngineUnavailableError(reason)
    names = sorted({str(_namespace_of(m).get("__name__")) for m in _live_modules()})
    shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    raise EngineUnavailableError(
        f"modules opted in with pep726hook.enable() ({shown}) use the {opted!r} engine, "
        f"and the two engines never mix in one process; install the {opted!r} or 'auto' "
        f"engine instead of {requested!r}, or, to have {requested!r} everywhere, set "
        f"$PEP726HOOK_ENGINE={requested} before those modules are imported"
    )


def keeps_native_patch() -> bool:
    """Tell whether ``uninstall()`` must leave the native patch for opted-in modules."""
    return opted_in_engine() == "native"


def release_unused() -> None:
    """Forget the engine of opted-in modules once none is alive, undoing its patch.

    Called by ``uninstall()`` after it has finished, under its lock: a native
    patch made by :func:`enable` is undone here when neither the process-wide
    hook nor any opted-in module needs it.
    """
    global _engine
    engine = _engine
    if engine is None or _live_modules():
        return
    _engine = None
    if engine.name == "native" and _installation._active_engine is None:
        engine.deactivate()


def is_opted_in(module: object) -> bool:
    """Tell whether *module* called :func:`enable` and its hooks are served."""
    if not is_module(module):
        return False
    ref = _opted_in.get(id(module))
    return ref is not None and ref() is module and _serves(module)


def serving_engine(module: ModuleType) -> str | None:
    """Return the engine calling *module*'s hooks through an opt-in, or None."""
    engine = _engine
    if engine is None:
        return None
    if engine.name == "native":
        native: NativeEngine = engine  # type: ignore[assignment]
        return "native" if native.is_upgraded(module) else None
    return "class" if issubclass(type(module), OptedInModule) else None

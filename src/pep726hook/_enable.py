"""A module opting itself in to PEP 726: ``pep726hook.enable(__name__)``.

For libraries, which cannot ask their users to start Python with the hook on.
The opted-in module calls its hooks, and no other module does, under every
engine, unless the process-wide hook is on as well (then every module does).
No finder is installed and no other module's import is touched: each engine
opts one module in its own way (``Engine.opt_in``).

How ``enable()`` and the process-wide hook meet (which engine, what
``install()`` and ``uninstall()`` do afterwards, what ``engine(module)`` says)
is one table in docs/activation.md, "enable() and the process-wide hook".
"""

import os
import sys

from . import _ENGINE_VARIABLE as ENGINE_VARIABLE
from . import _state
from ._state import is_module

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType
    from typing import Any, Callable, List, Tuple

    from ._engine_protocols import Engine
    from ._engines import EngineUnavailableError

    MarkerCalls = Tuple[Callable[[ModuleType], List[Any]], Callable[[ModuleType], None]]

# The deprecations package's two calls for the deprecated() markers in a
# module's namespace (register_markers): the markers (refusing a dunder
# name), and their conversion into deprecations.  None until it loads: no
# marker exists before, and a library without deprecations never loads it.
_marker_calls: "MarkerCalls | None" = None


def register_markers(
    markers_in: "Callable[[ModuleType], List[Any]]", convert_markers: "Callable[[ModuleType], None]"
) -> None:
    """Have :func:`enable` call these for the ``deprecated()`` markers in a module's namespace.

    ``markers_in(module)`` returns them, raising ValueError before anything
    changes for one under a dunder name; ``convert_markers(module)`` turns
    them into deprecations once the module is opted in.  Called once, by
    the deprecations package as it loads.
    """
    global _marker_calls
    _marker_calls = (markers_in, convert_markers)


def enable(module: "str | ModuleType", *, fast_getattr: "bool | None" = None) -> "ModuleType":
    """Do all of :func:`pep726hook.enable`, whose docstring says what it does.

    The package's ``enable()`` serves a process's first opt-ins under the
    native engine through the extension alone and comes here for the rest:
    another engine, *fast_getattr*, the process-wide hook, markers, errors.
    """
    if fast_getattr is not None and not isinstance(fast_getattr, bool):
        raise TypeError(f"enable(): fast_getattr must be True, False or None, not {fast_getattr!r}")
    target = module_named(module, "enable()")
    # Markers exist only once the deprecations package is loaded: a library
    # without deprecations never loads it, nor scans its namespace.
    marker_calls = _marker_calls
    markers = [] if marker_calls is None else marker_calls[0](target)
    if not needs_opt_in(target, fast_getattr, bool(markers)):
        return target
    refused_variable = opt_in(target, fast_getattr)
    if marker_calls is not None:
        # The markers become deprecations: the module gets the class that
        # serves them and the namespace holds their values again.
        marker_calls[1](target)
    if refused_variable is not None:
        report_refused_variable(refused_variable)
    return target


def needs_opt_in(target: "ModuleType", fast_getattr: "bool | None", has_markers: bool) -> bool:
    """Tell whether :func:`enable` has anything to do for the module *target*.

    Not when it is opted in already, has no marker to convert, and
    *fast_getattr* and the fast-getattr switch ask for nothing.
    """
    return has_markers or fast_getattr is not None or _state.fast_getattr or not is_opted_in(target)


def opt_in(
    target: "ModuleType", fast_getattr: "bool | None" = None
) -> "EngineUnavailableError | ValueError | None":
    """Opt the module *target* in as :func:`enable` does, markers aside.

    Returns the error of a ``$PEP726HOOK_ENGINE`` that could not be used,
    for the caller to pass to :func:`report_refused_variable` once it is
    done, or None.
    """
    refused_variable: EngineUnavailableError | ValueError | None = None
    pending: object = None  # alive until the module has it (the class cache is weak)
    while True:
        # Lock rule 1: enable() runs inside a module body, under that module's
        # import lock, so nothing below warns or composes a class.
        with _state.lock:
            engine, refused = _engine_for_enable()
            refused_variable = refused_variable or refused
            work = engine.opt_in(target, fast_getattr)
            if work is None:
                _state.register_opt_in(target)
                break
        # Outside the lock; a failing metaclass raises here with *target*
        # untouched.  Then everything is checked again under the lock.
        pending = work()
    del pending
    return refused_variable


def report_refused_variable(refused_variable: "EngineUnavailableError | ValueError") -> None:
    """Warn that ``$PEP726HOOK_ENGINE`` could not be used and ``enable()`` took ``auto``."""
    # The variable is the user's, not the library's: as with the .pth
    # line, a bad value is reported and never fails the library's import.
    from ._engines import warn_about_environment

    warn_about_environment(
        f"{refused_variable}; pep726hook.enable(), called by a library for itself, "
        "used the 'auto' engine instead"
    )


def module_named(module: "str | ModuleType", caller: str) -> "ModuleType":
    """Return the module *module* is or names in ``sys.modules``; *caller* names the function.

    Raises TypeError for anything else, ValueError for a name not in ``sys.modules``.
    """
    if is_module(module):
        return module
    if not isinstance(module, str):
        raise TypeError(f"{caller} needs a module or its name, not {type(module).__name__}")
    found = sys.modules.get(module)
    if not is_module(found):
        raise ValueError(
            f"{caller}: sys.modules has no module of that name ({module!r}); pass __name__ "
            "from the module's own code, or the module object"
        )
    return found


def _engine_for_enable() -> "tuple[Engine, EngineUnavailableError | ValueError | None]":
    """Return the engine opted-in modules use, choosing it the first time.

    Also returns the error of a ``$PEP726HOOK_ENGINE`` that could not be used,
    for the caller to report once it has released the lock.  Under the lock.
    """
    engine = _state.opt_in_engine
    active = _state.active_engine
    if engine is not None and (
        _state.live_opt_ins() or active is None or active.name == engine.name
    ):
        return engine, None
    if active is not None:
        _state.opt_in_engine = active
        return active, None
    engine = _native_engine_alone()
    if engine is not None:
        _state.opt_in_engine = engine
        return engine, None
    from ._engines import EngineUnavailableError, create_engine, engine_from_environment

    refused_variable: EngineUnavailableError | ValueError | None = None
    try:
        engine = create_engine(engine_from_environment())
    except (ValueError, EngineUnavailableError) as error:
        refused_variable = error
        engine = create_engine("auto")
    _state.opt_in_engine = engine
    return engine, refused_variable


def _native_engine_alone() -> "Engine | None":
    """Return the native engine where ``$PEP726HOOK_ENGINE`` leaves it the choice and it can run.

    What ``create_engine(engine_from_environment())`` returns then, without
    importing the module that chooses engines by name (about 0.7M
    instructions, 1.6 % of a start-up, of a library's first ``enable()`` on
    CPython 3.12).  None otherwise: that module decides and explains.
    """
    if os.environ.get(ENGINE_VARIABLE, "").strip().lower() not in ("", "auto", "native"):
        return None
    from ._native_engine import NativeEngine, unavailable_reason

    return NativeEngine() if unavailable_reason() is None else None


def opted_in_engine() -> "str | None":
    """Return the engine name opted-in modules use while any is alive, else None."""
    engine = _state.opt_in_engine_in_use()
    return None if engine is None else engine.name


def is_opted_in(module: object) -> bool:
    """Tell whether *module* called :func:`enable` and its hooks are served."""
    engine = _state.opt_in_engine
    return (
        engine is not None
        and is_module(module)
        and _state.registered_opt_in(module)
        and engine.is_opted_in(module)
    )


def _opted_in_module_class(name: str) -> type:
    # Pickle finds the class of an opted-in module as pep726hook._enable.module.
    # Loaded on demand: the native engine never needs the class engine.
    if name != "module":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from ._class_engine import OptedInModule

    return OptedInModule


if not TYPE_CHECKING:
    # Module __getattr__ (PEP 562), hidden from mypy.
    __getattr__ = _opted_in_module_class

"""The engines: choosing one by name (``auto``, ``native``, ``class``), and what each can do.

What every engine offers (``Engine``, ``UpgradingEngine``) is written down
for type checkers in :mod:`._engine_protocols`.
"""

import _thread
import _warnings
import os
import sys

from . import _ENGINE_VARIABLE as ENGINE_VARIABLE
from ._compat import NATIVE_ENGINE_IS_BUILT, TYPE_DICTS_ARE_PER_INTERPRETER

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TypeGuard

    # What the engines offer lives in a module never imported at run time:
    # compiled here, even under this `if`, the protocols cost the class
    # engine's PEP726HOOK=1 start-up 0.12M instructions (0.2 %) to unmarshal.
    from ._engine_protocols import Engine, UpgradingEngine


ENGINE_NAMES = ("auto", "native", "class")


def upgrades_modules(engine: "Engine") -> "TypeGuard[UpgradingEngine]":
    """Tell whether *engine* upgrades modules one by one, behind the finder."""
    return engine.uses_finder


class EngineUnavailableError(RuntimeError):
    """The engine asked for cannot run in this interpreter; the message says why."""


# _native_engine imports whatever interpreter this is: it catches the C
# extension's ImportError and reports it through unavailable_reason().


def native_unavailable_reason() -> "str | None":
    """Return why the native engine cannot run here, or None if it can."""
    from . import _native_engine

    reason: str | None = _native_engine.unavailable_reason()
    return reason


def _native_slot_is_patched() -> bool:
    if not _native_slot_may_be_patched():
        return False
    from . import _native_engine

    return _native_engine.slot_is_patched()


# What CPython keeps under "__setattr__" in ModuleType's dict (before 3.13;
# nothing from 3.13 on): a slot wrapper, as in object's.
_SLOT_WRAPPER = type(vars(object)["__setattr__"])


def _native_slot_may_be_patched() -> bool:
    """Tell, without loading the C extension, whether the native engine may have patched.

    While the module type is patched, the native engine keeps descriptors of
    its own under ``__setattr__`` in the main interpreter's ``ModuleType``
    dict, which every interpreter shares before 3.12: there, CPython's own
    entry proves that nothing is patched.  A sub-interpreter of 3.12+ has a
    dict of its own, filled when it was created, and asks the extension.
    This spares the class engine's ``PEP726HOOK=1`` start-up the C
    extension and the native engine's module (2 % of ``python -c pass``).
    """
    if not NATIVE_ENGINE_IS_BUILT:
        return False
    entry = vars(type(sys)).get("__setattr__")
    if entry is not None and type(entry) is not _SLOT_WRAPPER:
        return True
    if not TYPE_DICTS_ARE_PER_INTERPRETER:
        return False
    is_main_interpreter = getattr(_thread, "_is_main_interpreter", None)
    return is_main_interpreter is None or not is_main_interpreter()


def available_engines() -> "tuple[str, ...]":
    """Return the names of the engines that can run in this interpreter."""
    if native_unavailable_reason() is None:
        return ("native", "class")
    return ("class",)


def normalize_engine_name(value: str, origin: str = "engine") -> str:
    """Return the engine *value* names, ignoring case and surrounding blanks.

    The one spelling rule of every route (``install()``, ``--engine``,
    ``$PEP726HOOK_ENGINE``, the pytest options).  Raises ValueError, naming
    *origin*, when *value* names no engine.
    """
    name = value.strip().lower() if isinstance(value, str) else value
    if name not in ENGINE_NAMES:
        expected = ", ".join(repr(n) for n in ENGINE_NAMES)
        raise ValueError(f"{origin} must be one of {expected}, not {value!r}")
    return name


# How every route names the variable in its messages: a user who never set it
# (a parent process, a CI configuration, a shell profile did) learns what to
# look for, and where.
ENGINE_VARIABLE_ORIGIN = f"the environment variable {ENGINE_VARIABLE}"


def requested_engine_name(name: "str | None") -> str:
    """Return *name*, or the engine named by ``$PEP726HOOK_ENGINE``, or ``auto``; normalised.

    Raises ValueError for a name, or a variable, that names no engine.
    """
    if name is not None:
        return normalize_engine_name(name)
    value = os.environ.get(ENGINE_VARIABLE, "")
    if not value.strip():
        return "auto"
    return normalize_engine_name(value, ENGINE_VARIABLE_ORIGIN)


def engine_from_environment() -> str:
    """Return the engine ``$PEP726HOOK_ENGINE`` asks for (``auto`` when unset), if it can run.

    Raises ValueError when the variable names no engine and
    EngineUnavailableError when it names the native engine where that cannot
    run; both messages name the variable and its value.
    """
    name = requested_engine_name(None)
    if name == "native":
        reason = native_unavailable_reason()
        if reason is not None:
            raise EngineUnavailableError(
                f"{ENGINE_VARIABLE_ORIGIN} is {os.environ.get(ENGINE_VARIABLE)!r}, "
                f"and the native engine cannot run here: {reason}"
            )
    return name


def create_engine(name: str) -> "Engine":
    """Return a new engine for a validated *name*."""
    if name == "class":
        if _native_slot_is_patched():
            # Two engines in one process would run hooks twice or in a
            # different order: a sub-interpreter whose main interpreter
            # patched the module type must attach to that patch.
            raise EngineUnavailableError(
                "the native engine has patched the module type for this whole process "
                "(installed by the main interpreter), so the class engine cannot be used "
                "on top of it; use engine='native' or 'auto'"
            )
        return _class_engine()
    reason = native_unavailable_reason()
    if reason is None:
        from ._native_engine import NativeEngine

        native: Engine = NativeEngine()
        return native
    if name == "native":
        raise EngineUnavailableError(reason)
    return _class_engine()


def _class_engine() -> "Engine":
    # Imported only when chosen: start-up activation with the native engine
    # then never loads the class engine and the finder.
    from ._class_engine import ClassEngine

    return ClassEngine()


# The registry of warnings about the environment (see warn_about_environment).
_environment_warnings: "dict[str | tuple[str, type[Warning], int], int]" = {}


def warn_about_environment(message: str) -> None:
    """Issue a RuntimeWarning about an environment variable, once per process by default.

    No line of code can fix a variable, so the warning is attributed to the
    environment, as module ``pep726hook`` (what ``-W ignore:::pep726hook``
    names), rather than to the line of a library that happened to meet it:
    Python's default filters then show it once in a process, however many
    libraries meet it.  Never fails the import under way (see
    :func:`warn_never_failing`).  Never call it under the install lock.
    """
    package = __name__.rpartition(".")[0]
    try:
        _warnings.warn_explicit(
            message,
            RuntimeWarning,
            "<environment>",
            0,
            module=package,
            registry=_environment_warnings,
        )
    except Exception:
        if sys.stderr is not None:
            sys.stderr.write(f"RuntimeWarning (not raised during an import): {message}\n")


def warn_never_failing(message: str, stacklevel: int) -> None:
    """Issue a RuntimeWarning that must not fail the import under way.

    For pep726hook's own trouble met during someone's import (a module it
    could not prepare, a bad ``$PEP726HOOK_ENGINE`` seen by ``enable()``): a
    filter such as ``-W error`` turns the warning into an exception, which,
    raised there, would fail that import after all or replace the exception of
    a failing module body.  It is written to stderr instead, as CPython does
    for "Exception ignored".  *stacklevel* counts from the caller of this
    function.  Never call it under the install lock (lock rule 1).
    """
    try:
        _warnings.warn(message, RuntimeWarning, stacklevel=stacklevel + 1)
    except Exception:
        if sys.stderr is not None:
            sys.stderr.write(f"RuntimeWarning (not raised during an import): {message}\n")

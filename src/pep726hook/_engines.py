"""Choosing an engine by name: ``auto``, ``native`` or ``class``."""

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType
    from typing import Iterable, Protocol

    class Engine(Protocol):
        """What an engine offers the installer."""

        name: str
        uses_finder: bool

        def activate(self) -> None: ...
        def deactivate(self) -> None: ...
        def upgrade(self, module: ModuleType) -> None: ...
        def downgrade(self, module: ModuleType) -> None: ...
        def is_upgraded(self, module: ModuleType) -> bool: ...
        def upgrade_if_composed(self, module: ModuleType) -> bool: ...
        def upgrade_existing(self, modules: Iterable[object]) -> list[ModuleType]: ...
        def needing_composition(self, modules: Iterable[object]) -> list[ModuleType]: ...
        def compose_for(self, modules: Iterable[ModuleType]) -> list[type]: ...
        def begin(self, module: object) -> type | None: ...
        def abort(self, module: ModuleType, class_before: type) -> None: ...
        def settle(self, module: object) -> None: ...


ENGINE_NAMES = ("auto", "native", "class")
ENGINE_VARIABLE = "PEP726HOOK_ENGINE"


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
    from . import _native_engine

    return _native_engine.slot_is_patched()


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


def requested_engine_name(name: "str | None") -> str:
    """Return *name*, or the engine named by ``$PEP726HOOK_ENGINE``, or ``auto``; normalised."""
    if name is not None:
        return normalize_engine_name(name)
    value = os.environ.get(ENGINE_VARIABLE, "")
    if not value.strip():
        return "auto"
    return normalize_engine_name(value, f"${ENGINE_VARIABLE}")


def create_engine(name: str) -> "Engine":
    """Return a new engine for a validated *name*."""
    if name == "class":
        if _native_slot_is_patched():
            # Two engines in one process would run hooks twice or in a
            # different order: a sub-interpreter whose main interpreter
            # patched the module type must attach to that patch (issue 3, 2c).
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
    # then never loads the class engine and the finder (issue 14).
    from ._class_engine import ClassEngine

    return ClassEngine()

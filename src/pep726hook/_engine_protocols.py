"""What the engines offer, for type checkers only: never imported at run time.

:class:`Engine` is what every engine does for ``install()``, ``uninstall()``
and ``enable()``; :class:`UpgradingEngine` adds what an engine that upgrades
modules one by one behind the finder does (the class engine; the native engine
patches the module type and needs none of it).  The package's modules import
these names under ``if TYPE_CHECKING:`` only; kept out of :mod:`._engines`,
whose every compiled byte the class engine's ``PEP726HOOK=1`` start-up loads.
"""

from __future__ import annotations

from types import ModuleType
from typing import Callable, Iterable, Protocol


class Engine(Protocol):
    """What every engine offers ``install()``, ``uninstall()`` and ``enable()``."""

    name: str
    # True for an engine that upgrades modules one by one (UpgradingEngine).
    uses_finder: bool

    def activate(self) -> None:
        """Turn the process-wide hook on."""

    def deactivate(self) -> None:
        """Turn it off; opted-in modules keep their hooks."""

    def upgrade(self, module: ModuleType) -> None:
        """Give *module* its hooks now (``upgrade()``, ``__main__``); may run user code."""

    def is_upgraded(self, module: ModuleType) -> bool:
        """Tell whether stores on *module* call its hooks now, by any route."""

    def opt_in(
        self, module: ModuleType, fast_getattr: bool | None = None
    ) -> Callable[[], object] | None:
        """Give *module* its hooks whatever the process-wide hook does.

        *fast_getattr* is :func:`enable`'s (an engine may ignore it).
        Returns None when done, or work to run without the install lock
        (lock rule 1) before calling again.
        """

    def is_opted_in(self, module: ModuleType) -> bool:
        """Tell whether *module* has its hooks through :meth:`opt_in`."""

    def release_opt_ins(self) -> None:
        """Undo what opting in set up once no opted-in module is alive."""

    def release_held_getattr(self, module: ModuleType) -> None:
        """Put a PEP 562 ``__getattr__`` the engine holds outside *module*'s namespace back.

        Before *module* gets the deprecating class, whose reads look there.
        """


class LoadingEngine(Protocol):
    """What the finder needs from an engine: acting around a module's execution."""

    def begin(self, module: object) -> type | None:
        """Prepare *module* before its body runs; return the class to restore if it fails."""

    def abort(self, module: ModuleType, class_before: type) -> None:
        """Undo :meth:`begin` after the body failed."""

    def settle(self, module: object) -> None:
        """Decide, once the body ran, whether *module* keeps its hooks."""


class UpgradingEngine(Engine, LoadingEngine, Protocol):
    """An engine that upgrades modules one by one, behind the finder (the class engine)."""

    def upgrade_existing(self, modules: Iterable[object]) -> list[ModuleType]: ...
    def upgrade_if_composed(self, module: ModuleType) -> bool: ...
    def needing_composition(self, modules: Iterable[object]) -> list[ModuleType]: ...
    def compose_for(self, modules: Iterable[ModuleType]) -> list[type]: ...
    def downgrade(self, module: ModuleType) -> None: ...

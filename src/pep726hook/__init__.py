"""PEP 726 for the Pythons in use today: module ``__setattr__`` and ``__delattr__``.

With pep726hook installed, a module that defines top-level
``__setattr__(name, value)`` or ``__delattr__(name)`` has them called by
``mod.x = v``, ``setattr(mod, "x", v)``, ``del mod.x`` and ``delattr(mod, "x")``.

PYTEST_DONT_REWRITE: pytest marks every package that ships a pytest plugin for
assertion rewriting and warns when one was imported first, as this one is in a
process started with ``PEP726HOOK=1``; under ``filterwarnings = error`` that
warning stops the session (and every xdist worker).  This marker tells pytest
that the package is not meant to be rewritten.
"""

from ._engines import EngineUnavailableError, available_engines
from ._install import (
    Installation,
    engine,
    install,
    is_installed,
    is_upgraded,
    uninstall,
    upgrade,
)

__version__ = "0.1.0"

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ._enable import enable
else:

    def __getattr__(name: str) -> object:
        # enable() needs the class engine, which activation with the native
        # engine never loads (issue 14): its module is imported on first use.
        if name == "enable":
            from ._enable import enable

            globals()["enable"] = enable
            return enable
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


del TYPE_CHECKING

__all__ = [
    "EngineUnavailableError",
    "Installation",
    "__version__",
    "available_engines",
    "enable",
    "engine",
    "install",
    "is_installed",
    "is_upgraded",
    "uninstall",
    "upgrade",
]

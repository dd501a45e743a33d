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

from ._enable import enable
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

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

__version__ = "0.1.0"

# Each public name and the private module that defines it, imported on the
# name's first use: `import pep726hook` costs no more than an empty
# package, which is all the .pth line pays when $PEP726HOOK is set but off.
_SOURCES = {
    "EngineUnavailableError": "_engines",
    "available_engines": "_engines",
    "Installation": "_install",
    "engine": "_install",
    "install": "_install",
    "is_installed": "_install",
    "is_upgraded": "_install",
    "uninstall": "_install",
    "upgrade": "_install",
    "enable": "_enable",
}

TYPE_CHECKING = False
if TYPE_CHECKING:
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
else:

    def __getattr__(name: str) -> object:
        source = _SOURCES.get(name)
        if source is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        # Not importlib.import_module: importing importlib would be the
        # first standard-library .py import of many processes.
        value = getattr(__import__(source, globals(), None, [name], 1), name)
        globals()[name] = value
        return value

    def __dir__() -> "list[str]":
        return sorted({*globals(), *__all__})


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

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

# The environment variables of activation, named here, where every module of
# the package finds them at no cost: start-up imports only this module,
# _bootstrap and the C extension (each further module costs `python -c pass`
# about 0.8 %).  The .pth line and _pep726hook_startup, which import nothing
# before they know the hook is wanted, spell the first one out.
_ACTIVATION_VARIABLE = "PEP726HOOK"
_ENGINE_VARIABLE = "PEP726HOOK_ENGINE"
_FAST_GETATTR_VARIABLE = "PEP726HOOK_FAST_GETATTR"
# The spellings of an on/off variable ($PEP726HOOK, $PEP726HOOK_FAST_GETATTR),
# compared case-insensitively, surrounding blanks ignored.
_ON_VALUES = ("1", "true", "yes", "on")
_OFF_VALUES = ("", "0", "false", "no", "off")

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
    "DeprecatedValue": "_deprecation",
    "deprecate_attribute": "_deprecation",
    "deprecated": "_deprecation",
}

import os as _os  # noqa: E402 (after the docstring's names)
from _thread import RLock as _RLock  # noqa: E402

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable, List, Tuple

    _ForkGuard = Tuple[int, Callable[[], object], Callable[[], object], Callable[[], object]]

# A child process gets every lock as it was at the fork, and only the thread
# that forked: a lock another thread held then stays held for ever there.  So
# a fork waits until no other thread is importing one of the modules below
# (the first install() of a process imports them: a child forked meanwhile hung
# on that module's import lock), and then takes the locks the package's
# modules register here, lowest rank first.  Registered here rather
# than each with os.register_at_fork: a module imported while a fork waits
# for that import still has its locks taken by that same fork.
_import_lock = _RLock()
_fork_guards: "List[_ForkGuard]" = []
_taken_for_fork: "List[_ForkGuard]" = []


def _register_at_fork(
    rank: int,
    before: "Callable[[], object]",
    after_in_parent: "Callable[[], object]",
    after_in_child: "Callable[[], object]",
) -> None:
    """Have every fork() call *before*, then one of the others, with the package's import lock.

    Guards of a lower *rank* are taken first: the order in which the code
    that holds their locks takes them, whichever module was imported first.
    """
    guard = (rank, before, after_in_parent, after_in_child)
    # One slice assignment: a fork in another thread never sees a list being sorted.
    _fork_guards[:] = sorted([*_fork_guards, guard], key=lambda item: item[0])


def _before_fork() -> None:
    _import_lock.acquire()
    # Held now: no other thread changes these lists until the fork is over.
    # The imports under the lock run only the package's own module bodies,
    # which never wait for another thread.
    del _taken_for_fork[:]
    for guard in list(_fork_guards):
        guard[1]()
        _taken_for_fork.append(guard)


def _after_fork_in_parent() -> None:
    for guard in reversed(_taken_for_fork):
        guard[2]()
    del _taken_for_fork[:]
    _import_lock.release()


def _after_fork_in_child() -> None:
    global _import_lock
    # Every guard, taken or not: one registered while this fork waited for
    # its turn may have its lock held by another thread.
    for guard in reversed(_fork_guards):
        guard[3]()
    del _taken_for_fork[:]
    _import_lock = _RLock()


if hasattr(_os, "register_at_fork"):  # POSIX
    _os.register_at_fork(
        before=_before_fork,
        after_in_parent=_after_fork_in_parent,
        after_in_child=_after_fork_in_child,
    )
del _os

if TYPE_CHECKING:
    from ._deprecation import DeprecatedValue, deprecate_attribute, deprecated
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
        with _import_lock:
            value = getattr(__import__(source, globals(), None, [name], 1), name)
        globals()[name] = value
        return value

    def __dir__() -> "list[str]":
        return sorted({*globals(), *__all__})


del TYPE_CHECKING

__all__ = [
    "DeprecatedValue",
    "EngineUnavailableError",
    "Installation",
    "__version__",
    "available_engines",
    "deprecate_attribute",
    "deprecated",
    "enable",
    "engine",
    "install",
    "is_installed",
    "is_upgraded",
    "uninstall",
    "upgrade",
]

"""PEP 726 for the Pythons in use today: module ``__setattr__`` and ``__delattr__``.

With pep726hook installed, a module that defines top-level
``__setattr__(name, value)`` or ``__delattr__(name)`` has them called by
``mod.x = v``, ``setattr(mod, "x", v)``, ``del mod.x`` and ``delattr(mod, "x")``.

PYTEST_DONT_REWRITE
"""

# The docstring's last line is for pytest, which looks for that marker anywhere
# in a module's docstring: pytest marks every package that ships a pytest
# plugin for assertion rewriting and warns when one was imported first, as
# this one is in a process started with PEP726HOOK=1; under
# `filterwarnings = error` that warning stops the session (and every xdist
# worker).  The marker says the package is not meant to be rewritten.  The
# documentation site leaves the line out (docs/conf.py).

# Nothing is released yet: the next release is 0.1.0, and the commit that
# makes it drops ".dev0" (docs/development.md, "Releasing").
__version__ = "0.1.0.dev0"

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


def _switch_spelling(value: "str | None") -> "bool | None":
    """Tell whether an on/off variable's *value* is on; None when it is neither spelling.

    An unset variable (None) is off.
    """
    if value is None:
        return False
    value = value.strip().lower()
    if value in _ON_VALUES:
        return True
    if value in _OFF_VALUES:
        return False
    return None


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
    "DeprecatedValue": "_deprecations._api",
    "deprecate_attribute": "_deprecations._api",
    "deprecated": "_deprecations._api",
    "lazy_attribute": "_deprecations._declarations",
    "removed_attribute": "_deprecations._declarations",
    "declared_getattr": "_deprecations._declared_getattr",
    "ScanFinding": "_scan",
    "ScanRelated": "_scan",
    "ScanResult": "_scan",
    "ScanSkipped": "_scan",
    "scan": "_scan",
}

from _thread import RLock as _RLock  # noqa: E402 (after the docstring's names)
from _thread import get_ident as _get_ident  # noqa: E402

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, List, Optional, Tuple

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
# The thread whose fork holds the locks, between the handlers before and after it.
_forking_thread: "Optional[int]" = None
# The fork handlers are registered with os.register_at_fork only when first
# needed (the first lazy import, the first guard), and hold this module's
# handlers weakly (see there).
_fork_handlers_registered = False


def _register_fork_handlers() -> None:
    """Have every fork take the package's locks; before any of them is first taken.

    Two threads may both register here: the handlers then run twice a fork,
    and the second run of each does nothing.
    """
    global _fork_handlers_registered
    if _fork_handlers_registered:
        return
    import os
    from _weakref import ref

    # The interpreter keeps the callables given to os.register_at_fork until
    # its very end, and a function keeps its module's namespace: through this
    # one, every module of the package would outlive sys.modules, and
    # finalisation would clear them name by name in every process the package
    # started in (+0.7M instructions, about 1.4 % of `python -c pass`, with
    # PEP726HOOK=1 and the class engine on CPython 3.12).  So the interpreter
    # gets copies of call_if_alive, each with an empty namespace of its own and
    # a weak reference to one handler: once the package's modules are gone, a
    # fork has no lock of theirs to take.
    def call_if_alive(weak_handler: "Callable[[], Optional[Callable[[], object]]]") -> None:
        alive = weak_handler()
        if alive is not None:
            alive()

    copy: Any = type(call_if_alive)  # types.FunctionType, not imported at start-up
    code = call_if_alive.__code__
    if hasattr(os, "register_at_fork"):  # POSIX
        os.register_at_fork(
            before=copy(code, {}, None, (ref(_before_fork),)),
            after_in_parent=copy(code, {}, None, (ref(_after_fork_in_parent),)),
            after_in_child=copy(code, {}, None, (ref(_after_fork_in_child),)),
        )
    # Set only now: no thread takes a lock before the handlers are in place.
    _fork_handlers_registered = True


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
    _register_fork_handlers()
    guard = (rank, before, after_in_parent, after_in_child)
    # One slice assignment: a fork in another thread never sees a list being sorted.
    _fork_guards[:] = sorted([*_fork_guards, guard], key=lambda item: item[0])


def _before_fork() -> None:
    global _forking_thread
    if _forking_thread == _get_ident():
        return  # registered twice: the first run took the locks
    _import_lock.acquire()
    _forking_thread = _get_ident()
    # Held now: no other thread changes these lists until the fork is over.
    # The imports under the lock run only the package's own module bodies,
    # which never wait for another thread.
    del _taken_for_fork[:]
    for guard in list(_fork_guards):
        guard[1]()
        _taken_for_fork.append(guard)


def _after_fork_in_parent() -> None:
    global _forking_thread
    # Not this thread's fork, or registered twice: nothing taken for it here.
    # (Handlers registered while a fork was under way run only its "after" half.)
    if _forking_thread != _get_ident():
        return
    for guard in reversed(_taken_for_fork):
        guard[2]()
    del _taken_for_fork[:]
    _forking_thread = None
    _import_lock.release()


def _after_fork_in_child() -> None:
    global _import_lock, _forking_thread
    # Every guard, taken or not: one registered while this fork waited for
    # its turn may have its lock held by another thread.
    for guard in reversed(_fork_guards):
        guard[3]()
    del _taken_for_fork[:]
    _forking_thread = None
    _import_lock = _RLock()


if TYPE_CHECKING:
    from ._deprecations._api import DeprecatedValue, deprecate_attribute, deprecated
    from ._deprecations._declarations import lazy_attribute, removed_attribute
    from ._deprecations._declared_getattr import declared_getattr
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
    from ._scan import ScanFinding, ScanRelated, ScanResult, ScanSkipped, scan
else:

    def __getattr__(name: str) -> object:
        source = _SOURCES.get(name)
        if source is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        # Not importlib.import_module: importing importlib would be the
        # first standard-library .py import of many processes.
        _register_fork_handlers()
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
    "ScanFinding",
    "ScanRelated",
    "ScanResult",
    "ScanSkipped",
    "__version__",
    "available_engines",
    "declared_getattr",
    "deprecate_attribute",
    "deprecated",
    "enable",
    "engine",
    "install",
    "is_installed",
    "is_upgraded",
    "lazy_attribute",
    "removed_attribute",
    "scan",
    "uninstall",
    "upgrade",
]

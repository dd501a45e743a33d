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

import os as _os
import sys as _sys

# The environment variables of activation, named here, where every module of
# the package finds them at no cost: start-up with the native engine imports
# only this module and the C extension (each further module costs `python -c
# pass` about 0.8 %, which is why activation lives here, below, and not in a
# module of its own).  The .pth line and _pep726hook_startup, which import
# nothing before they know the hook is wanted, spell the first one out.
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


# -- start-up activation: the pep726hook.pth line (or the .start entry) calls _activate() --
#
# Site runs the .pth line in every Python process of the environment, so what
# runs here imports nothing that start-up has not already imported (no
# threading, which breaks gevent's monkey-patching, virtualenv#1895; no
# typing), writes nothing to stdout, and never stops the process from
# starting.  The line imports the package whenever $PEP726HOOK is set,
# whatever its value: `"PEP726HOOK" in os.environ` is the cheapest test site
# can compile, and every process of the environment compiles it.  An off value
# costs the processes that set it this module alone.

_START_UP_ROUTE = f"${_ACTIVATION_VARIABLE} at start-up"

# Site runs every .pth line of a venv twice on CPython 3.8-3.14 (measured):
# site.venv() adds the venv's site-packages and main() adds it again, and
# addsitedir() reads the .pth files of a directory it already knows
# (cpython#75723 is the lib64 -> lib case of the same; 3.15's rewritten site
# runs them once): the second call must neither install again nor repeat a warning.
_attempted = False

# The route by which the module type was patched here without install(), by
# _activate() or the runner (_start_native_engine), for the installation state
# (_state) to take over when the API is first used: importing _install,
# _engines and _native_engine cost 6 % of `python -c pass`, and the native
# engine needs none of them to start.  Handed over once (_claim_start_up_patch).
_patched_by: "str | None" = None


# Comments rather than docstrings below: every byte of this module's bytecode
# costs every process that sets $PEP726HOOK, and every library's import.


# Install the hook when $PEP726HOOK is on (1, true, yes, on).  The engine comes
# from $PEP726HOOK_ENGINE, and $PEP726HOOK_FAST_GETATTR on turns the
# fast-getattr switch on too (install() then, never the native engine alone:
# the switch needs the finder).  Safe to call any number of times.  An unknown
# $PEP726HOOK value, a wrong engine name, an engine that cannot run here or a
# bad $PEP726HOOK_FAST_GETATTR costs one line on stderr (never a warning,
# which -W error would turn into a failed start-up); the process starts
# without the hook.
def _activate() -> None:
    global _attempted
    if _attempted:
        return
    environ = _os.environ
    value = environ.get(_ACTIVATION_VARIABLE)
    wanted = _switch_spelling(value)
    if wanted is False:
        return
    _attempted = True
    if wanted is None:
        _sys.stderr.write(
            f"pep726hook: hook not activated: ${_ACTIVATION_VARIABLE}={value!r} is not "
            f"one of {', '.join(_ON_VALUES)} (on) or {', '.join(_OFF_VALUES[1:])} (off)\n"
        )
        return
    try:
        if not (
            _names_the_native_engine(environ.get(_ENGINE_VARIABLE, ""))
            and _fast_getattr_is_off(environ.get(_FAST_GETATTR_VARIABLE))
            and _start_native_engine_alone(_START_UP_ROUTE)
        ):
            # Loaded as the public names are (_load): install() and the
            # engines import this package, which loads them only once it is
            # complete.
            _load("_install", "install")(None)
            _load("_install", "record_route")(_START_UP_ROUTE)
    except Exception as error:  # start-up must go on whatever happened
        _sys.stderr.write(f"pep726hook: hook not activated at start-up: {error}\n")


# Whether a $PEP726HOOK_FAST_GETATTR value leaves the switch off; any other
# value, a bad one included, is install()'s: the switch needs its finder, and
# it reports a bad value.
def _fast_getattr_is_off(value: "str | None") -> bool:
    return value is None or value.strip().lower() in _OFF_VALUES


# Whether an engine value (option or variable) lets the native engine start alone.
def _names_the_native_engine(value: str) -> bool:
    return value.strip().lower() in ("", "auto", "native")


# Have the native engine serve the process, as install(requested) would; say
# whether it does.  For the runner, which then starts its program without
# importing install() and the engines (about 10 % of `python -c pass`).
# *requested* is a validated engine name; anything but auto or native, and
# any case _start_native_engine_alone leaves to install(), returns False.  A
# patch that start-up made and nothing took over yet is kept, under *route*
# from now on, as install() keeps an active engine that auto or its own name
# asks for.
def _start_native_engine(route: str, requested: str) -> bool:
    global _patched_by
    if not _names_the_native_engine(requested):
        return False
    if _patched_by is not None:
        _patched_by = route
        return True
    return _start_native_engine_alone(route)


# Patch the module type the way install() would, without importing it.  Only
# where install() would pick the native engine and do nothing more: the
# extension built, the main interpreter, nothing patched or installed yet.
# Anything else (and every error message) is left to install().  *route* says
# what turned the hook on.
def _start_native_engine_alone(route: str) -> bool:
    global _patched_by
    if _STATE_MODULE in _sys.modules:
        return False  # a sitecustomize or an earlier .pth got there first
    try:
        # Not built for PyPy and free-threaded builds (setup.py): the search
        # then fails in a package directory the import system has listed already.
        from ._native import install, state, upgrade_type
    except ImportError:
        return False
    found = state()
    if not found["main"] or found["patched"]:
        return False
    install()
    _patched_by = route
    main = _sys.modules.get("__main__")
    if issubclass(type(main), type(_sys)):
        # What install() does for __main__ (_install._main_to_upgrade, by the
        # real type); a class refusing it keeps its class there too.
        try:  # noqa: SIM105 (contextlib is not imported at start-up)
            upgrade_type(type(main))
        except TypeError:
            pass
    return True


# Hand the module-type patch made here over, once; return its route.  None
# when nothing was patched here or the patch was claimed already: a copy of
# the installation state imported again after uninstall() must not take over
# a patch that is gone.
def _claim_start_up_patch() -> "str | None":
    global _patched_by
    route, _patched_by = _patched_by, None
    return route


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
    "DeprecatedValue": "_deprecations._api",
    "deprecated": "_deprecations._api",
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
    from types import ModuleType
    from typing import Any, Callable, List, Optional, Tuple, TypeGuard

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


def _load(source: str, name: str) -> "Any":
    """Return *name* of the package's module *source* (``"_install"``), importing it if needed.

    Under the package's import lock, which a fork waits for (see above).
    """
    # Not importlib.import_module: importing importlib would be the first
    # standard-library .py import of many processes.
    _register_fork_handlers()
    with _import_lock:
        return getattr(__import__(source, globals(), None, [name], 1), name)


if TYPE_CHECKING:
    from ._deprecations._api import DeprecatedValue, deprecated
    from ._deprecations._declared_getattr import declared_getattr
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
        value = _load(source, name)
        globals()[name] = value
        return value

    def __dir__() -> "list[str]":
        return sorted({*globals(), *__all__})


# -- enable(): a library's opt-in ---------------------------------------------------------
#
# Here rather than loaded from _enable: a library's first enable() in a process
# that used nothing else of the package opts its module in through the
# extension alone, without loading the installation state, the engine module
# and enable()'s own module (about 2.4M instructions on CPython 3.12, 5 % of a
# start-up).  The state adopts such opt-ins when it loads (_state).

# The installation state's module: while it is not loaded, nothing else of the
# package has run, and the extension may opt modules in and declare names alone.
_STATE_MODULE = __name__ + "._state"
# Whether importing the extension failed once: not built here (PyPy,
# free-threaded builds) or not loadable; enable() and the declarations then
# always take their full path.
_native_is_missing = _sys.implementation.name != "cpython"


def enable(module: "str | ModuleType", *, fast_getattr: "bool | None" = None) -> "ModuleType":
    """Make *module* call its own ``__setattr__``/``__delattr__`` from now on; return it.

    Meant for a library, about itself, in any process however it was started::

        def __setattr__(name, value): ...

        import pep726hook
        pep726hook.enable(__name__)

    *module* is a name in ``sys.modules`` or a module object.  Stores after the
    call go through the hooks, also later in the module body.  A module that
    defines no hook yet stays enabled: hooks are looked up at every store.
    No other module gets its hooks called unless the process-wide hook is on
    (:func:`install`, the runner, ``PEP726HOOK=1``, the pytest plugin).
    Uses the native engine where it can run (reads stay as fast as on a plain
    module) and otherwise the class engine for this module only; installs no
    finder.  Idempotent and thread-safe.

    The engine is the one opted-in modules or :func:`install` already use,
    else ``$PEP726HOOK_ENGINE``, else ``auto``; a variable naming an unknown
    engine or one that cannot run here gives a RuntimeWarning and ``auto``
    (attributed to the environment, shown once per process by default).

    Every :func:`deprecated` marker in the namespace becomes a deprecation
    of its name (its value back in the namespace), and the module gets the
    class that serves deprecated names (see :func:`deprecated`).

    What changes outside the module: nothing, with one exception that the
    module's author chooses.  A PEP 562 ``__getattr__`` (defined before or
    after the call) keeps working exactly.  CPython 3.11-3.14 never
    specialise reads of a module whose namespace holds one (about three
    times a plain read); ``fast_getattr=True`` has the native engine hold
    the function outside the namespace, so that the module's reads are
    specialised (``"__getattr__" in vars(module)`` is then False).  That
    wraps ``ModuleType``'s read slot for the whole process, which on
    CPython 3.12-3.14 makes every module's suppressed misses
    (``hasattr(m, "missing")``, ``getattr(m, name, default)``, the import
    system's probes) 8.7-12.3 times dearer in instructions (an import-heavy
    start-up +1.4%, ``import numpy`` +1.9% on 3.12).  ``fast_getattr=False``
    leaves the function where it is.  The default (None) relocates on 3.11, where no
    other module pays, and on 3.12-3.14 only while the application turned
    on the fast-getattr switch (``$PEP726HOOK_FAST_GETATTR``); an explicit
    True or False always wins.  Other versions, and the class engine, ignore
    it.  Figures: docs/native-engine-getattr.md, "What a relocated __getattr__
    costs".

    Raises TypeError when *module* is not a module or a name or
    *fast_getattr* is not a bool or None, and ValueError for a name not in
    ``sys.modules`` or a ``deprecated()`` value under a dunder name (then
    nothing has changed).
    """
    if fast_getattr is None and _patched_by is None and not _native_is_missing:
        target = _sys.modules.get(module) if type(module) is str else module
        if _is_module(target) and _enable_alone(target):
            return target
    full_enable: Callable[..., ModuleType] = _load("_enable", "enable")
    return full_enable(module, fast_getattr=fast_getattr)


# Whether *candidate* is a module object, by its real type: isinstance would
# ask for candidate.__class__, running the __getattribute__ of whatever sits in
# sys.modules; a lazy-import placeholder that raises there must neither fail
# install() nor pass for a module.  Every module of the package asks this one.
def _is_module(candidate: object) -> "TypeGuard[ModuleType]":
    return issubclass(type(candidate), type(_sys))


# Opt *target* in under the native engine as the full enable() would, where
# $PEP726HOOK_ENGINE leaves it the choice and nothing else of the package ran
# yet; say whether it did.  What "nothing else" means is the extension's to
# test, in the same call as the opt-in (see enable_alone there).
def _enable_alone(target: "ModuleType") -> bool:
    native = _native_alone()
    if native is None or not native.enable_alone(target, _STATE_MODULE):
        return False
    _adopt_late(_STATE_MODULE, "adopt_opt_ins_made_alone")
    return True


# The extension, where a first opt-in or declaration may be its alone: the
# native engine is the choice ($PEP726HOOK_ENGINE unset, auto or native) and
# the extension loads; else None.  The extension tests the rest itself.
def _native_alone() -> "Any":
    global _native_is_missing
    if _native_is_missing or not _names_the_native_engine(_os.environ.get(_ENGINE_VARIABLE, "")):
        return None
    try:
        from ._native import enable_alone, lazy_alone  # noqa: F401 (loads it)
    except ImportError:
        _native_is_missing = True
        return None
    return _sys.modules[__name__ + "._native"]


# After a successful call of the extension alone: the collector may run code
# between the extension's test and the end of its work, and another thread may
# have loaded *module_name* meanwhile, whose *adopt* took over what was done
# before it: have it take this one too.  Nothing while the state is not loaded.
def _adopt_late(module_name: str, adopt: str) -> None:
    state = _sys.modules.get(_STATE_MODULE)
    function = getattr(_sys.modules.get(module_name), adopt, None)
    if state is not None and function is not None:
        with state.lock:  # lock rule 1: dict operations and our own imports only
            function()


# -- lazy_attribute(), removed_attribute(), deprecate_attribute(): declarations -------------
#
# Here for the same reason as enable(): in a process that used nothing else of
# the package, under the native engine, each declaration is one call of the
# extension (lazy_alone, removed_alone, deprecated_alone), which checks the
# arguments, searches a lazy submodule and declares; it answers False, having
# changed nothing, for everything the full path (_deprecations/_declarations.py,
# _deprecations/_api.py) must decide or refuse.  numpy declares some 70 names
# in its __init__: a module of its own for this and the checks in Python cost
# it 1.9M instructions on CPython 3.12; the deprecations package costs a first
# deprecation about 10M.


def lazy_attribute(
    module: "str | ModuleType",
    name: str,
    *,
    factory: "Callable[[], object] | None" = None,
) -> None:
    """Declare *name* of *module* lazy: its first read through the module loads it.

    Without *factory*, ``f"{module.__name__}.{name}"`` must be an importable
    submodule (found as ``importlib.util.find_spec`` finds it, not run): the first
    read through the module (``mod.name``, ``getattr``, ``hasattr``, ``from
    mod import name``, a star-import whose ``__all__`` names it) imports it;
    with *factory*, it calls ``factory()``.  The value is stored in the
    namespace and returned, with no warning; from then on the name is a
    plain entry of the namespace.  ``import pkg.name`` binds the submodule
    as usual, which ends the declaration, as any store of the name does.
    An exception from the import or from *factory* (an ``AttributeError``
    or ``ImportError`` too) propagates unchanged, nothing is stored, and the
    next read tries again.  ``dir(module)`` lists the name.

    *module* is a module object or a name in ``sys.modules``; it is opted in
    as ``enable()`` does.  A name carries one declaration: declaring a name
    that has one (lazy, removed, or deprecated without a value yet) replaces
    it.  Under ``importlib.reload()``, a name whose value the first run
    loaded keeps it.

    Raises TypeError for a *name* that is not a str or a *factory* that is
    not callable, ValueError for a name not in ``sys.modules``, a dunder
    *name*, a name the module already holds, and, without *factory*, a name
    that is not an importable submodule.  On any error nothing has changed.
    """
    alone = _declaring_alone()
    if alone is not None and alone.lazy_alone(module, name, factory, _STATE_MODULE):
        _adopt_declared_late()
    else:
        _load("_deprecations._declarations", "lazy_attribute")(module, name, factory=factory)


def removed_attribute(
    module: "str | ModuleType",
    name: str,
    message: "str | None",
    *,
    warning: "str | None" = None,
    category: "type[Warning]" = DeprecationWarning,
) -> None:
    """Declare *name* of *module* removed: a read through the module raises ``AttributeError(message)``.

    Every read through the module (``mod.name``, ``getattr``, ``from mod
    import name``) raises ``AttributeError(message)``, with *message* as
    given; ``hasattr()`` is False and ``getattr(mod, name, default)``
    returns *default*.  With *warning*, each read first warns
    ``warnings.warn(warning, category)`` at the reader's line (so
    ``-W error`` raises the warning instead).  With *message* None (only
    with a *warning*), a read misses after the warning as on a plain module:
    the module's own ``__getattr__``, if it has one, then CPython's own
    error, name and guess included (numpy's ``np.bytes``).  A store of the name through
    the module binds it as on a plain module and ends the removal.
    ``dir(module)`` does not list it.

    *module* is a module object or a name in ``sys.modules``; it is opted in
    as ``enable()`` does.  A name carries one declaration: declaring a name
    that has one (lazy, removed, or deprecated without a value yet) replaces
    it.  Under ``importlib.reload()``, a name bound since (a store) keeps
    its value.

    Raises TypeError for a *name*, *message* or *warning* that is not a str
    (or None), a *message* None without a *warning*, or a *category* that is
    not a ``Warning`` subclass, ValueError for a name not in
    ``sys.modules``, a dunder *name*, a name the module already holds, or an
    empty *message* or *warning*.  On any error nothing has changed.
    """
    alone = _declaring_alone()
    if alone is not None and alone.removed_alone(
        module, name, message, warning, category, _STATE_MODULE
    ):
        _adopt_declared_late()
    else:
        _load("_deprecations._declarations", "removed_attribute")(
            module, name, message, warning=warning, category=category
        )


def deprecate_attribute(
    module: "str | ModuleType",
    name: str,
    message: str,
    *,
    category: "type[Warning]" = DeprecationWarning,
    warn: "Callable[[str, type[Warning], int], object] | None" = None,
    factory: "Callable[[], object] | None" = None,
) -> None:
    """Deprecate the attribute *name* of *module*; opt *module* in as ``enable()`` does.

    For a module deprecating a name it has already defined, or a package
    deprecating one of its modules' names from outside::

        pep726hook.deprecate_attribute(__name__, "OldName",
                                       "OldName is deprecated; use NewName")

    * *name* in the namespace: deprecated in place, as with
      :func:`pep726hook.deprecated` (the value stays; the module's own code
      reads it with no warning).
    * *name* absent and ``f"{module.__name__}.{name}"`` an importable
      submodule (found, not run, as ``importlib.util.find_spec`` finds it): the first
      read through the package imports it, warns and returns it.  ``import
      pkg.name`` keeps working, and its binding of the submodule on the
      package neither warns nor ends the deprecation.
    * *name* absent, *factory* given: the first read through the module
      stores ``factory()`` in the namespace, warns and returns it; later reads
      warn without calling it again.  An exception from *factory* propagates
      from the read, nothing is stored, and the next read tries again.

    Deprecating a name that is already deprecated replaces its message,
    category and *warn* (and its factory, with *factory*; a value it has
    stays).  *category* and *warn* are as for
    :func:`pep726hook.deprecated`.  *module* is a module object or a name in
    ``sys.modules``.

    Raises TypeError for a bad argument type (a *factory* that is not
    callable), ValueError for a name not in ``sys.modules``, an empty
    message, a dunder *name* (the interpreter reads those itself) or a
    *factory* for a name that has a value or a deprecation (but for a body
    that ``importlib.reload()`` runs again, whose first run made them),
    AttributeError when *name* is
    neither in the namespace, nor an importable submodule, nor given a
    *factory*.  On any error nothing has changed.
    """
    alone = _declaring_alone()
    if alone is not None and alone.deprecated_alone(
        module, name, message, category, warn, factory, _STATE_MODULE
    ):
        _adopt_declared_late()
    else:
        _load("_deprecations._api", "deprecate_attribute")(
            module, name, message, category=category, warn=warn, factory=factory
        )


# The extension where declarations may be its alone, found at the first one
# (False: never), as enable() chooses an engine for opted-in modules once.
_alone: "Any" = None


def _declaring_alone() -> "Any":
    global _alone
    if _STATE_MODULE in _sys.modules:
        return None
    if _alone is None:
        _alone = _native_alone() or False
    return _alone or None


# After a declaration of the extension alone: the state, and with it the
# deprecations package, may have loaded while it ran (see _adopt_late).
def _adopt_declared_late() -> None:
    if _STATE_MODULE in _sys.modules:  # adopted by nothing, nearly always
        _adopt_late(_STATE_MODULE, "adopt_opt_ins_made_alone")
        _adopt_late(__name__ + "._deprecations._deprecating", "adopt_declared_alone")


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

"""The fast-getattr switch: every module with a PEP 562 ``__getattr__`` goes through ``enable()``.

CPython 3.11 to 3.14 do not specialise attribute reads on a module whose
namespace holds ``__getattr__`` (https://github.com/python/cpython/issues/143469),
so ``np.float64`` costs about three times a read on a plain module.
``enable(module)`` keeps such a module's reads specialised; a library calls it
about itself, and an application that turns this switch on
(``$PEP726HOOK_FAST_GETATTR``, the runner's ``--fast-getattr``,
``install(fast_getattr=True)``, the pytest plugin's
``--pep726hook-fast-getattr``) has it called for every module whose namespace
defines ``__getattr__`` once its body ran, and for those imported before the
switch was turned on.

While the switch is on, ``enable()``'s default relocates a ``__getattr__`` on
3.12-3.14 as well (``_native_engine.relocates_getattr_by_default``): the one
who runs the program accepts that every module's suppressed misses cost more
there.  A module whose author passed ``fast_getattr=False`` (or ``True``)
keeps that choice; the switch passes modules without the keyword.

The point after a module's body is the finder's loader wrapper (:mod:`._finder`),
which the native engine, needing no finder otherwise, gets only while this
switch is on.  Under the class engine the switch does nothing: ``enable()``
cannot keep reads specialised there (the function stays in the namespace), and
would give every such module a class of its own, which shows (numpy's own
``test_public_api.py::test_numpy_namespace`` fails on it).  Our own work never
fails an import: an error is reported once as a warning and the module stays
as it was.
"""

import os

from . import _FAST_GETATTR_VARIABLE as FAST_GETATTR_VARIABLE
from . import _OFF_VALUES as OFF_VALUES
from . import _ON_VALUES as ON_VALUES
from . import _state, _switch_spelling
from ._enable import enable
from ._engines import warn_never_failing
from ._state import is_module

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType
    from typing import Callable, Iterable

    from ._engine_protocols import Engine, LoadingEngine

_PACKAGE = __name__.rpartition(".")[0]


def requested_fast_getattr(value: "bool | None") -> bool:
    """Return *value*, or whether ``$PEP726HOOK_FAST_GETATTR`` turns the switch on.

    The variable takes the spellings of ``$PEP726HOOK`` (``1``, ``true``,
    ``yes``, ``on``; ``0``, ``false``, ``no``, ``off`` or empty), in any case.
    Raises ValueError for any other value of the variable, TypeError for a
    *value* that is neither a bool nor None.
    """
    if value is not None:
        if not isinstance(value, bool):
            raise TypeError(f"fast_getattr must be True, False or None, not {value!r}")
        return value
    return switch_value(os.environ.get(FAST_GETATTR_VARIABLE), f"${FAST_GETATTR_VARIABLE}")


def switch_value(value: "str | None", origin: str) -> bool:
    """Tell whether *value* (a variable's or an option's) turns the switch on.

    The spellings are ``$PEP726HOOK``'s.  Raises ValueError, naming *origin*,
    when it is neither an on nor an off spelling.
    """
    on = _switch_spelling(value)
    if on is None:
        raise ValueError(
            f"{origin} must be one of {', '.join(ON_VALUES)} (on) or "
            f"{', '.join(OFF_VALUES[1:])} (off), not {value!r}"
        )
    return on


def defines_getattr(module: object) -> bool:
    """Tell whether *module* is a module (by its real type) whose namespace holds ``__getattr__``.

    The namespace is read past the module's class: a lazy-import placeholder's
    ``__getattribute__`` must not run (nor load its module) here.
    """
    if not is_module(module):
        return False
    try:
        namespace = object.__getattribute__(module, "__dict__")
    except AttributeError:
        return False
    return isinstance(namespace, dict) and "__getattr__" in namespace


_warned_about: "set[str]" = set()


def enable_quietly(module: "ModuleType") -> None:
    """Pass *module* to ``enable()`` unless it is one of ours; report an error once, never raise."""
    try:
        name = object.__getattribute__(module, "__dict__").get("__name__")
    except Exception:
        name = None
    shown = name if isinstance(name, str) else repr(module)
    if shown == _PACKAGE or shown.startswith(_PACKAGE + "."):
        # Our own package: the finder never touches it either.
        return
    try:
        enable(module)
    except Exception as error:
        if shown in _warned_about:
            return
        _warned_about.add(shown)
        warn_never_failing(
            f"pep726hook could not enable module {shown!r} for fast reads "
            f"(${FAST_GETATTR_VARIABLE}; {type(error).__name__}: {error}); "
            "it works as it did without the switch",
            stacklevel=3,
        )


def enable_existing(modules: "Iterable[object]") -> None:
    """Enable each of *modules* that defines ``__getattr__`` (the sweep when the switch turns on).

    Runs user code (``enable()`` may compose a class): never under the install lock.
    """
    for module in modules:
        if defines_getattr(module):
            enable_quietly(module)  # type: ignore[arg-type]  # a module: defines_getattr said


def applies_to(engine: "Engine") -> bool:
    """Tell whether the switch does anything under *engine*: the native one only."""
    return not engine.uses_finder


def turn_on(active: "Engine", install_finder: "Callable[[LoadingEngine], None]") -> bool:
    """Turn the switch on for the *active* installation; tell whether to sweep.

    True when the switch was off and now enables modules (native engine): those
    imported so far are then to be enabled, without the lock.  Under the install
    lock; *install_finder* puts a finder handing modules to its argument first
    on ``sys.meta_path`` (the native engine had none).  Under the class engine
    the switch is recorded and does nothing.
    """
    if _state.fast_getattr:
        return False
    _state.fast_getattr = True
    if not applies_to(active):
        return False
    install_finder(EnablingLoader())
    return True


class EnablingLoader:
    """The finder's engine while the switch is on under the native engine: ``enable()`` after.

    Nothing happens before a module's body: the native engine needs nothing there.
    """

    name = "native"

    def begin(self, module: object) -> "type | None":
        """Do nothing before the body (no class to restore)."""
        return None

    def abort(self, module: "ModuleType", class_before: type) -> None:
        """Never called: :meth:`begin` returns no class."""

    def settle(self, module: object) -> None:
        """Enable *module* if it defines ``__getattr__``.

        Only while the switch is on: an import that was under way when
        ``uninstall()`` ran still reaches this method.
        """
        if _state.fast_getattr and defines_getattr(module):
            enable_quietly(module)  # type: ignore[arg-type]  # a module: defines_getattr said

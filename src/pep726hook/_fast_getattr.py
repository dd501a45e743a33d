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

The point after a module's body is the finder's loader wrapper (:mod:`._finder`):
the class engine has it anyway, and the native engine, which otherwise needs
no finder, gets it only while this switch is on.  Our own work there never
fails an import: an error is reported once as a warning and the module stays
as it was.
"""

import os

from . import _FAST_GETATTR_VARIABLE as FAST_GETATTR_VARIABLE
from . import _OFF_VALUES as OFF_VALUES
from . import _ON_VALUES as ON_VALUES
from . import _state
from ._enable import enable
from ._engines import warn_never_failing
from ._state import is_module

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType
    from typing import Iterable

    from ._engines import LoadingEngine

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

    Raises ValueError, naming *origin*, when it is neither an on nor an off spelling.
    """
    if value is None:
        return False
    spelt = value.strip().lower()
    if spelt in ON_VALUES:
        return True
    if spelt in OFF_VALUES:
        return False
    raise ValueError(
        f"{origin} must be one of {', '.join(ON_VALUES)} (on) or "
        f"{', '.join(OFF_VALUES[1:])} (off), not {value!r}"
    )


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


class EnablingLoader:
    """The finder's engine while the switch is on: *inner*'s work, then ``enable()``.

    *inner* is the class engine (which upgrades modules around their bodies),
    or None for the native engine, which needs nothing there.
    """

    def __init__(self, inner: "LoadingEngine | None", name: str) -> None:
        self.inner = inner
        self.name = name

    def begin(self, module: object) -> "type | None":
        """Let *inner* prepare *module*; nothing more happens before the body."""
        return None if self.inner is None else self.inner.begin(module)

    def abort(self, module: "ModuleType", class_before: type) -> None:
        """Let *inner* undo :meth:`begin` (only called when it returned a class)."""
        if self.inner is not None:
            self.inner.abort(module, class_before)

    def settle(self, module: object) -> None:
        """Let *inner* settle *module*, then enable it if it defines ``__getattr__``.

        Only while the switch is on: an import that was under way when
        ``uninstall()`` ran still reaches this method.
        """
        try:
            if self.inner is not None:
                self.inner.settle(module)
        finally:
            if _state.fast_getattr and defines_getattr(module):
                enable_quietly(module)  # type: ignore[arg-type]  # a module: defines_getattr said

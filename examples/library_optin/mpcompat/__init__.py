"""An mpmath-style library that guards its module for every user.

``import mpcompat as mp; mp.dps = 50`` is the classic mistake: it makes a new
module attribute and leaves the working precision at 15 digits.  The module
hook turns it into an error.  With pep726hook importable the module opts
itself in with ``pep726hook.enable(__name__)``: reads of ``mpcompat.<name>``
stay as fast as on a plain module (native engine) and no import hook is put on
the user's program.  Without pep726hook the library keeps its old
``ModuleType`` subclass, so the guard never silently disappears.
"""

from decimal import Context

__all__ = ["mp", "mpf"]


class _Context:
    """Working precision, in decimal digits, shared by every calculation."""

    def __init__(self) -> None:
        self.dps = 15


mp = _Context()


def mpf(value: str) -> str:
    """Return *value* rounded to the working precision, as a string."""
    return str(Context(prec=mp.dps).create_decimal(value))


_CONTEXT_SETTINGS = {"dps", "prec", "pretty"}


def __setattr__(name: str, value: object) -> None:
    if name in _CONTEXT_SETTINGS:
        raise AttributeError(
            f"{__name__}.{name} = {value!r} would not change the precision; "
            f"set {__name__}.mp.{name} instead"
        )
    globals()[name] = value


try:
    import pep726hook
except ImportError:  # pep726hook is optional: fall back to the old class hack
    import sys
    import types

    class _GuardedModule(types.ModuleType):
        def __setattr__(self, name: str, value: object) -> None:
            __setattr__(name, value)  # the module-level hook above

    sys.modules[__name__].__class__ = _GuardedModule
else:
    pep726hook.enable(__name__)

"""A tiny mpmath look-alike whose precision lives on a context object.

``import mpmath as mp; mp.dps = 50`` is a classic mistake: it creates a new
module attribute and silently leaves the working precision at 15 digits.  The
module hook below turns it into an error that names the right spelling.
"""

from decimal import Context

__all__ = ["mp", "mpf"]


class _Context:
    """Working precision, in decimal digits, shared by every calculation."""

    def __init__(self) -> None:
        self.dps = 15

    def __repr__(self) -> str:
        return f"Mpmath settings:\n  mp.dps = {self.dps}"


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

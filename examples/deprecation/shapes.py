"""``default_colour`` was renamed ``default_color``; every use of the old name warns.

PEP 562's ``__getattr__`` can only warn when the old name is *read*; the
module hooks also catch code that still *sets* or *deletes* it.
"""

import warnings

default_color = "black"
_RENAMED = {"default_colour": "default_color"}


def _warn(old):
    new = _RENAMED[old]
    warnings.warn(
        f"{__name__}.{old} is deprecated; use {__name__}.{new}", DeprecationWarning, stacklevel=3
    )
    return new


def __getattr__(name):
    if name in _RENAMED:
        return globals()[_warn(name)]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __setattr__(name, value):
    if name in _RENAMED:
        name = _warn(name)
    globals()[name] = value


def __delattr__(name):
    if name in _RENAMED:
        name = _warn(name)
    del globals()[name]

"""Type validation in the style PEP 726 suggests for ``sys``.

``sys.modules = 123`` breaks the next import far away from the mistake; here
the mistake is refused where it happens, and critical names cannot be deleted.
"""

import sys

registry = {}
excepthook = sys.__excepthook__
_TYPES = {"registry": dict}
_CALLABLES = {"excepthook"}


def __setattr__(name, value):
    expected = _TYPES.get(name)
    if expected is not None and not isinstance(value, expected):
        raise TypeError(
            f"{__name__}.{name} must be a {expected.__name__}, not {type(value).__name__}"
        )
    if name in _CALLABLES and not callable(value):
        raise TypeError(f"{__name__}.{name} must be callable")
    globals()[name] = value


def __delattr__(name):
    if name in _TYPES or name in _CALLABLES:
        raise AttributeError(f"{__name__}.{name} cannot be deleted")
    del globals()[name]

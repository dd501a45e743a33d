"""The warning a read, store or deletion of a deprecated name issues, and where it points.

Each function here warns from a fixed depth below the frame that read,
stored or deleted: the *stacklevel* it passes names that frame's line.  The
native engine's C descriptor warns the same way (``warn_deprecation`` in
``src/c/native/deprecated_descriptor.c``).
"""

import _warnings
import sys

from .._composition import FILLS_IN_A_NONE_OBJECT, NO_HOOK
from ._entries import DEPRECATED, DeprecatedValue, Deprecation, deprecation_entry

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType
    from typing import Any

# The frame of importlib's _handle_fromlist: `from package import name` asks
# hasattr(package, name) there before the import statement reads the name.
_IMPORT_SYSTEM_MODULES = ("_frozen_importlib", "importlib._bootstrap")


def warn_for(entry: Deprecation, stacklevel: int) -> None:
    """Issue *entry*'s warning; *stacklevel* is what ``warnings.warn`` here would need.

    The library's own *warn* callable is one frame deeper, so it is told one
    more: ``warnings.warn(message, category, stacklevel)`` called directly in
    it names the same line.
    """
    warn, message = entry.warn, entry.message
    assert message is not None  # only a removed name's may be None
    if warn is None:
        _warnings.warn(message, entry.category, stacklevel)
    else:
        warn(message, entry.category, stacklevel + 1)


def warn_removed(entry: Deprecation, stacklevel: int) -> None:
    """Issue a removed name's warning (``removed_attribute(warning=...)``), if it has one."""
    if entry.warning is not None:
        _warnings.warn(entry.warning, entry.category, stacklevel)


def removed_error(entry: Deprecation, module: "ModuleType") -> AttributeError:
    """The error a read of a removed name of *module* raises: the library's message, as it wrote it.

    Its ``name`` is None, not unset: CPython then leaves it so (it fills in
    the name and object of an unset one), and a traceback prints the message
    without a "Did you mean" guess appended, as numpy's own errors for its
    removed names do.  PyPy fills them in while the object is None too, when
    the error leaves a class's ``__getattr__``: there it names *module*.
    """
    if sys.version_info < (3, 10):
        return AttributeError(entry.message)
    if FILLS_IN_A_NONE_OBJECT:
        return AttributeError(entry.message, name=None, obj=module)
    return AttributeError(entry.message, name=None)


def is_fromlist_probe(frame: "Any") -> bool:
    """Tell whether *frame* is importlib's ``_handle_fromlist``.

    ``from package import name`` asks ``hasattr(package, name)`` there before
    the import statement's own read; only that read warns.
    """
    return (
        frame.f_code.co_name == "_handle_fromlist"
        and frame.f_globals.get("__name__") in _IMPORT_SYSTEM_MODULES
    )


def warn_deprecated(module: "ModuleType", name: str, value: object) -> "Any":
    """Warn for a store (*value*) or deletion (``NO_HOOK``) of a deprecated *name*.

    Returns (table, entry) to end once the store or deletion succeeded, or
    None.  Called by the hook-aware ``__setattr__``/``__delattr__`` only,
    whose frame warnings skip: stacklevel 3 here is the line that stored or
    deleted.  The import system binding a lazily deprecated submodule on its
    package (``import pkg.sub`` does ``setattr(pkg, "sub", module)``) neither
    warns nor ends the deprecation.
    """
    deprecation = deprecation_entry(module, name)
    if deprecation is None:
        return None
    entry = deprecation[1]
    if entry.kind != DEPRECATED:
        # A lazy or removed name: the store binds it as on a plain module
        # (the import system's binding of a lazy submodule too), and the
        # declaration ends, with no warning.
        return deprecation
    if type(value) is DeprecatedValue:
        return None  # deprecated anew: the marker's deprecation replaces this one
    if (
        entry.submodule is not None
        and value is not NO_HOOK
        and value is sys.modules.get(entry.submodule)
    ):
        return None
    warn_for(entry, 3)
    return deprecation

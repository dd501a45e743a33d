"""What the tests of deprecated module attributes share."""

from __future__ import annotations

import importlib
import types
from typing import Any, Callable

from _venv import WriteModule


def own_value(module: Any, name: str) -> Any:
    """Return what *module*'s own code reads under *name*, with no warning.

    Its namespace, then its builtins: under the native engine a deprecated
    name lives in the module's private builtins once its import has ended.
    """
    return eval(name, vars(module))


MESSAGE = "depmod.Old is deprecated; use depmod.New"

LIBRARY = f"""
import pep726hook

class New:
    pass

Old = pep726hook.deprecated(New, {MESSAGE!r})
Gone = pep726hook.deprecated(42, "depmod.Gone is deprecated", category=FutureWarning)
plain = 1
pep726hook.enable(__name__)
"""

HOOKED_LIBRARY = (
    """
log = []

def __setattr__(name, value):
    log.append(("set", name, value))
    if value == "refused":
        raise ValueError("refused by the hook")
    globals()[name] = value

def __delattr__(name):
    log.append(("del", name))
    if name == "Gone":
        raise ValueError("refused by the hook")
    del globals()[name]
"""
    + LIBRARY
)


def loader(write_module: WriteModule) -> Callable[..., Any]:
    """What the ``load`` fixture gives: import *source* written as module *name*."""

    def make(source: str = LIBRARY, name: str = "depmod", package: bool = False) -> Any:
        write_module(name, source, package=package)
        return importlib.import_module(name)

    return make


def _line_after(frame: types.FrameType | None) -> int:
    assert frame is not None
    return frame.f_lineno

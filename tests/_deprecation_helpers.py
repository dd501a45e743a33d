"""What the tests of deprecated module attributes share."""

from __future__ import annotations

from typing import Any


def own_value(module: Any, name: str) -> Any:
    """Return what *module*'s own code reads under *name*, with no warning.

    Its namespace, then its builtins: under the native engine a deprecated
    name lives in the module's private builtins once its import has ended.
    """
    return eval(name, vars(module))

"""A leak-check scenario of tests/test_refleaks.py: names declared by the extension alone."""

from __future__ import annotations

import gc
import sys
import types

import pytest


def lazy_and_removed_names_declared_by_the_extension_alone(modules: object) -> None:
    # The package's lazy_attribute()/removed_attribute() take this path only
    # in a process that never loaded the installation state; here the
    # extension is asked directly, with a state module name nobody imports.
    from pep726hook import _native
    from pep726hook._deprecations import _moved

    module = types.ModuleType("refleak_declared_alone")
    sys.modules[module.__name__] = module
    namespace = vars(module)

    def declare(target: types.ModuleType) -> None:
        for name, entry, factory in (
            ("gone", ("gone", DeprecationWarning, None, None, None, 2, None), None),
            ("later", ("", DeprecationWarning, None, None, None, 1, None), lambda: [1]),
            ("never", ("", DeprecationWarning, None, None, None, 1, None), lambda: [2]),
        ):
            assert _native.declare_alone(target, name, entry, factory, "refleak.no_state")

    namespace["declare"] = declare
    exec("declare(__import__('sys').modules[__name__])", namespace)  # a body: the window
    del namespace["declare"]
    with pytest.raises(AttributeError, match="gone"):
        module.gone  # noqa: B018 (the read ends the window)
    assert module.later == [1]
    assert "never" in dir(module)
    _native.set_deprecated_store_callback(None)  # the extension's own store path
    try:
        module.gone = 1
        del module.gone
        del module.never
    finally:
        _native.set_deprecated_store_callback(_moved._store_moved)
    assert [taken is module for taken, _ in _native.declared_alone()] == [True]
    del sys.modules[module.__name__]
    del module, namespace
    gc.collect()

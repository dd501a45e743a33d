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

    # A package's path whose listing the import system keeps already: a
    # directory and a module file of pep726hook's, found, never imported.
    import pep726hook

    namespace["__path__"] = list(pep726hook.__path__)

    def declare(target: types.ModuleType) -> None:
        state = "refleak.no_state"
        assert _native.removed_alone(target, "gone", "gone", None, DeprecationWarning, state)
        assert _native.lazy_alone(target, "later", lambda: [1], state)
        assert _native.lazy_alone(target, "never", lambda: [2], state)
        assert _native.lazy_alone(target, "_deprecations", None, state)
        assert _native.lazy_alone(target, "_compat", None, state)
        assert not _native.lazy_alone(target, "no_such_submodule", None, state)

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

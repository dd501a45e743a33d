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
    assert [taken is module for taken, _, _ in _native.declared_alone()] == [True]
    del sys.modules[module.__name__]
    del module, namespace
    gc.collect()


def a_name_deprecated_by_the_extension_alone(modules: object) -> None:
    # deprecate_attribute() of a name the module holds, by the extension
    # alone (3.10+): its functions and body get the private builtins, the
    # value moves at the end of the window, a store ends the deprecation.
    import warnings

    from pep726hook import _native
    from pep726hook._deprecations import _moved

    if sys.version_info < (3, 10):
        return
    module = types.ModuleType("refleak_deprecated_alone")
    sys.modules[module.__name__] = module
    namespace = vars(module)

    def deprecate(target: types.ModuleType) -> bool:
        return _native.deprecated_alone(
            target, "OLD", "OLD is old", DeprecationWarning, None, None, "refleak.no_state"
        )

    namespace["deprecate"] = deprecate
    exec(  # a body: the window
        "def before():\n    return OLD\n"
        "OLD = [1]\n"
        "assert deprecate(__import__('sys').modules[__name__])\n"
        "AFTER = OLD\n",
        namespace,
    )
    del namespace["deprecate"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert module.OLD == [1]  # the read ends the window: the value moves
        assert "OLD" not in namespace
        assert namespace["before"]() == [1]
        _native.set_deprecated_store_callback(None)  # the extension's own store path
        try:
            module.OLD = [2]
        finally:
            _native.set_deprecated_store_callback(_moved._store_moved)
    assert module.OLD == [2]
    assert [taken is module for taken, _, _ in _native.declared_alone()] == [True]
    del sys.modules[module.__name__]
    del module, namespace
    gc.collect()


def a_deprecated_name_handed_over_while_its_body_runs(modules: object) -> None:
    # The deprecations package loading while the body runs takes the values
    # still in the namespace back (declared_alone() in the body stands in for it).
    from pep726hook import _native

    module = types.ModuleType("refleak_handed_over")
    sys.modules[module.__name__] = module
    namespace = vars(module)
    taken: list[object] = []

    def run(target: types.ModuleType) -> None:
        assert _native.deprecated_alone(
            target, "OLD", "OLD is old", DeprecationWarning, None, None, "refleak.no_state"
        )
        taken.extend(_native.declared_alone())

    namespace["run"] = run
    exec("OLD = [1]\nrun(__import__('sys').modules[__name__])\n", namespace)
    del namespace["run"]
    ((handed_module, _, handed),) = taken
    assert handed_module is module and list(handed) == ["OLD"]
    assert type(module) is types.ModuleType and namespace["OLD"] == [1]
    assert "OLD" not in _native.deprecating_record(module)[1]
    taken.clear()
    del sys.modules[module.__name__]
    del module, namespace, handed_module, handed
    gc.collect()


RELOADED_BODY = """\
import sys
from pep726hook import _native
OLD = [1]
_native.deprecated_alone(
    sys.modules[__name__], "OLD", "OLD is old", DeprecationWarning, None, None, "refleak.no_state"
)
OLD = [2]
def before():
    return OLD
"""


_RELOADED_DIRECTORY: list[str] = []


def a_deprecated_name_bound_again_by_a_reloaded_body(modules: object) -> None:
    # importlib.reload() of a module whose name the extension deprecated
    # alone: before 3.12 the store of __spec__ opens the window again (a
    # walk of the frames for importlib's _exec), and its end moves the value
    # the body bound again.  The package's store callback is set aside: the
    # extension's own store path.
    import atexit
    import importlib
    import os
    import shutil
    import tempfile
    import warnings

    from pep726hook import _native
    from pep726hook._deprecations import _moved

    if sys.version_info < (3, 10):
        return
    if not _RELOADED_DIRECTORY:
        # One directory for every call: the import system interns the path of
        # the module's file, and from 3.12 an interned string is immortal (a
        # new path per call would grow by one block each time).
        directory = tempfile.mkdtemp(prefix="pep726hook-refleak-")
        atexit.register(shutil.rmtree, directory, True)
        with open(os.path.join(directory, "refleak_reloaded.py"), "w", encoding="utf-8") as file:
            file.write(RELOADED_BODY)
        _RELOADED_DIRECTORY.append(directory)
    directory = _RELOADED_DIRECTORY[0]
    sys.path.insert(0, directory)
    _native.set_deprecated_store_callback(None)
    try:
        module = importlib.import_module("refleak_reloaded")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert module.OLD == [2]  # the read ends the window: the value moves
            assert "OLD" not in vars(module)
            importlib.reload(module)
            assert module.OLD == [2]
            assert "OLD" not in vars(module) and module.before() == [2]
    finally:
        _native.set_deprecated_store_callback(_moved._store_moved)
        sys.path.remove(directory)
        sys.path_importer_cache.pop(directory, None)
        sys.modules.pop("refleak_reloaded", None)
    assert [taken is module for taken, _, _ in _native.declared_alone()] == [True]
    del module
    gc.collect()

"""A deprecating module over its life: death, threads, a class assigned later, reload, pickle."""

from __future__ import annotations

import importlib
import sys
import threading
import types
import warnings
from typing import Any, Callable

import pytest
from _deprecation_helpers import LIBRARY, MESSAGE, loader, own_value
from _venv import (
    WriteModule,
    collect_garbage,
    join_or_fail,
)

import pep726hook
from pep726hook._deprecations import _entries


@pytest.fixture
def load(write_module: WriteModule) -> Callable[..., Any]:
    return loader(write_module)


# -- lifetime and threads -------------------------------------------------------------------


def test_a_dead_modules_table_is_forgotten(
    route: str, mortal_modules: None, load: Callable[..., Any]
) -> None:
    module = load()
    key = id(module)
    assert key in _entries._tables
    del module
    sys.modules.pop("depmod")
    collect_garbage()
    assert key not in _entries._tables


def test_threads_reading_and_storing_deprecated_names(
    route: str, busy_switching: None, load: Callable[..., Any]
) -> None:
    module = load()
    errors: list[BaseException] = []
    names = [f"Name{i}" for i in range(50)]
    for name in names:
        module.__dict__[name] = name
        pep726hook.deprecate_attribute(module, name, f"{name} is deprecated")

    def reader() -> None:
        try:
            for _ in range(20):
                for name in names:
                    value = getattr(module, name)
                    assert value in (name, "stored")
        except BaseException as error:
            errors.append(error)

    def writer() -> None:
        try:
            for name in names:
                setattr(module, name, "stored")
        except BaseException as error:
            errors.append(error)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        threads = [threading.Thread(target=reader) for _ in range(3)]
        threads.append(threading.Thread(target=writer))
        for thread in threads:
            thread.start()
        join_or_fail(threads)
    assert errors == []
    assert all(getattr(module, name) == "stored" for name in names)
    assert set(_entries.deprecations_of(module) or {}) == {"Old", "Gone"}


# -- the module's class, reload, pickle ----------------------------------------------------


@pytest.mark.usefixtures("route")
def test_a_class_assigned_later_keeps_the_deprecations(load: Callable[..., Any]) -> None:
    # Under the native engine Own is created after the read slot was wrapped:
    # CPython's slot fix-up gives it ModuleType's original read slot, which
    # the class store must replace for the table to stay in reach.
    module = load(
        LIBRARY
        + "import sys, types\n"
        + "class Own(types.ModuleType):\n"
        + "    pass\n"
        + "sys.modules[__name__].__class__ = Own\n"
    )
    assert issubclass(type(module), module.Own)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        read_back = getattr(module, "Old", None) is module.New
        module.Gone = 1
    messages = [str(w.message) for w in caught]
    # Asserted with the module gone, so that a failure's traceback never
    # keeps an opted-in module (and its engine) alive for later tests.
    del module
    sys.modules.pop("depmod")
    assert read_back
    assert messages == [MESSAGE, "depmod.Gone is deprecated"]


def test_reload_deprecates_the_names_again(route: str, load: Callable[..., Any]) -> None:
    module = load()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module.Old = "stored"  # ends the deprecation
        assert importlib.reload(module) is module
        assert own_value(module, "Old") is own_value(module, "New")
        assert module.Old is module.New
    assert [str(w.message) for w in caught] == [MESSAGE, MESSAGE]


def test_the_class_of_a_module_with_deprecations_pickles_by_reference(
    route: str, load: Callable[..., Any]
) -> None:
    import pickle

    module = load(LIBRARY + "import sys, types\nclass Own(types.ModuleType): pass\n")
    classes = [type(module)]
    module.__class__ = module.Own
    classes.append(type(module))
    for cls in classes:
        assert pickle.loads(pickle.dumps(cls)) is cls


def test_the_deprecating_classes_say_what_they_are_and_where_they_live(
    route: str, load: Callable[..., Any]
) -> None:
    # While the body runs, the native engine gives the pending-markers class
    # (its names move once the import has ended), the class engine the
    # deprecating class itself; both come from the deprecations package and
    # pickle by reference.
    import pickle

    module = load(LIBRARY + "import sys\nclass_in_body = type(sys.modules[__name__])\n")
    cls = module.class_in_body
    home = "pep726hook._deprecations._classes"
    expected = "PendingMarkersModule" if route == "native" else "DeprecatingModule"
    assert next(c.__qualname__ for c in cls.__mro__ if c.__module__ == home) == expected
    assert repr(getattr(sys.modules[home], expected)) == f"<class '{home}.{expected}'>"
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        assert pickle.loads(pickle.dumps(cls, protocol)) is cls


def test_moduletype_setattr_called_directly_skips_the_deprecating_class_under_both_engines(
    route: str, load: Callable[..., Any]
) -> None:
    # ModuleType.__setattr__ skips the class's own __setattr__ (as it skips
    # any subclass's): the data descriptor stores the value, the deprecation
    # stays and nothing warns.  Same under both engines.
    module = load()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        types.ModuleType.__setattr__(module, "Old", "direct")
    assert caught == []
    assert own_value(module, "Old") == "direct"
    assert "Old" in (_entries.deprecations_of(module) or {})

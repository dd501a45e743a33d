"""Deprecated module attributes: ``pep726hook.deprecated()`` and ``deprecate_attribute()``.

Every behaviour is checked under each engine, for a module that opted in with
``enable()`` alone and for one opted in while the process-wide hook is on.
Here: reads, the module's own ``__getattr__``, stores and deletions, what lists
names; the other test_deprecation_*.py files take one area each.
"""

from __future__ import annotations

import inspect
import sys
import types
import warnings
from typing import Any, Callable

import pytest
from _deprecation_helpers import HOOKED_LIBRARY, LIBRARY, MESSAGE, _line_after, loader, own_value
from _venv import (
    WriteModule,
)

import pep726hook
from pep726hook._deprecations import _classes, _entries


@pytest.fixture
def load(write_module: WriteModule) -> Callable[..., Any]:
    return loader(write_module)


# -- reads -------------------------------------------------------------------------------


def test_reads_warn_at_the_callers_line_and_return_the_value(
    route: str, load: Callable[..., Any]
) -> None:
    module = load()
    here = inspect.currentframe()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert module.Old is module.New
        line_attribute = _line_after(here) - 1
        assert getattr(module, "Old") is module.New
        line_getattr = _line_after(here) - 1
        assert getattr(module, "Old", None) is module.New
        assert hasattr(module, "Old")
        assert module.Gone == 42
    assert [str(w.message) for w in caught] == [MESSAGE] * 4 + ["depmod.Gone is deprecated"]
    assert [w.category for w in caught] == [DeprecationWarning] * 4 + [FutureWarning]
    assert {w.filename for w in caught} == {__file__}
    assert [w.lineno for w in caught[:2]] == [line_attribute, line_getattr]


def test_the_value_stays_in_the_namespace_and_other_names_read_plainly(
    route: str, load: Callable[..., Any]
) -> None:
    module = load()
    assert own_value(module, "Old") is own_value(module, "New") and own_value(module, "Gone") == 42
    table = _entries.deprecations_of(module) or {}
    assert {name: (e.message, e.category) for name, e in table.items()} == {
        "Old": (MESSAGE, DeprecationWarning),
        "Gone": ("depmod.Gone is deprecated", FutureWarning),
    }
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert module.plain == 1
        with pytest.raises(AttributeError, match="module 'depmod' has no attribute 'missing'"):
            module.missing  # noqa: B018
        assert not hasattr(module, "missing")


def test_both_engines_give_a_deprecating_module_the_same_kind_of_class(
    route: str, load: Callable[..., Any]
) -> None:
    module = load()
    cls = type(module)
    assert cls is not types.ModuleType and isinstance(module, types.ModuleType)
    assert sys.modules["depmod"] is module
    assert "__getattr__" in vars(cls.__mro__[0]) or hasattr(cls, "__getattr__")
    assert isinstance(inspect.getattr_static(module, "Old"), _classes.DeprecatedName)
    if route == "native" and sys.version_info[:2] != (3, 11):
        from pep726hook import _native

        # No ModuleType-wide read wrapper for deprecations (3.11 has it for
        # every opted-in module: see test_native_deprecations.py).
        assert not _native.state()["getattro_wrapped"]


def test_class_engine_slows_the_reads_of_modules_with_deprecations_only(
    monkeypatch: pytest.MonkeyPatch, load: Callable[..., Any]
) -> None:
    monkeypatch.setenv("PEP726HOOK_ENGINE", "class")
    with_table = load()
    without = load("import pep726hook\nx = 1\npep726hook.enable(__name__)\n", name="nodep")
    # A type-level __getattr__ sends every read of the class through Python's slot.
    assert "__getattr__" not in vars(type(without))
    assert hasattr(type(with_table), "__getattr__")
    assert pep726hook.engine(with_table) == "class"


def test_each_call_site_warns_once_under_the_default_action(
    route: str, load: Callable[..., Any]
) -> None:
    module = load()
    with warnings.catch_warnings(record=True) as caught:
        warnings.resetwarnings()
        warnings.simplefilter("default")
        for _ in range(3):
            module.Old  # noqa: B018
        for _ in range(3):
            module.Old  # noqa: B018
    assert len(caught) == 2
    assert caught[0].lineno != caught[1].lineno


def test_from_import_of_a_module_warns_once_at_the_import_line(
    route: str, load: Callable[..., Any]
) -> None:
    module = load()
    here = inspect.currentframe()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        from depmod import Old  # type: ignore[import-not-found]

        line = _line_after(here) - 2
    assert Old is module.New
    assert [(w.filename, w.lineno, str(w.message)) for w in caught] == [(__file__, line, MESSAGE)]


def test_from_import_of_a_package_warns_once_at_the_import_line(
    route: str, load: Callable[..., Any]
) -> None:
    # importlib's _handle_fromlist asks hasattr(package, "Old") first: that
    # probe must neither warn nor be what the warning names.
    package = load(name="deppkg", package=True)
    here = inspect.currentframe()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        from deppkg import Old  # type: ignore[import-not-found]

        line = _line_after(here) - 2
    assert Old is package.New
    assert [(w.filename, w.lineno) for w in caught] == [(__file__, line)]


def test_a_submodule_import_under_a_deprecated_package_name_is_not_tried(
    route: str, load: Callable[..., Any]
) -> None:
    # hasattr() is True for a deprecated name, so `from package import Old`
    # never looks for a submodule deppkg.Old.
    load(name="deppkg", package=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from deppkg import Old  # noqa: F401  # type: ignore[import-not-found]
    assert "deppkg.Old" not in sys.modules


# -- the module's own __getattr__ (PEP 562) ---------------------------------------------

PEP562_LIBRARY = (
    """
def __getattr__(name):
    if name in ("lazy", "Old"):
        return f"served {name}"
    raise AttributeError(f"custom: no {name}")
"""
    + LIBRARY
)


def test_the_modules_own_getattr_serves_only_missing_names_and_its_errors_pass_through(
    route: str, load: Callable[..., Any]
) -> None:
    module = load(PEP562_LIBRARY)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert module.lazy == "served lazy"
        # In the namespace, as on a plain module: its own __getattr__ is not asked.
        assert module.Old is module.New
        with pytest.raises(AttributeError, match="custom: no missing"):
            module.missing  # noqa: B018
    assert [str(w.message) for w in caught] == [MESSAGE]
    assert caught[0].filename == __file__


def test_a_warning_from_the_modules_own_getattr_names_the_callers_line(
    route: str, load: Callable[..., Any]
) -> None:
    source = (
        "import warnings\n"
        "def __getattr__(name):\n"
        "    if name == 'lazy':\n"
        "        warnings.warn('lazy read', UserWarning, stacklevel=2)\n"
        "        return 1\n"
        "    raise AttributeError(name)\n" + LIBRARY
    )
    module = load(source)
    here = inspect.currentframe()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module.lazy  # noqa: B018
        line = _line_after(here) - 1
    assert [(w.filename, w.lineno) for w in caught] == [(__file__, line)]


# -- stores and deletions ------------------------------------------------------------------


def test_a_store_warns_ends_the_deprecation_and_stores(
    route: str, load: Callable[..., Any]
) -> None:
    module = load()
    here = inspect.currentframe()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module.Old = "new value"
        line = _line_after(here) - 1
        assert module.Old == "new value"
        setattr(module, "Gone", 7)
        assert module.Gone == 7
    assert [(str(w.message), w.filename) for w in caught] == [
        (MESSAGE, __file__),
        ("depmod.Gone is deprecated", __file__),
    ]
    assert caught[0].lineno == line
    assert _entries.deprecations_of(module) == {}
    assert own_value(module, "Old") == "new value"


def test_a_delete_warns_and_deletes_the_name(route: str, load: Callable[..., Any]) -> None:
    module = load()
    here = inspect.currentframe()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        del module.Old
        line = _line_after(here) - 1
        delattr(module, "Gone")
    assert [(w.filename, str(w.message)) for w in caught] == [
        (__file__, MESSAGE),
        (__file__, "depmod.Gone is deprecated"),
    ]
    assert caught[0].lineno == line
    assert not hasattr(module, "Old") and "Old" not in vars(module)
    assert _entries.deprecations_of(module) == {}
    with pytest.raises(AttributeError):
        del module.Old


def test_stores_and_deletions_go_through_the_modules_hooks(
    route: str, load: Callable[..., Any]
) -> None:
    module = load(HOOKED_LIBRARY)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module.Old = 1
        del module.Old
    assert module.log == [("set", "Old", 1), ("del", "Old")]
    assert len(caught) == 1  # the deletion is of an ordinary name by then
    assert not hasattr(module, "Old")


def test_a_failing_store_leaves_the_deprecation_in_place(
    route: str, load: Callable[..., Any]
) -> None:
    module = load(HOOKED_LIBRARY)
    table = dict(_entries.deprecations_of(module) or {})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(ValueError, match="refused by the hook"):
            module.Old = "refused"
        assert _entries.deprecations_of(module) == table
        assert own_value(module, "Old") is module.New
        assert module.Old is module.New
    assert len(caught) == 2  # the store, then the read


def test_a_failing_delete_leaves_the_deprecation_and_namespace_as_they_were(
    route: str, load: Callable[..., Any]
) -> None:
    module = load(HOOKED_LIBRARY)
    table = dict(_entries.deprecations_of(module) or {})
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        with pytest.raises(ValueError, match="refused by the hook"):
            del module.Gone
        assert _entries.deprecations_of(module) == table
        assert own_value(module, "Gone") == 42
        assert module.Gone == 42
    assert module.log == [("del", "Gone")]


# -- what lists names -----------------------------------------------------------------------


def test_dir_lists_deprecated_names_and_vars_and_star_import_follow_the_namespace(
    route: str, load: Callable[..., Any]
) -> None:
    module = load()
    assert module.plain == 1  # the first read through the module moves the names
    native = pep726hook.engine(module) == "native"
    assert "Old" in dir(module) and "Gone" in dir(module)
    # Under the native engine the names left the namespace for the module's
    # private builtins, and a star import without __all__ takes what the
    # namespace holds, as on a plain module.
    assert ("Old" in vars(module)) is not native
    namespace: dict[str, Any] = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exec("from depmod import *", namespace)
    assert namespace["plain"] == 1
    if native:
        assert "Old" not in namespace and caught == []
    else:
        assert namespace["Old"] is module.New
        assert sorted(str(w.message) for w in caught) == sorted(
            [MESSAGE, "depmod.Gone is deprecated"]
        )


def test_star_import_of_a_deprecated_name_in_all_warns(
    route: str, load: Callable[..., Any]
) -> None:
    module = load(LIBRARY + "__all__ = ['Old', 'plain']\n")
    namespace: dict[str, Any] = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exec("from depmod import *", namespace)
    assert namespace["Old"] is module.New
    assert [str(w.message) for w in caught] == [MESSAGE]

"""Lazy deprecations: a submodule not imported yet, a factory run at the first read."""

from __future__ import annotations

import importlib
import inspect
import sys
import types
import warnings
from typing import Any, Callable

import pytest
from _deprecation_helpers import _line_after, loader, own_value
from _venv import (
    WriteModule,
    collect_garbage,
)

import pep726hook
from pep726hook._deprecations import _entries


@pytest.fixture
def load(write_module: WriteModule) -> Callable[..., Any]:
    return loader(write_module)


# -- lazy deprecations: a submodule not imported yet, a factory ----------------------------


@pytest.fixture
def lazy_package(write_module: WriteModule) -> Callable[[], Any]:
    def make() -> Any:
        write_module("lazypkg", "import pep726hook\n", package=True)
        write_module("lazypkg.sub", "import builtins\nbuiltins.lazypkg_sub_ran = True\nx = 1\n")
        return importlib.import_module("lazypkg")

    return make


def _forget_submodule() -> None:
    import builtins

    sys.modules.pop("lazypkg.sub", None)
    vars(builtins).pop("lazypkg_sub_ran", None)


def test_a_submodule_not_imported_yet_is_found_but_not_run(
    route: str, lazy_package: Callable[[], Any]
) -> None:
    package = lazy_package()
    try:
        pep726hook.deprecate_attribute(package, "sub", "lazypkg.sub is deprecated")
        assert "lazypkg.sub" not in sys.modules and "sub" not in vars(package)
        here = inspect.currentframe()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert package.sub.x == 1
            line = _line_after(here) - 1
            assert package.sub is sys.modules["lazypkg.sub"]
        assert [(w.filename, w.lineno, str(w.message)) for w in caught] == [
            (__file__, line, "lazypkg.sub is deprecated"),
            (__file__, line + 2, "lazypkg.sub is deprecated"),
        ]
        assert "sub" in (_entries.deprecations_of(package) or {})
    finally:
        _forget_submodule()


def test_import_of_a_lazily_deprecated_submodule_binds_it_without_warning(
    route: str, lazy_package: Callable[[], Any]
) -> None:
    package = lazy_package()
    try:
        pep726hook.deprecate_attribute(package, "sub", "lazypkg.sub is deprecated")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            import lazypkg.sub  # type: ignore[import-not-found]  # noqa: F401

            assert own_value(package, "sub") is sys.modules["lazypkg.sub"]
        assert caught == []
        assert "sub" in (_entries.deprecations_of(package) or {})
        here = inspect.currentframe()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            from lazypkg import sub  # type: ignore[import-not-found]

            line = _line_after(here) - 2
            assert sub.x == 1
        assert [(w.filename, w.lineno) for w in caught] == [(__file__, line)]
    finally:
        _forget_submodule()


def test_from_package_import_of_a_lazy_submodule_warns_once(
    route: str, lazy_package: Callable[[], Any]
) -> None:
    lazy_package()
    try:
        pep726hook.deprecate_attribute("lazypkg", "sub", "lazypkg.sub is deprecated")
        here = inspect.currentframe()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            from lazypkg import sub

            line = _line_after(here) - 2
        assert sub.x == 1
        assert [(w.filename, w.lineno) for w in caught] == [(__file__, line)]
    finally:
        _forget_submodule()


def test_a_factory_runs_once_at_the_first_read_and_a_failing_one_is_tried_again(
    route: str, load: Callable[..., Any]
) -> None:
    module = load("x = 1\n", name="factmod")
    calls: list[int] = []

    def factory() -> str:
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("not yet")
        return "made"

    pep726hook.deprecate_attribute(module, "made", "made is deprecated", factory=factory)
    assert calls == [] and "made" not in vars(module)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(RuntimeError, match="not yet"):
            module.made  # noqa: B018
        assert "made" not in vars(module)
        assert module.made == "made"
        assert module.made == "made"
    assert len(calls) == 2
    assert [str(w.message) for w in caught] == ["made is deprecated"] * 2
    assert own_value(module, "made") == "made"


def test_lazy_deprecations_refuse_bad_input_and_change_nothing(
    route: str, load: Callable[..., Any]
) -> None:
    module = load("x = 1\n", name="badlazy")
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        pep726hook.deprecate_attribute(module, "nope", "m")
    with pytest.raises(TypeError, match="factory must be callable"):
        pep726hook.deprecate_attribute(module, "nope", "m", factory=3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="a factory is only for a name without one"):
        pep726hook.deprecate_attribute(module, "x", "m", factory=lambda: 2)
    assert _entries.deprecations_of(module) is None
    assert own_value(module, "x") == 1


@pytest.mark.parametrize("engine", pep726hook.available_engines())
def test_the_process_wide_hook_alone_leaves_a_modules_markers_as_they_are(
    engine: str,
    monkeypatch: pytest.MonkeyPatch,
    load: Callable[..., Any],
    no_opted_in_module_alive: None,
) -> None:
    # Only enable() (or deprecate_attribute()) opts a module with markers in,
    # under every engine: the class engine's finder sees each import end,
    # the native engine does not, and neither acts on markers there.
    monkeypatch.setenv("PEP726HOOK_ENGINE", engine)
    pep726hook.deprecated(0, "loads the deprecation module")
    with pep726hook.install(engine):
        module = load("import pep726hook\nY = pep726hook.deprecated(5, 'Y is deprecated')\n")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                marker = module.Y
            assert type(marker) is pep726hook.DeprecatedValue
            with pytest.raises(TypeError, match=r"pep726hook\.enable\(__name__\)"):
                marker()
        finally:
            del module, marker
            sys.modules.pop("depmod", None)
            collect_garbage()


def test_a_marker_stored_through_an_enabled_module_without_deprecations_becomes_one(
    route: str, load: Callable[..., Any]
) -> None:
    # Under the native engine the module is a plain ModuleType until then:
    # the patched store slot sees the marker's type.
    module = load("import pep726hook\nx = 1\npep726hook.enable(__name__)\n", name="nodeps")
    with pytest.raises(ValueError, match="'__version__' cannot be deprecated"):
        module.__version__ = pep726hook.deprecated("1", "use importlib.metadata")
    assert "__version__" not in vars(module)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        setattr(module, "Y", pep726hook.deprecated(5, "Y is deprecated"))
        assert own_value(module, "Y") == 5
        assert module.Y == 5
    assert [str(w.message) for w in caught] == ["Y is deprecated"]


def test_reload_keeps_lazy_deprecations(route: str, lazy_package: Callable[[], Any]) -> None:
    package = lazy_package()
    try:
        pep726hook.deprecate_attribute(package, "sub", "lazypkg.sub is deprecated")
        pep726hook.deprecate_attribute(package, "made", "made is deprecated", factory=lambda: 7)
        assert importlib.reload(package) is package
        assert "lazypkg.sub" not in sys.modules
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert package.made == 7
            assert package.sub.x == 1
        assert [str(w.message) for w in caught] == [
            "made is deprecated",
            "lazypkg.sub is deprecated",
        ]
    finally:
        _forget_submodule()


def test_a_factorys_value_is_not_stored_when_the_warning_raises(
    route: str, load: Callable[..., Any]
) -> None:
    module = load("x = 1\n", name="factwarn")
    pep726hook.deprecate_attribute(module, "made", "made is deprecated", factory=lambda: 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(DeprecationWarning, match="made is deprecated"):
            module.made  # noqa: B018
    assert "made" not in vars(module)
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        assert module.made == 3
    assert own_value(module, "made") == 3


class RefusingMeta(type):
    """A metaclass that refuses to build any subclass of its classes (pep726hook's included)."""

    def __new__(mcs, name: str, bases: tuple[type, ...], namespace: dict[str, Any]) -> Any:
        if any(isinstance(base, RefusingMeta) for base in bases):
            raise RuntimeError("no subclasses")
        return super().__new__(mcs, name, bases, namespace)


class RefusingModule(types.ModuleType, metaclass=RefusingMeta):
    pass


def test_a_deprecating_class_that_cannot_be_made_leaves_the_module_as_it_was(
    route: str,
) -> None:
    module = RefusingModule("refusing")
    module.Old = 1
    sys.modules["refusing"] = module
    try:
        with pytest.raises(RuntimeError, match="no subclasses"):
            pep726hook.deprecate_attribute(module, "Old", "Old is deprecated")
        assert type(module) is RefusingModule
        assert "Old" not in (_entries.deprecations_of(module) or {})
        assert own_value(module, "Old") == 1
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert module.Old == 1
    finally:
        sys.modules.pop("refusing", None)
        del module
        collect_garbage()

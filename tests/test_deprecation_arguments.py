"""``deprecate_attribute()`` moving an existing name, and the bad arguments ``deprecated()`` and ``enable()`` refuse, changing nothing."""

from __future__ import annotations

import importlib
import warnings
from typing import Any, Callable

import pytest
from _deprecation_helpers import loader, own_value
from _venv import (
    WriteModule,
)

import pep726hook
from pep726hook._deprecations import _entries


@pytest.fixture
def load(write_module: WriteModule) -> Callable[..., Any]:
    return loader(write_module)


# -- deprecate_attribute() -----------------------------------------------------------------


def test_deprecate_attribute_moves_an_existing_name(route: str, load: Callable[..., Any]) -> None:
    module = load("value = 3\nother = 4\n", name="twisted_like")
    pep726hook.deprecate_attribute(module, "value", "value is deprecated")
    assert pep726hook.engine(module) == route
    assert own_value(module, "value") == 3
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert module.value == 3
        pep726hook.deprecate_attribute("twisted_like", "value", "new text", category=UserWarning)
        assert module.value == 3
        assert module.other == 4
    assert [(str(w.message), w.category) for w in caught] == [
        ("value is deprecated", DeprecationWarning),
        ("new text", UserWarning),
    ]


def test_deprecate_attribute_refuses_a_missing_name_and_changes_nothing(
    route: str, load: Callable[..., Any]
) -> None:
    module = load("value = 3\n", name="twisted_like")
    with pytest.raises(AttributeError, match="'twisted_like' has no attribute 'nope'"):
        pep726hook.deprecate_attribute(module, "nope", "gone")
    with pytest.raises(ValueError, match="'__doc__' cannot be deprecated"):
        pep726hook.deprecate_attribute(module, "__doc__", "gone")
    with pytest.raises(TypeError, match="name must be a str, not int"):
        pep726hook.deprecate_attribute(module, 3, "gone")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="needs a module or its name, not int"):
        pep726hook.deprecate_attribute(3, "value", "gone")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"sys\.modules has no module of that name"):
        pep726hook.deprecate_attribute("no_such_module_here", "value", "gone")
    with pytest.raises(ValueError, match="message must not be empty"):
        pep726hook.deprecate_attribute(module, "value", "")
    assert own_value(module, "value") == 3
    assert _entries.deprecations_of(module) is None
    assert not pep726hook.is_upgraded(module) or pep726hook.is_installed()


def test_deprecate_attribute_puts_the_value_back_when_opting_in_fails(
    route: str, monkeypatch: pytest.MonkeyPatch, load: Callable[..., Any]
) -> None:
    module = load("value = 3\n", name="twisted_like")

    def failing(_module: object, _fast_getattr: object = None) -> None:
        raise RuntimeError("opting in failed")

    monkeypatch.setattr("pep726hook._deprecations._deprecating.opt_in", failing)
    with pytest.raises(RuntimeError, match="opting in failed"):
        pep726hook.deprecate_attribute(module, "value", "gone")
    assert own_value(module, "value") == 3


# -- bad arguments ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("arguments", "error", "match"),
    [
        ((1, 2), TypeError, "message must be a str, not int"),
        ((1, ""), ValueError, "message must not be empty"),
        ((1, "m", int), TypeError, "category must be a Warning subclass, not <class 'int'>"),
        ((1, "m", UserWarning("x")), TypeError, "category must be a Warning subclass"),
    ],
)
def test_deprecated_refuses_bad_arguments(arguments: Any, error: type, match: str) -> None:
    value, message, *category = arguments
    kwargs = {"category": category[0]} if category else {}
    with pytest.raises(error, match=match):
        pep726hook.deprecated(value, message, **kwargs)


def test_deprecated_refuses_a_marker_as_value() -> None:
    marker = pep726hook.deprecated(1, "m")
    with pytest.raises(ValueError, match="already a deprecated"):
        pep726hook.deprecated(marker, "m")


def test_enable_refuses_a_marker_under_a_dunder_name_before_opting_in(
    route: str, write_module: WriteModule
) -> None:
    source = (
        "import pep726hook, sys\n"
        "__all__ = pep726hook.deprecated([], 'm')\n"
        "try:\n"
        "    pep726hook.enable(__name__)\n"
        "except ValueError as error:\n"
        "    refused = str(error)\n"
        "    from pep726hook._enable import is_opted_in\n"
        "    opted_in = is_opted_in(sys.modules[__name__])\n"
    )
    write_module("dunder", source)
    module: Any = importlib.import_module("dunder")
    assert "'__all__' cannot be deprecated" in module.refused
    assert module.opted_in is False
    assert type(module.__all__) is pep726hook.DeprecatedValue

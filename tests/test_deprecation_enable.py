"""Deprecated module attributes and ``enable()``: markers assigned or stored after it runs, and no deprecation module loaded without them."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import warnings
from typing import Any, Callable

import pytest
from _deprecation_helpers import LIBRARY, loader, own_value
from _venv import (
    ENGINES,
    TIMEOUT,
    WriteModule,
    clean_env,
    describe,
)

import pep726hook


@pytest.fixture
def load(write_module: WriteModule) -> Callable[..., Any]:
    return loader(write_module)


# -- when enable() runs ------------------------------------------------------------------


def test_a_marker_assigned_after_enable_is_converted_by_the_first_read_through_the_module(
    route: str, load: Callable[..., Any]
) -> None:
    source = (
        "import pep726hook\n"
        "pep726hook.enable(__name__)\n"
        "Old = pep726hook.deprecated(1, 'old')\n"
        "seen_in_body = repr(Old)\n"
    )
    module = load(source)
    # Documented: the body's own read before any conversion point sees the marker.
    assert "not in effect yet" in own_value(module, "seen_in_body")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert module.Old == 1
        assert own_value(module, "Old") == 1
        assert module.Old == 1
    assert [str(w.message) for w in caught] == ["old", "old"]
    assert "pending" not in type(module).__qualname__


def test_a_marker_stored_through_an_enabled_module_becomes_a_deprecation(
    route: str, load: Callable[..., Any]
) -> None:
    module = load(LIBRARY)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        setattr(module, "Later", pep726hook.deprecated(5, "later"))
        assert own_value(module, "Later") == 5
        assert module.Later == 5
    assert [str(w.message) for w in caught] == ["later"]


@pytest.mark.parametrize("engine_name", ENGINES)
def test_enable_without_deprecations_never_loads_the_deprecation_module(engine_name: str) -> None:
    code = """
        import sys, types
        module = types.ModuleType("lib")
        sys.modules["lib"] = module
        import pep726hook
        pep726hook.enable("lib")
        print(pep726hook.engine(module), "pep726hook._deprecations" in sys.modules)
    """
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env={**clean_env(), "PEP726HOOK_ENGINE": engine_name},
        timeout=TIMEOUT,
        check=False,
    )
    assert result.returncode == 0, describe(result)
    assert result.stdout == f"{engine_name} False\n"

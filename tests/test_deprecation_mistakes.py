"""Two mistakes a library makes with deprecated names, and what each looks like.

* A package that re-exports a deprecated name of one of its modules in its
  ``__init__`` (``from .shapes import Round``) reads it through that module,
  so every import of the package warns at the package's own line (an error
  under ``-W error``).  Deprecating the name in ``__init__`` too, with the
  value itself, is the fix docs/deprecation.md gives.
* A module that assigns ``deprecated()`` markers and never calls
  ``enable()`` leaves the markers themselves in its namespace: using one as
  its value raises an error that names the missing ``enable()``.

Each runs under every engine, the first two with ``enable()`` alone and with
the process-wide hook on as well.
"""

from __future__ import annotations

import importlib
import warnings
from typing import Any

import pytest
from _venv import WriteModule

import pep726hook

MESSAGE = "Round is deprecated; use Circle"

SHAPES = f"""
import pep726hook

class Circle:
    pass

Round = pep726hook.deprecated(Circle, {MESSAGE!r})
pep726hook.enable(__name__)
"""

# What docs/deprecation.md shows, under "A package that re-exports a deprecated name".
REEXPORTING_INIT = "from .shapes import Circle, Round\n"
DEPRECATING_INIT = f"""
import pep726hook
from .shapes import Circle

Round = pep726hook.deprecated(Circle, {MESSAGE!r})
pep726hook.enable(__name__)
"""


def _package(write_module: WriteModule, name: str, init: str) -> None:
    write_module(name, init, package=True)
    write_module(f"{name}.shapes", SHAPES)


def test_a_package_re_exporting_a_deprecated_name_warns_at_its_own_import(
    route: str, write_module: WriteModule
) -> None:
    _package(write_module, "reexporting", REEXPORTING_INIT)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        package: Any = importlib.import_module("reexporting")
    # At the package's own line, not the user's: every user's import meets
    # it, and under -W error it is an ImportError of the package.
    init = package.__file__
    assert [(w.filename, w.lineno, str(w.message)) for w in caught] == [(init, 1, MESSAGE)]


def test_deprecating_the_name_in_init_too_imports_silently_and_warns_its_users(
    route: str, write_module: WriteModule
) -> None:
    _package(write_module, "redeprecating", DEPRECATING_INIT)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        package: Any = importlib.import_module("redeprecating")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        from redeprecating import Round  # type: ignore[import-not-found]

        from_submodule = package.shapes.Round
    assert Round is package.Circle is from_submodule
    assert [(w.filename, str(w.message)) for w in caught] == [(__file__, MESSAGE)] * 2


def test_a_marker_whose_module_never_called_enable_names_the_fix(
    opt_in_engine: str, write_module: WriteModule
) -> None:
    # Without the process-wide hook: with it, the class engine converts the
    # markers of a module that never called enable() (the native engine
    # does not).
    write_module("forgotten", SHAPES.replace("pep726hook.enable(__name__)", ""))
    module: Any = importlib.import_module("forgotten")
    marker = module.Round
    assert type(marker) is pep726hook.DeprecatedValue
    with pytest.raises(TypeError, match=r"was called: .* has not called pep726hook\.enable"):
        marker()
    with pytest.raises(AttributeError, match=r"attribute 'mro': .* pep726hook\.enable\(__name__\)"):
        marker.mro  # noqa: B018
    # Still an AttributeError: hasattr() and getattr() with a default answer as usual.
    assert not hasattr(marker, "mro")
    assert getattr(marker, "mro", None) is None
    assert marker.value is module.Circle

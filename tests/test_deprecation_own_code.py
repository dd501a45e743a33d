"""A deprecating module's own code reads its deprecated names without a warning; reads through the module warn."""

from __future__ import annotations

import inspect
import sys
import types
import warnings
from typing import Any, Callable

import pytest
from _deprecation_helpers import _line_after, loader
from _venv import (
    WriteModule,
    no_pypy_jit,
)

import pep726hook


@pytest.fixture
def load(write_module: WriteModule) -> Callable[..., Any]:
    return loader(write_module)


# -- the module's own code sees the name ------------------------------------------------

OWN_CODE_LIBRARY = """
from __future__ import annotations

import typing
import pep726hook

class New:
    pass

Old = New
plain = 1
pep726hook.deprecate_attribute(__name__, "Old", "Old is deprecated")
read_in_body = Old

def function():
    return Old

def outer():
    def closure():
        return Old
    return closure()

class InBody:
    attribute = Old

def annotated(x: Old) -> Old:
    return x

hints = typing.get_type_hints(annotated)
"""


def test_the_modules_own_code_reads_a_deprecated_name_without_warning(
    route: str, load: Callable[..., Any]
) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module = load(OWN_CODE_LIBRARY)
        assert module.__dict__["read_in_body"] is module.__dict__["New"]
        assert module.function() is module.New
        assert module.outer() is module.New
        assert module.InBody.attribute is module.New
        assert module.hints == {"x": module.New, "return": module.New}
        assert typing_hints(module) == {"x": module.New, "return": module.New}
    assert caught == []


def typing_hints(module: Any) -> Any:
    import typing

    return typing.get_type_hints(module.annotated)


def test_each_read_through_the_module_warns_once_and_other_reads_never(
    route: str, load: Callable[..., Any]
) -> None:
    module = load(OWN_CODE_LIBRARY)
    here = inspect.currentframe()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first = _line_after(here) + 1
        module.Old  # noqa: B018
        getattr(module, "Old")
        hasattr(module, "Old")
        from depmod import Old  # type: ignore[import-not-found]  # noqa: F401

        module.plain  # noqa: B018
        getattr(module, "plain")
        module.function  # noqa: B018
    assert [(w.filename, w.lineno) for w in caught] == [(__file__, first + i) for i in range(4)]


@pytest.mark.skipif(sys.version_info < (3, 11), reason="the specialising interpreter is 3.11+")
def test_a_warm_loop_never_reads_the_deprecated_name_without_warning(
    route: str, load: Callable[..., Any]
) -> None:
    import dis

    module = load(OWN_CODE_LIBRARY)
    # A code object of its own for each run: one compiled with this test
    # would keep what an earlier engine's run specialised it to.
    namespace: dict[str, Any] = {"module": module}
    source = "def reads():\n    return module.plain, module.Old\n"
    exec(compile(source, f"<warm loop under {route}>", "exec"), namespace)
    reads = namespace["reads"]

    counts = []
    # PyPy's JIT would compile a trace of the loop that keeps the module alive.
    with no_pypy_jit():
        for _ in range(1000):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                reads()
            counts.append(len(caught))
    assert counts == [1] * 1000
    if sys.implementation.name != "cpython":
        return  # PyPy's dis has no adaptive (specialised) instructions to show
    # Under the native engine the module is a plain module once its import
    # has ended: the read of its other name is specialised, the deprecated
    # one (not in its namespace) never is.  The class engine's deprecating
    # class keeps both unspecialised.
    specialised = [
        i.opname
        for i in dis.get_instructions(reads, adaptive=True)
        if i.opname.startswith("LOAD_ATTR_MODULE")
    ]
    native = pep726hook.engine(module) == "native"
    assert specialised == (["LOAD_ATTR_MODULE"] if native else [])
    assert (type(module) is types.ModuleType) is native

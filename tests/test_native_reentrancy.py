"""Native engine: hooks that store on their own module, recurse, raise, or change the namespace while they run."""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Callable

import pytest
from _native_helpers import REQUIRES_NATIVE, ModuleType, run_python

pytestmark = REQUIRES_NATIVE


# --- re-entrancy and hooks that change the namespace ----------------------------


def test_hook_storing_on_its_own_module_raises_recursion_error(
    native: None, write_module: Callable[..., Path]
) -> None:
    write_module(
        "self_storing",
        """
        import sys
        def __setattr__(name, value):
            setattr(sys.modules[__name__], name, value)
        def __delattr__(name):
            delattr(sys.modules[__name__], name)
        """,
    )
    import self_storing  # type: ignore[import-not-found]

    with pytest.raises(RecursionError):
        self_storing.x = 1
    with pytest.raises(RecursionError):
        del self_storing.x
    # The interpreter is still fine afterwards.
    self_storing.__dict__.pop("__setattr__")
    self_storing.x = 2
    assert self_storing.x == 2


def test_deep_recursion_in_a_subprocess_does_not_crash() -> None:
    result = run_python(
        """
        import sys, types, pep726hook
        pep726hook.install("native")
        m = types.ModuleType("m")
        m.__dict__["__setattr__"] = lambda n, v: setattr(m, n, v)
        m.__dict__["__delattr__"] = lambda n: delattr(m, n)
        for action in (lambda: setattr(m, "x", 1), lambda: delattr(m, "x")):
            try:
                action()
            except RecursionError:
                print("RecursionError")
        """
    )
    assert result.stdout.split() == ["RecursionError"] * 2, result.stderr


def test_exception_from_the_hook_propagates_unchanged(native: None) -> None:
    module = ModuleType("m")
    error = AttributeError("Read-only attribute")

    def refuse(*args: object) -> None:
        raise error

    module.__dict__["__setattr__"] = refuse
    module.__dict__["__delattr__"] = refuse
    with pytest.raises(AttributeError) as caught:
        module.x = 1
    assert caught.value is error
    with pytest.raises(AttributeError) as caught:
        del module.x
    assert caught.value is error
    assert "x" not in module.__dict__


@pytest.mark.parametrize("hook", [None, "not callable", 42])
def test_hook_present_but_not_callable_is_a_type_error(native: None, hook: object) -> None:
    module = ModuleType("m")
    module.__dict__["__setattr__"] = hook
    module.__dict__["__delattr__"] = hook
    with pytest.raises(TypeError):
        module.x = 1
    with pytest.raises(TypeError):
        del module.x


def test_hook_with_wrong_arity_is_a_type_error(native: None) -> None:
    module = ModuleType("m")
    module.__dict__["__setattr__"] = lambda name: None
    module.__dict__["__delattr__"] = lambda: None
    with pytest.raises(TypeError):
        module.x = 1
    with pytest.raises(TypeError):
        del module.x


def test_hook_deleting_itself_while_it_runs(native: None) -> None:
    module = ModuleType("m")
    namespace = module.__dict__
    calls = []

    def once(name: str, value: object) -> None:
        calls.append(name)
        del namespace["__setattr__"]
        gc.collect()
        namespace[name] = value

    namespace["__setattr__"] = once
    del once
    module.x = 1
    module.y = 2
    assert calls == ["x"]
    assert (module.x, module.y) == (1, 2)


def test_hook_clearing_or_replacing_the_namespace_while_it_runs(native: None) -> None:
    module = ModuleType("m")
    namespace = module.__dict__

    def clearing(name: str, value: object) -> None:
        namespace.clear()
        gc.collect()

    def replacing(name: str) -> None:
        saved = dict(namespace)
        namespace.clear()
        namespace.update(saved, replaced=True)
        namespace.pop("__delattr__")
        namespace["__delattr__"] = lambda n: namespace.setdefault("deleted", n)

    namespace["__setattr__"] = clearing
    namespace["__delattr__"] = replacing
    del clearing, replacing
    module.x = 1
    assert namespace == {}
    module.y = 2
    assert namespace == {"y": 2}
    namespace["__delattr__"] = lambda n: namespace.clear()
    del module.y
    assert namespace == {}


def test_hook_replacing_the_namespace_keys_during_deletion(native: None) -> None:
    module = ModuleType("m")
    namespace = module.__dict__

    def replacing(name: str) -> None:
        saved = dict(namespace)
        namespace.clear()
        namespace.update(saved)
        namespace["__delattr__"] = lambda n: namespace.setdefault("deleted", n)

    namespace["__delattr__"] = replacing
    del replacing
    del module.a
    del module.b
    assert namespace["deleted"] == "b"

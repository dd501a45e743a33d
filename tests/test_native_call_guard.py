"""Native engine, 3.8-3.12: the call guard around ``object.__setattr__`` keeps slot wrappers called on modules as they were."""

from __future__ import annotations

import sys
import types
from typing import Any, Callable

import pytest
from _native_helpers import REQUIRES_NATIVE, ModuleType, hooked_module

import pep726hook

pytestmark = REQUIRES_NATIVE


# --- the call guard around object.__setattr__ (3.8-3.12) -----------------------


class _PythonSetattr(ModuleType):
    def __setattr__(self, name: str, value: Any) -> None:
        super().__setattr__(name, value)


class _PythonSetattrSkippingModuleType(ModuleType):
    def __setattr__(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)


_PRE_INSTALL = type("PreInstall", (ModuleType,), {})
_WRAPPER_CALL = type(object.__setattr__).__call__
_METHOD_WRAPPER_CALL = type(object().__setattr__).__call__
_ORIGINAL_MODULE_SETATTR = vars(ModuleType).get("__setattr__")


def _outcome(action: Callable[[], Any]) -> tuple[str, str]:
    try:
        result = action()
    except Exception as error:
        return type(error).__name__, str(error)
    return "ok", repr(result)


def _guarded_calls(post_install: type) -> dict[str, tuple[str, str]]:
    """Every way a slot wrapper of the generic store reaches a module, and its outcome."""
    import functools

    outcomes: dict[str, tuple[str, str]] = {}
    classes: dict[str, type] = {
        "module": ModuleType,
        "pre": _PRE_INSTALL,
        "post": post_install,
        "python_setattr": _PythonSetattr,
        "skipping": _PythonSetattrSkippingModuleType,
    }
    for label, cls in classes.items():
        calls: dict[str, Callable[[Any], Any]] = {
            "set": lambda m: object.__setattr__(m, "x", 1),
            "set_then_read": lambda m: (object.__setattr__(m, "x", 2), m.__dict__["x"]),
            "del": lambda m: (object.__setattr__(m, "x", 1), object.__delattr__(m, "x")),
            "del_missing": lambda m: object.__delattr__(m, "missing"),
            "set_class": lambda m: object.__setattr__(m, "__class__", type(m)),
            "super_set": lambda m: super(ModuleType, m).__setattr__("x", 1),
            "super_del": lambda m: (m.__dict__.update(x=1), super(ModuleType, m).__delattr__("x")),
            "partial": lambda m: functools.partial(object.__setattr__, m)("x", 1),
            "partial_bound": lambda m: functools.partial(super(ModuleType, m).__setattr__)("x", 1),
            "wrapper_call": lambda m: _WRAPPER_CALL(object.__setattr__, m, "x", 1),
            "wrapper_call_twice": lambda m: _WRAPPER_CALL(
                _WRAPPER_CALL, object.__delattr__, m, "x"
            ),
            "bound_call": lambda m: object.__setattr__.__call__(m, "x", 1),
            "method_wrapper_call": lambda m: _METHOD_WRAPPER_CALL(
                super(ModuleType, m).__setattr__, "x", 1
            ),
            "module_type_original": lambda m: (
                _ORIGINAL_MODULE_SETATTR(m, "x", 1) if _ORIGINAL_MODULE_SETATTR else None
            ),
            "empty_kwargs": lambda m: object.__setattr__(m, "x", 1, **{}),
            "name_not_str": lambda m: object.__setattr__(m, 1, 2),
            "del_name_not_str": lambda m: object.__delattr__(m, 1),
            "too_few": lambda m: object.__setattr__(m, "x"),
            "too_many": lambda m: object.__setattr__(m, "x", 1, 2),
            "self_only": object.__setattr__,
            "del_too_many": lambda m: object.__delattr__(m, "x", "y"),
            "del_too_few": object.__delattr__,
            "keywords": lambda m: object.__setattr__(m, "x", value=1),
            "del_keywords": lambda m: object.__delattr__(m, name="x"),
            "super_too_few": lambda m: super(ModuleType, m).__setattr__("x"),
            "super_keywords": lambda m: super(ModuleType, m).__setattr__("x", value=1),
            "partial_keywords": lambda m: functools.partial(object.__setattr__, m, "x")(v=1),
            "wrapper_call_no_self": lambda m: _WRAPPER_CALL(object.__setattr__),
            "wrapper_call_bad_self": lambda m: _WRAPPER_CALL(m, m, "x", 1),
        }
        for name, call in calls.items():
            module = cls(f"m_{label}")
            module.__dict__["__setattr__"] = lambda n, v: None
            outcomes[f"{label}/{name}"] = _outcome(lambda call=call, module=module: call(module))
    # The same slot wrappers on other objects and types, and other wrappers.
    plain = types.SimpleNamespace()
    outcomes["namespace"] = _outcome(lambda: object.__setattr__(plain, "x", 1))
    outcomes["type"] = _outcome(lambda: object.__setattr__(int, "x", 1))
    outcomes["type_del"] = _outcome(lambda: object.__delattr__(int, "real"))
    outcomes["no_self"] = _outcome(object.__setattr__)
    outcomes["not_applicable"] = _outcome(lambda: ModuleType.__init__(plain, "x"))
    outcomes["other_wrapper"] = _outcome(lambda: int.__add__(1, 2))
    outcomes["other_bound"] = _outcome(lambda: (1).__add__(2))
    return outcomes


def _post_install_class() -> type:
    return type("PostInstall", (ModuleType,), {})


def test_slot_wrappers_on_modules_behave_as_without_the_engine() -> None:
    # The direct slot makes CPython 3.8-3.12's hackcheck reject every module;
    # the guard around the two tp_calls must accept and reject exactly what an
    # unpatched interpreter does, with the same messages.
    plain = _guarded_calls(_post_install_class())
    with pep726hook.install("native"):
        patched = _guarded_calls(_post_install_class())
    after = _guarded_calls(_post_install_class())
    assert patched == plain
    assert after == plain
    assert plain["module/set"] == ("ok", "None")
    assert plain["module/too_few"][0] == "TypeError"


def test_object_setattr_on_a_module_does_not_call_its_hook(native: None) -> None:
    log: list[Any] = []
    for cls in (ModuleType, _PRE_INSTALL, _post_install_class()):
        module = hooked_module(cls=cls, log=log)
        object.__setattr__(module, "x", 1)
        super(ModuleType, module).__setattr__("y", 2)
        object.__delattr__(module, "x")
        assert module.__dict__["y"] == 2
        assert "x" not in module.__dict__
    assert log == []


def _tp_call(cls: type) -> int:
    import ctypes

    # PyTypeObject on a 64-bit release build: tp_call is the 17th pointer.
    return ctypes.c_void_p.from_address(id(cls) + 16 * ctypes.sizeof(ctypes.c_void_p)).value or 0


@pytest.mark.skipif(
    hasattr(sys, "gettotalrefcount") or sys.maxsize < 2**32,
    reason="reads PyTypeObject.tp_call at its 64-bit release-build offset",
)
def test_uninstall_restores_the_slot_wrapper_calls() -> None:
    from pep726hook import _native

    wrapper_types = (type(object.__setattr__), type(object().__setattr__))
    before = [_tp_call(cls) for cls in wrapper_types]
    with pep726hook.install("native"):
        during = [_tp_call(cls) for cls in wrapper_types]
        assert _native.state()["call_guard"] is (sys.version_info < (3, 13))
    assert [_tp_call(cls) for cls in wrapper_types] == before
    assert _native.state()["call_guard"] is False
    if sys.version_info < (3, 13):
        assert all(a != b for a, b in zip(before, during))
    else:
        assert during == before

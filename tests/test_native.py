"""Native-engine specifics: what patching the module type's slot runs into.

The shared semantics run under every engine in the other test files; here are
the cases only a slot patch can get wrong: typeobject.c's hackcheck, ModuleType
subclasses made before and after the patch, restoring the type dict, choosing
the engine.  Sub-interpreters, re-entrancy, memory safety, the call guard and
opting single modules in have their own test_native_*.py files.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any, Callable

import pytest
from _native_helpers import (
    _MISSING,
    REQUIRES_NATIVE,
    ModuleType,
    _subclass_calling_super,
    hooked_module,
)

import pep726hook
from pep726hook import EngineUnavailableError, _native_engine

pytestmark = REQUIRES_NATIVE


# --- the design in use -------------------------------------------------------


def test_slot_design_matches_the_version(native: None) -> None:
    from pep726hook import _native

    state = _native.state()
    assert state == {
        "patched": True,
        "owner_is_current": True,
        "main": True,
        "entries": True,
        # The direct slot everywhere; before 3.13 hackcheck() needs the guard
        # around the slot wrappers' calls (checked below).
        "direct": True,
        "call_guard": sys.version_info < (3, 13),
        # install() without arguments is the process-wide hook.
        "process_wide": True,
        "opted_in": 0,
        # No module holds a __getattr__ outside: the read slot is CPython's.
        "getattro_wrapped": False,
        "relocating": 0,
    }


def test_module_classes_stay_exactly_module_type(native: None) -> None:
    # Reads keep CPython 3.11+'s LOAD_ATTR specialisation, which needs
    # type(m) is ModuleType ("CPython performance facts").
    module = hooked_module()
    module.x = 1
    assert type(module) is ModuleType
    assert type(sys) is ModuleType


def test_every_module_reaches_the_hooks_without_a_finder(native: None) -> None:
    log: list[Any] = []
    module = hooked_module(log=log)
    module.a = 1
    setattr(module, "b", 2)
    del module.c
    delattr(module, "d")
    assert log == [("set", "a", 1), ("set", "b", 2), ("del", "c"), ("del", "d")]
    assert pep726hook.is_upgraded(module)
    assert pep726hook.is_upgraded(sys)


# --- hackcheck -----------------------------------------------------------------


@pytest.mark.parametrize("when", ["before", "after"])
def test_subclass_super_setattr_reaches_the_module_hook_after_the_subclass(when: str) -> None:
    guard = _subclass_calling_super() if when == "before" else None
    with pep726hook.install("native"):
        if guard is None:
            guard = _subclass_calling_super()
        module = hooked_module(cls=guard, log=guard.calls)
        module.x = 1
        del module.x
        # The MRO rule: the subclass runs first, the hook at ModuleType level.
        assert guard.calls == ["guard set x", ("set", "x", 1), "guard del x", ("del", "x")]
        plain = guard("plain")
        plain.y = 2
        del plain.y
        assert "y" not in plain.__dict__


@pytest.mark.parametrize("when", ["before", "after"])
def test_object_setattr_does_a_plain_store_bypassing_hooks(when: str) -> None:
    classes: list[type] = [ModuleType]
    if when == "before":
        classes += [type("Pre", (ModuleType,), {}), _subclass_calling_super()]
    with pep726hook.install("native"):
        if when == "after":
            classes += [type("Post", (ModuleType,), {}), _subclass_calling_super()]
        for cls in classes:
            log: list[Any] = []
            module = hooked_module(cls=cls, log=log)
            # On 3.8-3.12 this raised "can't apply this __setattr__ to module
            # object" with a naive C slot (hackcheck).
            object.__setattr__(module, "x", 1)
            assert module.__dict__["x"] == 1
            object.__delattr__(module, "x")
            assert "x" not in module.__dict__
            object.__setattr__(module, "__class__", cls)
            assert log == [], cls


def test_module_type_setattr_called_directly_calls_the_hook(native: None) -> None:
    log: list[Any] = []
    module = hooked_module(log=log)
    ModuleType.__setattr__(module, "x", 1)
    ModuleType.__delattr__(module, "x")
    assert log == [("set", "x", 1), ("del", "x")]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: ModuleType.__setattr__(1, "x", 1), "module"),  # type: ignore[arg-type]
        (lambda: ModuleType.__setattr__(sys, 1, 1), "attribute name must be string"),  # type: ignore[arg-type]
        (lambda: ModuleType.__delattr__(sys, 1), "attribute name must be string"),  # type: ignore[arg-type]
        (lambda: ModuleType.__setattr__(sys, "x"), "expected 2 arguments"),  # type: ignore[call-arg]
        (lambda: ModuleType.__delattr__(sys, "x", 1), "expected 1 argument"),  # type: ignore[call-arg]
        # A lambda so the attribute is read once installed, not at collection.
        (lambda: ModuleType.__setattr__(), "module"),  # noqa: PLW0108
    ],
)
def test_bad_calls_of_the_descriptors_raise_type_error(
    native: None, call: Callable[[], object], message: str
) -> None:
    with pytest.raises(TypeError, match=message):
        call()


def test_lazy_loader_works_and_the_module_gets_hooks(
    native: None, write_module: Callable[..., Path]
) -> None:
    # 3.12.3+ LazyLoader assigns __class__ with object.__setattr__ (hackcheck).
    write_module(
        "lazy_hooked",
        """
        seen = []
        def __setattr__(name, value):
            seen.append(name)
        """,
    )
    spec = importlib.util.find_spec("lazy_hooked")
    assert spec is not None and spec.loader is not None
    loader = importlib.util.LazyLoader(spec.loader)
    spec.loader = loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["lazy_hooked"] = module
    loader.exec_module(module)
    assert module.seen == []
    module.x = 1
    assert module.seen == ["x"]
    assert type(module) is ModuleType


# --- subclasses made before / after the patch -----------------------------------


def test_subclasses_before_and_after_the_patch_get_hooks_and_lose_them_on_uninstall() -> None:
    class Before(ModuleType):
        pass

    class BeforeChild(Before):
        pass

    installation = pep726hook.install("native")
    try:

        class After(ModuleType):
            pass

        classes = [ModuleType, Before, BeforeChild, After]
        for cls in classes:
            log: list[Any] = []
            module = hooked_module(cls=cls, log=log)
            module.x = 1
            del module.y
            assert log == [("set", "x", 1), ("del", "y")], cls
            assert pep726hook.is_upgraded(module)
    finally:
        installation.__exit__(None, None, None)
    for cls in classes:
        log = []
        module = hooked_module(cls=cls, log=log)
        module.x = 1
        del module.x
        assert log == [], cls
        assert module.__dict__.get("x", _MISSING) is _MISSING


def test_upgrade_is_harmless_for_every_kind_of_module(native: None) -> None:
    for cls in (ModuleType, type("Sub", (ModuleType,), {}), _subclass_calling_super()):
        plain = cls("plain")
        assert pep726hook.upgrade(plain) is plain
        assert pep726hook.is_upgraded(plain)
        plain.x = 1
        del plain.x
        plain.y = 2
        assert type(plain) is cls
        assert plain.__dict__["y"] == 2
        assert "x" not in plain.__dict__
        log: list[Any] = []
        hooked = hooked_module(cls=cls, log=log)
        assert pep726hook.upgrade(hooked) is hooked
        hooked.x = 1
        del hooked.y
        assert log == [("set", "x", 1), ("del", "y")], cls


# --- restoring the type ------------------------------------------------------


def test_uninstall_restores_the_module_type_dict_exactly() -> None:
    before = {
        name: type(sys).__dict__.get(name, _MISSING) for name in ("__setattr__", "__delattr__")
    }
    for _ in range(2):
        with pep726hook.install("native"):
            during = type(sys).__dict__["__setattr__"]
            assert during is not before["__setattr__"]
            assert type(during).__name__ == "module_hook_descriptor"
        after = {name: type(sys).__dict__.get(name, _MISSING) for name in before}
        assert after == before
        assert all(after[name] is before[name] for name in before)
    assert not pep726hook.is_upgraded(sys)
    log: list[Any] = []
    module = hooked_module(log=log)
    module.x = 1
    assert log == []


def test_install_twice_and_uninstall_twice_are_harmless() -> None:
    from pep726hook import _native

    log: list[Any] = []
    module = hooked_module(log=log)
    with pep726hook.install("native"):
        _native.install()
        assert _native.state()["patched"]
        module.x = 1
        assert log == [("set", "x", 1)]
    _native.uninstall()
    assert not _native.state()["patched"]
    assert not _native.state()["entries"]
    module.y = 2
    assert log == [("set", "x", 1)]
    assert module.__dict__["y"] == 2


def test_class_engine_is_refused_on_a_patch_that_install_does_not_know_of() -> None:
    # The module type patched as the .pth start-up does, with no installation
    # recorded: the class engine, which asks the module type's dict before it
    # would load the extension, must still refuse to run hooks on top of it.
    from pep726hook import _engines, _native

    _native.install()
    try:
        with pytest.raises(EngineUnavailableError, match="cannot be used on top of it"):
            _engines.create_engine("class")
    finally:
        _native.uninstall()
    assert _engines.create_engine("class").name == "class"


# --- engine selection -------------------------------------------------------


def test_asking_for_native_where_unavailable_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_native_engine, "_native_error", ImportError("no module named _native"))
    assert pep726hook.available_engines() == ("class",)
    with pytest.raises(EngineUnavailableError) as caught:
        pep726hook.install("native")
    assert "C extension pep726hook._native cannot be loaded: no module named _native" in str(
        caught.value
    )
    with pep726hook.install("auto") as installation:
        assert installation.engine == "class"


def test_auto_prefers_native(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PEP726HOOK_ENGINE", raising=False)
    with pep726hook.install() as installation:
        assert installation.engine == "native"


# --- uninstall leaves classes with their own __setattr__ alone -----------------


@pytest.mark.parametrize("when", ["before", "during"])
def test_uninstall_keeps_python_level_setattr_of_subclasses(when: str) -> None:
    guard = _subclass_calling_super() if when == "before" else None
    with pep726hook.install("native"):
        if guard is None:
            guard = _subclass_calling_super()

        class Child(guard):  # type: ignore[valid-type,misc]
            pass

    for cls in (guard, Child):
        guard.calls.clear()
        module = cls("m")
        module.x = 1
        del module.x
        assert guard.calls == ["guard set x", "guard del x"], cls
        assert "x" not in module.__dict__


def test_module_type_hook_methods_keep_their_signatures(native: None) -> None:
    # inspect.signature() of the slot wrappers they replace works (CPython's
    # test_inspect test_types_module_has_signatures).
    import inspect

    assert str(inspect.signature(ModuleType.__setattr__)) == "(self, name, value, /)"
    assert str(inspect.signature(ModuleType.__delattr__)) == "(self, name, /)"


def test_module_type_hook_methods_look_like_method_descriptors(native: None) -> None:
    import inspect

    log: list[Any] = []
    module = hooked_module(log=log)
    for name, args in (("__setattr__", ("x", 1)), ("__delattr__", ("x",))):
        method = getattr(ModuleType, name)
        assert method.__name__ == name
        assert method.__qualname__ == f"module.{name}"
        assert method.__objclass__ is ModuleType
        assert repr(method) == f"<method '{name}' of 'module' objects>"
        assert "PEP 726" in (method.__doc__ or "")
        assert inspect.ismethoddescriptor(method)
        assert method.__reduce__() == (getattr, (ModuleType, name))
        assert method.__get__(None, ModuleType) is method
        getattr(module, name)(*args)
        with pytest.raises(TypeError, match="doesn't apply to a 'int' object"):
            method.__get__(1, int)
        with pytest.raises(TypeError, match="takes no keyword arguments"):
            method(module, *args, extra=1)
    assert log == [("set", "x", 1), ("del", "x")]
    assert str(inspect.signature(ModuleType("plain").__setattr__)) == "(name, value, /)"

"""The native engine and CPython's caches of lookups through ModuleType.

install() and uninstall() change ModuleType's dict ('__setattr__' and
'__delattr__') and the store and read slots of ModuleType and its
subclasses.  CPython caches lookups under a type's version tag (the method
cache, specialised instructions); none may answer from before the change.
From 3.12 on ModuleType's own tag must survive it: 3.14+ treats static builtin
types as immutable (a debug build aborts on PyType_Modified() of one), and
3.13+ gives a type only about 1,000 tags.
"""

from __future__ import annotations

import sys
import types
from typing import Any, Callable

import pytest

import pep726hook
from pep726hook import _native_engine

pytestmark = pytest.mark.skipif(
    "native" not in pep726hook.available_engines(),
    reason=f"native engine unavailable: {_native_engine.unavailable_reason()}",
)

ModuleType = types.ModuleType
ABSENT = "_pep726hook_test_absent_name"


def with_recording_hooks(module: Any) -> list[Any]:
    """Give *module* hooks that record each call instead of storing; the record."""
    log: list[Any] = []
    module.__dict__["__setattr__"] = lambda name, value: log.append(("set", name, value))
    module.__dict__["__delattr__"] = lambda name: log.append(("del", name))
    return log


def warm(function: Callable[[], object]) -> None:
    """Run *function* often enough for the interpreter to specialise it."""
    for _ in range(200):
        function()


def own_or_inherited(name: str) -> object:
    """What ModuleType's dict holds under *name*, or object's when it has none."""
    return vars(ModuleType).get(name, vars(object)[name])


def test_lookup_of_module_type_setattr_follows_install_and_uninstall() -> None:
    warm(lambda: (ModuleType.__setattr__, ModuleType.__delattr__))
    before = (ModuleType.__setattr__, ModuleType.__delattr__)
    assert before == (own_or_inherited("__setattr__"), own_or_inherited("__delattr__"))
    with pep726hook.install("native"):
        assert ModuleType.__setattr__ is vars(ModuleType)["__setattr__"]
        assert ModuleType.__delattr__ is vars(ModuleType)["__delattr__"]
        assert ModuleType.__setattr__ is not before[0]
    assert ModuleType.__setattr__ is own_or_inherited("__setattr__")
    assert ModuleType.__delattr__ is own_or_inherited("__delattr__")


def test_subclass_lookup_warmed_before_install_finds_the_hooking_descriptor() -> None:
    class Plain(ModuleType):
        pass

    module = Plain("warmed_subclass")
    log = with_recording_hooks(module)
    warm(lambda: (Plain.__setattr__, Plain.__delattr__, hasattr(Plain, ABSENT)))
    with pep726hook.install("native"):
        assert Plain.__setattr__ is vars(ModuleType)["__setattr__"]
        Plain.__setattr__(module, "x", 1)
        Plain.__delattr__(module, "x")
        assert log == [("set", "x", 1), ("del", "x")]
    assert Plain.__setattr__ is own_or_inherited("__setattr__")
    Plain.__setattr__(module, "y", 2)
    assert log == [("set", "x", 1), ("del", "x")]
    assert module.__dict__["y"] == 2


def test_super_setattr_in_a_subclass_warmed_before_install_reaches_the_hooks() -> None:
    class Forwarding(ModuleType):
        def __setattr__(self, name: str, value: object) -> None:
            super().__setattr__(name, value)

    module = Forwarding("forwarding")
    log = with_recording_hooks(module)

    def store() -> None:
        module.x = 1

    warm(store)
    assert log == []
    with pep726hook.install("native"):
        store()
        assert log == [("set", "x", 1)]
    store()
    assert log == [("set", "x", 1)]


def test_specialised_store_into_subclass_slots_reaches_the_hooks_after_install() -> None:
    # A store into __slots__ is specialised (STORE_ATTR_SLOT, 3.11+) while the
    # class's store slot is the generic one, guarded by the class's version tag.
    class Slotted(ModuleType):
        __slots__ = ("a",)

    module = Slotted("slotted")
    log = with_recording_hooks(module)

    def store() -> None:
        module.a = 1

    warm(store)
    assert log == []
    with pep726hook.install("native"):
        store()
        store()
        assert log == [("set", "a", 1), ("set", "a", 1)]
    warm(store)
    assert len(log) == 2
    assert module.a == 1


def test_specialised_store_into_exact_module_reaches_the_hooks_after_install() -> None:
    module = ModuleType("exact")
    log = with_recording_hooks(module)

    def store() -> None:
        module.b = 1

    warm(store)
    with pep726hook.install("native"):
        store()
        assert log == [("set", "b", 1)]
    warm(store)
    assert log == [("set", "b", 1)]


def type_get_version() -> Callable[[type], int]:
    testcapi = pytest.importorskip("_testcapi")
    function = getattr(testcapi, "type_get_version", None)
    if function is None:
        pytest.skip("_testcapi.type_get_version needs CPython 3.11+")
    return function  # type: ignore[no-any-return]


@pytest.mark.skipif(
    sys.version_info < (3, 12), reason="PyType_Modified(ModuleType) is what 3.8-3.11 need"
)
def test_install_and_uninstall_keep_module_type_version_tag() -> None:
    version_of = type_get_version()
    hasattr(ModuleType, ABSENT)  # a lookup gives the type a tag
    tag = version_of(ModuleType)
    assert tag != 0
    for _ in range(3):
        with pep726hook.install("native"):
            hasattr(ModuleType, ABSENT)
            assert version_of(ModuleType) == tag
        hasattr(ModuleType, ABSENT)
    assert version_of(ModuleType) == tag


@pytest.mark.skipif(
    sys.version_info < (3, 13), reason="a type's version tags are limited from 3.13 on"
)
def test_module_type_has_a_version_tag_after_many_installs() -> None:
    # 3.13+ gives a type at most 1,000 tags; more install/uninstall cycles than
    # that, each followed by a lookup, would leave ModuleType without one.
    version_of = type_get_version()
    for _ in range(1001):
        pep726hook.install("native")
        pep726hook.uninstall()
        hasattr(ModuleType, ABSENT)
    assert version_of(ModuleType) != 0

"""Native engine: a library's ``enable()`` opts its own module in; the patched slot calls only opted-in modules' hooks."""

from __future__ import annotations

import gc
from typing import Any, Iterator

import pytest
from _native_helpers import (
    HOOKLESS_STORES,
    REQUIRES_NATIVE,
    ModuleType,
    _subclass_calling_super,
    hooked_module,
)

pytestmark = REQUIRES_NATIVE


# --- opting single modules in ------------------------------------------------
#
# A library's enable() gives hooks to its own module only: the patched slot
# calls the hooks of opted-in modules and does the plain store for every other
# module unless process-wide dispatch is on.


@pytest.fixture
def opt_in_only() -> Iterator[Any]:
    """The patch without process-wide dispatch, as the first enable() makes it."""
    from pep726hook import _native

    if _native.state()["patched"]:
        pytest.skip("the native patch is already installed by the session")
    _native.install(process_wide=False)
    try:
        yield _native
    finally:
        _native.uninstall()


def _store_and_delete_everywhere(module: Any) -> None:
    module.a = 1
    setattr(module, "b", 2)
    ModuleType.__setattr__(module, "c", 3)
    del module.a
    delattr(module, "b")
    ModuleType.__delattr__(module, "c")


_EVERY_STORE = [
    ("set", "a", 1),
    ("set", "b", 2),
    ("set", "c", 3),
    ("del", "a"),
    ("del", "b"),
    ("del", "c"),
]


@pytest.mark.parametrize("cls", [ModuleType, "subclass", "guard"])
def test_hooks_of_a_module_not_opted_in_are_not_called(opt_in_only: Any, cls: Any) -> None:
    cls = {"subclass": type("Sub", (ModuleType,), {}), "guard": _subclass_calling_super()}.get(
        cls, cls
    )
    log: list[Any] = []
    module = hooked_module(cls=cls, log=log)
    module.__dict__.update(a=0, b=0, c=0)
    _store_and_delete_everywhere(module)
    module.d = 4
    assert log == []
    assert not opt_in_only.is_opted_in(module)
    assert module.__dict__["d"] == 4
    assert not {"a", "b", "c"} & set(module.__dict__)


@pytest.mark.parametrize("cls", [ModuleType, "subclass", "guard"])
def test_hooks_of_an_opted_in_module_are_called_and_no_others(opt_in_only: Any, cls: Any) -> None:
    cls = {"subclass": type("Sub", (ModuleType,), {}), "guard": _subclass_calling_super()}.get(
        cls, cls
    )
    log: list[Any] = []
    other_log: list[Any] = []
    module = hooked_module(cls=cls, log=log)
    other = hooked_module(cls=cls, log=other_log)
    assert opt_in_only.opt_in(module) is None
    opt_in_only.opt_in(module)
    assert opt_in_only.is_opted_in(module)
    assert opt_in_only.state()["opted_in"] == 1
    _store_and_delete_everywhere(module)
    other.x = 1
    assert log == _EVERY_STORE
    assert other_log == []
    assert other.__dict__["x"] == 1


def test_process_wide_dispatch_switches_on_and_off(opt_in_only: Any) -> None:
    log: list[Any] = []
    module = hooked_module(log=log)
    opt_in_only.set_process_wide(True)
    assert opt_in_only.state()["process_wide"]
    module.x = 1
    opt_in_only.set_process_wide(False)
    assert not opt_in_only.state()["process_wide"]
    module.y = 2
    assert log == [("set", "x", 1)]
    assert module.__dict__["y"] == 2
    assert opt_in_only.state()["patched"]


def test_install_turns_process_wide_on_but_never_off(opt_in_only: Any) -> None:
    opt_in_only.install(process_wide=False)
    assert not opt_in_only.state()["process_wide"]
    opt_in_only.install()
    assert opt_in_only.state()["process_wide"]
    opt_in_only.install(process_wide=False)
    assert opt_in_only.state()["process_wide"]
    with pytest.raises(TypeError):
        opt_in_only.install(False)


def test_a_hook_added_to_an_opted_in_module_after_hookless_stores_is_called(
    opt_in_only: Any,
) -> None:
    module = ModuleType("m")
    opt_in_only.opt_in(module)
    for i in range(HOOKLESS_STORES):
        module.x = i
    log: list[Any] = []
    module.__dict__["__setattr__"] = lambda n, v: log.append((n, v))
    module.x = 10
    assert log == [("x", 10)]
    assert module.__dict__["x"] == HOOKLESS_STORES - 1


def test_an_opt_in_dies_with_its_module(opt_in_only: Any) -> None:
    module = ModuleType("m")
    opt_in_only.opt_in(module)
    address = id(module)
    del module
    gc.collect()
    assert opt_in_only.state()["opted_in"] == 0
    # A new module at the same address is not opted in.
    log: list[Any] = []
    for _ in range(1000):
        new = hooked_module(log=log)
        if id(new) == address:
            break
    assert not opt_in_only.is_opted_in(new)
    new.x = 1
    assert log == []


def test_an_opted_in_module_in_a_reference_cycle_is_forgotten_when_collected(
    opt_in_only: Any,
) -> None:
    module = ModuleType("m")
    module.me = module
    opt_in_only.opt_in(module)
    del module
    gc.collect()
    assert opt_in_only.state()["opted_in"] == 0


def test_many_opt_ins_survive_the_deaths_of_others(opt_in_only: Any) -> None:
    # The table grows and entries move when others leave it.
    logs: list[list[Any]] = [[] for _ in range(600)]
    modules = [hooked_module(f"m{i}", log=logs[i]) for i in range(600)]
    for module in modules:
        opt_in_only.opt_in(module)
    kept = modules[::3]
    del module
    modules.clear()
    gc.collect()
    assert opt_in_only.state()["opted_in"] == len(kept)
    for i, module in enumerate(kept):
        assert opt_in_only.is_opted_in(module)
        module.x = i
        assert logs[3 * i] == [("set", "x", i)]


def test_uninstall_forgets_every_opt_in_and_process_wide_dispatch() -> None:
    from pep726hook import _native

    if _native.state()["patched"]:
        pytest.skip("the native patch is already installed by the session")
    log: list[Any] = []
    module = hooked_module(log=log)
    _native.install()
    _native.opt_in(module)
    _native.uninstall()
    assert _native.state()["process_wide"] is False
    assert _native.state()["opted_in"] == 0
    assert not _native.is_opted_in(module)
    _native.install(process_wide=False)
    try:
        module.x = 1
        assert log == []
    finally:
        _native.uninstall()


def test_opt_in_refuses_non_modules_and_needs_the_patch() -> None:
    from pep726hook import _native

    with pytest.raises(TypeError, match="needs a module"):
        _native.opt_in(object())
    if _native.state()["patched"]:
        pytest.skip("the native patch is already installed by the session")
    with pytest.raises(RuntimeError, match="install"):
        _native.opt_in(ModuleType("m"))
    assert not _native.is_opted_in(ModuleType("m"))
    assert not _native.is_opted_in(42)

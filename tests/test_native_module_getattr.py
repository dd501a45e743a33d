"""The native engine's relocated PEP 562 ``__getattr__`` (CPython 3.11-3.14), at the C level.

There the specialiser refuses ``LOAD_ATTR`` on a module whose namespace holds
``__getattr__`` (https://github.com/python/cpython/issues/143469), so
``enable()`` moves an opted-in module's function out of the namespace and the
read slot wrapper calls it on a miss.  Behaviour under every engine is in
``tests/test_module_getattr.py``; here: that reads do specialise, the
documented differences, when the read slot is wrapped, what ``uninstall()``
and a dying module give back, and the one-getter-call rule of the wrapper
on every version.
"""

from __future__ import annotations

import dis
import subprocess
import sys
import types
from typing import Any, Iterator

import pytest
from _venv import collect_garbage, run_fresh_python

import pep726hook
from pep726hook import _native_engine, _state

pytestmark = pytest.mark.skipif(
    "native" not in pep726hook.available_engines(),
    reason=f"native engine unavailable: {_native_engine.unavailable_reason()}",
)

if "native" in pep726hook.available_engines():
    from pep726hook import _native

RELOCATES = (3, 11) <= sys.version_info[:2] < (3, 15)
relocating_versions = pytest.mark.skipif(
    not RELOCATES, reason="the function is relocated on CPython 3.11-3.14 only"
)

SOURCE = """
present = 1

def __getattr__(name):
    if name == "lazy":
        return "lazy value"
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

def calls_its_getattr_by_name():
    return __getattr__("lazy")
"""

_made: list[str] = []


@pytest.fixture(autouse=True)
def native(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """enable() takes the native engine; the modules and the patch go afterwards."""
    monkeypatch.setenv("PEP726HOOK_ENGINE", "native")
    yield
    while _made:
        sys.modules.pop(_made.pop(), None)
    collect_garbage()


def a_python_function() -> None:
    """Nothing: calling it lets the main thread run pending calls."""


def module_from(source: str = SOURCE, enable: bool = True, cls: type = types.ModuleType) -> Any:
    name = f"native_getattr_{len(_made)}_{id(source)}"
    module = cls(name)
    sys.modules[name] = module
    _made.append(name)
    exec(source, module.__dict__)
    if enable:
        pep726hook.enable(module, fast_getattr=True)
    return module


def specialised_read_opnames(module: Any) -> list[str]:
    """The adaptive opnames of a warmed-up function reading ``module.present``."""
    namespace = {"module": module}
    exec("def read():\n    return module.present\n", namespace)
    read = namespace["read"]
    for _ in range(200):
        read()
    return [
        instruction.opname
        for instruction in dis.get_instructions(read, adaptive=True)
        if instruction.opname.startswith("LOAD_ATTR")
    ]


@relocating_versions
def test_reads_of_an_enabled_module_with_getattr_are_specialised() -> None:
    plain = module_from(enable=False)
    assert specialised_read_opnames(plain) != ["LOAD_ATTR_MODULE"]
    module = module_from()
    assert specialised_read_opnames(module) == ["LOAD_ATTR_MODULE"]
    assert module.lazy == "lazy value"


@relocating_versions
def test_getattr_defined_after_enable_is_relocated_at_the_next_read() -> None:
    module = module_from("present = 1\n")
    exec("def __getattr__(name):\n    return 'late ' + name\n", module.__dict__)
    assert module.lazy == "late lazy"
    assert "__getattr__" not in vars(module)
    assert specialised_read_opnames(module) == ["LOAD_ATTR_MODULE"]


@relocating_versions
def test_documented_differences_vars_and_calls_by_global_name() -> None:
    module = module_from()
    # The function is not in the namespace any more ...
    assert "__getattr__" not in vars(module)
    assert "__getattr__" not in dir(module)
    # ... so module code calling it by its global name does not find it.
    with pytest.raises(NameError, match="__getattr__"):
        module.calls_its_getattr_by_name()
    plain = module_from(enable=False)
    assert plain.calls_its_getattr_by_name() == "lazy value"


@pytest.mark.skipif(RELOCATES, reason="relocated on CPython 3.11-3.14")
def test_other_versions_keep_getattr_in_the_namespace() -> None:
    module = module_from()
    assert "__getattr__" in vars(module)
    assert module.calls_its_getattr_by_name() == "lazy value"
    assert _native.state()["relocating"] == 0


@pytest.mark.skipif(sys.version_info < (3, 12), reason="3.11 has no dict watchers")
def test_enable_without_getattr_leaves_the_read_slot_alone() -> None:
    module = module_from("present = 1\n")
    assert module.present == 1
    assert not _native.state()["getattro_wrapped"]
    module.__dict__["__getattr__"] = lambda name: "late"
    # The watcher leaves the wrap to a pending call, which the main thread
    # runs at its next safe point: any Python function's start.
    assert module.lazy == "late"
    a_python_function()
    assert _native.state()["getattro_wrapped"] is RELOCATES
    assert module.lazy == "late"
    assert ("__getattr__" in vars(module)) is not RELOCATES


@relocating_versions
def test_read_slot_is_unwrapped_when_the_last_relocating_module_dies() -> None:
    module = module_from()
    assert _native.state()["relocating"] == 1
    assert _native.state()["getattro_wrapped"]
    name = module.__name__
    del module
    sys.modules.pop(name)
    collect_garbage()
    assert _native.state()["relocating"] == 0
    assert not _native.state()["getattro_wrapped"]


@relocating_versions
def test_uninstall_gives_the_function_back_to_the_namespace() -> None:
    module = module_from()
    function = module.__getattr__
    assert "__getattr__" not in vars(module)
    _native.uninstall()
    assert vars(module)["__getattr__"] is function
    assert module.lazy == "lazy value"
    assert not _native.state()["getattro_wrapped"]


@relocating_versions
def test_function_replaced_during_its_own_call_stays_alive() -> None:
    source = """
import gc
def __getattr__(name):
    globals()["__getattr__"] = lambda other: "second"
    gc.collect()
    return "first " + name
"""
    module = module_from(source)
    assert module.lazy == "first lazy"
    assert module.lazy == "second"


@relocating_versions
def test_module_class_assigned_after_the_wrap_still_reaches_the_function() -> None:
    module = module_from()

    class Own(types.ModuleType):
        pass

    module.__class__ = Own
    assert module.lazy == "lazy value"


# --- one getter call per read, every version -----------------------------------------


class CountingModule(types.ModuleType):
    calls = 0

    @property
    def failing(self) -> str:
        CountingModule.calls += 1
        raise AttributeError("failing getter")


@relocating_versions
def test_a_subclass_getter_runs_once_while_the_read_slot_is_wrapped() -> None:
    # A relocated __getattr__ somewhere wraps ModuleType's read slot.
    relocating = module_from()
    assert _native.state()["getattro_wrapped"]
    CountingModule.calls = 0
    module = CountingModule("counting")
    with pytest.raises(AttributeError):
        _ = module.failing
    assert CountingModule.calls == 1
    assert not hasattr(module, "failing")
    assert CountingModule.calls == 2
    assert relocating.lazy == "lazy value"


class ReadsItself(types.ModuleType):
    """A module class with a Python __getattr__ of its own, asked after PEP 562's."""

    def __getattr__(self, name: str) -> str:
        if name == "from_class":
            return "class answer"
        raise AttributeError(name)


@pytest.mark.parametrize("when", ["before enable", "after enable"])
def test_a_class_with_its_own_getattr_keeps_pep_562_first(when: str) -> None:
    if when == "before enable":
        module = module_from(SOURCE, cls=ReadsItself)
    else:
        module = module_from(SOURCE)
        assert module.lazy == "lazy value"
        module.__class__ = ReadsItself
    assert module.lazy == "lazy value"
    assert module.from_class == "class answer"
    assert "__getattr__" in vars(module)


def test_other_modules_read_and_miss_as_before_while_the_slot_is_wrapped() -> None:
    module_from()
    other = module_from(SOURCE, enable=False)
    bare = module_from("present = 1\n", enable=False)
    for target in (other, bare):
        assert target.present == 1
        assert getattr(target, "absent", "default") == "default"
        assert not hasattr(target, "absent")
        with pytest.raises(AttributeError, match=f"module '{target.__name__}' has no attribute"):
            _ = target.absent
    assert other.lazy == "lazy value"
    assert "__getattr__" in vars(other)


@relocating_versions
def test_held_functions_are_released_when_replaced_and_when_the_module_dies() -> None:
    import weakref

    module = module_from()
    first = weakref.ref(module.__getattr__)
    assert module.lazy == "lazy value"
    module.__getattr__ = lambda name: "second"
    assert module.lazy == "second"
    collect_garbage()
    assert first() is None
    second = weakref.ref(module.__getattr__)
    module.__dict__["__getattr__"] = lambda name: "third"
    assert module.lazy == "third"
    collect_garbage()
    assert second() is None
    third = weakref.ref(module.__getattr__)
    name = module.__name__
    del module
    sys.modules.pop(name)
    collect_garbage()
    assert third() is None


# ---- code that runs while the C holds a pointer into its tables ----
#
# A lookup in a namespace that holds a key other than a str compares keys
# with that key's __eq__, which may opt modules in or out and so move or
# reallocate the table of opted-in modules.  These run in a child process
# under CPython's debug allocator, which overwrites freed memory, so that a
# stale pointer crashes one test instead of passing by luck.


def run_with_debug_allocator(code: str) -> subprocess.CompletedProcess[str]:
    return run_fresh_python(code, env={"PYTHONMALLOC": "debug", "PEP726HOOK_ENGINE": "native"})


@relocating_versions
def test_miss_is_served_when_a_key_comparison_opts_modules_in_during_the_lookup() -> None:
    result = run_with_debug_allocator(
        """
        import sys, types, pep726hook

        target = types.ModuleType("target"); sys.modules["target"] = target
        target.__getattr__ = lambda name: "served " + str(name)
        pep726hook.enable(target, fast_getattr=True)
        compared = []

        class Name(str):
            # Looked up, it is compared with the colliding key below.
            def __hash__(self):
                return hash("__getattr__")
            __eq__ = str.__eq__

        class Colliding:
            # Compared whenever '__getattr__' is looked up in the namespace.
            def __hash__(self):
                return hash("__getattr__")
            def __eq__(self, other):
                compared.append(other)
                if isinstance(other, Name):
                    # The name's own lookup: a new key that is not a str
                    # has the namespace searched for '__getattr__' again.
                    vars(target)[len(compared)] = None
                elif len(compared) > 1 and isinstance(compared[-2], Name):
                    # That search: enough modules opt in that the table grows.
                    for i in range(40):
                        other_module = types.ModuleType(f"other_{i}")
                        sys.modules[other_module.__name__] = other_module
                        pep726hook.enable(other_module)
                return False

        vars(target)[Colliding()] = None
        print(getattr(target, Name("missing")))
        """
    )
    assert (result.returncode, result.stdout, result.stderr) == (0, "served missing\n", "")


@relocating_versions
def test_uninstall_gives_every_function_back_when_a_key_comparison_drops_modules() -> None:
    result = run_with_debug_allocator(
        """
        import gc, sys, types, pep726hook
        from pep726hook import _native

        modules = []
        for i in range(12):
            module = types.ModuleType(f"relocating_{i}")
            module.__getattr__ = lambda name, i=i: i
            pep726hook.enable(module, fast_getattr=True)
            modules.append(module)

        class Colliding:
            # Compared when '__getattr__' is stored back into the namespace.
            def __hash__(self):
                return hash("__getattr__")
            def __eq__(self, other):
                # Modules die: their entries leave the table, whose later
                # entries move back.
                del modules[:6]
                gc.collect()
                return False

        survivors = modules[6:]
        vars(modules[0])[Colliding()] = None
        _native.uninstall()
        print(sorted(m.__getattr__("x") for m in survivors if "__getattr__" in vars(m)))
        """
    )
    assert (result.returncode, result.stdout, result.stderr) == (0, f"{list(range(6, 12))}\n", "")


def test_store_hook_stays_alive_when_a_class_key_comparison_drops_it() -> None:
    result = run_with_debug_allocator(
        """
        import sys, types, warnings, pep726hook

        module = types.ModuleType("hooked"); sys.modules["hooked"] = module
        pep726hook.enable(module)
        calls = []

        class Colliding:
            # Compared while the store looks at the class's own dict.
            armed = False
            def __hash__(self):
                return hash("__module__")
            def __eq__(self, other):
                if Colliding.armed:
                    Colliding.armed = False
                    del vars(module)["__setattr__"]  # its only reference
                return False

        # Named like importlib's lazy module class, whose stores of
        # __class__ the slot checks by looking into the class's dict.
        with warnings.catch_warnings():
            # 3.13+ warn of a class dict key that is not a str.
            warnings.simplefilter("ignore", RuntimeWarning)
            Own = type("_LazyModule", (types.ModuleType,), {Colliding(): None, "__module__": "own"})
        module.__class__ = Own
        vars(module)["__setattr__"] = lambda name, value: calls.append(name)
        Colliding.armed = True
        module.__class__ = types.ModuleType
        print(calls)
        """
    )
    assert (result.returncode, result.stdout, result.stderr) == (0, "['__class__']\n", "")


# ---- the author's choice: enable(module, fast_getattr=...) ----

TAXING = (3, 12) <= sys.version_info[:2] < (3, 15)


def is_relocated(module: Any) -> bool:
    return "__getattr__" not in vars(module)


@relocating_versions
def test_default_relocates_only_where_no_other_module_pays() -> None:
    module = module_from(enable=False)
    pep726hook.enable(module)
    assert is_relocated(module) is not TAXING
    assert _native.state()["getattro_wrapped"] is not TAXING
    assert module.lazy == "lazy value"
    assert not hasattr(module, "absent")


@relocating_versions
def test_fast_getattr_false_keeps_the_function_and_the_read_slot() -> None:
    module = module_from(enable=False)
    pep726hook.enable(module, fast_getattr=False)
    assert not is_relocated(module)
    assert not _native.state()["getattro_wrapped"]
    assert module.lazy == "lazy value"
    assert getattr(module, "absent", "default") == "default"
    assert "LOAD_ATTR_MODULE" not in specialised_read_opnames(module)


@relocating_versions
def test_a_later_explicit_choice_moves_the_function_either_way() -> None:
    module = module_from()
    function = module.__getattr__
    assert is_relocated(module)
    pep726hook.enable(module, fast_getattr=False)
    assert vars(module)["__getattr__"] is function
    assert not _native.state()["getattro_wrapped"]
    assert _native.state()["relocating"] == 0
    pep726hook.enable(module, fast_getattr=True)
    assert is_relocated(module)
    assert module.__getattr__ is function
    assert module.lazy == "lazy value"


@relocating_versions
def test_a_getattr_defined_later_stays_where_the_author_said() -> None:
    module = module_from("present = 1\n", enable=False)
    pep726hook.enable(module, fast_getattr=False)
    exec(SOURCE, vars(module))
    assert module.lazy == "lazy value"
    a_python_function()  # pending calls (3.12+) run here
    assert not is_relocated(module)
    assert not _native.state()["getattro_wrapped"]


@relocating_versions
def test_the_fast_getattr_switch_relocates_defaults_and_respects_choices(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    by_default = module_from(enable=False)
    pep726hook.enable(by_default)
    kept = module_from(enable=False)
    pep726hook.enable(kept, fast_getattr=False)
    # What the switch does for each module with a __getattr__ (its tests are
    # in tests/test_fast_getattr.py): enable() it while the switch is on.
    monkeypatch.setattr(_state, "fast_getattr", True)
    for module in (by_default, kept):
        pep726hook.enable(module)
    assert is_relocated(by_default)
    assert not is_relocated(kept)
    assert by_default.lazy == kept.lazy == "lazy value"

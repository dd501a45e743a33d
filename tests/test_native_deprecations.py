"""The native engine's deprecated module attributes, at the C level.

``_native.set_deprecations(module, table)`` hands a module's deprecation table
(``{name: (value, message, category)}``, shared, not copied) to the C
extension: ModuleType's read slot is wrapped while a module has one, and the
store slot ends a deprecation on a store or deletion.  The public API on top
(``pep726hook.deprecated()``, ``enable()``) is tested under every engine
elsewhere; here are the cases only the C side can get wrong: where warnings
point, the import system's own probe, the store paths of each CPython version,
bad entries, reference counts and modules that die.
"""

from __future__ import annotations

import gc
import sys
import types
import warnings
from typing import Any, Iterator

import pytest
from _venv import collect_garbage

import pep726hook
from pep726hook import _native_engine

pytestmark = pytest.mark.skipif(
    "native" not in pep726hook.available_engines(),
    reason=f"native engine unavailable: {_native_engine.unavailable_reason()}",
)

if "native" in pep726hook.available_engines():
    from pep726hook import _native

ModuleType = types.ModuleType
HERE = __file__.rstrip("c")  # a .pyc run still reports the .py file


class Replaced(DeprecationWarning):
    """A category of our own, to see that the table's category is the one used."""


@pytest.fixture
def native() -> Iterator[_native_engine.NativeEngine]:
    """The native engine's opt-in side, released again after the test."""
    engine = _native_engine.NativeEngine()
    installed_before = pep726hook.is_installed()
    yield engine
    collect_garbage()
    if not installed_before:
        engine.release_opt_ins()


def deprecating_module(
    engine: _native_engine.NativeEngine, name: str = "deprecating", **entries: Any
) -> tuple[Any, dict[str, Any]]:
    """Return a module with ``New = 1`` and a table deprecating ``Old`` (or *entries*)."""
    module = ModuleType(name)
    module.New = 1
    table: dict[str, Any] = entries or {
        "Old": ("old value", "Old is deprecated; use New", DeprecationWarning)
    }
    engine.set_deprecations(module, table)
    return module, table


def line_after() -> int:
    """The number of the caller's next line."""
    return sys._getframe(1).f_lineno + 1


def seen(caught: list[warnings.WarningMessage]) -> list[tuple[str, str, int]]:
    return [(str(w.message), w.filename, w.lineno) for w in caught]


# --- reads ---------------------------------------------------------------------


def test_read_of_a_deprecated_name_warns_at_the_callers_line(native: Any) -> None:
    module, _ = deprecating_module(native)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = line_after()
        value = module.Old
    assert value == "old value"
    assert seen(caught) == [("Old is deprecated; use New", HERE, line)]
    assert caught[0].category is DeprecationWarning


def test_getattr_and_hasattr_warn_and_other_names_do_not(native: Any) -> None:
    module, _ = deprecating_module(native, Old=(2, "gone", Replaced))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert getattr(module, "Old") == 2
        assert hasattr(module, "Old")
        assert module.New == 1
        assert not hasattr(module, "missing")
        assert getattr(module, "missing", None) is None
    assert [w.category for w in caught] == [Replaced, Replaced]


def test_names_built_at_run_time_are_served_too(native: Any) -> None:
    # A line's interned name is looked up in the table first once it has
    # been served; a str made at run time is another object, found after
    # the original slot's miss.
    module, _ = deprecating_module(native)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):
            assert getattr(module, "".join(["O", "ld"])) == "old value"
            assert module.Old == "old value"
    assert len(caught) == 6


def test_a_miss_still_raises_the_modules_own_attribute_error(native: Any) -> None:
    module, _ = deprecating_module(native)
    with pytest.raises(AttributeError, match="has no attribute 'missing'"):
        module.missing  # noqa: B018


def _miss_messages() -> list[str]:
    """The AttributeError messages of misses on modules in CPython's own cases."""
    named = ModuleType("named")
    initializing = ModuleType("initializing")
    initializing.__spec__ = types.SimpleNamespace(_initializing=True)
    nameless = ModuleType("nameless")
    del nameless.__name__
    messages = []
    for module in (named, initializing, nameless):
        try:
            module.missing  # noqa: B018
        except AttributeError as error:
            messages.append(str(error))
    return messages


def test_misses_raise_cpythons_own_messages_while_a_table_exists(native: Any) -> None:
    # Before 3.11 the wrapper does the generic lookup itself and hands a miss
    # on a module without a table to the original slot: its messages (the
    # partially initialized module's, the nameless module's) must come out
    # unchanged, and a module whose table lacks the name must fail the same.
    without_table = _miss_messages()
    module, _ = deprecating_module(native)
    assert _native.state()["getattro_wrapped"]
    assert _miss_messages() == without_table
    assert "partially initialized module 'initializing'" in without_table[1]
    with pytest.raises(AttributeError, match=r"^module 'deprecating' has no attribute 'missing'$"):
        module.missing  # noqa: B018
    with pytest.raises(TypeError):
        getattr(module, 1)  # type: ignore[call-overload]


def test_the_modules_pep562_getattr_runs_first(native: Any) -> None:
    module, _ = deprecating_module(native)

    def __getattr__(name: str) -> Any:
        if name in ("Dynamic", "Old"):
            return f"dynamic {name}"
        raise AttributeError(name)

    module.__getattr__ = __getattr__
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert module.Dynamic == "dynamic Dynamic"
        # __getattr__ answered, so the table is not consulted.
        assert module.Old == "dynamic Old"
    assert caught == []
    module.__getattr__ = lambda name: (_ for _ in ()).throw(AttributeError(name))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert module.Old == "old value"
    assert len(caught) == 1


def test_error_filter_turns_the_read_into_an_exception(native: Any) -> None:
    module, table = deprecating_module(native)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        with pytest.raises(DeprecationWarning, match="Old is deprecated"):
            module.Old  # noqa: B018
        assert module.New == 1
    assert "Old" in table


def test_default_filter_warns_once_per_call_site(native: Any) -> None:
    module, _ = deprecating_module(native, name="once_per_site")
    registry: dict[Any, Any] = {}
    globals()["__warningregistry__"] = registry
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("default")
            for _ in range(3):
                module.Old  # noqa: B018
            module.Old  # noqa: B018
        assert len(caught) == 2
    finally:
        globals().pop("__warningregistry__", None)


def package_with_table(native: Any, name: str) -> tuple[Any, dict[str, Any]]:
    package, table = deprecating_module(native, name=name)
    package.__path__ = []
    package.__all__ = ["New", "Old"]
    sys.modules[name] = package
    return package, table


def test_from_package_import_warns_once_at_the_users_line(native: Any) -> None:
    # importlib's _handle_fromlist probes hasattr(package, "Old") first; that
    # probe must neither warn nor be reported at <frozen importlib._bootstrap>.
    package_with_table(native, "deprecating_package")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = line_after()
        from deprecating_package import Old  # type: ignore[import-not-found]
    assert Old == "old value"
    assert seen(caught) == [("Old is deprecated; use New", HERE, line)]


def test_star_import_of_a_package_warns_for_names_in_all(native: Any) -> None:
    package_with_table(native, "deprecating_star")
    namespace: dict[str, Any] = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exec("from deprecating_star import *", namespace)
    assert namespace["Old"] == "old value"
    assert [(str(w.message), w.filename) for w in caught] == [
        ("Old is deprecated; use New", "<string>")
    ]


def test_from_plain_module_import_warns_at_the_users_line(native: Any) -> None:
    module, _ = deprecating_module(native, name="deprecating_plain")
    sys.modules["deprecating_plain"] = module
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = line_after()
        from deprecating_plain import Old  # type: ignore[import-not-found]
    assert Old == "old value"
    assert seen(caught) == [("Old is deprecated; use New", HERE, line)]


def test_subclass_made_before_the_wrapper_serves_deprecations(native: Any) -> None:
    class Early(ModuleType):
        pass

    assert not _native.state()["getattro_wrapped"]
    module = Early("early")
    native.set_deprecations(module, {"Old": (3, "old", DeprecationWarning)})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert module.Old == 3
    assert len(caught) == 1


# --- the read slot wrapper comes and goes -------------------------------------


def test_read_slot_is_wrapped_only_while_a_table_is_set(native: Any) -> None:
    original = ModuleType.__getattribute__
    assert not _native.state()["getattro_wrapped"]
    module, table = deprecating_module(native)
    state = _native.state()
    assert state["getattro_wrapped"] and state["deprecating"] == 1
    assert _native.deprecations_of(module) is table
    native.set_deprecations(module, {})
    assert _native.deprecations_of(module) is None
    assert not _native.state()["getattro_wrapped"]
    native.set_deprecations(module, table)
    native.set_deprecations(module, None)
    assert not _native.state()["getattro_wrapped"]
    assert ModuleType.__getattribute__ is original
    with pytest.raises(AttributeError):
        module.Old  # noqa: B018


def test_uninstall_takes_the_wrapper_out(native: Any) -> None:
    module, _ = deprecating_module(native)
    _native.uninstall()
    assert not _native.state()["getattro_wrapped"]
    assert _native.deprecations_of(module) is None
    with pytest.raises(AttributeError):
        module.Old  # noqa: B018


def test_a_module_that_dies_is_forgotten(native: Any, mortal_modules: None) -> None:
    module, table = deprecating_module(native)
    del module
    collect_garbage()
    state = _native.state()
    assert state["deprecating"] == 0 and not state["getattro_wrapped"]
    # A new module at the same address (CPython reuses freed memory) is not
    # deprecating.
    fresh = [ModuleType(f"fresh{i}") for i in range(200)]
    assert all(_native.deprecations_of(m) is None for m in fresh)
    # Only our local holds the table now (counted against one held the same way).
    control: dict[str, Any] = {}
    assert sys.getrefcount(table) == sys.getrefcount(control)


def test_many_modules_and_some_deaths_keep_the_table_right(
    native: Any, mortal_modules: None
) -> None:
    modules = [deprecating_module(native, name=f"m{i}")[0] for i in range(100)]
    del modules[::3]
    collect_garbage()
    assert _native.state()["deprecating"] == len(modules)
    for module in modules:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert module.Old == "old value"
    del modules, module
    collect_garbage()
    assert not _native.state()["getattro_wrapped"]


def test_empty_table_is_kept_but_not_counted(native: Any) -> None:
    # The table is shared: a store that ends the last deprecation leaves it
    # empty, and the Python side may fill it again.
    module, table = deprecating_module(native)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        module.Old = 5
    assert table == {} and _native.deprecations_of(module) is table
    assert _native.state()["deprecating"] == 0
    table["Again"] = (6, "again", DeprecationWarning)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert module.Again == 6


# --- bad input ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "entry",
    [
        "not a tuple",
        (1, "two items"),
        (1, "message", DeprecationWarning, "four"),
        (1, b"bytes message", DeprecationWarning),
        (1, "message", ValueError),
        (1, "message", "not a class"),
    ],
)
def test_a_bad_entry_raises_type_error_at_access(native: Any, entry: Any) -> None:
    module, table = deprecating_module(native, Bad=entry)
    with pytest.raises(TypeError, match="deprecation table entry for 'Bad'"):
        module.Bad  # noqa: B018
    with pytest.raises(TypeError, match="deprecation table entry for 'Bad'"):
        module.Bad = 1
    with pytest.raises(TypeError, match="deprecation table entry for 'Bad'"):
        del module.Bad
    assert table == {"Bad": entry} and "Bad" not in vars(module)


def test_bad_arguments_raise(native: Any) -> None:
    module, _ = deprecating_module(native)
    with pytest.raises(TypeError, match="needs a module"):
        _native.set_deprecations(object(), {})
    with pytest.raises(TypeError, match="needs a dict or None"):
        _native.set_deprecations(module, [("Old", 1)])
    with pytest.raises(TypeError):
        _native.set_deprecations(module)  # type: ignore[call-arg]
    assert _native.deprecations_of(object()) is None


def test_set_deprecations_needs_the_patch() -> None:
    if _native.state()["patched"]:
        pytest.skip("the native patch is in place already")
    with pytest.raises(RuntimeError, match="install"):
        _native.set_deprecations(ModuleType("m"), {"Old": (1, "m", DeprecationWarning)})


# --- stores and deletions ---------------------------------------------------------


def test_store_warns_ends_the_deprecation_and_stores(native: Any) -> None:
    module, table = deprecating_module(native)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = line_after()
        module.Old = "new value"
        assert module.Old == "new value"
    assert seen(caught) == [("Old is deprecated; use New", HERE, line)]
    assert table == {} and vars(module)["Old"] == "new value"


def test_delete_warns_ends_the_deprecation_and_deletes(native: Any) -> None:
    module, table = deprecating_module(native)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = line_after()
        del module.Old
    assert seen(caught) == [("Old is deprecated; use New", HERE, line)]
    assert table == {} and "Old" not in vars(module)
    with pytest.raises(AttributeError):
        module.Old  # noqa: B018


def test_store_and_delete_reach_the_opted_in_hooks(native: Any) -> None:
    module, table = deprecating_module(native)
    log: list[Any] = []
    module.__setattr__ = lambda name, value: log.append(("set", name, value))
    module.__delattr__ = lambda name: log.append(("del", name, vars(module).get(name)))
    native.opt_in(module)
    table["Gone"] = ("gone value", "Gone is deprecated", DeprecationWarning)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        module.Old = 9
        del module.Gone
    # The deletion hook sees the value back in the namespace.
    assert log == [("set", "Old", 9), ("del", "Gone", "gone value")]
    assert table == {}


def test_failing_store_puts_the_entry_back(native: Any) -> None:
    module, table = deprecating_module(native)
    entry = table["Old"]

    def __setattr__(name: str, value: Any) -> None:
        raise ValueError("read-only")

    module.__setattr__ = __setattr__
    native.opt_in(module)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match="read-only"):
            module.Old = 1
    assert table == {"Old": entry} and "Old" not in vars(module)


def test_failing_delete_undoes_both_steps(native: Any) -> None:
    module, table = deprecating_module(native)
    entry = table["Old"]

    def __delattr__(name: str) -> None:
        raise ValueError("kept")

    module.__delattr__ = __delattr__
    native.opt_in(module)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match="kept"):
            del module.Old
    assert table == {"Old": entry} and "Old" not in vars(module)


def test_error_filter_stops_the_store_before_anything_changes(native: Any) -> None:
    module, table = deprecating_module(native)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        with pytest.raises(DeprecationWarning):
            module.Old = 1
        with pytest.raises(DeprecationWarning):
            del module.Old
        module.New = 2
    assert "Old" in table and "Old" not in vars(module) and module.New == 2


def test_module_type_setattr_and_super_end_the_deprecation(native: Any) -> None:
    class Sub(ModuleType):
        def __setattr__(self, name: str, value: Any) -> None:
            super().__setattr__(name, value)

    for module, store in (
        (ModuleType("plain"), lambda m: ModuleType.__setattr__(m, "Old", 1)),
        (ModuleType("plain"), lambda m: ModuleType.__delattr__(m, "Old")),
        (Sub("sub"), lambda m: setattr(m, "Old", 1)),
    ):
        table = {"Old": (0, "old", DeprecationWarning)}
        native.set_deprecations(module, table)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            store(module)
        assert len(caught) == 1 and table == {}
        native.set_deprecations(module, None)


def test_object_setattr_is_the_plain_store_on_every_version(native: Any) -> None:
    # object.__setattr__ bypasses a module's __setattr__ hook (PEP 726), and
    # from 3.13 on nothing of ours runs for it at all: on 3.8-3.12 (call
    # guard) it bypasses the table too, so every version behaves the same.
    module, table = deprecating_module(native)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        object.__setattr__(module, "Old", "shadow")
        assert module.Old == "shadow"
    assert caught == [] and "Old" in table


def test_store_on_a_namespace_known_to_have_no_hook_still_warns(native: Any) -> None:
    # 3.12+: stores on a namespace the hookless cache knows take a fast path.
    module = ModuleType("cached")
    native.opt_in(module)
    for value in range(3):
        module.x = value
    table = {"Old": (0, "old", DeprecationWarning)}
    native.set_deprecations(module, table)
    module.x = 5
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module.Old = 1
    assert len(caught) == 1 and table == {} and module.Old == 1


def test_slot_design_store_warns(native: Any) -> None:
    if _native.state()["patched"]:
        pytest.skip("the native patch is in place already")
    _native.install(process_wide=False, direct=False)
    try:
        module = ModuleType("slot_design")
        table = {"Old": (0, "old", DeprecationWarning)}
        _native.set_deprecations(module, table)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert module.Old == 0
            module.Old = 1
        assert len(caught) == 2 and table == {}
    finally:
        _native.uninstall()


# --- reference counts ------------------------------------------------------------


def test_the_module_is_held_weakly(native: Any) -> None:
    module = ModuleType("weakly")
    before = sys.getrefcount(module)
    native.set_deprecations(module, {"Old": (0, "old", DeprecationWarning)})
    assert sys.getrefcount(module) == before
    native.set_deprecations(module, None)
    assert sys.getrefcount(module) == before


def test_reads_stores_and_failures_keep_reference_counts(native: Any) -> None:
    value, message = object(), "counted"
    module, table = deprecating_module(native, Old=(value, message, DeprecationWarning))
    entry = table["Old"]
    before = (sys.getrefcount(value), sys.getrefcount(entry), sys.getrefcount(table))
    gc.disable()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for _ in range(1000):
                assert module.Old is value
                assert hasattr(module, "Old")
                with pytest.raises(AttributeError):
                    module.missing  # noqa: B018
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            for _ in range(100):
                with pytest.raises(DeprecationWarning):
                    module.Old = 1
                with pytest.raises(DeprecationWarning):
                    module.Old  # noqa: B018
    finally:
        gc.enable()
    after = (sys.getrefcount(value), sys.getrefcount(entry), sys.getrefcount(table))
    assert after == before


def test_a_deprecating_module_keeps_the_patch(native: Any) -> None:
    # Like an opted-in module: the engine's deactivate()/release_opt_ins()
    # leave the patch in place while a module has deprecated attributes.
    if _native.state()["patched"]:
        pytest.skip("the native patch is in place already")
    module, table = deprecating_module(native)
    native.activate()
    native.deactivate()
    native.release_opt_ins()
    state = _native.state()
    assert state["patched"] and not state["process_wide"]
    assert _native.deprecations_of(module) is table
    native.set_deprecations(module, None)
    native.release_opt_ins()
    assert not _native.state()["patched"]

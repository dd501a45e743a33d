"""The native engine's cache of namespaces without hooks: a hook that appears
in one, however it gets there, is called on the very next store.

From 3.12 a dict watcher tells the engine when a key may appear in a
namespace it remembered; on 3.11 the version CPython gives a dict's keys goes
by the same changes; before, every store looks the hook up.  The tests run
on every version (there they check the lookup).
"""

from __future__ import annotations

import types
from typing import Any, Callable

import pytest
from _native_helpers import REQUIRES_NATIVE

import pep726hook

pytestmark = REQUIRES_NATIVE

ModuleType = types.ModuleType
# Stores that find a namespace without hooks often enough for the native
# engine to remember it (3.12+ watch a namespace after a few such stores).
HOOKLESS_STORES = 20


def hooked_module(log: list[Any]) -> Any:
    """Return a module whose hooks append to *log*."""
    module = ModuleType("hooked")
    module.__dict__["__setattr__"] = lambda n, v: log.append(("set", n, v))
    module.__dict__["__delattr__"] = lambda n: log.append(("del", n))
    return module


# --- a hook appearing on a module that was stored on without one ---------------
# From 3.12 the native engine remembers namespaces without hooks (a dict
# watcher tells it when one may appear); every way of adding the key must be
# seen on the very next store.


def _add_directly(ns: dict[str, Any], key: str, hook: object) -> None:
    ns[key] = hook


def _add_by_exec_def(ns: dict[str, Any], key: str, hook: object) -> None:
    ns["_new_hook"] = hook
    params = "n, v" if key == "__setattr__" else "n"
    exec(f"def {key}({params}):\n    _new_hook({params})\n", ns)


def _add_through_globals(ns: dict[str, Any], key: str, hook: object) -> None:
    exec(f"def _add(h):\n    globals()[{key!r}] = h\n", ns)
    ns["_add"](hook)


def _add_by_global_statement(ns: dict[str, Any], key: str, hook: object) -> None:
    exec(f"def _add(h):\n    global {key}\n    {key} = h\n", ns)
    ns["_add"](hook)


def _add_by_update(ns: dict[str, Any], key: str, hook: object) -> None:
    ns.update({key: hook})


def _add_by_setdefault(ns: dict[str, Any], key: str, hook: object) -> None:
    ns.setdefault(key, hook)


def _add_with_an_equal_uninterned_key(ns: dict[str, Any], key: str, hook: object) -> None:
    ns["".join([key[:5], key[5:]])] = hook


class _Str(str):
    pass


def _add_with_a_str_subclass_key(ns: dict[str, Any], key: str, hook: object) -> None:
    ns[_Str(key)] = hook


def _add_by_cloning_a_dict(ns: dict[str, Any], key: str, hook: object) -> None:
    source = dict(ns)
    source[key] = hook
    ns.clear()
    ns.update(source)


def _add_after_a_deletion(ns: dict[str, Any], key: str, hook: object) -> None:
    # Present, deleted, remembered as hookless again, then added back.
    ns[key] = hook
    del ns[key]
    for i in range(HOOKLESS_STORES):
        ns["me"].z = i
    ns[key] = hook


def _add_after_clearing(ns: dict[str, Any], key: str, hook: object) -> None:
    # Cleared, remembered as hookless while nearly empty, then filled again.
    saved = dict(ns)
    ns.clear()
    ns["me"] = saved["me"]
    for i in range(HOOKLESS_STORES):
        ns["me"].z = i
    ns.update(saved)
    ns[key] = hook


def _add_in_the_module_body(ns: dict[str, Any], key: str, hook: object) -> None:
    ns["_new_hook"] = hook
    params = "n, v" if key == "__setattr__" else "n"
    exec(f"me.before = 0\ndef {key}({params}):\n    _new_hook({params})\n", ns)


@pytest.mark.parametrize(
    "add",
    [
        _add_directly,
        _add_by_exec_def,
        _add_through_globals,
        _add_by_global_statement,
        _add_by_update,
        _add_by_setdefault,
        _add_with_an_equal_uninterned_key,
        _add_with_a_str_subclass_key,
        _add_by_cloning_a_dict,
        _add_after_a_deletion,
        _add_after_clearing,
        _add_in_the_module_body,
    ],
)
@pytest.mark.parametrize("key", ["__setattr__", "__delattr__"])
def test_a_hook_added_after_hookless_stores_is_called_on_the_next_one(
    native: None, add: Callable[[dict[str, Any], str, object], None], key: str
) -> None:
    module = ModuleType("m")
    ns = module.__dict__
    ns["me"] = module
    for i in range(HOOKLESS_STORES):
        module.x = i
        module.y = i
        del module.y
    calls: list[tuple[Any, ...]] = []
    add(ns, key, lambda *args: calls.append(args))
    module.x = "hooked?"
    module.y = 1
    if key == "__setattr__":
        assert calls == [("x", "hooked?"), ("y", 1)]
        assert module.x == HOOKLESS_STORES - 1
    else:
        del module.y
        assert calls == [("y",)]
        assert (module.x, module.y) == ("hooked?", 1)


def _read_by_specialised_code(ns: dict[str, Any]) -> None:
    # A function of the namespace reading one of its globals often enough to
    # be specialised: 3.11's cache of the lookup gives the namespace's keys a
    # version, which the native engine's hookless cache goes by there.
    exec("def _read():\n    return me\n", ns)
    for _ in range(200):
        ns["_read"]()


@pytest.mark.parametrize(
    "add",
    [
        _add_directly,
        _add_by_exec_def,
        _add_through_globals,
        _add_by_global_statement,
        _add_by_update,
        _add_by_setdefault,
        _add_with_an_equal_uninterned_key,
        _add_with_a_str_subclass_key,
        _add_by_cloning_a_dict,
        _add_after_a_deletion,
        _add_after_clearing,
        _add_in_the_module_body,
    ],
)
@pytest.mark.parametrize("key", ["__setattr__", "__delattr__"])
def test_a_hook_added_to_a_namespace_its_code_reads_is_called_on_the_next_store(
    native: None, add: Callable[[dict[str, Any], str, object], None], key: str
) -> None:
    # Only existing names are stored before the hook comes: the namespace's
    # keys stay as they were, so a cache that goes by them is used.
    module = ModuleType("m")
    ns = module.__dict__
    ns["me"] = module
    module.x = module.y = 0
    _read_by_specialised_code(ns)
    for i in range(HOOKLESS_STORES):
        module.x = i
        module.y = i
    calls: list[tuple[Any, ...]] = []
    add(ns, key, lambda *args: calls.append(args))
    module.x = "hooked?"
    if key == "__setattr__":
        assert calls == [("x", "hooked?")]
        assert module.x == HOOKLESS_STORES - 1
    else:
        del module.y
        assert calls == [("y",)]
        assert module.y == HOOKLESS_STORES - 1


def test_a_hook_added_by_a_finalizer_during_a_store_is_called_on_the_next_one(
    native: None,
) -> None:
    # The store replaces a value whose finalizer adds the hook: the store that
    # ran it cannot vouch for the namespace afterwards.
    module = ModuleType("m")
    ns = module.__dict__
    ns["me"] = module
    log: list[Any] = []

    class AddsTheHook:
        def __del__(self) -> None:
            ns["__setattr__"] = lambda n, v: log.append((n, v))

    module.x = 0
    _read_by_specialised_code(ns)
    for i in range(HOOKLESS_STORES):
        module.x = i
    module.x = AddsTheHook()
    module.x = 1  # runs the finalizer, which adds the hook
    assert log == []
    module.x = 2
    assert log == [("x", 2)]


def test_a_new_module_where_a_hookless_one_was_freed_gets_its_hooks(native: None) -> None:
    # The cache keys namespaces by address: a freed one must never vouch for
    # a new dict allocated at the same place.  Stored into enough times to be
    # remembered (3.12+ watch a namespace after a few hookless stores).
    for i in range(300):
        plain = ModuleType("plain")
        for _ in range(HOOKLESS_STORES):
            plain.x = i
        del plain
        log: list[Any] = []
        module = hooked_module(log=log)
        module.x = i
        assert log == [("set", "x", i)]


def test_hooks_are_seen_after_uninstall_and_reinstall() -> None:
    module = ModuleType("m")
    with pep726hook.install("native"):
        module.x = 1
    module.__dict__["__setattr__"] = None
    module.x = 2
    log: list[Any] = []
    module.__dict__["__setattr__"] = lambda n, v: log.append(n)
    with pep726hook.install("native"):
        module.x = 3
    assert log == ["x"]

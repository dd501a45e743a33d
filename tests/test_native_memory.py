"""Native engine: a million stores and deletes leak nothing; reference counts are left as found."""

from __future__ import annotations

import gc
import sys
from typing import Any

import pytest
from _native_helpers import REQUIRES_NATIVE, ModuleType

pytestmark = REQUIRES_NATIVE


# --- memory safety ----------------------------------------------------------


def _store_and_delete(module: Any, value: object, count: int) -> None:
    for _ in range(count):
        module.attribute = value
        del module.attribute


def test_a_million_stores_and_deletes_leak_nothing(native: None) -> None:
    count = 10**6
    hooked = ModuleType("hooked")
    sink: dict[str, object] = {}

    def store(name: str, value: object) -> None:
        sink[name] = value

    def delete(name: str) -> None:
        del sink[name]

    hooked.__dict__["__setattr__"] = store
    hooked.__dict__["__delattr__"] = delete
    unhooked = ModuleType("unhooked")
    value = object()
    for module in (hooked, unhooked):
        _store_and_delete(module, value, 1000)  # warm caches before measuring
    gc.collect()
    references = sys.getrefcount(value)
    tracemalloc = pytest.importorskip("tracemalloc")  # PyPy has none; native is CPython only
    tracemalloc.start()
    try:
        start, _ = tracemalloc.get_traced_memory()
        for module in (hooked, unhooked):
            _store_and_delete(module, value, count)
        gc.collect()
        end, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert sys.getrefcount(value) == references
    assert end - start < 64 * 1024
    assert sink == {}
    assert "attribute" not in unhooked.__dict__


def test_refcounts_of_names_values_and_hooks_are_unchanged(native: None) -> None:
    module = ModuleType("m")
    value = object()
    # Interned up front: setattr() interns names, which would count as a change.
    name = sys.intern("".join(["some", "_name"]))

    def hook(*args: object) -> None:
        pass

    module.__dict__["__setattr__"] = hook
    module.__dict__["__delattr__"] = hook

    def exercise(times: int) -> None:
        for _ in range(times):
            setattr(module, name, value)
            delattr(module, name)
            ModuleType.__setattr__(module, name, value)
            ModuleType.__delattr__(module, name)
            object.__setattr__(module, name, value)
            object.__delattr__(module, name)

    # The first round may leave *name* in CPython's type attribute cache.
    exercise(1)
    counts = [sys.getrefcount(obj) for obj in (value, name, hook)]
    exercise(1000)
    assert [sys.getrefcount(obj) for obj in (value, name, hook)] == counts

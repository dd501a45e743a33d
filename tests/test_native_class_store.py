"""A ``__class__`` store on a module whose PEP 562 ``__getattr__`` the native engine holds.

On CPython 3.11-3.14 ``enable(module, fast_getattr=True)`` moves such a
function out of the module's namespace (``tests/test_native_module_getattr.py``); a store of ``__class__``
must leave the module's reads able to reach it whatever class it ends with.
The work that makes sure of that allocates: here every allocation of the
store fails in turn (``_testcapi.set_nomemory``, in a fresh interpreter), and
each time the store and what it reports must agree.
"""

from __future__ import annotations

import sys

import pytest
from _venv import describe, run_fresh_python

import pep726hook

pytestmark = [
    pytest.mark.skipif(
        "native" not in pep726hook.available_engines(), reason="needs the native engine"
    ),
    pytest.mark.skipif(
        not (3, 11) <= sys.version_info[:2] < (3, 15),
        reason="the function is held outside the namespace on CPython 3.11-3.14 only",
    ),
]

EVERY_ALLOCATION_FAILING_IN_TURN = """
import types
import _testcapi
import pep726hook

SOURCE = '''
def __getattr__(name):
    if name == "lazy":
        return "lazy value"
    raise AttributeError(name)
'''
outcomes = []
for allocation in range(60):
    module = types.ModuleType(f"held_getattr_{allocation}")
    exec(SOURCE, module.__dict__)
    pep726hook.install("native")
    pep726hook.enable(module, fast_getattr=True)
    assert "__getattr__" not in vars(module), "the function was not relocated"
    # Made after the read slot was wrapped: the store gives it the wrapper.
    Own = type("Own", (types.ModuleType,), {})
    _testcapi.set_nomemory(allocation, 0)
    try:
        module.__class__ = Own
    except MemoryError:
        _testcapi.remove_mem_hooks()
        reported = "failed"
    else:
        _testcapi.remove_mem_hooks()
        reported = "stored"
    stored = type(module) is Own
    assert stored == (reported == "stored"), (allocation, reported, type(module))
    assert module.lazy == "lazy value", (allocation, reported)
    if not stored:
        module.__class__ = Own
        assert type(module) is Own and module.lazy == "lazy value", allocation
    outcomes.append(reported)
print(*sorted(set(outcomes)))
"""


def test_a_class_store_reports_failure_only_when_the_class_is_unchanged() -> None:
    pytest.importorskip("_testcapi", reason="needs CPython's _testcapi (set_nomemory)")
    result = run_fresh_python(EVERY_ALLOCATION_FAILING_IN_TURN)
    assert result.returncode == 0, describe(result)
    # Both outcomes seen: some allocation of the store's own work failed.
    assert result.stdout == "failed stored\n", describe(result)

"""Deprecated module attributes under the native engine.

Once its import has ended, a module with deprecated names is a plain module
again under the native engine: the names live in its private builtins and a
descriptor in ModuleType's dict serves reads through it (test_deprecation.py
tests what both engines share; test_native_moved_deprecations.py the move).
Here: its patched store slot must call a module's hooks once, a store through
ModuleType's own ``__setattr__`` still warns, ModuleType's read slot is not
wrapped for deprecations, and a PEP 562 ``__getattr__`` keeps working.
"""

from __future__ import annotations

import importlib
import sys
import types
import warnings
from typing import Any, Callable

import pytest
from _deprecation_helpers import own_value
from _venv import WriteModule

import pep726hook
from pep726hook import _native_engine
from pep726hook._deprecations import _entries

pytestmark = pytest.mark.skipif(
    "native" not in pep726hook.available_engines(),
    reason=f"native engine unavailable: {_native_engine.unavailable_reason()}",
)

if "native" in pep726hook.available_engines():
    from pep726hook import _native

HOOKED = """
import pep726hook
log = []

def __setattr__(name, value):
    log.append(("set", name, value))
    globals()[name] = value

def __delattr__(name):
    log.append(("del", name))
    del globals()[name]

Old = 1
New = 2
pep726hook.deprecate_attribute(__name__, "Old", "Old is deprecated")
"""

PLAIN = """
import pep726hook
Old = 1
New = 2
pep726hook.deprecate_attribute(__name__, "Old", "Old is deprecated")
"""


@pytest.fixture
def load(
    write_module: WriteModule, monkeypatch: pytest.MonkeyPatch, no_opted_in_module_alive: None
) -> Callable[[str], Any]:
    monkeypatch.setenv("PEP726HOOK_ENGINE", "native")

    def make(source: str) -> Any:
        write_module("natdep", source)
        module = importlib.import_module("natdep")
        assert pep726hook.engine(module) == "native"
        return module

    return make


def test_hooks_are_called_once_per_store_and_deletion_under_the_deprecating_class(
    load: Callable[[str], Any],
) -> None:
    module = load(HOOKED)
    assert type(module) is not types.ModuleType
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module.New = 3
        module.Old = 4  # the deprecated name: warns, one hook call, ends
        module.Other = 5
        del module.Other
    assert module.log == [
        ("set", "New", 3),
        ("set", "Old", 4),
        ("set", "Other", 5),
        ("del", "Other"),
    ]
    assert [str(w.message) for w in caught] == ["Old is deprecated"]
    assert [w.filename for w in caught] == [__file__]
    assert "Old" not in (_entries.deprecations_of(module) or {})


def test_a_store_through_moduletypes_own_setattr_on_the_moved_module_warns_and_ends_it(
    load: Callable[[str], Any],
) -> None:
    module = load(PLAIN)
    assert module.New == 2  # the first read through the module moves Old
    # Stores of other names, so that on 3.12+ the namespace is known to have
    # no hook (the slot's fast path).
    module.a = 1
    module.b = 2
    assert type(module) is types.ModuleType and "Old" not in vars(module)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        types.ModuleType.__setattr__(module, "Old", "direct")
        line = sys._getframe().f_lineno - 1
        assert vars(module)["Old"] == "direct"
        assert module.Old == "direct"  # no longer deprecated
    assert [(str(w.message), w.filename, w.lineno) for w in caught] == [
        ("Old is deprecated", __file__, line)
    ]
    assert own_value(module, "Old") == "direct"


def test_the_read_slot_is_not_wrapped_for_deprecations(load: Callable[[str], Any]) -> None:
    module = load("import pep726hook\nOld = 1\npep726hook.enable(__name__)\n")
    # 3.11 wraps it for any opted-in module (to catch a __getattr__ defined
    # later, with no dict watcher to tell); later versions only once a
    # __getattr__ appears.  A deprecation changes neither.
    wrapped_by_enable = _native.state()["getattro_wrapped"]
    assert wrapped_by_enable is (sys.version_info[:2] == (3, 11))
    pep726hook.deprecate_attribute(module, "Old", "Old is deprecated")
    assert _native.state()["getattro_wrapped"] is wrapped_by_enable
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert module.Old == 1
    assert len(caught) == 1


def test_a_held_pep562_getattr_goes_back_into_the_namespace(
    load: Callable[[str], Any],
) -> None:
    source = (
        "import pep726hook\n"
        "def __getattr__(name):\n"
        "    if name == 'lazy':\n"
        "        return 'served'\n"
        "    raise AttributeError(name)\n"
        "Old = 1\n"
        "pep726hook.enable(__name__, fast_getattr=True)\n"
        "held = '__getattr__' not in globals()\n"
        "pep726hook.deprecate_attribute(__name__, 'Old', 'Old is deprecated')\n"
    )
    module = load(source)
    if (3, 11) <= sys.version_info < (3, 15):
        assert module.held  # the native engine held it outside while enabled
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert module.lazy == "served"
        assert module.Old == 1
        with pytest.raises(AttributeError):
            module.missing  # noqa: B018
    assert [str(w.message) for w in caught] == ["Old is deprecated"]
    # The first read after the import moved the deprecated name: the module
    # is plain again, and its __getattr__ is served as on any enabled module.
    assert type(module) is types.ModuleType


def test_return_getattr_refuses_a_non_module() -> None:
    with pytest.raises(TypeError, match="needs a module"):
        _native.return_getattr(object())  # type: ignore[arg-type]

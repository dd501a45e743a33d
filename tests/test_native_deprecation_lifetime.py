"""A deprecating module that refers to itself dies once dropped, as any module does.

``this = sys.modules[__name__]`` or ``import mypkg`` inside ``mypkg`` make
the cycle module -> namespace -> module, which the collector frees.  Under
the native engine the extension keeps a record of the module (its private
builtins, its deprecations' entries, its namespace) in a table the collector
does not see: the module's traversal must lead to it, or the cycle looks held
from outside and the module is never freed.
"""

from __future__ import annotations

import gc
import importlib
import sys
import weakref

import pytest
from _venv import WriteModule

import pep726hook

NATIVE = "native" in pep726hook.available_engines()

SELF_REFERRING = """
import sys
import pep726hook

this = sys.modules[__name__]

def Old():
    return this

pep726hook.deprecate_attribute(__name__, "Old", "Old is deprecated")
"""


def _dies_when_dropped(name: str) -> bool:
    module = importlib.import_module(name)
    module.__name__  # noqa: B018  (the first read through the module moves the names)
    ref = weakref.ref(module)
    del module
    for loaded in [m for m in sys.modules if m.partition(".")[0] == name]:
        del sys.modules[loaded]
    gc.collect()
    left = ref()
    if left is None:
        return True
    # Break the cycle, so that the module dies and no later test sees it.
    for own in ("this", name):
        vars(left).pop(own, None)
    del left
    gc.collect()
    return False


@pytest.mark.skipif(not NATIVE, reason="the native engine is unavailable here")
def test_the_collector_sees_the_record_as_the_modules(
    mortal_modules: None, write_module: WriteModule, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PEP726HOOK_ENGINE", "native")
    write_module("lifetime_record", SELF_REFERRING.replace("this = sys.modules[__name__]", "this = None"))
    module = importlib.import_module("lifetime_record")
    try:
        module.__name__  # noqa: B018
        assert pep726hook.engine(module) == "native"
        namespace = vars(module)
        records = [
            referent
            for referent in gc.get_referents(module)
            if type(referent) is tuple and any(item is namespace for item in referent)
        ]
        assert len(records) == 1
    finally:
        del sys.modules["lifetime_record"]


# The native engine's Python side keeps the private builtins and the entries
# in a registry keyed by id(module) (_deprecations/_moved.py, _privates),
# which the collector sees as a root: the moved function's globals lead back
# to the module.  Until that registry is held through the module too, the
# module stays alive under the native engine.
@pytest.mark.parametrize("shape", ["this", "package"])
def test_a_self_referring_deprecating_module_dies_when_dropped(
    opt_in_engine: str, mortal_modules: None, write_module: WriteModule, shape: str
) -> None:
    if shape == "this":
        write_module("lifetime_this", SELF_REFERRING)
        dies = _dies_when_dropped("lifetime_this")
    else:
        write_module(
            "lifetime_pkg",
            "import lifetime_pkg\n" + SELF_REFERRING.replace("this = sys.modules[__name__]", "this = lifetime_pkg"),
            package=True,
        )
        dies = _dies_when_dropped("lifetime_pkg")
    if opt_in_engine == "native" and not dies:
        pytest.xfail("the native engine's Python registry of private builtins is a root")
    assert dies

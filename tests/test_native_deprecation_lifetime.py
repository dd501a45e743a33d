"""A deprecating module that refers to itself dies once dropped, as any module does.

``this = sys.modules[__name__]`` or ``import mypkg`` inside ``mypkg`` make
the cycle module -> namespace -> module, which the collector frees.  Under
the native engine the extension keeps a record of the module (its private
builtins, its deprecations' entries, its namespace) in a table the collector
does not see: the module's traversal must lead to it, or the cycle looks held
from outside and the module is never freed; nor may the package's Python side
hold the private builtins in a registry of its own, a root for the collector.
"""

from __future__ import annotations

import gc
import importlib
import sys
import weakref

import pytest
from _venv import WriteModule

import pep726hook
from pep726hook._deprecations import _entries

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
    _entries._tables.pop(id(left), None)
    del left
    gc.collect()
    return False


@pytest.mark.skipif(not NATIVE, reason="the native engine is unavailable here")
def test_the_collector_sees_the_record_as_the_modules(
    mortal_modules: None, write_module: WriteModule, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PEP726HOOK_ENGINE", "native")
    write_module(
        "lifetime_record", SELF_REFERRING.replace("this = sys.modules[__name__]", "this = None")
    )
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


WARN_CLOSURE = """
import sys
import pep726hook

def _closing_over(module):
    def warn(message, category, stacklevel):
        module.warned = message
    return warn

Old = 1
pep726hook.deprecate_attribute(
    __name__, "Old", "Old is deprecated", warn=_closing_over(sys.modules[__name__])
)
"""

FACTORY_CLOSURE = """
import sys
import pep726hook

def _closing_over(module):
    return lambda: module.__name__

pep726hook.deprecate_attribute(
    __name__, "Old", "Old is deprecated", factory=_closing_over(sys.modules[__name__])
)
"""


@pytest.mark.parametrize("shape", ["this", "package", "warn", "factory"])
def test_a_self_referring_deprecating_module_dies_when_dropped(
    opt_in_engine: str, mortal_modules: None, write_module: WriteModule, shape: str
) -> None:
    name = f"lifetime_{shape}"
    if shape == "this":
        write_module(name, SELF_REFERRING)
    elif shape == "package":
        this = "import lifetime_package\nthis = lifetime_package"
        write_module(
            name, SELF_REFERRING.replace("this = sys.modules[__name__]", this), package=True
        )
    else:
        write_module(name, WARN_CLOSURE if shape == "warn" else FACTORY_CLOSURE)
    dies = _dies_when_dropped(name)
    if shape in ("warn", "factory") and not dies:
        # pep726hook._deprecations._entries keeps each module's deprecation
        # table in a registry keyed by id(module), a root the collector
        # cannot see past: a warn callable or factory that leads back to the
        # module keeps it alive, under both engines.  Not fixed yet.
        pytest.xfail("a warn callable or factory that refers to its module keeps it alive")
    assert dies

"""``declared_getattr()``: the ``__getattr__`` an idiom binds leaves the namespace when the import ends.

lazy_loader's ``__getattr__, __dir__, __all__ = lazy.attach(__name__, ...)``
binds a ``__getattr__`` in the package's body; with the names declared
(``lazy_attribute()``) and that function handed out by pep726hook, the
package's namespace holds no ``__getattr__`` once its import has ended.
Every test runs under both engines (``route``: enable()'s engine, alone or
with the process-wide hook).
"""

from __future__ import annotations

import importlib
import sys
import types
from importlib.machinery import ModuleSpec
from typing import Any, Callable

import pytest
from _venv import WriteModule

import pep726hook

NATIVE = "native" in pep726hook.available_engines()

# A small lazy_loader: attach() declares the names and returns pep726hook's
# __getattr__, as tests/real_libraries/patches/lazy_loader-*.patch does.
ATTACH = """
import importlib, sys
import pep726hook

def attach(package_name, submodules=(), submod_attrs=None):
    package = sys.modules[package_name]
    attrs = {a: m for m, names in (submod_attrs or {}).items() for a in names}
    for name in submodules:
        pep726hook.lazy_attribute(package, name)
    for name, module in attrs.items():
        def load(name=name, module=module):
            return getattr(importlib.import_module(f"{package_name}.{module}"), name)
        pep726hook.lazy_attribute(package, name, factory=load)
    names = sorted({*submodules, *attrs})
    def __dir__():
        return list(names)
    return pep726hook.declared_getattr(package), __dir__, list(names)
"""
PACKAGE = """
import pep726hook
from attacher import attach

__version__ = "1.0"
__getattr__, __dir__, __all__ = attach(__name__, ["sub"], {"sub": ["thing"]})
handed_out = __getattr__
pep726hook.removed_attribute(__name__, "old", "lazypkg.old was removed in 2.0")
"""


@pytest.fixture
def load(write_module: WriteModule) -> Callable[..., Any]:
    def make(source: str = PACKAGE, name: str = "lazypkg") -> Any:
        write_module("attacher", ATTACH)
        write_module(name, source, package=True)
        write_module(f"{name}.sub", "thing = 42\n")
        return importlib.import_module(name)

    return make


def test_the_handed_out_getattr_leaves_the_namespace_when_the_import_ends(
    route: str, load: Callable[..., Any]
) -> None:
    package = load()
    # Not in the namespace, nor held outside it (the native engine on 3.11).
    assert "__getattr__" not in vars(package)
    assert getattr(package, "__getattr__", None) is not package.handed_out
    assert type(package.__spec__) is ModuleSpec
    assert package.__spec__._initializing is False
    assert package.__version__ == "1.0"
    assert package.thing == 42
    assert package.sub is sys.modules["lazypkg.sub"]
    if route.startswith("native"):
        # Its reads are the interpreter's fast path again.
        assert type(package) is types.ModuleType
    with pytest.raises(AttributeError, match=r"^lazypkg.old was removed in 2.0$"):
        package.old  # noqa: B018
    with pytest.raises(AttributeError, match=r"^module 'lazypkg' has no attribute 'missing'$"):
        package.missing  # noqa: B018
    assert dir(package) == ["sub", "thing"]


def test_the_function_serves_the_declared_names_when_called(
    route: str, load: Callable[..., Any]
) -> None:
    package = load()
    function = package.handed_out
    assert "lazypkg.sub" not in sys.modules
    assert function("thing") == 42
    assert vars(package)["thing"] == 42
    assert function("sub") is sys.modules["lazypkg.sub"] is vars(package)["sub"]
    # A loaded name, no longer declared, is the namespace's.
    assert function("thing") == 42
    with pytest.raises(AttributeError, match=r"^lazypkg.old was removed in 2.0$"):
        function("old")
    # Only declared names: not even the namespace's others.
    for name in ("missing", "__version__"):
        with pytest.raises(AttributeError, match=rf"^module 'lazypkg' has no attribute '{name}'$"):
            function(name)


def test_a_getattr_the_body_binds_afterwards_stays(route: str, load: Callable[..., Any]) -> None:
    source = PACKAGE + "\ndef __getattr__(name):\n    return f'own {name}'\n"
    package = load(source, "ownpkg")
    # Read through the module: on CPython 3.11 the native engine holds an
    # opted-in module's __getattr__ outside its namespace.
    assert package.__getattr__ is not package.handed_out
    assert package.anything == "own anything"
    assert package.thing == 42
    assert type(package.__spec__) is ModuleSpec


def test_a_body_that_fails_leaves_a_plain_spec_and_no_module(
    route: str, load: Callable[..., Any]
) -> None:
    source = PACKAGE + "\nraise RuntimeError('the body fails')\n"
    with pytest.raises(RuntimeError, match="the body fails"):
        load(source, "failpkg")
    assert "failpkg" not in sys.modules


def test_outside_an_import_the_function_stays_where_it_is_bound(
    route: str, load: Callable[..., Any]
) -> None:
    # reload() runs the body again: no import by importlib watches it, and
    # the function it binds stays, serving what it serves.
    package = load()
    importlib.reload(package)
    assert package.__getattr__ is package.handed_out
    assert package.thing == 42
    with pytest.raises(AttributeError, match=r"^module 'lazypkg' has no attribute 'missing'$"):
        package.missing  # noqa: B018
    assert type(package.__spec__) is ModuleSpec


def test_a_module_made_by_hand_gets_a_function_and_keeps_its_spec(route: str) -> None:
    module = types.ModuleType("handmade")
    module.__spec__ = ModuleSpec("handmade", None)
    module.__spec__._initializing = True  # what importlib stores while it runs a body
    sys.modules["handmade"] = module
    try:
        pep726hook.lazy_attribute(module, "value", factory=lambda: "made")
        module.__getattr__ = pep726hook.declared_getattr("handmade")
        # Watched, as by an import: the store of False that ends one ends the watch.
        assert type(module.__spec__) is not ModuleSpec
        assert repr(module.__spec__).startswith("ModuleSpec(")
        module.__spec__._initializing = False
        assert type(module.__spec__) is ModuleSpec
        assert "__getattr__" not in vars(module)
        assert module.value == "made"
    finally:
        del sys.modules["handmade"]


@pytest.mark.parametrize("bad", [42, None, b"lazypkg"])
def test_anything_but_a_module_or_a_name_is_a_type_error(bad: object) -> None:
    with pytest.raises(TypeError, match=r"declared_getattr\(\) needs a module or its name"):
        pep726hook.declared_getattr(bad)  # type: ignore[arg-type]


def test_a_name_not_in_sys_modules_is_a_value_error() -> None:
    with pytest.raises(ValueError, match=r"sys\.modules has no module of that name"):
        pep726hook.declared_getattr("no.such.module.here")

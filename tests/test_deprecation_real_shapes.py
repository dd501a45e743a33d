"""Deprecation helpers of real libraries, reduced to the shapes pep726hook must serve.

Each test writes a tiny module that uses pep726hook the way a converted
library helper does (the conversions are in tests/real_libraries/patches/:
Twisted's ``deprecatedModuleAttribute``, cryptography's ``utils.deprecated``,
zope.deprecation's ``deprecated``) and checks what the library's own tests
check, under each engine.  ``nox -s deprecation_libraries`` runs the
libraries' real tests; these keep the shapes covered without the network.
"""

from __future__ import annotations

import importlib
import inspect
import sys
import warnings
from typing import Any, Callable

import pytest
from _deprecation_helpers import own_value
from _venv import WriteModule

import pep726hook


@pytest.fixture
def load(write_module: WriteModule) -> Callable[..., Any]:
    def make(name: str, source: str, package: bool = False) -> Any:
        write_module(name, source, package=package)
        return importlib.import_module(name)

    return make


def _next_line() -> int:
    """The line after the one that calls this."""
    return sys._getframe(1).f_lineno + 1


def _previous_line() -> int:
    """The line before the one that calls this."""
    return sys._getframe(1).f_lineno - 1


# Twisted deprecates a class from inside the class's own body, before the
# module binds its name (twisted.cred.credentials.UsernameHashedPassword).
# The converted helper then gives pep726hook a factory that raises
# AttributeError: the value the module binds afterwards is what reads return.
CLASS_BODY_DEPRECATION = """
import pep726hook

def _not_yet_bound():
    raise AttributeError("Hashed is not bound yet")

class Hashed:
    pep726hook.deprecate_attribute(
        __name__, "Hashed", "Hashed is deprecated", factory=_not_yet_bound
    )

def own_read():
    return Hashed
"""


def test_a_class_deprecated_in_its_own_body_reads_as_the_class_the_module_binds(
    route: str, load: Callable[..., Any]
) -> None:
    module = load("classbody", CLASS_BODY_DEPRECATION)
    bound = own_value(module, "Hashed")
    assert inspect.isclass(bound)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert module.own_read() is bound  # the module's own code: no warning
        assert not caught
        assert module.Hashed is bound
        line = _previous_line()
    assert [str(w.message) for w in caught] == ["Hashed is deprecated"]
    assert (caught[0].filename, caught[0].lineno) == (__file__, line)
    assert pep726hook.engine(module) == route


# Twisted routes every deprecation warning through a warning method that tests
# and applications replace (twisted.python.deprecate.setWarningMethod), and
# zope.deprecation through a switch (__show__.off(), Suppressor).  pep726hook
# hands the warning to such a function with the stacklevel a warnings.warn
# call made directly in it needs to point at the line that read the name.
WARN_FUNCTION_LIBRARY = """
import warnings
import pep726hook

shown = [True]
method = [warnings.warn]

def warn(message, category, stacklevel):
    if shown[0]:
        method[0](message, category, stacklevel=stacklevel)

Old = 1
pep726hook.deprecate_attribute(__name__, "Old", "Old is deprecated", warn=warn)
"""


def test_a_library_warn_function_calling_warnings_warn_directly_points_at_the_reader(
    route: str, load: Callable[..., Any]
) -> None:
    module = load("warnfunction", WARN_FUNCTION_LIBRARY)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert module.Old == 1
        line = _previous_line()
    assert [(w.filename, w.lineno) for w in caught] == [(__file__, line)]


def test_a_library_warn_function_can_swap_its_method_or_stay_silent(
    route: str, load: Callable[..., Any]
) -> None:
    module = load("warnfunction", WARN_FUNCTION_LIBRARY)
    recorded: list[tuple[str, type[Warning]]] = []
    module.method[0] = lambda message, category, stacklevel: recorded.append((message, category))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert module.Old == 1
        module.shown[0] = False
        assert module.Old == 1
    assert recorded == [("Old is deprecated", DeprecationWarning)]
    assert not caught


# Twisted deprecates a submodule its package has not imported
# (twisted.python's "url"): importing it the usual way warns once.
LAZY_SUBMODULE_PACKAGE = """
import pep726hook
pep726hook.deprecate_attribute(__name__, "old", "lazypkg.old is deprecated")
"""


def test_from_import_of_a_lazily_deprecated_submodule_warns_once_at_the_import_line(
    route: str, load: Callable[..., Any], write_module: WriteModule
) -> None:
    write_module("lazypkg.old", "VALUE = 3\n")
    package = load("lazypkg", LAZY_SUBMODULE_PACKAGE, package=True)
    assert "old" not in vars(package)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = _next_line()
        from lazypkg import old  # type: ignore[import-not-found]
    assert old.VALUE == 3
    assert [str(w.message) for w in caught] == ["lazypkg.old is deprecated"]
    assert (caught[0].filename, caught[0].lineno) == (__file__, line)


# cryptography's utils.deprecated(value, module_name, message, warning_class)
# without a name returns a marker that the caller stores on the module
# (cryptography's tests: mod.Y = deprecated(...)), after the same helper
# deprecated another name of the module, which opted it in.
MARKER_TARGET = """
X = 1
import pep726hook
pep726hook.deprecate_attribute(__name__, "X", "X is deprecated")
"""


def test_a_marker_stored_on_a_module_another_deprecation_opted_in_is_a_deprecation(
    route: str, load: Callable[..., Any]
) -> None:
    module = load("markertarget", MARKER_TARGET)
    module.Y = pep726hook.deprecated(2, "Y is deprecated", category=PendingDeprecationWarning)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert module.Y == 2
        assert "Y" in dir(module)
        del module.Y
    assert [(str(w.message), w.category) for w in caught] == [
        ("Y is deprecated", PendingDeprecationWarning),
        ("Y is deprecated", PendingDeprecationWarning),
    ]
    assert "Y" not in dir(module)
    with pytest.raises(AttributeError):
        del module.Y

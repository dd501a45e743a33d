"""What libraries with deprecation helpers of their own need from ``pep726hook.deprecated()``.

Twisted's ``deprecatedModuleAttribute`` (with its ``setWarningMethod()``),
cryptography's ``utils.deprecated`` and zope.deprecation (with its
``__show__.off()`` switch) each warn their own way: ``warn=`` hands the
warning to the library.  Also: ``deprecated()`` values stored through a
module, ``importlib.reload()`` and threads (interpreter shutdown, fork and
sub-interpreters: test_deprecation_shutdown.py).  Every test
runs under each engine, for a module opted in with ``enable()`` alone and
for one opted in while the process-wide hook is on as well.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.machinery
import inspect
import sys
import threading
import time
import types
import warnings
from typing import Any, Callable

import pytest
from _deprecation_helpers import own_value
from _venv import WriteModule, join_or_fail

import pep726hook
from pep726hook._deprecations import _entries

# A Twisted-like helper module: the warning goes through a replaceable
# method (twisted.python.deprecate.setWarningMethod), whose target is called
# as warnings.warn is.
TWISTED_LIKE = """
import warnings
import pep726hook

_warning_method = warnings.warn

def setWarningMethod(method):
    global _warning_method
    _warning_method = method

def _warn(message, category, stacklevel):
    _warning_method(message, category, stacklevel=stacklevel)

def deprecatedModuleAttribute(message, module_name, name):
    pep726hook.deprecate_attribute(module_name, name, message, warn=_warn)
"""

# A zope.deprecation-like helper: a global switch turns the warnings off.
ZOPE_LIKE = """
import warnings
import pep726hook

class _Show:
    on = True
    def __call__(self):
        return self.on
    def off(self):
        self.on = False
    def reset(self):
        self.on = True

__show__ = _Show()

def _warn(message, category, stacklevel):
    if __show__():
        warnings.warn(message, category, stacklevel)

def deprecated(value, message):
    return pep726hook.deprecated(value, message, warn=_warn)

class Suppressor:
    def __enter__(self):
        __show__.off()
    def __exit__(self, *exc_info):
        __show__.reset()
"""

LIBRARY = """
import pep726hook
import zope_like

class New:
    pass

Old = zope_like.deprecated(New, "Old is deprecated")
value = 3
pep726hook.enable(__name__)
"""


@pytest.fixture
def load(write_module: WriteModule) -> Callable[..., Any]:
    write_module("twisted_like", TWISTED_LIKE)
    write_module("zope_like", ZOPE_LIKE)

    def make(source: str = LIBRARY, name: str = "libmod") -> Any:
        write_module(name, source)
        return importlib.import_module(name)

    return make


def _line_of(frame: types.FrameType | None) -> int:
    assert frame is not None
    return frame.f_lineno


# -- warn=: the library's warning function ------------------------------------------------


@pytest.mark.usefixtures("route")
def test_a_twisted_like_warning_method_receives_every_warning(load: Callable[..., Any]) -> None:
    twisted_like = load(TWISTED_LIKE, name="twisted_like")
    module = load("value = 3\nother = 4\n", name="twmod")
    twisted_like.deprecatedModuleAttribute("twmod.value is deprecated", "twmod", "value")
    calls: list[tuple[str, type]] = []
    twisted_like.setWarningMethod(lambda m, c, stacklevel: calls.append((m, c)))
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert module.value == 3
            assert getattr(module, "value") == 3
            module.value = 5
    finally:
        twisted_like.setWarningMethod(warnings.warn)
    assert calls == [("twmod.value is deprecated", DeprecationWarning)] * 3
    assert caught == []
    assert module.value == 5


@pytest.mark.usefixtures("route")
def test_a_twisted_like_warning_method_names_the_users_line(load: Callable[..., Any]) -> None:
    twisted_like = load(TWISTED_LIKE, name="twisted_like")
    module = load("value = 3\n", name="twmod")
    twisted_like.deprecatedModuleAttribute("twmod.value is deprecated", "twmod", "value")
    here = inspect.currentframe()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert module.value == 3
        read_line = _line_of(here) - 1
        del module.value
        delete_line = _line_of(here) - 1
    assert [(w.filename, w.lineno) for w in caught] == [
        (__file__, read_line),
        (__file__, delete_line),
    ]


@pytest.mark.usefixtures("route")
def test_the_warning_names_the_users_line(load: Callable[..., Any]) -> None:
    module = load()
    here = inspect.currentframe()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert module.Old is module.New
        read_line = _line_of(here) - 1
        module.Old = 1
        store_line = _line_of(here) - 1
        module.Old = pep726hook.deprecated(2, "Old is deprecated again")
        del module.Old
        delete_line = _line_of(here) - 1
    assert [(str(w.message), w.filename, w.lineno) for w in caught] == [
        ("Old is deprecated", __file__, read_line),
        ("Old is deprecated", __file__, store_line),
        ("Old is deprecated again", __file__, delete_line),
    ]


@pytest.mark.usefixtures("route")
def test_a_zope_like_switch_turns_the_warnings_off(load: Callable[..., Any]) -> None:
    module = load()
    zope_like = sys.modules["zope_like"]
    zope_like.__show__.off()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert module.Old is module.New
    finally:
        zope_like.__show__.reset()
    assert caught == []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert module.Old is module.New
    assert [str(w.message) for w in caught] == ["Old is deprecated"]


@pytest.mark.usefixtures("route")
def test_a_zope_like_suppressor_silences_reads_stores_and_deletions(
    load: Callable[..., Any],
) -> None:
    module = load()
    zope_like = sys.modules["zope_like"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with zope_like.Suppressor():
            assert module.Old is module.New
            assert hasattr(module, "Old")
            module.Old = 1
    assert caught == []
    assert module.Old == 1 and "Old" not in (_entries.deprecations_of(module) or {})


class Refused(Exception):
    pass


def _refuse(message: str, category: type[Warning], stacklevel: int) -> None:
    raise Refused(message)


@pytest.mark.usefixtures("route")
def test_a_warning_function_that_raises_fails_the_access_and_changes_nothing(
    load: Callable[..., Any],
) -> None:
    module = load("value = 3\n", name="refmod")
    pep726hook.deprecate_attribute(module, "value", "refused", warn=_refuse)
    table = dict(_entries.deprecations_of(module) or {})
    namespace = dict(vars(module))
    for access in (
        lambda: module.value,
        lambda: getattr(module, "value"),
        lambda: setattr(module, "value", 4),
        lambda: delattr(module, "value"),
    ):
        with pytest.raises(Refused, match="refused"):
            access()
        assert _entries.deprecations_of(module) == table
        assert vars(module) == namespace


@pytest.mark.usefixtures("route")
def test_warnings_warn_itself_is_the_default(load: Callable[..., Any]) -> None:
    module = load("value = 3\n", name="defmod")
    pep726hook.deprecate_attribute(module, "value", "plain", warn=warnings.warn)
    here = inspect.currentframe()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert module.value == 3
        line = _line_of(here) - 1
    assert [(w.filename, w.lineno) for w in caught] == [(__file__, line)]
    assert (_entries.deprecations_of(module) or {})["value"].warn is None


@pytest.mark.usefixtures("route")
def test_a_warn_that_is_not_callable_is_refused_and_changes_nothing(
    load: Callable[..., Any],
) -> None:
    module = load("value = 3\n", name="badmod")
    with pytest.raises(TypeError, match="warn must be a callable"):
        pep726hook.deprecated(1, "m", warn="print")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="warn must be a callable"):
        pep726hook.deprecate_attribute(module, "value", "m", warn=3)  # type: ignore[arg-type]
    assert own_value(module, "value") == 3
    assert _entries.deprecations_of(module) is None


# -- deprecated() values stored through the module ----------------------------------------


@pytest.mark.usefixtures("route")
def test_a_marker_stored_through_an_opted_in_module_becomes_a_deprecation(
    load: Callable[..., Any],
) -> None:
    module = load()
    module.Later = pep726hook.deprecated(7, "Later is deprecated")
    setattr(module, "Other", pep726hook.deprecated(8, "Other is deprecated"))
    assert own_value(module, "Later") == 7 and own_value(module, "Other") == 8
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert module.Later == 7
        assert getattr(module, "Other") == 8
    assert [str(w.message) for w in caught] == ["Later is deprecated", "Other is deprecated"]


@pytest.mark.usefixtures("route")
def test_a_marker_stored_goes_through_the_modules_own_hook(load: Callable[..., Any]) -> None:
    module = load(
        "log = []\n"
        "def __setattr__(name, value):\n"
        "    log.append(name)\n"
        "    globals()[name] = value\n" + LIBRARY,
        name="hookmod",
    )
    module.Later = pep726hook.deprecated(7, "Later is deprecated")
    assert module.log == ["Later"]
    assert own_value(module, "Later") == 7
    with pytest.warns(DeprecationWarning, match="Later is deprecated"):
        assert module.Later == 7


@pytest.mark.usefixtures("route")
def test_a_marker_stored_under_a_dunder_name_is_refused_before_the_store(
    load: Callable[..., Any],
) -> None:
    module = load()
    with pytest.raises(ValueError, match="'__version__' cannot be deprecated"):
        module.__version__ = pep726hook.deprecated("1", "use importlib.metadata")
    assert "__version__" not in vars(module)


@pytest.mark.usefixtures("route")
def test_a_marker_assigned_by_the_body_after_enable_is_never_read_back(
    load: Callable[..., Any],
) -> None:
    module = load(LIBRARY + "After = pep726hook.deprecated(9, 'After is deprecated')\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert module.After == 9
        assert getattr(module, "After") == 9
    assert own_value(module, "After") == 9
    assert [str(w.message) for w in caught] == ["After is deprecated"] * 2


# -- importlib.reload() ---------------------------------------------------------------------


@pytest.mark.usefixtures("route")
def test_reload_keeps_a_deprecation_made_from_outside(load: Callable[..., Any]) -> None:
    module = load("value = 3\n", name="outmod")
    pep726hook.deprecate_attribute(module, "value", "outmod.value is deprecated")
    assert importlib.reload(module) is module
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert module.value == 3
    assert own_value(module, "value") == 3
    assert [str(w.message) for w in caught] == ["outmod.value is deprecated"]


@pytest.mark.usefixtures("route")
def test_reload_keeps_a_deprecation_made_by_the_body(load: Callable[..., Any]) -> None:
    source = (
        "import pep726hook\n"
        "value = 3\n"
        "pep726hook.deprecate_attribute(__name__, 'value', 'inmod.value is deprecated')\n"
    )
    module = load(source, name="inmod")
    assert importlib.reload(module) is module
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert module.value == 3
    assert own_value(module, "value") == 3
    assert [str(w.message) for w in caught] == ["inmod.value is deprecated"]


@pytest.mark.usefixtures("route")
def test_reload_keeps_markers_assigned_after_enable(load: Callable[..., Any]) -> None:
    source = LIBRARY + "After = pep726hook.deprecated(9, 'After is deprecated')\n"
    module = load(source, name="aftmod")
    assert importlib.reload(module) is module
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert module.After == 9
        assert module.Old is module.New
    assert own_value(module, "After") == 9 and own_value(module, "Old") is module.New
    assert [str(w.message) for w in caught] == ["After is deprecated", "Old is deprecated"]


@pytest.mark.usefixtures("route")
def test_reload_keeps_a_deprecation_with_a_factory_for_a_name_bound_later(
    load: Callable[..., Any],
) -> None:
    # Twisted's converted helper deprecates twisted.cred.credentials'
    # UsernameHashedPassword from inside that class's body, with a factory
    # that raises AttributeError until the module binds the name.
    source = (
        "import pep726hook\n"
        "def _missing():\n"
        "    raise AttributeError('Hashed is not bound yet')\n"
        "pep726hook.deprecate_attribute(__name__, 'Hashed', 'Hashed is deprecated',\n"
        "                               factory=_missing)\n"
        "class Hashed:\n"
        "    pass\n"
    )
    load(source, name="latemod")
    assert _reload_refused("latemod") is None
    module = sys.modules["latemod"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert module.Hashed is own_value(module, "Hashed")
        assert isinstance(module.Hashed, type)
    assert [str(w.message) for w in caught] == ["Hashed is deprecated"] * 2


@pytest.mark.usefixtures("route")
def test_reload_replaces_the_factory_and_message_of_a_lazy_deprecation(
    load: Callable[..., Any],
) -> None:
    # The first run's factory loaded the value; the second run's call names
    # a new message and factory, as a repeated deprecation does.
    source = (
        "import pep726hook\n"
        "import itertools\n"
        "_runs = globals().setdefault('_runs', itertools.count(1))\n"
        "_run = next(_runs)\n"
        "pep726hook.deprecate_attribute(__name__, 'made', f'made is deprecated ({_run})',\n"
        "                               factory=lambda run=_run: f'made by run {run}')\n"
    )
    module = load(source, name="refactmod")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert module.made == "made by run 1"
        assert _reload_refused("refactmod") is None
        # The value the first run's factory stored stays.
        assert module.made == "made by run 1"
        assert own_value(module, "made") == "made by run 1"
        del module.made
        assert _reload_refused("refactmod") is None
        assert module.made == "made by run 3"
    assert [str(w.message) for w in caught] == [
        "made is deprecated (1)",
        "made is deprecated (2)",
        "made is deprecated (2)",
        "made is deprecated (3)",
    ]


@pytest.mark.usefixtures("route")
def test_reload_deprecates_again_a_name_whose_deprecation_by_factory_ended(
    load: Callable[..., Any],
) -> None:
    source = (
        "import pep726hook\n"
        "pep726hook.deprecate_attribute(__name__, 'made', 'made is deprecated',\n"
        "                               factory=lambda: 'made')\n"
    )
    module = load(source, name="endfactmod")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module.made = "stored"
        assert _reload_refused("endfactmod") is None
        assert module.made == "stored"
    assert own_value(module, "made") == "stored"
    assert [str(w.message) for w in caught] == ["made is deprecated"] * 2


def _reload_refused(name: str) -> str | None:
    """Reload ``sys.modules[name]``; the ValueError's message if reload() raised one."""
    try:
        importlib.reload(sys.modules[name])
    except ValueError as error:
        return str(error)
    return None


@pytest.mark.usefixtures("route")
def test_the_spec_and_the_loader_are_left_as_they_were(load: Callable[..., Any]) -> None:
    module = load(LIBRARY + "After = pep726hook.deprecated(9, 'After is deprecated')\n")
    spec_class = type(module.__spec__)
    assert spec_class is importlib.machinery.ModuleSpec
    importlib.reload(module)
    assert type(module.__spec__) is spec_class
    assert "exec_module" not in vars(module.__spec__.loader)
    assert module.__loader__ is module.__spec__.loader


# -- bad input ------------------------------------------------------------------------------


@pytest.mark.usefixtures("route")
def test_a_submodule_can_be_deprecated_and_a_missing_one_is_an_attribute_error(
    write_module: WriteModule,
) -> None:
    write_module("subpkg", "", package=True)
    write_module("subpkg.part", "x = 1\n")
    package = importlib.import_module("subpkg")
    pep726hook.deprecate_attribute(package, "part", "subpkg.part is deprecated")
    with pytest.warns(DeprecationWarning, match="subpkg.part is deprecated"):
        assert package.part.x == 1
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        pep726hook.deprecate_attribute(package, "nope", "m")
    assert "nope" not in vars(package)


# -- threads ----------------------------------------------------------------------------------


THREADED_SECONDS = 1.0


def _run_for_a_while(*targets: Callable[[], bool]) -> None:
    """Run each target in a loop, in its own thread, until time is up; re-raise errors.

    A target returns False to stop early.  Bounded in time and iterations.
    """
    errors: list[BaseException] = []
    deadline = time.monotonic() + THREADED_SECONDS

    def loop(target: Callable[[], bool]) -> None:
        try:
            for _ in range(20_000):
                if time.monotonic() > deadline or not target():
                    return
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=loop, args=(t,)) for t in targets]
    for thread in threads:
        thread.start()
    join_or_fail(threads)
    if errors:
        raise errors[0]


@pytest.mark.usefixtures("route", "busy_switching")
def test_a_reader_sees_the_old_or_the_new_value_while_the_name_is_deprecated(
    load: Callable[..., Any],
) -> None:
    module = load("value = 'old'\n", name="racemod")
    seen: set[object] = set()

    def read() -> bool:
        seen.add(getattr(module, "value"))
        return True

    done = []

    def deprecate() -> bool:
        pep726hook.deprecate_attribute(module, "value", "value is deprecated")
        done.append(True)
        # Back into the namespace as a plain name, behind the engines' back
        # (as a body run again by reload() would), to be deprecated again.
        vars(module)["value"] = "old"
        return True

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _run_for_a_while(read, read, deprecate)
    assert done and seen == {"old"}


@pytest.mark.usefixtures("route", "busy_switching")
def test_a_reader_sees_the_old_or_the_new_value_while_a_deprecated_name_is_stored(
    load: Callable[..., Any],
) -> None:
    module = load(
        "def __setattr__(name, value):\n"
        "    for _ in range(50):\n"
        "        pass\n"
        "    globals()[name] = value\n"
        "def __delattr__(name):\n"
        "    raise RuntimeError('refused')\n"
        "import pep726hook\n"
        "pep726hook.enable(__name__)\n"
        "value = 0\n",
        name="storemod",
    )
    bad: list[object] = []
    counter = iter(range(1, 10**9))

    def read() -> bool:
        try:
            value = module.value
        except AttributeError as error:
            bad.append(str(error))
            return False
        if not isinstance(value, int):
            bad.append(repr(value))
            return False
        return True

    def store() -> bool:
        pep726hook.deprecate_attribute(module, "value", "value is deprecated")
        module.value = next(counter)
        return True

    def fail_to_delete() -> bool:
        with contextlib.suppress(RuntimeError):
            del module.value
        return True

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _run_for_a_while(read, read, store, fail_to_delete)
    assert bad == []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert isinstance(module.value, int)


@pytest.mark.usefixtures("route")
def test_a_failed_deletion_beside_a_store_of_a_deprecated_name_keeps_the_stored_value(
    load: Callable[..., Any],
) -> None:
    # The deletion starts first and fails after the store's hook has stored;
    # the store ends the deprecation after that.  Events order the two
    # threads; the waits' timeouts only bound a broken run.
    module = load(
        "import threading\n"
        "deleting = threading.Event()\n"
        "stored = threading.Event()\n"
        "deletion_failed = threading.Event()\n"
        "def __setattr__(name, value):\n"
        "    globals()[name] = value\n"
        "    stored.set()\n"
        "    deletion_failed.wait(30)\n"
        "def __delattr__(name):\n"
        "    deleting.set()\n"
        "    stored.wait(30)\n"
        "    raise RuntimeError('refused')\n"
        "import pep726hook\n"
        "pep726hook.enable(__name__)\n"
        "value = 'old'\n",
        name="faildelmod",
    )
    pep726hook.deprecate_attribute(module, "value", "value is deprecated")
    namespace = vars(module)

    def fail_to_delete() -> None:
        try:
            with contextlib.suppress(RuntimeError):
                del module.value
        finally:
            namespace["deletion_failed"].set()

    deleter = threading.Thread(target=fail_to_delete)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        deleter.start()
        try:
            assert namespace["deleting"].wait(30)
            module.value = "new"
        finally:
            namespace["stored"].set()
            join_or_fail([deleter])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert module.value == "new"
    assert caught == []
    assert own_value(module, "value") == "new"


@pytest.mark.usefixtures("route", "busy_switching")
def test_a_reader_sees_the_value_or_its_absence_while_a_deprecated_name_is_deleted(
    load: Callable[..., Any],
) -> None:
    module = load("value = 'old'\n", name="delmod")
    missing = object()
    bad: list[object] = []

    def read() -> bool:
        value = getattr(module, "value", missing)
        if value not in ("old", missing):
            bad.append(value)
            return False
        return True

    def delete_and_deprecate_again() -> bool:
        vars(module)["value"] = "old"
        pep726hook.deprecate_attribute(module, "value", "value is deprecated")
        del module.value
        return True

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _run_for_a_while(read, read, delete_and_deprecate_again)
    assert bad == []
    assert "value" not in vars(module)
    assert "value" not in (_entries.deprecations_of(module) or {})

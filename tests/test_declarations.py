"""Declared names: ``lazy_attribute()`` and ``removed_attribute()``.

A package declares in its body what a PEP 562 ``__getattr__`` would serve:
lazy submodules and values, removed names with the library's own message.
Every test runs under both engines (``route``: enable()'s engine, alone or
with the process-wide hook); what only the native engine does is marked so.
"""

from __future__ import annotations

import importlib
import sys
import threading
import traceback
import types
import warnings
from typing import Any, Callable

import pytest
from _venv import WriteModule

import pep726hook

NATIVE = "native" in pep726hook.available_engines()
native_only = pytest.mark.skipif(not NATIVE, reason="the native engine is unavailable here")

PACKAGE = """
import pep726hook

calls = []

def make_table():
    calls.append("table")
    return {"made": len(calls)}

pep726hook.lazy_attribute(__name__, "sub")
pep726hook.lazy_attribute(__name__, "table", factory=make_table)
pep726hook.removed_attribute(__name__, "float", "declpkg.float was removed; use float")
pep726hook.removed_attribute(
    __name__, "old", "declpkg.old was removed in 2.0",
    warning="declpkg.old goes away", category=FutureWarning,
)
__all__ = ["sub", "table", "plain"]
plain = 1

def own_float(x):
    return float(x)
"""


@pytest.fixture
def load(write_module: WriteModule) -> Callable[..., Any]:
    def make(source: str = PACKAGE, name: str = "declpkg") -> Any:
        write_module(name, source, package=True)
        write_module(f"{name}.sub", "VALUE = 'sub'\n")
        module = importlib.import_module(name)
        module.__name__  # noqa: B018  (the first read after the import: the native engine's move)
        return module

    return make


def test_a_lazy_submodule_loads_at_the_first_read_and_is_then_plain(
    route: str, load: Callable[..., Any]
) -> None:
    package = load()
    assert "declpkg.sub" not in sys.modules
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sub = package.sub
    assert sub is sys.modules["declpkg.sub"] and sub.VALUE == "sub"
    assert vars(package)["sub"] is sub
    assert package.sub is sub


def test_a_lazy_factory_is_called_once_and_its_value_stored(
    route: str, load: Callable[..., Any]
) -> None:
    package = load()
    assert package.calls == []
    assert hasattr(package, "table")
    assert package.table is vars(package)["table"] is getattr(package, "table")
    assert package.calls == ["table"]


@pytest.mark.parametrize("how", ["attribute", "getattr", "hasattr", "from", "star"])
def test_every_kind_of_read_loads_a_lazy_name(
    route: str, load: Callable[..., Any], how: str
) -> None:
    package = load()
    namespace: dict[str, Any] = {}
    if how == "attribute":
        package.sub  # noqa: B018
    elif how == "getattr":
        getattr(package, "sub")
    elif how == "hasattr":
        assert hasattr(package, "sub")
    elif how == "from":
        exec("from declpkg import sub", namespace)
    else:
        exec("from declpkg import *", namespace)
        assert namespace["table"] == {"made": 1}
    assert vars(package)["sub"] is sys.modules["declpkg.sub"]
    if namespace:
        assert namespace["sub"] is sys.modules["declpkg.sub"]


def test_import_of_the_submodule_binds_it_as_usual(route: str, load: Callable[..., Any]) -> None:
    package = load()
    import declpkg.sub  # type: ignore[import-not-found]

    assert vars(package)["sub"] is declpkg.sub
    assert package.sub is declpkg.sub


def test_an_exception_from_the_factory_propagates_and_the_next_read_retries(
    route: str, load: Callable[..., Any]
) -> None:
    source = """
import pep726hook
attempts = []

def make_flaky():
    attempts.append(1)
    if len(attempts) == 1:
        raise AttributeError("the library's own AttributeError")
    if len(attempts) == 2:
        raise ImportError("the library's own ImportError")
    return "value"

pep726hook.lazy_attribute(__name__, "flaky", factory=make_flaky)
"""
    package = load(source, "flakypkg")
    with pytest.raises(AttributeError, match="the library's own AttributeError"):
        package.flaky  # noqa: B018
    assert "flaky" not in vars(package)
    with pytest.raises(ImportError, match="the library's own ImportError"):
        package.flaky  # noqa: B018
    assert package.flaky == "value"
    assert package.attempts == [1, 1, 1]


def test_a_failing_submodule_import_propagates_and_is_retried(
    route: str, load: Callable[..., Any], write_module: WriteModule
) -> None:
    package = load()
    write_module("declpkg.broken", "raise ValueError('broken body')\n")
    pep726hook.lazy_attribute(package, "broken")
    with pytest.raises(ValueError, match="broken body"):
        package.broken  # noqa: B018
    write_module("declpkg.broken", "OK = True\n")
    assert package.broken.OK


def test_concurrent_first_reads_get_one_object(
    route: str, load: Callable[..., Any], busy_switching: None
) -> None:
    source = """
import pep726hook, time

def slow():
    time.sleep(0.01)
    return object()

pep726hook.lazy_attribute(__name__, "shared", factory=slow)
"""
    package = load(source, "threadpkg")
    got: list[object] = []
    start = threading.Barrier(4)

    def read() -> None:
        start.wait()
        got.append(package.shared)

    threads = [threading.Thread(target=read) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(got) == 4 and all(value is vars(package)["shared"] for value in got)


def test_a_removed_name_raises_the_librarys_message(route: str, load: Callable[..., Any]) -> None:
    package = load()
    for _ in range(3):
        with pytest.raises(AttributeError) as caught:
            package.float  # noqa: B018
        assert str(caught.value) == "declpkg.float was removed; use float"
    with pytest.raises(AttributeError, match=r"^declpkg.float was removed; use float$"):
        getattr(package, "float")
    assert not hasattr(package, "float")
    assert getattr(package, "float", "default") == "default"
    assert "__getattr__" not in vars(package)
    # The module's own code reads the builtin of that name.
    assert package.own_float("1.5") == 1.5


def test_a_removed_names_error_prints_the_librarys_message_and_no_guess(
    route: str, load: Callable[..., Any]
) -> None:
    # CPython fills in the name and object of an AttributeError whose name is
    # unset, and a traceback then appends "Did you mean: 'float16'?"-style
    # guesses to the library's message (3.10+); numpy's own errors set
    # name=None to keep its message as written, and so does this one.
    # float16 is a name a guess would offer for float.
    package = load(PACKAGE + "float16 = 16\n")
    with pytest.raises(AttributeError) as caught:
        package.float  # noqa: B018
    printed = "".join(traceback.format_exception_only(caught.type, caught.value))
    # What a plain module's PEP 562 __getattr__ raising numpy's way prints
    # here (PyPy fills in the name even then, and guesses).
    plain = types.ModuleType("declpkg")
    plain.float16 = 16
    keep_message = {"name": None} if sys.version_info >= (3, 10) else {}

    def __getattr__(name: str) -> Any:
        raise AttributeError(f"declpkg.{name} was removed; use {name}", **keep_message)

    plain.__getattr__ = __getattr__  # type: ignore[method-assign]
    with pytest.raises(AttributeError) as expected:
        plain.float  # noqa: B018
    assert printed == "".join(traceback.format_exception_only(expected.type, expected.value))
    if sys.implementation.name == "cpython":
        assert printed == "AttributeError: declpkg.float was removed; use float\n"
    if sys.version_info >= (3, 10):
        assert caught.value.name == expected.value.name


@pytest.mark.parametrize("message", ["declpkg.old was removed in 2.0", None])
def test_the_first_read_after_the_import_of_a_removed_name_warns_once_at_the_readers_line(
    route: str, write_module: WriteModule, message: str | None
) -> None:
    # The first read through the module is also the one that, under the
    # native engine, moves its names and makes it a plain module.
    write_module(
        "firstread",
        "import pep726hook\n"
        f"pep726hook.removed_attribute(__name__, 'old', {message!r}, warning='old goes away')\n",
    )
    module = importlib.import_module("firstread")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(AttributeError) as missed:
            module.old  # noqa: B018
        line = sys._getframe().f_lineno - 1
    assert [(w.filename, w.lineno, str(w.message)) for w in caught] == [
        (__file__, line, "old goes away")
    ]
    assert str(missed.value) == (message or "module 'firstread' has no attribute 'old'")
    assert pep726hook.engine(module) == route


def test_a_removed_name_without_a_message_warns_then_misses_as_on_a_plain_module(
    route: str, load: Callable[..., Any]
) -> None:
    # numpy's np.bytes: a FutureWarning, then the error of a plain miss
    # (CPython's message, its name filled in, a guess where one fits).
    package = load(
        PACKAGE
        + "byte = 1\n"
        + "pep726hook.removed_attribute(\n"
        + "    __name__, 'bytes', None, warning='bytes will be a scalar', category=FutureWarning\n"
        + ")\n"
    )
    plain = types.ModuleType("declpkg")
    plain.byte = 1
    with pytest.raises(AttributeError) as expected:
        plain.bytes  # noqa: B018
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(AttributeError) as missed:
            package.bytes  # noqa: B018
        line = sys._getframe().f_lineno - 1
        assert not hasattr(package, "bytes")
        assert getattr(package, "bytes", "default") == "default"
    assert [(w.category, str(w.message), w.lineno) for w in caught] == [
        (FutureWarning, "bytes will be a scalar", at) for at in (line, line + 2, line + 3)
    ]
    assert str(missed.value) == "module 'declpkg' has no attribute 'bytes'" == str(expected.value)
    printed = "".join(traceback.format_exception_only(missed.type, missed.value))
    assert printed == "".join(traceback.format_exception_only(expected.type, expected.value))
    if sys.version_info >= (3, 10):
        assert missed.value.name == expected.value.name
        if sys.implementation.name == "cpython":
            assert missed.value.name == "bytes"
    assert "bytes" not in dir(package)


def test_a_removed_name_without_a_message_reaches_the_modules_own_getattr(
    route: str, load: Callable[..., Any]
) -> None:
    package = load(
        PACKAGE
        + "def __getattr__(name):\n"
        + "    return 'own ' + name\n"
        + "pep726hook.removed_attribute(__name__, 'gone', None, warning='gone goes away')\n"
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert package.gone == "own gone"
    assert [str(w.message) for w in caught] == ["gone goes away"]


def test_a_removed_name_warns_first_at_the_readers_line(
    route: str, load: Callable[..., Any]
) -> None:
    package = load()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(AttributeError, match=r"^declpkg.old was removed in 2.0$"):
            package.old  # noqa: B018
        line = sys._getframe().f_lineno - 1
    assert [(w.category, str(w.message), w.lineno) for w in caught] == [
        (FutureWarning, "declpkg.old goes away", line)
    ]
    assert caught[0].filename == __file__
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(FutureWarning, match=r"declpkg\.old goes away"):
            package.old  # noqa: B018
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        namespace: dict[str, Any] = {}
        with pytest.raises(ImportError):
            exec("from declpkg import old", namespace)
    assert [str(w.message) for w in caught] == ["declpkg.old goes away"]


def test_a_store_ends_the_removal_and_a_deletion_then_leaves_a_plain_miss(
    route: str, load: Callable[..., Any]
) -> None:
    package = load()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        package.old = 5
        assert package.old == 5 and vars(package)["old"] == 5
        del package.old
        assert not hasattr(package, "old")
        with pytest.raises(AttributeError, match="has no attribute 'old'"):
            package.old  # noqa: B018


def test_the_modules_own_getattr_stays_the_fallback(route: str, load: Callable[..., Any]) -> None:
    source = """
import pep726hook

def __getattr__(name):
    if name == "computed":
        return 42
    raise AttributeError(f"own miss {name}")

pep726hook.removed_attribute(__name__, "gone", "gone is gone")
pep726hook.lazy_attribute(__name__, "late", factory=lambda: "late")
"""
    package = load(source, "ownpkg")
    with pytest.raises(AttributeError, match=r"^gone is gone$"):
        package.gone  # noqa: B018
    assert package.computed == 42
    assert package.late == "late"
    with pytest.raises(AttributeError, match="own miss nothing"):
        package.nothing  # noqa: B018
    assert package.__getattr__.__module__ == "ownpkg"


def test_dir_lists_lazy_names_and_not_removed_ones(route: str, load: Callable[..., Any]) -> None:
    package = load()
    listed = dir(package)
    assert {"sub", "table", "plain"} <= set(listed)
    assert "float" not in listed and "old" not in listed
    assert "declpkg.sub" not in sys.modules


def test_other_modules_are_untouched(route: str, load: Callable[..., Any]) -> None:
    load()
    other = types.ModuleType("other")
    assert not hasattr(other, "float") and not hasattr(other, "sub")
    with pytest.raises(AttributeError, match=r"^module 'other' has no attribute 'float'$"):
        other.float  # noqa: B018
    other.sub = 1
    assert other.sub == 1


@native_only
def test_the_module_stays_an_exact_moduletype_with_its_reads_specialised(
    route: str, load: Callable[..., Any]
) -> None:
    package = load()
    if pep726hook.engine(package) != "native":
        pytest.skip("the class engine gives the module a class")
    assert type(package) is types.ModuleType
    with pytest.raises(AttributeError):
        package.float  # noqa: B018
    assert "__getattr__" not in vars(package)
    if sys.version_info >= (3, 11) and sys.implementation.name == "cpython":
        import dis

        def read() -> Any:
            return package.plain

        for _ in range(50):
            read()
        names = [i.opname for i in dis.get_instructions(read, adaptive=True)]
        assert "LOAD_ATTR_MODULE" in names


def test_a_second_declaration_replaces_the_first(route: str, load: Callable[..., Any]) -> None:
    package = load()
    pep726hook.removed_attribute(package, "table", "table is gone now")
    with pytest.raises(AttributeError, match=r"^table is gone now$"):
        package.table  # noqa: B018
    pep726hook.lazy_attribute(package, "table", factory=lambda: "again")
    assert package.table == "again"
    pep726hook.deprecate_attribute(package, "float", "float is deprecated", factory=lambda: 1.0)
    with pytest.warns(DeprecationWarning, match="float is deprecated"):
        assert package.float == 1.0


def test_reload_runs_the_declarations_again(route: str, load: Callable[..., Any]) -> None:
    package = load()
    sub = package.sub
    table = package.table
    again = importlib.reload(package)
    assert again is package
    assert package.sub is sub and package.table is table
    with pytest.raises(AttributeError, match=r"^declpkg.float was removed; use float$"):
        package.float  # noqa: B018


def test_builtin_names_can_be_declared_and_deprecated_lazily(
    route: str, load: Callable[..., Any]
) -> None:
    package = load()
    for name in ("int", "object", "bool", "str", "complex"):
        pep726hook.removed_attribute(package, name, f"{name} was removed")
        with pytest.raises(AttributeError, match=f"^{name} was removed$"):
            getattr(package, name)
    made = object()
    pep726hook.deprecate_attribute(package, "bytes", "bytes is deprecated", factory=lambda: made)
    with pytest.warns(DeprecationWarning, match="bytes is deprecated"):
        assert package.bytes is made
    with pytest.warns(DeprecationWarning, match="bytes is deprecated"):
        assert package.bytes is made
    assert package.own_float("2") == 2.0


def test_a_module_made_with_moduletype_and_a_name_in_sys_modules(
    no_opted_in_module_alive: None,
) -> None:
    module = types.ModuleType("declmade")
    sys.modules["declmade"] = module
    pep726hook.lazy_attribute("declmade", "value", factory=lambda: 7)
    pep726hook.removed_attribute(module, "gone", "gone")
    assert module.value == 7
    assert not hasattr(module, "gone")
    assert pep726hook.engine(module) in pep726hook.available_engines()
    del sys.modules["declmade"]


BAD_CALLS: list[tuple[str, Callable[[Any], None], type[Exception], str]] = [
    ("non-str name", lambda m: pep726hook.lazy_attribute(m, 1, factory=list), TypeError, "str"),
    ("dunder", lambda m: pep726hook.lazy_attribute(m, "__x__", factory=list), ValueError, "dunder"),
    ("present", lambda m: pep726hook.lazy_attribute(m, "plain", factory=list), ValueError, "value"),
    (
        "present removed",
        lambda m: pep726hook.removed_attribute(m, "plain", "x"),
        ValueError,
        "value",
    ),
    ("factory", lambda m: pep726hook.lazy_attribute(m, "x", factory=3), TypeError, "callable"),
    ("no submodule", lambda m: pep726hook.lazy_attribute(m, "nosuch"), ValueError, "submodule"),
    ("empty message", lambda m: pep726hook.removed_attribute(m, "x", ""), ValueError, "empty"),
    ("message type", lambda m: pep726hook.removed_attribute(m, "x", 3), TypeError, "str"),
    (
        "no message, no warning",
        lambda m: pep726hook.removed_attribute(m, "x", None),
        TypeError,
        "needs a warning",
    ),
    (
        "warning",
        lambda m: pep726hook.removed_attribute(m, "x", "m", warning=""),
        ValueError,
        "empty",
    ),
    (
        "category",
        lambda m: pep726hook.removed_attribute(m, "x", "m", category=3),  # type: ignore[arg-type]
        TypeError,
        "Warning",
    ),
    (
        "category class",
        lambda m: pep726hook.removed_attribute(m, "x", "m", category=int),  # type: ignore[arg-type]
        TypeError,
        "Warning",
    ),
    ("unknown module", lambda m: pep726hook.lazy_attribute("no.such.module", "x"), ValueError, ""),
]


@pytest.mark.parametrize("case", BAD_CALLS, ids=[c[0] for c in BAD_CALLS])
def test_bad_input_is_refused_with_nothing_changed(
    route: str,
    load: Callable[..., Any],
    case: tuple[str, Callable[[Any], None], type[Exception], str],
) -> None:
    _, call, error, match = case
    package = load()
    before = dict(vars(package))
    kind = type(package)
    with pytest.raises(error, match=match):
        call(package)
    assert dict(vars(package)) == before and type(package) is kind
    assert not hasattr(package, "x")


def test_a_deletion_of_a_lazy_name_never_loaded_ends_the_declaration(
    route: str, load: Callable[..., Any]
) -> None:
    package = load()
    del package.table
    assert package.calls == []
    assert not hasattr(package, "table") and "table" not in dir(package)


def test_a_modules_own_dir_wins(route: str, load: Callable[..., Any]) -> None:
    source = """
import pep726hook

def __dir__():
    return ["only"]

pep726hook.lazy_attribute(__name__, "late", factory=lambda: 1)
"""
    assert dir(load(source, "dirpkg")) == ["only"]


@native_only
def test_another_modules_miss_error_that_escapes_is_never_reused(route: str) -> None:
    # A miss of a name some module declares: the descriptor's error, which
    # the module lookup clears, may be raised again by the next miss, but
    # never once it has been seen (object.__getattribute__ hands it out).
    declaring = types.ModuleType("declaring_for_misses")
    declaring.Old = 1
    sys.modules["declaring_for_misses"] = declaring
    try:
        pep726hook.deprecate_attribute(declaring, "Old", "Old is deprecated")
        if pep726hook.engine(declaring) != "native":
            pytest.skip("the class engine puts no descriptor into ModuleType's dict")
        other = types.ModuleType("other")
        assert not hasattr(other, "Old")
        with pytest.raises(AttributeError) as first:
            object.__getattribute__(other, "Old")
        assert not hasattr(other, "Old")
        with pytest.raises(AttributeError) as second:
            object.__getattribute__(other, "Old")
        assert first.value is not second.value
        # As the generic lookup makes it for a name nobody declares, but for
        # the object, which a kept error must not hold (it would keep the
        # last module that missed alive).
        assert first.value.args == ("'module' object has no attribute 'Old'",)
        assert first.value.__context__ is None
        if sys.version_info >= (3, 10):
            assert (first.value.name, first.value.obj) == ("Old", None)
        traceback = first.value.__traceback__
        assert not hasattr(other, "Old") and getattr(other, "Old", None) is None
        assert first.value.__traceback__ is traceback
    finally:
        del sys.modules["declaring_for_misses"]


def test_deprecating_a_lazy_name_keeps_its_submodule(route: str, load: Callable[..., Any]) -> None:
    package = load()
    pep726hook.deprecate_attribute(package, "sub", "declpkg.sub is deprecated")
    assert "declpkg.sub" not in sys.modules
    with pytest.warns(DeprecationWarning, match="declpkg.sub is deprecated"):
        sub = package.sub
    assert sub is sys.modules["declpkg.sub"]
    with pytest.raises(ValueError, match="already has a value"):
        pep726hook.lazy_attribute(package, "sub")

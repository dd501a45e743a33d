"""Deprecated module attributes: ``pep726hook.deprecated()`` and ``deprecate_attribute()``.

Every behaviour is checked under each engine, for a module that opted in with
``enable()`` alone and for one opted in while the process-wide hook is on.
"""

from __future__ import annotations

import importlib
import inspect
import subprocess
import sys
import textwrap
import threading
import types
import warnings
from pathlib import Path
from typing import Any, Callable

import pytest
from _deprecation_helpers import own_value
from _venv import (
    ENGINES,
    TIMEOUT,
    WriteModule,
    clean_env,
    collect_garbage,
    describe,
    join_or_fail,
    no_pypy_jit,
)

import pep726hook
from pep726hook._deprecations import _classes, _entries

MESSAGE = "depmod.Old is deprecated; use depmod.New"

LIBRARY = f"""
import pep726hook

class New:
    pass

Old = pep726hook.deprecated(New, {MESSAGE!r})
Gone = pep726hook.deprecated(42, "depmod.Gone is deprecated", category=FutureWarning)
plain = 1
pep726hook.enable(__name__)
"""

HOOKED_LIBRARY = (
    """
log = []

def __setattr__(name, value):
    log.append(("set", name, value))
    if value == "refused":
        raise ValueError("refused by the hook")
    globals()[name] = value

def __delattr__(name):
    log.append(("del", name))
    if name == "Gone":
        raise ValueError("refused by the hook")
    del globals()[name]
"""
    + LIBRARY
)


@pytest.fixture
def load(write_module: WriteModule) -> Callable[..., Any]:
    def make(source: str = LIBRARY, name: str = "depmod", package: bool = False) -> Any:
        write_module(name, source, package=package)
        return importlib.import_module(name)

    return make


def _line_after(frame: types.FrameType | None) -> int:
    assert frame is not None
    return frame.f_lineno


# -- reads -------------------------------------------------------------------------------


def test_reads_warn_at_the_callers_line_and_return_the_value(
    route: str, load: Callable[..., Any]
) -> None:
    module = load()
    here = inspect.currentframe()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert module.Old is module.New
        line_attribute = _line_after(here) - 1
        assert getattr(module, "Old") is module.New
        line_getattr = _line_after(here) - 1
        assert getattr(module, "Old", None) is module.New
        assert hasattr(module, "Old")
        assert module.Gone == 42
    assert [str(w.message) for w in caught] == [MESSAGE] * 4 + ["depmod.Gone is deprecated"]
    assert [w.category for w in caught] == [DeprecationWarning] * 4 + [FutureWarning]
    assert {w.filename for w in caught} == {__file__}
    assert [w.lineno for w in caught[:2]] == [line_attribute, line_getattr]


def test_the_value_stays_in_the_namespace_and_other_names_read_plainly(
    route: str, load: Callable[..., Any]
) -> None:
    module = load()
    assert own_value(module, "Old") is own_value(module, "New") and own_value(module, "Gone") == 42
    table = _entries.deprecations_of(module) or {}
    assert {name: (e.message, e.category) for name, e in table.items()} == {
        "Old": (MESSAGE, DeprecationWarning),
        "Gone": ("depmod.Gone is deprecated", FutureWarning),
    }
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert module.plain == 1
        with pytest.raises(AttributeError, match="module 'depmod' has no attribute 'missing'"):
            module.missing  # noqa: B018
        assert not hasattr(module, "missing")


def test_both_engines_give_a_deprecating_module_the_same_kind_of_class(
    route: str, load: Callable[..., Any]
) -> None:
    module = load()
    cls = type(module)
    assert cls is not types.ModuleType and isinstance(module, types.ModuleType)
    assert sys.modules["depmod"] is module
    assert "__getattr__" in vars(cls.__mro__[0]) or hasattr(cls, "__getattr__")
    assert isinstance(inspect.getattr_static(module, "Old"), _classes.DeprecatedName)
    if route == "native" and sys.version_info[:2] != (3, 11):
        from pep726hook import _native

        # No ModuleType-wide read wrapper for deprecations (3.11 has it for
        # every opted-in module: see test_native_deprecations.py).
        assert not _native.state()["getattro_wrapped"]


def test_class_engine_slows_the_reads_of_modules_with_deprecations_only(
    monkeypatch: pytest.MonkeyPatch, load: Callable[..., Any]
) -> None:
    monkeypatch.setenv("PEP726HOOK_ENGINE", "class")
    with_table = load()
    without = load("import pep726hook\nx = 1\npep726hook.enable(__name__)\n", name="nodep")
    # A type-level __getattr__ sends every read of the class through Python's slot.
    assert "__getattr__" not in vars(type(without))
    assert hasattr(type(with_table), "__getattr__")
    assert pep726hook.engine(with_table) == "class"


def test_each_call_site_warns_once_under_the_default_action(
    route: str, load: Callable[..., Any]
) -> None:
    module = load()
    with warnings.catch_warnings(record=True) as caught:
        warnings.resetwarnings()
        warnings.simplefilter("default")
        for _ in range(3):
            module.Old  # noqa: B018
        for _ in range(3):
            module.Old  # noqa: B018
    assert len(caught) == 2
    assert caught[0].lineno != caught[1].lineno


def test_from_import_of_a_module_warns_once_at_the_import_line(
    route: str, load: Callable[..., Any]
) -> None:
    module = load()
    here = inspect.currentframe()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        from depmod import Old  # type: ignore[import-not-found]

        line = _line_after(here) - 2
    assert Old is module.New
    assert [(w.filename, w.lineno, str(w.message)) for w in caught] == [(__file__, line, MESSAGE)]


def test_from_import_of_a_package_warns_once_at_the_import_line(
    route: str, load: Callable[..., Any]
) -> None:
    # importlib's _handle_fromlist asks hasattr(package, "Old") first: that
    # probe must neither warn nor be what the warning names.
    package = load(name="deppkg", package=True)
    here = inspect.currentframe()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        from deppkg import Old  # type: ignore[import-not-found]

        line = _line_after(here) - 2
    assert Old is package.New
    assert [(w.filename, w.lineno) for w in caught] == [(__file__, line)]


def test_a_submodule_import_under_a_deprecated_package_name_is_not_tried(
    route: str, load: Callable[..., Any]
) -> None:
    # hasattr() is True for a deprecated name, so `from package import Old`
    # never looks for a submodule deppkg.Old.
    load(name="deppkg", package=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from deppkg import Old  # noqa: F401  # type: ignore[import-not-found]
    assert "deppkg.Old" not in sys.modules


# -- the module's own __getattr__ (PEP 562) ---------------------------------------------

PEP562_LIBRARY = (
    """
def __getattr__(name):
    if name in ("lazy", "Old"):
        return f"served {name}"
    raise AttributeError(f"custom: no {name}")
"""
    + LIBRARY
)


def test_the_modules_own_getattr_serves_only_missing_names_and_its_errors_pass_through(
    route: str, load: Callable[..., Any]
) -> None:
    module = load(PEP562_LIBRARY)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert module.lazy == "served lazy"
        # In the namespace, as on a plain module: its own __getattr__ is not asked.
        assert module.Old is module.New
        with pytest.raises(AttributeError, match="custom: no missing"):
            module.missing  # noqa: B018
    assert [str(w.message) for w in caught] == [MESSAGE]
    assert caught[0].filename == __file__


def test_a_warning_from_the_modules_own_getattr_names_the_callers_line(
    route: str, load: Callable[..., Any]
) -> None:
    source = (
        "import warnings\n"
        "def __getattr__(name):\n"
        "    if name == 'lazy':\n"
        "        warnings.warn('lazy read', UserWarning, stacklevel=2)\n"
        "        return 1\n"
        "    raise AttributeError(name)\n" + LIBRARY
    )
    module = load(source)
    here = inspect.currentframe()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module.lazy  # noqa: B018
        line = _line_after(here) - 1
    assert [(w.filename, w.lineno) for w in caught] == [(__file__, line)]


# -- stores and deletions ------------------------------------------------------------------


def test_a_store_warns_ends_the_deprecation_and_stores(
    route: str, load: Callable[..., Any]
) -> None:
    module = load()
    here = inspect.currentframe()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module.Old = "new value"
        line = _line_after(here) - 1
        assert module.Old == "new value"
        setattr(module, "Gone", 7)
        assert module.Gone == 7
    assert [(str(w.message), w.filename) for w in caught] == [
        (MESSAGE, __file__),
        ("depmod.Gone is deprecated", __file__),
    ]
    assert caught[0].lineno == line
    assert _entries.deprecations_of(module) == {}
    assert own_value(module, "Old") == "new value"


def test_a_delete_warns_and_deletes_the_name(route: str, load: Callable[..., Any]) -> None:
    module = load()
    here = inspect.currentframe()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        del module.Old
        line = _line_after(here) - 1
        delattr(module, "Gone")
    assert [(w.filename, str(w.message)) for w in caught] == [
        (__file__, MESSAGE),
        (__file__, "depmod.Gone is deprecated"),
    ]
    assert caught[0].lineno == line
    assert not hasattr(module, "Old") and "Old" not in vars(module)
    assert _entries.deprecations_of(module) == {}
    with pytest.raises(AttributeError):
        del module.Old


def test_stores_and_deletions_go_through_the_modules_hooks(
    route: str, load: Callable[..., Any]
) -> None:
    module = load(HOOKED_LIBRARY)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module.Old = 1
        del module.Old
    assert module.log == [("set", "Old", 1), ("del", "Old")]
    assert len(caught) == 1  # the deletion is of an ordinary name by then
    assert not hasattr(module, "Old")


def test_a_failing_store_leaves_the_deprecation_in_place(
    route: str, load: Callable[..., Any]
) -> None:
    module = load(HOOKED_LIBRARY)
    table = dict(_entries.deprecations_of(module) or {})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(ValueError, match="refused by the hook"):
            module.Old = "refused"
        assert _entries.deprecations_of(module) == table
        assert own_value(module, "Old") is module.New
        assert module.Old is module.New
    assert len(caught) == 2  # the store, then the read


def test_a_failing_delete_leaves_the_deprecation_and_namespace_as_they_were(
    route: str, load: Callable[..., Any]
) -> None:
    module = load(HOOKED_LIBRARY)
    table = dict(_entries.deprecations_of(module) or {})
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        with pytest.raises(ValueError, match="refused by the hook"):
            del module.Gone
        assert _entries.deprecations_of(module) == table
        assert own_value(module, "Gone") == 42
        assert module.Gone == 42
    assert module.log == [("del", "Gone")]


# -- what lists names -----------------------------------------------------------------------


def test_dir_lists_deprecated_names_and_vars_and_star_import_follow_the_namespace(
    route: str, load: Callable[..., Any]
) -> None:
    module = load()
    assert module.plain == 1  # the first read through the module moves the names
    native = pep726hook.engine(module) == "native"
    assert "Old" in dir(module) and "Gone" in dir(module)
    # Under the native engine the names left the namespace for the module's
    # private builtins, and a star import without __all__ takes what the
    # namespace holds, as on a plain module.
    assert ("Old" in vars(module)) is not native
    namespace: dict[str, Any] = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exec("from depmod import *", namespace)
    assert namespace["plain"] == 1
    if native:
        assert "Old" not in namespace and caught == []
    else:
        assert namespace["Old"] is module.New
        assert sorted(str(w.message) for w in caught) == sorted(
            [MESSAGE, "depmod.Gone is deprecated"]
        )


def test_star_import_of_a_deprecated_name_in_all_warns(
    route: str, load: Callable[..., Any]
) -> None:
    module = load(LIBRARY + "__all__ = ['Old', 'plain']\n")
    namespace: dict[str, Any] = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exec("from depmod import *", namespace)
    assert namespace["Old"] is module.New
    assert [str(w.message) for w in caught] == [MESSAGE]


# -- when enable() runs ------------------------------------------------------------------


def test_a_marker_assigned_after_enable_is_converted_by_the_first_read_through_the_module(
    route: str, load: Callable[..., Any]
) -> None:
    source = (
        "import pep726hook\n"
        "pep726hook.enable(__name__)\n"
        "Old = pep726hook.deprecated(1, 'old')\n"
        "seen_in_body = repr(Old)\n"
    )
    module = load(source)
    # Documented: the body's own read before any conversion point sees the marker.
    assert "not in effect yet" in own_value(module, "seen_in_body")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert module.Old == 1
        assert own_value(module, "Old") == 1
        assert module.Old == 1
    assert [str(w.message) for w in caught] == ["old", "old"]
    assert "pending" not in type(module).__qualname__


def test_a_marker_stored_through_an_enabled_module_becomes_a_deprecation(
    route: str, load: Callable[..., Any]
) -> None:
    module = load(LIBRARY)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        setattr(module, "Later", pep726hook.deprecated(5, "later"))
        assert own_value(module, "Later") == 5
        assert module.Later == 5
    assert [str(w.message) for w in caught] == ["later"]


@pytest.mark.parametrize("engine_name", ENGINES)
def test_enable_without_deprecations_never_loads_the_deprecation_module(engine_name: str) -> None:
    code = """
        import sys, types
        module = types.ModuleType("lib")
        sys.modules["lib"] = module
        import pep726hook
        pep726hook.enable("lib")
        print(pep726hook.engine(module), "pep726hook._deprecations" in sys.modules)
    """
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env={**clean_env(), "PEP726HOOK_ENGINE": engine_name},
        timeout=TIMEOUT,
        check=False,
    )
    assert result.returncode == 0, describe(result)
    assert result.stdout == f"{engine_name} False\n"


# -- deprecate_attribute() -----------------------------------------------------------------


def test_deprecate_attribute_moves_an_existing_name(route: str, load: Callable[..., Any]) -> None:
    module = load("value = 3\nother = 4\n", name="twisted_like")
    pep726hook.deprecate_attribute(module, "value", "value is deprecated")
    assert pep726hook.engine(module) == route
    assert own_value(module, "value") == 3
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert module.value == 3
        pep726hook.deprecate_attribute("twisted_like", "value", "new text", category=UserWarning)
        assert module.value == 3
        assert module.other == 4
    assert [(str(w.message), w.category) for w in caught] == [
        ("value is deprecated", DeprecationWarning),
        ("new text", UserWarning),
    ]


def test_deprecate_attribute_refuses_a_missing_name_and_changes_nothing(
    route: str, load: Callable[..., Any]
) -> None:
    module = load("value = 3\n", name="twisted_like")
    with pytest.raises(AttributeError, match="'twisted_like' has no attribute 'nope'"):
        pep726hook.deprecate_attribute(module, "nope", "gone")
    with pytest.raises(ValueError, match="'__doc__' cannot be deprecated"):
        pep726hook.deprecate_attribute(module, "__doc__", "gone")
    with pytest.raises(TypeError, match="name must be a str, not int"):
        pep726hook.deprecate_attribute(module, 3, "gone")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="needs a module or its name, not int"):
        pep726hook.deprecate_attribute(3, "value", "gone")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"sys\.modules has no module of that name"):
        pep726hook.deprecate_attribute("no_such_module_here", "value", "gone")
    with pytest.raises(ValueError, match="message must not be empty"):
        pep726hook.deprecate_attribute(module, "value", "")
    assert own_value(module, "value") == 3
    assert _entries.deprecations_of(module) is None
    assert not pep726hook.is_upgraded(module) or pep726hook.is_installed()


def test_deprecate_attribute_puts_the_value_back_when_opting_in_fails(
    route: str, monkeypatch: pytest.MonkeyPatch, load: Callable[..., Any]
) -> None:
    module = load("value = 3\n", name="twisted_like")

    def failing(_module: object, _fast_getattr: object = None) -> None:
        raise RuntimeError("opting in failed")

    monkeypatch.setattr("pep726hook._deprecations._deprecating.opt_in", failing)
    with pytest.raises(RuntimeError, match="opting in failed"):
        pep726hook.deprecate_attribute(module, "value", "gone")
    assert own_value(module, "value") == 3


# -- bad arguments ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("arguments", "error", "match"),
    [
        ((1, 2), TypeError, "message must be a str, not int"),
        ((1, ""), ValueError, "message must not be empty"),
        ((1, "m", int), TypeError, "category must be a Warning subclass, not <class 'int'>"),
        ((1, "m", UserWarning("x")), TypeError, "category must be a Warning subclass"),
    ],
)
def test_deprecated_refuses_bad_arguments(arguments: Any, error: type, match: str) -> None:
    value, message, *category = arguments
    kwargs = {"category": category[0]} if category else {}
    with pytest.raises(error, match=match):
        pep726hook.deprecated(value, message, **kwargs)


def test_deprecated_refuses_a_marker_as_value() -> None:
    marker = pep726hook.deprecated(1, "m")
    with pytest.raises(ValueError, match="already a deprecated"):
        pep726hook.deprecated(marker, "m")


def test_enable_refuses_a_marker_under_a_dunder_name_before_opting_in(
    route: str, write_module: WriteModule
) -> None:
    source = (
        "import pep726hook, sys\n"
        "__all__ = pep726hook.deprecated([], 'm')\n"
        "try:\n"
        "    pep726hook.enable(__name__)\n"
        "except ValueError as error:\n"
        "    refused = str(error)\n"
        "    from pep726hook._enable import is_opted_in\n"
        "    opted_in = is_opted_in(sys.modules[__name__])\n"
    )
    write_module("dunder", source)
    module: Any = importlib.import_module("dunder")
    assert "'__all__' cannot be deprecated" in module.refused
    assert module.opted_in is False
    assert type(module.__all__) is pep726hook.DeprecatedValue


# -- -W error ------------------------------------------------------------------------------

W_ERROR_CHILD = """
import sys
import depmod
from depmod import plain
failures = []
def expect_error(what, action):
    try:
        action()
    except DeprecationWarning as error:
        failures.append(f"{what}: {error}")
    else:
        failures.append(f"{what}: no error")
expect_error("read", lambda: depmod.Old)
expect_error("getattr", lambda: getattr(depmod, "Old"))
expect_error("hasattr", lambda: hasattr(depmod, "Old"))
def from_import():
    from depmod import Old
expect_error("from-import", from_import)
expect_error("store", lambda: setattr(depmod, "Old", 1))
expect_error("delete", lambda: delattr(depmod, "Old"))
assert depmod.plain == 1 and depmod.New
depmod.plain = 2
del depmod.plain
print("\\n".join(failures))
"""


@pytest.mark.parametrize("engine_name", ENGINES)
@pytest.mark.parametrize("installed", [False, True])
def test_w_error_turns_each_deprecated_access_into_an_exception_and_nothing_else(
    engine_name: str, installed: bool, tmp_path: Path
) -> None:
    (tmp_path / "depmod.py").write_text(textwrap.dedent(LIBRARY), encoding="utf-8")
    env = clean_env()
    env["PEP726HOOK_ENGINE"] = engine_name
    env["PYTHONPATH"] = str(tmp_path)
    if installed:
        env["PEP726HOOK"] = "1"
    result = subprocess.run(
        [sys.executable, "-W", "error::DeprecationWarning", "-c", W_ERROR_CHILD],
        capture_output=True,
        text=True,
        env=env,
        timeout=TIMEOUT,
        check=False,
    )
    assert result.returncode == 0, describe(result)
    what = ["read", "getattr", "hasattr", "from-import", "store", "delete"]
    # A store ends the deprecation only once it warned: under -W error the
    # warning is raised first, so every access still meets the deprecated name.
    assert result.stdout.splitlines() == [f"{w}: {MESSAGE}" for w in what]


# -- lifetime and threads -------------------------------------------------------------------


def test_a_dead_modules_table_is_forgotten(
    route: str, mortal_modules: None, load: Callable[..., Any]
) -> None:
    module = load()
    key = id(module)
    assert key in _entries._tables
    del module
    sys.modules.pop("depmod")
    collect_garbage()
    assert key not in _entries._tables


def test_threads_reading_and_storing_deprecated_names(
    route: str, busy_switching: None, load: Callable[..., Any]
) -> None:
    module = load()
    errors: list[BaseException] = []
    names = [f"Name{i}" for i in range(50)]
    for name in names:
        module.__dict__[name] = name
        pep726hook.deprecate_attribute(module, name, f"{name} is deprecated")

    def reader() -> None:
        try:
            for _ in range(20):
                for name in names:
                    value = getattr(module, name)
                    assert value in (name, "stored")
        except BaseException as error:
            errors.append(error)

    def writer() -> None:
        try:
            for name in names:
                setattr(module, name, "stored")
        except BaseException as error:
            errors.append(error)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        threads = [threading.Thread(target=reader) for _ in range(3)]
        threads.append(threading.Thread(target=writer))
        for thread in threads:
            thread.start()
        join_or_fail(threads)
    assert errors == []
    assert all(getattr(module, name) == "stored" for name in names)
    assert set(_entries.deprecations_of(module) or {}) == {"Old", "Gone"}


# -- the module's class, reload, pickle ----------------------------------------------------


@pytest.mark.usefixtures("route")
def test_a_class_assigned_later_keeps_the_deprecations(load: Callable[..., Any]) -> None:
    # Under the native engine Own is created after the read slot was wrapped:
    # CPython's slot fix-up gives it ModuleType's original read slot, which
    # the class store must replace for the table to stay in reach.
    module = load(
        LIBRARY
        + "import sys, types\n"
        + "class Own(types.ModuleType):\n"
        + "    pass\n"
        + "sys.modules[__name__].__class__ = Own\n"
    )
    assert issubclass(type(module), module.Own)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        read_back = getattr(module, "Old", None) is module.New
        module.Gone = 1
    messages = [str(w.message) for w in caught]
    # Asserted with the module gone, so that a failure's traceback never
    # keeps an opted-in module (and its engine) alive for later tests.
    del module
    sys.modules.pop("depmod")
    assert read_back
    assert messages == [MESSAGE, "depmod.Gone is deprecated"]


def test_reload_deprecates_the_names_again(route: str, load: Callable[..., Any]) -> None:
    module = load()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module.Old = "stored"  # ends the deprecation
        assert importlib.reload(module) is module
        assert own_value(module, "Old") is own_value(module, "New")
        assert module.Old is module.New
    assert [str(w.message) for w in caught] == [MESSAGE, MESSAGE]


def test_the_class_of_a_module_with_deprecations_pickles_by_reference(
    route: str, load: Callable[..., Any]
) -> None:
    import pickle

    module = load(LIBRARY + "import sys, types\nclass Own(types.ModuleType): pass\n")
    classes = [type(module)]
    module.__class__ = module.Own
    classes.append(type(module))
    for cls in classes:
        assert pickle.loads(pickle.dumps(cls)) is cls


def test_the_deprecating_classes_say_what_they_are_and_where_they_live(
    route: str, load: Callable[..., Any]
) -> None:
    # While the body runs, the native engine gives the pending-markers class
    # (its names move once the import has ended), the class engine the
    # deprecating class itself; both come from the deprecations package and
    # pickle by reference.
    import pickle

    module = load(LIBRARY + "import sys\nclass_in_body = type(sys.modules[__name__])\n")
    cls = module.class_in_body
    home = "pep726hook._deprecations._classes"
    expected = "PendingMarkersModule" if route == "native" else "DeprecatingModule"
    assert next(c.__qualname__ for c in cls.__mro__ if c.__module__ == home) == expected
    assert repr(getattr(sys.modules[home], expected)) == f"<class '{home}.{expected}'>"
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        assert pickle.loads(pickle.dumps(cls, protocol)) is cls


def test_moduletype_setattr_called_directly_skips_the_deprecating_class_under_both_engines(
    route: str, load: Callable[..., Any]
) -> None:
    # ModuleType.__setattr__ skips the class's own __setattr__ (as it skips
    # any subclass's): the data descriptor stores the value, the deprecation
    # stays and nothing warns.  Same under both engines.
    module = load()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        types.ModuleType.__setattr__(module, "Old", "direct")
    assert caught == []
    assert own_value(module, "Old") == "direct"
    assert "Old" in (_entries.deprecations_of(module) or {})


# -- the module's own code sees the name ------------------------------------------------

OWN_CODE_LIBRARY = """
from __future__ import annotations

import typing
import pep726hook

class New:
    pass

Old = New
plain = 1
pep726hook.deprecate_attribute(__name__, "Old", "Old is deprecated")
read_in_body = Old

def function():
    return Old

def outer():
    def closure():
        return Old
    return closure()

class InBody:
    attribute = Old

def annotated(x: Old) -> Old:
    return x

hints = typing.get_type_hints(annotated)
"""


def test_the_modules_own_code_reads_a_deprecated_name_without_warning(
    route: str, load: Callable[..., Any]
) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module = load(OWN_CODE_LIBRARY)
        assert module.__dict__["read_in_body"] is module.__dict__["New"]
        assert module.function() is module.New
        assert module.outer() is module.New
        assert module.InBody.attribute is module.New
        assert module.hints == {"x": module.New, "return": module.New}
        assert typing_hints(module) == {"x": module.New, "return": module.New}
    assert caught == []


def typing_hints(module: Any) -> Any:
    import typing

    return typing.get_type_hints(module.annotated)


def test_each_read_through_the_module_warns_once_and_other_reads_never(
    route: str, load: Callable[..., Any]
) -> None:
    module = load(OWN_CODE_LIBRARY)
    here = inspect.currentframe()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first = _line_after(here) + 1
        module.Old  # noqa: B018
        getattr(module, "Old")
        hasattr(module, "Old")
        from depmod import Old  # type: ignore[import-not-found]  # noqa: F401

        module.plain  # noqa: B018
        getattr(module, "plain")
        module.function  # noqa: B018
    assert [(w.filename, w.lineno) for w in caught] == [(__file__, first + i) for i in range(4)]


@pytest.mark.skipif(sys.version_info < (3, 11), reason="the specialising interpreter is 3.11+")
def test_a_warm_loop_never_reads_the_deprecated_name_without_warning(
    route: str, load: Callable[..., Any]
) -> None:
    import dis

    module = load(OWN_CODE_LIBRARY)
    # A code object of its own for each run: one compiled with this test
    # would keep what an earlier engine's run specialised it to.
    namespace: dict[str, Any] = {"module": module}
    source = "def reads():\n    return module.plain, module.Old\n"
    exec(compile(source, f"<warm loop under {route}>", "exec"), namespace)
    reads = namespace["reads"]

    counts = []
    # PyPy's JIT would compile a trace of the loop that keeps the module alive.
    with no_pypy_jit():
        for _ in range(1000):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                reads()
            counts.append(len(caught))
    assert counts == [1] * 1000
    if sys.implementation.name != "cpython":
        return  # PyPy's dis has no adaptive (specialised) instructions to show
    # Under the native engine the module is a plain module once its import
    # has ended: the read of its other name is specialised, the deprecated
    # one (not in its namespace) never is.  The class engine's deprecating
    # class keeps both unspecialised.
    specialised = [
        i.opname
        for i in dis.get_instructions(reads, adaptive=True)
        if i.opname.startswith("LOAD_ATTR_MODULE")
    ]
    native = pep726hook.engine(module) == "native"
    assert specialised == (["LOAD_ATTR_MODULE"] if native else [])
    assert (type(module) is types.ModuleType) is native


# -- lazy deprecations: a submodule not imported yet, a factory ----------------------------


@pytest.fixture
def lazy_package(write_module: WriteModule) -> Callable[[], Any]:
    def make() -> Any:
        write_module("lazypkg", "import pep726hook\n", package=True)
        write_module("lazypkg.sub", "import builtins\nbuiltins.lazypkg_sub_ran = True\nx = 1\n")
        return importlib.import_module("lazypkg")

    return make


def _forget_submodule() -> None:
    import builtins

    sys.modules.pop("lazypkg.sub", None)
    vars(builtins).pop("lazypkg_sub_ran", None)


def test_a_submodule_not_imported_yet_is_found_but_not_run(
    route: str, lazy_package: Callable[[], Any]
) -> None:
    package = lazy_package()
    try:
        pep726hook.deprecate_attribute(package, "sub", "lazypkg.sub is deprecated")
        assert "lazypkg.sub" not in sys.modules and "sub" not in vars(package)
        here = inspect.currentframe()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert package.sub.x == 1
            line = _line_after(here) - 1
            assert package.sub is sys.modules["lazypkg.sub"]
        assert [(w.filename, w.lineno, str(w.message)) for w in caught] == [
            (__file__, line, "lazypkg.sub is deprecated"),
            (__file__, line + 2, "lazypkg.sub is deprecated"),
        ]
        assert "sub" in (_entries.deprecations_of(package) or {})
    finally:
        _forget_submodule()


def test_import_of_a_lazily_deprecated_submodule_binds_it_without_warning(
    route: str, lazy_package: Callable[[], Any]
) -> None:
    package = lazy_package()
    try:
        pep726hook.deprecate_attribute(package, "sub", "lazypkg.sub is deprecated")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            import lazypkg.sub  # type: ignore[import-not-found]  # noqa: F401

            assert own_value(package, "sub") is sys.modules["lazypkg.sub"]
        assert caught == []
        assert "sub" in (_entries.deprecations_of(package) or {})
        here = inspect.currentframe()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            from lazypkg import sub  # type: ignore[import-not-found]

            line = _line_after(here) - 2
            assert sub.x == 1
        assert [(w.filename, w.lineno) for w in caught] == [(__file__, line)]
    finally:
        _forget_submodule()


def test_from_package_import_of_a_lazy_submodule_warns_once(
    route: str, lazy_package: Callable[[], Any]
) -> None:
    lazy_package()
    try:
        pep726hook.deprecate_attribute("lazypkg", "sub", "lazypkg.sub is deprecated")
        here = inspect.currentframe()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            from lazypkg import sub

            line = _line_after(here) - 2
        assert sub.x == 1
        assert [(w.filename, w.lineno) for w in caught] == [(__file__, line)]
    finally:
        _forget_submodule()


def test_a_factory_runs_once_at_the_first_read_and_a_failing_one_is_tried_again(
    route: str, load: Callable[..., Any]
) -> None:
    module = load("x = 1\n", name="factmod")
    calls: list[int] = []

    def factory() -> str:
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("not yet")
        return "made"

    pep726hook.deprecate_attribute(module, "made", "made is deprecated", factory=factory)
    assert calls == [] and "made" not in vars(module)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(RuntimeError, match="not yet"):
            module.made  # noqa: B018
        assert "made" not in vars(module)
        assert module.made == "made"
        assert module.made == "made"
    assert len(calls) == 2
    assert [str(w.message) for w in caught] == ["made is deprecated"] * 2
    assert own_value(module, "made") == "made"


def test_lazy_deprecations_refuse_bad_input_and_change_nothing(
    route: str, load: Callable[..., Any]
) -> None:
    module = load("x = 1\n", name="badlazy")
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        pep726hook.deprecate_attribute(module, "nope", "m")
    with pytest.raises(TypeError, match="factory must be callable"):
        pep726hook.deprecate_attribute(module, "nope", "m", factory=3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="a factory is only for a name without one"):
        pep726hook.deprecate_attribute(module, "x", "m", factory=lambda: 2)
    assert _entries.deprecations_of(module) is None
    assert own_value(module, "x") == 1


@pytest.mark.parametrize("engine", pep726hook.available_engines())
def test_the_process_wide_hook_alone_leaves_a_modules_markers_as_they_are(
    engine: str,
    monkeypatch: pytest.MonkeyPatch,
    load: Callable[..., Any],
    no_opted_in_module_alive: None,
) -> None:
    # Only enable() (or deprecate_attribute()) opts a module with markers in,
    # under every engine: the class engine's finder sees each import end,
    # the native engine does not, and neither acts on markers there.
    monkeypatch.setenv("PEP726HOOK_ENGINE", engine)
    pep726hook.deprecated(0, "loads the deprecation module")
    with pep726hook.install(engine):
        module = load("import pep726hook\nY = pep726hook.deprecated(5, 'Y is deprecated')\n")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                marker = module.Y
            assert type(marker) is pep726hook.DeprecatedValue
            with pytest.raises(TypeError, match=r"pep726hook\.enable\(__name__\)"):
                marker()
        finally:
            del module, marker
            sys.modules.pop("depmod", None)
            collect_garbage()


def test_a_marker_stored_through_an_enabled_module_without_deprecations_becomes_one(
    route: str, load: Callable[..., Any]
) -> None:
    # Under the native engine the module is a plain ModuleType until then:
    # the patched store slot sees the marker's type.
    module = load("import pep726hook\nx = 1\npep726hook.enable(__name__)\n", name="nodeps")
    with pytest.raises(ValueError, match="'__version__' cannot be deprecated"):
        module.__version__ = pep726hook.deprecated("1", "use importlib.metadata")
    assert "__version__" not in vars(module)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        setattr(module, "Y", pep726hook.deprecated(5, "Y is deprecated"))
        assert own_value(module, "Y") == 5
        assert module.Y == 5
    assert [str(w.message) for w in caught] == ["Y is deprecated"]


def test_reload_keeps_lazy_deprecations(route: str, lazy_package: Callable[[], Any]) -> None:
    package = lazy_package()
    try:
        pep726hook.deprecate_attribute(package, "sub", "lazypkg.sub is deprecated")
        pep726hook.deprecate_attribute(package, "made", "made is deprecated", factory=lambda: 7)
        assert importlib.reload(package) is package
        assert "lazypkg.sub" not in sys.modules
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert package.made == 7
            assert package.sub.x == 1
        assert [str(w.message) for w in caught] == [
            "made is deprecated",
            "lazypkg.sub is deprecated",
        ]
    finally:
        _forget_submodule()


def test_a_factorys_value_is_not_stored_when_the_warning_raises(
    route: str, load: Callable[..., Any]
) -> None:
    module = load("x = 1\n", name="factwarn")
    pep726hook.deprecate_attribute(module, "made", "made is deprecated", factory=lambda: 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(DeprecationWarning, match="made is deprecated"):
            module.made  # noqa: B018
    assert "made" not in vars(module)
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        assert module.made == 3
    assert own_value(module, "made") == 3


class RefusingMeta(type):
    """A metaclass that refuses to build any subclass of its classes (pep726hook's included)."""

    def __new__(mcs, name: str, bases: tuple[type, ...], namespace: dict[str, Any]) -> Any:
        if any(isinstance(base, RefusingMeta) for base in bases):
            raise RuntimeError("no subclasses")
        return super().__new__(mcs, name, bases, namespace)


class RefusingModule(types.ModuleType, metaclass=RefusingMeta):
    pass


def test_a_deprecating_class_that_cannot_be_made_leaves_the_module_as_it_was(
    route: str,
) -> None:
    module = RefusingModule("refusing")
    module.Old = 1
    sys.modules["refusing"] = module
    try:
        with pytest.raises(RuntimeError, match="no subclasses"):
            pep726hook.deprecate_attribute(module, "Old", "Old is deprecated")
        assert type(module) is RefusingModule
        assert "Old" not in (_entries.deprecations_of(module) or {})
        assert own_value(module, "Old") == 1
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert module.Old == 1
    finally:
        sys.modules.pop("refusing", None)
        del module
        collect_garbage()

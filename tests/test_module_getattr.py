"""Modules with a PEP 562 ``__getattr__`` opted in with ``enable()``, under every engine.

``enable()`` on such a module must keep PEP 562 exactly: the function is
called for, and only for, names missing from the namespace, with the name;
its exceptions propagate unchanged; stores and deletions of ``__getattr__``
take effect; everything else (the module's own hooks, ``deprecated()``
names, its own class, ``reload()``, pickling, ``inspect``, ``pydoc``,
``mock.patch``, threads) works as on a plain module.  Each case is compared
with the same source run in a module that did not opt in.

The native engine on CPython 3.11-3.14 holds the function outside the
namespace (so that reads of the module's names are specialised); the one
visible difference, ``"__getattr__" in vars(module)``, is checked here for
every engine and version, the rest of that design in
``tests/test_native_module_getattr.py``.
"""

from __future__ import annotations

import importlib
import inspect
import pickle
import pydoc
import sys
import threading
import types
from functools import partial
from typing import Any, Callable, Iterator
from unittest import mock

import pytest
from _venv import WriteModule, join_or_fail

import pep726hook
from pep726hook import _enable

# A library with a lazy attribute, as numpy, scipy and many others have.
LAZY = """
import pep726hook

calls = []
present = "present"

class Value:
    def __init__(self, n):
        self.n = n
    def __eq__(self, other):
        return isinstance(other, Value) and other.n == self.n

def __getattr__(name):
    calls.append(name)
    if name == "lazy":
        return Value(42)
    if name == "boom":
        raise KeyError("boom")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
"""

_counter = [0]
_made: list[str] = []


@pytest.fixture(autouse=True)
def _drop_made_modules() -> Iterator[None]:
    """Take this file's modules out of sys.modules (their __getattr__ may answer anything)."""
    yield
    while _made:
        sys.modules.pop(_made.pop(), None)


def answering(prefix: str) -> Callable[[str], str]:
    """A __getattr__ answering every name that is not a dunder name."""

    def __getattr__(name: str) -> str:
        if name.startswith("__"):
            raise AttributeError(name)
        return f"{prefix} {name}"

    return __getattr__


def relocates(engine: str) -> bool:
    """Whether *engine* holds a module's __getattr__ outside its namespace here."""
    return engine == "native" and (3, 11) <= sys.version_info[:2] < (3, 15)


def make_module(
    source: str, enable: bool = True, cls: type | None = None, name: str | None = None
) -> Any:
    """Run *source* in a fresh module, opted in at the end if *enable*.

    A module made under a *name* of its own is not put into sys.modules.
    """
    if name is None:
        _counter[0] += 1
        module_name = f"getattr_module_{_counter[0]}"
    else:
        module_name = name
    module = types.ModuleType(module_name) if cls is None else cls(module_name)
    if name is None:
        sys.modules[module_name] = module
        _made.append(module_name)
    exec(source, module.__dict__)
    if enable:
        pep726hook.enable(module, fast_getattr=True)
    return module


def outcome(action: Callable[[], object]) -> tuple[str, object]:
    """What *action* gives: ("value", value) or ("error", (type, message))."""
    try:
        return ("value", action())
    except Exception as error:
        return ("error", (type(error), str(error)))


def both(source: str = LAZY) -> tuple[Any, Any]:
    """The module opted in, and the same source in a plain one of the same name."""
    module = make_module(source)
    return module, make_module(source, enable=False, name=module.__name__)


def test_present_names_are_read_without_calling_getattr(opt_in_engine: str) -> None:
    module = make_module(LAZY)
    for _ in range(50):
        assert module.present == "present"
        assert getattr(module, "present") == "present"
        assert hasattr(module, "present")
    assert module.calls == []


def test_missing_names_call_getattr_once_with_the_name(opt_in_engine: str) -> None:
    module, plain = both()
    assert module.lazy.n == plain.lazy.n == 42
    assert getattr(module, "lazy").n == 42
    assert module.calls == ["lazy", "lazy"]
    assert hasattr(module, "lazy")
    assert getattr(module, "absent", "default") == "default"
    assert not hasattr(module, "absent")
    assert module.calls == ["lazy", "lazy", "lazy", "absent", "absent"]


def test_errors_are_those_of_plain_pep_562(opt_in_engine: str) -> None:
    module, plain = both()
    for name in ("absent", "boom"):
        assert outcome(lambda n=name: getattr(module, n)) == outcome(
            lambda n=name: getattr(plain, n)
        )
    assert module.calls == plain.calls == ["absent", "boom"]


def test_an_error_from_getattr_propagates_unchanged(opt_in_engine: str) -> None:
    module = make_module(LAZY)
    with pytest.raises(KeyError, match="boom") as info:
        _ = module.boom
    assert info.value.args == ("boom",)


def test_getattr_reads_back_as_the_function(opt_in_engine: str) -> None:
    module = make_module(LAZY)
    function = module.__getattr__
    assert callable(function)
    assert function.__name__ == "__getattr__"
    assert getattr(module, "__getattr__") is function
    assert module.calls == []
    assert ("__getattr__" in vars(module)) is not relocates(opt_in_engine)


def test_module_without_getattr_is_left_alone(opt_in_engine: str) -> None:
    module = make_module("x = 1\n")
    assert module.x == 1
    with pytest.raises(AttributeError, match=f"module '{module.__name__}' has no attribute 'y'"):
        _ = module.y
    assert not hasattr(module, "y")


def test_getattr_defined_after_enable_in_the_body(
    opt_in_engine: str, write_module: WriteModule
) -> None:
    write_module(
        "getattr_after_enable",
        """
        import pep726hook
        pep726hook.enable(__name__, fast_getattr=True)
        present = 1

        def __getattr__(name):
            if name == "lazy":
                return "lazy value"
            raise AttributeError(name)
        """,
    )
    module = importlib.import_module("getattr_after_enable")
    assert module.present == 1
    assert module.lazy == "lazy value"
    with pytest.raises(AttributeError):
        _ = module.absent
    assert module.__getattr__("lazy") == "lazy value"


def test_a_getattr_stored_through_globals_wins(opt_in_engine: str) -> None:
    module = make_module(LAZY)
    assert module.lazy.n == 42
    module.__dict__["__getattr__"] = answering("new")
    assert module.lazy == "new lazy"
    assert module.__getattr__("x") == "new x"
    assert module.present == "present"


@pytest.mark.parametrize("how", ["attribute", "setattr"])
def test_a_getattr_stored_through_the_module_takes_effect(opt_in_engine: str, how: str) -> None:
    module = make_module(LAZY)
    assert module.lazy.n == 42

    replacement = answering("replaced")
    if how == "attribute":
        module.__getattr__ = replacement
    else:
        setattr(module, "__getattr__", replacement)
    assert module.lazy == "replaced lazy"
    assert module.__getattr__ is replacement
    assert vars(module).get("__getattr__", replacement) is replacement


@pytest.mark.parametrize("how", ["attribute", "delattr"])
def test_a_getattr_deleted_through_the_module_is_gone(opt_in_engine: str, how: str) -> None:
    module, plain = both()
    assert module.lazy.n == 42
    if how == "attribute":
        del module.__getattr__
        del plain.__getattr__
    else:
        delattr(module, "__getattr__")
        delattr(plain, "__getattr__")
    got = outcome(lambda: module.lazy)
    want = outcome(lambda: plain.lazy)
    assert got[0] == want[0] == "error"
    assert got[1] == (AttributeError, f"module '{module.__name__}' has no attribute 'lazy'")
    assert not hasattr(module, "__getattr__")
    with pytest.raises(AttributeError):
        del module.__getattr__


HOOKED = (
    LAZY
    + """
log = []

def __setattr__(name, value):
    log.append(("set", name))
    if value == "refused":
        raise ValueError("refused by the hook")
    globals()[name] = value

def __delattr__(name):
    log.append(("del", name))
    if name == "__getattr__" and globals().get("refuse_deletion"):
        raise ValueError("refused by the hook")
    del globals()[name]
"""
)


def test_own_hooks_run_first_for_stores_and_deletions_of_getattr(opt_in_engine: str) -> None:
    module = make_module(HOOKED)
    assert module.lazy.n == 42

    module.__getattr__ = answering("from the hook's store")
    assert module.log == [("set", "__getattr__")]
    assert module.lazy == "from the hook's store lazy"

    with pytest.raises(ValueError, match="refused"):
        module.__getattr__ = "refused"
    assert module.lazy == "from the hook's store lazy"

    # The hook deletes through globals(): it finds the function there.
    del module.__getattr__
    assert module.log[-1] == ("del", "__getattr__")
    with pytest.raises(AttributeError, match="has no attribute 'lazy'"):
        _ = module.lazy


def test_a_delattr_hook_refusing_the_deletion_keeps_getattr(opt_in_engine: str) -> None:
    module = make_module(HOOKED + "refuse_deletion = True\n")
    assert module.lazy.n == 42
    with pytest.raises(ValueError, match="refused"):
        del module.__getattr__
    assert module.lazy.n == 42
    assert module.calls == ["lazy", "lazy"]


def test_module_dir_keeps_working(opt_in_engine: str) -> None:
    module = make_module(LAZY + "def __dir__():\n    return ['lazy', 'present']\n")
    assert dir(module) == ["lazy", "present"]
    plain_dir = make_module(LAZY)
    assert "present" in dir(plain_dir)


@pytest.mark.parametrize("own_class", [False, True])
def test_deprecated_names_are_read_from_the_namespace_without_asking_getattr(
    opt_in_engine: str, own_class: bool
) -> None:
    source = LAZY.replace(
        "present = ", "Old = pep726hook.deprecated(1, 'Old is deprecated')\npresent = "
    )
    module = make_module(source, cls=OwnModule if own_class else None)
    with pytest.warns(DeprecationWarning, match="Old is deprecated"):
        assert module.Old == 1
    # In the namespace, as on a plain module: __getattr__ is not asked.
    assert module.calls == []
    assert module.lazy.n == 42
    with pytest.raises(AttributeError):
        _ = module.absent


def test_a_deprecated_name_wins_over_getattr_as_any_name_in_the_namespace(
    opt_in_engine: str,
) -> None:
    source = LAZY.replace(
        "present = ", "lazy = pep726hook.deprecated(1, 'lazy is deprecated')\npresent = "
    )
    module = make_module(source)
    with pytest.warns(DeprecationWarning, match="lazy is deprecated"):
        assert module.lazy == 1


class OwnModule(types.ModuleType):
    """A module class of its own, with a property counting its getter calls."""

    getter_calls = 0

    @property
    def computed(self) -> str:
        OwnModule.getter_calls += 1
        return "computed"

    @property
    def failing(self) -> str:
        OwnModule.getter_calls += 1
        raise AttributeError("failing getter")


def test_module_with_its_own_class(opt_in_engine: str) -> None:
    OwnModule.getter_calls = 0
    module = make_module(LAZY, cls=OwnModule)
    assert isinstance(module, OwnModule)
    assert module.computed == "computed"
    assert OwnModule.getter_calls == 1
    assert module.lazy.n == 42
    # A getter raising AttributeError falls through to __getattr__, as in
    # CPython's own slot, and runs once.
    with pytest.raises(AttributeError, match="failing"):
        _ = module.failing
    assert OwnModule.getter_calls == 2
    assert module.calls == ["lazy", "failing"]


def test_reload_reruns_the_body_and_its_getattr_wins(
    opt_in_engine: str, write_module: WriteModule
) -> None:
    path = write_module(
        "reloaded_getattr",
        """
        import pep726hook
        present = 1
        def __getattr__(name):
            return "first " + name
        pep726hook.enable(__name__, fast_getattr=True)
        """,
    )
    module = importlib.import_module("reloaded_getattr")
    assert module.lazy == "first lazy"
    path.write_text(
        path.read_text(encoding="utf-8").replace('"first "', '"second "'), encoding="utf-8"
    )
    importlib.invalidate_caches()
    sys.modules.pop("reloaded_getattr")
    sys.modules["reloaded_getattr"] = module
    # A fresh mtime may equal the old one on coarse file systems: drop the cache.
    for cached in path.parent.glob("__pycache__/reloaded_getattr*"):
        cached.unlink()
    assert importlib.reload(module) is module
    assert module.lazy == "second lazy"
    assert module.present == 1


def test_values_pickle_by_reference_to_the_module(
    opt_in_engine: str, write_module: WriteModule
) -> None:
    write_module(
        "pickled_getattr",
        """
        import pep726hook

        class Point:
            def __init__(self, x):
                self.x = x

        def helper():
            return 1

        def __getattr__(name):
            if name == "lazy_helper":
                return helper
            raise AttributeError(name)

        pep726hook.enable(__name__, fast_getattr=True)
        """,
    )
    module = importlib.import_module("pickled_getattr")
    point = pickle.loads(pickle.dumps(module.Point(3)))
    assert point.x == 3
    assert pickle.loads(pickle.dumps(module.helper)) is module.helper
    assert pickle.loads(pickle.dumps(module.lazy_helper)) is module.helper
    assert pickle.loads(pickle.dumps(module.__getattr__)) is module.__getattr__


def test_inspect_getmembers_and_pydoc(opt_in_engine: str) -> None:
    module = make_module(LAZY)
    members = dict(inspect.getmembers(module))
    assert members["present"] == "present"
    assert "Value" in members
    text = pydoc.render_doc(module, renderer=pydoc.plaintext)
    assert "Value" in text
    assert "present" in text


def test_mock_patch_of_present_and_lazy_names(opt_in_engine: str) -> None:
    module = make_module(LAZY)
    with mock.patch(f"{module.__name__}.present", "patched"):
        assert module.present == "patched"
    assert module.present == "present"
    with mock.patch(f"{module.__name__}.lazy", "patched"):
        assert module.lazy == "patched"
    assert module.lazy.n == 42
    with mock.patch.object(module, "__getattr__", answering("mocked")):
        assert module.lazy == "mocked lazy"
    assert module.lazy.n == 42


def test_threads_read_while_another_stores_getattr(
    opt_in_engine: str, busy_switching: None
) -> None:
    module = make_module(LAZY)
    first = module.__getattr__

    second = answering("second")

    stop = threading.Event()
    problems: list[object] = []

    def reader() -> None:
        while not stop.is_set():
            try:
                value = module.lazy
                if not (value == "second lazy" or getattr(value, "n", None) == 42):
                    problems.append(value)
                if module.present != "present":
                    problems.append(module.present)
            except Exception as error:
                problems.append(error)

    def writer() -> None:
        for i in range(300):
            if i % 3 == 0:
                module.__getattr__ = second
            elif i % 3 == 1:
                module.__dict__["__getattr__"] = first
            else:
                setattr(module, "__getattr__", first)
        stop.set()

    threads = [threading.Thread(target=reader) for _ in range(3)] + [
        threading.Thread(target=writer)
    ]
    for thread in threads:
        thread.start()
    join_or_fail(threads)
    assert problems == []


# --- bad input: exactly what plain CPython gives ------------------------------------


@pytest.mark.parametrize(
    "definition",
    [
        "__getattr__ = None",
        "__getattr__ = 42",
        "def __getattr__():\n    return 1",
        "def __getattr__(a, b):\n    return 1",
        "def __getattr__(name):\n    raise ValueError('not an AttributeError')",
        "def __getattr__(name):\n    raise AttributeError",
        "def __getattr__(name):\n    return None",
    ],
)
def test_bad_getattr_behaves_as_plain_pep_562(opt_in_engine: str, definition: str) -> None:
    source = "present = 1\n" + definition + "\n"
    module, plain = both(source)
    assert module.present == 1
    got = outcome(lambda: module.absent)
    want = outcome(lambda: plain.absent)
    assert got == want
    assert outcome(lambda: hasattr(module, "absent")) == outcome(lambda: hasattr(plain, "absent"))
    assert outcome(lambda: getattr(module, "absent", 0)) == outcome(
        lambda: getattr(plain, "absent", 0)
    )
    assert module.present == 1


def test_getattr_replacing_itself_during_its_call(opt_in_engine: str) -> None:
    source = """
present = 1
def __getattr__(name):
    def second(name):
        if name.startswith("__"):
            raise AttributeError(name)
        return "second " + name
    if name.startswith("__"):
        raise AttributeError(name)
    globals()["__getattr__"] = second
    return "first " + name
"""
    module, plain = both(source)
    for target in (module, plain):
        assert target.lazy == "first lazy"
        assert target.lazy == "second lazy"


def test_getattr_deleting_itself_during_its_call(opt_in_engine: str) -> None:
    source = """
present = 1
def __getattr__(name):
    del module_itself.__getattr__
    return "last " + name
"""
    module, plain = both(source)
    for target in (module, plain):
        target.module_itself = target
        assert target.lazy == "last lazy"
        with pytest.raises(AttributeError, match="has no attribute 'lazy'"):
            _ = target.lazy


def test_enable_is_idempotent_and_safe_on_any_module(opt_in_engine: str) -> None:
    module = make_module(LAZY)
    for _ in range(3):
        assert pep726hook.enable(module) is module
    assert module.lazy.n == 42
    assert module.calls == ["lazy"]
    half = types.ModuleType.__new__(types.ModuleType)
    assert pep726hook.enable(half) is half
    own = make_module(LAZY, cls=OwnModule)
    assert pep726hook.enable(own) is own
    assert own.lazy.n == 42


def test_a_failing_getter_of_a_deprecating_module_runs_once(opt_in_engine: str) -> None:
    source = "import pep726hook\nOld = pep726hook.deprecated(1, 'Old is deprecated')\n"
    OwnModule.getter_calls = 0
    module = make_module(source, cls=OwnModule)
    plain = make_module(source, enable=False, cls=OwnModule, name=module.__name__)
    OwnModule.getter_calls = 0
    got = outcome(lambda: module.failing)
    assert OwnModule.getter_calls == 1
    assert got == outcome(lambda: plain.failing)
    assert got == (
        "error",
        (AttributeError, f"module '{module.__name__}' has no attribute 'failing'"),
    )
    errors = []
    for target in (module, plain):
        try:
            _ = target.failing
        except AttributeError as error:
            errors.append((getattr(error, "name", None), getattr(error, "obj", None) is target))
    if sys.implementation.name == "cpython":
        # PyPy fills in name and obj on an error leaving a class's __getattr__
        # (the class engine's), not on its module type's own miss after a
        # getter raised (docs/engines.md).
        assert errors[0] == errors[1]
    with pytest.warns(DeprecationWarning):
        assert module.Old == 1


@pytest.mark.parametrize("fast_getattr", [True, False, None])
def test_every_placement_keeps_pep_562_exactly(
    opt_in_engine: str, fast_getattr: bool | None
) -> None:
    module = make_module(LAZY, enable=False)
    plain = make_module(LAZY, enable=False, name=module.__name__)
    pep726hook.enable(module, fast_getattr=fast_getattr)
    for name in ("present", "boom", "absent"):
        assert outcome(partial(getattr, module, name)) == outcome(partial(getattr, plain, name))
    assert module.lazy.n == plain.lazy.n == 42
    for name in ("present", "lazy", "absent"):
        assert hasattr(module, name) == hasattr(plain, name)
    assert module.calls == plain.calls
    if fast_getattr is False or not relocates(opt_in_engine):
        # Kept in place: the class engine ignores the choice.
        assert "__getattr__" in vars(module)
    elif fast_getattr:
        assert "__getattr__" not in vars(module)


@pytest.mark.parametrize("bad", ["yes", 1, 0, [], object()])
def test_a_bad_fast_getattr_is_refused_and_changes_nothing(opt_in_engine: str, bad: object) -> None:
    module = make_module(LAZY, enable=False)
    with pytest.raises(TypeError, match="fast_getattr must be True, False or None"):
        pep726hook.enable(module, fast_getattr=bad)  # type: ignore[arg-type]
    assert not _enable.is_opted_in(module)
    assert "__getattr__" in vars(module)

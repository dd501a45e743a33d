"""A deprecated name the module's own code binds again, and Python code run at awkward points.

Under the native engine a moved module's own code can bind a deprecated name
in its namespace again (``global Old; Old = value``); from 3.12 a dict
watcher notes it and a pending call moves it back into the private
builtins, where it stays deprecated.  These tests hold that no such value
is lost or left behind, whatever else runs meanwhile (a store of another
deprecated name, a full queue of pending calls, a ``__del__`` that binds
the name again), and that Python code run by a key's ``__eq__`` or
``__hash__`` inside the engine's C code changes nothing it relies on.
"""

from __future__ import annotations

import builtins
import importlib
import subprocess
import sys
import threading
import warnings
from typing import Any, Callable, Iterator

import pytest
from _deprecation_helpers import own_value
from _venv import TIMEOUT, WriteModule, clean_env, describe

import pep726hook

NATIVE = "native" in pep726hook.available_engines()
WATCHED = sys.version_info >= (3, 12)  # dict watchers move a rebound name back


@pytest.fixture
def load(write_module: WriteModule) -> Callable[[str, str], Any]:
    def make(name: str, source: str) -> Any:
        write_module(name, source)
        module = importlib.import_module(name)
        module.__name__  # noqa: B018  (the first read through the module moves the names)
        return module

    return make


def _pending_calls_run() -> None:
    # A few bytecodes with calls: the main thread runs pending calls between them.
    for _ in range(20):
        sum(range(10))


REFUSED_DELETION = """
import pep726hook

LIMIT = 100

def rebind():
    global LIMIT
    LIMIT = 250

def read():
    return LIMIT

def __delattr__(name):
    raise AttributeError(f"{name} cannot be deleted")

pep726hook.deprecate_attribute(__name__, "LIMIT", "LIMIT is deprecated")
"""


@pytest.mark.parametrize("refused", ["deletion", "store"])
def test_a_value_the_modules_code_bound_survives_a_refused_deletion_or_store(
    route: str, load: Callable[[str, str], Any], refused: str
) -> None:
    source = REFUSED_DELETION
    if refused == "store":
        source += "def __setattr__(name, value):\n    raise AttributeError('read-only')\n"
    module = load("limits", source)
    module.rebind()
    _pending_calls_run()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(AttributeError):
            if refused == "deletion":
                del module.LIMIT
            else:
                module.LIMIT = 300
        assert module.read() == 250
        assert module.LIMIT == 250
    assert [str(w.message) for w in caught] == ["LIMIT is deprecated"] * 2
    assert own_value(module, "LIMIT") == 250


@pytest.mark.skipif(not (NATIVE and WATCHED), reason="the namespace watcher: native, 3.12+")
def test_a_name_rebound_while_a_store_of_another_deprecated_name_runs_is_moved_back(
    route: str, load: Callable[[str, str], Any]
) -> None:
    # The store's hook rebinds the other name and lets pending calls run
    # while the store is still under way.
    source = """
import pep726hook

A = 1
B = 2

def __setattr__(name, value):
    global B
    B = "rebound"
    for _ in range(20):
        sum(range(10))
    globals()[name] = value

def read_b():
    return B

pep726hook.deprecate_attribute(__name__, "A", "A is deprecated")
pep726hook.deprecate_attribute(__name__, "B", "B is deprecated")
"""
    module = load("twonames", source)
    with pytest.warns(DeprecationWarning, match="A is deprecated"):
        module.A = 10
    _pending_calls_run()
    assert module.read_b() == "rebound"
    if route == "native":
        assert "B" not in vars(module)
    with pytest.warns(DeprecationWarning, match="B is deprecated"):
        assert module.B == "rebound"


FULL_QUEUE = r"""
import ctypes, importlib, sys, threading, warnings

import pep726hook

sys.path.insert(0, sys.argv[1])
module = importlib.import_module("queued")
module.__name__  # moves the names
assert "Old" not in vars(module), "the names did not move"

# A C function the pending calls of another extension run.
CALLBACK = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)(lambda arg: 0)
add_pending_call = ctypes.pythonapi.Py_AddPendingCall
add_pending_call.argtypes = [CALLBACK.__class__, ctypes.c_void_p]
release = threading.Event()
refused = []

def fill_then_rebind():
    # The main thread waits (without the GIL) below: nothing runs the queue.
    while add_pending_call(CALLBACK, None) == 0:
        pass
    refused.append(True)
    module.rebind("again")
    release.set()

thread = threading.Thread(target=fill_then_rebind)
thread.start()
release.wait(30)
thread.join(30)
assert refused, "the queue never filled"
for _ in range(200):
    sum(range(10))
# Documented: the move waits for the next change the engine sees.
print("before the next change:", "Old" in vars(module))
module.counter = 1
for _ in range(200):
    sum(range(10))
assert module.read() == "again"
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    assert module.Old == "again"
print("in namespace:", "Old" in vars(module), "warnings:", len(caught))
"""


@pytest.mark.skipif(not (NATIVE and WATCHED), reason="the namespace watcher: native, 3.12+")
@pytest.mark.skipif(sys.implementation.name != "cpython", reason="ctypes.pythonapi")
def test_a_name_rebound_while_the_queue_of_pending_calls_is_full_moves_at_the_next_change(
    tmp_path: Any,
) -> None:
    (tmp_path / "queued.py").write_text(
        "import pep726hook\nOld = 1\n"
        "def rebind(value):\n    global Old\n    Old = value\n"
        "def read():\n    return Old\n"
        "pep726hook.deprecate_attribute(__name__, 'Old', 'Old is deprecated')\n"
    )
    env = clean_env()
    env["PEP726HOOK_ENGINE"] = "native"
    result = subprocess.run(
        [sys.executable, "-c", FULL_QUEUE, str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=TIMEOUT,
        check=False,
    )
    assert result.returncode == 0, describe(result)
    assert result.stdout.splitlines() == [
        "before the next change: True",
        "in namespace: False warnings: 1",
    ], describe(result)


@pytest.mark.skipif(not (NATIVE and WATCHED), reason="the namespace watcher: native, 3.12+")
def test_a_del_that_binds_the_name_again_during_its_move_back_keeps_that_value(
    route: str, load: Callable[[str, str], Any]
) -> None:
    # Moving the rebound value into the private builtins drops the value it
    # replaces there, whose __del__ binds the name once more.
    source = """
import pep726hook

class BindsOnDeath:
    def __del__(self):
        globals()["Old"] = "from __del__"

Old = BindsOnDeath()

def rebind(value):
    global Old
    Old = value

def read():
    return Old

pep726hook.deprecate_attribute(__name__, "Old", "Old is deprecated")
"""
    module = load("bindsondeath", source)
    if route != "native":
        pytest.skip("the class engine keeps the name in the namespace: nothing moves back")
    assert "Old" not in vars(module)
    module.rebind("again")
    _pending_calls_run()
    assert module.read() == "from __del__"
    assert "Old" not in vars(module)
    with pytest.warns(DeprecationWarning, match="Old is deprecated"):
        assert module.Old == "from __del__"


class _NameRunningCode(str):
    """A str subclass whose hash and comparisons run Python code."""

    action: Callable[[], None] = staticmethod(lambda: None)
    calls = 0

    def __hash__(self) -> int:
        return str.__hash__(self)

    def __eq__(self, other: object) -> bool:
        type(self).calls += 1
        type(self).action()
        return str.__eq__(self, other)

    __ne__ = str.__ne__


def test_a_store_by_a_str_subclass_name_that_replaces_the_store_callback_is_served(
    route: str, load: Callable[[str, str], Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    module = load(
        "subclassname",
        "import pep726hook\nOld = 1\n"
        "pep726hook.deprecate_attribute(__name__, 'Old', 'Old is deprecated')\n",
    )
    served: list[Any] = []
    if route == "native":
        from pep726hook import _native  # type: ignore[attr-defined]
        from pep726hook._deprecations import _moved

        def make_callback(tag: str) -> Callable[..., None]:
            # A new function each time: replacing it frees the old one.
            def callback(*args: Any) -> None:
                served.append(tag)
                _moved._store_moved(*args)

            return callback

        _native.set_deprecated_store_callback(make_callback("first"))
        monkeypatch.setattr(
            _NameRunningCode,
            "action",
            staticmethod(lambda: _native.set_deprecated_store_callback(make_callback("second"))),
        )
    _NameRunningCode.calls = 0
    try:
        with pytest.warns(DeprecationWarning, match="Old is deprecated"):
            setattr(module, _NameRunningCode("Old"), 2)
    finally:
        if route == "native":
            _native.set_deprecated_store_callback(_moved._store_moved)
    assert vars(module)["Old"] == 2
    if route == "native":
        # The lookup ran the subclass's __eq__, which replaced the callback
        # (freeing the first): the store went to the one set then.
        assert _NameRunningCode.calls >= 1 and served == ["second"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert module.Old == 2  # the deprecation ended with the store


class _KeyRunningCode:
    """A builtins key that is no str, whose comparisons run Python code."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.calls = 0

    def __hash__(self) -> int:
        return hash(self.name)

    def __eq__(self, other: object) -> bool:
        self.calls += 1
        return False


@pytest.fixture
def restore_builtins() -> Iterator[None]:
    keys = set(vars(builtins))
    yield
    for key in set(vars(builtins)) - keys:
        del vars(builtins)[key]


def test_a_builtins_key_that_is_no_str_runs_no_code_inside_the_builtins_watcher(
    route: str, load: Callable[[str, str], Any], restore_builtins: None
) -> None:
    # Its hash equals a deprecated name's: comparing it with the module's
    # deprecated names would run its __eq__ inside the builtins dict's
    # watcher, which must not change that dict.
    module = load(
        "strangekey",
        "import pep726hook\nOld = 1\n"
        "pep726hook.deprecate_attribute(__name__, 'Old', 'Old is deprecated')\n",
    )
    key = _KeyRunningCode("Old")
    vars(builtins)[key] = "a value under a key no code reads as a name"
    del vars(builtins)[key]
    setattr(builtins, "strange_key_probe", 1)  # a str key is still mirrored
    assert key.calls == 0
    assert eval("strange_key_probe", vars(module)) == 1
    assert own_value(module, "Old") == 1


def test_own_code_exec_in_another_thread_keeps_reading_the_name_while_it_runs(
    route: str, write_module: WriteModule
) -> None:
    # A frame whose code is a module body (named <module>) keeps the
    # builtins it started with, so code that exec() runs in the module's
    # namespace from another thread counts as a body still running: the
    # names wait in the namespace until it ends (docs/deprecation.md, limits).
    write_module("execmod", "Old = 1\n")
    module = importlib.import_module("execmod")
    started = threading.Event()
    go_on = threading.Event()
    seen: list[Any] = []
    body = (
        "seen.append(Old)\nstarted.set()\ngo_on.wait(30)\n"
        "try:\n    seen.append(Old)\nexcept NameError as error:\n    seen.append(error)\n"
    )
    namespace = vars(module)
    namespace.update(seen=seen, started=started, go_on=go_on)
    thread = threading.Thread(target=exec, args=(compile(body, "<exec>", "exec"), namespace))
    thread.start()
    try:
        assert started.wait(30)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pep726hook.deprecate_attribute(module, "Old", "Old is deprecated")
            module.__name__  # noqa: B018
    finally:
        go_on.set()
        thread.join(30)
    assert seen == [1, 1]
    with pytest.warns(DeprecationWarning, match="Old is deprecated"):
        assert module.Old == 1
    assert own_value(module, "Old") == 1

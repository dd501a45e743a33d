"""Hostile conditions: threads, odd classes, odd finders, fork, odd objects.

Each test pins down one way real code strains an import hook and runs under
every engine the interpreter has.  Threads are joined with a time
limit and a process that hangs is killed: a hang fails the test instead of the
run.  Nothing here asserts on timing.
"""

from __future__ import annotations

import copy
import importlib
import importlib.abc
import importlib.util
import os
import pickle
import sys
import threading
import types
import warnings
import weakref
from typing import Any, Iterator

import pytest
from _venv import (
    ENGINES,
    HANG_LIMIT,
    RECORDING_MODULE,
    WriteModule,
    collect_garbage,
    join_or_fail,
    no_pypy_jit,
    run_fresh_python,
)

import pep726hook

# --- a module without hooks is a plain module while its body runs -------------------------


def test_module_without_hooks_is_exactly_module_type_during_its_body(
    engine: str, write_module: WriteModule
) -> None:
    write_module(
        "hostile_plain_body",
        """
        import sys, types
        exact_during_body = type(sys.modules[__name__]) is types.ModuleType
        """,
    )
    module = importlib.import_module("hostile_plain_body")
    assert module.exact_during_body is True
    assert type(module) is types.ModuleType


def test_shadow_guard_that_needs_exact_module_type_keeps_working(
    engine: str, write_module: WriteModule
) -> None:
    # lazy_loader 0.6's attach() protects a package's function named like a
    # submodule only when the package is exactly a ModuleType during its body.
    write_module(
        "hostile_guarded",
        """
        import sys, types
        def x():
            return "function"
        if type(sys.modules[__name__]) is types.ModuleType:
            class _Guard(types.ModuleType):
                def __setattr__(self, name, value):
                    if name != "x":
                        super().__setattr__(name, value)
            sys.modules[__name__].__class__ = _Guard
        """,
        package=True,
    )
    write_module("hostile_guarded.x", "")
    importlib.import_module("hostile_guarded.x")
    package = sys.modules["hostile_guarded"]
    assert package.x() == "function"


def test_hook_defined_in_the_body_is_called_by_later_stores_in_the_body(
    engine: str, write_module: WriteModule
) -> None:
    # PEP 726's body-time example: the hook works from its definition on.
    write_module(
        "hostile_body_time", RECORDING_MODULE + "import sys\nsys.modules[__name__].x = 1\n"
    )
    module = importlib.import_module("hostile_body_time")
    assert module.calls == ["x"]
    assert module.x == 1


def test_hook_defined_through_globals_takes_effect_when_the_body_ends(
    engine: str, write_module: WriteModule
) -> None:
    write_module(
        "hostile_globals_hook",
        """
        calls = []
        def _hook(name, value):
            calls.append(name)
        globals()["__set" + "attr__"] = _hook
        """,
    )
    module = importlib.import_module("hostile_globals_hook")
    module.y = 2
    assert module.calls == ["y"]
    assert "y" not in vars(module)


# --- a module without hooks that sets its own class keeps that very class -----------------


def test_module_without_hooks_may_take_a_class_that_forbids_subclassing(
    engine: str, write_module: WriteModule
) -> None:
    write_module(
        "hostile_final_class",
        """
        import sys, types
        class Final(types.ModuleType):
            def __init_subclass__(cls, **kwargs):
                raise TypeError("Final cannot be subclassed")
        sys.modules[__name__].__class__ = Final
        """,
    )
    module = importlib.import_module("hostile_final_class")
    assert type(module) is module.Final


def test_module_without_hooks_leaves_no_phantom_subclass_in_a_registry(
    engine: str, write_module: WriteModule
) -> None:
    write_module(
        "hostile_registry_class",
        """
        import sys, types
        made = []
        class Meta(type):
            def __init__(cls, *args, **kwargs):
                super().__init__(*args, **kwargs)
                made.append(cls.__name__)
        class Registered(types.ModuleType, metaclass=Meta):
            registry = []
            def __init_subclass__(cls, **kwargs):
                super().__init_subclass__(**kwargs)
                Registered.registry.append(cls)
        sys.modules[__name__].__class__ = Registered
        """,
    )
    module = importlib.import_module("hostile_registry_class")
    assert module.Registered.registry == []
    assert module.made == ["Registered"]
    assert type(module) is module.Registered


# --- threads storing while the class changes under them -----------------------------------


def test_thread_started_by_a_module_body_stores_safely_after_the_import(
    engine: str, write_module: WriteModule, busy_switching: None
) -> None:
    write_module(
        "hostile_body_thread",
        """
        import sys, threading
        errors = []
        stop = threading.Event()
        _module = sys.modules[__name__]
        def _store():
            try:
                i = 0
                while not stop.is_set():
                    _module.counter = i
                    i += 1
            except BaseException as error:
                errors.append(error)
        worker = threading.Thread(target=_store, daemon=True)
        worker.start()
        for _ in range(2000):
            _module.filler = 0
        """,
    )
    module = importlib.import_module("hostile_body_thread")
    for _ in range(2000):
        module.other = 0
    module.stop.set()
    join_or_fail([module.worker])
    assert module.errors == []


def test_stores_on_an_upgraded_module_survive_install_and_uninstall_in_another_thread(
    write_module: WriteModule, busy_switching: None
) -> None:
    # Only __delattr__: stores go down the hook-less path of the hook-aware class.
    write_module(
        "hostile_delattr_only",
        """
        def __delattr__(name):
            raise AttributeError(name)
        """,
    )
    module = importlib.import_module("hostile_delattr_only")
    errors: list[BaseException] = []
    stop = threading.Event()

    def store() -> None:
        try:
            i = 0
            while not stop.is_set():
                module.counter = i
                i += 1
        except BaseException as error:
            errors.append(error)

    def churn() -> None:
        try:
            for _ in range(300):
                with pep726hook.install("class"):
                    pass
        except BaseException as error:
            errors.append(error)
        finally:
            stop.set()

    threads = [threading.Thread(target=store, daemon=True) for _ in range(2)]
    threads.append(threading.Thread(target=churn, daemon=True))
    for thread in threads:
        thread.start()
    join_or_fail(threads)
    assert errors == []


# --- a module object made without a namespace ---------------------------------------------


def test_module_made_without_a_namespace_stores_and_deletes_once_upgraded(engine: str) -> None:
    # On Python 3.8 ModuleType.__new__ leaves the namespace unset (None); the
    # generic store creates it.
    module = types.ModuleType.__new__(types.ModuleType)
    pep726hook.upgrade(module)
    module.x = 1
    assert module.__dict__ == {"x": 1}
    del module.x
    assert module.__dict__ == {}


# --- objects in sys.modules that run code when looked at ----------------------------------


class _RaisingPlaceholder:
    """A lazy-import placeholder whose every attribute read fails, __class__ included."""

    def __getattribute__(self, name: str) -> Any:
        raise ImportError(f"placeholder cannot give {name}")


@pytest.mark.parametrize("engine_name", ENGINES)
def test_install_ignores_a_placeholder_whose_attributes_raise(engine_name: str) -> None:
    sys.modules["hostile_placeholder"] = _RaisingPlaceholder()
    try:
        with pep726hook.install(engine_name):
            assert pep726hook.is_installed()
    finally:
        del sys.modules["hostile_placeholder"]


def test_module_replacing_itself_with_a_raising_placeholder_imports_quietly(
    engine: str, write_module: WriteModule
) -> None:
    write_module(
        "hostile_replaced",
        """
        import sys
        class Placeholder:
            def __getattribute__(self, name):
                raise ImportError(name)
        sys.modules[__name__] = Placeholder()
        """,
    )
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a warning of ours would fail the import
            imported = importlib.import_module("hostile_replaced")
        # What the body put in sys.modules is what the import returns, untouched:
        # type(), as any attribute read (__class__ too) raises.
        assert type(imported).__name__ == "Placeholder"
        assert sys.modules["hostile_replaced"] is imported
    finally:
        sys.modules.pop("hostile_replaced", None)


def test_upgrade_refuses_an_object_that_only_claims_to_be_a_module(engine: str) -> None:
    class Impostor:
        @property  # type: ignore[misc]
        def __class__(self) -> type:
            return types.ModuleType

    impostor = Impostor()
    assert isinstance(impostor, types.ModuleType)
    with pytest.raises(TypeError, match="needs a module"):
        pep726hook.upgrade(impostor)  # type: ignore[arg-type]


# --- fork while another thread is inside install()/uninstall() ----------------------------

FORK_WHILE_INSTALLING = """
import os, sys, threading, time, warnings
import pep726hook
warnings.simplefilter("ignore", DeprecationWarning)  # 3.12+: fork() with threads
engine = sys.argv[1]
# Once first, so that the package's own modules are imported before any fork:
# a child forked while another thread imports a module waits for ever on that
# module's import lock, with or without pep726hook.
with pep726hook.install(engine):
    pass
stop = threading.Event()
def churn():
    while not stop.is_set():
        with pep726hook.install(engine):
            pass
worker = threading.Thread(target=churn, daemon=True)
worker.start()
children = []
for _ in range(10):
    time.sleep(0.005)
    pid = os.fork()
    if pid == 0:
        with pep726hook.install(engine):
            pass
        pep726hook.uninstall()
        os._exit(0)
    children.append(pid)
stop.set()
worker.join()
deadline = time.monotonic() + 30
hung = 0
for pid in children:
    while not os.waitpid(pid, os.WNOHANG)[0]:
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            hung += 1
            break
        time.sleep(0.01)
print(hung, "of", len(children), "children hung")
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
@pytest.mark.parametrize("engine_name", ENGINES)
def test_child_forked_during_install_can_install_and_uninstall(engine_name: str) -> None:
    result = run_fresh_python(FORK_WHILE_INSTALLING, engine_name, timeout=HANG_LIMIT + 60)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "0 of 10 children hung\n", result.stderr


# --- classes given to a hook-aware module are not kept for ever ---------------------------


@pytest.fixture
def classes_are_freed() -> Iterator[None]:
    """Skip unless this interpreter frees classes; on PyPy, run the test with the JIT off.

    PyPy's JIT may compile, in the middle of the test, a trace of code that
    pep726hook runs in every test (upgrading a module, composing a class),
    and a trace keeps alive the classes it guards on: one class in twenty
    then outlived the test in a full run on PyPy 3.11, never alone.
    """
    # Free-threaded 3.13 makes classes immortal once a second thread has run
    # (deferred reference counting; 3.14 frees them): nothing to measure there.
    control = weakref.ref(type("Control", (types.ModuleType,), {}))
    collect_garbage()
    if control() is not None:
        pytest.skip("this interpreter does not free classes without pep726hook either")
    with no_pypy_jit():
        yield


@pytest.mark.usefixtures("classes_are_freed")
def test_classes_given_to_a_hook_aware_module_are_freed_after_use(
    engine: str, write_module: WriteModule
) -> None:
    # Only __delattr__: a store of __class__ goes through the hook-aware class,
    # which composes every class it is given.
    write_module("hostile_class_churn", "def __delattr__(name):\n    raise AttributeError(name)\n")
    module = importlib.import_module("hostile_class_churn")
    _assert_assigned_classes_are_freed(module, "Dynamic")


def _assert_assigned_classes_are_freed(module: types.ModuleType, prefix: str) -> None:
    # Assigns 50 fresh ModuleType subclasses to a hook-aware module's
    # __class__ in turn: neither they nor what the engine composed from them
    # may outlive their use, and the module keeps its hooks.
    freed = []
    for i in range(50):
        dynamic = type(f"{prefix}{i}", (types.ModuleType,), {})
        module.__class__ = dynamic
        assert isinstance(module, dynamic)
        freed.append(weakref.ref(dynamic))
        freed.append(weakref.ref(type(module)))
    module.__class__ = types.ModuleType
    del dynamic
    collect_garbage()
    assert [ref for ref in freed if ref() is not None] == []
    assert pep726hook.is_upgraded(module)


@pytest.mark.usefixtures("classes_are_freed")
def test_classes_composed_for_upgraded_modules_are_freed_after_uninstall(
    write_module: WriteModule,
) -> None:
    freed = []
    with pep726hook.install("class"):
        for i in range(20):
            dynamic = type(f"Own{i}", (types.ModuleType,), {})
            module = dynamic(f"hostile_own{i}")
            pep726hook.upgrade(module)
            assert type(module) is not dynamic
            freed.append(weakref.ref(dynamic))
            freed.append(weakref.ref(type(module)))
    assert type(module) is dynamic
    del module, dynamic
    collect_garbage()
    assert [ref for ref in freed if ref() is not None] == []


@pytest.mark.usefixtures("classes_are_freed")
def test_classes_given_to_an_opted_in_module_are_freed_after_use(engine: str) -> None:
    module = types.ModuleType("hostile_opted_churn")
    module.__dict__["__delattr__"] = lambda name: None
    pep726hook.enable(module)
    _assert_assigned_classes_are_freed(module, "OptedDynamic")


# --- a finder put in front of ours after install() ----------------------------------------


class _FrontFinder:
    """Serves the named modules itself, through PathFinder, as typeguard's finder does."""

    def __init__(self, *names: str) -> None:
        self.names = names

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname not in self.names:
            return None
        import importlib.machinery

        return importlib.machinery.PathFinder.find_spec(fullname, path)


def test_modules_served_by_a_finder_inserted_in_front_after_install_get_hooks(
    engine: str, write_module: WriteModule
) -> None:
    write_module("hostile_front_first", RECORDING_MODULE)
    write_module(
        "hostile_front_later", RECORDING_MODULE + "import sys\nsys.modules[__name__].x = 1\n"
    )
    write_module("hostile_front_unrelated", "")
    front = _FrontFinder("hostile_front_first", "hostile_front_later")
    sys.meta_path.insert(0, front)
    first = importlib.import_module("hostile_front_first")
    importlib.import_module("hostile_front_unrelated")
    first.y = 2
    assert first.calls == ["y"]
    later = importlib.import_module("hostile_front_later")
    assert later.calls == ["x"]
    # The front finder stays where it was put; the import system's walk asks
    # pep726hook's finder (class engine) before it.
    assert sys.meta_path.index(front) == 0
    assert list(sys.meta_path).index(front) == (engine == "class")


# --- the class of an upgraded module pickles by reference ---------------------------------


def test_hook_aware_module_class_pickles_by_reference(write_module: WriteModule) -> None:
    # ModuleType itself cannot be pickled (builtins has no 'module'); the class
    # engine's stand-in can, under the name it shows.
    write_module("hostile_pickled", RECORDING_MODULE)
    with pep726hook.install("class"):
        module = importlib.import_module("hostile_pickled")
        assert pickle.loads(pickle.dumps(type(module))) is type(module)


OWN_CLASS_MODULE = """
import sys, types

class Own(types.ModuleType):
    pass

def __delattr__(name):
    raise AttributeError(f"{name} is protected")

sys.modules[__name__].__class__ = Own
"""


def _assert_pickles_by_reference(cls: type) -> None:
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        assert pickle.loads(pickle.dumps(cls, protocol)) is cls, protocol
    assert copy.deepcopy(cls) is cls
    assert copy.copy(cls) is cls


def test_class_composed_from_a_module_own_class_pickles_by_reference(
    engine: str, write_module: WriteModule
) -> None:
    write_module("hostile_own_pickled", OWN_CLASS_MODULE)
    module = importlib.import_module("hostile_own_pickled")
    assert isinstance(module, module.Own)
    assert pep726hook.is_upgraded(module)
    _assert_pickles_by_reference(type(module))
    assert type(module).__name__ == "Own"


def test_opted_in_module_classes_pickle_by_reference(engine: str) -> None:
    # types.ModuleType itself does not pickle (builtins has no 'module'), so a
    # plain module the native engine serves keeps that class and that refusal.
    for cls in (types.ModuleType, _PicklableOwn):
        module = cls("hostile_opted_pickled")
        pep726hook.enable(module)
        assert pep726hook.is_upgraded(module)
        if type(module) is not types.ModuleType:
            _assert_pickles_by_reference(type(module))
    del module
    collect_garbage()


class _PicklableOwn(types.ModuleType):
    pass


def test_composed_class_unpickles_in_a_fresh_process_or_fails_clearly(
    write_module: WriteModule,
) -> None:
    path = write_module("hostile_own_fresh", OWN_CLASS_MODULE)
    with pep726hook.install("class"):
        module = importlib.import_module("hostile_own_fresh")
        payload = pickle.dumps(type(module))
        text_payload = pickle.dumps(type(module), 0)  # no frame lengths to keep
    child = f"""
import pickle, sys
sys.path.insert(0, {str(path.parent)!r})
from pep726hook import _class_engine
cls = pickle.loads({payload!r})
import hostile_own_fresh
assert cls is _class_engine.hook_aware_class_for(hostile_own_fresh.Own), cls
assert pickle.loads({payload!r}) is cls
missing = {text_payload.replace(b"Own", b"Gone")!r}
try:
    pickle.loads(missing)
except AttributeError as error:
    print("refused:", error)
"""
    result = run_fresh_python(child, timeout=HANG_LIMIT)
    assert result.returncode == 0, result.stderr
    assert "refused:" in result.stdout
    assert "Gone" in result.stdout


def _pickling_outcome(module: types.ModuleType, protocol: int) -> object:
    try:
        copied = pickle.loads(pickle.dumps(module, protocol))
    except TypeError as error:  # CPython: "cannot pickle 'module' object"
        return (type(error), str(error).replace("_plain", "_instance"))
    return copied is module  # PyPy: a module of sys.modules pickles by its name


def test_opted_in_class_unpickles_in_a_fresh_process(write_module: WriteModule) -> None:
    path = write_module(
        "hostile_opted_fresh",
        "import types, pep726hook\nclass Own(types.ModuleType):\n    pass\n",
    )
    module = importlib.import_module("hostile_opted_fresh")
    opted = module.Own("hostile_opted_fresh_instance")
    with pep726hook.install("class"):
        pep726hook.enable(opted)
        payload = pickle.dumps(type(opted))
    # Only pickle's own import of pep726hook._class_engine, nothing else of ours.
    child = f"""
import pickle, sys
sys.path.insert(0, {str(path.parent)!r})
cls = pickle.loads({payload!r})
from pep726hook import _class_engine
import hostile_opted_fresh
assert cls is _class_engine.opted_in_class_for(hostile_opted_fresh.Own), cls
print("ok")
"""
    result = run_fresh_python(child, timeout=HANG_LIMIT)
    assert result.stdout == "ok\n", result.stderr
    del opted
    collect_garbage()


def test_upgraded_module_objects_pickle_as_plain_ones_do(
    engine: str, write_module: WriteModule
) -> None:
    write_module("hostile_own_instance", OWN_CLASS_MODULE)
    module = importlib.import_module("hostile_own_instance")
    plain = module.Own("hostile_own_plain")
    sys.modules["hostile_own_plain"] = plain
    try:
        for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
            expected = _pickling_outcome(plain, protocol)
            assert _pickling_outcome(module, protocol) == expected, protocol
    finally:
        del sys.modules["hostile_own_plain"]


# --- the same conditions for enable()'s opted-in class ------------------------------------


def test_enable_names_a_placeholder_in_sys_modules_as_no_module(engine: str) -> None:
    sys.modules["hostile_enable_placeholder"] = _RaisingPlaceholder()
    try:
        with pytest.raises(ValueError, match="no module of that name"):
            pep726hook.enable("hostile_enable_placeholder")
    finally:
        del sys.modules["hostile_enable_placeholder"]


def test_enabled_module_made_without_a_namespace_stores(engine: str) -> None:
    # Once a library has used deprecated(), enable() looks for its values in
    # the namespace, which such a module lacks before Python 3.11.
    pep726hook.deprecated(object(), "loads the deprecation module")
    module = types.ModuleType.__new__(types.ModuleType)
    pep726hook.enable(module)
    module.x = 1
    assert module.__dict__ == {"x": 1}


# --- our own post-processing never fails an import, even under -W error ----------------


class _Sealed(types.ModuleType):
    """A module class that refuses subclasses: the class engine cannot compose it."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        raise TypeError("_Sealed cannot be subclassed")


class _SealedLoader(importlib.abc.Loader):
    def create_module(self, spec: Any) -> types.ModuleType:
        return _Sealed(spec.name)

    def exec_module(self, module: types.ModuleType) -> None:
        exec("def __delattr__(name):\n    raise AttributeError(name)\nx = 1\n", vars(module))


class _SealedFinder:
    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname != "hostile_sealed_w_error":
            return None
        return importlib.util.spec_from_loader(fullname, _SealedLoader())


def test_warning_about_an_unpreparable_module_never_fails_its_import_under_w_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    sys.meta_path.append(_SealedFinder())
    with pep726hook.install("class"), warnings.catch_warnings():
        warnings.simplefilter("error")  # what -W error does
        module = importlib.import_module("hostile_sealed_w_error")
    assert module.x == 1
    assert type(module) is _Sealed
    assert "could not prepare module 'hostile_sealed_w_error'" in capsys.readouterr().err


# --- composing a class runs user code: outside the install lock, never half done ------


@pytest.mark.parametrize("engine_name", ENGINES)
def test_install_refused_by_a_module_class_leaves_nothing_installed(engine_name: str) -> None:
    sealed = _Sealed("hostile_sealed_existing")
    sealed.__dict__["__setattr__"] = lambda name, value: None
    sys.modules["hostile_sealed_existing"] = sealed
    meta_path = list(sys.meta_path)
    try:
        if engine_name == "native":  # composes no class
            with pep726hook.install(engine_name):
                assert pep726hook.is_upgraded(sealed)
            return
        with pytest.raises(TypeError, match="_Sealed cannot be subclassed"):
            pep726hook.install(engine_name)
        assert not pep726hook.is_installed()
        assert sys.meta_path == meta_path
        assert type(sealed) is _Sealed
    finally:
        del sys.modules["hostile_sealed_existing"]


def test_enable_refused_by_a_module_class_leaves_it_as_it_was(engine: str) -> None:
    from pep726hook import _enable

    sealed = _Sealed("hostile_sealed_enabled")
    if engine == "native":  # composes no class
        assert pep726hook.enable(sealed) is sealed
        assert pep726hook.is_upgraded(sealed)
        return
    with pytest.raises(TypeError, match="_Sealed cannot be subclassed"):
        pep726hook.enable(sealed)
    assert type(sealed) is _Sealed
    assert not _enable.is_opted_in(sealed)


def test_threads_composing_one_class_at_once_all_get_the_first_stored(
    busy_switching: None,
) -> None:
    # Composed outside any lock, so several threads may compose for one base;
    # only one class may ever be seen (pickle resolves its name to one class).
    from pep726hook import _class_engine

    threads_count = 6
    made: list[type] = []
    together = threading.Barrier(threads_count, timeout=HANG_LIMIT)

    class Meta(type):
        def __init__(cls, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            if cls.__bases__[0] is not types.ModuleType:
                made.append(cls)
                together.wait()  # every thread has composed before any stores

    class Own(types.ModuleType, metaclass=Meta):
        pass

    got: list[type] = []
    threads = [
        threading.Thread(target=lambda: got.append(_class_engine.hook_aware_class_for(Own)))
        for _ in range(threads_count)
    ]
    for thread in threads:
        thread.start()
    join_or_fail(threads)
    assert len(made) == threads_count
    assert len(got) == threads_count
    assert all(cls is got[0] for cls in got)
    assert _class_engine.hook_aware_class_for(Own) is got[0]
    assert _class_engine.original_class_of(got[0]) is Own
    assert not any(_class_engine.original_class_of(cls) is Own for cls in made if cls is not got[0])

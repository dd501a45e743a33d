"""``pep726hook.enable(__name__)``: a library opts its own module in, for every user."""

from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
import types
import warnings
from pathlib import Path
from typing import Any, Callable

import pytest
from _venv import (
    ENGINES,
    Venv,
    WriteModule,
    collect_garbage,
    describe,
    join_or_fail,
    our_finders,
    run_fresh_python,
    write,
)

import pep726hook
from pep726hook import _enable

NATIVE = "native" in ENGINES

# A library module: a guard hook, then the opt-in, then a store in its own body.
LIBRARY = """
import sys

log = []

def __setattr__(name, value):
    log.append(("set", name, value))
    if name == "dps":
        raise AttributeError(f"set {__name__}.mp.dps instead")
    globals()[name] = value

def __delattr__(name):
    log.append(("del", name))
    del globals()[name]

import pep726hook
pep726hook.enable(__name__)
sys.modules[__name__].during_body = 1
"""


def _native_patched() -> bool:
    if not NATIVE:
        return False
    from pep726hook import _native

    return _native.state()["patched"]


@pytest.fixture
def library(write_module: WriteModule) -> Callable[[str], Any]:
    """Write the LIBRARY module under a name and import it."""

    def make(name: str = "optlib") -> Any:
        write_module(name, LIBRARY)
        return importlib.import_module(name)

    return make


def _forget(*names: str) -> None:
    """Drop modules, collect them, and let uninstall() release what they held."""
    for name in names:
        sys.modules.pop(name, None)
    collect_garbage()
    pep726hook.uninstall()


def test_enabled_module_calls_its_hooks_without_any_finder(
    opt_in_engine: str, library: Callable[[str], Any]
) -> None:
    meta_path = list(sys.meta_path)
    module = library("optlib")
    assert module.log == [("set", "during_body", 1)]  # a store in its own body, after enable()
    module.x = 1
    setattr(module, "y", 2)
    del module.x
    delattr(module, "y")
    with pytest.raises(AttributeError, match=r"mp\.dps"):
        module.dps = 50
    assert module.log[1:] == [
        ("set", "x", 1),
        ("set", "y", 2),
        ("del", "x"),
        ("del", "y"),
        ("set", "dps", 50),
    ]
    assert sys.meta_path == meta_path
    assert not pep726hook.is_installed() and pep726hook.engine() is None
    assert pep726hook.engine(module) == opt_in_engine
    assert pep726hook.is_upgraded(module)
    if opt_in_engine == "native":
        assert type(module) is types.ModuleType


def test_other_modules_keep_their_plain_class_and_imports(
    opt_in_engine: str, library: Callable[[str], Any], write_module: WriteModule
) -> None:
    library("optlib")
    write_module("bystander", "x = 1\n")
    bystander = importlib.import_module("bystander")
    assert type(bystander) is types.ModuleType
    assert pep726hook.engine(bystander) in (None, "native")  # native: the type is shared
    bystander.x = 2
    assert bystander.x == 2
    assert not our_finders()


def test_enable_is_idempotent_by_name_and_by_object(
    opt_in_engine: str, library: Callable[[str], Any]
) -> None:
    module = library("optlib")
    cls = type(module)
    assert pep726hook.enable("optlib") is module
    assert pep726hook.enable(module) is module
    assert type(module) is cls
    module.z = 3
    assert module.log[-1] == ("set", "z", 3)


def test_a_module_without_hooks_stays_enabled_and_finds_hooks_defined_later(
    opt_in_engine: str, write_module: WriteModule
) -> None:
    write_module("nohooks", "import pep726hook\npep726hook.enable(__name__)\n")
    module = importlib.import_module("nohooks")
    assert pep726hook.is_upgraded(module)
    module.before = 1
    assert module.before == 1
    calls: list[tuple[str, object]] = []
    module.__dict__["__setattr__"] = lambda name, value: calls.append((name, value))
    module.after = 2
    assert calls == [("after", 2)]
    assert "after" not in vars(module)


def test_package_init_opts_in_and_sees_its_submodule_stored(
    opt_in_engine: str, write_module: WriteModule
) -> None:
    write_module(
        "optpkg",
        """
        seen = []
        def __setattr__(name, value):
            seen.append(name)
            globals()[name] = value
        import pep726hook
        pep726hook.enable(__name__)
        """,
        package=True,
    )
    write_module("optpkg.sub", "value = 1\n")
    package = importlib.import_module("optpkg")
    importlib.import_module("optpkg.sub")
    assert "sub" in package.seen  # importlib's setattr(package, "sub", submodule)
    assert package.sub.value == 1


def test_lazily_loaded_module_opts_in_when_its_body_runs(
    opt_in_engine: str, write_module: WriteModule
) -> None:
    write_module("lazyopt", LIBRARY)
    spec = importlib.util.find_spec("lazyopt")
    assert spec is not None and spec.loader is not None
    loader = importlib.util.LazyLoader(spec.loader)
    spec.loader = loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["lazyopt"] = module
    loader.exec_module(module)
    # The first read runs the body.  Some LazyLoader versions (PyPy 3.11's
    # stdlib) then assign __class__ by attribute, a store the hook sees too
    # (docs/writing-hooks.md, "Hooks see what importlib stores too").
    stores = [entry for entry in module.log if entry[1] != "__class__"]
    assert stores == [("set", "during_body", 1)]
    module.x = 1
    assert module.log[-1] == ("set", "x", 1)
    assert pep726hook.engine(module) == opt_in_engine
    assert type(module).__name__ == "module"  # no longer a _LazyModule


def test_bad_arguments_are_refused_and_leave_nothing_behind(
    opt_in_engine: str, no_opted_in_module_alive: None
) -> None:
    with pytest.raises(TypeError, match="needs a module or its name, not int"):
        pep726hook.enable(42)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"sys\.modules has no module of that name"):
        pep726hook.enable("no_such_module_for_enable")
    assert _enable.opted_in_engine() is None
    assert not _native_patched()


def test_invalid_engine_variable_warns_and_never_fails_the_import(
    monkeypatch: pytest.MonkeyPatch, write_module: WriteModule, no_opted_in_module_alive: None
) -> None:
    monkeypatch.setenv("PEP726HOOK_ENGINE", "fast")
    write_module("badvar", LIBRARY)
    with pytest.warns(RuntimeWarning) as w:
        module = importlib.import_module("badvar")
    # What to change, where it is, and what happened meanwhile; attributed to
    # the environment, not to the library's enable() line, which no user can fix.
    assert [str(warning.message) for warning in w] == [
        "the environment variable PEP726HOOK_ENGINE must be one of 'auto', 'native', "
        "'class', not 'fast'; pep726hook.enable(), called by a library for itself, "
        "used the 'auto' engine instead"
    ]
    assert (w[0].filename, w[0].lineno) == ("<environment>", 0)
    assert pep726hook.engine(module) == ENGINES[0]
    assert module.log == [("set", "during_body", 1)]


def test_invalid_engine_variable_is_shown_once_per_process_by_default_filters(
    monkeypatch: pytest.MonkeyPatch, write_module: WriteModule, mortal_modules: None
) -> None:
    monkeypatch.setenv("PEP726HOOK_ENGINE", "fast")
    write_module("badvar_first", LIBRARY)
    write_module("badvar_second", LIBRARY)
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        importlib.import_module("badvar_first")
        # Gone, and its engine released: the next enable() reads the variable again.
        _forget("badvar_first")
        importlib.import_module("badvar_second")
        _forget("badvar_second")
        warnings.simplefilter("default")  # Python's action for RuntimeWarning
        importlib.import_module("badvar_first")
        _forget("badvar_first")
        second = importlib.import_module("badvar_second")
    warned = [w.filename for w in shown if "PEP726HOOK_ENGINE" in str(w.message)]
    assert len(warned) == 3, warned  # each library's enable() met the variable
    assert pep726hook.engine(second) == ENGINES[0]


def test_invalid_engine_variable_warning_is_filtered_as_pep726hooks(
    monkeypatch: pytest.MonkeyPatch, write_module: WriteModule, no_opted_in_module_alive: None
) -> None:
    monkeypatch.setenv("PEP726HOOK_ENGINE", "fast")
    write_module("badvar_filtered", LIBRARY)
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        warnings.filterwarnings("ignore", module="pep726hook")  # -W ignore:::pep726hook
        importlib.import_module("badvar_filtered")
    assert [str(w.message) for w in shown] == []


def test_invalid_engine_variable_never_fails_the_import_under_w_error(
    monkeypatch: pytest.MonkeyPatch,
    write_module: WriteModule,
    capsys: pytest.CaptureFixture[str],
    no_opted_in_module_alive: None,
) -> None:
    monkeypatch.setenv("PEP726HOOK_ENGINE", "fast")
    write_module("badvar_w_error", LIBRARY)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # what -W error does
        module = importlib.import_module("badvar_w_error")
    assert pep726hook.engine(module) == ENGINES[0]
    assert module.log == [("set", "during_body", 1)]
    assert "used the 'auto' engine instead" in capsys.readouterr().err


@pytest.mark.skipif(NATIVE, reason="the native engine runs here")
def test_native_engine_variable_where_unavailable_warns_and_uses_class(
    monkeypatch: pytest.MonkeyPatch, no_opted_in_module_alive: None
) -> None:
    monkeypatch.setenv("PEP726HOOK_ENGINE", "native")
    module = types.ModuleType("m")
    with pytest.warns(RuntimeWarning) as w:
        pep726hook.enable(module)
    assert pep726hook.engine(module) == "class"
    message = str(w[0].message)
    assert message.startswith(
        "the environment variable PEP726HOOK_ENGINE is 'native', and the native engine "
        "cannot run here: "
    )
    assert message.endswith("used the 'auto' engine instead")


def test_uninstall_leaves_opted_in_modules_hooked(
    engine: str, library: Callable[[str], Any], write_module: WriteModule
) -> None:
    write_module("plainhooks", "def __setattr__(name, value):\n    raise AttributeError(name)\n")
    plain = importlib.import_module("plainhooks")
    module = library("optlib")
    assert pep726hook.engine(module) == engine
    pep726hook.uninstall()
    module.after_uninstall = 1
    assert module.log[-1] == ("set", "after_uninstall", 1)
    assert pep726hook.is_upgraded(module) and pep726hook.engine(module) == engine
    # A module that did not opt in loses its hooks under both engines.
    assert not pep726hook.is_upgraded(plain)
    plain.x = 1
    assert plain.x == 1


def test_install_after_enable_reuses_its_engine(
    opt_in_engine: str, library: Callable[[str], Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    module = library("optlib")
    monkeypatch.delenv("PEP726HOOK_ENGINE")
    with pep726hook.install() as installation:
        assert installation.engine == opt_in_engine
    assert pep726hook.install("auto").engine == opt_in_engine
    pep726hook.uninstall()
    module.still = 1
    assert module.log[-1] == ("set", "still", 1)


def test_install_after_enable_refuses_the_other_engine(
    opt_in_engine: str, library: Callable[[str], Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    other = "class" if opt_in_engine == "native" else "native"
    if other not in ENGINES:
        pytest.skip(
            f"only the {opt_in_engine} engine runs here; "
            "test_native_request_where_unavailable_says_why_even_after_an_opt_in covers it"
        )
    module = library("optlib")
    monkeypatch.delenv("PEP726HOOK_ENGINE")
    meta_path = list(sys.meta_path)
    with pytest.raises(pep726hook.EngineUnavailableError, match=r"enable\(\) \(optlib\)"):
        pep726hook.install(other)
    assert sys.meta_path == meta_path and not pep726hook.is_installed()
    module.still = 1
    assert module.log[-1] == ("set", "still", 1)


def test_conflict_message_names_a_few_opted_in_modules(opt_in_engine: str) -> None:
    other = "class" if opt_in_engine == "native" else "native"
    if other not in ENGINES:
        pytest.skip(f"the {other} engine is not available here")
    modules = [pep726hook.enable(types.ModuleType(f"many{i}")) for i in range(5)]
    with pytest.raises(
        pep726hook.EngineUnavailableError, match=r"\(many0, many1, many2 and 2 more\)"
    ):
        pep726hook.install(other)
    del modules
    _forget()


@pytest.mark.skipif(NATIVE, reason="the native engine runs here")
def test_native_request_where_unavailable_says_why_even_after_an_opt_in() -> None:
    module = pep726hook.enable(types.ModuleType("m"))
    with pytest.raises(pep726hook.EngineUnavailableError, match="native engine"):
        pep726hook.install("native")
    assert pep726hook.engine(module) == "class"


def test_enable_after_install_uses_the_installed_engine(
    engine: str, write_module: WriteModule, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = "class" if engine == "native" else "native"
    monkeypatch.setenv("PEP726HOOK_ENGINE", other)  # the active engine wins over the variable
    write_module("lateopt", LIBRARY)
    module = importlib.import_module("lateopt")
    assert pep726hook.engine(module) == engine
    module.x = 1
    assert module.log[-1] == ("set", "x", 1)


def test_class_engine_does_not_downgrade_an_opted_in_module_without_hooks(
    write_module: WriteModule,
) -> None:
    with pep726hook.install("class"):
        write_module("bare", "import pep726hook\npep726hook.enable(__name__)\n")
        module = importlib.import_module("bare")
        assert pep726hook.is_upgraded(module)  # the finder's settle() left it alone
    assert pep726hook.is_upgraded(module) and pep726hook.engine(module) == "class"


def test_last_opted_in_module_gone_lets_uninstall_release_the_native_patch(
    opt_in_engine: str, library: Callable[[str], Any], mortal_modules: None
) -> None:
    library("optlib")
    assert _native_patched() == (opt_in_engine == "native")
    pep726hook.uninstall()
    assert _native_patched() == (opt_in_engine == "native")  # still in use
    _forget("optlib")
    assert not _native_patched()
    assert _enable.opted_in_engine() is None
    with pep726hook.install("class"):  # free to choose again
        pass


def test_upgrade_accepts_opted_in_modules_and_names_enable_otherwise(
    opt_in_engine: str, library: Callable[[str], Any]
) -> None:
    module = library("optlib")
    assert pep726hook.upgrade(module) is module
    with pytest.raises(RuntimeError, match=r"not installed.*enable\(__name__\)"):
        pep726hook.upgrade(types.ModuleType("elsewhere"))


def test_own_class_runs_first_then_the_hook(opt_in_engine: str) -> None:
    calls: list[str] = []

    class Legacy(types.ModuleType):
        def __setattr__(self, name: str, value: object) -> None:
            calls.append(f"class {name}")
            super().__setattr__(name, value)

    module = Legacy("legacy")
    module.__dict__["__setattr__"] = lambda name, value: calls.append(f"hook {name}")
    pep726hook.enable(module)
    assert isinstance(module, Legacy)
    module.x = 1
    assert calls == ["class x", "hook x"]


def test_class_assigned_after_enable_keeps_the_hooks(opt_in_engine: str) -> None:
    class Later(types.ModuleType):
        pass

    module = types.ModuleType("later")
    pep726hook.enable(module)
    module.__class__ = Later  # no __setattr__ hook yet: a real class change
    assert isinstance(module, Later)
    calls: list[str] = []
    module.__dict__["__delattr__"] = calls.append
    del module.anything
    assert calls == ["anything"]


def test_threads_importing_opted_in_modules_concurrently(
    opt_in_engine: str, write_module: WriteModule
) -> None:
    names = [f"threadlib{i}" for i in range(6)]
    for name in names:
        write_module(name, LIBRARY)
    barrier = threading.Barrier(12)
    errors: list[BaseException] = []

    def worker(index: int) -> None:
        try:
            barrier.wait()
            module = importlib.import_module(names[index % len(names)])
            setattr(module, f"t{index}", index)
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(12)]
    for thread in threads:
        thread.start()
    join_or_fail(threads)
    assert not errors
    for index, name in enumerate(names):
        module = sys.modules[name]
        assert pep726hook.engine(module) == opt_in_engine
        stored = {entry[1] for entry in module.log}
        assert {f"t{index}", f"t{index + 6}", "during_body"} <= stored
    assert not our_finders()


def test_enable_races_install_and_uninstall(opt_in_engine: str) -> None:
    modules = [types.ModuleType(f"race{i}") for i in range(40)]
    stop = threading.Event()
    errors: list[BaseException] = []

    def toggle() -> None:
        try:
            while not stop.is_set():
                pep726hook.install()
                pep726hook.uninstall()
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)

    thread = threading.Thread(target=toggle)
    thread.start()
    try:
        for module in modules:
            pep726hook.enable(module)
    finally:
        stop.set()
        join_or_fail([thread])
    assert not errors
    pep726hook.uninstall()
    for module in modules:
        calls: list[str] = []
        module.__dict__["__setattr__"] = lambda name, value, calls=calls: calls.append(name)
        module.x = 1
        assert calls == ["x"], module
    del modules
    _forget()


# enable() holds the install lock inside a module body, under that module's
# import lock: nothing it does under the lock may wait for another import.
_WARNING_HANDLER_THAT_IMPORTS = """
import os, sys, threading, types, warnings
sys.path.insert(0, sys.argv[1])
events = types.ModuleType("waiting_events")
events.body_started = threading.Event()
events.warning_shown = threading.Event()
sys.modules["waiting_events"] = events
os.environ["PEP726HOOK_ENGINE"] = "bogus"
import pep726hook

def show(message, category, filename, lineno, file=None, line=None):
    events.warning_shown.set()
    import waiting_lib  # a handler that imports, as logging handlers may

warnings.showwarning = show
threading.Thread(target=lambda: __import__("waiting_lib"), daemon=True).start()
events.body_started.wait()
done = threading.Event()

def opt_in():
    pep726hook.enable(types.ModuleType("warned"))
    done.set()

threading.Thread(target=opt_in, daemon=True).start()
print("finished" if done.wait(20) else "deadlock")
sys.stdout.flush()
os._exit(0)
"""

_WAITING_LIB = """
import pep726hook, waiting_events
waiting_events.body_started.set()
waiting_events.warning_shown.wait()
pep726hook.enable(__name__)
"""


def test_enable_warns_only_after_releasing_the_install_lock(tmp_path: Path) -> None:
    write(tmp_path / "waiting_lib.py", _WAITING_LIB)
    result = run_fresh_python(_WARNING_HANDLER_THAT_IMPORTS, str(tmp_path), timeout=120)
    assert result.stdout.strip() == "finished", describe(result)


# Composing a class runs its metaclass and __init_subclass__: user code, which
# may import.  Under the install lock it would deadlock against a module body
# calling enable(), which holds its module's import lock: composing happens
# outside the install lock.
_COMPOSER_THAT_IMPORTS = """
import os, sys, threading, types
sys.path.insert(0, sys.argv[1])
mode, engine = sys.argv[2], sys.argv[3]
os.environ["PEP726HOOK_ENGINE"] = engine
events = types.ModuleType("composing_events")
events.armed = False
events.composing = threading.Event()
sys.modules["composing_events"] = events
import pep726hook

class Own(types.ModuleType):
    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if events.armed:
            events.composing.set()
            import composing_lib  # a registry that imports, as plugin systems may

own = Own("own_hooked")
own.__dict__["__setattr__"] = lambda name, value: None
sys.modules["own_hooked"] = own
events.armed = True
done = threading.Event()

def compose():
    if mode == "install":
        pep726hook.install(engine)
    else:
        pep726hook.enable(own)
    done.set()

threading.Thread(target=lambda: __import__("composing_lib"), daemon=True).start()
threading.Thread(target=compose, daemon=True).start()
print("finished" if done.wait(20) else "deadlock", pep726hook.is_upgraded(own))
sys.stdout.flush()
os._exit(0)
"""

_COMPOSING_LIB = """
import pep726hook, composing_events
composing_events.composing.wait()
pep726hook.enable(__name__)
"""


@pytest.mark.parametrize("engine_name", ENGINES)
@pytest.mark.parametrize("mode", ["install", "enable"])
def test_composing_a_class_whose_init_subclass_imports_never_deadlocks(
    tmp_path: Path, engine_name: str, mode: str
) -> None:
    write(tmp_path / "composing_lib.py", _COMPOSING_LIB)
    result = run_fresh_python(_COMPOSER_THAT_IMPORTS, str(tmp_path), mode, engine_name, timeout=120)
    assert result.stdout.strip() == "finished True", describe(result)


_FIRST_ENABLE_RACES_INSTALL = """
import sys, threading
sys.path.insert(0, sys.argv[1])
import pep726hook
errors, stop = [], threading.Event()

def toggle():
    try:
        while not stop.is_set():
            pep726hook.install()
            pep726hook.uninstall()
    except BaseException as error:
        errors.append(error)

def load(i):
    try:
        __import__(f"first_enable{i}")
    except BaseException as error:
        errors.append(error)

togglers = [threading.Thread(target=toggle, daemon=True) for _ in range(2)]
loaders = [threading.Thread(target=load, args=(i,), daemon=True) for i in range(8)]
for thread in togglers + loaders:
    thread.start()
for thread in loaders:
    thread.join(60)
stop.set()
for thread in togglers:
    thread.join(60)
hung = [thread.name for thread in togglers + loaders if thread.is_alive()]
print("hung:", hung, "errors:", errors[:3])
"""


def test_first_enable_calls_race_install_and_uninstall_in_a_fresh_process(
    tmp_path: Path,
) -> None:
    # The first enable() imports pep726hook._enable; install()/uninstall() in
    # other threads saw it half initialised and failed (and must not deadlock).
    for i in range(8):
        write(tmp_path / f"first_enable{i}.py", LIBRARY)
    for _round in range(3):
        result = run_fresh_python(_FIRST_ENABLE_RACES_INSTALL, str(tmp_path), timeout=180)
        assert result.stdout.strip() == "hung: [] errors: []", describe(result)


def test_install_and_uninstall_ignore_the_enable_module_while_it_initialises() -> None:
    # The same race, deterministic: another thread is still running
    # pep726hook._enable's body.
    half_done = types.ModuleType(_enable.__name__)
    half_done.__spec__ = importlib.util.spec_from_loader(_enable.__name__, loader=None)
    half_done.__spec__._initializing = True  # type: ignore[union-attr]
    attributes = set(vars(half_done))
    real = sys.modules[_enable.__name__]
    sys.modules[_enable.__name__] = half_done
    try:
        with pep726hook.install() as installation:
            assert installation.installed_now
            assert pep726hook.engine() == ENGINES[0]
        assert not pep726hook.is_installed()
    finally:
        sys.modules[_enable.__name__] = real
    assert set(vars(half_done)) == attributes  # neither read as opt-ins nor written to


# ---- in a fresh process: plain python, the runner, PEP726HOOK=1, pytest ----

_PACKAGE = {
    "optpkg/__init__.py": LIBRARY,
    "check.py": """
        import sys
        import optpkg
        try:
            optpkg.dps = 50
        except AttributeError as error:
            print("guarded:", error)
        optpkg.x = 1
        print("finders:", [type(f).__name__ for f in sys.meta_path if "Pep726" in type(f).__name__])
        import pep726hook
        print("engine:", pep726hook.engine(optpkg), "installed:", pep726hook.is_installed())
        print("plain class:", type(optpkg) is type(sys))
    """,
    "test_uses_optpkg.py": """
        import pytest
        import optpkg

        def test_the_guard_is_live():
            with pytest.raises(AttributeError, match="dps"):
                optpkg.dps = 50
    """,
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    for relative, source in _PACKAGE.items():
        write(tmp_path / relative, source)
    return tmp_path


@pytest.mark.parametrize(
    "route",
    ["plain", "runner", "PEP726HOOK=1"],
)
def test_opted_in_package_is_guarded_however_python_starts(
    venv: Venv, venv_engine: str, project: Path, route: str
) -> None:
    env = {"PEP726HOOK_ENGINE": venv_engine, "PYTHONPATH": str(project)}
    args = [str(project / "check.py")]
    if route == "runner":
        args = ["-m", "pep726hook", *args]
    elif route == "PEP726HOOK=1":
        env["PEP726HOOK"] = "1"
    out = venv.check_python(args, env=env, cwd=project).splitlines()
    assert out[0] == "guarded: set optpkg.mp.dps instead"
    hooked = route != "plain"
    assert out[1] == (
        "finders: ['Pep726Finder']" if hooked and venv_engine == "class" else "finders: []"
    )
    assert out[2] == f"engine: {venv_engine} installed: {hooked}"
    assert out[3] == f"plain class: {venv_engine == 'native'}"


@pytest.mark.parametrize("option", [[], ["--pep726hook"]])
def test_opted_in_package_is_guarded_under_pytest(
    venv: Venv, venv_engine: str, project: Path, option: list[str]
) -> None:
    env = {"PEP726HOOK_ENGINE": venv_engine, "PYTHONPATH": str(project)}
    result = venv.run_python(
        ["-m", "pytest", "-q", "-p", "no:cacheprovider", *option, "test_uses_optpkg.py"],
        env=env,
        cwd=project,
    )
    assert result.returncode == 0, describe(result)
    assert "1 passed" in result.stdout

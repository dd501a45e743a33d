"""Native-engine specifics: what patching the module type's slot runs into.

The shared semantics run under every engine in the other test files; here are
the cases only a slot patch can get wrong: typeobject.c's hackcheck, ModuleType
subclasses made before and after the patch, sub-interpreters, restoring the
type dict, re-entrancy and memory safety.
"""

from __future__ import annotations

import gc
import importlib.util
import json
import os
import subprocess
import sys
import textwrap
import types
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

import pep726hook
from pep726hook import EngineUnavailableError, _native_engine

pytestmark = pytest.mark.skipif(
    "native" not in pep726hook.available_engines(),
    reason=f"native engine unavailable: {_native_engine.unavailable_reason()}",
)

ModuleType = types.ModuleType
SRC = str(Path(pep726hook.__file__).resolve().parent.parent)
_MISSING = object()
# Stores that find a namespace without hooks often enough for the native
# engine to remember it (3.12+ watch a namespace after a few such stores).
HOOKLESS_STORES = 20


@pytest.fixture
def native() -> Iterator[None]:
    """The native engine, installed for the duration of the test."""
    with pep726hook.install("native"):
        yield


def hooked_module(
    name: str = "hooked", log: list[Any] | None = None, cls: type = ModuleType
) -> Any:
    """Return a module of class *cls* whose hooks append to *log*."""
    module = cls(name)
    record = [] if log is None else log
    module.__dict__["__setattr__"] = lambda n, v: record.append(("set", n, v))
    module.__dict__["__delattr__"] = lambda n: record.append(("del", n))
    return module


def run_python(code: str) -> subprocess.CompletedProcess[str]:
    """Run *code* in a fresh interpreter with our sources importable."""
    env = dict(os.environ, PYTHONPATH=SRC)
    env.pop("PEP726HOOK", None)
    env.pop("PEP726HOOK_ENGINE", None)
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


# --- the design in use -------------------------------------------------------


def test_slot_design_matches_the_version(native: None) -> None:
    from pep726hook import _native

    state = _native.state()
    assert state == {
        "patched": True,
        "owner_is_current": True,
        "main": True,
        "entries": True,
        # The direct slot everywhere; before 3.13 hackcheck() needs the guard
        # around the slot wrappers' calls (checked below).
        "direct": True,
        "call_guard": sys.version_info < (3, 13),
        # install() without arguments is the process-wide hook.
        "process_wide": True,
        "opted_in": 0,
        # No module holds a __getattr__ outside: the read slot is CPython's.
        "getattro_wrapped": False,
        "relocating": 0,
    }


def test_module_classes_stay_exactly_module_type(native: None) -> None:
    # Reads keep CPython 3.11+'s LOAD_ATTR specialisation, which needs
    # type(m) is ModuleType ("CPython performance facts").
    module = hooked_module()
    module.x = 1
    assert type(module) is ModuleType
    assert type(sys) is ModuleType


def test_every_module_reaches_the_hooks_without_a_finder(native: None) -> None:
    log: list[Any] = []
    module = hooked_module(log=log)
    module.a = 1
    setattr(module, "b", 2)
    del module.c
    delattr(module, "d")
    assert log == [("set", "a", 1), ("set", "b", 2), ("del", "c"), ("del", "d")]
    assert pep726hook.is_upgraded(module)
    assert pep726hook.is_upgraded(sys)


# --- hackcheck -----------------------------------------------------------------


def _subclass_calling_super() -> type:
    # The shape of mpmath 1.4.1's guard class.
    class Guard(ModuleType):
        calls: list[str] = []  # noqa: RUF012

        def __setattr__(self, name: str, value: Any) -> None:
            type(self).calls.append(f"guard set {name}")
            super().__setattr__(name, value)

        def __delattr__(self, name: str) -> None:
            type(self).calls.append(f"guard del {name}")
            super().__delattr__(name)

    return Guard


@pytest.mark.parametrize("when", ["before", "after"])
def test_subclass_super_setattr_reaches_the_module_hook_after_the_subclass(when: str) -> None:
    guard = _subclass_calling_super() if when == "before" else None
    with pep726hook.install("native"):
        if guard is None:
            guard = _subclass_calling_super()
        module = hooked_module(cls=guard, log=guard.calls)
        module.x = 1
        del module.x
        # The MRO rule: the subclass runs first, the hook at ModuleType level.
        assert guard.calls == ["guard set x", ("set", "x", 1), "guard del x", ("del", "x")]
        plain = guard("plain")
        plain.y = 2
        del plain.y
        assert "y" not in plain.__dict__


@pytest.mark.parametrize("when", ["before", "after"])
def test_object_setattr_does_a_plain_store_bypassing_hooks(when: str) -> None:
    classes: list[type] = [ModuleType]
    if when == "before":
        classes += [type("Pre", (ModuleType,), {}), _subclass_calling_super()]
    with pep726hook.install("native"):
        if when == "after":
            classes += [type("Post", (ModuleType,), {}), _subclass_calling_super()]
        for cls in classes:
            log: list[Any] = []
            module = hooked_module(cls=cls, log=log)
            # On 3.8-3.12 this raised "can't apply this __setattr__ to module
            # object" with a naive C slot (hackcheck).
            object.__setattr__(module, "x", 1)
            assert module.__dict__["x"] == 1
            object.__delattr__(module, "x")
            assert "x" not in module.__dict__
            object.__setattr__(module, "__class__", cls)
            assert log == [], cls


def test_module_type_setattr_called_directly_calls_the_hook(native: None) -> None:
    log: list[Any] = []
    module = hooked_module(log=log)
    ModuleType.__setattr__(module, "x", 1)
    ModuleType.__delattr__(module, "x")
    assert log == [("set", "x", 1), ("del", "x")]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: ModuleType.__setattr__(1, "x", 1), "module"),  # type: ignore[arg-type]
        (lambda: ModuleType.__setattr__(sys, 1, 1), "attribute name must be string"),  # type: ignore[arg-type]
        (lambda: ModuleType.__delattr__(sys, 1), "attribute name must be string"),  # type: ignore[arg-type]
        (lambda: ModuleType.__setattr__(sys, "x"), "expected 2 arguments"),  # type: ignore[call-arg]
        (lambda: ModuleType.__delattr__(sys, "x", 1), "expected 1 argument"),  # type: ignore[call-arg]
        # A lambda so the attribute is read once installed, not at collection.
        (lambda: ModuleType.__setattr__(), "module"),  # noqa: PLW0108
    ],
)
def test_bad_calls_of_the_descriptors_raise_type_error(
    native: None, call: Callable[[], object], message: str
) -> None:
    with pytest.raises(TypeError, match=message):
        call()


def test_lazy_loader_works_and_the_module_gets_hooks(
    native: None, write_module: Callable[..., Path]
) -> None:
    # 3.12.3+ LazyLoader assigns __class__ with object.__setattr__ (hackcheck).
    write_module(
        "lazy_hooked",
        """
        seen = []
        def __setattr__(name, value):
            seen.append(name)
        """,
    )
    spec = importlib.util.find_spec("lazy_hooked")
    assert spec is not None and spec.loader is not None
    loader = importlib.util.LazyLoader(spec.loader)
    spec.loader = loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["lazy_hooked"] = module
    loader.exec_module(module)
    assert module.seen == []
    module.x = 1
    assert module.seen == ["x"]
    assert type(module) is ModuleType


# --- subclasses made before / after the patch -----------------------------------


def test_subclasses_before_and_after_the_patch_get_hooks_and_lose_them_on_uninstall() -> None:
    class Before(ModuleType):
        pass

    class BeforeChild(Before):
        pass

    installation = pep726hook.install("native")
    try:

        class After(ModuleType):
            pass

        classes = [ModuleType, Before, BeforeChild, After]
        for cls in classes:
            log: list[Any] = []
            module = hooked_module(cls=cls, log=log)
            module.x = 1
            del module.y
            assert log == [("set", "x", 1), ("del", "y")], cls
            assert pep726hook.is_upgraded(module)
    finally:
        installation.__exit__(None, None, None)
    for cls in classes:
        log = []
        module = hooked_module(cls=cls, log=log)
        module.x = 1
        del module.x
        assert log == [], cls
        assert module.__dict__.get("x", _MISSING) is _MISSING


def test_upgrade_is_harmless_for_every_kind_of_module(native: None) -> None:
    for cls in (ModuleType, type("Sub", (ModuleType,), {}), _subclass_calling_super()):
        plain = cls("plain")
        assert pep726hook.upgrade(plain) is plain
        assert pep726hook.is_upgraded(plain)
        plain.x = 1
        del plain.x
        plain.y = 2
        assert type(plain) is cls
        assert plain.__dict__["y"] == 2
        assert "x" not in plain.__dict__
        log: list[Any] = []
        hooked = hooked_module(cls=cls, log=log)
        assert pep726hook.upgrade(hooked) is hooked
        hooked.x = 1
        del hooked.y
        assert log == [("set", "x", 1), ("del", "y")], cls


# --- restoring the type ------------------------------------------------------


def test_uninstall_restores_the_module_type_dict_exactly() -> None:
    before = {
        name: type(sys).__dict__.get(name, _MISSING) for name in ("__setattr__", "__delattr__")
    }
    for _ in range(2):
        with pep726hook.install("native"):
            during = type(sys).__dict__["__setattr__"]
            assert during is not before["__setattr__"]
            assert type(during).__name__ == "module_hook_descriptor"
        after = {name: type(sys).__dict__.get(name, _MISSING) for name in before}
        assert after == before
        assert all(after[name] is before[name] for name in before)
    assert not pep726hook.is_upgraded(sys)
    log: list[Any] = []
    module = hooked_module(log=log)
    module.x = 1
    assert log == []


def test_install_twice_and_uninstall_twice_are_harmless() -> None:
    from pep726hook import _native

    log: list[Any] = []
    module = hooked_module(log=log)
    with pep726hook.install("native"):
        _native.install()
        assert _native.state()["patched"]
        module.x = 1
        assert log == [("set", "x", 1)]
    _native.uninstall()
    assert not _native.state()["patched"]
    assert not _native.state()["entries"]
    module.y = 2
    assert log == [("set", "x", 1)]
    assert module.__dict__["y"] == 2


def test_class_engine_is_refused_on_a_patch_that_install_does_not_know_of() -> None:
    # The module type patched as the .pth start-up does, with no installation
    # recorded: the class engine, which asks the module type's dict before it
    # would load the extension, must still refuse to run hooks on top of it.
    from pep726hook import _engines, _native

    _native.install()
    try:
        with pytest.raises(EngineUnavailableError, match="cannot be used on top of it"):
            _engines.create_engine("class")
    finally:
        _native.uninstall()
    assert _engines.create_engine("class").name == "class"


# --- re-entrancy and hooks that change the namespace ----------------------------


def test_hook_storing_on_its_own_module_raises_recursion_error(
    native: None, write_module: Callable[..., Path]
) -> None:
    write_module(
        "self_storing",
        """
        import sys
        def __setattr__(name, value):
            setattr(sys.modules[__name__], name, value)
        def __delattr__(name):
            delattr(sys.modules[__name__], name)
        """,
    )
    import self_storing  # type: ignore[import-not-found]

    with pytest.raises(RecursionError):
        self_storing.x = 1
    with pytest.raises(RecursionError):
        del self_storing.x
    # The interpreter is still fine afterwards.
    self_storing.__dict__.pop("__setattr__")
    self_storing.x = 2
    assert self_storing.x == 2


def test_deep_recursion_in_a_subprocess_does_not_crash() -> None:
    result = run_python(
        """
        import sys, types, pep726hook
        pep726hook.install("native")
        m = types.ModuleType("m")
        m.__dict__["__setattr__"] = lambda n, v: setattr(m, n, v)
        m.__dict__["__delattr__"] = lambda n: delattr(m, n)
        for action in (lambda: setattr(m, "x", 1), lambda: delattr(m, "x")):
            try:
                action()
            except RecursionError:
                print("RecursionError")
        """
    )
    assert result.stdout.split() == ["RecursionError"] * 2, result.stderr


def test_exception_from_the_hook_propagates_unchanged(native: None) -> None:
    module = ModuleType("m")
    error = AttributeError("Read-only attribute")

    def refuse(*args: object) -> None:
        raise error

    module.__dict__["__setattr__"] = refuse
    module.__dict__["__delattr__"] = refuse
    with pytest.raises(AttributeError) as caught:
        module.x = 1
    assert caught.value is error
    with pytest.raises(AttributeError) as caught:
        del module.x
    assert caught.value is error
    assert "x" not in module.__dict__


@pytest.mark.parametrize("hook", [None, "not callable", 42])
def test_hook_present_but_not_callable_is_a_type_error(native: None, hook: object) -> None:
    module = ModuleType("m")
    module.__dict__["__setattr__"] = hook
    module.__dict__["__delattr__"] = hook
    with pytest.raises(TypeError):
        module.x = 1
    with pytest.raises(TypeError):
        del module.x


def test_hook_with_wrong_arity_is_a_type_error(native: None) -> None:
    module = ModuleType("m")
    module.__dict__["__setattr__"] = lambda name: None
    module.__dict__["__delattr__"] = lambda: None
    with pytest.raises(TypeError):
        module.x = 1
    with pytest.raises(TypeError):
        del module.x


def test_hook_deleting_itself_while_it_runs(native: None) -> None:
    module = ModuleType("m")
    namespace = module.__dict__
    calls = []

    def once(name: str, value: object) -> None:
        calls.append(name)
        del namespace["__setattr__"]
        gc.collect()
        namespace[name] = value

    namespace["__setattr__"] = once
    del once
    module.x = 1
    module.y = 2
    assert calls == ["x"]
    assert (module.x, module.y) == (1, 2)


def test_hook_clearing_or_replacing_the_namespace_while_it_runs(native: None) -> None:
    module = ModuleType("m")
    namespace = module.__dict__

    def clearing(name: str, value: object) -> None:
        namespace.clear()
        gc.collect()

    def replacing(name: str) -> None:
        saved = dict(namespace)
        namespace.clear()
        namespace.update(saved, replaced=True)
        namespace.pop("__delattr__")
        namespace["__delattr__"] = lambda n: namespace.setdefault("deleted", n)

    namespace["__setattr__"] = clearing
    namespace["__delattr__"] = replacing
    del clearing, replacing
    module.x = 1
    assert namespace == {}
    module.y = 2
    assert namespace == {"y": 2}
    namespace["__delattr__"] = lambda n: namespace.clear()
    del module.y
    assert namespace == {}


def test_hook_replacing_the_namespace_keys_during_deletion(native: None) -> None:
    module = ModuleType("m")
    namespace = module.__dict__

    def replacing(name: str) -> None:
        saved = dict(namespace)
        namespace.clear()
        namespace.update(saved)
        namespace["__delattr__"] = lambda n: namespace.setdefault("deleted", n)

    namespace["__delattr__"] = replacing
    del replacing
    del module.a
    del module.b
    assert namespace["deleted"] == "b"


# --- memory safety ----------------------------------------------------------


def _store_and_delete(module: Any, value: object, count: int) -> None:
    for _ in range(count):
        module.attribute = value
        del module.attribute


def test_a_million_stores_and_deletes_leak_nothing(native: None) -> None:
    count = 10**6
    hooked = ModuleType("hooked")
    sink: dict[str, object] = {}

    def store(name: str, value: object) -> None:
        sink[name] = value

    def delete(name: str) -> None:
        del sink[name]

    hooked.__dict__["__setattr__"] = store
    hooked.__dict__["__delattr__"] = delete
    unhooked = ModuleType("unhooked")
    value = object()
    for module in (hooked, unhooked):
        _store_and_delete(module, value, 1000)  # warm caches before measuring
    gc.collect()
    references = sys.getrefcount(value)
    tracemalloc = pytest.importorskip("tracemalloc")  # PyPy has none; native is CPython only
    tracemalloc.start()
    try:
        start, _ = tracemalloc.get_traced_memory()
        for module in (hooked, unhooked):
            _store_and_delete(module, value, count)
        gc.collect()
        end, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert sys.getrefcount(value) == references
    assert end - start < 64 * 1024
    assert sink == {}
    assert "attribute" not in unhooked.__dict__


def test_refcounts_of_names_values_and_hooks_are_unchanged(native: None) -> None:
    module = ModuleType("m")
    value = object()
    # Interned up front: setattr() interns names, which would count as a change.
    name = sys.intern("".join(["some", "_name"]))

    def hook(*args: object) -> None:
        pass

    module.__dict__["__setattr__"] = hook
    module.__dict__["__delattr__"] = hook

    def exercise(times: int) -> None:
        for _ in range(times):
            setattr(module, name, value)
            delattr(module, name)
            ModuleType.__setattr__(module, name, value)
            ModuleType.__delattr__(module, name)
            object.__setattr__(module, name, value)
            object.__delattr__(module, name)

    # The first round may leave *name* in CPython's type attribute cache.
    exercise(1)
    counts = [sys.getrefcount(obj) for obj in (value, name, hook)]
    exercise(1000)
    assert [sys.getrefcount(obj) for obj in (value, name, hook)] == counts


# --- engine selection -------------------------------------------------------


def test_asking_for_native_where_unavailable_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_native_engine, "_native_error", ImportError("no module named _native"))
    assert pep726hook.available_engines() == ("class",)
    with pytest.raises(EngineUnavailableError) as caught:
        pep726hook.install("native")
    assert "C extension pep726hook._native cannot be loaded: no module named _native" in str(
        caught.value
    )
    with pep726hook.install("auto") as installation:
        assert installation.engine == "class"


def test_auto_prefers_native(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PEP726HOOK_ENGINE", raising=False)
    with pep726hook.install() as installation:
        assert installation.engine == "native"


# --- sub-interpreters ----------------------------------------------------------

SUBINTERPRETER_PROBE = """
import json, sys, types
sys.path.insert(0, {src!r})
result = {{}}
try:
    import pep726hook
    from pep726hook import _native_engine
    result["reason"] = _native_engine.unavailable_reason()
    result["available"] = list(pep726hook.available_engines())
    try:
        pep726hook.install("class")
        result["class"] = "installed"
        pep726hook.uninstall()
    except pep726hook.EngineUnavailableError as error:
        result["class"] = str(error)
    try:
        installation = pep726hook.install("native")
    except pep726hook.EngineUnavailableError as error:
        result["native"] = str(error)
        installation = pep726hook.install("auto")
    result["engine"] = installation.engine
    log = []
    m = types.ModuleType("m")
    m.__dict__["__setattr__"] = lambda n, v: log.append(n)
    pep726hook.upgrade(m)
    m.x = 1
    object.__setattr__(m, "y", 2)
    result["hooked"] = log == ["x"] and m.__dict__.get("y") == 2
    pep726hook.uninstall()
    log.clear()
    m.z = 3
    result["after_uninstall_hooked"] = log == ["z"]
except BaseException as error:
    result["error"] = repr(error)
with open({out!r}, "w") as file:
    json.dump(result, file)
"""

SUBINTERPRETER_DRIVER = """
import json, sys, types
sys.path.insert(0, {src!r})
import pep726hook
kind, main_installs = sys.argv[1], sys.argv[2] == "1"
if main_installs:
    pep726hook.install("native")
code = {probe!r}
if kind == "legacy":
    import _testcapi
    _testcapi.run_in_subinterp(code)
else:
    try:
        import _interpreters as interpreters
    except ImportError:
        import _xxsubinterpreters as interpreters
    interp = interpreters.create()
    try:
        interpreters.run_string(interp, code)
    finally:
        interpreters.destroy(interp)
log = []
m = types.ModuleType("m")
m.__dict__["__setattr__"] = lambda n, v: log.append(n)
m.x = 1
print(json.dumps({{"main_hooked": log == ["x"], "engine": pep726hook.engine()}}))
"""


def _run_in_subinterpreter(tmp_path: Path, kind: str, main_installs: bool) -> dict[str, Any]:
    out = tmp_path / f"{kind}-{int(main_installs)}.json"
    probe = SUBINTERPRETER_PROBE.format(src=SRC, out=str(out))
    driver = SUBINTERPRETER_DRIVER.format(src=SRC, probe=probe)
    env = dict(os.environ, PYTHONPATH=SRC)
    env.pop("PEP726HOOK", None)
    env.pop("PEP726HOOK_ENGINE", None)
    completed = subprocess.run(
        [sys.executable, "-c", driver, kind, "1" if main_installs else "0"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    main = json.loads(completed.stdout.strip().splitlines()[-1])
    sub: dict[str, Any] = json.loads(out.read_text())
    sub["main"] = main
    return sub


def _kinds() -> list[str]:
    kinds: list[str] = []
    if sys.implementation.name != "cpython":
        # PyPy builds _testcapi from C source on first import; no native engine there.
        return kinds
    try:
        import _testcapi

        if hasattr(_testcapi, "run_in_subinterp"):
            kinds.append("legacy")
    except ImportError:
        pass
    for name in ("_interpreters", "_xxsubinterpreters"):
        if importlib.util.find_spec(name) is not None:
            kinds.append("isolated")
            break
    return kinds


def _own_gil(kind: str) -> bool:
    # interpreters.create() gives a sub-interpreter its own GIL from 3.12 on,
    # and the extension refuses to load there.
    return kind == "isolated" and sys.version_info >= (3, 12)


@pytest.mark.parametrize("kind", _kinds())
def test_subinterpreter_attaches_to_the_main_interpreters_patch(tmp_path: Path, kind: str) -> None:
    result = _run_in_subinterpreter(tmp_path, kind, main_installs=True)
    assert "error" not in result, result
    assert result["main"] == {"main_hooked": True, "engine": "native"}
    assert result["hooked"] is True
    if _own_gil(kind):
        assert "cannot be loaded" in result["reason"]
        assert result["engine"] == "class"
        assert result["available"] == ["class"]
        return
    assert result["reason"] is None
    assert result["engine"] == "native"
    assert result["available"] == ["native", "class"]
    # Never two engines in one process.
    assert "class engine cannot be used on top of it" in result["class"]
    # Detaching the sub-interpreter leaves the main interpreter's patch alone
    # (checked by main_hooked above).  The slot stays patched process-wide:
    # before 3.12 all interpreters share the type dict; from 3.12 on the
    # sub-interpreter, created while patched, got the hooks in its own type
    # dict from the start (3.12: tp_methods; 3.13: wrappers around the
    # direct slot), and uninstall() puts back what it had before install().
    assert result["after_uninstall_hooked"] is True


@pytest.mark.parametrize("kind", _kinds())
def test_subinterpreter_cannot_install_native_before_the_main_interpreter(
    tmp_path: Path, kind: str
) -> None:
    result = _run_in_subinterpreter(tmp_path, kind, main_installs=False)
    assert "error" not in result, result
    assert result["main"] == {"main_hooked": False, "engine": None}
    assert result["engine"] == "class"
    assert result["class"] == "installed"
    assert result["hooked"] is True
    assert result["after_uninstall_hooked"] is False
    if _own_gil(kind):
        assert "cannot be loaded" in result["native"]
    else:
        assert "only the main interpreter can install it" in result["native"]


# --- uninstall leaves classes with their own __setattr__ alone -----------------


@pytest.mark.parametrize("when", ["before", "during"])
def test_uninstall_keeps_python_level_setattr_of_subclasses(when: str) -> None:
    guard = _subclass_calling_super() if when == "before" else None
    with pep726hook.install("native"):
        if guard is None:
            guard = _subclass_calling_super()

        class Child(guard):  # type: ignore[valid-type,misc]
            pass

    for cls in (guard, Child):
        guard.calls.clear()
        module = cls("m")
        module.x = 1
        del module.x
        assert guard.calls == ["guard set x", "guard del x"], cls
        assert "x" not in module.__dict__


@pytest.mark.skipif(
    importlib.util.find_spec("test.support") is None or "legacy" not in _kinds(),
    reason="needs test.support and _testcapi.run_in_subinterp",
)
def test_cpython_test_support_run_in_subinterp_survives_the_patch() -> None:
    # _testcapi.run_in_subinterp creates the interpreter with no thread state;
    # on 3.12 the new interpreter must not build its ModuleType dict from the
    # patched slot alone (docs/native-engine.md).  First use, with _testcapi
    # not yet imported.
    result = run_python(
        """
        import types, pep726hook
        pep726hook.install("native")
        from test import support
        print(support.run_in_subinterp("import sys, types; types.ModuleType('m').x = 1"))
        m = types.ModuleType("m")
        log = []
        m.__dict__["__setattr__"] = lambda n, v: log.append(n)
        m.a = 1
        print(log)
        """
    )
    assert result.stdout.split() == ["0", "['a']"], result.stderr


def test_module_type_hook_methods_keep_their_signatures(native: None) -> None:
    # inspect.signature() of the slot wrappers they replace works (CPython's
    # test_inspect test_types_module_has_signatures).
    import inspect

    assert str(inspect.signature(ModuleType.__setattr__)) == "(self, name, value, /)"
    assert str(inspect.signature(ModuleType.__delattr__)) == "(self, name, /)"


def test_module_type_hook_methods_look_like_method_descriptors(native: None) -> None:
    import inspect

    log: list[Any] = []
    module = hooked_module(log=log)
    for name, args in (("__setattr__", ("x", 1)), ("__delattr__", ("x",))):
        method = getattr(ModuleType, name)
        assert method.__name__ == name
        assert method.__qualname__ == f"module.{name}"
        assert method.__objclass__ is ModuleType
        assert repr(method) == f"<method '{name}' of 'module' objects>"
        assert "PEP 726" in (method.__doc__ or "")
        assert inspect.ismethoddescriptor(method)
        assert method.__reduce__() == (getattr, (ModuleType, name))
        assert method.__get__(None, ModuleType) is method
        getattr(module, name)(*args)
        with pytest.raises(TypeError, match="doesn't apply to a 'int' object"):
            method.__get__(1, int)
        with pytest.raises(TypeError, match="takes no keyword arguments"):
            method(module, *args, extra=1)
    assert log == [("set", "x", 1), ("del", "x")]
    assert str(inspect.signature(ModuleType("plain").__setattr__)) == "(name, value, /)"


# --- the call guard around object.__setattr__ (3.8-3.12) -----------------------


class _PythonSetattr(ModuleType):
    def __setattr__(self, name: str, value: Any) -> None:
        super().__setattr__(name, value)


class _PythonSetattrSkippingModuleType(ModuleType):
    def __setattr__(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)


_PRE_INSTALL = type("PreInstall", (ModuleType,), {})
_WRAPPER_CALL = type(object.__setattr__).__call__
_METHOD_WRAPPER_CALL = type(object().__setattr__).__call__
_ORIGINAL_MODULE_SETATTR = vars(ModuleType).get("__setattr__")


def _outcome(action: Callable[[], Any]) -> tuple[str, str]:
    try:
        result = action()
    except Exception as error:
        return type(error).__name__, str(error)
    return "ok", repr(result)


def _guarded_calls(post_install: type) -> dict[str, tuple[str, str]]:
    """Every way a slot wrapper of the generic store reaches a module, and its outcome."""
    import functools

    outcomes: dict[str, tuple[str, str]] = {}
    classes: dict[str, type] = {
        "module": ModuleType,
        "pre": _PRE_INSTALL,
        "post": post_install,
        "python_setattr": _PythonSetattr,
        "skipping": _PythonSetattrSkippingModuleType,
    }
    for label, cls in classes.items():
        calls: dict[str, Callable[[Any], Any]] = {
            "set": lambda m: object.__setattr__(m, "x", 1),
            "set_then_read": lambda m: (object.__setattr__(m, "x", 2), m.__dict__["x"]),
            "del": lambda m: (object.__setattr__(m, "x", 1), object.__delattr__(m, "x")),
            "del_missing": lambda m: object.__delattr__(m, "missing"),
            "set_class": lambda m: object.__setattr__(m, "__class__", type(m)),
            "super_set": lambda m: super(ModuleType, m).__setattr__("x", 1),
            "super_del": lambda m: (m.__dict__.update(x=1), super(ModuleType, m).__delattr__("x")),
            "partial": lambda m: functools.partial(object.__setattr__, m)("x", 1),
            "partial_bound": lambda m: functools.partial(super(ModuleType, m).__setattr__)("x", 1),
            "wrapper_call": lambda m: _WRAPPER_CALL(object.__setattr__, m, "x", 1),
            "wrapper_call_twice": lambda m: _WRAPPER_CALL(
                _WRAPPER_CALL, object.__delattr__, m, "x"
            ),
            "bound_call": lambda m: object.__setattr__.__call__(m, "x", 1),
            "method_wrapper_call": lambda m: _METHOD_WRAPPER_CALL(
                super(ModuleType, m).__setattr__, "x", 1
            ),
            "module_type_original": lambda m: (
                _ORIGINAL_MODULE_SETATTR(m, "x", 1) if _ORIGINAL_MODULE_SETATTR else None
            ),
            "empty_kwargs": lambda m: object.__setattr__(m, "x", 1, **{}),
            "name_not_str": lambda m: object.__setattr__(m, 1, 2),
            "del_name_not_str": lambda m: object.__delattr__(m, 1),
            "too_few": lambda m: object.__setattr__(m, "x"),
            "too_many": lambda m: object.__setattr__(m, "x", 1, 2),
            "self_only": object.__setattr__,
            "del_too_many": lambda m: object.__delattr__(m, "x", "y"),
            "del_too_few": object.__delattr__,
            "keywords": lambda m: object.__setattr__(m, "x", value=1),
            "del_keywords": lambda m: object.__delattr__(m, name="x"),
            "super_too_few": lambda m: super(ModuleType, m).__setattr__("x"),
            "super_keywords": lambda m: super(ModuleType, m).__setattr__("x", value=1),
            "partial_keywords": lambda m: functools.partial(object.__setattr__, m, "x")(v=1),
            "wrapper_call_no_self": lambda m: _WRAPPER_CALL(object.__setattr__),
            "wrapper_call_bad_self": lambda m: _WRAPPER_CALL(m, m, "x", 1),
        }
        for name, call in calls.items():
            module = cls(f"m_{label}")
            module.__dict__["__setattr__"] = lambda n, v: None
            outcomes[f"{label}/{name}"] = _outcome(lambda call=call, module=module: call(module))
    # The same slot wrappers on other objects and types, and other wrappers.
    plain = types.SimpleNamespace()
    outcomes["namespace"] = _outcome(lambda: object.__setattr__(plain, "x", 1))
    outcomes["type"] = _outcome(lambda: object.__setattr__(int, "x", 1))
    outcomes["type_del"] = _outcome(lambda: object.__delattr__(int, "real"))
    outcomes["no_self"] = _outcome(object.__setattr__)
    outcomes["not_applicable"] = _outcome(lambda: ModuleType.__init__(plain, "x"))
    outcomes["other_wrapper"] = _outcome(lambda: int.__add__(1, 2))
    outcomes["other_bound"] = _outcome(lambda: (1).__add__(2))
    return outcomes


def _post_install_class() -> type:
    return type("PostInstall", (ModuleType,), {})


def test_slot_wrappers_on_modules_behave_as_without_the_engine() -> None:
    # The direct slot makes CPython 3.8-3.12's hackcheck reject every module;
    # the guard around the two tp_calls must accept and reject exactly what an
    # unpatched interpreter does, with the same messages.
    plain = _guarded_calls(_post_install_class())
    with pep726hook.install("native"):
        patched = _guarded_calls(_post_install_class())
    after = _guarded_calls(_post_install_class())
    assert patched == plain
    assert after == plain
    assert plain["module/set"] == ("ok", "None")
    assert plain["module/too_few"][0] == "TypeError"


def test_object_setattr_on_a_module_does_not_call_its_hook(native: None) -> None:
    log: list[Any] = []
    for cls in (ModuleType, _PRE_INSTALL, _post_install_class()):
        module = hooked_module(cls=cls, log=log)
        object.__setattr__(module, "x", 1)
        super(ModuleType, module).__setattr__("y", 2)
        object.__delattr__(module, "x")
        assert module.__dict__["y"] == 2
        assert "x" not in module.__dict__
    assert log == []


def _tp_call(cls: type) -> int:
    import ctypes

    # PyTypeObject on a 64-bit release build: tp_call is the 17th pointer.
    return ctypes.c_void_p.from_address(id(cls) + 16 * ctypes.sizeof(ctypes.c_void_p)).value or 0


@pytest.mark.skipif(
    hasattr(sys, "gettotalrefcount") or sys.maxsize < 2**32,
    reason="reads PyTypeObject.tp_call at its 64-bit release-build offset",
)
def test_uninstall_restores_the_slot_wrapper_calls() -> None:
    from pep726hook import _native

    wrapper_types = (type(object.__setattr__), type(object().__setattr__))
    before = [_tp_call(cls) for cls in wrapper_types]
    with pep726hook.install("native"):
        during = [_tp_call(cls) for cls in wrapper_types]
        assert _native.state()["call_guard"] is (sys.version_info < (3, 13))
    assert [_tp_call(cls) for cls in wrapper_types] == before
    assert _native.state()["call_guard"] is False
    if sys.version_info < (3, 13):
        assert all(a != b for a, b in zip(before, during))
    else:
        assert during == before


# --- opting single modules in ------------------------------------------------
#
# A library's enable() gives hooks to its own module only: the patched slot
# calls the hooks of opted-in modules and does the plain store for every other
# module unless process-wide dispatch is on.


@pytest.fixture
def opt_in_only() -> Iterator[Any]:
    """The patch without process-wide dispatch, as the first enable() makes it."""
    from pep726hook import _native

    if _native.state()["patched"]:
        pytest.skip("the native patch is already installed by the session")
    _native.install(process_wide=False)
    try:
        yield _native
    finally:
        _native.uninstall()


def _store_and_delete_everywhere(module: Any) -> None:
    module.a = 1
    setattr(module, "b", 2)
    ModuleType.__setattr__(module, "c", 3)
    del module.a
    delattr(module, "b")
    ModuleType.__delattr__(module, "c")


_EVERY_STORE = [
    ("set", "a", 1),
    ("set", "b", 2),
    ("set", "c", 3),
    ("del", "a"),
    ("del", "b"),
    ("del", "c"),
]


@pytest.mark.parametrize("cls", [ModuleType, "subclass", "guard"])
def test_hooks_of_a_module_not_opted_in_are_not_called(opt_in_only: Any, cls: Any) -> None:
    cls = {"subclass": type("Sub", (ModuleType,), {}), "guard": _subclass_calling_super()}.get(
        cls, cls
    )
    log: list[Any] = []
    module = hooked_module(cls=cls, log=log)
    module.__dict__.update(a=0, b=0, c=0)
    _store_and_delete_everywhere(module)
    module.d = 4
    assert log == []
    assert not opt_in_only.is_opted_in(module)
    assert module.__dict__["d"] == 4
    assert not {"a", "b", "c"} & set(module.__dict__)


@pytest.mark.parametrize("cls", [ModuleType, "subclass", "guard"])
def test_hooks_of_an_opted_in_module_are_called_and_no_others(opt_in_only: Any, cls: Any) -> None:
    cls = {"subclass": type("Sub", (ModuleType,), {}), "guard": _subclass_calling_super()}.get(
        cls, cls
    )
    log: list[Any] = []
    other_log: list[Any] = []
    module = hooked_module(cls=cls, log=log)
    other = hooked_module(cls=cls, log=other_log)
    assert opt_in_only.opt_in(module) is None
    opt_in_only.opt_in(module)
    assert opt_in_only.is_opted_in(module)
    assert opt_in_only.state()["opted_in"] == 1
    _store_and_delete_everywhere(module)
    other.x = 1
    assert log == _EVERY_STORE
    assert other_log == []
    assert other.__dict__["x"] == 1


def test_process_wide_dispatch_switches_on_and_off(opt_in_only: Any) -> None:
    log: list[Any] = []
    module = hooked_module(log=log)
    opt_in_only.set_process_wide(True)
    assert opt_in_only.state()["process_wide"]
    module.x = 1
    opt_in_only.set_process_wide(False)
    assert not opt_in_only.state()["process_wide"]
    module.y = 2
    assert log == [("set", "x", 1)]
    assert module.__dict__["y"] == 2
    assert opt_in_only.state()["patched"]


def test_install_turns_process_wide_on_but_never_off(opt_in_only: Any) -> None:
    opt_in_only.install(process_wide=False)
    assert not opt_in_only.state()["process_wide"]
    opt_in_only.install()
    assert opt_in_only.state()["process_wide"]
    opt_in_only.install(process_wide=False)
    assert opt_in_only.state()["process_wide"]
    with pytest.raises(TypeError):
        opt_in_only.install(False)


def test_a_hook_added_to_an_opted_in_module_after_hookless_stores_is_called(
    opt_in_only: Any,
) -> None:
    module = ModuleType("m")
    opt_in_only.opt_in(module)
    for i in range(HOOKLESS_STORES):
        module.x = i
    log: list[Any] = []
    module.__dict__["__setattr__"] = lambda n, v: log.append((n, v))
    module.x = 10
    assert log == [("x", 10)]
    assert module.__dict__["x"] == HOOKLESS_STORES - 1


def test_an_opt_in_dies_with_its_module(opt_in_only: Any) -> None:
    module = ModuleType("m")
    opt_in_only.opt_in(module)
    address = id(module)
    del module
    gc.collect()
    assert opt_in_only.state()["opted_in"] == 0
    # A new module at the same address is not opted in.
    log: list[Any] = []
    for _ in range(1000):
        new = hooked_module(log=log)
        if id(new) == address:
            break
    assert not opt_in_only.is_opted_in(new)
    new.x = 1
    assert log == []


def test_an_opted_in_module_in_a_reference_cycle_is_forgotten_when_collected(
    opt_in_only: Any,
) -> None:
    module = ModuleType("m")
    module.me = module
    opt_in_only.opt_in(module)
    del module
    gc.collect()
    assert opt_in_only.state()["opted_in"] == 0


def test_many_opt_ins_survive_the_deaths_of_others(opt_in_only: Any) -> None:
    # The table grows and entries move when others leave it.
    logs: list[list[Any]] = [[] for _ in range(600)]
    modules = [hooked_module(f"m{i}", log=logs[i]) for i in range(600)]
    for module in modules:
        opt_in_only.opt_in(module)
    kept = modules[::3]
    del module
    modules.clear()
    gc.collect()
    assert opt_in_only.state()["opted_in"] == len(kept)
    for i, module in enumerate(kept):
        assert opt_in_only.is_opted_in(module)
        module.x = i
        assert logs[3 * i] == [("set", "x", i)]


def test_uninstall_forgets_every_opt_in_and_process_wide_dispatch() -> None:
    from pep726hook import _native

    if _native.state()["patched"]:
        pytest.skip("the native patch is already installed by the session")
    log: list[Any] = []
    module = hooked_module(log=log)
    _native.install()
    _native.opt_in(module)
    _native.uninstall()
    assert _native.state()["process_wide"] is False
    assert _native.state()["opted_in"] == 0
    assert not _native.is_opted_in(module)
    _native.install(process_wide=False)
    try:
        module.x = 1
        assert log == []
    finally:
        _native.uninstall()


def test_opt_in_refuses_non_modules_and_needs_the_patch() -> None:
    from pep726hook import _native

    with pytest.raises(TypeError, match="needs a module"):
        _native.opt_in(object())
    if _native.state()["patched"]:
        pytest.skip("the native patch is already installed by the session")
    with pytest.raises(RuntimeError, match="install"):
        _native.opt_in(ModuleType("m"))
    assert not _native.is_opted_in(ModuleType("m"))
    assert not _native.is_opted_in(42)

"""A deprecating module once its import has ended: its own code, other modules, builtins.

Under the native engine the deprecated names then live in the module's
private builtins and the module is a plain ``ModuleType`` again; under the
class engine they stay in the namespace behind the deprecating class.  What
a user can tell apart is tested under both engines (``route``), what only
the native engine does is marked so.
"""

from __future__ import annotations

import builtins
import importlib
import pickle
import subprocess
import sys
import textwrap
import types
import warnings
from pathlib import Path
from typing import Any, Callable

import pytest
from _deprecation_helpers import own_value
from _venv import TIMEOUT, WriteModule, clean_env, describe

import pep726hook

NATIVE = "native" in pep726hook.available_engines()
native_only = pytest.mark.skipif(not NATIVE, reason="the native engine is unavailable here")

# Functions of every kind made before the deprecation call (the private
# builtins did not exist yet) and after it.
OWN_CODE = """
import functools
import pep726hook

class Old:
    pass

def before():
    return Old

def make_closure():
    def inner():
        return Old
    return inner

closure_before = make_closure()
lambdas_before = [lambda: Old]

def decorate(function):
    @functools.wraps(function)
    def wrapper():
        return function()
    return wrapper

@decorate
def decorated_before():
    return Old

class Holder:
    def method(self):
        return Old

    @staticmethod
    def static():
        return Old

pep726hook.deprecate_attribute(__name__, "Old", "Old is deprecated")

def after():
    return Old

class Body:
    seen = Old

def generator():
    yield Old
    yield Old
"""


@pytest.fixture
def load(write_module: WriteModule, route: str) -> Callable[..., Any]:
    def make(source: str = OWN_CODE, name: str = "movemod") -> Any:
        write_module(name, source)
        module = importlib.import_module(name)
        module.__name__  # noqa: B018  (the first read through the module moves the names)
        # Every test here is about the engine it asked enable() for: one that
        # chose another would test nothing of what the test names.
        assert pep726hook.engine(module) == route
        return module

    return make


def _moves(route: str) -> bool:
    # Whether the names must leave the namespace: under the native engine,
    # the one the test asked enable() for (an exact ModuleType with the
    # interpreter's builtins, in the main interpreter, as every module here).
    return route == "native"


def _native_route(route: str) -> None:
    # A test of what only the native engine does: skipped for the class
    # engine's parameter, never because of what enable() chose.
    if route != "native":
        pytest.skip("the class engine keeps the names in the namespace")


def test_the_modules_own_code_of_every_kind_reads_the_name_silently(
    route: str, load: Callable[..., Any]
) -> None:
    module = load()
    old = own_value(module, "Old")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        found = [
            module.before(),
            module.closure_before(),
            module.make_closure()(),
            module.lambdas_before[0](),
            module.decorated_before(),
            module.Holder().method(),
            module.Holder.static(),
            module.after(),
            module.Body.seen,
            eval("Old", vars(module)),
            next(module.generator()),
        ]
    assert all(value is old for value in found)
    assert ("Old" in vars(module)) is not _moves(route)
    assert pep726hook.engine(module) == route


@native_only
def test_the_module_is_a_plain_moduletype_and_its_other_reads_are_specialised(
    route: str, load: Callable[..., Any]
) -> None:
    _native_route(route)
    module = load()
    assert pep726hook.engine(module) == "native"
    assert type(module) is types.ModuleType
    assert "Old" not in vars(module) and "Old" in vars(module)["__builtins__"]
    assert vars(module)["__builtins__"] is not vars(builtins)
    # The read through the module reaches the descriptor in ModuleType's
    # dict, a non-data one (a namespace holding the name wins).
    descriptor = vars(types.ModuleType)["Old"]
    assert type(descriptor).__name__ == "deprecated_module_attribute"
    assert not hasattr(descriptor, "__set__") and not hasattr(descriptor, "__delete__")
    with pytest.warns(DeprecationWarning, match="Old is deprecated"):
        assert descriptor.__get__(module, types.ModuleType) is own_value(module, "Old")
    if sys.version_info >= (3, 11) and sys.implementation.name == "cpython":
        import dis

        def read() -> Any:
            return module.after

        for _ in range(50):
            read()
        names = [i.opname for i in dis.get_instructions(read, adaptive=True)]
        assert "LOAD_ATTR_MODULE" in names


def test_reads_through_the_module_warn_at_the_readers_line(
    route: str, load: Callable[..., Any]
) -> None:
    module = load()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first = module.Old
        line = sys._getframe().f_lineno - 1
        assert getattr(module, "Old") is first
        assert getattr(module, "Old", None) is first
        assert hasattr(module, "Old")
        namespace: dict[str, Any] = {}
        exec("from movemod import Old", namespace)
    assert namespace["Old"] is first
    assert [str(w.message) for w in caught] == ["Old is deprecated"] * 5
    assert (caught[0].filename, caught[0].lineno) == (__file__, line)


def test_another_module_reads_stores_and_deletes_a_same_named_attribute_as_plainly(
    route: str, load: Callable[..., Any]
) -> None:
    load()
    # What a module gets for "Old", against what it gets for a name no
    # module deprecates (ModuleType's dict holds nothing under it).
    never = "NeverDeprecated"
    assert never not in vars(types.ModuleType)
    if _moves(route):
        assert "Old" in vars(types.ModuleType)
    other = types.ModuleType("other_mod")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        errors = []
        for name in ("Old", never):
            assert not hasattr(other, name)
            assert getattr(other, name, "default") == "default"
            with pytest.raises(AttributeError) as missing:
                getattr(other, name)
            with pytest.raises(AttributeError) as not_deleted:
                delattr(other, name)
            # The generic lookup alone, which no module lookup rewrites: the
            # descriptor's own error (twice, the first one still held).
            with pytest.raises(AttributeError) as generic:
                object.__getattribute__(other, name)
            with pytest.raises(AttributeError) as generic_again:
                object.__getattribute__(other, name)
            assert generic_again.value is not generic.value
            errors.append(
                tuple(
                    str(part).replace(name, "<name>")
                    for part in (
                        missing.value,
                        not_deleted.value,
                        getattr(missing.value, "name", None),
                        generic.value,
                        getattr(generic.value, "name", None),
                        generic_again.value,
                        getattr(generic_again.value, "name", None),
                    )
                )
            )
        assert errors[0] == errors[1]
        other.Old = 1
        assert other.Old == 1 and vars(other)["Old"] == 1
        del other.Old
        assert "Old" not in vars(other)
        vars(other)["__getattr__"] = lambda name: f"served {name}"
        assert other.Old == "served Old"


def test_a_pep562_getattr_of_another_module_serves_the_name(
    route: str, load: Callable[..., Any], write_module: WriteModule
) -> None:
    load()
    write_module("lazyother", "def __getattr__(name):\n    return 'lazy ' + name\n")
    other = importlib.import_module("lazyother")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert other.Old == "lazy Old"
        namespace: dict[str, Any] = {}
        exec("from lazyother import Old", namespace)
        assert namespace["Old"] == "lazy Old"


def test_a_missing_name_of_the_deprecating_module_fails_as_on_a_plain_module(
    route: str, load: Callable[..., Any]
) -> None:
    module = load()
    with pytest.raises(AttributeError, match="module 'movemod' has no attribute 'missing'"):
        module.missing  # noqa: B018
    assert not hasattr(module, "missing")
    assert getattr(module, "missing", 7) == 7


def test_a_deprecated_class_pickles_with_a_warning(route: str, load: Callable[..., Any]) -> None:
    module = load()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        instance = module.Old()
        copy = pickle.loads(pickle.dumps(instance))
    assert type(copy) is own_value(module, "Old")
    assert caught and all(str(w.message) == "Old is deprecated" for w in caught)


def test_dir_lists_the_deprecated_name(route: str, load: Callable[..., Any]) -> None:
    module = load()
    assert "Old" in dir(module) and "before" in dir(module)


@native_only
def test_a_module_made_with_moduletype_moves_at_once(
    no_opted_in_module_alive: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PEP726HOOK_ENGINE", "native")
    module = types.ModuleType("made_here")
    module.Old = 1
    module.New = 2
    sys.modules["made_here"] = module
    try:
        pep726hook.deprecate_attribute(module, "Old", "Old is deprecated")
        assert pep726hook.engine(module) == "native"
        assert type(module) is types.ModuleType and "Old" not in vars(module)
        with pytest.warns(DeprecationWarning, match="Old is deprecated"):
            assert module.Old == 1
    finally:
        del sys.modules["made_here"]


def test_builtins_changed_later_are_seen_by_the_modules_own_code(
    route: str, load: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    from unittest import mock

    module = load(
        OWN_CODE + "def opener():\n    return open\ndef extra():\n    return extra_name\n"
    )
    monkeypatch.setattr(builtins, "extra_name", "patched", raising=False)
    assert module.extra() == "patched"
    with mock.patch("builtins.open", "mocked"):
        assert module.opener() == "mocked"
    assert module.opener() is open
    monkeypatch.delattr(builtins, "extra_name")
    with pytest.raises(NameError):
        module.extra()


@pytest.mark.skipif(sys.version_info < (3, 12), reason="dict watchers are 3.12+")
def test_a_direct_write_into_the_builtins_dict_is_seen_from_312(
    route: str, load: Callable[..., Any]
) -> None:
    module = load(OWN_CODE + "def extra():\n    return direct_name\n")
    vars(builtins)["direct_name"] = "direct"
    try:
        assert module.extra() == "direct"
    finally:
        del vars(builtins)["direct_name"]
    with pytest.raises(NameError):
        module.extra()


def test_a_builtin_is_never_written_over_a_deprecated_name(
    route: str, load: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    module = load()
    old = own_value(module, "Old")
    monkeypatch.setattr(builtins, "Old", "a builtin", raising=False)
    assert module.after() is old


def test_a_name_shadowing_a_builtin_is_the_modules_own_until_its_deprecation_ends(
    route: str, load: Callable[..., Any]
) -> None:
    source = (
        "import pep726hook\n"
        "def open(*args):\n    return 'own open'\n"
        "pep726hook.deprecate_attribute(__name__, 'open', 'open is deprecated')\n"
        "def use():\n    return open()\n"
    )
    module = load(source, name="shadowmod")
    assert module.use() == "own open"
    with pytest.warns(DeprecationWarning):
        del module.open
    # The deprecation ended: the module's code calls the builtin again,
    # which needs a file.
    assert own_value(module, "open") is open
    with pytest.raises(TypeError):
        module.use()


@pytest.mark.skipif(sys.version_info < (3, 12), reason="the namespace watcher is 3.12+")
def test_a_name_rebound_by_the_modules_own_code_stays_deprecated(
    route: str, load: Callable[..., Any]
) -> None:
    module = load(OWN_CODE + "def rebind(value):\n    global Old\n    Old = value\n")
    module.rebind("again")
    sum(range(10))  # a few bytecodes: the move back runs between two of them
    assert module.after() == "again"
    with pytest.warns(DeprecationWarning, match="Old is deprecated"):
        assert module.Old == "again"


def test_reload_moves_the_names_again(route: str, load: Callable[..., Any]) -> None:
    module = load()
    reloaded = importlib.reload(module)
    reloaded.__name__  # noqa: B018
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert reloaded.Old is own_value(reloaded, "Old")
        assert reloaded.after() is own_value(reloaded, "Old")
        assert reloaded.before() is own_value(reloaded, "Old")
    assert [str(w.message) for w in caught] == ["Old is deprecated"]
    assert ("Old" in vars(reloaded)) is not _moves(route)
    assert pep726hook.engine(reloaded) == route


def test_a_module_whose_author_replaced_its_builtins_keeps_the_names_in_its_namespace(
    route: str, load: Callable[..., Any]
) -> None:
    source = (
        "import pep726hook\n"
        "__builtins__ = dict(__builtins__ if isinstance(__builtins__, dict) "
        "else vars(__builtins__), own_marker=1)\n"
        "Old = 1\n"
        "pep726hook.deprecate_attribute(__name__, 'Old', 'Old is deprecated')\n"
    )
    module = load(source, name="ownbuiltins")
    assert "Old" in vars(module)
    assert vars(module)["__builtins__"]["own_marker"] == 1
    with pytest.warns(DeprecationWarning):
        assert module.Old == 1


# Frames that started before the deprecation call, still waiting or running
# when the names move: each reads the name on its next step.
WAITING_FRAMES = """
import pep726hook

Old = 1

def generator():
    yield Old
    yield Old

class Gate:
    def __await__(self):
        yield "waiting"

async def coroutine():
    first = Old
    await Gate()
    return (first, Old)

async def async_generator():
    yield Old
    yield Old

running = generator()
next(running)
not_started = generator()
expression = (Old for _ in range(2))
next(expression)
waiting_coroutine = coroutine()
waiting_coroutine.send(None)
waiting_async_generator = async_generator()
try:
    waiting_async_generator.asend(None).send(None)
except StopIteration:
    pass

pep726hook.deprecate_attribute(__name__, "Old", "Old is deprecated")
"""


def _result_of(awaitable: Any) -> Any:
    # One step of a coroutine that ends in it.
    with pytest.raises(StopIteration) as stopped:
        awaitable.send(None)
    return stopped.value.value


def test_generators_and_coroutines_suspended_before_the_move_read_the_name_after_it(
    route: str, write_module: WriteModule
) -> None:
    write_module("genmod", WAITING_FRAMES)
    module = importlib.import_module("genmod")
    module.__name__  # noqa: B018  (moves the names)
    assert ("Old" in vars(module)) is not _moves(route)
    assert pep726hook.engine(module) == route
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert next(module.running) == 1
        assert list(module.not_started) == [1, 1]
        assert next(module.expression) == 1
        assert _result_of(module.waiting_coroutine) == (1, 1)
        assert _result_of(module.waiting_async_generator.asend(None)) == 1


def test_a_thread_looping_in_a_function_that_started_before_the_move_reads_the_name_after_it(
    route: str, write_module: WriteModule
) -> None:
    import threading

    write_module(
        "threadmod",
        "import threading\nimport pep726hook\nOld = 1\n"
        "started = threading.Event()\nmoved = threading.Event()\nseen = []\n"
        "def loop():\n    seen.append(Old)\n    started.set()\n"
        "    moved.wait(30)\n    seen.append(Old)\n"
        "def deprecate_then_read():\n"
        "    pep726hook.deprecate_attribute(__name__, 'Old', 'Old is deprecated')\n"
        "    return Old\n",
    )
    module = importlib.import_module("threadmod")
    thread = threading.Thread(target=module.loop)
    thread.start()
    try:
        assert module.started.wait(30)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            # The module's import has ended: the names move during the call,
            # below the frame that then reads the name.
            assert module.deprecate_then_read() == 1
    finally:
        module.moved.set()
        thread.join(30)
    assert module.seen == [1, 1]
    assert ("Old" in vars(module)) is not _moves(route)
    assert pep726hook.engine(module) == route


# Functions made before the deprecation call that the move cannot reach from
# the module's namespace: another module holds them.  The extension finds the
# module's functions from its namespace and proves by reference counts that
# it found them all; these make the proof fail, so the pass over every
# tracked object must run and find them.
KEEPER = """
import functools

kept = []

def wrap(function):
    def call():
        return function()
    return call

def register(function):
    @functools.wraps(function)
    def wrapper():
        return function()
    kept.append(wrapper)
"""

HELD_ELSEWHERE = {
    "in_another_modules_list": "def held():\n    return Old\nkeeper.kept.append(held)\ndel held\n",
    "by_a_closure_of_another_modules_function": (
        "def held():\n    return Old\nkeeper.kept.append(keeper.wrap(held))\ndel held\n"
    ),
    "by_a_decorators_wrapper_only": "@keeper.register\ndef held():\n    return Old\n",
    "made_by_functiontype_in_a_registry": (
        "keeper.kept.append(types.FunctionType((lambda: Old).__code__, globals()))\n"
    ),
}


def _passes() -> int:
    # Passes over every tracked object run so far (the native engine's).
    from pep726hook import _native  # type: ignore[attr-defined]

    return int(_native.rebinding_passes())


@pytest.mark.parametrize("how", sorted(HELD_ELSEWHERE))
def test_a_function_only_another_module_holds_sees_the_name_after_the_move(
    route: str, load: Callable[..., Any], write_module: WriteModule, how: str
) -> None:
    write_module("keeper", KEEPER)
    source = (
        "import types\nimport keeper\nimport pep726hook\n\nclass Old:\n    pass\n\n"
        + HELD_ELSEWHERE[how]
        + "pep726hook.deprecate_attribute(__name__, 'Old', 'Old is deprecated')\n"
    )
    passes = _passes() if NATIVE else 0
    module = load(source, name="heldelsewhere")
    assert pep726hook.engine(module) == route
    if _moves(route) and sys.version_info >= (3, 10):
        assert _passes() == passes + 1
    keeper = sys.modules["keeper"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert keeper.kept[0]() is own_value(module, "Old")


# Every kind of function the walk from the namespace reaches, all made
# before the deprecation call (OWN_CODE's first part and more): no pass is
# needed.
DEPRECATION_CALL = 'pep726hook.deprecate_attribute(__name__, "Old", "Old is deprecated")\n'
REACHABLE_CODE = (
    OWN_CODE.partition(DEPRECATION_CALL)[0]
    + """
class MoreKinds:
    @property
    def prop(self):
        return Old

    @classmethod
    def klass(cls):
        return Old

    class Nested:
        def method(self):
            return Old

table = {"key": [(lambda: Old,)]}
partial_before = functools.partial(lambda unused: Old, 1)

def generator():
    yield Old

async def coroutine():
    return Old

"""
    + DEPRECATION_CALL
)
assert DEPRECATION_CALL in OWN_CODE


@native_only
@pytest.mark.skipif(sys.version_info < (3, 10), reason="before 3.10 nothing is rebound")
def test_functions_reachable_from_the_namespace_are_rebound_without_the_pass(
    route: str, load: Callable[..., Any]
) -> None:
    _native_route(route)
    passes = _passes()
    module = load(REACHABLE_CODE, name="reachable")
    assert pep726hook.engine(module) == "native"
    assert _passes() == passes
    old = own_value(module, "Old")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        found = [
            module.before(),
            module.Holder().method(),
            module.Holder.static(),
            module.MoreKinds().prop,
            module.MoreKinds.klass(),
            module.MoreKinds.Nested().method(),
            module.closure_before(),
            module.lambdas_before[0](),
            module.table["key"][0][0](),
            module.partial_before(),
            module.decorated_before(),
            next(module.generator()),
        ]
        with pytest.raises(StopIteration) as returned:
            module.coroutine().send(None)
    assert all(value is old for value in found)
    assert returned.value.value is old


@native_only
@pytest.mark.skipif(sys.version_info < (3, 10), reason="before 3.10 nothing is rebound")
@pytest.mark.parametrize("form", ["deprecate_attribute", "deprecated_and_enable"])
def test_a_module_deprecated_after_its_import_has_its_functions_rebound_without_the_pass(
    route: str, write_module: WriteModule, form: str
) -> None:
    # Nothing on the way from the call to the move holds the namespace.
    _native_route(route)
    write_module("afterimport", "class Old:\n    pass\n\ndef before():\n    return Old\n")
    module = importlib.import_module("afterimport")
    old = module.Old
    passes = _passes()
    if form == "deprecate_attribute":
        pep726hook.deprecate_attribute(module, "Old", "Old is deprecated")
    else:
        module.Old = pep726hook.deprecated(old, "Old is deprecated")
        pep726hook.enable(module)
    assert pep726hook.engine(module) == "native"
    assert _passes() == passes
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert module.before() is old


# One generator suspended before the move, and nothing else that would make
# the pass run (WAITING_FRAMES' generator expression holds the namespace).
SUSPENDED_GENERATOR = (
    "import pep726hook\nOld = 1\n"
    "def generator():\n    yield 0\n    yield Old\n"
    "running = generator()\nnext(running)\n"
    "pep726hook.deprecate_attribute(__name__, 'Old', 'Old is deprecated')\n"
)


def test_a_lone_generator_suspended_before_the_move_reads_the_name_on_its_next_step(
    route: str, write_module: WriteModule
) -> None:
    write_module("lonegen", SUSPENDED_GENERATOR)
    module = importlib.import_module("lonegen")
    module.__name__  # noqa: B018  (the first read through the module moves the names)
    assert pep726hook.engine(module) == route
    assert ("Old" in vars(module)) is not _moves(route)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert next(module.running) == 1


@native_only
@pytest.mark.skipif(sys.version_info < (3, 10), reason="before 3.10 nothing is rebound")
def test_a_generator_suspended_before_the_move_makes_the_pass_run(
    route: str, write_module: WriteModule
) -> None:
    # Its frame (3.11+: through its function; 3.10: through the globals)
    # holds a reference the walk from the namespace cannot explain; the pass
    # is where such frames are found.
    _native_route(route)
    write_module("suspendedgen", SUSPENDED_GENERATOR)
    passes = _passes()
    module = importlib.import_module("suspendedgen")
    module.__name__  # noqa: B018  (the first read through the module moves the names)
    assert pep726hook.engine(module) == "native"
    assert _passes() == passes + 1


@native_only
def test_w_error_ends_the_traceback_at_the_readers_line(tmp_path: Path) -> None:
    (tmp_path / "werrmod.py").write_text(
        "import pep726hook\nOld = 1\n"
        "pep726hook.deprecate_attribute(__name__, 'Old', 'Old is deprecated')\n"
    )
    (tmp_path / "reader.py").write_text(
        textwrap.dedent(
            """
            import werrmod
            werrmod.__name__
            value = werrmod.Old
            """
        )
    )
    env = clean_env()
    env["PEP726HOOK_ENGINE"] = "native"
    env["PYTHONPATH"] = str(tmp_path)
    result = subprocess.run(
        [sys.executable, "-W", "error::DeprecationWarning", str(tmp_path / "reader.py")],
        capture_output=True,
        text=True,
        env=env,
        timeout=TIMEOUT,
        check=False,
    )
    assert result.returncode == 1, describe(result)
    frames = [line for line in result.stderr.splitlines() if line.lstrip().startswith("File ")]
    assert frames and "reader.py" in frames[-1] and "line 4" in frames[-1], describe(result)
    assert "DeprecationWarning: Old is deprecated" in result.stderr


def test_a_warn_callable_names_the_readers_line(route: str, load: Callable[..., Any]) -> None:
    source = (
        "import warnings\nimport pep726hook\nOld = 1\n"
        "def warn(message, category, stacklevel):\n"
        "    warnings.warn('library: ' + message, category, stacklevel)\n"
        "pep726hook.deprecate_attribute(__name__, 'Old', 'Old is deprecated', warn=warn)\n"
    )
    module = load(source, name="warnmod")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert module.Old == 1
        line = sys._getframe().f_lineno - 1
    assert [(str(w.message), w.filename, w.lineno) for w in caught] == [
        ("library: Old is deprecated", __file__, line)
    ]


def test_a_name_moduletype_defines_is_refused(no_opted_in_module_alive: None) -> None:
    module = types.ModuleType("refusing")
    namespace = vars(module)
    sys.modules["refusing"] = module
    try:
        for name in ("__dict__", "__name__", "__class__", "__doc__"):
            namespace.setdefault(name, None)
            with pytest.raises(ValueError, match="cannot be deprecated"):
                pep726hook.deprecate_attribute(module, name, "no")
    finally:
        del sys.modules["refusing"]


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="3.12+ moves the name back")
def test_before_312_a_name_rebound_by_the_modules_own_code_ends_its_deprecation_silently(
    route: str, load: Callable[..., Any]
) -> None:
    # Documented: no dict watcher before 3.12, so the namespace wins again.
    module = load(OWN_CODE + "def rebind(value):\n    global Old\n    Old = value\n")
    module.rebind("again")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert module.Old == "again"
    # The class engine keeps the name in the namespace behind its class.
    assert pep726hook.engine(module) == route
    assert len(caught) == (0 if _moves(route) else 1)


def test_a_module_whose_builtins_are_the_builtins_module_reads_them_as_before(
    route: str, load: Callable[..., Any]
) -> None:
    source = (
        "import builtins\nimport pep726hook\n__builtins__ = builtins\n"
        "Old = 1\ndef use():\n    return len([Old])\n"
        "pep726hook.deprecate_attribute(__name__, 'Old', 'Old is deprecated')\n"
    )
    module = load(source, name="modbuiltins")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert module.use() == 1
    with pytest.warns(DeprecationWarning):
        assert module.Old == 1

"""The native engine's paths leak no reference and no memory block, as CPython's ``-R`` checks.

Each scenario below drives one path of the C engine through the public API,
in this process: it makes its modules, uses them and drops them again.  The
check runs a scenario a few times to warm every cache up, then measures
``sys.gettotalrefcount()`` and ``sys.getallocatedblocks()`` around further
runs, as ``python -m test -R 3:3`` does, and reports a leak when every
measured run grew one of them (a single growth is a cache filling up, not a
leak).  ``sys.gettotalrefcount()`` exists in debug builds of CPython only
(``python3.X-dbg`` on Debian, ``./configure --with-pydebug``); elsewhere the
tests are skipped.

To cover a new path, add one function decorated with ``@scenario``: it must
leave no module, ``sys.path`` entry or warning filter behind, and use the
same module and attribute names on every call (a new name each time would
be a new interned string, which looks like a leak).
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import linecache
import re
import sys
import textwrap
import types
import typing
import warnings
from pathlib import Path
from typing import Callable, Iterator

import pytest
from _declared_alone_scenario import (
    a_deprecated_name_bound_again_by_a_reloaded_body,
    a_deprecated_name_handed_over_while_its_body_runs,
    a_name_deprecated_by_the_extension_alone,
    lazy_and_removed_names_declared_by_the_extension_alone,
)
from _venv import ENGINES
from test_native_moved_deprecations import OWN_CODE as MOVED_OWN_CODE

import pep726hook

# Runs before measuring (caches fill up: the interned names, the type
# attribute cache, linecache's copy of a module's source, pymalloc's arenas),
# runs measured, and how often each run repeats the scenario, so that a leak
# of one reference per call shows as a growth of at least this much.
WARMUPS = 3
MEASURED_RUNS = 3
CALLS_PER_RUN = 5

pytestmark = [
    pytest.mark.skipif(
        not hasattr(sys, "gettotalrefcount"),
        reason="needs a debug build of CPython (sys.gettotalrefcount), such as Debian's python3.X-dbg",
    ),
    pytest.mark.skipif("native" not in ENGINES, reason="the native engine is not available here"),
]

Scenario = Callable[["Modules"], None]
SCENARIOS: list[Scenario] = []


def scenario(function: Scenario) -> Scenario:
    """Add *function* to the scenarios the leak check runs."""
    SCENARIOS.append(function)
    return function


class Modules:
    """Modules written once into a directory on ``sys.path``, imported afresh by each call."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def write(self, name: str, source: str) -> None:
        *package, last = name.split(".")
        path = self.root.joinpath(*package, last + ".py")
        path.parent.mkdir(parents=True, exist_ok=True)
        text = textwrap.dedent(source)
        if not path.exists() or path.read_text() != text:
            path.write_text(text)

    @contextlib.contextmanager
    def imported(self, name: str, source: str) -> Iterator[types.ModuleType]:
        """Import *name* from *source* (a package ``__init__`` when *name* ends in ``.__init__``).

        Removes the module and its submodules from ``sys.modules`` afterwards.
        """
        self.write(name, source)
        module_name = name[: -len(".__init__")] if name.endswith(".__init__") else name
        try:
            yield importlib.import_module(module_name)
        finally:
            for loaded in [m for m in sys.modules if m.partition(".")[0] == module_name]:
                del sys.modules[loaded]


def made_module(name: str, source: str) -> types.ModuleType:
    """A module made with ``types.ModuleType`` and *source* run in it, in ``sys.modules``."""
    module = types.ModuleType(name)
    sys.modules[name] = module
    exec(textwrap.dedent(source), module.__dict__)
    return module


@contextlib.contextmanager
def quiet_warnings() -> Iterator[None]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


HOOKLESS = """
import pep726hook
pep726hook.enable(__name__)
"""

HOOKED = """
import pep726hook
seen = []

def __setattr__(name, value):
    if name == "refused":
        raise AttributeError("refused")
    seen.append(name)
    globals()[name] = value

def __delattr__(name):
    if name == "refused":
        raise AttributeError("refused")
    del globals()[name]

pep726hook.enable(__name__)
"""


@scenario
def stores_and_deletions_call_the_hooks(modules: Modules) -> None:
    with modules.imported("refleak_hooked", HOOKED) as module:
        module.x = object()
        setattr(module, "y", [1, 2])
        del module.x
        delattr(module, "y")
        for store in (lambda: setattr(module, "refused", 1), lambda: delattr(module, "refused")):
            with pytest.raises(AttributeError):
                store()
        module.seen.clear()


@scenario
def stores_without_hooks(modules: Modules) -> None:
    with modules.imported("refleak_hookless", HOOKLESS) as module:
        module.x = object()
        module.x = None
        del module.x
        with pytest.raises(AttributeError):
            del module.missing
    # Another module's stores while the native patch is in place.
    with modules.imported("refleak_hooked", HOOKED), modules.imported("refleak_plain", "") as plain:
        plain.x = object()
        del plain.x


@scenario
def class_stores(modules: Modules) -> None:
    class Subclass(types.ModuleType):
        pass

    with modules.imported("refleak_hookless", HOOKLESS) as module:
        module.__class__ = Subclass
        module.z = 1
        module.__class__ = types.ModuleType
        with pytest.raises(TypeError):
            module.__class__ = int  # type: ignore[assignment]


GETATTR = """
import pep726hook

def __getattr__(name):
    if name == "lazy":
        return [name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

present = 1
pep726hook.enable(__name__)
"""


@scenario
def relocated_getattr_and_its_misses(modules: Modules) -> None:
    with modules.imported("refleak_getattr", GETATTR) as module:
        for _ in range(3):
            assert module.present == 1
            assert module.lazy == ["lazy"]
            assert not hasattr(module, "missing")
            assert getattr(module, "missing", None) is None
            with pytest.raises(AttributeError):
                module.missing  # noqa: B018
        module.__getattr__ = lambda name: name  # replaced through the module
        assert module.anything == "anything"
        del module.__getattr__
        assert not hasattr(module, "anything")


DEPRECATING = """
import pep726hook

New = object()
Old = pep726hook.deprecated(New, "Old is deprecated")
pep726hook.enable(__name__)

Other = [1]
pep726hook.deprecate_attribute(__name__, "Other", "Other is deprecated")
pep726hook.deprecate_attribute(__name__, "made", "made is deprecated", factory=lambda: {"made": 1})
pep726hook.deprecate_attribute(__name__, "sub", "sub is deprecated")

def uses_old():
    return Old, Other
"""


@scenario
def deprecations_read_stored_and_deleted(modules: Modules) -> None:
    modules.write("refleak_deprecating.sub", "VALUE = 1\n")
    with quiet_warnings(), modules.imported("refleak_deprecating.__init__", DEPRECATING) as module:
        assert module.Old is module.New
        assert module.uses_old()[1] == [1]
        assert module.made == {"made": 1}
        assert module.made == {"made": 1}
        assert module.sub.VALUE == 1
        assert hasattr(module, "Other")
        from refleak_deprecating import Other  # noqa: F401

        module.Other = 2  # a store ends the deprecation
        del module.Old  # so does a deletion
        setattr(module, "Again", pep726hook.deprecated(3, "Again is deprecated"))
        assert module.Again == 3
        with pytest.raises(AttributeError):
            module.missing  # noqa: B018


@scenario
def deprecations_of_a_module_made_at_run_time(modules: Modules) -> None:
    def warn(message: str, category: type[Warning], stacklevel: int) -> None:
        pass

    module = made_module("refleak_made", "value = 1\n")
    try:
        pep726hook.deprecate_attribute(module, "value", "value is deprecated", warn=warn)
        pep726hook.deprecate_attribute("refleak_made", "value", "replaced message", warn=warn)
        assert module.value == 1
        with pytest.raises(ValueError):
            pep726hook.deprecate_attribute(module, "value", "m", factory=lambda: 2)
    finally:
        del sys.modules["refleak_made"]


@scenario
def reload_of_a_deprecating_module(modules: Modules) -> None:
    # No factory: deprecate_attribute(factory=...) refuses a name that the
    # first run of the body left a value for.
    source = "\n".join(
        line for line in DEPRECATING.splitlines() if '"made"' not in line and '"sub"' not in line
    )
    with quiet_warnings(), modules.imported("refleak_reloaded", source) as module:
        assert module.Old is module.New
        importlib.reload(module)
        assert module.Old is module.New
        assert module.Other == [1]


# The moved-deprecation tests' module (functions of every kind made before
# its deprecation call and after it), and functions that rebind the name and
# read a builtin.
DEPRECATION_CALL = 'pep726hook.deprecate_attribute(__name__, "Old", "Old is deprecated")\n'
OWN_CODE_EXTRAS = """
def rebind(value):
    globals()["Old"] = value

# No bytecode in between checks for pending calls: the first move back
# finds the name bound to another value, the second moves it.
def rebind_twice(first, second):
    namespace = globals()
    namespace["Old"] = first
    namespace["Old"] = second

# The move back finds the name gone.
def rebind_and_delete(value):
    namespace = globals()
    namespace["Old"] = value
    del namespace["Old"]

def builtin_reader():
    return refleak_builtin

def annotated(x: "Old") -> "Old":
    return x
"""
assert DEPRECATION_CALL in MOVED_OWN_CODE
# Deprecated during its import (the names move at the first read through it).
DEPRECATING_OWN_CODE = MOVED_OWN_CODE + OWN_CODE_EXTRAS
# Deprecated by the caller after its import (the names move at once).
OWN_CODE = MOVED_OWN_CODE.replace(DEPRECATION_CALL, "") + OWN_CODE_EXTRAS


@scenario
def a_module_deprecated_after_its_import_moves_at_once(modules: Modules) -> None:
    with quiet_warnings(), modules.imported("refleak_after", OWN_CODE) as module:
        old = module.Old
        pep726hook.deprecate_attribute(module, "Old", "Old is deprecated")
        assert "Old" not in vars(module)
        assert module.Old is old and module.before() is old
        assert module.closure_before() is old and module.Holder().method() is old
        assert next(module.generator()) is old
        assert "Old" in dir(module)
        module.Old = [2]  # a store through the module ends the deprecation
        assert module.before() == [2]
        pep726hook.deprecate_attribute(module, "Old", "Old is deprecated again")
        assert module.Old == [2]
        del module.Old  # so does a deletion
        with pytest.raises(NameError):
            module.before()


# A move that cannot prove from the namespace that it found every function
# made there: a suspended generator holds its function, and only another
# module's list holds a function.  The pass over every tracked object runs.
UNPROVABLE_OWN_CODE = """
import pep726hook
import refleak_keeper
Old = [1]
def generator():
    yield 0
    yield Old
running = generator()
next(running)
def held():
    return Old
refleak_keeper.kept.append(held)
del held
pep726hook.deprecate_attribute(__name__, "Old", "Old is deprecated")
"""


@scenario
def a_move_that_cannot_prove_it_found_every_function_runs_the_pass(modules: Modules) -> None:
    source = UNPROVABLE_OWN_CODE
    # Nested: parenthesised context managers need Python 3.10.
    with modules.imported("refleak_keeper", "kept = []\n") as keeper:  # noqa: SIM117
        with quiet_warnings(), modules.imported("refleak_unprovable", source) as module:
            module.__name__  # noqa: B018  (the first read moves the names)
            assert keeper.kept[0]() is module.Old
            keeper.kept.clear()


WAITING_FRAMES = """
import pep726hook

Old = [1]

def generator():
    yield Old
    yield Old

async def coroutine():
    yield_value = Old
    return yield_value

running = generator()
next(running)
expression = (Old for _ in range(2))
next(expression)
not_started = coroutine()

pep726hook.deprecate_attribute(__name__, "Old", "Old is deprecated")
"""


@scenario
def frames_waiting_at_the_move_get_the_private_builtins(modules: Modules) -> None:
    with quiet_warnings(), modules.imported("refleak_frames", WAITING_FRAMES) as module:
        module.__name__  # noqa: B018  (the first read moves the names and rebinds the frames)
        old = module.Old
        assert next(module.running) is old and next(module.expression) is old
        # Not pytest.raises(): its ExceptionInfo grew the allocated blocks on
        # debug 3.11 where this path alone did not.
        try:
            module.not_started.send(None)
        except StopIteration as stopped:
            assert stopped.value is old
        else:
            raise AssertionError("the coroutine did not end")


@scenario
def a_module_deprecated_during_its_import_moves_at_the_first_read(modules: Modules) -> None:
    source = DEPRECATING_OWN_CODE
    with quiet_warnings(), modules.imported("refleak_during", source) as module:
        module.__name__  # noqa: B018  (the first read moves the names, rebinding the functions)
        old = module.Old
        assert module.before() is old and module.closure_before() is old
        assert module.make_closure()() is old and module.Holder().method() is old
        assert next(module.generator()) is old
        assert eval("Old", vars(module)) is old
        # From 3.14 a string annotation is resolved through the builtins module.
        assert typing.get_type_hints(module.annotated) == {"x": old, "return": old}
        module.Old = None
        assert module.before() is None


@scenario
def reload_of_a_moved_module(modules: Modules) -> None:
    source = DEPRECATING_OWN_CODE
    with quiet_warnings(), modules.imported("refleak_reloaded_moved", source) as module:
        module.__name__  # noqa: B018
        first = module.Old
        reloaded = importlib.reload(module)
        reloaded.__name__  # noqa: B018
        assert reloaded.Old is not first and reloaded.before() is reloaded.Old
        importlib.reload(reloaded)  # reloaded again before any read
        assert reloaded.closure_before() is reloaded.Old


@scenario
def builtins_changed_while_a_module_deprecates(modules: Modules) -> None:
    import builtins

    source = DEPRECATING_OWN_CODE
    with quiet_warnings(), modules.imported("refleak_mirrored", source) as module:
        module.__name__  # noqa: B018
        setattr(builtins, "refleak_builtin", [1])
        try:
            assert module.builtin_reader() == [1]
            setattr(builtins, "refleak_builtin", [2])  # replaced
            assert module.builtin_reader() == [2]
            setattr(builtins, "Old", "a builtin")  # never over a deprecated name
            assert module.before() is module.Old
            delattr(builtins, "Old")
        finally:
            delattr(builtins, "refleak_builtin")
        with pytest.raises(NameError):
            module.builtin_reader()
        if sys.version_info >= (3, 12):  # a dict watcher sees direct writes
            vars(builtins)["refleak_builtin"] = (3,)
            try:
                assert module.builtin_reader() == (3,)
            finally:
                del vars(builtins)["refleak_builtin"]
            with pytest.raises(NameError):
                module.builtin_reader()


@scenario
def a_name_rebound_by_the_modules_own_code(modules: Modules) -> None:
    # From 3.12 a dict watcher notes each rebinding and a pending call moves
    # it back into the private builtins; before, the namespace keeps it (the
    # deprecation ends silently) until the store callback deletes it.
    watched = sys.version_info >= (3, 12)
    source = DEPRECATING_OWN_CODE
    with quiet_warnings(), modules.imported("refleak_rebound", source) as module:
        module.__name__  # noqa: B018
        old = module.Old
        module.rebind([4])
        sum(range(10))  # a few bytecodes: the move back runs between two of them
        assert module.before() == [4]
        assert module.Old == [4]
        module.rebind_twice([5], [6])
        sum(range(10))
        assert module.Old == [6] and ("Old" in vars(module)) is not watched
        module.rebind_and_delete([7])
        sum(range(10))
        assert module.Old == ([6] if watched else old)
        module.rebind([8])
        sum(range(10))
        del module.Old
        assert "Old" not in vars(module) and "Old" not in vars(module)["__builtins__"]


REFUSING = """
import pep726hook

LIMIT = [100]
OTHER = [1]

def rebind(value):
    global LIMIT
    LIMIT = value

def __delattr__(name):
    raise AttributeError(name)

def __setattr__(name, value):
    global LIMIT
    if name == "OTHER":
        LIMIT = [value]
        for _ in range(10):
            sum(range(10))
    globals()[name] = value

pep726hook.deprecate_attribute(__name__, "LIMIT", "LIMIT is deprecated")
pep726hook.deprecate_attribute(__name__, "OTHER", "OTHER is deprecated")
"""


@scenario
def a_refused_deletion_of_a_rebound_name_and_a_rebinding_during_a_store(modules: Modules) -> None:
    with quiet_warnings(), modules.imported("refleak_refusing", REFUSING) as module:
        module.__name__  # noqa: B018
        module.rebind([250])
        sum(range(10))
        with pytest.raises(AttributeError):
            del module.LIMIT
        assert module.LIMIT == [250] and "LIMIT" not in vars(module)
        # The hook binds LIMIT while the store of OTHER runs: moved back
        # once the store has ended (3.12+; before, the store of LIMIT's
        # value back out is the refused deletion's above only).
        module.OTHER = 2
        sum(range(10))
        assert module.LIMIT == [2]
        assert ("LIMIT" in vars(module)) is (sys.version_info < (3, 12))


LAZY = """
import pep726hook

Kept = 1
pep726hook.deprecate_attribute(__name__, "sub", "sub is deprecated")
pep726hook.deprecate_attribute(__name__, "made", "made is deprecated", factory=lambda: {"made": 1})

def reads_made():
    return made
"""


@scenario
def lazy_deprecations_read_after_the_move(modules: Modules) -> None:
    modules.write("refleak_lazy.sub", "VALUE = 1\n")
    with quiet_warnings(), modules.imported("refleak_lazy.__init__", LAZY) as module:
        assert module.Kept == 1  # moves the names
        assert "sub" in dir(module) and "made" in dir(module)
        assert module.sub.VALUE == 1
        assert module.made == {"made": 1}
        assert module.made == {"made": 1}
        assert module.reads_made() == {"made": 1}
        import refleak_lazy.sub  # noqa: F401


@scenario
def a_deprecating_module_that_dies(modules: Modules) -> None:
    module = made_module("refleak_dying", "Old = [1]\ndef reads():\n    return Old\n")
    try:
        pep726hook.deprecate_attribute(module, "Old", "Old is deprecated")
        with quiet_warnings():
            assert module.Old == [1]
    finally:
        del sys.modules["refleak_dying"]
    del module
    gc.collect()  # the weak table forgets the module
    with quiet_warnings(), modules.imported("refleak_dying_imported", OWN_CODE) as imported:
        pep726hook.deprecate_attribute(imported, "Old", "Old is deprecated")
        reads = imported.before
    del imported
    gc.collect()
    assert isinstance(reads(), type)  # its private builtins live on with the function


@scenario
def an_import_that_fails_after_its_deprecations(modules: Modules) -> None:
    source = DEPRECATING_OWN_CODE + 'raise ImportError("the import fails")\n'
    with pytest.raises(ImportError), modules.imported("refleak_failing", source):
        pass
    gc.collect()


@scenario
def install_and_uninstall(modules: Modules) -> None:
    hooked = HOOKED.replace("pep726hook.enable(__name__)", "")
    with pep726hook.install("native"), modules.imported("refleak_installed", hooked) as module:
        module.x = 1
        del module.x
    assert not pep726hook.is_installed()
    with pep726hook.install("native"), pep726hook.install("native"):
        pass


# In a file of its own, which has room for it.
scenario(lazy_and_removed_names_declared_by_the_extension_alone)
scenario(a_name_deprecated_by_the_extension_alone)
scenario(a_deprecated_name_handed_over_while_its_body_runs)
scenario(a_deprecated_name_bound_again_by_a_reloaded_body)


def clear_caches() -> None:
    """Empty the caches that grow and shrink on their own, as CPython's ``-R`` does."""
    linecache.clearcache()
    re.purge()
    importlib.invalidate_caches()
    # 3.13 renamed it; the old name's DeprecationWarning, which pytest
    # records, would count as growth.
    clear_internal_caches = getattr(sys, "_clear_internal_caches", None)
    (clear_internal_caches or sys._clear_type_cache)()
    for _ in range(3):
        gc.collect()


def counts() -> tuple[int, int]:
    clear_caches()
    return sys.gettotalrefcount(), sys.getallocatedblocks()  # type: ignore[attr-defined]


def growth(run: Callable[[], None]) -> tuple[list[int], list[int]]:
    """The growth of references and memory blocks over each measured run of *run*."""
    for _ in range(WARMUPS):
        run()
    references: list[int] = []
    blocks: list[int] = []
    for _ in range(MEASURED_RUNS):
        refs_before, blocks_before = counts()
        run()
        refs_after, blocks_after = counts()
        references.append(refs_after - refs_before)
        blocks.append(blocks_after - blocks_before)
    return references, blocks


def leaks(deltas: list[int]) -> bool:
    # As CPython's regrtest: growth in every run is a leak; [3, 0, 0] or
    # [8, -8, 1] are caches settling.
    return all(delta >= 1 for delta in deltas)


@pytest.fixture
def modules(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_opted_in_module_alive: None
) -> Modules:
    monkeypatch.setenv("PEP726HOOK_ENGINE", "native")
    monkeypatch.syspath_prepend(str(tmp_path))
    return Modules(tmp_path)


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda function: function.__name__)
def test_path_leaks_nothing(path: Scenario, modules: Modules) -> None:
    def run() -> None:
        for _ in range(CALLS_PER_RUN):
            path(modules)

    references, blocks = growth(run)
    assert not pep726hook.is_installed()
    assert not (leaks(references) or leaks(blocks)), (
        f"{path.__name__} grew over {MEASURED_RUNS} runs of {CALLS_PER_RUN} calls each: "
        f"references {references}, memory blocks {blocks}"
    )


def test_the_check_sees_a_leak(modules: Modules) -> None:
    kept: list[object] = []

    def leaking() -> None:
        kept.append(object())

    references, blocks = growth(leaking)
    assert leaks(references)
    # Blocks are pymalloc's: none are counted under PYTHONMALLOC=malloc (as
    # under AddressSanitizer).
    assert leaks(blocks) or sys.getallocatedblocks() == 0


# -- the move against frames, threads and the collector (test_native_move_hostile.py) ---


@scenario
def a_generator_whose_functions_code_was_replaced_before_the_move(modules: Modules) -> None:
    from test_native_move_hostile import REPLACED_CODE

    source = REPLACED_CODE.format(replacement="plain")
    with quiet_warnings(), modules.imported("refleak_replaced", source) as module:
        module.__name__  # noqa: B018  (the move: the pass finds the generator by its file)
        assert next(module.waiting) == 1


@scenario
def a_move_refused_after_gc_freeze_until_unfreeze(modules: Modules) -> None:
    from test_native_move_hostile import FROZEN

    with quiet_warnings(), modules.imported("refleak_frozen", FROZEN) as module:
        gc.freeze()
        try:
            assert module.Old == 1  # the move waits: the pass would miss frozen objects
            assert module.cached() == 1 and next(module.waiting) == 1
        finally:
            gc.unfreeze()
        module.__name__  # noqa: B018  (now it moves)
        assert module.cached() == 1 and next(module.waiting) == 1
        module.cached.cache_clear()


@scenario
def a_body_read_from_another_thread_while_it_runs(modules: Modules) -> None:
    import importlib.util
    import threading

    from test_native_move_hostile import BODY_READ_FROM_A_THREAD, READ_IN_A_THREAD

    modules.write("refleak_body", BODY_READ_FROM_A_THREAD.format(act=READ_IN_A_THREAD))
    spec = importlib.util.find_spec("refleak_body")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["refleak_body"] = module
    try:
        with quiet_warnings():
            spec.loader.exec_module(module)  # no _initializing: the running body keeps the names
            assert module.value == 1 and module.Old == 1
    finally:
        del sys.modules["refleak_body"]
    assert not isinstance(module.thread, threading.Thread) or not module.thread.is_alive()


DECLARING = """
import pep726hook

attempts = []

def make_table():
    attempts.append(1)
    if len(attempts) % 2:
        raise AttributeError("not yet")
    return {"table": 1}

def __getattr__(name):
    if name == "computed":
        return 42
    raise AttributeError(f"own miss {name}")

pep726hook.lazy_attribute(__name__, "sub")
pep726hook.lazy_attribute(__name__, "table", factory=make_table)
pep726hook.removed_attribute(__name__, "float", "float was removed")
pep726hook.removed_attribute(__name__, "old", "old was removed", warning="old goes away")
"""


@scenario
def declared_lazy_and_removed_names(modules: Modules) -> None:
    modules.write("refleak_declaring.sub", "VALUE = 1\n")
    with quiet_warnings(), modules.imported("refleak_declaring.__init__", DECLARING) as module:
        assert module.sub.VALUE == 1
        with pytest.raises(AttributeError, match="not yet"):
            module.table  # noqa: B018
        assert module.table == {"table": 1}
        for name in ("float", "old"):
            with pytest.raises(AttributeError, match="was removed"):
                getattr(module, name)
            assert not hasattr(module, name)
        assert module.computed == 42
        assert "sub" in dir(module)
        module.float = 1.0
        del module.float
        with pytest.raises(AttributeError):
            object.__getattribute__(module, "old")
        assert module.computed == 42


@scenario
def other_modules_miss_declared_names(modules: Modules) -> None:
    declaring = made_module("refleak_declaring_made", "Old = 1\n")
    try:
        pep726hook.deprecate_attribute(declaring, "Old", "Old is deprecated")
        pep726hook.removed_attribute(declaring, "gone", "gone was removed")
        other = types.ModuleType("refleak_other")
        for _ in range(3):
            assert not hasattr(other, "Old") and not hasattr(other, "gone")
            assert getattr(other, "Old", None) is None
        with pytest.raises(AttributeError) as caught:
            object.__getattribute__(other, "Old")
        held = caught.value
        assert not hasattr(other, "Old")
        del caught, held
    finally:
        del sys.modules["refleak_declaring_made"]


# -- a deprecating module whose namespace leads back to itself (test_native_deprecation_lifetime.py) ---


@scenario
def a_self_referring_deprecating_module_dropped(modules: Modules) -> None:
    import weakref

    from test_native_deprecation_lifetime import SELF_REFERRING

    with quiet_warnings(), modules.imported("refleak_self", SELF_REFERRING) as module:
        module.__name__  # noqa: B018  (the move)
        assert module.Old() is module
        ref = weakref.ref(module)
        del module
    gc.collect()  # the cycle module -> namespace -> module, with the extension's record
    assert ref() is None

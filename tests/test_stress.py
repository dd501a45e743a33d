"""Concurrency and robustness: threads, failing bodies, churn of the import system.

Every thread is joined with a time limit: a thread still running then is
reported as a deadlock and fails the test instead of hanging the run.  The
limit only guards against hangs; nothing here asserts on timing.
"""

from __future__ import annotations

import collections
import contextlib
import importlib
import random
import sys
import threading
import types
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
from _venv import Venv, WriteModule, extension_expected, join_or_fail

import pep726hook

THREADS = 8
MODULES = 40


@pytest.fixture(scope="module", autouse=True)
def _conftest_cleanup_did_its_job(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """After every test here, conftest's autouse fixture must have undone our imports.

    Module scope: this teardown runs after the last test's function-scoped
    teardowns, so it checks what they left.
    """
    meta_path = list(sys.meta_path)
    path = list(sys.path)
    yield
    base = str(tmp_path_factory.getbasetemp())
    leftovers = [
        name
        for name, module in list(sys.modules.items())
        if name.startswith("stress_")
        or str(getattr(module, "__file__", None) or "").startswith(base)
    ]
    assert leftovers == []
    assert sys.meta_path == meta_path
    assert sys.path == path


def run_threads(*targets: Callable[[], Any]) -> None:
    """Run each target in its own thread; re-raise the first error; fail on a hang."""
    errors: list[BaseException] = []

    def guarded(target: Callable[[], Any]) -> None:
        try:
            target()
        except BaseException as error:  # reported to the test below
            errors.append(error)

    threads = [
        threading.Thread(target=guarded, args=(t,), name=f"stress-{i}", daemon=True)
        for i, t in enumerate(targets)
    ]
    for thread in threads:
        thread.start()
    join_or_fail(threads)
    if errors:
        raise errors[0]


def hook_source(registry: str) -> str:
    """Recording hooks that store, as the PEP's examples do."""
    return f"""
import {registry}

def __setattr__(name, value):
    {registry}.calls.append((__name__, "set", name))
    globals()[name] = value

def __delattr__(name):
    {registry}.calls.append((__name__, "del", name))
    del globals()[name]
"""


def write_registry(write_module: WriteModule, name: str) -> types.ModuleType:
    write_module(name, "calls = []\nexecuted = []\ncaptured = []\nfail = True\n")
    return importlib.import_module(name)


def assert_hooks_work(module: types.ModuleType, registry: types.ModuleType) -> None:
    assert pep726hook.is_upgraded(module), module.__name__
    module.probe = 1
    del module.probe
    assert registry.calls[-2:] == [
        (module.__name__, "set", "probe"),
        (module.__name__, "del", "probe"),
    ]


# --- many threads, many modules importing each other ------------------------------------


def write_module_graph(write_module: WriteModule, prefix: str, registry: str) -> list[str]:
    """MODULES hooked modules; each imports some with higher numbers (no cycle, so no
    thread can deadlock on the import system's own module locks); every fifth is a
    package whose __init__ imports a hooked submodule (a store the parent's hook sees)."""
    names = [f"{prefix}{i}" for i in range(MODULES)]
    for i, name in enumerate(names):
        deps = sorted({j for j in (i + 1, i + 3, 2 * i + 1) if j < MODULES})
        body = hook_source(registry)
        body += f"{registry}.executed.append(__name__)\n"
        body += "".join(f"import {names[j]}\n" for j in deps)
        if i % 5 == 0:
            write_module(name, body + f"from {name} import sub\n", package=True)
            write_module(f"{name}.sub", hook_source(registry) + "value = 1\n")
        else:
            write_module(name, body)
    return names


def test_threads_importing_a_module_graph_upgrade_every_module_once(
    engine: str, write_module: WriteModule, busy_switching: None
) -> None:
    for round_ in range(3):
        registry = write_registry(write_module, f"stress_graph_registry{round_}")
        names = write_module_graph(write_module, f"stress_graph{round_}_", registry.__name__)

        def import_all(seed: int, names: list[str] = names) -> None:
            order = list(names)
            random.Random(seed).shuffle(order)
            for name in order:
                importlib.import_module(name)

        run_threads(*(lambda seed=seed: import_all(seed) for seed in range(THREADS)))

        counts = collections.Counter(registry.executed)
        assert counts == collections.Counter(names)
        for name in names:
            module = sys.modules[name]
            assert_hooks_work(module, registry)
            if hasattr(module, "sub"):
                assert module.sub is sys.modules[f"{name}.sub"]
                assert (name, "set", "sub") in registry.calls
                assert_hooks_work(module.sub, registry)


# --- a module body that fails -----------------------------------------------------------


def test_failing_body_leaves_nothing_upgraded_and_reimport_works(
    engine: str, write_module: WriteModule
) -> None:
    registry = write_registry(write_module, "stress_fail_registry")
    source = hook_source("stress_fail_registry") + (
        "import sys\n"
        "stress_fail_registry.captured.append(sys.modules[__name__])\n"
        "x = 1\n"
        "if stress_fail_registry.fail:\n"
        "    raise RuntimeError('body failed after defining hooks')\n"
    )
    write_module("stress_failing", source)
    with pytest.raises(RuntimeError, match="body failed"):
        importlib.import_module("stress_failing")

    assert "stress_failing" not in sys.modules
    failed_module = registry.captured[0]
    assert type(failed_module) is types.ModuleType
    if engine == "class":
        assert not pep726hook.is_upgraded(failed_module)

    registry.fail = False
    module = importlib.import_module("stress_failing")
    assert module is not failed_module
    assert_hooks_work(module, registry)


def test_failing_body_in_many_threads_leaves_nothing_upgraded(
    engine: str, write_module: WriteModule, busy_switching: None
) -> None:
    registry = write_registry(write_module, "stress_tfail_registry")
    source = hook_source("stress_tfail_registry") + (
        "import sys\n"
        "stress_tfail_registry.captured.append(sys.modules[__name__])\n"
        "raise LookupError('always fails')\n"
    )
    names = [f"stress_tfail{i}" for i in range(10)]
    for name in names:
        write_module(name, source)

    escaped: list[types.ModuleType] = []

    def import_each() -> None:
        for name in names:
            with contextlib.suppress(LookupError):
                escaped.append(importlib.import_module(name))

    run_threads(*([import_each] * THREADS))
    assert not [name for name in names if name in sys.modules]
    # A thread that found the module in sys.modules just before the failing
    # import removed it can get the failed module object back without an
    # error: CPython's own race (its _initializing flag is cleared after the
    # removal), with or without pep726hook.  That object must be plain too.
    assert len(registry.captured) + len(escaped) == THREADS * len(names)
    assert {id(module) for module in escaped} <= {id(module) for module in registry.captured}
    failed_modules = registry.captured + escaped
    assert {type(module) for module in failed_modules} == {types.ModuleType}
    if engine == "class":
        assert not any(pep726hook.is_upgraded(module) for module in failed_modules)


# --- hooks that import ------------------------------------------------------------------


def test_hook_that_imports_other_modules_works_across_threads(
    engine: str, write_module: WriteModule, busy_switching: None
) -> None:
    registry = write_registry(write_module, "stress_himp_registry")
    for i in range(THREADS):
        write_module(f"stress_himp_dep{i}", hook_source("stress_himp_registry") + "loaded = 1\n")
    # The package's hook imports a module (with hooks of its own) named after
    # what is stored; importlib's own setattr(package, "sub", ...) goes through it.
    write_module(
        "stress_himp",
        """
        import importlib
        import stress_himp_registry

        def __setattr__(name, value):
            if name.startswith("dep"):
                dep = importlib.import_module("stress_himp_" + name)
                stress_himp_registry.calls.append(("stress_himp", "set", name, dep.loaded))
            else:
                stress_himp_registry.calls.append(("stress_himp", "set", name))
            globals()[name] = value
        """,
        package=True,
    )
    write_module("stress_himp.sub", hook_source("stress_himp_registry"))
    package = importlib.import_module("stress_himp")

    def store(i: int) -> None:
        setattr(package, f"dep{i}", i)
        importlib.import_module("stress_himp.sub")

    run_threads(*(lambda i=i: store(i) for i in range(THREADS)))

    assert sorted(c for c in registry.calls if len(c) == 4) == sorted(
        ("stress_himp", "set", f"dep{i}", 1) for i in range(THREADS)
    )
    assert ("stress_himp", "set", "sub") in registry.calls
    for i in range(THREADS):
        assert_hooks_work(sys.modules[f"stress_himp_dep{i}"], registry)
    assert_hooks_work(sys.modules["stress_himp.sub"], registry)


# --- sys.modules replaced while the body runs ---------------------------------------------


def test_module_replacing_itself_in_sys_modules_from_many_threads(
    engine: str, write_module: WriteModule, busy_switching: None
) -> None:
    registry = write_registry(write_module, "stress_repl_registry")
    write_module(
        "stress_replacing",
        """
        import sys, types
        import stress_repl_registry

        replacement = types.ModuleType(__name__)

        def __setattr__(name, value):
            stress_repl_registry.calls.append((__name__, "set", name))
            replacement.__dict__[name] = value

        def __delattr__(name):
            stress_repl_registry.calls.append((__name__, "del", name))
            del replacement.__dict__[name]

        replacement.__dict__.update(__setattr__=__setattr__, __delattr__=__delattr__)
        sys.modules[__name__] = replacement
        """,
    )
    write_module(
        "stress_replaced_by_object",
        """
        import sys
        class Namespace:
            value = 42
        sys.modules[__name__] = Namespace()
        """,
    )
    seen: list[Any] = []

    def import_both() -> None:
        seen.append(importlib.import_module("stress_replacing"))
        seen.append(importlib.import_module("stress_replaced_by_object"))

    run_threads(*([import_both] * THREADS))

    replacement = sys.modules["stress_replacing"]
    other = sys.modules["stress_replaced_by_object"]
    assert {id(m) for m in seen} == {id(replacement), id(other)}
    assert other.value == 42
    assert_hooks_work(replacement, registry)


# --- install and uninstall while other threads import ------------------------------------


def test_install_and_uninstall_while_threads_import(
    engine: str, write_module: WriteModule, busy_switching: None
) -> None:
    registry = write_registry(write_module, "stress_churn_registry")
    per_thread = 25
    for t in range(4):
        for i in range(per_thread):
            # The sleep holds each import open, so that install() and
            # uninstall() keep landing in the middle of module bodies.
            body = hook_source("stress_churn_registry") + "import time\ntime.sleep(0.001)\nx = 1\n"
            write_module(f"stress_churn{t}_{i}", body)
    importers_left = threading.Semaphore(0)

    def churn() -> None:
        done = 0
        while done < 4:
            pep726hook.uninstall()
            pep726hook.install(engine)
            done += importers_left.acquire(blocking=False)

    def importer(t: int) -> None:
        try:
            for i in range(per_thread):
                module = importlib.import_module(f"stress_churn{t}_{i}")
                assert module.x == 1
        finally:
            importers_left.release()

    run_threads(churn, *(lambda t=t: importer(t) for t in range(4)))

    # Whatever each module got while the engine came and went, the state
    # settles: uninstalled, nothing calls a hook; installed again, every
    # module that defines hooks gets them back.
    names = [f"stress_churn{t}_{i}" for t in range(4) for i in range(per_thread)]
    pep726hook.uninstall()
    for name in names:
        module = sys.modules[name]
        assert not pep726hook.is_upgraded(module)
        if engine == "class":
            assert type(module) is types.ModuleType, name
        calls = len(registry.calls)
        module.y = 2
        assert len(registry.calls) == calls, name
        assert module.__dict__["y"] == 2
    pep726hook.install(engine)
    for name in names:
        assert_hooks_work(sys.modules[name], registry)


# --- cache churn --------------------------------------------------------------------------


def test_imports_survive_finder_cache_churn(
    engine: str, write_module: WriteModule, busy_switching: None
) -> None:
    registry = write_registry(write_module, "stress_cache_registry")
    names = [f"stress_cache{i}" for i in range(MODULES)]
    for name in names:
        write_module(name, hook_source("stress_cache_registry"))
    stop = threading.Event()

    def churn() -> None:
        while not stop.is_set():
            importlib.invalidate_caches()
            sys.path_importer_cache.clear()

    def importer(seed: int) -> None:
        order = list(names)
        random.Random(seed).shuffle(order)
        for name in order:
            importlib.import_module(name)

    def importers() -> None:
        try:
            run_threads(*(lambda s=s: importer(s) for s in range(THREADS - 1)))
        finally:
            stop.set()

    run_threads(churn, importers)
    for name in names:
        assert_hooks_work(sys.modules[name], registry)


# --- the engine changing while a module body runs ---------------------------------------


def test_uninstall_during_an_import_leaves_the_module_without_hooks(
    engine: str, write_module: WriteModule
) -> None:
    registry = write_registry(write_module, "stress_selfun_registry")
    source = hook_source("stress_selfun_registry") + "import pep726hook\npep726hook.uninstall()\n"
    write_module("stress_self_uninstalling", source)
    module = importlib.import_module("stress_self_uninstalling")

    assert not pep726hook.is_installed()
    assert not pep726hook.is_upgraded(module)
    assert type(module) is types.ModuleType
    module.y = 1
    assert registry.calls == []

    pep726hook.install(engine)
    assert_hooks_work(module, registry)
    pep726hook.uninstall()
    assert type(module) is types.ModuleType
    module.z = 1
    assert len(registry.calls) == 2


def test_reinstall_during_an_import_leaves_the_module_to_the_new_engine(
    engine: str, write_module: WriteModule
) -> None:
    registry = write_registry(write_module, "stress_selfre_registry")
    source = hook_source("stress_selfre_registry") + (
        f"import pep726hook\npep726hook.uninstall()\npep726hook.install({engine!r})\n"
    )
    write_module("stress_self_reinstalling", source)
    module = importlib.import_module("stress_self_reinstalling")

    assert pep726hook.engine() == engine
    assert_hooks_work(module, registry)
    pep726hook.uninstall()
    assert type(module) is types.ModuleType
    calls = len(registry.calls)
    module.z = 1
    assert len(registry.calls) == calls


class _ActOnce:
    """A meta path finder that finds nothing but runs *action* when first asked for *name*."""

    def __init__(self, name: str, action: Callable[[], Any]) -> None:
        self.name = name
        self.action = action
        self.done = False

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> None:
        if fullname == self.name and not self.done:
            self.done = True
            self.action()


def test_install_and_uninstall_during_a_meta_path_walk_do_not_hide_modules(
    engine: str, write_module: WriteModule
) -> None:
    # What another thread's install()/uninstall() can do to an import under
    # way, made deterministic: the import system walks sys.meta_path by index,
    # so changing that list in place shifts the finders under its feet.
    # Here install() lands while the walk is at the first finder, uninstall()
    # while it is at the one just before PathFinder; PathFinder must still be
    # asked, and the module found.
    write_module("stress_walked", "x = 1\n")
    pep726hook.uninstall()
    path_finder = next(
        i for i, f in enumerate(sys.meta_path) if f is importlib.machinery.PathFinder
    )
    sys.meta_path.insert(path_finder, _ActOnce("stress_walked", pep726hook.uninstall))
    sys.meta_path.insert(0, _ActOnce("stress_walked", lambda: pep726hook.install(engine)))

    module = importlib.import_module("stress_walked")
    assert module.x == 1


FREE_THREADED = bool(__import__("sysconfig").get_config_var("Py_GIL_DISABLED"))

GIL_PROBE = """\
import os, sys, threading, pep726hook, pep726hook._runner, pep726hook._cli
if os.environ["IMPORT_MEMFIND"] == "1":
    import pep726hook._scan._memfind
pep726hook.install()
def work():
    import json, email.message
threads = [threading.Thread(target=work) for _ in range(4)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join(60)
print(sys._is_gil_enabled(), pep726hook.engine(), any(t.is_alive() for t in threads))
"""


@pytest.mark.skipif(not FREE_THREADED, reason="needs a free-threaded build")
def test_free_threaded_build_keeps_running_without_the_gil(venv: Venv) -> None:
    # An extension module without Py_mod_gil = Py_MOD_GIL_NOT_USED would turn
    # the GIL back on for the whole process the moment it is imported.
    package = venv.check_python(["-c", "import pep726hook; print(pep726hook.__file__)"])
    memfind = extension_expected(Path(package.strip()).parent / "_scan" / "_memfind")
    env = {"PYTHON_GIL": "", "IMPORT_MEMFIND": "1" if memfind else "0"}
    out = venv.check_python(["-c", GIL_PROBE], env=env)
    assert out == "False class False\n"

"""A process's first enable() calls, which the native engine serves through the extension alone.

While nothing else of the package has run, ``pep726hook.enable()`` opts a
module in with one call of the extension, without loading the installation
state or the engine modules (``benchmarks/bench_first_use.py``).  What
happens afterwards must not show it: the state adopts those modules when it
loads, and every engine's answers are the full path's.  Each test is a fresh
process, since the test session itself loaded the state long ago.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from _venv import ENGINES, run_fresh_json, write

# Two libraries with a hook, and one with a PEP 562 __getattr__, written into
# the child's working directory.
LIBRARY = """\
import pep726hook
seen = []
def __setattr__(name, value):
    seen.append(name)
    globals()[name] = value
pep726hook.enable(__name__)
"""
LAZY = """\
import pep726hook
def __getattr__(name):
    if name == "later":
        return 42
    raise AttributeError(name)
pep726hook.enable(__name__)
"""


@pytest.fixture
def libraries(tmp_path: Path) -> Path:
    write(tmp_path / "first_library.py", LIBRARY)
    write(tmp_path / "second_library.py", LIBRARY)
    write(tmp_path / "lazy_library.py", LAZY)
    write(tmp_path / "plain_module.py", LIBRARY.replace("pep726hook.enable(__name__)\n", ""))
    return tmp_path


@pytest.mark.parametrize("engine", ENGINES)
def test_first_enables_call_the_hooks_of_their_modules_only(libraries: Path, engine: str) -> None:
    printed = run_fresh_json(
        libraries,
        """
        import first_library, second_library, plain_module, json
        first_library.a = 1
        second_library.b = 2
        plain_module.c = 3
        loaded = sorted(name for name in sys.modules if name.startswith("pep726hook"))
        print(json.dumps({"seen": [first_library.seen, second_library.seen, plain_module.seen],
                          "loaded": loaded}))
        """,
        engine,
    )
    assert printed["seen"] == [["a"], ["b"], []]
    if engine == "native":
        assert printed["loaded"] == ["pep726hook", "pep726hook._native"]


@pytest.mark.parametrize("engine", ENGINES)
def test_the_state_adopts_the_modules_enabled_before_it_loaded(
    libraries: Path, engine: str
) -> None:
    printed = run_fresh_json(
        libraries,
        """
        import first_library, plain_module, json
        import pep726hook
        from pep726hook import _enable
        answers = [pep726hook.engine(first_library), pep726hook.is_upgraded(first_library),
                   _enable.is_opted_in(first_library), _enable.opted_in_engine()]
        # The process-wide hook comes and goes; the opted-in module keeps its hooks.
        pep726hook.install()
        plain_module.during = 1
        pep726hook.uninstall()
        first_library.after = 2
        plain_module.after = 3
        print(json.dumps({"answers": answers, "seen": [first_library.seen, plain_module.seen]}))
        """,
        engine,
    )
    assert printed["answers"] == [engine, True, True, engine]
    assert printed["seen"] == [["after"], ["during"]]


@pytest.mark.parametrize("engine", ENGINES)
def test_a_module_enabled_alone_can_deprecate_names_later(libraries: Path, engine: str) -> None:
    printed = run_fresh_json(
        libraries,
        """
        import first_library, json, warnings
        import pep726hook
        first_library.Old = 1
        pep726hook.deprecate_attribute(first_library, "Old", "Old is deprecated; use New")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            value = first_library.Old
        first_library.later = 5
        print(json.dumps({"value": value, "warned": [str(w.message) for w in caught],
                          "seen": first_library.seen}))
        """,
        engine,
    )
    assert printed == {
        "value": 1,
        "warned": ["Old is deprecated; use New"],
        "seen": ["Old", "later"],
    }


def test_the_first_path_leaves_the_full_paths_state(libraries: Path) -> None:
    # lazy_library enabled alone, then the same module enabled again after the
    # state loaded: the extension's state (where __getattr__ lives on 3.11,
    # whether the read slot is wrapped) must not change.
    pytest.importorskip("pep726hook._native")
    printed = run_fresh_json(
        libraries,
        """
        import lazy_library, json
        from pep726hook import _native
        first = [_native.state()["getattro_wrapped"], _native.state()["relocating"],
                 "__getattr__" in vars(lazy_library), lazy_library.later]
        import pep726hook._state
        pep726hook.enable(lazy_library)
        again = [_native.state()["getattro_wrapped"], _native.state()["relocating"],
                 "__getattr__" in vars(lazy_library), lazy_library.later]
        print(json.dumps({"first": first, "again": again}))
        """,
        "native",
    )
    assert printed["first"] == printed["again"]
    relocated = sys.version_info[:2] == (3, 11)
    assert printed["first"] == [relocated, int(relocated), not relocated, 42]


@pytest.mark.parametrize("engine", ENGINES)
def test_threads_enabling_while_another_installs_lose_no_opt_in(
    libraries: Path, engine: str
) -> None:
    # The state may load in one thread while others opt their modules in:
    # each module is either opted in by the extension before the state loads
    # (and adopted) or by the full path after, never lost between the two.
    printed = run_fresh_json(
        libraries,
        """
        import json, threading, types
        import pep726hook
        def hooked(index):
            module = types.ModuleType(f"hooked{index}")
            seen = []
            module.__setattr__ = lambda name, value: seen.append(name)
            sys.modules[module.__name__] = module
            return module, seen
        made = [hooked(index) for index in range(40)]
        start = threading.Barrier(5)
        def enable(part):
            start.wait()
            for module, _ in part:
                pep726hook.enable(module.__name__)
        def install():
            start.wait()
            pep726hook.install()
            pep726hook.uninstall()
        threads = [threading.Thread(target=enable, args=(made[i::4],)) for i in range(4)]
        threads.append(threading.Thread(target=install))
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        from pep726hook import _enable
        for module, _ in made:
            module.x = 1
        print(json.dumps({
            "opted_in": sum(_enable.is_opted_in(module) for module, _ in made),
            "called": sum(seen == ["x"] for _, seen in made),
        }))
        """,
        engine,
    )
    assert printed == {"opted_in": 40, "called": 40}


def test_an_engine_the_environment_names_is_still_honoured(libraries: Path) -> None:
    printed = run_fresh_json(
        libraries,
        """
        import first_library, json, pep726hook
        first_library.a = 1
        print(json.dumps([pep726hook.engine(first_library), first_library.seen]))
        """,
        "class",
    )
    assert printed == ["class", ["a"]]


def test_bad_arguments_get_the_full_paths_errors(libraries: Path) -> None:
    printed = run_fresh_json(
        libraries,
        """
        import json, pep726hook
        errors = []
        for call in (lambda: pep726hook.enable("no_such_module"), lambda: pep726hook.enable(3),
                     lambda: pep726hook.enable(sys, fast_getattr="yes")):
            try:
                call()
            except (TypeError, ValueError) as error:
                errors.append(type(error).__name__)
        print(json.dumps(errors))
        """,
        ENGINES[0],
    )
    assert printed == ["ValueError", "TypeError", "TypeError"]


SUBINTERPRETER_ENABLES = """
import sys, types
sys.path.insert(0, {directory!r})
import pep726hook
log = []
mine = types.ModuleType("mine")
mine.__dict__["__setattr__"] = lambda name, value: log.append(name)
sys.modules["mine"] = mine
pep726hook.enable("mine")
mine.x = 1
# The sub-interpreter's own copy of the package took the full path.
open({out!r}, "w").write(repr([log, "pep726hook._state" in sys.modules]))
"""


def test_a_sub_interpreter_enables_after_the_main_one_did_alone(
    libraries: Path, tmp_path: Path
) -> None:
    # The main interpreter's first enable() went through the extension alone
    # (its state never loaded); a sub-interpreter sharing the GIL then
    # attaches to that patch by the full path, and both keep their hooks.
    pytest.importorskip("pep726hook._native")
    testcapi = pytest.importorskip("_testcapi")
    if not hasattr(testcapi, "run_in_subinterp"):
        pytest.skip("no _testcapi.run_in_subinterp here")
    out = tmp_path / "sub.txt"
    code = SUBINTERPRETER_ENABLES.format(directory=str(libraries), out=str(out))
    printed = run_fresh_json(
        libraries,
        f"""
        import json, _testcapi, first_library
        status = _testcapi.run_in_subinterp({code!r})
        first_library.after = 1
        print(json.dumps([status, first_library.seen, "pep726hook._state" in sys.modules]))
        """,
        "native",
    )
    assert printed == [0, ["after"], False]
    assert out.read_text() == "[['x'], True]"

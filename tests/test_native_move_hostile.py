"""What real programs do to frames, threads and the collector around the move of deprecated names.

Under the native engine a deprecating module's names leave its namespace
for its private builtins once its import has ended; every function and
frame of the module that started before must read them there.  Each case
here broke that once (the module's own code raised ``NameError`` on its own
deprecated name, or the process crashed); each runs in a fresh process,
under every engine (the class engine keeps the names in the namespace and
must read them all the same).
"""

from __future__ import annotations

import gc
import importlib.util
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from _venv import TIMEOUT, clean_env, describe


def _run(tmp_path: Path, engine: str, modules: dict[str, str], script: str) -> str:
    """Run *script* with *modules* importable under *engine*; its stdout (it must exit 0)."""
    for name, source in modules.items():
        (tmp_path / f"{name}.py").write_text(textwrap.dedent(source))
    (tmp_path / "main_script.py").write_text(textwrap.dedent(script))
    env = clean_env()
    env["PEP726HOOK_ENGINE"] = engine
    env["PYTHONPATH"] = str(tmp_path)
    result = subprocess.run(
        [sys.executable, "-W", "ignore::DeprecationWarning", str(tmp_path / "main_script.py")],
        capture_output=True,
        text=True,
        env=env,
        timeout=TIMEOUT,
        check=False,
        cwd=str(tmp_path),
    )
    assert result.returncode == 0, describe(result)
    assert result.stdout.strip().endswith("ok"), describe(result)
    return result.stdout


# -- a function's code replaced under its suspended generator ---------------------

REPLACED_CODE = """
import pep726hook

Old = 1

def generator():
    yield Old
    yield Old

def plain():
    return 2

def other_generator():
    yield 3

waiting = generator()
next(waiting)
generator.__code__ = {replacement}.__code__
pep726hook.deprecate_attribute(__name__, "Old", "Old is deprecated")
"""


@pytest.mark.parametrize("replacement", ["plain", "other_generator"])
def test_a_generator_whose_functions_code_was_replaced_reads_the_name_after_the_move(
    tmp_path: Path, opt_in_engine: str, replacement: str
) -> None:
    _run(
        tmp_path,
        opt_in_engine,
        {"codemod": REPLACED_CODE.format(replacement=replacement)},
        """
        import codemod
        codemod.__name__  # moves the names
        assert next(codemod.waiting) == 1
        print("ok")
        """,
    )


# -- a body still running in one thread, read or deprecated from another ------------

BODY_READ_FROM_A_THREAD = """
import sys
import threading
import pep726hook

Old = 1
pep726hook.deprecate_attribute(__name__, "Old", "Old is deprecated")
{act}
value = Old  # the body's own read, after the other thread's
"""

READ_IN_A_THREAD = """
seen = []
thread = threading.Thread(target=lambda: seen.append(sys.modules[__name__].Old))
thread.start()
thread.join()
assert seen == [1], seen
"""

DEPRECATE_IN_A_THREAD = """
Later = 2
thread = threading.Thread(
    target=lambda: pep726hook.deprecate_attribute(__name__, "Later", "Later is deprecated")
)
thread.start()
thread.join()
later = Later
"""

# importlib's documented recipe: no _initializing spec, so only the running
# body tells that the import has not ended.
RECIPE = """
import importlib.util
import sys

spec = importlib.util.spec_from_file_location("bodymod", "bodymod.py")
module = importlib.util.module_from_spec(spec)
sys.modules["bodymod"] = module
spec.loader.exec_module(module)
assert module.value == 1
{after}
print("ok")
"""


@pytest.mark.parametrize("act", ["read", "deprecate"])
def test_a_body_run_by_importlibs_recipe_keeps_its_names_while_another_thread_uses_the_module(
    tmp_path: Path, opt_in_engine: str, act: str
) -> None:
    body = READ_IN_A_THREAD if act == "read" else DEPRECATE_IN_A_THREAD
    after = "assert module.later == 2\nassert module.Later == 2" if act == "deprecate" else ""
    _run(
        tmp_path,
        opt_in_engine,
        {"bodymod": BODY_READ_FROM_A_THREAD.format(act=body)},
        RECIPE.format(after=after) + "assert module.Old == 1\nassert 'Old' in dir(module)\n",
    )


def test_a_main_script_read_from_its_own_thread_keeps_its_names(
    tmp_path: Path, opt_in_engine: str
) -> None:
    _run(
        tmp_path,
        opt_in_engine,
        {},
        BODY_READ_FROM_A_THREAD.format(act=READ_IN_A_THREAD) + "\nprint('ok')\n",
    )


# -- gc.freeze(): objects the pass over tracked objects cannot see -------------------

# PyPy's collector has no permanent generation to move objects into.
needs_gc_freeze = pytest.mark.skipif(
    not hasattr(gc, "freeze"), reason="this interpreter has no gc.freeze() (PyPy)"
)

FROZEN = """
import functools
import pep726hook

Old = 1

@functools.lru_cache(maxsize=None)
def cached():
    return Old

def generator():
    while True:
        yield Old

waiting = generator()
next(waiting)
pep726hook.deprecate_attribute(__name__, "Old", "Old is deprecated")
"""


@needs_gc_freeze
def test_functions_and_generators_in_the_permanent_generation_read_the_name(
    tmp_path: Path, opt_in_engine: str
) -> None:
    _run(
        tmp_path,
        opt_in_engine,
        {"frozenmod": FROZEN},
        """
        import gc
        import warnings
        import frozenmod

        gc.freeze()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert frozenmod.Old == 1  # the first read: the names could move here
        assert len(caught) == 1, caught
        assert frozenmod.cached() == 1
        assert next(frozenmod.waiting) == 1
        gc.unfreeze()
        frozenmod.__name__  # the move is safe now
        assert frozenmod.cached() == 1
        assert next(frozenmod.waiting) == 1
        print("ok")
        """,
    )


@needs_gc_freeze
def test_gc_freeze_between_two_deprecations_loses_no_value(
    tmp_path: Path, opt_in_engine: str
) -> None:
    _run(
        tmp_path,
        opt_in_engine,
        {"frozenmod": FROZEN + "\nNew = 2\n\ndef read_new():\n    return New\n"},
        """
        import gc
        import warnings
        import pep726hook
        import frozenmod

        gc.freeze()
        pep726hook.deprecate_attribute("frozenmod", "New", "New is deprecated")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert (frozenmod.Old, frozenmod.New) == (1, 2)
        assert len(caught) == 2, caught
        assert (frozenmod.cached(), frozenmod.read_new(), next(frozenmod.waiting)) == (1, 2, 1)
        gc.unfreeze()
        frozenmod.__name__
        assert (frozenmod.cached(), frozenmod.read_new()) == (1, 2)
        print("ok")
        """,
    )


# A generator another module holds, suspended before the deprecation: only
# the pass finds its frame, and after gc.freeze() no pass runs.  The walk
# that proves nothing (the generator's frame holds its function) must leave
# the function as it was: a later walk would take it for one made with the
# private builtins, prove the namespace and move the name under the frame.
HELD_ELSEWHERE = """
import pep726hook
import holder

Old = 1

def generator():
    while True:
        yield Old

holder.held.append(generator())
next(holder.held[0])
pep726hook.deprecate_attribute(__name__, "Old", "Old is deprecated")
"""


@needs_gc_freeze
@pytest.mark.parametrize("route", ["extension-alone", "full-path"])
def test_a_generator_another_module_holds_reads_the_name_after_gc_freeze(
    tmp_path: Path, opt_in_engine: str, route: str
) -> None:
    _run(
        tmp_path,
        opt_in_engine,
        {"heldmod": HELD_ELSEWHERE, "holder": "held = []\n"},
        """
        import gc
        import sys
        if {full_path}:
            import pep726hook._state
        import heldmod, holder

        gc.freeze()
        for _ in range(3):  # each read from outside the body may try the move
            assert heldmod.Old == 1
        assert next(holder.held[0]) == 1
        gc.unfreeze()
        heldmod.__name__  # the pass sees the frame now
        assert next(holder.held[0]) == 1 and heldmod.Old == 1
        print("ok")
        """.replace("{full_path}", str(route == "full-path")),
    )


# -- a frame parked in a greenlet ---------------------------------------------------

GREENLET_MODULE = """
import greenlet
import pep726hook

Old = 1

def parked():
    first = Old
    greenlet.getcurrent().parent.switch("parked")
    return (first, Old)

waiting = greenlet.greenlet(parked)
assert waiting.switch() == "parked"
pep726hook.deprecate_attribute(__name__, "Old", "Old is deprecated")
"""


def test_a_frame_parked_in_a_greenlet_reads_the_name_when_it_resumes(
    tmp_path: Path, opt_in_engine: str
) -> None:
    # Not imported here: with greenlet imported, every move of this process
    # runs the pass (3.11+), which other tests count.
    if importlib.util.find_spec("greenlet") is None:
        pytest.skip("greenlet cannot be installed for this interpreter")
    _run(
        tmp_path,
        opt_in_engine,
        {"greenmod": GREENLET_MODULE},
        """
        import greenmod
        greenmod.__name__  # moves the names
        assert greenmod.waiting.switch() == (1, 1)
        print("ok")
        """,
    )


# -- another module's move while a deprecating module's body still runs --------------

PASSING_MODULE = """
import pep726hook

Other = 2

def generator():
    yield Other

waiting = generator()
next(waiting)  # its move cannot prove its functions: a pass runs
pep726hook.deprecate_attribute(__name__, "Other", "Other is deprecated")
"""

BODY_IMPORTING_IT = """
import pep726hook

Old = 1
pep726hook.deprecate_attribute(__name__, "Old", "Old is deprecated")

import passmod
passmod.__name__  # passmod's names move here, while this body runs

def generator():
    yield Old
    yield Old

waiting = generator()
next(waiting)
"""


def test_a_generator_a_body_suspends_after_another_modules_move_reads_the_name(
    tmp_path: Path, opt_in_engine: str
) -> None:
    _run(
        tmp_path,
        opt_in_engine,
        {"passmod": PASSING_MODULE, "bodymod": BODY_IMPORTING_IT},
        """
        import bodymod
        bodymod.__name__  # moves the names
        assert next(bodymod.waiting) == 1
        assert next(__import__("passmod").waiting, "done") == "done"
        print("ok")
        """,
    )


# -- a module whose body raises after its first deprecation --------------------------


def test_a_body_that_raises_after_its_deprecation_leaves_every_module_working(
    tmp_path: Path, opt_in_engine: str
) -> None:
    _run(
        tmp_path,
        opt_in_engine,
        {
            "failmod": """
            import sys
            import pep726hook
            Old = 1
            def read():
                return Old
            pep726hook.deprecate_attribute(__name__, "Old", "Old is deprecated")
            kept = sys.modules[__name__]  # what a caller may still hold
            sys.modules["keeper"] = type(sys)("keeper")
            sys.modules["keeper"].module = kept
            raise RuntimeError("the body fails")
            """,
            "goodmod": """
            import pep726hook
            Old = 3
            def read():
                return Old
            pep726hook.deprecate_attribute(__name__, "Old", "Old is deprecated")
            """,
        },
        """
        import sys
        try:
            import failmod
        except RuntimeError:
            pass
        assert "failmod" not in sys.modules
        failed = sys.modules["keeper"].module
        assert failed.Old == 1 and failed.read() == 1
        import goodmod
        assert goodmod.Old == 3 and goodmod.read() == 3
        assert failed.Old == 1 and failed.read() == 1
        print("ok")
        """,
    )


# -- sub-interpreters ---------------------------------------------------------------


def _own_gil_interpreters() -> str | None:
    # The module that makes a sub-interpreter with its own GIL here, or None.
    if sys.version_info < (3, 12) or sys.implementation.name != "cpython":
        return None
    for name in ("_interpreters", "_xxsubinterpreters"):
        try:
            __import__(name)
        except ImportError:
            continue
        return name
    return None


SUB_INTERPRETER_LOOP = """
def spin():
    return 1
for _ in range(400_000):
    spin()
"""


@pytest.mark.skipif(
    _own_gil_interpreters() is None, reason="no sub-interpreter with its own GIL here"
)
def test_moves_while_an_own_gil_sub_interpreter_runs_never_touch_its_frames(
    tmp_path: Path, opt_in_engine: str
) -> None:
    modules = {
        f"submod{i}": f"""
        import pep726hook
        Old = {i}
        def read():
            return Old
        def generator():
            yield Old
        waiting = generator()
        pep726hook.deprecate_attribute(__name__, "Old", "Old is deprecated")
        """
        for i in range(30)
    }
    _run(
        tmp_path,
        opt_in_engine,
        modules,
        f"""
        import importlib
        import threading
        import {_own_gil_interpreters()} as interpreters

        interpreter = interpreters.create()
        errors = []

        def run():
            try:
                interpreters.run_string(interpreter, {SUB_INTERPRETER_LOOP!r})
            except BaseException as error:
                errors.append(error)

        thread = threading.Thread(target=run)
        thread.start()
        for i in range(30):
            module = importlib.import_module(f"submod{{i}}")
            module.__name__  # moves the names: the frames of this interpreter get rebound
            assert module.read() == i and next(module.waiting) == i
        thread.join()
        interpreters.destroy(interpreter)
        assert not errors, errors
        print("ok")
        """,
    )


@pytest.mark.skipif(
    _own_gil_interpreters() is None, reason="no sub-interpreter with its own GIL here"
)
def test_a_sub_interpreter_that_deprecates_on_its_own_leaves_every_module_working(
    tmp_path: Path, opt_in_engine: str
) -> None:
    inner = textwrap.dedent(
        """
        import pep726hook
        import submain
        assert submain.read() == 5
        import warnings
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert submain.Old == 5
        assert len(caught) == 1
        """
    )
    _run(
        tmp_path,
        opt_in_engine,
        {
            "submain": """
            import pep726hook
            Old = 5
            def read():
                return Old
            pep726hook.deprecate_attribute(__name__, "Old", "Old is deprecated")
            """
        },
        f"""
        import sys
        import {_own_gil_interpreters()} as interpreters
        import submain

        submain.__name__
        assert submain.read() == 5
        interpreter = interpreters.create()
        interpreters.run_string(interpreter, "import sys; sys.path[:0] = " + repr(sys.path))
        interpreters.run_string(interpreter, {inner!r})
        interpreters.destroy(interpreter)
        assert submain.read() == 5 and submain.Old == 5
        print("ok")
        """,
    )


# -- the read that moves the names, under -W error ------------------------------------


def test_w_error_on_the_read_that_moves_the_names_ends_at_the_readers_line(
    tmp_path: Path, opt_in_engine: str
) -> None:
    (tmp_path / "werrmod.py").write_text(
        "import pep726hook\nOld = 1\n"
        "pep726hook.deprecate_attribute(__name__, 'Old', 'Old is deprecated')\n"
    )
    (tmp_path / "reader.py").write_text("import types\nimport werrmod\nvalue = werrmod.Old\n")
    env = clean_env()
    env["PEP726HOOK_ENGINE"] = opt_in_engine
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
    assert "DeprecationWarning: Old is deprecated" in result.stderr, describe(result)
    frames = [
        line.strip() for line in result.stderr.splitlines() if line.lstrip().startswith("File ")
    ]
    readers = [i for i, frame in enumerate(frames) if "reader.py" in frame and "line 3" in frame]
    assert readers, describe(result)
    after = frames[readers[-1] + 1 :]
    if opt_in_engine == "class":
        return  # every read shows the deprecating class's frames
    # The extension declared the name alone, and warns itself.
    assert after == [], describe(result)

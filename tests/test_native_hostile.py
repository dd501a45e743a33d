"""The native engine under hostile conditions.

Races between threads and interpreters, embedding programs that finalise and
re-initialise Python, deep class hierarchies, descriptors planted in
``ModuleType`` from outside.  What can crash the interpreter runs in a child
process with a timeout, so a regression fails one test instead of the run.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import textwrap
import types
from pathlib import Path

import pytest

import pep726hook
from pep726hook import _native_engine

pytestmark = pytest.mark.skipif(
    "native" not in pep726hook.available_engines(),
    reason=f"native engine unavailable: {_native_engine.unavailable_reason()}",
)

SRC = str(Path(pep726hook.__file__).resolve().parent.parent)


def run_python(*parts: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run the code *parts* (each dedented) in a fresh interpreter with our sources importable."""
    env = dict(os.environ, PYTHONPATH=SRC)
    env.pop("PEP726HOOK", None)
    env.pop("PEP726HOOK_ENGINE", None)
    return subprocess.run(
        [sys.executable, "-c", "\n".join(textwrap.dedent(part) for part in parts)],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        check=False,
    )


def _has_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def _has_legacy_subinterpreters() -> bool:
    if not _has_module("_testcapi"):
        return False
    try:
        import _testcapi
    except Exception:
        # Debian's PyPy ships _testcapi.py without the C source it compiles
        # on import (FileNotFoundError).
        return False
    return hasattr(_testcapi, "run_in_subinterp")


needs_legacy = pytest.mark.skipif(
    not _has_legacy_subinterpreters(), reason="needs _testcapi.run_in_subinterp"
)
needs_isolated = pytest.mark.skipif(
    not (_has_module("_interpreters") or _has_module("_xxsubinterpreters")),
    reason="needs _interpreters or _xxsubinterpreters",
)

INTERPRETERS = """
try:
    import _interpreters as interpreters
except ImportError:
    import _xxsubinterpreters as interpreters
"""

READ_ONLY_MODULE = """
import types
ro = types.ModuleType("ro")
def _refuse(name, value=None):
    raise AttributeError(f"ro is read-only: {name}")
ro.__dict__["__setattr__"] = _refuse
ro.__dict__["__delattr__"] = _refuse

def hooks_work():
    try:
        ro.x = 1
    except AttributeError:
        return "x" not in ro.__dict__
    return False
"""


# --- new interpreters while the slot is patched (3.12: findings 1, 3, 4, 16) --


@needs_legacy
@needs_isolated
def test_interpreters_created_while_an_own_gil_interpreter_runs_survive() -> None:
    # Finding 1: 3.12 lent the generic slot out between an audit event of the
    # creating thread and the next event of another interpreter; an own-GIL
    # interpreter raising events in its thread took the slot back while a new
    # interpreter built its ModuleType dict, which then recursed forever.
    result = run_python(
        INTERPRETERS,
        READ_ONLY_MODULE,
        """
        import sys, threading, _testcapi, pep726hook
        pep726hook.install("native")
        busy = interpreters.create()
        def spin():
            interpreters.run_string(busy, (
                "import sys, time\\n"
                "end = time.monotonic() + 5\\n"
                "while time.monotonic() < end:\\n"
                "    sys.audit('spin')\\n"))
        thread = threading.Thread(target=spin, daemon=True)
        thread.start()
        created = 0
        for i in range(60):
            if i % 2:
                interp = interpreters.create()
                interpreters.destroy(interp)
            else:
                assert _testcapi.run_in_subinterp(
                    "import types; types.ModuleType('m').x = 1") == 0
            created += 1
        thread.join(30)
        assert not thread.is_alive()
        print(created, hooks_work())
        """,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["60", "True"], result.stderr


@needs_legacy
def test_other_threads_keep_their_hooks_while_interpreters_are_created() -> None:
    # Finding 3: while the slot was lent out for a new interpreter, stores in
    # the main interpreter's other threads skipped the hooks.
    result = run_python(
        READ_ONLY_MODULE,
        """
        import sys, threading, time, _testcapi, pep726hook
        pep726hook.install("native")
        sys.setswitchinterval(1e-5)
        stop = threading.Event()
        counts = {"refused": 0, "leaked": 0}
        def writer():
            while not stop.is_set():
                counts["refused" if hooks_work() else "leaked"] += 1
                ro.__dict__.pop("x", None)
                time.sleep(0)
        thread = threading.Thread(target=writer, daemon=True)
        thread.start()
        for _ in range(10):
            _testcapi.run_in_subinterp("import time; time.sleep(0.01); sum(range(20000))")
        stop.set()
        thread.join(30)
        assert not thread.is_alive()
        print(counts["leaked"], counts["refused"] > 0)
        """,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["0", "True"], result.stderr


@pytest.mark.parametrize(
    "event", ["cpython.PyInterpreterState_New", "cpython.PyInterpreterState_Clear", "import"]
)
def test_audit_events_raised_by_hand_leave_the_hooks_on(event: str) -> None:
    # Finding 4: sys.audit("cpython.PyInterpreterState_New") not followed by a
    # new interpreter's own event turned every module hook off for good.
    result = run_python(
        READ_ONLY_MODULE,
        f"""
        import sys, threading, pep726hook
        pep726hook.install("native")
        sys.audit({event!r}, None)
        main = hooks_work()
        seen = []
        thread = threading.Thread(target=lambda: seen.append(hooks_work()))
        thread.start()
        thread.join(30)
        print(main, seen == [True], hooks_work())
        """,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True", "True", "True"], result.stderr


@pytest.mark.skipif(not _has_module("_testcapi"), reason="needs _testcapi")
def test_testcapi_functions_keep_their_names_and_identity() -> None:
    # Finding 16: 3.12 wrapped 72 _testcapi functions, renaming them
    # "_pep726hook_lending_call".  Nothing of another module is touched now.
    result = run_python(
        """
        import pep726hook
        pep726hook.install("native")
        import _testcapi, types
        renamed = sorted(
            name for name, value in vars(_testcapi).items()
            if isinstance(value, types.BuiltinFunctionType) and value.__name__ != name
        )
        print(renamed)
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["[]"], result.stderr


@needs_legacy
def test_interpreter_created_in_c_with_no_thread_state_right_after_install() -> None:
    # The old design could not see Py_NewInterpreter() called with no thread
    # state (_testcapi.run_in_subinterp does that) unless it had wrapped the
    # function first; importlib.import_module raises no audit event, so this
    # killed the process on 3.12 (the "remaining limit" in the docs).
    result = run_python(
        READ_ONLY_MODULE,
        """
        import importlib, pep726hook
        pep726hook.install("native")
        capi = importlib.import_module("_testcapi")
        code = "import types; m = types.ModuleType('m'); m.x = 1"
        print(capi.run_in_subinterp(code), hooks_work())
        """,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["0", "True"], result.stderr


@needs_isolated
def test_own_gil_interpreter_created_while_patched_calls_each_hook_once(tmp_path: Path) -> None:
    # 3.12+: an own-GIL interpreter created while patched has the hooks in its
    # own ModuleType dict (3.12 through tp_methods, 3.13+ through the direct
    # slot); the class engine it falls back to must not call a hook twice.
    out = tmp_path / "log.txt"
    inner = textwrap.dedent(
        f"""
        import sys, types
        sys.path.insert(0, {SRC!r})
        log = []
        m = types.ModuleType("m")
        m.__dict__["__setattr__"] = lambda n, v: log.append(n)
        m.a = 1
        import pep726hook
        pep726hook.install("auto")
        pep726hook.upgrade(m)
        m.b = 2
        pep726hook.uninstall()
        with open({str(out)!r}, "w") as f:
            f.write(repr(log))
        """
    )
    result = run_python(
        INTERPRETERS,
        f"""
        import pep726hook
        pep726hook.install("native")
        interp = interpreters.create()
        interpreters.run_string(interp, {inner!r})
        interpreters.destroy(interp)
        """,
    )
    assert result.returncode == 0, result.stderr
    # Before 3.12 such interpreters share the GIL and the type dict anyway.
    assert out.read_text() == "['a', 'b']"


# --- embedding: Py_FinalizeEx() and a second Py_Initialize() -----------------

EMBED_MAIN = r"""
#include <Python.h>
#include <stdio.h>

int
main(int argc, char **argv)
{
    if (argc < 3) {
        return 2;
    }
    /* Finalise while installed twice, then uninstall before the last. */
    for (int round = 0; round < 3; round++) {
        Py_Initialize();
        if (PyRun_SimpleString(argv[1]) != 0) {
            fprintf(stderr, "round %d: the code failed\n", round);
            return 10 + round;
        }
        if (round == 2 && PyRun_SimpleString(argv[2]) != 0) {
            fprintf(stderr, "round %d: the last code failed\n", round);
            return 30;
        }
        if (Py_FinalizeEx() < 0) {
            fprintf(stderr, "round %d: Py_FinalizeEx failed\n", round);
            return 20 + round;
        }
    }
    return 0;
}
"""

EMBED_CODE = """
import sys, types, pep726hook
if {install!r}:
    pep726hook.install("native")
log = []
m = types.ModuleType("m")
m.__dict__["__setattr__"] = lambda n, v: log.append(n)
m.x = 1
print(pep726hook.engine(), log, flush=True)
"""

EMBED_LAST_CODE = """
import types, pep726hook
pep726hook.uninstall()
m.y = 2
original = vars(types.ModuleType).get("__setattr__", object.__setattr__)
print(pep726hook.engine(), log, type(original).__name__, flush=True)
"""


def _build_embedding_program(tmp_path: Path, main: str = EMBED_MAIN) -> Path:
    """Compile the C program *main* against this interpreter's shared libpython, or skip."""
    import shutil
    import sysconfig

    compiler = shutil.which("gcc") or shutil.which("cc")
    if compiler is None:
        pytest.skip("no C compiler")
    if not sysconfig.get_config_var("Py_ENABLE_SHARED"):
        pytest.skip("this interpreter has no shared libpython")
    libdir = str(sysconfig.get_config_var("LIBDIR"))
    library = f"python{sysconfig.get_config_var('LDVERSION')}"
    source = tmp_path / "embed.c"
    source.write_text(main)
    program = tmp_path / "embed"
    command = [
        compiler,
        str(source),
        "-o",
        str(program),
        f"-I{sysconfig.get_paths()['include']}",
        f"-L{libdir}",
        f"-Wl,-rpath,{libdir}",
        f"-l{library}",
        *str(sysconfig.get_config_var("LIBS") or "").split(),
        "-lm",
    ]
    built = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    if built.returncode != 0:
        pytest.skip(f"cannot build an embedding program: {built.stderr[-500:]}")
    return program


def _embedding_environment(site_dir: Path | None = None) -> dict[str, str]:
    paths = [SRC] if site_dir is None else [str(site_dir), SRC]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(paths))
    env["PYTHONHOME"] = (
        sys.base_exec_prefix
        if sys.base_exec_prefix == sys.base_prefix
        else (f"{sys.base_prefix}{os.pathsep}{sys.base_exec_prefix}")
    )
    env.pop("PEP726HOOK", None)
    env.pop("PEP726HOOK_ENGINE", None)
    return env


@pytest.mark.parametrize("activation", ["code", "sitecustomize"])
def test_finalize_and_initialize_again_after_install(tmp_path: Path, activation: str) -> None:
    # 3.11+ tear the static types down in Py_FinalizeEx() and ready them again
    # in the next Py_Initialize(), from the slot as it is: the patched one
    # made the new ModuleType dict recurse ("Fatal Python error:
    # _PySys_Create: failed to create a module object"), and the extension's
    # state outlived the runtime its objects belonged to.
    program = _build_embedding_program(tmp_path)
    site_dir = tmp_path / "site"
    site_dir.mkdir()
    if activation == "sitecustomize":
        (site_dir / "sitecustomize.py").write_text(
            "import pep726hook\npep726hook.install('native')\n"
        )
    env = _embedding_environment(site_dir)
    code = EMBED_CODE.format(install=activation == "code")
    result = subprocess.run(
        [str(program), code, EMBED_LAST_CODE],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    expected = ["native ['x']"] * 3 + ["None ['x'] wrapper_descriptor"]
    assert result.stdout.splitlines() == expected, result.stderr


# --- interpreters created by C code with no current thread state -------------
#
# Py_NewInterpreter() called after PyThreadState_Swap(NULL), as embedding
# programs and _testcapi.run_in_subinterp do, raises no audit event and runs
# no Python code of the creating interpreter.  On CPython 3.12 each new
# interpreter builds its own ModuleType dict from the slots as they are, so
# while patched it must find the hook methods in tp_methods (a wrapper around
# the patched slot killed it in _PySys_Create).

EMBED_NEW_INTERPRETER = r"""
#include <Python.h>
#include <stdio.h>

/* Like _testcapi.run_in_subinterp: no thread state while it is created. */
static PyThreadState *
new_interpreter(PyThreadState **main_state)
{
    *main_state = PyThreadState_Get();
    PyThreadState_Swap(NULL);
    PyThreadState *sub = Py_NewInterpreter();
    if (sub == NULL) {
        PyThreadState_Swap(*main_state);
    }
    return sub;
}

static int
run_in_new_interpreter(const char *code)
{
    PyThreadState *main_state;
    PyThreadState *sub = new_interpreter(&main_state);
    if (sub == NULL) {
        return -1;
    }
    int rc = PyRun_SimpleString(code);
    Py_EndInterpreter(sub);
    PyThreadState_Swap(main_state);
    return rc;
}

int
main(int argc, char **argv)
{
    if (argc < 4) {
        return 2;
    }
    Py_Initialize();
    if (PyRun_SimpleString(argv[1]) != 0) {
        return 3;
    }
    /* One interpreter made and ended while installed, one made while
     * installed that outlives the uninstall (argv[3]), one made after. */
    if (run_in_new_interpreter(argv[2]) != 0) {
        return 10;
    }
    PyThreadState *main_state;
    PyThreadState *sub = new_interpreter(&main_state);
    if (sub == NULL || PyRun_SimpleString(argv[2]) != 0) {
        return 11;
    }
    PyThreadState_Swap(main_state);
    if (PyRun_SimpleString(argv[3]) != 0) {
        return 4;
    }
    PyThreadState_Swap(sub);
    if (PyRun_SimpleString(argv[2]) != 0) {
        return 12;
    }
    Py_EndInterpreter(sub);
    PyThreadState_Swap(main_state);
    if (run_in_new_interpreter(argv[2]) != 0) {
        return 13;
    }
    return Py_FinalizeEx() < 0 ? 5 : 0;
}
"""

NEW_INTERPRETER_CODE = """
import types

class Guard(types.ModuleType):
    def __setattr__(self, name, value):
        super().__setattr__(name, value)

log = []
for cls in (types.ModuleType, Guard):
    m = cls("m")
    m.__dict__["__setattr__"] = lambda n, v: log.append(n)
    m.a = 1
    types.ModuleType.__setattr__(m, "b", 2)
    object.__setattr__(m, "c", 3)
    assert m.c == 3
print(sorted(log), flush=True)
"""


@pytest.mark.parametrize(
    ("install", "uninstall"),
    [
        ("pep726hook.install('native')", "pep726hook.uninstall()"),
        # What the first library's enable() does: the patch, no process-wide hook.
        ("_native.install(process_wide=False)", "_native.uninstall()"),
        # The slot design (slot_tp_setattro in the slot), kept for benchmarks.
        ("_native.install(direct=False)", "_native.uninstall()"),
    ],
)
def test_interpreter_created_by_c_code_without_a_thread_state_while_installed(
    tmp_path: Path, install: str, uninstall: str
) -> None:
    program = _build_embedding_program(tmp_path, EMBED_NEW_INTERPRETER)
    imports = "import pep726hook\nfrom pep726hook import _native\n"
    setup = f"{imports}{install}\nprint('installed', flush=True)\n"
    after = f"{imports}{uninstall}\nassert not _native.state()['patched']\n"
    after += "print('uninstalled', flush=True)\n"
    result = subprocess.run(
        [str(program), setup, NEW_INTERPRETER_CODE, after],
        capture_output=True,
        text=True,
        env=_embedding_environment(),
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    # The sub-interpreters never installed: the hooks reach them through the
    # process-wide slot only while process-wide dispatch is on.
    hooked = "['a', 'a', 'b', 'b']" if "process_wide" not in install else "[]"
    expected = ["installed", hooked, hooked, "uninstalled", "[]", "[]"]
    assert result.stdout.splitlines() == expected, result.stderr


# --- deep ModuleType hierarchies -----------------------------------------------


def _module_type_chain(depth: int) -> list[type]:
    """One subclass per added module property: a chain *depth* classes deep."""
    chain: list[type] = []
    base: type = types.ModuleType
    for level in range(depth):
        base = type(
            f"Level{level}", (base,), {f"prop{level}": property(lambda self, level=level: level)}
        )
        chain.append(base)
    return chain


def _hooked_instances(chain: list[type]) -> list[bool]:
    reached = []
    for cls in chain:
        log: list[str] = []
        module = cls("m")
        module.__dict__["__setattr__"] = lambda n, v, log=log: log.append(n)
        module.x = 1
        reached.append(log == ["x"])
    return reached


@pytest.mark.parametrize("when", ["before", "during"])
def test_install_and_uninstall_handle_any_depth_of_subclasses(when: str) -> None:
    # The walk recursed in C and refused more than 200 levels with
    # RecursionError; a failed uninstall had already re-pointed the shallower
    # classes, whose instances then skipped the hooks while installed.
    depth = 600
    chain = _module_type_chain(depth) if when == "before" else []
    with pep726hook.install("native"):
        if not chain:
            chain = _module_type_chain(depth)
        assert _hooked_instances(chain) == [True] * depth
        assert all(_native_engine._native.type_reaches_hook(cls) for cls in chain)
    assert not pep726hook.is_installed()
    assert _hooked_instances(chain) == [False] * depth


def test_walk_ignores_a_metaclass_subclasses_method() -> None:
    class Meta(type):
        def __subclasses__(cls) -> list[type]:
            raise RuntimeError("hostile __subclasses__")

    Base = Meta("Base", (types.ModuleType,), {})
    Child = Meta("Child", (Base,), {})
    with pep726hook.install("native"):
        assert _hooked_instances([Base, Child]) == [True, True]
    assert _hooked_instances([Base, Child]) == [False, False]


# --- descriptors planted in ModuleType from outside ----------------------------

CURSE = """
import ctypes, gc, types

def curse(cls, name, value):
    # forbiddenfruit's recipe: write the type's real dict, then tell CPython.
    gc.get_referents(cls.__dict__)[0][name] = value
    ctypes.pythonapi.PyType_Modified(ctypes.py_object(cls))

calls = []
planted = property(lambda self: "got", lambda self, value: calls.append(value))
"""


@pytest.mark.skipif(sys.implementation.name != "cpython", reason="ctypes.pythonapi")
@pytest.mark.skipif(
    sys.version_info >= (3, 14) and hasattr(sys, "gettotalrefcount"),
    reason="the recipe's PyType_Modified() of a static builtin type aborts debug builds of 3.14+",
)
@pytest.mark.parametrize("where", ["ModuleType", "object"])
@pytest.mark.parametrize("when", ["before", "after"])
def test_data_descriptor_planted_from_outside_gets_its_set(where: str, when: str) -> None:
    # The store fast path for non-dunder names assumed the dicts of ModuleType
    # and object could not change and skipped the descriptor's __set__.
    result = run_python(
        CURSE,
        f"""
        import pep726hook
        target = types.ModuleType if {where!r} == "ModuleType" else object
        if {when!r} == "after":
            pep726hook.install("native")
        m = types.ModuleType("m")
        m.before = 0
        curse(target, "planted", planted)
        if {when!r} == "before":
            pep726hook.install("native")
        m.planted = 1
        setattr(m, "planted", 2)
        print(calls, "planted" in m.__dict__, pep726hook.engine())
        # Taken out again, stores are plain dict stores once more.
        del gc.get_referents(target.__dict__)[0]["planted"]
        ctypes.pythonapi.PyType_Modified(ctypes.py_object(target))
        m.planted = 3
        print(calls, m.__dict__.get("planted"))
        """,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["[1, 2] False native", "[1, 2] 3"], result.stderr


# --- stores at the recursion limit ---------------------------------------------

RECURSION_DEPTHS = """
import functools, json, sys, types, pep726hook
m = types.ModuleType("m")
def hook(name, value):
    pass
def deepest(action):
    def probe(n):
        if n == 0:
            action()
            return
        probe(n - 1)
    for n in range(sys.getrecursionlimit() - 100, sys.getrecursionlimit() + 10):
        try:
            probe(n)
        except RecursionError:
            return n
def store():
    m.x = 1
def call_hook():
    hook("x", 1)
depths = {"plain": deepest(store), "hook_called_directly": deepest(call_hook)}
pep726hook.install("native")
depths["native"] = deepest(store)
m.__dict__["__setattr__"] = hook
depths["native_hooked"] = deepest(store)
depths["descriptor"] = type(vars(types.ModuleType)["__setattr__"]).__name__
# A hook that recurses in C alone must still end in RecursionError.
m.__dict__["__setattr__"] = functools.partial(setattr, m)
try:
    m.y = 1
except RecursionError:
    depths["c_recursion"] = "RecursionError"
print(json.dumps(depths))
"""


def _recursion_depths() -> dict[str, object]:
    import json

    result = run_python(RECURSION_DEPTHS)
    assert result.returncode == 0, result.stderr
    depths: dict[str, object] = json.loads(result.stdout)
    return depths


def test_hooked_store_at_the_recursion_limit_costs_only_the_hooks_frame() -> None:
    # hooked_setattro counted a level for a Python hook, whose own frame
    # counts already: on 3.8-3.11 a hooked store failed one level earlier
    # than the reference implementation's call of the hook.  A hook that
    # recurses without Python frames is still stopped.
    depths = _recursion_depths()
    assert depths["c_recursion"] == "RecursionError"
    plain_cost = depths["plain"] - depths["hook_called_directly"]  # type: ignore[operator]
    native_cost = depths["native"] - depths["native_hooked"]  # type: ignore[operator]
    assert native_cost == plain_cost, depths


def test_store_at_the_recursion_limit_works_as_without_the_engine() -> None:
    # The direct slot calls no descriptor on the way to the store.
    depths = _recursion_depths()
    assert depths["native"] == depths["plain"], depths

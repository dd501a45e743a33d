"""Deprecated module attributes at interpreter shutdown, in a fork and in a sub-interpreter.

Nothing is printed at exit, and a dead module's entry is forgotten alone.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import os
import sys
import textwrap
import types
from pathlib import Path
from typing import Any

import pytest
from _venv import ENGINES, describe, run_fresh_python

# -- interpreter shutdown, sub-interpreters, fork -------------------------------------------


def _write_library(directory: Path) -> None:
    (directory / "shutmod.py").write_text(
        "import pep726hook\n"
        "Old = pep726hook.deprecated(1, 'Old is deprecated')\n"
        "pep726hook.enable(__name__)\n"
    )


@pytest.mark.parametrize("engine", ENGINES)
def test_a_module_alive_until_shutdown_prints_nothing(engine: str, tmp_path: Path) -> None:
    # The module outlives the interpreter's clearing of pep726hook's modules'
    # globals (a module imported before it, here json, keeps it): the weak
    # reference callbacks then run with those globals set to None.
    _write_library(tmp_path)
    result = run_fresh_python(
        f"""
        import os, sys
        os.environ["PEP726HOOK_ENGINE"] = {engine!r}
        sys.path.insert(0, {str(tmp_path)!r})
        import json
        import pep726hook, pep726hook._deprecations._api, pep726hook._state
        import shutmod
        json.keep = shutmod
        for name in (
            "pep726hook._deprecations._entries",
            "pep726hook._deprecations._moved",
            "pep726hook._state",
            "pep726hook._composition",
        ):
            module = sys.modules.get(name)
            if module is not None:
                # What the interpreter does at shutdown, before json goes.
                for key in list(vars(module)):
                    if not key.startswith("__"):
                        vars(module)[key] = None
        del shutmod
        sys.modules.pop("shutmod")
        json.keep = None
        """
    )
    assert result.returncode == 0, describe(result)
    assert result.stderr == "", describe(result)


@pytest.mark.parametrize("engine", ENGINES)
def test_modules_alive_until_shutdown_under_the_process_wide_hook_print_nothing(
    engine: str, tmp_path: Path
) -> None:
    _write_library(tmp_path)
    result = run_fresh_python(
        f"""
        import os, sys
        os.environ["PEP726HOOK_ENGINE"] = {engine!r}
        sys.path.insert(0, {str(tmp_path)!r})
        import json
        import pep726hook
        pep726hook.install({engine!r})
        (__import__("pathlib").Path({str(tmp_path)!r}) / "hooked.py").write_text(
            "def __setattr__(name, value):\\n    globals()[name] = value\\n"
        )
        import hooked, shutmod
        json.keep = [shutmod, hooked]
        for name in [n for n in sys.modules if n.startswith("pep726hook.")]:
            module = sys.modules[name]
            for key in list(vars(module)):
                if not key.startswith("__"):
                    vars(module)[key] = None
        del shutmod, hooked
        sys.modules.pop("shutmod")
        sys.modules.pop("hooked")
        json.keep = None
        """
    )
    assert result.returncode == 0, describe(result)
    assert result.stderr == "", describe(result)


def test_an_opt_ins_weak_reference_callback_forgets_only_its_own_entry() -> None:
    import weakref

    from pep726hook import _state

    module = types.ModuleType("forgetme")
    _state.register_opt_in(module)
    key = id(module)
    ref = _state._opted_in[key]
    stand_in = types.ModuleType("standin")
    other = weakref.ref(stand_in)
    _state._opted_in[key] = other  # a new module at the same address
    try:
        ref.__callback__(ref)  # type: ignore[misc]
        assert _state._opted_in.get(key) is other
    finally:
        _state._opted_in.pop(key, None)


def test_the_class_engines_weak_reference_callback_forgets_only_its_own_entry() -> None:
    import weakref

    from pep726hook._class_engine import ClassEngine

    engine = ClassEngine()
    module = types.ModuleType("forgetme")
    engine.upgrade(module)
    key = id(module)
    ref = engine._upgraded[key]
    stand_in = types.ModuleType("standin")
    other = weakref.ref(stand_in)
    engine._upgraded[key] = other
    ref.__callback__(ref)  # type: ignore[misc]
    assert engine._upgraded.get(key) is other
    engine._upgraded.pop(key, None)
    engine.downgrade(module)


@pytest.mark.parametrize("engine", ENGINES)
def test_pytest_collecting_a_module_with_deprecations_prints_nothing_at_exit(
    engine: str, tmp_path: Path
) -> None:
    (tmp_path / "test_shut.py").write_text(
        "import pep726hook\n"
        "Old = pep726hook.deprecated(1, 'Old is deprecated')\n"
        "pep726hook.enable(__name__)\n"
        "def test_nothing():\n"
        "    pass\n"
    )
    result = run_fresh_python(
        f"""
        import os, sys
        os.environ["PEP726HOOK_ENGINE"] = {engine!r}
        import pytest
        sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", {str(tmp_path / "test_shut.py")!r}]))
        """
    )
    assert result.returncode == 0, describe(result)
    assert result.stderr == "", describe(result)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork() here")
@pytest.mark.parametrize("engine", ENGINES)
def test_a_forked_child_that_used_deprecations_exits_quietly(engine: str, tmp_path: Path) -> None:
    _write_library(tmp_path)
    result = run_fresh_python(
        f"""
        import os, sys, warnings
        os.environ["PEP726HOOK_ENGINE"] = {engine!r}
        sys.path.insert(0, {str(tmp_path)!r})
        warnings.simplefilter("ignore")
        import shutmod
        pid = os.fork()
        if pid == 0:
            import json
            json.keep = shutmod
            assert shutmod.Old == 1
            sys.exit(0)
        _, status = os.waitpid(pid, 0)
        sys.exit(os.waitstatus_to_exitcode(status) if hasattr(os, "waitstatus_to_exitcode") else status)
        """
    )
    assert result.returncode == 0, describe(result)
    assert result.stderr == "", describe(result)


def _interpreters() -> Any:
    for name in ("_interpreters", "_xxsubinterpreters"):
        try:
            return importlib.import_module(name)
        except ImportError:
            pass
    return None


@pytest.mark.skipif(
    sys.version_info < (3, 12) or _interpreters() is None or sys.implementation.name != "cpython",
    reason="needs CPython 3.12+'s sub-interpreters",
)
def test_a_destroyed_sub_interpreter_that_used_deprecations_prints_nothing(
    tmp_path: Path,
) -> None:
    _write_library(tmp_path)
    inner = textwrap.dedent(
        f"""
        import sys, warnings
        sys.path.insert(0, {str(tmp_path)!r})
        warnings.simplefilter("ignore")
        import json, shutmod
        json.keep = shutmod
        assert shutmod.Old == 1
        """
    )
    result = run_fresh_python(
        f"""
        import importlib
        for name in ("_interpreters", "_xxsubinterpreters"):
            try:
                interpreters = importlib.import_module(name)
                break
            except ImportError:
                pass
        interpreter = interpreters.create()
        source = {inner!r}
        if hasattr(interpreters, "exec"):
            error = interpreters.exec(interpreter, source)
            assert error is None, error
        else:
            interpreters.run_string(interpreter, source)
        interpreters.destroy(interpreter)
        print("done")
        """
    )
    assert result.returncode == 0, describe(result)
    assert result.stdout == "done\n" and result.stderr == "", describe(result)


# The extension holds the package's callbacks for stores of deprecated names
# and of markers where the collector cannot see them: reported as the
# extension module's own references, they no longer keep every module of the
# package alive through finalisation, which then cleared each one name by
# name (+0.75M instructions at the exit of a process that deprecated a name,
# CPython 3.12).
PACKAGE_OUTLIVING_ITS_MODULES = """
import gc, os, sys, weakref
os.environ["PEP726HOOK_ENGINE"] = sys.argv[1]
import types
import pep726hook
library = types.ModuleType("library")
library.Old = 1
sys.modules["library"] = library
pep726hook.deprecate_attribute("library", "Old", "Old is deprecated")
from pep726hook._deprecations import _deprecating, _moved
callbacks = [weakref.ref(_deprecating.marker_stored), weakref.ref(_moved._store_moved)]
del _deprecating, _moved, pep726hook, library
for name in [name for name in sys.modules if name.partition(".")[0] in ("pep726hook", "library")]:
    del sys.modules[name]
gc.collect()
print([callback() is None for callback in callbacks])
"""


@pytest.mark.parametrize("engine", ENGINES)
def test_the_packages_callbacks_die_with_its_modules(engine: str) -> None:
    result = run_fresh_python(PACKAGE_OUTLIVING_ITS_MODULES, engine)
    assert (result.returncode, result.stdout) == (0, "[True, True]\n"), describe(result)

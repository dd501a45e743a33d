"""Lazy and removed names that the native engine declares through the extension alone.

In a process that has run nothing else of the package, ``lazy_attribute()``
and ``removed_attribute()`` of an exact ``types.ModuleType`` are one call of
the extension each (``benchmarks/bench_first_use.py``), and the deprecations
package adopts what they declared when it loads.  These tests check, in fresh
processes under every engine, that a reader sees what the full path gives,
before and after the adoption.  The test session itself loaded the package
long ago: its own declaration tests run the full path.
"""

from __future__ import annotations

import importlib
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from _venv import ENGINES, WriteModule, collect_garbage, run_fresh_json, write

import pep726hook
from pep726hook._deprecations import _submodules

PACKAGE = """\
import pep726hook
X = 1
pep726hook.lazy_attribute(__name__, "heavy")
pep726hook.lazy_attribute(__name__, "computed", factory=lambda: [42])
pep726hook.removed_attribute(__name__, "float_", "np.float_ was removed; use np.float64")
pep726hook.removed_attribute(
    __name__, "bytes", None, warning="bytes is going away", category=FutureWarning
)
"""


@pytest.fixture
def package(tmp_path: Path) -> Path:
    write(tmp_path / "declaring" / "__init__.py", PACKAGE)
    write(tmp_path / "declaring" / "heavy.py", "VALUE = 7\n")
    write(tmp_path / "declaring" / "failing.py", "raise ImportError('not today')\n")
    return tmp_path


# What a reader sees of the package, printed as JSON; the same program runs
# before and after the deprecations package loads.
READS = """
import warnings
def error_of(read):
    try:
        read()
    except AttributeError as error:
        return str(error)
    return None
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    seen = {
        "type": type(declaring).__name__,
        "dir": [n for n in dir(declaring) if not n.startswith("__")],
        "removed": error_of(lambda: declaring.float_),
        "hasattr": hasattr(declaring, "float_"),
        "default": getattr(declaring, "float_", "default"),
        "plain miss": error_of(lambda: declaring.bytes),
        "heavy": declaring.heavy.VALUE,
        "computed": declaring.computed,
        "same": declaring.computed is declaring.computed,
        "in namespace": sorted(n for n in ("heavy", "computed") if n in vars(declaring)),
    }
seen["warnings"] = sorted({(w.category.__name__, str(w.message)) for w in caught})
"""
EXPECTED = {
    "type": "module",
    "dir": ["X", "computed", "heavy", "pep726hook"],
    "removed": "np.float_ was removed; use np.float64",
    "hasattr": False,
    "default": "default",
    "plain miss": "module 'declaring' has no attribute 'bytes'",
    "heavy": 7,
    "computed": [42],
    "same": True,
    "in namespace": ["computed", "heavy"],
    "warnings": [["FutureWarning", "bytes is going away"]],
}


@pytest.mark.parametrize("engine", ENGINES)
def test_readers_see_the_full_paths_names_before_the_package_loads(
    package: Path, engine: str
) -> None:
    seen = run_fresh_json(
        package,
        "import declaring, json\n"
        + READS
        + "seen['loaded'] = sorted(m for m in sys.modules if m.startswith('pep726hook'))\n"
        "print(json.dumps(seen))\n",
        engine,
    )
    loaded = seen.pop("loaded")
    assert seen == EXPECTED
    if engine == "native":
        assert loaded == ["pep726hook", "pep726hook._native"]


@pytest.mark.parametrize("engine", ENGINES)
def test_the_deprecations_package_adopts_what_was_declared_alone(
    package: Path, engine: str
) -> None:
    adopting = """
        import declaring, json
        import pep726hook
        # Deprecated alone too (3.10+ under the native engine); then the
        # deprecations package loads, and adopts every declaration.
        pep726hook.deprecate_attribute(declaring, "X", "X is old")
        import pep726hook._deprecations._api
        from pep726hook._deprecations import _entries
        kinds = {n: e.kind for n, e in (_entries.deprecations_of(declaring) or {}).items()}
        """
    printing = """
        seen["kinds"] = kinds
        seen["engine"] = pep726hook.engine(declaring)
        print(json.dumps(seen))
        """
    seen = run_fresh_json(
        package,
        textwrap.dedent(adopting) + READS + textwrap.dedent(printing),
        engine,
    )
    assert seen.pop("kinds") == {"heavy": 1, "computed": 1, "float_": 2, "bytes": 2, "X": 0}
    assert seen.pop("engine") == engine
    # X is deprecated now (dir() still lists it); the reads see what they saw.
    assert seen == EXPECTED


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("adopted", [False, True])
def test_a_store_ends_a_declaration_and_a_deletion_then_misses(
    package: Path, engine: str, adopted: bool
) -> None:
    seen = run_fresh_json(
        package,
        f"""
        import declaring, json
        if {adopted!r}:
            import pep726hook._deprecations._deprecating
        declaring.float_ = 3.0
        stored = declaring.float_
        del declaring.float_
        after = hasattr(declaring, "float_")
        del declaring.computed  # never loaded: the declaration ends
        computed = hasattr(declaring, "computed")
        import declaring.heavy  # the import system's binding ends it too
        heavy = declaring.heavy.VALUE
        del declaring.heavy
        print(json.dumps([stored, after, computed, heavy, hasattr(declaring, "heavy")]))
        """,
        engine,
    )
    assert seen == [3.0, False, False, 7, False]


@pytest.mark.parametrize("engine", ENGINES)
def test_a_failing_load_propagates_stores_nothing_and_runs_again(
    package: Path, engine: str
) -> None:
    seen = run_fresh_json(
        package,
        """
        import json
        import pep726hook
        import declaring
        calls = []
        def factory():
            calls.append(1)
            if len(calls) == 1:
                raise AttributeError("not yet")
            return "ready"
        pep726hook.lazy_attribute(declaring, "flaky", factory=factory)
        pep726hook.lazy_attribute(declaring, "failing")
        errors = []
        for read in (lambda: declaring.flaky, lambda: declaring.failing):
            try:
                read()
            except (AttributeError, ImportError) as error:
                errors.append([type(error).__name__, str(error)])
        print(json.dumps([errors, "flaky" in vars(declaring), declaring.flaky, len(calls)]))
        """,
        engine,
    )
    assert seen == [
        [["AttributeError", "not yet"], ["ImportError", "not today"]],
        False,
        "ready",
        2,
    ]


@pytest.mark.parametrize("engine", ENGINES)
def test_threads_reading_a_lazy_name_first_get_one_object(package: Path, engine: str) -> None:
    seen = run_fresh_json(
        package,
        """
        import json, threading, time
        import pep726hook, declaring
        def slow():
            time.sleep(0.05)
            return object()
        pep726hook.lazy_attribute(declaring, "shared", factory=slow)
        start = threading.Barrier(8)
        got = []
        def read():
            start.wait()
            got.append(declaring.shared)
        threads = [threading.Thread(target=read) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        print(json.dumps([len(got), len({id(value) for value in got}),
                          got[0] is vars(declaring)["shared"]]))
        """,
        engine,
    )
    assert seen == [8, 1, True]


@pytest.mark.parametrize("engine", ENGINES)
def test_reload_declares_again_and_keeps_loaded_values(package: Path, engine: str) -> None:
    seen = run_fresh_json(
        package,
        """
        import importlib, json, warnings
        import declaring
        heavy = declaring.heavy
        importlib.reload(declaring)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                declaring.float_
            except AttributeError as error:
                removed = str(error)
        print(json.dumps([declaring.heavy is heavy, declaring.computed, removed]))
        """,
        engine,
    )
    assert seen == [True, [42], "np.float_ was removed; use np.float64"]


@pytest.mark.parametrize("engine", ENGINES)
def test_what_the_extension_cannot_take_gets_the_full_paths_errors(
    package: Path, engine: str
) -> None:
    seen = run_fresh_json(
        package,
        """
        import json, types
        import pep726hook
        import declaring
        errors = []
        for call in (
            lambda: pep726hook.lazy_attribute(declaring, "X"),          # has a value
            lambda: pep726hook.lazy_attribute(declaring, "nowhere"),    # no submodule
            lambda: pep726hook.lazy_attribute(declaring, "__x__"),
            lambda: pep726hook.removed_attribute(declaring, "gone", ""),
            lambda: pep726hook.removed_attribute(declaring, "gone", None),
            lambda: pep726hook.removed_attribute(declaring, 3, "x"),
            lambda: pep726hook.removed_attribute(declaring, "gone", "x", category=int),
            lambda: pep726hook.lazy_attribute("no_such_module", "x", factory=list),
        ):
            try:
                call()
            except (TypeError, ValueError) as error:
                errors.append(type(error).__name__)
        print(json.dumps([errors, hasattr(declaring, "gone")]))
        """,
        engine,
    )
    assert seen == [
        [
            "ValueError",
            "ValueError",
            "ValueError",
            "ValueError",
            "TypeError",
            "TypeError",
            "TypeError",
            "ValueError",
        ],
        False,
    ]


@pytest.mark.parametrize("engine", ENGINES)
def test_the_module_is_a_plain_module_again_after_a_read_from_outside_its_body(
    tmp_path: Path, engine: str
) -> None:
    write(
        tmp_path / "windowed" / "__init__.py",
        PACKAGE
        + "import sys, types\n"
        + "IN_BODY = type(sys.modules[__name__]) is types.ModuleType\n"
        + "from windowed.reader import SEEN\n",
    )
    write(tmp_path / "windowed" / "heavy.py", "VALUE = 7\n")
    # A submodule that reads its package while the package's body runs (a
    # circular import): the declared names are served already.
    write(
        tmp_path / "windowed" / "reader.py",
        "import windowed\n"
        "try:\n"
        "    windowed.float_\n"
        "except AttributeError as error:\n"
        "    SEEN = [str(error), windowed.computed]\n",
    )
    seen = run_fresh_json(
        tmp_path,
        """
        import json, types
        import windowed
        from windowed import heavy, computed
        namespace = {}
        exec("from windowed import *", namespace)
        print(json.dumps([
            windowed.SEEN,
            type(windowed) is types.ModuleType,
            heavy.VALUE,
            computed,
            sorted(name for name in namespace if not name.startswith("__"))[:3],
        ]))
        """,
        engine,
    )
    assert seen == [
        ["np.float_ was removed; use np.float64", [42]],
        # The class engine serves declared names through the module's class.
        engine == "native",
        7,
        [42],
        ["IN_BODY", "SEEN", "X"],
    ]


def test_the_full_path_is_not_preceded_by_a_second_search_for_the_submodule(
    write_module: WriteModule, monkeypatch: pytest.MonkeyPatch
) -> None:
    # This process loaded the installation state long ago, so the extension
    # cannot declare alone: the front door hands the declaration over without
    # searching for the submodule itself, and the full path searches once.
    write_module("searched_once", "", package=True)
    write_module("searched_once.sub", "VALUE = 1\n")
    searches: list[str] = []
    search = _submodules._find_spec

    def counted(full_name: str, path: Any) -> object:
        searches.append(full_name)
        return search(full_name, path)

    monkeypatch.setattr(_submodules, "_find_spec", counted)
    try:
        package = importlib.import_module("searched_once")
        pep726hook.lazy_attribute(package, "sub")
        assert package.sub.VALUE == 1
        del package
    finally:
        for name in ("searched_once.sub", "searched_once"):
            sys.modules.pop(name, None)
        collect_garbage()
    assert searches == ["searched_once.sub"]


@pytest.mark.parametrize("engine", ENGINES)
def test_a_lazy_submodule_is_found_as_the_import_system_finds_it(
    tmp_path: Path, engine: str
) -> None:
    # The extension reads the import system's listing of the package's
    # directory (filled by the package's first import of a submodule) and
    # asks the import system where the listing does not show the name; the
    # full path (the class engine here) does the same in Python.  Either
    # way: a subpackage, a namespace portion, a module file and a file made
    # after the listing are found; a suffixless file or a file of another
    # suffix is no submodule.
    write(
        tmp_path / "searched" / "__init__.py",
        """\
        import importlib, json, pathlib, sys
        import pep726hook
        from . import first  # fills the listing
        here = pathlib.Path(__file__).parent
        (here / "late.py").write_text("VALUE = 'late'\\n")
        importlib.invalidate_caches()
        for name in ("pkgdir", "nsdir", "modfile", "late"):
            pep726hook.lazy_attribute(__name__, name)
        alone = "pep726hook._state" not in sys.modules  # before any refusal loads it
        refused = []
        for name in ("plainfile", "notes", "nowhere"):
            try:
                pep726hook.lazy_attribute(__name__, name)
            except ValueError:
                refused.append(name)
        """,
    )
    write(tmp_path / "searched" / "first.py", "")
    write(tmp_path / "searched" / "pkgdir" / "__init__.py", "VALUE = 'pkgdir'\n")
    write(tmp_path / "searched" / "nsdir" / "inner.py", "")
    write(tmp_path / "searched" / "modfile.py", "VALUE = 'modfile'\n")
    write(tmp_path / "searched" / "plainfile", "not python\n")
    write(tmp_path / "searched" / "notes.txt", "not python\n")
    write(tmp_path / "nsparent" / "child.py", "VALUE = 'child'\n")
    seen = run_fresh_json(
        tmp_path,
        """
        import json, sys
        import nsparent
        import pep726hook
        pep726hook.lazy_attribute(nsparent, "child")  # a namespace package's path
        import searched
        print(json.dumps([
            searched.refused,
            [searched.pkgdir.VALUE, type(searched.nsdir).__name__, searched.modfile.VALUE,
             searched.late.VALUE, nsparent.child.VALUE],
            searched.alone,
        ]))
        """,
        engine,
    )
    assert seen == [
        ["plainfile", "notes", "nowhere"],
        ["pkgdir", "module", "modfile", "late", "child"],
        engine == "native",  # the extension alone, or the full path
    ]

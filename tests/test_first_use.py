"""What the first use of the library API loads into a process, and the declarations' markers scan.

A library that calls ``enable(__name__)`` or deprecates a name pays, in every
process that imports it, for each module that path imports: about 0.3M
instructions of a 43M start-up each on CPython 3.12, ``warnings`` 1.3M
(``benchmarks/bench_first_use.py`` counts them).  These tests pin down what
each path imports, in a fresh process per engine.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path
from typing import Any, Iterator

import pytest
from _venv import ENGINES, TIMEOUT, WriteModule, describe, fresh_env

import pep726hook
from pep726hook._deprecations import _entries

PACKAGE = "pep726hook"

LIBRARIES = {
    "enabling": "import pep726hook\nX = 1\npep726hook.enable(__name__)\n",
    "deprecating": (
        "import pep726hook\nOld = 1\n"
        'pep726hook.deprecate_attribute(__name__, "Old", "Old is deprecated; use New")\n'
    ),
    "removing": (
        "import pep726hook\n"
        'pep726hook.removed_attribute(__name__, "Old", "Old was removed; use New")\n'
    ),
    "marking": (
        "import pep726hook\n"
        'Old = pep726hook.deprecated(1, "Old is deprecated; use New")\n'
        "pep726hook.enable(__name__)\n"
    ),
}

# The child imports the library and prints what that import added to
# sys.modules (json is imported after the difference is taken).
CHILD = """
import sys
before = set(sys.modules)
import {library}
added = sorted(set(sys.modules) - before)
import json
print(json.dumps(added))
"""

# What enable() needs under the native engine in a process that used nothing
# else of the package: the package, whose enable() calls the extension alone.
NATIVE_ENABLE = {PACKAGE, f"{PACKAGE}._native"}
# What a first lazy_attribute(), removed_attribute() or deprecate_attribute()
# of a name the module holds loads under the native engine: the package and
# the extension, none of the deprecations package.
NATIVE_DECLARATION = NATIVE_ENABLE
# What every deprecation path needs under the native engine: the package, the
# opt-in, the shared state, and the engine with its extension.
NATIVE_OPT_IN = {
    PACKAGE,
    f"{PACKAGE}._compat",
    f"{PACKAGE}._enable",
    f"{PACKAGE}._native",
    f"{PACKAGE}._native_engine",
    f"{PACKAGE}._state",
}
# Never on a library's path under the native engine: choosing engines by name
# (only for $PEP726HOOK_ENGINE=class or a name that cannot run), the
# process-wide hook and its finder.
NATIVE_NEVER = {
    f"{PACKAGE}._engines",
    f"{PACKAGE}._install",
    f"{PACKAGE}._finder",
    f"{PACKAGE}._meta_path",
    f"{PACKAGE}._fast_getattr",
}


def ours_of(added: set[str]) -> set[str]:
    """The package's own modules among *added*."""
    return {name for name in added if name.split(".")[0] == PACKAGE}


def first_use(tmp_path: Path, library: str, engine: str) -> set[str]:
    """Import the library *library* in a fresh process; return the modules its import added."""
    (tmp_path / f"{library}.py").write_text(LIBRARIES[library], encoding="utf-8")
    return first_import(tmp_path, library, engine)


def first_import(tmp_path: Path, library: str, engine: str) -> set[str]:
    """Import *library*, found in *tmp_path*, in a fresh process; return the modules it added."""
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(CHILD.format(library=library))],
        cwd=str(tmp_path),
        check=False,
        capture_output=True,
        text=True,
        env=fresh_env({"PEP726HOOK_ENGINE": engine}),
        timeout=TIMEOUT,
    )
    assert result.returncode == 0, describe(result)
    added = set(json.loads(result.stdout))
    added.discard(library)
    return added


@pytest.mark.parametrize("engine", ENGINES)
def test_enable_loads_only_what_its_engine_needs(tmp_path: Path, engine: str) -> None:
    added = first_use(tmp_path, "enabling", engine)
    ours = ours_of(added)
    if engine == "native":
        assert ours == NATIVE_ENABLE
    else:
        assert f"{PACKAGE}._class_engine" in ours
        assert not ours & {f"{PACKAGE}._install", f"{PACKAGE}._finder"}
    # A library without deprecations never loads their package...
    assert not any(name.startswith(f"{PACKAGE}._deprecations") for name in ours)
    # ... nor anything of the standard library.
    assert added == ours


@pytest.mark.parametrize("library", ["deprecating", "marking"])
@pytest.mark.parametrize("engine", ENGINES)
def test_a_first_deprecation_imports_no_warnings_and_no_engine_chooser(
    tmp_path: Path, engine: str, library: str
) -> None:
    added = first_use(tmp_path, library, engine)
    # warnings (1.3M instructions on 3.12) is imported at the first warning
    # shown, by the interpreter, never by a declaration.
    assert "warnings" not in added
    ours = ours_of(added)
    if engine == "native" and library == "deprecating":
        # A name the module holds, deprecated by the extension alone.
        assert ours == NATIVE_DECLARATION
    else:
        assert f"{PACKAGE}._deprecations._api" in ours
    if engine == "native":
        assert ours >= NATIVE_DECLARATION
        assert not ours & NATIVE_NEVER
    # Nothing of the standard library either, but the collector's module,
    # which is compiled into the interpreter (its import runs no Python
    # code): the move asks it whether gc.freeze() hid objects from the pass.
    assert added - ours <= {"gc"}


@pytest.mark.parametrize("engine", ENGINES)
def test_a_first_removed_name_loads_no_deprecations_package_under_the_native_engine(
    tmp_path: Path, engine: str
) -> None:
    added = first_use(tmp_path, "removing", engine)
    ours = ours_of(added)
    if engine == "native":
        assert ours == NATIVE_DECLARATION
    else:
        assert f"{PACKAGE}._deprecations._declarations" in ours
    assert "warnings" not in added


@pytest.mark.parametrize("engine", ENGINES)
def test_a_first_lazy_submodule_imports_nothing_of_importlib(tmp_path: Path, engine: str) -> None:
    # Finding the submodule (not running it) asks the import system's own
    # search: importlib.util costs 4.4M instructions on 3.12, a tenth of a start-up.
    package = tmp_path / "lazy_package"
    package.mkdir()
    (package / "__init__.py").write_text(
        'import pep726hook\npep726hook.lazy_attribute(__name__, "heavy")\n', encoding="utf-8"
    )
    (package / "heavy.py").write_text("VALUE = 1\n", encoding="utf-8")
    added = first_import(tmp_path, "lazy_package", engine)
    assert not {name for name in added if name.split(".")[0] == "importlib"}
    assert "lazy_package.heavy" not in added
    if engine == "native":
        assert ours_of(added) == NATIVE_DECLARATION


# -- the scan of markers --------------------------------------------------------------------


@pytest.fixture
def load(write_module: WriteModule) -> Iterator[Any]:
    def make(name: str, source: str) -> Any:
        write_module(name, source)
        return importlib.import_module(name)

    # Markers that other tests made and never assigned (a refused one, say)
    # leave their ids behind, which only costs later declarations a scan.
    _entries._unconverted.clear()
    yield make
    _entries._unconverted.clear()


def test_declarations_scan_no_namespace_while_no_marker_waits(
    opt_in_engine: str, load: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each deprecate_attribute() call looked for deprecated() markers in the
    # whole namespace (a thousand names: 43 ms in all).  While no marker made
    # in the process waits for its conversion none can be there.
    source = "".join(f"Old{i} = {i}\n" for i in range(20))
    module = load("many_declared", source)
    # Loaded first: its modules bind the helper below as they load.
    importlib.import_module("pep726hook._deprecations._api")
    declare = pep726hook.deprecate_attribute
    scanned: list[str] = []
    namespace = _entries.namespace

    def counting(module: Any) -> Any:
        scanned.append(module.__name__)
        return namespace(module)

    monkeypatch.setattr(_entries, "namespace", counting)
    for i in range(20):
        declare(module, f"Old{i}", f"Old{i} is deprecated")
    assert set(_entries.deprecations_of(module) or ()) == {f"Old{i}" for i in range(20)}
    assert scanned == []
    assert not _entries.may_hold_markers()


def test_a_converted_marker_no_longer_makes_declarations_scan(
    opt_in_engine: str, load: Any
) -> None:
    source = (
        "import pep726hook\n"
        'Old = pep726hook.deprecated(1, "Old is deprecated")\n'
        "pep726hook.enable(__name__)\n"
    )
    module = load("marked_once", source)
    assert not _entries.may_hold_markers()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert module.Old == 1
    assert [str(w.message) for w in caught] == ["Old is deprecated"]


def test_a_marker_made_earlier_and_put_into_the_namespace_is_still_converted(
    opt_in_engine: str, load: Any
) -> None:
    # A marker made before a declaration and put straight into the namespace
    # after it (no store through the module, which would convert it): the
    # next declaration converts it, as it did when every call scanned.
    module = load("late_marker", "import pep726hook\nA = 1\nB = 2\n")
    marker = pep726hook.deprecated("late", "Late is deprecated")
    pep726hook.deprecate_attribute(module, "A", "A is deprecated")
    assert _entries.may_hold_markers()
    vars(module)["Late"] = marker
    pep726hook.deprecate_attribute(module, "B", "B is deprecated")
    assert not _entries.may_hold_markers()
    assert vars(module).get("Late", "moved") in ("late", "moved")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert module.Late == "late"
    assert [str(w.message) for w in caught] == ["Late is deprecated"]


def test_a_marker_under_a_dunder_name_is_refused_at_every_declaration(
    opt_in_engine: str, load: Any
) -> None:
    module = load("dunder_marker", "import pep726hook\nA = 1\nB = 2\n")
    pep726hook.enable(module)
    vars(module)["__odd__"] = pep726hook.deprecated(1, "odd")
    for name in ("A", "B"):
        with pytest.raises(ValueError, match="'__odd__' cannot be deprecated"):
            pep726hook.deprecate_attribute(module, name, f"{name} is deprecated")
    assert _entries.deprecations_of(module) is None or not _entries.deprecations_of(module)
    del vars(module)["__odd__"]

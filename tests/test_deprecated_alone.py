"""Deprecated names that the native engine declares through the extension alone.

In a process that has run nothing else of the package,
``deprecate_attribute()`` of a name the module holds is one call of the
extension, which keeps the value in the namespace while the body runs and,
when the body's window ends, gives the module's functions its private
builtins and moves the value there (``src/c/native/deprecated_alone.c``).  These tests run one library in
fresh processes by three routes and compare what its readers and its own
code see: the extension alone, the full path under the native engine (the
installation state loaded first), and the class engine.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest
from _venv import ENGINES, run_fresh_json, write

LIBRARY = """\
import sys
import pep726hook

def before():
    return OLD

class Holder:
    def method(self):
        return OLD

def generator():
    yield OLD
    yield OLD

STARTED = generator()
open = "the module's own open"
OLD = 41
pep726hook.deprecate_attribute(__name__, "OLD", "OLD is deprecated; use NEW")
pep726hook.deprecate_attribute(__name__, "open", "open here is deprecated")

def after():
    return OLD

IN_BODY = OLD
IN_GLOBALS = "OLD" in globals()
THROUGH_MODULE = None
try:
    THROUGH_MODULE = sys.modules[__name__].OLD  # warns, in the body too
except DeprecationWarning as error:
    THROUGH_MODULE = str(error)
OLD = 42  # bound again after the declaration: the newest value is the deprecated one
ALONE = "pep726hook._state" not in sys.modules
"""

READS = """
import json, os, sys, warnings
seen = {}

def record(key, read):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            value = read()
        except Exception as error:
            value = [type(error).__name__, str(error)]
    seen[key] = [
        value,
        [[w.category.__name__, str(w.message), os.path.basename(w.filename)] for w in caught],
    ]

import deplib
record("alone", lambda: deplib.ALONE)
record("body", lambda: [deplib.IN_BODY, deplib.IN_GLOBALS, deplib.THROUGH_MODULE])
record("read", lambda: deplib.OLD)
record("getattr", lambda: getattr(deplib, "OLD"))
record("hasattr", lambda: hasattr(deplib, "OLD"))
record("own code", lambda: [deplib.before(), deplib.after(), deplib.Holder().method()])
record("generator", lambda: [next(deplib.STARTED), next(deplib.STARTED)])
record("dir", lambda: [n in dir(deplib) for n in ("OLD", "open", "after")])
record("vars", lambda: ["OLD" in vars(deplib), "open" in vars(deplib)])
record("open", lambda: deplib.open)
record("from import", lambda: __import__("deplib", fromlist=["OLD"]).OLD)
record("class", lambda: type(deplib).__name__)
record("store", lambda: setattr(deplib, "OLD", 5))
record("after store", lambda: [deplib.OLD, deplib.before(), "OLD" in vars(deplib)])
record("delete", lambda: delattr(deplib, "open"))
record("after delete", lambda: [hasattr(deplib, "open"), deplib.__dict__.get("open")])
print(json.dumps(seen))
"""


def _routes() -> list[tuple[str, str]]:
    # (engine, what runs first): the extension alone, the full path under
    # the native engine (the installation state loaded first), the class engine.
    routes = [(engine, "") for engine in ENGINES]
    if "native" in ENGINES:
        routes.append(("native", "import pep726hook._state\n"))
    return routes


ROUTES = _routes()


@pytest.fixture
def library(tmp_path: Path) -> Path:
    write(tmp_path / "deplib.py", LIBRARY)
    return tmp_path


def observed(directory: Path, engine: str, first: str) -> Any:
    return run_fresh_json(directory, first + READS, engine)


WARNED = [["DeprecationWarning", "OLD is deprecated; use NEW", "<string>"]]


def test_readers_and_the_modules_own_code_see_what_the_full_path_gives(library: Path) -> None:
    seen = {route: observed(library, *route) for route in ROUTES}
    alone = seen.pop(ROUTES[0])
    went_alone = alone.pop("alone")[0]
    assert went_alone is (ROUTES[0][0] == "native")
    for route, other in seen.items():
        assert other.pop("alone")[0] is False, route
        if route[0] == "class":
            # The class engine keeps the names in the namespace, served
            # through the module's class.
            assert other.pop("vars") == [[True, True], []]
        else:
            assert other["vars"] == [[False, False], []]
        assert {k: v for k, v in other.items() if k != "vars"} == {
            k: v for k, v in alone.items() if k != "vars"
        }, route
    # What they all see: the library's messages at the reader's line, its own
    # code reading the newest value without a warning, a store and a deletion
    # through the module that warn and end the deprecation.
    assert alone["body"] == [[41, True, 41], []]
    assert alone["read"] == [42, WARNED]
    assert alone["getattr"] == [42, WARNED]
    assert alone["hasattr"] == [True, WARNED]
    assert alone["own code"] == [[42, 42, 42], []]
    assert alone["generator"] == [[42, 42], []]
    assert alone["open"][0] == "the module's own open"
    assert alone["store"] == [None, WARNED]
    assert alone["after store"] == [[5, 5, True], []]
    assert alone["after delete"] == [[False, None], []]


@pytest.mark.parametrize("engine", ENGINES)
def test_an_error_filter_raises_at_the_read_and_the_store_changes_nothing(
    library: Path, engine: str
) -> None:
    seen = run_fresh_json(
        library,
        """
        import json, warnings
        import deplib
        warnings.simplefilter("error")
        errors = []
        for act in (lambda: deplib.OLD, lambda: setattr(deplib, "OLD", 0)):
            try:
                act()
            except DeprecationWarning as error:
                errors.append(str(error))
        warnings.simplefilter("ignore")
        print(json.dumps([errors, deplib.OLD, deplib.before()]))
        """,
        engine,
    )
    assert seen == [["OLD is deprecated; use NEW"] * 2, 42, 42]


@pytest.mark.parametrize("engine", ENGINES)
def test_a_warn_callable_is_called_and_names_the_readers_line(tmp_path: Path, engine: str) -> None:
    write(
        tmp_path / "warnlib.py",
        """\
        import pep726hook, warnings
        CALLS = []
        def warn(message, category, stacklevel):
            CALLS.append((message, category.__name__, stacklevel))
            warnings.warn("library: " + message, category, stacklevel)
        OLD = 1
        pep726hook.deprecate_attribute(__name__, "OLD", "OLD is old",
                                       category=FutureWarning, warn=warn)
        """,
    )
    seen = run_fresh_json(
        tmp_path,
        """
        import json, warnings
        import warnlib
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            value = warnlib.OLD
        print(json.dumps([value, [(str(w.message), w.filename, w.lineno) for w in caught],
                          len(warnlib.CALLS)]))
        """,
        engine,
    )
    assert seen[0] == 1
    assert [message for message, _, _ in seen[1]] == ["library: OLD is old"]
    assert seen[1][0][1] == "<string>"
    assert seen[2] == 1


@pytest.mark.parametrize("engine", ENGINES)
def test_functions_running_in_other_threads_keep_reading_the_name(
    tmp_path: Path, engine: str
) -> None:
    # A thread runs a function of the module while its body deprecates the
    # name: its frame and the function get the private builtins before the
    # value moves there.
    write(
        tmp_path / "threaded.py",
        """\
        import threading, time
        import pep726hook
        OLD = 1
        seen = []
        go = threading.Event()
        def reader():
            go.set()
            deadline = time.monotonic() + 0.5
            while time.monotonic() < deadline:
                seen.append(OLD)
        thread = threading.Thread(target=reader)
        thread.start()
        go.wait()
        pep726hook.deprecate_attribute(__name__, "OLD", "OLD is old")
        """,
    )
    seen = run_fresh_json(
        tmp_path,
        """
        import json, warnings
        warnings.simplefilter("ignore")
        import threaded
        threaded.thread.join()
        print(json.dumps([set(threaded.seen) == {1}, threaded.OLD]))
        """,
        engine,
    )
    assert seen == [True, 1]


@pytest.mark.parametrize("engine", ENGINES)
def test_the_deprecations_package_adopts_a_deprecated_name(library: Path, engine: str) -> None:
    seen = run_fresh_json(
        library,
        """
        import json, warnings
        warnings.simplefilter("ignore")
        import deplib
        import pep726hook
        # A factory is the full path's: the deprecations package loads and
        # adopts what the extension declared.
        pep726hook.deprecate_attribute(deplib, "NEW", "NEW is new too", factory=lambda: 7)
        from pep726hook._deprecations import _entries
        names = sorted(_entries.deprecations_of(deplib) or {})
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            read = [deplib.OLD, deplib.NEW, deplib.before()]
            deplib.OLD = 3
        print(json.dumps([names, read, [str(w.message) for w in caught],
                          deplib.OLD, sorted(_entries.deprecations_of(deplib) or {})]))
        """,
        engine,
    )
    assert seen == [
        ["NEW", "OLD", "open"],
        [42, 7, 42],
        ["OLD is deprecated; use NEW", "NEW is new too", "OLD is deprecated; use NEW"],
        3,
        ["NEW", "open"],
    ]


@pytest.mark.parametrize("engine", ENGINES)
def test_reload_deprecates_again(tmp_path: Path, engine: str) -> None:
    # The second run's declaration is the full path's (the name has one),
    # which adopts the module and moves the names the body binds again.
    write(
        tmp_path / "reloaded.py",
        """\
        import pep726hook
        def before():
            return OLD
        OLD = 41
        pep726hook.deprecate_attribute(__name__, "OLD", "OLD is deprecated; use NEW")
        def after():
            return OLD
        """,
    )
    seen = run_fresh_json(
        tmp_path,
        """
        import importlib, json, warnings
        import reloaded
        importlib.reload(reloaded)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            read = [reloaded.OLD, reloaded.before(), reloaded.after()]
        print(json.dumps([read, [str(w.message) for w in caught], "OLD" in vars(reloaded)]))
        """,
        engine,
    )
    assert seen[:2] == [[41, 41, 41], ["OLD is deprecated; use NEW"]]
    assert seen[2] is (engine == "class")


# A body that binds its deprecated name again after deprecating it, run again
# by importlib.reload(): as the first run did, then (by its second line)
# without the deprecation, or with the deprecations package loaded before the
# name is bound again.  Before 3.12 no dict watcher sees the body bind the
# name again: the module's window opens again when importlib stores its
# __spec__, and its end moves the names again.
RELOADED = """\
import sys
import pep726hook
RUN = getattr(sys, "reload_runs", 0) + 1
sys.reload_runs = RUN
if RUN == 2 and {load_package_again}:
    import pep726hook._deprecations
def before():
    return OLD
OLD = 1
if RUN == 1 or {deprecate_again}:
    pep726hook.deprecate_attribute(__name__, "OLD", "OLD is deprecated; use NEW")
OLD = 2
def after():
    return OLD
"""


@pytest.mark.parametrize(
    "shape",
    [
        {"deprecate_again": True, "load_package_again": False},
        {"deprecate_again": False, "load_package_again": False},
        {"deprecate_again": True, "load_package_again": True},
    ],
    ids=["deprecated-again", "not-deprecated-again", "package-loaded-first"],
)
@pytest.mark.parametrize(
    "route", ROUTES, ids=[engine + ("-full-path" if first else "") for engine, first in ROUTES]
)
def test_a_reloaded_body_that_binds_a_deprecated_name_again_keeps_it_deprecated(
    tmp_path: Path, route: tuple[str, str], shape: dict[str, bool]
) -> None:
    write(tmp_path / "rebinding.py", RELOADED.format(**shape))
    engine, first = route
    seen = run_fresh_json(
        tmp_path,
        first
        + textwrap.dedent(
            """
            import importlib, json, warnings
            import rebinding

            def read():
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    values = [rebinding.OLD, rebinding.before(), rebinding.after()]
                return [values, [str(w.message) for w in caught], "OLD" in vars(rebinding)]

            first = read()
            importlib.reload(rebinding)
            print(json.dumps([first, read()]))
            """
        ),
        engine,
    )
    expected = [[2, 2, 2], ["OLD is deprecated; use NEW"], engine == "class"]
    assert seen == [expected, expected]


@pytest.mark.parametrize("engine", ENGINES)
def test_a_body_running_when_the_package_loads_keeps_reading_its_names(
    tmp_path: Path, engine: str
) -> None:
    # The deprecations package loads in the middle of the body (a factory is
    # its to declare) and adopts the module: the value still in the namespace
    # is deprecated again, in the package's own window, and moves when the
    # import has ended; the body and its functions read it throughout.
    write(
        tmp_path / "midway.py",
        """\
        import pep726hook
        OLD = 1
        def before():
            return OLD
        pep726hook.deprecate_attribute(__name__, "OLD", "OLD is old")
        pep726hook.deprecate_attribute(__name__, "LATER", "LATER is old", factory=lambda: 2)
        AFTER = OLD + before()
        """,
    )
    seen = run_fresh_json(
        tmp_path,
        """
        import json, warnings
        warnings.simplefilter("ignore")
        import midway
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            read = [midway.AFTER, midway.OLD, midway.LATER, midway.before()]
        print(json.dumps([read, [str(w.message) for w in caught], "OLD" in vars(midway)]))
        """,
        engine,
    )
    assert seen == [[2, 1, 2, 1], ["OLD is old", "LATER is old"], engine == "class"]

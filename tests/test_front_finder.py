"""A finder put in front of pep726hook's after install(), then an immediate import.

typeguard, pyximport and plugin systems put their finder first with
``sys.meta_path.insert(0, finder)`` (or a slice assignment, or a new list),
and the very next statement imports a module that finder serves.  Its hooks
must work from the end of its body at the latest, under every engine, with the
same result: the native engine needs no finder, the class engine needs its
finder to see the import.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import sys
import types
from pathlib import Path
from typing import Any, Callable

import pytest

import pep726hook

CPYTHON = sys.implementation.name == "cpython"

HOOKED_SOURCE = """
import sys

calls = []

def __setattr__(name, value):
    calls.append(name)
    if name == "frozen":
        raise AttributeError(f"{name} is read-only")
    globals()[name] = value

sys.modules[__name__].during_body = 1
"""


class _LegacyLoader:
    """A loader with only load_module(): the body runs inside it."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def load_module(self, fullname: str) -> types.ModuleType:
        module = types.ModuleType(fullname)
        module.__file__ = str(self.path)
        module.__loader__ = self
        sys.modules[fullname] = module
        try:
            code = compile(self.path.read_text(encoding="utf-8"), str(self.path), "exec")
            exec(code, vars(module))
        except BaseException:
            del sys.modules[fullname]
            raise
        return sys.modules[fullname]


class _ServingFinder:
    """Serves one module from a directory that is not on sys.path.

    *kind* is how: ``source`` (importlib's source loader, as typeguard gets
    through PathFinder), ``load_module`` (a loader with only load_module()),
    ``find_module`` (a finder with only the old find_module()).
    """

    def __init__(self, name: str, path: Path, kind: str) -> None:
        self.name = name
        self.path = path
        self.kind = kind
        if kind == "find_module":
            self.find_module = self._find_module
        else:
            self.find_spec = self._find_spec

    def _find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname != self.name:
            return None
        if self.kind == "load_module":
            return importlib.util.spec_from_loader(fullname, _LegacyLoader(self.path))
        return importlib.util.spec_from_file_location(fullname, self.path)

    def _find_module(self, fullname: str, path: Any = None) -> Any:
        if fullname != self.name:
            return None
        return importlib.machinery.SourceFileLoader(fullname, str(self.path))


def _insert(finder: object) -> None:
    sys.meta_path.insert(0, finder)


def _slice(finder: object) -> None:
    sys.meta_path[:0] = [finder]


def _concatenation(finder: object) -> None:
    sys.meta_path = [finder] + sys.meta_path  # noqa: RUF005 (the spelling under test)


def _new_list(finder: object) -> None:
    sys.meta_path = [finder, *sys.meta_path]


def _edited_copy(finder: object) -> None:
    meta_path = sys.meta_path.copy()
    meta_path.insert(0, finder)
    sys.meta_path = meta_path


def _append(finder: object) -> None:
    sys.meta_path.append(finder)


PUT_IN_FRONT: dict[str, Callable[[object], None]] = {
    "insert(0)": _insert,
    "slice": _slice,
    "[f] + meta_path": _concatenation,
    "[f, *meta_path]": _new_list,
    "edited copy": _edited_copy,
    "append": _append,
}
# Bound in place of the list pep726hook watches: noticed when that list is
# freed, which only reference counting does at once.
REPLACING = {"[f, *meta_path]", "edited copy"}

KINDS = [
    "source",
    pytest.param(
        "load_module",
        marks=pytest.mark.skipif(
            sys.version_info >= (3, 15), reason="3.15 dropped the load_module() fallback"
        ),
    ),
    pytest.param(
        "find_module",
        marks=pytest.mark.skipif(
            sys.version_info >= (3, 12), reason="3.12 dropped find_module() finders"
        ),
    ),
]


@pytest.fixture
def served(tmp_path: Path, request: pytest.FixtureRequest) -> Callable[[str, str], _ServingFinder]:
    """Make a finder serving a hooked module from outside sys.path; remove it afterwards."""
    finders: list[_ServingFinder] = []

    def make(name: str, kind: str) -> _ServingFinder:
        path = tmp_path / "served" / f"{name}.py"
        path.parent.mkdir(exist_ok=True)
        path.write_text(HOOKED_SOURCE, encoding="utf-8")
        finder = _ServingFinder(name, path, kind)
        finders.append(finder)
        return finder

    yield make
    for finder in finders:
        sys.meta_path = [f for f in list.copy(sys.meta_path) if f is not finder]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("how", list(PUT_IN_FRONT))
def test_module_served_by_a_finder_just_put_in_front_calls_its_hook(
    engine: str, served: Callable[[str, str], _ServingFinder], how: str, kind: str
) -> None:
    if how in REPLACING and not CPYTHON:
        pytest.skip("a replaced sys.meta_path is noticed when the old list is freed")
    name = f"front_{kind}_{how.translate(str.maketrans(' (),[]+*:', '_________'))}"
    finder = served(name, kind)
    PUT_IN_FRONT[how](finder)
    module = importlib.import_module(name)
    with pytest.raises(AttributeError, match="frozen is read-only"):
        module.frozen = 1
    assert "frozen" not in vars(module)
    module.x = 2
    assert module.calls[-1] == "x"
    assert pep726hook.is_upgraded(module)
    if kind != "load_module":
        # The body runs under the import system, which our finder's wrapper
        # sees: the hook works while the body runs, as with the native engine.
        assert module.calls[0] == "during_body"


def test_finder_put_in_front_stays_where_it_was_put(
    engine: str, served: Callable[[str, str], _ServingFinder]
) -> None:
    finder = served("front_position", "source")
    sys.meta_path.insert(0, finder)
    importlib.import_module("front_position")
    assert sys.meta_path[0] is finder
    assert sys.meta_path.index(finder) == 0
    assert sys.meta_path.pop(0) is finder
    assert finder not in sys.meta_path


def test_meta_path_is_a_plain_list_again_after_uninstall(
    served: Callable[[str, str], _ServingFinder],
) -> None:
    finder = served("front_after_uninstall", "source")
    with pep726hook.install("class"):
        sys.meta_path.insert(0, finder)
    assert type(sys.meta_path) is list
    assert sys.meta_path[0] is finder
    module = importlib.import_module("front_after_uninstall")
    module.frozen = 1  # no hook called
    assert vars(module)["frozen"] == 1

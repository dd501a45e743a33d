"""The finder and loader wrapper stay out of the way of everything else.

Most tests guard against a way the import hooks of other projects broke
something; their docstrings link the public report.  Tests that use the
``engine`` fixture run under every engine; the ones about the wrapper itself
use the class engine, the only one with a finder.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import pkgutil
import runpy
import sys
import threading
import traceback
import types
import warnings
import zipfile
from pathlib import Path
from typing import Any, Iterator

import pytest
from _venv import RECORDING_MODULE, WriteModule

import pep726hook
from pep726hook._finder import ExecModuleWrapper, LoadModuleWrapper, Pep726Finder


@pytest.fixture
def class_engine() -> Iterator[Pep726Finder]:
    """The class engine installed; yields its finder."""
    with pep726hook.install("class"):
        finder = sys.meta_path[0]
        assert isinstance(finder, Pep726Finder)
        yield finder


class RecordingFinder(importlib.abc.MetaPathFinder):
    def __init__(self) -> None:
        self.calls: list[tuple[str, Any, Any]] = []

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> None:
        self.calls.append((fullname, path, target))


class DictSourceLoader(importlib.abc.Loader):
    """Serves modules from a dict of sources, like editable-install finders do."""

    def __init__(self, sources: dict[str, str]) -> None:
        self.sources = sources

    def create_module(self, spec: Any) -> None:
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        exec(self.sources[module.__name__], module.__dict__)


class DictFinder(importlib.abc.MetaPathFinder):
    def __init__(self, sources: dict[str, str]) -> None:
        self.loader = DictSourceLoader(sources)

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname not in self.loader.sources:
            return None
        return importlib.util.spec_from_loader(fullname, self.loader)


def test_every_later_finder_is_asked_with_path_and_target(class_engine: Pep726Finder) -> None:
    """Finders after ours are still asked, with path and target.

    A front finder that asked only PathFinder bypassed pytest's assertion
    rewriter: https://github.com/agronholm/typeguard/issues/230, https://github.com/beartype/beartype/issues/674
    """
    first, second = RecordingFinder(), RecordingFinder()
    sys.meta_path[1:1] = [first]
    sys.meta_path.append(second)
    target = types.ModuleType("no_such_module_anywhere")
    assert class_engine.find_spec("no_such_module_anywhere", ["somewhere"], target) is None
    assert first.calls == [("no_such_module_anywhere", ["somewhere"], target)]
    assert second.calls == [("no_such_module_anywhere", ["somewhere"], target)]


def test_module_served_by_a_later_custom_finder_gets_its_hooks(engine: str) -> None:
    """Editable installs serve modules from a finder after PathFinder.

    https://github.com/beartype/beartype/issues/556, https://github.com/pypa/setuptools/issues/3557
    """
    sys.meta_path.append(DictFinder({"from_dict_finder": RECORDING_MODULE}))
    module = importlib.import_module("from_dict_finder")
    module.x = 1
    assert module.calls == ["x"]
    assert isinstance(module.__loader__, DictSourceLoader)


def test_manual_find_spec_and_exec_module_give_hooks(
    engine: str, write_module: WriteModule
) -> None:
    """As pytest's --import-mode=importlib does: find_spec, module_from_spec, exec_module."""
    path = write_module("manually_loaded", RECORDING_MODULE)
    spec = None
    for finder in sys.meta_path:
        spec = finder.find_spec("manually_loaded", [str(path.parent)])
        if spec is not None:
            break
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["manually_loaded"] = module
    spec.loader.exec_module(module)
    module.x = 1
    assert module.calls == ["x"]
    assert module.__loader__ is module.__spec__.loader
    assert type(module.__loader__) is importlib.machinery.SourceFileLoader


@pytest.mark.parametrize("source", [RECORDING_MODULE, "x = 1\n"], ids=["hooked", "plain"])
def test_loader_attributes_are_the_real_loader_after_import(
    engine: str, write_module: WriteModule, source: str
) -> None:
    """__loader__ and __spec__.loader are the real loader, not a wrapper.

    https://github.com/GrahamDumpleton/wrapt/issues/221
    """
    write_module("loader_after", source)
    import loader_after  # type: ignore[import-not-found]

    assert loader_after.__loader__ is loader_after.__spec__.loader
    assert type(loader_after.__loader__) is importlib.machinery.SourceFileLoader


def test_loader_attributes_are_real_while_the_body_runs(
    engine: str, write_module: WriteModule
) -> None:
    write_module(
        "loader_during",
        RECORDING_MODULE + "seen = (type(__loader__).__name__, type(__spec__.loader).__name__)\n",
    )
    import loader_during  # type: ignore[import-not-found]

    assert loader_during.seen == ("SourceFileLoader", "SourceFileLoader")


def test_runpy_run_module_sees_the_real_loader(engine: str, write_module: WriteModule) -> None:
    """``python -m`` calls get_code() and never exec_module(); __loader__ is still real.

    https://github.com/GrahamDumpleton/wrapt/issues/238, https://github.com/PythonCharmers/python-future/issues/332
    """
    write_module("run_as_main", RECORDING_MODULE + "loader_type = type(__loader__).__name__\n")
    namespace = runpy.run_module("run_as_main", run_name="__main__")
    assert namespace["loader_type"] == "SourceFileLoader"
    assert type(namespace["__spec__"].loader) is importlib.machinery.SourceFileLoader


class LoadModuleOnlyLoader:
    """A legacy loader, like zipimporter before Python 3.10."""

    def __init__(self, source: str) -> None:
        self.source = source

    def load_module(self, fullname: str) -> types.ModuleType:
        module = sys.modules.setdefault(fullname, types.ModuleType(fullname))
        module.__loader__ = self
        exec(self.source, module.__dict__)
        return module


class LegacyFinder(importlib.abc.MetaPathFinder):
    def __init__(self, name: str, loader: Any) -> None:
        self.name, self.loader = name, loader

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname != self.name:
            return None
        return importlib.util.spec_from_loader(fullname, self.loader)


LEGACY_LOADERS_ARE_RUN = sys.version_info < (3, 15)


def import_legacy_loaded() -> types.ModuleType:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", (DeprecationWarning, ImportWarning))
        return importlib.import_module("legacy_loaded")


@pytest.mark.skipif(not LEGACY_LOADERS_ARE_RUN, reason="3.15 never calls load_module()")
def test_wrapper_offers_only_the_loading_methods_the_real_loader_has(
    class_engine: Pep726Finder,
) -> None:
    """A load_module()-only loader (zipimport before 3.10) is not offered exec_module().

    https://github.com/pypa/virtualenv/issues/1690 (wrapt 1.14.1 advertised it)
    """
    legacy = LoadModuleOnlyLoader(RECORDING_MODULE)
    sys.meta_path.append(LegacyFinder("legacy_loaded", legacy))
    spec = class_engine.find_spec("legacy_loaded", None)
    assert isinstance(spec.loader, LoadModuleWrapper)
    assert not hasattr(spec.loader, "exec_module")
    assert not hasattr(spec.loader, "create_module")
    module = import_legacy_loaded()
    module.x = 1
    # importlib sets __spec__ and friends by attribute after load_module(), as
    # it would with the reference implementation: the hook sees those too.
    assert [name for name in module.calls if not name.startswith("__")] == ["x"]
    assert module.__loader__ is legacy


class ExecModuleOnlyLoader:
    """A loader written today: create_module() and exec_module(), no load_module()."""

    def __init__(self, source: str) -> None:
        self.source = source

    def create_module(self, spec: Any) -> None:
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        exec(self.source, module.__dict__)


def test_wrapper_of_an_exec_module_loader_offers_no_load_module(
    class_engine: Pep726Finder,
) -> None:
    """The wrapper offers only the loading methods the real loader has.

    Code that picks a loading method with hasattr() must see the real loader's
    choice; wrapt 1.14.1 advertised a method the loader lacked:
    https://github.com/pypa/virtualenv/issues/1690
    """
    modern = ExecModuleOnlyLoader(RECORDING_MODULE)
    sys.meta_path.append(LegacyFinder("modern_loaded", modern))
    spec = class_engine.find_spec("modern_loaded", None)
    assert isinstance(spec.loader, ExecModuleWrapper)
    assert not hasattr(spec.loader, "load_module")
    module = importlib.import_module("modern_loaded")
    module.x = 1
    assert module.calls == ["x"]
    assert module.__loader__ is modern


def test_load_module_only_loader_fails_or_loads_exactly_as_without_us() -> None:
    """3.15 calls exec_module() on every loader; before, load_module().

    https://github.com/python/cpython/issues/97850
    """
    legacy = LoadModuleOnlyLoader(RECORDING_MODULE)
    sys.meta_path.append(LegacyFinder("legacy_loaded", legacy))

    def outcome() -> tuple[str, str]:
        sys.modules.pop("legacy_loaded", None)
        try:
            module = import_legacy_loaded()
        except Exception as error:
            return type(error).__name__, str(error)
        return "loaded", repr(module.__loader__)

    expected = outcome()
    with pep726hook.install("class"):
        finder = sys.meta_path[0]
        assert isinstance(finder, Pep726Finder)
        spec = finder.find_spec("legacy_loaded", None)
        actual = outcome()
    if LEGACY_LOADERS_ARE_RUN:
        assert isinstance(spec.loader, LoadModuleWrapper)
        assert expected[0] == "loaded"
    else:
        # Nothing to run around: the spec keeps the real loader, and the
        # AttributeError names it, not a wrapper.
        assert spec.loader is legacy
        assert expected[0] == "AttributeError"
    assert actual == expected


def test_resources_work_during_and_after_execution(engine: str, write_module: WriteModule) -> None:
    """Resource readers are reached through the real loader.

    https://github.com/pytest-dev/pytest/issues/9169, https://github.com/pytest-dev/pytest/issues/7375,
    https://github.com/facebookresearch/hydra/issues/1854
    """
    package = write_module(
        "with_data",
        RECORDING_MODULE + "import pkgutil\n" + "during = pkgutil.get_data(__name__, 'data.txt')\n",
        package=True,
    )
    (package.parent / "data.txt").write_text("payload", encoding="utf-8")
    module = importlib.import_module("with_data")
    assert module.during == b"payload"
    assert pkgutil.get_data("with_data", "data.txt") == b"payload"
    if sys.version_info >= (3, 9):
        resources = importlib.import_module("importlib.resources")
        files = resources.files("with_data")
        assert files.joinpath("data.txt").read_text(encoding="utf-8") == "payload"


def test_namespace_packages_pass_through_and_their_portions_get_hooks(
    engine: str, write_module: WriteModule, tmp_path: Path
) -> None:
    """Specs without a loader (namespace packages) are left alone.

    https://github.com/brettlangdon/importhook/issues/6
    """
    write_module("namespace_pkg.portion", RECORDING_MODULE)
    namespace = importlib.import_module("namespace_pkg")
    assert namespace.__file__ is None or not namespace.__file__.endswith(".py")
    assert type(namespace) is types.ModuleType
    portion = importlib.import_module("namespace_pkg.portion")
    portion.x = 1
    assert portion.calls == ["x"]


def test_finders_without_find_spec_are_handled_as_importlib_does(
    class_engine: Pep726Finder,
) -> None:
    """A finder without find_spec() is skipped on 3.12+, asked through find_module() before.

    https://github.com/pytest-dev/pytest/issues/12179
    """

    class FindModuleOnly:
        def __init__(self) -> None:
            self.asked: list[str] = []

        def find_module(self, fullname: str, path: Any = None) -> Any:
            self.asked.append(fullname)
            return LoadModuleOnlyLoader(RECORDING_MODULE) if fullname == "old_style" else None

    old = FindModuleOnly()
    sys.meta_path.insert(1, old)
    spec = class_engine.find_spec("old_style", None)
    if sys.version_info >= (3, 12):
        assert spec is None
        assert old.asked == []
    else:
        assert spec is not None
        assert isinstance(spec.loader, LoadModuleWrapper)
        assert old.asked == ["old_style"]


def test_threads_importing_modules_that_import_each_other_finish(
    engine: str, write_module: WriteModule
) -> None:
    """No lock of ours is held while a module body runs.

    https://github.com/GrahamDumpleton/wrapt/pull/217
    """
    write_module("ping", RECORDING_MODULE + "import time\ntime.sleep(0.05)\nimport pong\n")
    write_module("pong", RECORDING_MODULE + "import time\ntime.sleep(0.05)\nimport ping\n")
    errors: list[BaseException] = []

    def run(name: str) -> None:
        try:
            importlib.import_module(name)
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=run, args=(n,)) for n in ("ping", "pong")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
        assert not thread.is_alive(), "import deadlocked"
    # A genuine import cycle between threads is resolved by importlib's deadlock
    # detection: one side may see a partially initialised module or get
    # importlib's _DeadlockError, exactly as without the hook.
    assert all(isinstance(e, ImportError) or "deadlock" in str(e) for e in errors), errors
    for name in ("ping", "pong"):
        module = sys.modules[name]
        module.x = 1
        assert module.calls[-1] == "x"


def test_own_package_is_never_wrapped(class_engine: Pep726Finder) -> None:
    """Our own package is never wrapped, so the hook never runs half-imported.

    https://github.com/beartype/beartype/issues/638
    """
    assert class_engine.find_spec("pep726hook", None) is None
    assert class_engine.find_spec("pep726hook._finder", None) is None


def test_lookup_reentering_for_the_same_name_does_not_recurse(
    class_engine: Pep726Finder, write_module: WriteModule
) -> None:
    """A later finder that asks the import system about the same name again."""

    class AsksAgain(importlib.abc.MetaPathFinder):
        asking = False

        def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
            if fullname != "asked_twice" or self.asking:
                return None
            self.asking = True
            try:
                return importlib.util.find_spec(fullname)
            finally:
                self.asking = False

    write_module("asked_twice", RECORDING_MODULE)
    sys.meta_path.insert(1, AsksAgain())
    spec = class_engine.find_spec("asked_twice", None)
    assert isinstance(spec.loader, ExecModuleWrapper)
    assert type(spec.loader._loader) is importlib.machinery.SourceFileLoader
    module = importlib.import_module("asked_twice")
    module.x = 1
    assert module.calls == ["x"]


def test_post_processing_error_warns_once_and_the_import_proceeds(
    class_engine: Pep726Finder, write_module: WriteModule, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Our own failure never fails an import.

    https://github.com/agronholm/typeguard/issues/340
    """

    def broken(module: object) -> None:
        raise RuntimeError("engine bug")

    monkeypatch.setattr(class_engine.engine, "begin", broken)
    monkeypatch.setattr(class_engine.engine, "settle", broken)
    write_module("survives_engine_bug", "x = 1\n")
    with pytest.warns(RuntimeWarning, match="could not prepare module 'survives_engine_bug'") as w:
        import survives_engine_bug  # type: ignore[import-not-found]
    assert survives_engine_bug.x == 1
    assert len([r for r in w if issubclass(r.category, RuntimeWarning)]) == 1


def test_builtin_and_frozen_specs_pass_through_unwrapped(class_engine: Pep726Finder) -> None:
    builtin = class_engine.find_spec("_imp", None)
    assert builtin is not None and not isinstance(builtin.loader, ExecModuleWrapper)
    frozen = class_engine.find_spec("__hello__", None)
    if frozen is not None and frozen.origin == "frozen":
        assert not isinstance(frozen.loader, ExecModuleWrapper)


def test_extension_modules_import_through_the_wrapper(engine: str) -> None:
    candidates = ("_lsprof", "mmap", "_statistics", "cmath", "_bisect", "_heapq", "_json")
    for name in candidates:
        if name in sys.modules:
            continue
        spec = importlib.util.find_spec(name)
        if spec is None or not str(spec.origin).endswith((".so", ".pyd")):
            continue
        module = importlib.import_module(name)
        assert type(module.__loader__) is importlib.machinery.ExtensionFileLoader
        assert module.__loader__ is module.__spec__.loader
        return
    pytest.skip("no unimported extension module found")


@pytest.mark.skipif(sys.implementation.name != "cpython", reason="CPython's own traceback trimming")
def test_traceback_of_a_failing_body_shows_no_wrapper_frames(
    engine: str, write_module: WriteModule
) -> None:
    path = write_module("raises_in_body", RECORDING_MODULE + "raise ValueError('from the body')\n")
    with pytest.raises(ValueError, match="from the body") as caught:
        import raises_in_body  # type: ignore[import-not-found]  # noqa: F401
    files = [frame.filename for frame in traceback.extract_tb(caught.value.__traceback__)]
    assert files == [__file__, str(path)]


def test_hooked_module_in_a_zip_file_gets_its_hooks(engine: str, tmp_path: Path) -> None:
    archive = tmp_path / "modules.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("zipped_hooked.py", RECORDING_MODULE)
    sys.path.insert(0, str(archive))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", (DeprecationWarning, ImportWarning))
        module = importlib.import_module("zipped_hooked")
    module.x = 1
    # zipimporter before 3.10 only has load_module(): the hook is in place once
    # it returns, and importlib's own stores of __spec__ and friends reach it.
    assert [name for name in module.calls if not name.startswith("__")] == ["x"]
    assert module.__loader__ is module.__spec__.loader

"""The meta path finder that lets an engine act around a module's execution.

The finder never finds anything itself: it asks the finders after it on
``sys.meta_path`` for the spec and hands the spec's loader to a small wrapper
that lets the engine prepare the module before its body runs and settle it
afterwards.  The wrapper puts the real loader back on ``__spec__.loader`` and
``__loader__`` before the body runs, so it is visible only while a spec is in
flight.
"""

import _thread
import sys

from ._compat import ASK_LEGACY_FINDERS, LEGACY_LOADERS_ARE_RUN, TRIMS_IMPORTLIB_FRAMES
from ._composition import HOOK_NAMES
from ._engines import warn_never_failing
from ._meta_path import FinderFirstList

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType
    from typing import Any, Callable, Sequence

    from ._engine_protocols import LoadingEngine


_PACKAGE = __name__.rpartition(".")[0]
_PASS_THROUGH_ORIGINS = ("built-in", "frozen")


def _namespace_loader_types() -> "tuple[type, ...]":
    external = sys.modules.get("_frozen_importlib_external")
    names = ("NamespaceLoader", "_NamespaceLoader")
    return tuple(t for t in (getattr(external, n, None) for n in names) if isinstance(t, type))


_NAMESPACE_LOADERS = _namespace_loader_types()


def _standard_exec_module() -> "tuple[Any, Any]":
    """importlib's own ``exec_module`` (source and bytecode loaders) and its exec helper."""
    external: Any = sys.modules.get("_frozen_importlib_external")
    basics = getattr(external, "_LoaderBasics", None)
    bootstrap = getattr(external, "_bootstrap", None)
    call = getattr(bootstrap, "_call_with_frames_removed", None)
    if basics is None or call is None:
        return object(), None  # matches no loader's exec_module
    return basics.exec_module, call


_STANDARD_EXEC_MODULE, _call_with_frames_removed = _standard_exec_module()


def code_may_define_hooks(code: "Any") -> bool:
    """Tell whether the top level of module *code* names ``__setattr__`` or ``__delattr__``.

    A module can only bind a hook by name at its top level (``def``, assignment,
    import) if the name is in the code object's ``co_names``.  A false "yes"
    (``ModuleType.__setattr__`` read at top level) only costs a class swap; a
    hook bound another way (``globals()[...]``, ``exec``, a function's
    ``global``) is still found when the body ends.
    """
    names = code.co_names
    return HOOK_NAMES[0] in names or HOOK_NAMES[1] in names


_warned_about: "set[str]" = set()


def _warn_once(fullname: str, error: BaseException) -> None:
    """Report our own failure to post-process a module; the import goes on (typeguard#340)."""
    if fullname in _warned_about:
        return
    _warned_about.add(fullname)
    message = (
        f"pep726hook could not prepare module {fullname!r} for PEP 726 hooks "
        f"({type(error).__name__}: {error}); it was imported without them"
    )
    warn_never_failing(message, stacklevel=2)


class Pep726Finder:
    """A meta path finder that wraps the loaders other finders return.

    Put it in front of ``sys.meta_path``.  ``find_spec`` delegates to every
    finder after this one, with the same *path* and *target*, so that finders
    such as pytest's assertion rewriter or editable-install finders keep
    serving their modules (typeguard#230, beartype#556).
    """

    def __init__(
        self, engine: "LoadingEngine", on_displaced: "Callable[[Pep726Finder], None] | None" = None
    ) -> None:
        self.engine = engine
        # Called when a finder was put in front of this one after install()
        # (typeguard, beartype.claw, pyximport and hy insert at index 0): the
        # modules it serves never reach the engine.
        self._on_displaced = on_displaced
        # (thread id, module name) pairs being looked up right now: a finder
        # further down that asks the import system about the same name again
        # must not recurse through us (beartype#638).
        self._in_progress: set[tuple[int, str]] = set()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} engine={getattr(self.engine, 'name', '?')!r}>"

    def find_spec(
        self,
        fullname: str,
        path: "Sequence[str] | None" = None,
        target: "ModuleType | None" = None,
    ) -> "Any":
        """Return the spec the rest of ``sys.meta_path`` finds, loader wrapped."""
        if fullname == _PACKAGE or fullname.startswith(_PACKAGE + "."):
            return None
        key = (_thread.get_ident(), fullname)
        if key in self._in_progress:
            return None
        meta_path = sys.meta_path
        if type(meta_path) is not FinderFirstList or meta_path.finder is not self:
            # Not a list the import system walks with us first (_meta_path):
            # bound by the program, or an import walking an old list.
            if self._on_displaced is not None and meta_path and meta_path[0] is not self:
                self._on_displaced(self)
            meta_path = sys.meta_path
        # The others in their own order: as the import system walks them.
        finders = list.copy(meta_path) if isinstance(meta_path, list) else list(meta_path)
        self._in_progress.add(key)
        try:
            spec = self._find_spec_after_us(finders, fullname, path, target)
        finally:
            self._in_progress.discard(key)
        if spec is not None and _loader_can_be_wrapped(spec):
            spec.loader = _wrap(spec.loader, spec, self.engine)
        return spec

    def _find_spec_after_us(
        self,
        finders: "list[Any]",
        fullname: str,
        path: "Sequence[str] | None",
        target: "ModuleType | None",
    ) -> "Any":
        for finder in finders:
            if finder is self:
                continue
            find_spec = getattr(finder, "find_spec", None)
            if find_spec is not None:
                spec = find_spec(fullname, path, target)
            elif ASK_LEGACY_FINDERS and hasattr(finder, "find_module"):
                spec = _spec_from_legacy_finder(finder, fullname, path)
            else:
                continue
            if spec is not None:
                return spec
        return None

    def invalidate_caches(self) -> None:
        """Nothing is cached here; present so ``importlib.invalidate_caches()`` is happy."""


def _spec_from_legacy_finder(finder: "Any", fullname: str, path: "Sequence[str] | None") -> "Any":
    loader = finder.find_module(fullname, path)
    if loader is None:
        return None
    bootstrap = sys.modules["_frozen_importlib"]
    return bootstrap.spec_from_loader(fullname, loader)


def _loader_can_be_wrapped(spec: "Any") -> bool:
    loader = spec.loader
    if loader is None or isinstance(loader, _LOADER_WRAPPERS):
        return False
    if spec.origin in _PASS_THROUGH_ORIGINS or isinstance(loader, _NAMESPACE_LOADERS):
        return False
    if hasattr(loader, "exec_module"):
        return True
    # Where the import system no longer runs load_module() (3.15+), a loader
    # with only that fails with AttributeError; left unwrapped, it fails
    # exactly as it does without us.
    return LEGACY_LOADERS_ARE_RUN and hasattr(loader, "load_module")


def _wrap(loader: "Any", spec: "Any", engine: "LoadingEngine") -> "Any":
    # Offer exactly the loading protocol the real loader has (wrapt 1.14.1).
    if hasattr(loader, "exec_module"):
        return ExecModuleWrapper(loader, spec, engine)
    return LoadModuleWrapper(loader, spec, engine)


class _LoaderWrapper:
    """Forwards everything to the real loader; subclasses add one loading method."""

    __slots__ = ("_engine", "_loader", "_spec")

    def __init__(self, loader: "Any", spec: "Any", engine: "LoadingEngine") -> None:
        self._loader = loader
        self._spec = spec
        self._engine = engine

    def __getattr__(self, name: str) -> "Any":
        attribute = getattr(self._loader, name)
        if name == "get_code":
            # runpy (``python -m``) asks for the code and runs it itself, with
            # the spec's loader as __loader__ (wrapt#238, python-future#332).
            self._unwrap(None)
        return attribute

    def __repr__(self) -> str:
        return f"<pep726hook wrapper of {self._loader!r}>"

    # importlib.util.find_spec() makes a new spec, so a new wrapper, on every
    # call, and ModuleSpec.__eq__ compares loaders: compare what is wrapped
    # (test_importlib test_util FindSpecTests.test_find_submodule).
    def __eq__(self, other: object) -> bool:
        if isinstance(other, _LoaderWrapper):
            other = other._loader
        return bool(self._loader == other)

    def __hash__(self) -> int:
        return hash(self._loader)

    def _unwrap(self, module: object) -> None:
        """Put the real loader back wherever this wrapper was left (wrapt#221)."""
        loader = self._loader
        if self._spec.loader is self:
            self._spec.loader = loader
        if module is None:
            return
        try:
            namespace = object.__getattribute__(module, "__dict__")
        except AttributeError:
            return
        spec = namespace.get("__spec__")
        if spec is not None and getattr(spec, "loader", None) is self:
            spec.loader = loader
        if namespace.get("__loader__") is self:
            # Straight into the namespace: this is bookkeeping, not a store a
            # module hook should see.
            namespace["__loader__"] = loader


class ExecModuleWrapper(_LoaderWrapper):
    """Wraps a loader that has ``exec_module``."""

    __slots__ = ()

    def create_module(self, spec: "Any") -> "Any":
        """Delegate to the real loader."""
        create_module = getattr(self._loader, "create_module", None)
        return None if create_module is None else create_module(spec)

    def exec_module(self, module: "ModuleType") -> None:
        """Run the module with hooks active, then keep them only if it defines one.

        For importlib's own source and bytecode loaders the code object is
        known before the body runs, and a module whose code cannot bind a hook
        by name runs as the plain module it is: ``type(module) is ModuleType``
        during its body, its threads never see its class change, and a class it
        gives itself is not composed.
        """
        self._unwrap(module)
        loader = self._loader
        code = None
        if getattr(loader.exec_module, "__func__", None) is _STANDARD_EXEC_MODULE:
            # What that exec_module does, split so the engine can look at the
            # code first; the code is compiled or read once, as without us.
            code = loader.get_code(module.__name__)
            if code is None:
                raise ImportError(
                    f"cannot load module {module.__name__!r} when get_code() returns None"
                )
        engine = self._engine
        name = self._spec.name
        class_before = None
        if code is None or code_may_define_hooks(code):
            try:
                class_before = engine.begin(module)
            except Exception as error:
                _warn_once(name, error)
        try:
            if code is None:
                loader.exec_module(module)
            else:
                _call_with_frames_removed(exec, code, module.__dict__)
        except BaseException:
            if class_before is not None:
                try:
                    engine.abort(module, class_before)
                except Exception as error:
                    _warn_once(name, error)
            raise
        try:
            # The body may have put another object in sys.modules (importhook#4).
            replacement = sys.modules.get(name, module)
            engine.settle(module)
            if replacement is not module:
                engine.settle(replacement)
        except Exception as error:
            _warn_once(name, error)


class LoadModuleWrapper(_LoaderWrapper):
    """Wraps a legacy loader that only has ``load_module`` (before Python 3.15).

    The module body runs inside the real loader, so hooks can only take effect
    once it has finished.
    """

    __slots__ = ()

    def load_module(self, fullname: str) -> "Any":
        """Delegate, then upgrade what ``sys.modules`` holds if it defines a hook."""
        self._unwrap(None)
        module = self._loader.load_module(fullname)
        try:
            self._unwrap(module)
            self._engine.settle(sys.modules.get(fullname, module))
        except Exception as error:
            _warn_once(fullname, error)
        return module


_LOADER_WRAPPERS = (ExecModuleWrapper, LoadModuleWrapper)

if TRIMS_IMPORTLIB_FRAMES:
    # CPython trims importlib's own frames from the traceback of an exception
    # raised by a module body, recognising them by file name.  Giving the
    # wrapper's exec_module that name keeps tracebacks exactly as they are
    # without us (CPython's test_import compares them frame by frame).  The
    # name is that of its caller, _bootstrap._load_unlocked: when a loader's
    # own exec_module fails and nothing is trimmed (test_import's
    # test_import_bug), our frame then merges with its caller's file instead
    # of showing up as an extra importlib frame.
    _code = ExecModuleWrapper.exec_module.__code__
    ExecModuleWrapper.exec_module.__code__ = _code.replace(
        co_filename="<frozen importlib._bootstrap>"
    )
    del _code

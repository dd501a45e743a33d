"""The class engine: PEP 726 hooks through a ``ModuleType`` subclass.

A module honours its own ``__setattr__``/``__delattr__`` once its ``__class__``
is :class:`HookAwareModule`, or a class composed from the module's own class and
:class:`HookAwareModule`.  Pure Python, so it works on every interpreter that
allows assigning ``__class__`` on modules (CPython 3.5+, PyPy).  The price is
that CPython 3.11+ only specialises attribute reads on modules whose type is
exactly ``ModuleType``, so the finder keeps the new class only on modules whose
namespace defines a hook.
"""

import _thread
import _weakref
import sys

from . import _register_at_fork

# typing is not imported at run time: this module loads during start-up.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType
    from typing import Any, Callable, Iterable, TypeGuard
else:
    ModuleType = type(sys)

_HOOK_NAMES = ("__setattr__", "__delattr__")
_NO_HOOK: "Any" = object()

# ModuleType's ``__dict__`` descriptor reads the namespace without running any
# ``__getattribute__`` a subclass (``importlib.util._LazyModule``) defines.
_namespace_of: "Callable[[ModuleType], dict[str, Any]]" = vars(ModuleType)["__dict__"].__get__
_set_class_bypassing_hooks: "Callable[[object, str, object], None]" = object.__setattr__
_module_setattr: "Any" = ModuleType.__setattr__
_module_delattr: "Any" = ModuleType.__delattr__


class HookAwareModule(ModuleType):
    """A module type whose attribute stores and deletions call the module's hooks.

    ``mod.x = v`` calls ``mod.__dict__["__setattr__"](name, value)`` and
    ``del mod.x`` calls ``mod.__dict__["__delattr__"](name)`` when the module
    defines them; otherwise the attribute is stored or deleted as usual.  The
    hooks are looked up in the module's namespace on every operation and never
    on its type, as in PEP 726's reference implementation.
    """

    __slots__ = ()

    def __setattr__(self, name: str, value: "Any") -> None:
        hook = _hook_of(self, "__setattr__")
        if hook is not _NO_HOOK and not (name == "__class__" and _lazy_loader_is_storing()):
            hook(name, value)
            return
        if name == "__class__" and issubclass(type(value), type) and issubclass(value, ModuleType):
            # The reference implementation keeps calling hooks whatever class a
            # module is given later, so the new class is composed as well.
            value = hook_aware_class_for(value)
        try:
            store = super().__setattr__
        except TypeError:
            # Another thread put the module back on its own class since this
            # call began (uninstall(), or settle() at the end of an import):
            # store as that class's generic path would (issue 13, finding 6).
            store = _module_setattr.__get__(self)
        store(name, value)

    def __delattr__(self, name: str) -> None:
        hook = _hook_of(self, "__delattr__")
        if hook is not _NO_HOOK:
            hook(name)
            return
        try:
            delete = super().__delattr__
        except TypeError:
            delete = _module_delattr.__get__(self)  # downgraded meanwhile, as above
        delete(name)


def _hook_of(module: ModuleType, name: str) -> "Any":
    try:
        return _namespace_of(module).get(name, _NO_HOOK)
    except AttributeError:
        # Python 3.8: ModuleType.__new__(ModuleType) has no namespace yet (None);
        # the generic store creates it, as CPython does (issue 13, finding 9).
        return _NO_HOOK


def _skipped_by_warnings(function: "Any") -> None:
    # The native engine calls a hook straight from the module type's slot, so
    # a hook's warnings.warn(..., stacklevel=2) names the line that stored the
    # attribute.  Here our method's frame sits in between.  Both warnings
    # implementations (C and Python, CPython 3.8+ and PyPy) skip frames whose
    # file name contains "importlib" and "_bootstrap" when they count
    # stacklevel, as they skip the import system's own frames: the count is
    # then the same under both engines.  (skip_file_prefixes is 3.12+ and the
    # caller's to pass, so it cannot do this.)
    function.__code__ = function.__code__.replace(
        co_filename="<pep726hook hook call; warnings skip it as importlib._bootstrap>"
    )


_skipped_by_warnings(HookAwareModule.__setattr__)
_skipped_by_warnings(HookAwareModule.__delattr__)

def _lazy_loader_is_storing() -> bool:
    """Tell whether the ``__class__`` store under way is LazyLoader ending a lazy load.

    PyPy 3.11 and CPython 3.12.3-3.12.x end it with a plain
    ``self.__class__ = types.ModuleType`` in ``_LazyModule.__getattribute__``
    (CPython 3.13+ uses ``object.__setattr__``, gh-117182): import-system
    bookkeeping that no hook should see.
    """
    store = sys._getframe(2)  # 0: here, 1: HookAwareModule.__setattr__
    return (
        store.f_code.co_name == "__getattribute__"
        and store.f_globals.get("__name__") == "importlib.util"
    )


# CPython's error messages name the object's type: ``del mod.missing`` says
# "'module' object has no attribute 'missing'" (3.12+).  Stand in for
# ModuleType under its name; composed classes already carry their base's.
HookAwareModule.__name__ = HookAwareModule.__qualname__ = ModuleType.__name__
# ... and findable under that name, so pickle can refer to the class of an
# upgraded module (pickle.dumps(type(mod)); issue 13, finding 16).
module = HookAwareModule

# Composed classes, found by (id(base), id(mixin)) -> (weak reference to the
# base, weak reference to the composed class), for HookAwareModule here and
# _enable's OptedInModule alike. Nothing here keeps a class alive: a composed
# class holds its base through __bases__, so a strong table would keep every
# class ever given to a module, and its twin, for ever (issue 13, finding 12).
# A composed class lives while a module has it; composing again after that
# costs what the first time did.
_composed_by_base: "dict[tuple[int, int], tuple[Any, Any]]" = {}
# id(composed class) -> (weak reference to it, its mixin): how
# original_class_of() knows ours.
_composed_ids: "dict[int, tuple[Any, type]]" = {}
# Makes "is a class stored for this pair?" and storing one a single step, so
# that of two threads composing for one pair only the first to store has its
# class seen (pickle checks that the name resolves to that very class); also
# taken by the weak references' callbacks, which run whenever a class dies,
# in any thread.  Held for a few dictionary operations and never while a class
# is composed: that runs its metaclass and __init_subclass__, user code that
# may import (the install lock's comment in _install).  Reentrant, as a
# callback can run in the thread that holds it.
_tables_lock = _thread.RLock()
# The tag of each mixin in the names compositions are pickled under.
_mixin_tags: "dict[type, str]" = {}
_mixins_by_tag: "dict[str, type]" = {}
# The module that registers each mixin of another module.
_MIXIN_HOMES = {"opted_in": __name__.rpartition(".")[0] + "._enable"}


def register_mixin(mixin: type, tag: str) -> None:
    """Let :func:`composed_class` build classes from *mixin*, pickled under *tag*."""
    _mixin_tags[mixin] = tag
    _mixins_by_tag[tag] = mixin


def _acquire_tables_lock_before_fork() -> None:
    _tables_lock.acquire()


def _release_tables_lock_after_fork() -> None:
    _tables_lock.release()


def _reinit_tables_lock_in_child() -> None:
    # A child forked while another thread held it would hang composing; held
    # by the forking thread, the child also gets the tables in one piece.
    global _tables_lock
    _tables_lock = _thread.RLock()


# After the install lock (rank 0): uninstall() may free a composed class, whose
# callback takes this lock, while it holds the install lock.
_register_at_fork(
    1,
    _acquire_tables_lock_before_fork,
    _release_tables_lock_after_fork,
    _reinit_tables_lock_in_child,
)

register_mixin(HookAwareModule, "hook_aware")


def hook_aware_class_for(base: type) -> type:
    """Return the hook-aware class to use for a module whose class is *base*.

    For a ``ModuleType`` subclass ``X`` this is ``class X(X, HookAwareModule)``
    (made once per base while in use): ``X.__setattr__`` runs first and reaches
    the module hook when it calls ``super().__setattr__``, the order the
    reference implementation gives by putting the hook inside ``ModuleType``.
    """
    found = composed_hook_aware_class_for(base)
    return composed_class(base, HookAwareModule) if found is None else found


def composed_hook_aware_class_for(base: type) -> "type | None":
    """Return :func:`hook_aware_class_for` *base* if it needs no composing now, else None.

    Runs no user code, so it may be called under the install lock.
    """
    if issubclass(base, HookAwareModule):
        return base
    if base is ModuleType:
        return HookAwareModule
    return stored_composition(base, HookAwareModule)


def stored_composition(base: type, mixin: type) -> "type | None":
    """Return the class composed from *base* and *mixin* if one is alive, else None."""
    entry = _composed_by_base.get((id(base), id(mixin)))
    if entry is None or entry[0]() is not base:
        return None  # never composed, or for a dead class whose id *base* reuses
    found: type | None = entry[1]()
    return found


def composed_class(base: type, mixin: type) -> type:
    """Return ``class base(base, mixin)``, made once per pair while in use.

    It passes for *base* by ``__name__`` (error messages) and docstring, and
    pickles by reference under a name of this module that :func:`__getattr__`
    resolves to the same class (issue 13, finding 16).  Composing runs the
    metaclass of *base* and its ``__init_subclass__``: never call this under
    the install lock (see there).
    """
    found = stored_composition(base, mixin)
    if found is not None:
        return found
    key = (id(base), id(mixin))
    namespace = {
        "__slots__": (),
        "__module__": __name__,
        "__qualname__": _pickled_name(_mixin_tags[mixin], base),
        "__doc__": base.__doc__,
    }
    metaclass: Any = type(base)
    composed: type = metaclass(base.__name__, (base, mixin), namespace)

    def forget(ref: "Any") -> None:
        # Only this class's own entries: ids are reused once it is gone.
        with _tables_lock:
            if _composed_ids.get(composed_key, (None,))[0] is ref:
                del _composed_ids[composed_key]
            current = _composed_by_base.get(key)
            if current is not None and current[1] is ref:
                del _composed_by_base[key]

    composed_key = id(composed)
    with _tables_lock:
        # Two threads composing at once: the first one stored wins and every
        # caller gets its class; the other one is never seen.
        winner = stored_composition(base, mixin)
        if winner is not None:
            return winner
        composed_ref = _weakref.ref(composed, forget)
        _composed_ids[composed_key] = (composed_ref, mixin)
        _composed_by_base[key] = (_weakref.ref(base), composed_ref)
    return composed


# Pickle looks a class up by __module__ and __qualname__, splitting the latter
# at dots; no dot, newline or non-ASCII character (pickle protocols 0-2) can be
# in this name.  "/" is in no module name or qualname.
def _pickled_name(tag: str, base: type) -> str:
    return f"{tag}:{base.__module__}:{base.__qualname__}".replace(".", "/")


def _class_for_pickled_name(name: str) -> type:
    """Resolve the pickled name of a composed class to that class.

    In another process the class is composed again from its base, imported as
    pickle imports a class's module; a base that cannot be found there is an
    error, never another class.
    """
    tag, _, rest = name.partition(":")
    module_name, _, qualname = rest.partition(":")
    if tag not in _mixins_by_tag and tag in _MIXIN_HOMES:
        # pep726hook's package __init__ imports nothing: a process that
        # unpickles an opted-in class may not have loaded that mixin yet.
        __import__(_MIXIN_HOMES[tag])
    mixin = _mixins_by_tag.get(tag)
    if mixin is None or not qualname:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module_name, qualname = module_name.replace("/", "."), qualname.replace("/", ".")
    __import__(module_name)
    found: Any = sys.modules[module_name]
    for part in qualname.split("."):
        found = getattr(found, part, None)
    if not (isinstance(found, type) and issubclass(found, ModuleType)):
        raise AttributeError(
            f"cannot recreate the PEP 726 module class {name!r}: {module_name!r} has "
            f"no ModuleType subclass {qualname!r}"
        )
    return composed_class(found, mixin)


if not TYPE_CHECKING:
    # Module __getattr__ (PEP 562), hidden from mypy, which would otherwise
    # accept any name imported from this module.
    __getattr__ = _class_for_pickled_name


def original_class_of(cls: type, mixin: type = HookAwareModule) -> type:
    """Return the class *cls* was composed from with *mixin*, or *cls* if it is not ours."""
    if cls is mixin:
        return ModuleType
    entry = _composed_ids.get(id(cls))
    if entry is not None and entry[0]() is cls and entry[1] is mixin:
        original: type = cls.__bases__[0]
        return original
    return cls


def is_module(candidate: object) -> "TypeGuard[ModuleType]":
    """Tell whether *candidate* is a module object, by its real type.

    ``isinstance`` would ask for ``candidate.__class__``, running the
    ``__getattribute__`` of whatever sits in ``sys.modules``: a lazy-import
    placeholder that raises there must neither fail install() nor pass for a
    module (issue 13, finding 10).
    """
    return issubclass(type(candidate), ModuleType)


def defines_hooks(module: object) -> "TypeGuard[ModuleType]":
    """Tell whether *module*'s namespace defines ``__setattr__`` or ``__delattr__``."""
    namespace = _namespace_or_none(module)
    return namespace is not None and any(name in namespace for name in _HOOK_NAMES)


def _namespace_or_none(module: object) -> "dict[str, Any] | None":
    if not is_module(module):
        return None
    try:
        return _namespace_of(module)
    except TypeError:
        # PyPy's _cffi_backend.Lib claims to be a module but has no module namespace.
        return None


def _is_lazy_module_class(cls: type) -> bool:
    # Matched by name, not identity: importlib.util can exist in several copies
    # (CPython's test_importlib imports fresh ones), each with its own
    # _LazyModule, and sys.modules may hold another copy than the one that made
    # the module (test_importlib test_lazy test_lazy_self_referential_modules).
    # Nothing is imported here: nothing may be imported during an import.
    return cls.__name__ == "_LazyModule" and cls.__module__ == "importlib.util"


class ClassEngine:
    """Give modules PEP 726 behaviour by assigning them a hook-aware class."""

    name = "class"
    uses_finder = True

    def __init__(self) -> None:
        # id(module) -> weak reference, so uninstall() can put every module we
        # upgraded back on its own class without keeping any of them alive.
        self._upgraded: dict[int, Any] = {}
        # False once uninstalled.  An import that was under way then still
        # reaches begin()/settle() through its loader wrapper; it must not
        # leave a module upgraded by an engine nobody can uninstall any more.
        self._active = True

    def activate(self) -> None:
        """Nothing to do process-wide: modules are upgraded one by one."""
        self._active = True

    def deactivate(self) -> None:
        """Put every module this engine upgraded back on its original class."""
        # Cleared before the snapshot below: an upgrade registered after the
        # snapshot sees the flag in _set_class and undoes itself.
        self._active = False
        for ref in list(self._upgraded.values()):
            module = ref()
            if module is not None:
                self.downgrade(module)
        self._upgraded.clear()

    def upgrade(self, module: ModuleType) -> None:
        """Make *module* call its hooks from now on, whatever it defines now.

        May compose a class (user code): not under the install lock.
        """
        self._set_class(module, hook_aware_class_for(type(module)))

    def upgrade_if_composed(self, module: ModuleType) -> bool:
        """Upgrade *module* if its hook-aware class needs no composing; tell whether it did."""
        cls = composed_hook_aware_class_for(type(module))
        if cls is None:
            return False
        self._set_class(module, cls)
        return True

    def needing_composition(self, modules: "Iterable[object]") -> "list[ModuleType]":
        """Return the modules :meth:`upgrade_existing` would leave: their class needs composing."""
        return [
            module
            for module in modules
            if defines_hooks(module) and composed_hook_aware_class_for(type(module)) is None
        ]

    def compose_for(self, modules: "Iterable[ModuleType]") -> "list[type]":
        """Compose the classes upgrading *modules* needs; the caller keeps them alive till then.

        Runs their metaclasses and ``__init_subclass__`` (user code, which may
        import): call it without the install lock.  Their errors propagate.
        """
        return [hook_aware_class_for(type(module)) for module in modules]

    def downgrade(self, module: ModuleType) -> None:
        """Put *module* back on the class it had before we upgraded it."""
        original = original_class_of(type(module))
        if original is not type(module):
            _set_class_bypassing_hooks(module, "__class__", original)
        self._upgraded.pop(id(module), None)

    def is_upgraded(self, module: ModuleType) -> bool:
        """Tell whether *module* currently calls its hooks."""
        return issubclass(type(module), HookAwareModule)

    def begin(self, module: object) -> "type | None":
        """Make *module* hook-aware before its body runs.

        Returns the class to restore if the body fails, or None when *module*
        is not a module object and was left alone.
        """
        if not is_module(module) or not self._active:
            return None
        current = type(module)
        base = current
        if _is_lazy_module_class(current):
            # Under LazyLoader (3.12.3+) the module is still a _LazyModule while
            # it runs.  LazyLoader restores loader_state["__class__"] afterwards
            # unless the module is no longer a _LazyModule, so build on that
            # class: the upgrade then survives the end of the lazy load.
            spec: Any = module.__spec__
            base = spec.loader_state["__class__"]
        self._set_class(module, hook_aware_class_for(base))
        return current

    def abort(self, module: ModuleType, class_before: type) -> None:
        """Undo :meth:`begin` after the module body failed (cpython#114763)."""
        if issubclass(type(module), HookAwareModule):
            _set_class_bypassing_hooks(module, "__class__", class_before)
        self._upgraded.pop(id(module), None)

    def settle(self, module: object) -> None:
        """Keep *module* hook-aware only if its namespace defines a hook."""
        if not is_module(module) or not self._active:
            # Uninstalled meanwhile: deactivate() (or _set_class) already put
            # back what we upgraded, and another engine may own the module now.
            return
        if defines_hooks(module):
            self.upgrade(module)
        elif issubclass(type(module), HookAwareModule):
            # By type: isinstance() would read __class__, which loads a
            # _LazyModule whose LazyLoader we wrapped, defeating the laziness.
            self.downgrade(module)

    def upgrade_existing(self, modules: "Iterable[object]") -> "list[ModuleType]":
        """Upgrade those of *modules* whose namespace defines a hook.

        Composes nothing and runs no user code, so that the install lock can
        be held: returns, untouched, the modules whose class needs composing.
        """
        left = []
        for module in modules:
            if defines_hooks(module) and not self.upgrade_if_composed(module):
                left.append(module)
        return left

    def _set_class(self, module: ModuleType, cls: type) -> None:
        if type(module) is not cls:
            _set_class_bypassing_hooks(module, "__class__", cls)
        key = id(module)
        if key not in self._upgraded:
            self._upgraded[key] = _weakref.ref(module, lambda _ref: self._upgraded.pop(key, None))
        if not self._active:
            # deactivate() ran meanwhile, maybe after taking its snapshot.
            self.downgrade(module)

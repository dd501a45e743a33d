"""The class engine: PEP 726 hooks through a ``ModuleType`` subclass.

A module honours its own ``__setattr__``/``__delattr__`` once its ``__class__``
is :data:`HookAwareModule` (the process-wide hook) or :data:`OptedInModule`
(``enable()``), or a class composed from the module's own class and one of
them (:mod:`._composition`).  Pure Python, so it works on every interpreter
that allows assigning ``__class__`` on modules (CPython 3.5+, PyPy).  The price
is that CPython 3.11+ only specialises attribute reads on modules whose type is
exactly ``ModuleType``, so the finder keeps the new class only on modules whose
namespace defines a hook.

Pickle finds these classes here: ``HookAwareModule`` as ``module``, the
opted-in one as ``pep726hook._enable.module``, and a composed class under a
name that this module's ``__getattr__`` resolves.

For the deprecations package (:mod:`._deprecations`) it offers opted-in
classes made with further mixins of its own, subclasses of
``OptedInModule`` (:func:`add_opted_in_mixin`, :func:`give_opted_in_class_with`),
and calls back only what that package registers.
"""

import _thread
import _weakref
import sys

from . import _composition
from ._composition import (
    base_of_composition,
    class_for_pickled_name,
    composed_class,
    hook_aware_mixin,
    lasting_class,
    register_mixin,
    set_class_bypassing_hooks,
    stored_composition,
)
from ._state import is_module, renew_in_child

# typing is not imported at run time: this module loads during start-up.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType
    from typing import Any, Callable, Iterable

    # Made on first use (opted_in_mixin), found by pickle through __getattr__.
    OptedInModule: type
else:
    ModuleType = type(sys)

# Named here too: the runner asks whether __main__ defines a hook.
defines_hooks = _composition.defines_hooks
_ENABLE_MODULE = __name__.rpartition(".")[0] + "._enable"

# The functions first: the classes' __setattr__ calls them for a __class__ store.


def is_hook_aware(cls: type) -> bool:
    """Tell whether modules of class *cls* call their hooks (either mixin, or composed)."""
    return issubclass(cls, _hook_aware)


def hook_aware_class_for(base: type) -> type:
    """Return the hook-aware class to use for a module whose class is *base*.

    For a ``ModuleType`` subclass ``X`` this is ``class X(X, HookAwareModule)``
    (made once per base while in use), see :mod:`._composition`.  A class that
    already calls the hooks (an opted-in module's) is kept.
    """
    found = composed_hook_aware_class_for(base)
    return composed_class(base, HookAwareModule) if found is None else found


def composed_hook_aware_class_for(base: type) -> "type | None":
    """Return :func:`hook_aware_class_for` *base* if it needs no composing now, else None.

    Runs no user code, so it may be called under the install lock.
    """
    if is_hook_aware(base):
        return base
    if base is ModuleType:
        return HookAwareModule
    return stored_composition(base, HookAwareModule)


def original_class_of(cls: type) -> type:
    """Return the class the process-wide hook composed *cls* from, or *cls* if it did not."""
    return base_of_composition(cls, HookAwareModule)


def opted_in_class_for(base: type) -> type:
    """Return the opted-in class for a module whose class is *base*.

    ``class X(X, OptedInModule)`` for a ``ModuleType`` subclass ``X``, made once
    per base while in use; a class the process-wide hook composed is replaced
    by one composed from its original class.
    """
    return _class_for(base, opted_in_mixin(), original_class_of)


def composed_opted_in_class_for(base: type) -> "type | None":
    """Return :func:`opted_in_class_for` *base* if it needs no composing now, else None.

    Runs no user code, so it may be called under the install lock.
    """
    return _class_composed_now(base, opted_in_mixin(), original_class_of)


def opted_in_class_with(base: type, mixin: type) -> type:
    """Return the class for an opted-in module whose class is *base*, made with *mixin*.

    *mixin* is one of :func:`add_opted_in_mixin`'s.  ``class X(X, mixin)``
    for a ``ModuleType`` subclass ``X``, made once per base while in use; a
    class composed with any other opted-in mixin is replaced by one composed
    from its original class.
    """
    return _class_for(base, mixin, original_of_opted_in)


def composed_opted_in_class_with(base: type, mixin: type) -> "type | None":
    """Return :func:`opted_in_class_with` *base* if it needs no composing now, else None.

    Runs no user code, so it may be called under the install lock.
    """
    return _class_composed_now(base, mixin, original_of_opted_in)


def original_of_opted_in(cls: type) -> type:
    """Return the class *cls* was composed from with any of pep726hook's mixins, else *cls*."""
    # Each class is composed from the module's own class with one mixin.
    for mixin in (opted_in_mixin(), *_added_mixins):
        cls = base_of_composition(cls, mixin)
    return original_class_of(cls)


def _class_for(base: type, mixin: type, original_of: "Callable[[type], type]") -> type:
    # *mixin* composed with the class *base* was composed from (itself if none).
    found = _class_composed_now(base, mixin, original_of)
    return composed_class(original_of(base), mixin) if found is None else found


def _class_composed_now(
    base: type, mixin: type, original_of: "Callable[[type], type]"
) -> "type | None":
    # What _class_for() returns when it needs no composing (no user code runs).
    # A passing mixin's class is a subclass of another mixin's, but not the
    # one to keep.
    if issubclass(base, mixin) and (
        mixin in _passing_mixins
        or not any(issubclass(base, passing) for passing in _passing_mixins)
    ):
        return base
    original = original_of(base)
    return mixin if original is ModuleType else stored_composition(original, mixin)


def _opted_in_class_for_module(base: type, module: ModuleType) -> type:
    # A module that a kept mixin's test picks keeps that mixin's class.
    for mixin, keeps in _kept_mixins:
        if keeps(module):
            return opted_in_class_with(base, mixin)
    return opted_in_class_for(base)


def give_opted_in_class_with(module: ModuleType, mixin: type) -> "Callable[[], object] | None":
    """Give *module* :func:`opted_in_class_with` its class and *mixin*, under either engine.

    ``class X(X, mixin)`` for a module of class ``X``.  Returns None once the
    module has it, or the composing to do without the install lock (lock
    rule 1) before calling again, whose result the caller keeps alive until
    then (the cache is weak).  Runs no user code itself.
    """
    return _give_class(
        module,
        lambda base: composed_opted_in_class_with(base, mixin),
        lambda base: opted_in_class_with(base, mixin),
    )


def _give_class(
    module: ModuleType,
    composed_for: "Callable[[type], type | None]",
    class_for: "Callable[[type], type]",
) -> "Callable[[], object] | None":
    # The class composed_for() finds for the module's lasting class, or the
    # composing (class_for) for the caller to do without the install lock.
    base = lasting_class(module)
    cls = composed_for(base)
    if cls is None:
        return lambda: class_for(base)
    if type(module) is not cls:
        set_class_bypassing_hooks(module, "__class__", cls)
    return None


HookAwareModule = hook_aware_mixin(
    __name__,
    "A module type whose stores and deletions call the module's own hooks (PEP 726).",
    lambda base, _module: hook_aware_class_for(base),
)
# Findable under its name, so pickle can refer to the class of an upgraded
# module (pickle.dumps(type(mod))).
module = HookAwareModule
register_mixin(HookAwareModule, "hook_aware", __name__)
# The class of modules opted in with enable(), made on first use: the
# process-wide hook (PEP726HOOK=1 start-up) does not need it, and it costs
# `python -c pass` about 0.25 % to make.  None until then.
_opted_in: "type | None" = None
# The further opted-in mixins (add_opted_in_mixin): every one, those whose
# class a module passes through, and those a module keeps across a
# __class__ store, with the test that says which modules keep it.
_added_mixins: "list[type]" = []
_passing_mixins: "list[type]" = []
_kept_mixins: "list[tuple[type, Callable[[ModuleType], bool]]]" = []
# Either mixin, or a composition of either: the module calls its hooks.
_hook_aware: "tuple[type, ...]" = (HookAwareModule,)
# Makes the classes once when threads ask at the same time (the first one
# made is the only one ever seen).  Never held while user code runs.
_opt_ins_lock = _thread.RLock()


def _renew_opt_ins_lock() -> None:
    # Lock rule 4 (_state): a child forked while another thread held it would hang.
    global _opt_ins_lock
    _opt_ins_lock = _thread.RLock()


renew_in_child(_renew_opt_ins_lock)


def opted_in_mixin() -> type:
    """Return ``OptedInModule``, made at the first call.

    The class engine's class for a module that opted in with ``enable()``.
    It behaves as ``HookAwareModule``, but is no composition of the
    process-wide hook's own, so neither its settle() (a module with no hook
    yet) nor uninstall() ever puts such a module back on its original class.
    Making it runs no user code (its base is ours), so the install lock may
    be held.
    """
    global _opted_in, _hook_aware
    made = _opted_in
    if made is not None:
        return made
    with _opt_ins_lock:
        if _opted_in is not None:
            return _opted_in
        opted_in = hook_aware_mixin(
            _ENABLE_MODULE,
            "A module type for a module that opted in to PEP 726 with pep726hook.enable().",
            _opted_in_class_for_module,
        )
        register_mixin(opted_in, "opted_in", __name__)
        _hook_aware = (HookAwareModule, opted_in)
        # Last: whoever finds it finds it registered.
        _opted_in = opted_in
        return opted_in


def add_opted_in_mixin(
    mixin: type, *, kept_by: "Callable[[ModuleType], bool] | None" = None, passing: bool = False
) -> None:
    """Let :func:`opted_in_class_with` compose classes with *mixin*, a subclass of ``OptedInModule``.

    A module of such a class stays opted in, and :func:`original_of_opted_in`
    takes the mixin off.  With *kept_by*, a module for which ``kept_by(module)``
    is true keeps *mixin* when a class is stored to its ``__class__``.  A
    *passing* mixin subclasses another added mixin, and a module is only to
    pass through its class: asked for the other mixin, a class with it is
    not kept.  Composed classes are pickled as *mixin*'s own module says
    (:func:`._composition.register_mixin`, called by the caller).
    """
    with _opt_ins_lock:
        if mixin in _added_mixins:
            return
        _added_mixins.append(mixin)
        if passing:
            _passing_mixins.append(mixin)
        if kept_by is not None:
            _kept_mixins.append((mixin, kept_by))


# The name under which the opted-in class is found (pickle finds it as
# pep726hook._enable.module).
_OPT_IN_NAME = "OptedInModule"


def _resolve_pickled_name(name: str) -> type:
    if name == _OPT_IN_NAME:
        return opted_in_mixin()
    if name.startswith("__"):
        # What the import system asks of every module (__path__ for
        # `from ._class_engine import X`): never a pickled name.
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    # A class composed with the opted-in mixin needs that mixin registered.
    opted_in_mixin()
    return class_for_pickled_name(__name__, name)


if not TYPE_CHECKING:
    # Module __getattr__ (PEP 562), hidden from mypy, which would otherwise
    # accept any name imported from this module.
    __getattr__ = _resolve_pickled_name


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

    # -- the process-wide hook ---------------------------------------------------------

    def activate(self) -> None:
        """Start upgrading modules (the installer puts the finder in front)."""
        self._active = True

    def deactivate(self) -> None:
        """Put every module this engine upgraded back on its original class.

        Opted-in modules keep their class: it is not one this engine composed.
        """
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

    def downgrade(self, module: ModuleType) -> None:
        """Put *module* back on the class it had before we upgraded it."""
        original = original_class_of(type(module))
        if original is not type(module):
            set_class_bypassing_hooks(module, "__class__", original)
        self._upgraded.pop(id(module), None)

    def is_upgraded(self, module: ModuleType) -> bool:
        """Tell whether *module* currently calls its hooks."""
        return is_hook_aware(type(module))

    # -- the finder's loading protocol (_finder.LoadingEngine) -----------------------

    def begin(self, module: object) -> "type | None":
        """Make *module* hook-aware before its body runs.

        Returns the class to restore if the body fails, or None when *module*
        is not a module object and was left alone.
        """
        if not is_module(module) or not self._active:
            return None
        current = type(module)
        self._set_class(module, hook_aware_class_for(lasting_class(module)))
        return current

    def abort(self, module: ModuleType, class_before: type) -> None:
        """Undo :meth:`begin` after the module body failed (cpython#114763)."""
        if is_hook_aware(type(module)):
            set_class_bypassing_hooks(module, "__class__", class_before)
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

    # -- opt-in (enable()) ---------------------------------------------------------------

    def opt_in(
        self, module: ModuleType, fast_getattr: "bool | None" = None
    ) -> "Callable[[], object] | None":
        """Give *module* the opted-in class if that needs no composing; else say how.

        *fast_getattr* is ignored: a module with a class of its own is never
        specialised, so there is nothing to gain by moving its ``__getattr__``.

        Returns None once *module* calls its hooks; otherwise the composing to
        do without the install lock (lock rule 1) before calling again, whose
        result the caller keeps alive until then (the cache is weak).
        """
        return _give_class(module, composed_opted_in_class_for, opted_in_class_for)

    def is_opted_in(self, module: ModuleType) -> bool:
        """Tell whether *module* has the opted-in class (or one composed with it)."""
        opted_in = _opted_in
        return opted_in is not None and issubclass(type(module), opted_in)

    def release_opt_ins(self) -> None:
        """Nothing to undo once no opted-in module is alive: each class went with its module."""

    def release_held_getattr(self, module: ModuleType) -> None:
        """Nothing to do: this engine never holds a ``__getattr__`` outside the namespace."""

    def _set_class(self, module: ModuleType, cls: type) -> None:
        if type(module) is not cls:
            set_class_bypassing_hooks(module, "__class__", cls)
        key = id(module)
        if key not in self._upgraded:
            # Bound as defaults, and only its own entry: see _state.register_opt_in.
            def forget(
                ref: "Any", key: int = key, table: "dict[int, Any]" = self._upgraded
            ) -> None:
                if table.get(key) is ref:
                    table.pop(key, None)

            self._upgraded[key] = _weakref.ref(module, forget)
        if not self._active:
            # deactivate() ran meanwhile, maybe after taking its snapshot.
            self.downgrade(module)

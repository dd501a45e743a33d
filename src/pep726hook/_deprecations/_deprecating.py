"""Deprecating a module's names: the one step every route ends in, and the engines' calls.

:func:`deprecate` is where ``deprecate_attribute()`` and each conversion of
``deprecated()`` markers end: the module gets the deprecating class
(:mod:`._classes`), or, under the native engine once its import has ended,
its names move into its private builtins (:mod:`._moved`).  The markers are
converted by ``enable()``, at the end of the module's import, at the first
read through a module of the pending-markers class, and after a store of a
marker through an opted-in module.

The engines, the hook-aware classes and ``enable()`` never import this
package: as it loads, this module registers with each what it calls back
(at its end).  Besides those, only the C extension's store callback
(:func:`._moved._store_moved`) and pickle (the deprecating classes'
names, resolved by :mod:`._classes`) reach into the package from outside.
"""

import sys

from .. import _state
from .._composition import namespace_of, register_deprecations
from .._enable import (
    is_opted_in,
    needs_opt_in,
    opt_in,
    register_markers,
    report_refused_variable,
)
from ._classes import (
    DeprecatingModule,
    add_deprecated_name,
    give_deprecating_class,
    give_pending_markers_class,
    serve_pending_reads,
)
from ._entries import (
    DeprecatedValue,
    Deprecation,
    check_name,
    converted,
    deprecations_of,
    end_deprecation,
    ids_with_tables,
    is_dunder,
    markers_in,
    may_hold_markers,
    table_for,
)
from ._entries import namespace as namespace_of_module
from ._moved import (
    body_runs_again,
    can_move,
    give_private_builtins,
    move_again,
    move_if_ended,
    move_now,
    move_ready,
    read_moved,
    run_again,
    sync_served,
    take_declared_alone,
)
from ._warning import warn_deprecated

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType
    from typing import Any

    from ._entries import Table
else:
    ModuleType = type(sys)

_NATIVE_MODULE = __name__.split(".")[0] + "._native"


def convert_markers(module: ModuleType) -> None:
    """Turn the markers in the opted-in *module*'s namespace into deprecations.

    Raises ValueError, before anything changes, for a marker under a dunder name.
    """
    markers = markers_in(module)
    if markers:
        deprecate(
            module,
            {
                name: Deprecation(marker.message, marker.category, marker.warn)
                for name, marker in markers
            },
        )


def deprecate_opting_in(module: ModuleType, entries: "Table") -> None:
    """Opt *module* in as ``enable()`` does, then deprecate *entries* (``deprecate_attribute()``).

    A marker under a dunder name in its namespace is refused before
    anything changes, as ``enable()`` refuses it; its markers become
    deprecations.
    """
    markers = markers_in(module)
    if needs_opt_in(module, None, bool(markers)):
        refused_variable = opt_in(module)
        convert_markers(module)
        if refused_variable is not None:
            report_refused_variable(refused_variable)
    deprecate(module, entries)


def replace_deprecation(module: ModuleType, name: str, entry: Deprecation) -> None:
    """Replace the entry of *module*'s deprecated *name* with *entry*, whole.

    Under the install lock; the extension's entries follow, and names the
    module's code bound again (``importlib.reload()``) move again.
    """
    table = deprecations_of(module)
    with _state.lock:
        if table is not None:
            table[name] = entry
            sync_served(module)
        move_again(module)


def deprecate(module: ModuleType, entries: "Table") -> None:
    """Deprecate *entries* of the opted-in *module*; markers become values.

    Under the native engine, once the module's import has ended, the names
    move out of the namespace into the module's private builtins
    (:func:`._moved._move`) and the module stays an exact ``ModuleType``.  Before
    that (the body still running), and under the class engine, the module
    gets the deprecating class: the class comes first (on its own it changes
    nothing a reader sees), then the entries, then each marker in the
    namespace is replaced by its value: a reader in another thread sees the
    name deprecated or not yet, never missing.  Composing the class runs user
    code (the metaclass of the module's own class), so it is done without
    the install lock; an error there leaves the deprecations as they were.
    """
    mixin = DeprecatingModule
    pending: object = None  # alive until the module has it (the class cache is weak)
    while True:
        with _state.lock:  # lock rule 1: no user code below
            engine = _state.opt_in_engine
            assert engine is not None, "enable() chose the engine"
            movable = can_move(module, engine)
            if movable:
                give_private_builtins(module)
            # Not ready while a body of the module runs, in any thread, or
            # while frames the move cannot reach may wait (after gc.freeze()).
            # Asked once: nothing below lets the import end (a walk of the frames).
            ready = movable and move_ready(module)
            if ready:
                work = None
            elif movable:
                # The window: the body still runs with the builtins it
                # started with, so the names stay in the namespace; the
                # first read through the module once the import has ended
                # moves them (the pending-markers class's reads).
                work = give_pending_markers_class(module)
            else:
                work = give_deprecating_class(module)
            if work is None:
                if not ready:
                    engine.release_held_getattr(module)
                for name in entries:
                    add_deprecated_name(mixin, name)
                table = table_for(module)
                table.update(entries)
                namespace = namespace_of_module(module)
                for name in entries:
                    current = namespace.get(name)
                    if type(current) is DeprecatedValue:
                        # Only the marker itself: a store may replace it meanwhile.
                        namespace[name] = converted(current)
                del namespace  # the move counts the references to it
                if ready:
                    move_now(module, entries)
                break
        pending = work()
    del pending


def convert_at_first_read(caller_globals: "dict[str, Any]") -> None:
    """Have the first read through the module whose body called ``deprecated()`` convert it.

    Only for a module already opted in (otherwise ``enable()`` converts the
    markers when it runs): it gets the pending-markers class, whose reads
    turn markers into deprecations.  The marker is assigned after
    ``deprecated()`` returns, so nothing can be converted here.
    """
    module = sys.modules.get(str(caller_globals.get("__name__")))
    if (
        module is None
        or not is_opted_in(module)
        or namespace_of_module(module) is not caller_globals
    ):
        return
    pending: object = None  # alive until the module has it (the class cache is weak)
    while True:
        with _state.lock:  # lock rule 1: no user code below
            work = give_pending_markers_class(module)
            if work is None:
                engine = _state.opt_in_engine
                if engine is not None:
                    engine.release_held_getattr(module)
                break
        pending = work()
    del pending


def convert_pending_markers(module: ModuleType) -> None:
    """Turn the markers in the opted-in *module*'s namespace into deprecations, if any.

    Called by a read through a module with the pending-markers class and by a
    store of a marker through an enabled module.  Markers under dunder names
    stay (``enable()`` refuses them).
    """
    if not is_opted_in(module):
        return
    markers = (
        []
        if not may_hold_markers()
        else [
            (name, value)
            for name, value in list(namespace_of_module(module).items())
            if type(value) is DeprecatedValue and not is_dunder(name)
        ]
    )
    if markers:
        deprecate(
            module,
            {
                name: Deprecation(marker.message, marker.category, marker.warn)
                for name, marker in markers
            },
        )
    move_if_ended(module)


def marker_stored(module: ModuleType, name: str, stored: bool) -> None:
    """The native engine's store slot, around a store of a marker through *module*.

    Before the store (*stored* False) a dunder *name* is refused on an
    enabled module, as ``enable()`` refuses it; after it, the marker becomes
    a deprecation.  The class engine's classes do the same in their
    ``__setattr__``.
    """
    if not stored:
        if is_opted_in(module):
            check_name(name, "a deprecated() value stored through a module")
        return
    convert_pending_markers(module)


def _register_with_native_engine() -> None:
    # Have the native engine's store slot call marker_stored(): now if the
    # extension is loaded, and otherwise at the native engine's first
    # opt-in, which finds the call in the shared state.
    _state.marker_store_hook = (DeprecatedValue, marker_stored)
    native = sys.modules.get(_NATIVE_MODULE)
    if native is not None:
        native.set_marker_hook(DeprecatedValue, marker_stored)


class _ForHookAwareClasses:
    """What the hook-aware ``__setattr__``/``__delattr__`` call for deprecated names.

    See :func:`._composition.register_deprecations`.  Static methods: each
    warns from the depth it did before it was registered.
    """

    check_name = staticmethod(check_name)
    warn_deprecated = staticmethod(warn_deprecated)
    end_deprecation = staticmethod(end_deprecation)
    convert_pending_markers = staticmethod(convert_pending_markers)

    @staticmethod
    def has_no_value(module: ModuleType, deprecation: "Any", name: str) -> bool:
        """Tell whether a deleted deprecated or lazy *name* is a lazy value never loaded."""
        return deprecation[1].load is not None and name not in namespace_of(module)


def adopt_declared_alone() -> None:
    """Adopt what the extension declared alone (:func:`._moved.take_declared_alone`).

    A deprecated name whose module's body still runs keeps its value in the
    namespace: it is deprecated again here, with this package's own window.
    A module that ``importlib.reload()`` runs again gets the window of a
    reload, as when its ``__spec__`` is stored under this package: the names
    its body binds again move again.
    """
    for module, entries in take_declared_alone():
        if entries:
            deprecate(module, entries)
        if body_runs_again(module):
            with _state.lock:  # lock rule 1: no user code below
                run_again(module)


# What the engines, the hook-aware classes and enable() call back, registered
# once: no marker and no deprecation exists before this module is loaded.
register_deprecations(ids_with_tables(), DeprecatedValue, _ForHookAwareClasses)
register_markers(markers_in, convert_markers)
serve_pending_reads(convert_pending_markers, read_moved)
_register_with_native_engine()
adopt_declared_alone()

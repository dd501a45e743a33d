"""The native engine: PEP 726 through a patched ``ModuleType`` store slot.

The C extension :mod:`pep726hook._native` gives the module type itself the
reference implementation's behaviour (CPython PR #108261): a store or deletion
on a module looks ``__setattr__``/``__delattr__`` up in the module's own
namespace and calls it, on every module while process-wide dispatch is on (the
process-wide hook), and otherwise only on the modules opted in with
``enable()``.  No finder and no class swap are needed, and reads keep CPython's
specialised fast path because module classes stay unchanged.
Design and limits: https://github.com/pep726hook/pep726hook/blob/main/docs/native-engine.md
"""

import sys

from ._compat import IMPLEMENTATION, NATIVE_ENGINE_IS_BUILT, VERSION

_STATE_MODULE = __name__.rpartition(".")[0] + "._state"

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType
    from typing import Callable

_native_error: "ImportError | None"
if not NATIVE_ENGINE_IS_BUILT:
    # Never built there (setup.py): skip a search of the package directory
    # that costs a library calling enable() ~0.3 ms of its import on PyPy.
    _native_error = ImportError("pep726hook._native is not built for this interpreter")
else:
    try:
        from . import _native
    except ImportError as _error:
        _native_error = _error
    else:
        _native_error = None


def unavailable_reason() -> "str | None":
    """Return why the native engine cannot run in this interpreter, or None if it can."""
    if IMPLEMENTATION != "cpython":
        return f"the native engine needs CPython; this is {IMPLEMENTATION}"
    if not NATIVE_ENGINE_IS_BUILT:
        # See docs/native-engine.md, "Free-threaded builds".
        return (
            "the native engine is not built for free-threaded CPython: it rewrites "
            "ModuleType's tp_setattro slot and type dict in place, which running threads "
            "read without a lock, and CPython has no public way to stop them meanwhile; "
            "the class engine ('class', or 'auto') works there"
        )
    if _native_error is not None:
        # Also what an isolated sub-interpreter (3.12+, own GIL) gets: the
        # extension declares it does not support a per-interpreter GIL.
        return (
            f"the native engine's C extension pep726hook._native cannot be loaded: {_native_error}"
        )
    state = _native.state()
    if not state["main"] and not state["patched"]:
        # The slot is process-wide and owned by the main interpreter; a
        # sub-interpreter may only attach to an existing patch.
        return (
            "the native engine patches the module type for the whole process and only "
            "the main interpreter can install it; it is not installed there, so this "
            "sub-interpreter cannot use it"
        )
    return None


def relocates_getattr_by_default() -> bool:
    """Tell whether ``enable()`` without *fast_getattr* relocates a module's ``__getattr__``.

    Yes where it taxes nobody: on CPython 3.11, whose misses on every module
    raise and clear an AttributeError anyway.  On 3.12-3.14 the wrapped read
    slot makes every module's suppressed misses (``hasattr()``, ``getattr()``
    with a default) several times dearer for the whole process (measured in
    docs/native-engine-getattr.md, "What a relocated __getattr__ costs"), so only the
    application's fast-getattr switch, which decides for the whole process,
    relocates by default there.  Other versions never relocate.
    """
    # Looked up, not imported: the shared state imports this module (an
    # import circle otherwise), and enable(), the only caller, loaded it.
    state = sys.modules.get(_STATE_MODULE)
    return VERSION == (3, 11) or bool(getattr(state, "fast_getattr", False))


def slot_is_patched() -> bool:
    """Tell whether any interpreter of this process has patched the module type's slot."""
    return _native_error is None and bool(_native.state()["patched"])


class NativeEngine:
    """Give modules PEP 726 behaviour by patching ``ModuleType``'s store slot.

    The patched slot calls a module's hooks while process-wide dispatch is on
    (:meth:`activate`) and, whatever that is, for modules opted in with
    :meth:`opt_in`; every other store takes CPython's generic path.  Modules
    stay exact ``types.ModuleType`` objects, so reads keep their fast path.
    """

    name = "native"
    uses_finder = False

    # -- the process-wide hook ---------------------------------------------------------

    def activate(self) -> None:
        """Patch the module type if needed and call every module's hooks.

        In a sub-interpreter this attaches to the main interpreter's patch.
        """
        _native.install()

    def deactivate(self) -> None:
        """Stop calling the hooks of modules that did not opt in.

        The patch stays while an opted-in module is alive (they keep their
        hooks); otherwise it is undone.
        """
        state = _native.state()
        if state["opted_in"]:
            _native.set_process_wide(False)
        else:
            _native.uninstall()

    def upgrade(self, module: "ModuleType") -> None:
        """Make sure *module*'s class reaches the patched slot.

        Only a ``ModuleType`` subclass that somehow kept the original slot (a
        static subclass from a C extension readied after the patch could) needs
        anything; every other class already gets there.
        """
        _native.upgrade_type(type(module))

    def is_upgraded(self, module: "ModuleType") -> bool:
        """Tell whether stores on *module* would call its hooks now."""
        state = _native.state()
        if not (state["entries"] or state["direct"]):
            return False
        if not _native.type_reaches_hook(type(module)):
            return False
        return bool(state["process_wide"]) or _native.is_opted_in(module)

    # -- opt-in (enable()) ---------------------------------------------------------------

    def opt_in(
        self, module: "ModuleType", fast_getattr: "bool | None" = None
    ) -> "Callable[[], object] | None":
        """Have the patched slot call *module*'s hooks, process-wide dispatch on or off.

        Patches the module type first if needed, without turning process-wide
        dispatch on.  *fast_getattr* places a PEP 562 ``__getattr__`` on
        CPython 3.11-3.14 (see :func:`pep726hook.enable`); None takes the
        default, which never overrides an earlier True or False for the
        module.  Runs no user code: always returns None (nothing left to do
        outside the install lock).
        """
        _native.install(process_wide=False)
        _native.upgrade_type(type(module))
        if fast_getattr is None:
            _native.opt_in(module, relocates_getattr_by_default(), False)
        else:
            _native.opt_in(module, fast_getattr, True)
        # deprecated() markers stored through the module become deprecations:
        # the call the deprecations package left in the shared state, if it
        # is loaded (enable(), the only caller, loaded that state).
        hook = getattr(sys.modules.get(_STATE_MODULE), "marker_store_hook", None)
        if hook is not None:
            _native.set_marker_hook(*hook)
        return None

    def is_opted_in(self, module: "ModuleType") -> bool:
        """Tell whether *module* opted in (its hooks are called whatever the process does)."""
        return _native.is_opted_in(module)

    def release_opt_ins(self) -> None:
        """Undo the patch once neither the process-wide hook nor an opted-in module needs it."""
        state = _native.state()
        if state["patched"] and not state["process_wide"] and not state["opted_in"]:
            _native.uninstall()

    # -- deprecated attributes -----------------------------------------------------------

    def release_held_getattr(self, module: "ModuleType") -> None:
        """Put *module*'s PEP 562 ``__getattr__`` back into its namespace if it is held outside.

        Called before the module gets the deprecating class (3.11-3.14 hold
        the function outside the namespace of an opted-in module), whose
        reads look for it there.
        """
        _native.return_getattr(module)

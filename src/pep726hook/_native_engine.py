"""The native engine: PEP 726 through a patched ``ModuleType`` store slot.

The C extension :mod:`pep726hook._native` gives the module type itself the
reference implementation's behaviour (CPython PR #108261): every store or
deletion on any module looks ``__setattr__``/``__delattr__`` up in the module's
own namespace and calls it.  No finder and no class swap are needed, and reads
keep CPython's specialised fast path because module classes stay unchanged.
Design and limits: https://github.com/pep726hook/pep726hook/blob/main/docs/native-engine.md
"""

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType
    from typing import Iterable

_native_error: "ImportError | None"
if sys.implementation.name != "cpython" or "t" in getattr(sys, "abiflags", ""):
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
    if sys.implementation.name != "cpython":
        return f"the native engine needs CPython; this is {sys.implementation.name}"
    if "t" in getattr(sys, "abiflags", ""):
        # setup.py does not build the extension there (issue 3, 2d; issue 10):
        # see docs/native-engine.md, "Free-threaded builds".
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
        # sub-interpreter may only attach to an existing patch (issue 3, 2c).
        return (
            "the native engine patches the module type for the whole process and only "
            "the main interpreter can install it; it is not installed there, so this "
            "sub-interpreter cannot use it"
        )
    return None


def slot_is_patched() -> bool:
    """Tell whether any interpreter of this process has patched the module type's slot."""
    return _native_error is None and _native.state()["patched"]


class NativeEngine:
    """Give every module PEP 726 behaviour by patching ``ModuleType``'s store slot."""

    name = "native"
    uses_finder = False

    def activate(self) -> None:
        """Patch the module type (main interpreter) or attach to the patch (sub-interpreter)."""
        _native.install()

    def deactivate(self) -> None:
        """Undo :meth:`activate` for this interpreter."""
        _native.uninstall()

    def upgrade(self, module: "ModuleType") -> None:
        """Make sure *module*'s class reaches the patched slot.

        Only a ``ModuleType`` subclass that somehow kept the original slot (a
        static subclass from a C extension readied after the patch could) needs
        anything; every other class already gets there.
        """
        _native.upgrade_type(type(module))

    def downgrade(self, module: "ModuleType") -> None:
        """Nothing to undo per module: the patch is on the type."""

    def is_upgraded(self, module: "ModuleType") -> bool:
        """Tell whether stores on *module* would call its hooks now."""
        state = _native.state()
        if not (state["entries"] or state["direct"]):
            return False
        return _native.type_reaches_hook(type(module))

    def upgrade_if_composed(self, module: "ModuleType") -> bool:
        """Upgrade *module*: no class is ever composed here; returns True."""
        self.upgrade(module)
        return True

    def upgrade_existing(self, modules: "Iterable[object]") -> "list[ModuleType]":
        """Nothing to do: modules imported before :meth:`activate` are covered too."""
        return []

    def needing_composition(self, modules: "Iterable[object]") -> "list[ModuleType]":
        """Return no module: this engine composes no class."""
        return []

    def compose_for(self, modules: "Iterable[ModuleType]") -> "list[type]":
        """Compose nothing (see :meth:`needing_composition`)."""
        return []

    def begin(self, module: object) -> "type | None":
        """Never called (no finder); returns None."""
        return None

    def abort(self, module: "ModuleType", class_before: type) -> None:
        """Never called (no finder)."""

    def settle(self, module: object) -> None:
        """Never called (no finder)."""

"""``lazy_attribute()`` and ``removed_attribute()``: the common case through the C extension alone.

A PEP 562 library declares its lazy and removed names in its package body,
in a process that has run nothing else of pep726hook.  Then, under the
native engine, each declaration is one call of the extension
(``_native.declare_alone``), which leaves the module as the deprecations
package leaves one whose names have moved, and loads none of that package
(about 10M instructions of a start-up on CPython 3.12).  Everything else —
the class engine, a module that is no exact ``types.ModuleType``, a name the
namespace holds, a name the deprecations package already keeps, the
installation state loaded, and every error — goes to
:mod:`pep726hook._deprecations._declarations`, the full path, which adopts
what the extension declared when it loads.

Also the search for a package's submodule that every declaration of one
shares (:func:`unrun_submodule`).
"""

import sys

from . import _STATE_MODULE, _adopt_late, _load, _native_alone

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType
    from typing import Any, Callable
else:
    ModuleType = type(sys)

__all__ = ["lazy_attribute", "removed_attribute", "unrun_submodule"]

_PACKAGE = __name__.rpartition(".")[0]
# The entries' kinds, as pep726hook._deprecations._entries numbers them.
_LAZY = 1
_REMOVED = 2


def lazy_attribute(
    module: "str | ModuleType",
    name: str,
    *,
    factory: "Callable[[], object] | None" = None,
) -> None:
    """Declare *name* of *module* lazy: its first read through the module loads it.

    Without *factory*, ``f"{module.__name__}.{name}"`` must be an importable
    submodule (found as ``importlib.util.find_spec`` finds it, not run): the first
    read through the module (``mod.name``, ``getattr``, ``hasattr``, ``from
    mod import name``, a star-import whose ``__all__`` names it) imports it;
    with *factory*, it calls ``factory()``.  The value is stored in the
    namespace and returned, with no warning; from then on the name is a
    plain entry of the namespace.  ``import pkg.name`` binds the submodule
    as usual, which ends the declaration, as any store of the name does.
    An exception from the import or from *factory* (an ``AttributeError``
    or ``ImportError`` too) propagates unchanged, nothing is stored, and the
    next read tries again.  ``dir(module)`` lists the name.

    *module* is a module object or a name in ``sys.modules``; it is opted in
    as ``enable()`` does.  A name carries one declaration: declaring a name
    that has one (lazy, removed, or deprecated without a value yet) replaces
    it.  Under ``importlib.reload()``, a name whose value the first run
    loaded keeps it.

    Raises TypeError for a *name* that is not a str or a *factory* that is
    not callable, ValueError for a name not in ``sys.modules``, a dunder
    *name*, a name the module already holds, and, without *factory*, a name
    that is not an importable submodule.  On any error nothing has changed.
    """
    declare = _declarer()
    target: Any = sys.modules.get(module) if type(module) is str else module
    if declare is not None and _takes(target, name) and (factory is None or callable(factory)):
        # Searched only where the extension may take it: the full path searches too.
        submodule = None if factory is not None else unrun_submodule(vars(target), name)
        if (factory is not None or submodule is not None) and _declared(
            declare,
            target,
            name,
            ("", DeprecationWarning, None, None, submodule, _LAZY, None),
            factory,
        ):
            return
    _load("_deprecations._declarations", "lazy_attribute")(module, name, factory=factory)


def removed_attribute(
    module: "str | ModuleType",
    name: str,
    message: "str | None",
    *,
    warning: "str | None" = None,
    category: "type[Warning]" = DeprecationWarning,
) -> None:
    """Declare *name* of *module* removed: a read through the module raises ``AttributeError(message)``.

    Every read through the module (``mod.name``, ``getattr``, ``from mod
    import name``) raises ``AttributeError(message)``, with *message* as
    given; ``hasattr()`` is False and ``getattr(mod, name, default)``
    returns *default*.  With *warning*, each read first warns
    ``warnings.warn(warning, category)`` at the reader's line (so
    ``-W error`` raises the warning instead).  With *message* None (only
    with a *warning*), a read misses after the warning as on a plain module:
    the module's own ``__getattr__``, if it has one, then CPython's own
    error, name and guess included (numpy's ``np.bytes``).  A store of the name through
    the module binds it as on a plain module and ends the removal.
    ``dir(module)`` does not list it.

    *module* is a module object or a name in ``sys.modules``; it is opted in
    as ``enable()`` does.  A name carries one declaration: declaring a name
    that has one (lazy, removed, or deprecated without a value yet) replaces
    it.  Under ``importlib.reload()``, a name bound since (a store) keeps
    its value.

    Raises TypeError for a *name*, *message* or *warning* that is not a str
    (or None), a *message* None without a *warning*, or a *category* that is
    not a ``Warning`` subclass, ValueError for a name not in
    ``sys.modules``, a dunder *name*, a name the module already holds, or an
    empty *message* or *warning*.  On any error nothing has changed.
    """
    declare = _declarer()
    target: Any = sys.modules.get(module) if type(module) is str else module
    if (
        declare is not None
        and _takes(target, name)
        and (message is None or (type(message) is str and message != ""))
        and (warning is None or (type(warning) is str and warning != ""))
        and (message is not None or warning is not None)
        and isinstance(category, type)
        and issubclass(category, Warning)
        and _declared(
            declare, target, name, (message, category, None, None, None, _REMOVED, warning), None
        )
    ):
        return
    _load("_deprecations._declarations", "removed_attribute")(
        module, name, message, warning=warning, category=category
    )


# The extension's declare_alone, once a declaration found the native engine
# chosen, as enable() chooses an engine for opted-in modules once.
_declare: "Any" = None


def _declarer() -> "Any":
    # The extension's declare_alone where it may declare alone: the native
    # engine chosen and the installation state not loaded (the extension
    # tests that again, in the same call as the declaration); else None.
    global _declare
    if _STATE_MODULE in sys.modules:
        return None
    if _declare is None:
        native = _native_alone()
        _declare = None if native is None else native.declare_alone
    return _declare


def _takes(target: object, name: object) -> bool:
    # A module (the extension takes only an exact types.ModuleType, or one in
    # the window of its declarations, whose class is its own) and a name the
    # full path accepts: an exact str, no dunder.
    return (
        issubclass(type(target), ModuleType)
        and type(name) is str
        and not (name[:2] == "__" and name[-2:] == "__" and len(name) > 4)
    )


def _declared(
    declare: "Any", target: "ModuleType", name: str, entry: "tuple[Any, ...]", factory: "Any"
) -> bool:
    # One call of the extension; whether it declared the name.
    if not declare(target, name, entry, factory, _STATE_MODULE):
        return False
    if _STATE_MODULE in sys.modules:  # adopted by nothing, nearly always
        _adopt_late(_STATE_MODULE, "adopt_opt_ins_made_alone")
        _adopt_late(_PACKAGE + "._deprecations._deprecating", "adopt_declared_alone")
    return True


def unrun_submodule(namespace: "dict[str, Any]", name: str) -> "str | None":
    """The full name of the submodule *name* of the package whose namespace is *namespace*.

    None unless the import system finds it (without running it): the module
    is no package, or has no such submodule.  What ``importlib.util.find_spec()``
    answers, without importing ``importlib.util`` (4.4M instructions, a tenth
    of a start-up on CPython 3.12, for a library's first ``lazy_attribute()``).
    """
    package = namespace.get("__name__")
    path = namespace.get("__path__")
    if not isinstance(package, str) or path is None:
        return None
    full_name = f"{package}.{name}"
    if full_name in sys.modules:
        # Imported already: found, as find_spec() finds it, if it has a spec.
        module = sys.modules[full_name]
        return None if module is None or getattr(module, "__spec__", None) is None else full_name
    try:
        spec = _find_spec(full_name, path)
    except (ImportError, ValueError):
        return None
    return None if spec is None else full_name


def _find_spec(full_name: str, path: "Any") -> object:
    # The import system's own search, which importlib.util.find_spec() calls
    # for a submodule once it has the parent's __path__; imported only where
    # the interpreter has none of its own.
    bootstrap = sys.modules.get("_frozen_importlib")
    search = getattr(bootstrap, "_find_spec", None)
    if search is None:
        import importlib.util

        return importlib.util.find_spec(full_name)
    return search(full_name, path)

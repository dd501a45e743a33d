"""``pep726hook.declared_getattr()``: a module ``__getattr__`` that leaves the namespace when the import ends.

For an idiom that binds ``__getattr__`` in a package's body, as lazy_loader's
``__getattr__, __dir__, __all__ = lazy.attach(__name__, ...)`` does.  Its
names can be declared (:func:`pep726hook.lazy_attribute`), which serves them
with no ``__getattr__`` in the namespace, yet the body still binds one, and
CPython 3.11-3.14 never specialise reads of a module whose namespace holds
``__getattr__`` (https://github.com/python/cpython/issues/143469).  The
function handed out here serves the module's declared names (for code that
calls it), and is taken out of the namespace when the module's import ends,
after the body has bound it.

When the import ends: importlib's ``_load_unlocked()`` stores False in the
module spec's ``_initializing`` once the body has run or failed (the flag by
which the import system tells a module still being imported, in every
CPython since 3.4 and PyPy).  For the length of the import the spec's class
is a subclass of ``ModuleSpec`` of the same name and layout whose
``_initializing`` property notices that store; the spec is a plain
``ModuleSpec`` again from then on.  A body run otherwise (``reload()``,
``runpy``, ``exec``) is not watched: the function stays in the namespace,
where it serves what it served, and the module's reads are not specialised.
"""

import _thread
import _weakref

from .. import _state
from .._enable import module_named
from ._entries import LAZY, REMOVED, deprecations_of
from ._entries import namespace as _namespace
from ._warning import removed_error

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType
    from typing import Any, Callable

__all__ = ["declared_getattr"]

# The modules where importlib defines ModuleSpec (frozen in CPython).
_IMPORT_SYSTEM = ("_frozen_importlib", "importlib._bootstrap")

# id(spec) of a module being imported -> (weak reference to the module, the
# functions handed out for it, weak reference to the spec).
_watched: "dict[int, tuple[Any, list[Any], Any]]" = {}
# ModuleSpec -> its subclass that watches the end of an import, and back.
_watching_classes: "dict[type, type]" = {}
_bases: "dict[type, type]" = {}
# (id(module), name, thread) while a function handed out here reads a
# deprecated name through the module: a read that reaches the function
# again is a miss.
_reading: "set[tuple[int, str, int]]" = set()


def declared_getattr(module: "str | ModuleType") -> "Callable[[str], object]":
    """Return a PEP 562 ``__getattr__`` for *module* that serves its declared names.

    For a library whose idiom binds ``__getattr__`` in a package's body::

        pep726hook.lazy_attribute(__name__, "sub")
        __getattr__ = pep726hook.declared_getattr(__name__)

    The function serves the names declared on *module*, at the time of each
    call or when it was handed out (then from the namespace, once loaded
    or bound there): a lazy name (:func:`pep726hook.lazy_attribute`) loads as its first
    read through the module would, a removed one
    (:func:`pep726hook.removed_attribute`) raises its ``AttributeError``
    (without its warning: the read through the module that reached the
    function has given it), a deprecated one reads through the module;
    any other name raises ``AttributeError`` with CPython's message for a
    missing module attribute.  Reads through the module never need it:
    the declarations serve them.

    Called while importlib imports *module* (from its body), the function
    leaves the module's namespace when that import ends, if the namespace
    then holds it under ``__getattr__``: the module's reads are then
    specialised again on CPython 3.11-3.14.  A ``__getattr__`` the body
    binds after it, its own, stays.  Called otherwise (after the import,
    under ``importlib.reload()``, ``runpy`` or ``exec``), the function stays
    wherever the caller binds it.

    *module* is a module object or a name in ``sys.modules``; it is not
    opted in (its declarations do that).  Raises TypeError for anything
    else and ValueError for a name not in ``sys.modules``.
    """
    target = module_named(module, "declared_getattr()")
    reference = _weakref.ref(target)
    module_name = _namespace(target).get("__name__")
    table = deprecations_of(target)
    # The names declared now: once one is loaded (or bound), the namespace serves it.
    served = frozenset(() if table is None else table)

    def __getattr__(name: str) -> object:
        found = reference()
        if found is not None and isinstance(name, str):
            table = deprecations_of(found)
            entry = None if table is None else table.get(name)
            if entry is not None:
                return _serve(found, name, entry)
            namespace = _namespace(found)
            if name in served and name in namespace:
                return namespace[name]
        raise _miss(module_name, name)

    __getattr__.__qualname__ = "declared_getattr.<locals>.__getattr__"
    _watch_import(target, __getattr__)
    return __getattr__


def _serve(module: "ModuleType", name: str, entry: "Any") -> object:
    if entry.kind == LAZY and entry.load is not None:
        # What the first read through the module calls: loads, stores, ends the declaration.
        return entry.load()
    if entry.kind == REMOVED:
        if entry.message is None:
            raise _miss(_namespace(module).get("__name__"), name)
        raise removed_error(entry, module)
    key = (id(module), name, _thread.get_ident())
    if key in _reading:
        # The read below reached the module's __getattr__, this function.
        raise _miss(_namespace(module).get("__name__"), name)
    _reading.add(key)
    try:
        return getattr(module, name)
    finally:
        _reading.discard(key)


def _miss(module_name: object, name: str) -> AttributeError:
    """CPython's error for a missing attribute *name* of the module *module_name*."""
    return AttributeError(f"module {module_name!r} has no attribute {name!r}")


def _watch_import(module: "ModuleType", function: "Any") -> None:
    """Have *function* leave *module*'s namespace when importlib's import of it ends.

    Nothing when no import by importlib is running *module*'s body.
    """
    spec = _namespace(module).get("__spec__")
    spec_class = type(spec)
    base = _bases.get(spec_class)
    if (
        base is None
        and spec_class.__name__ == "ModuleSpec"
        and spec_class.__module__ in _IMPORT_SYSTEM
    ):
        base = spec_class
    if base is None or getattr(spec, "_initializing", False) is not True:
        return
    with _state.lock:  # lock rule 1: dict operations only
        key = id(spec)
        found = _watched.get(key)
        if found is None or found[2]() is not spec:
            found = _watched[key] = (
                _weakref.ref(module),
                [],
                _weakref.ref(spec, _forgetting(key)),
            )
        found[1].append(function)
    if spec_class is base:
        spec.__class__ = _watching_class(base)


def _forgetting(key: int) -> "Callable[[object], None]":
    """The callback that forgets a spec's entry when the spec dies (its import never ended)."""

    def forget(_: object) -> None:
        _watched.pop(key, None)

    return forget


def _watching_class(base: type) -> type:
    """The subclass of *base* (importlib's ``ModuleSpec``) that notices the end of an import.

    Of the same name and layout (``__slots__`` empty), so that a spec's
    class can become it and become *base* again.
    """
    watching = _watching_classes.get(base)
    if watching is None:
        namespace = {
            "__slots__": (),
            "__module__": base.__module__,
            "__qualname__": base.__qualname__,
            "_initializing": property(_initializing, _set_initializing, _delete_initializing),
        }
        watching = _watching_classes.setdefault(base, type(base.__name__, (base,), namespace))
        _bases[watching] = base
    return watching


def _initializing(spec: "Any") -> object:
    try:
        return vars(spec)["_initializing"]
    except KeyError:
        raise AttributeError("_initializing") from None


def _set_initializing(spec: "Any", value: object) -> None:
    vars(spec)["_initializing"] = value
    if value is not True:
        _import_ended(spec)


def _delete_initializing(spec: "Any") -> None:
    try:
        del vars(spec)["_initializing"]
    except KeyError:
        raise AttributeError("_initializing") from None
    _import_ended(spec)


def _import_ended(spec: "Any") -> None:
    """The import of the module of *spec* has ended: the spec is plain, the function leaves."""
    base = _bases.get(type(spec))
    if base is not None:
        spec.__class__ = base
    with _state.lock:
        found = _watched.pop(id(spec), None)
    if found is None or found[2]() is not spec:
        return
    module = found[0]()
    if module is None:
        return
    namespace = _namespace(module)
    current = namespace.get("__getattr__")
    if any(current is function for function in found[1]):
        # The library's binding, not the body's: a __getattr__ the body
        # bound after it would be another object, and stays.
        del namespace["__getattr__"]

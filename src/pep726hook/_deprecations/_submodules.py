"""A package's submodule, found as the import system finds it and not run.

What a lazy name without a factory needs at its declaration
(``lazy_attribute()``, ``deprecate_attribute(..., factory=None)`` of a
submodule): ``importlib.util.find_spec()``'s answer, without importing
``importlib.util`` (4.4M instructions, a tenth of a start-up on CPython
3.12, for a library's first declaration), and first from the listing of the
package's directories that the import system keeps.  The extension answers
the same for its own declarations (``declared_front_door.c``).
"""

import os
import stat
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["unrun_submodule"]


def unrun_submodule(namespace: "dict[str, Any]", name: str) -> "str | None":
    """The full name of the submodule *name* of the package whose namespace is *namespace*.

    None unless the import system finds it (without running it): the module
    is no package, or has no such submodule.
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
    if _listed(path, name):
        return full_name
    try:
        spec = _find_spec(full_name, path)
    except (ImportError, ValueError):
        return None
    return None if spec is None else full_name


def _listed(path: "Any", name: str) -> bool:
    # Whether the import system's own listing of one of the package's
    # directories shows *name* as a module file or a directory, which the
    # path finder then finds: a file with one of the finder's suffixes, or a
    # directory (a package or a namespace package's portion).  The search
    # itself costs about 110,000 instructions on CPython 3.12 (five stat()
    # calls, three of them failing, and a spec), and a package declares its
    # submodules after importing some of its own, which filled the listing.
    # Only the standard FileFinder's listing is read, and a name it does not
    # show leaves the answer to the search (a listing older than a new file).
    external = sys.modules.get("_frozen_importlib_external")
    file_finder = getattr(external, "FileFinder", None)
    finders = sys.path_importer_cache
    if file_finder is None or type(path) is not list:
        return False
    for entry in path:
        finder: Any = finders.get(entry) if type(entry) is str else None
        if type(finder) is not file_finder:
            continue
        listing = finder._path_cache
        if name in listing and _is_directory(os.path.join(finder.path, name)):
            return True
        if any(name + suffix in listing for suffix, _ in finder._loaders):
            return True
    return False


def _is_directory(path: str) -> bool:
    try:
        return stat.S_ISDIR(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


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

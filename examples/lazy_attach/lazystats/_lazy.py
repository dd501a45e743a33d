"""Lazy attributes for a package, in the style of lazy_loader's ``attach``, plus a store guard.

``attach(__name__, {"mean": ["mean"]})`` makes ``package.mean`` import the
submodule ``package.mean`` on first use and return its function ``mean``.
When a lazily attached name is also the name of the submodule that defines it,
the import system binds ``package.mean = <module package.mean>`` once that
submodule is imported, and the function is shadowed by its own module for
the rest of the program.  A PEP 726 ``__setattr__`` hook drops that one
binding, and nothing else; reads are never intercepted.

With pep726hook installed the package opts in with ``pep726hook.enable()``
(the package stays a plain module object under the native engine); without it,
the package gets a ``ModuleType`` subclass that calls the same hook.
"""

import importlib
import sys
import types


def attach(package_name, submod_attrs):
    """Return ``__getattr__, __dir__, __all__, __setattr__`` for *package_name*."""
    package = sys.modules[package_name]
    namespace = vars(package)
    attribute_home = {attr: mod for mod, attrs in submod_attrs.items() for attr in attrs}
    names = sorted(attribute_home)

    def __getattr__(name):
        if name not in attribute_home:
            raise AttributeError(f"module {package_name!r} has no attribute {name!r}")
        submodule = importlib.import_module(f"{package_name}.{attribute_home[name]}")
        return getattr(submodule, name)

    def __dir__():
        return sorted(set(namespace) | set(names))

    def __setattr__(name, value):
        # The import system's binding of a submodule whose name is a lazily
        # attached attribute of the same name: keep serving the attribute.
        if (
            attribute_home.get(name) == name
            and isinstance(value, types.ModuleType)
            and value.__name__ == f"{package_name}.{name}"
        ):
            return
        namespace[name] = value

    _opt_in(package, __setattr__)
    return __getattr__, __dir__, names, __setattr__


def _opt_in(package, hook):
    try:
        import pep726hook
    except ImportError:  # without pep726hook: the classic class swap, same hook

        class _GuardedPackage(types.ModuleType):
            def __setattr__(self, name, value):
                hook(name, value)

        package.__class__ = _GuardedPackage
    else:
        pep726hook.enable(package)

"""Deprecating a module attribute by name, in the style of Twisted's ``deprecatedModuleAttribute``.

One call per attribute, made after the attribute exists, from the module
itself or from anywhere else (a package deprecating a name of one of its
modules).  With pep726hook installed, reading, setting or deleting the
attribute then warns at the user's line; without it, nothing changes.
"""

try:
    import pep726hook
except ImportError:  # pep726hook is an optional dependency
    pep726hook = None


class Version:
    def __init__(self, package, major, minor):
        self.package, self.major, self.minor = package, major, minor

    def __str__(self):
        return f"{self.package} {self.major}.{self.minor}"


def deprecated_module_attribute(version, message, module_name, name):
    """Deprecate *module_name*.*name* as of *version*, saying *message*."""
    text = f"{module_name}.{name} was deprecated in {version}: {message}"
    if pep726hook is not None:
        pep726hook.deprecate_attribute(module_name, name, text)

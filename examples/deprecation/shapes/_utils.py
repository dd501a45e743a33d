"""The library's own deprecation helper, in the style of cryptography's ``utils.deprecated``.

Every module of the library deprecates a name with one line::

    OldName = _utils.deprecated(NewName, __name__, "OldName is deprecated; use NewName")

and calls ``_utils.finish_deprecations(__name__)`` after those lines.  With
pep726hook installed, reading, setting or deleting the old name warns at the
user's line, and every other name of the module reads at plain-module speed;
without it, the old name is a plain alias that works silently.
"""

try:
    import pep726hook
except ImportError:  # pep726hook is an optional dependency
    pep726hook = None


def deprecated(value, module_name, message, warning_class=DeprecationWarning):
    """Return what to assign to a deprecated name of *module_name*."""
    if not (isinstance(warning_class, type) and issubclass(warning_class, Warning)):
        raise TypeError(f"{module_name}: warning_class must be a Warning subclass")
    if pep726hook is None:
        return value
    return pep726hook.deprecated(value, message, category=warning_class)


def finish_deprecations(module_name):
    """Put the deprecations of *module_name* in effect: call it after the deprecated() lines."""
    if pep726hook is not None:
        pep726hook.enable(module_name)

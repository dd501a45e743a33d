"""The cases of bench_deprecation_libraries.py: real libraries' deprecation helpers, their modules.

Twisted's, cryptography's and zope.deprecation's helpers as they ship (each
puts a proxy in ``sys.modules``) and converted to pep726hook, pep726hook's own
forms, the modules each benchmark reads through, and how one process sets a
case up and reads it.  The callgrind workers import this module through the
script, so it imports only what the reads need at load time.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from collections.abc import Callable
from typing import Any

READS_PER_LOOP = 10
LIBRARIES = {
    # library -> the module its helper lives in (what must be importable)
    "twisted": "twisted.python.deprecate",
    "cryptography": "cryptography.utils",
    "zope": "zope.deprecation",
}
# pep726hook's own forms, deprecating from the module's body.
OWN_FORMS = ("attribute", "marker", "thousand")
READS = ("x", "Old", "miss", "other x", "other miss")
# Reads that cost a few hundred instructions get more loops than those that
# cost thousands (a warning, an AttributeError made and cleared).
CHEAP_READS = ("x", "other x")
LOOPS_CHEAP = (5, 205)
LOOPS_DEAR = (5, 105)
MANY = 1000

# The three helpers converted to pep726hook: the pep726hook branch of the
# conversions docs/migrating-deprecations.md shows.  Left out, as they never
# run here: the fallback to the old proxy when pep726hook is not importable
# (that is the "proxy" case), the retry with a factory for a name the module
# binds only after the call, and the check for a module already proxied.
CONVERTED_HELPERS = """
import sys
import warnings

import pep726hook

# -- Twisted: twisted/python/deprecate.py, deprecatedModuleAttribute ---------
from twisted.python.deprecate import (
    DEPRECATION_WARNING_FORMAT,
    _getDeprecationWarningString,
    getWarningMethod,
)


def _warn_through_warning_method(message, category, stacklevel):
    # setWarningMethod() may replace the method at any time: looked up per warning.
    getWarningMethod()(message, category, stacklevel=stacklevel)


def twisted_deprecatedModuleAttribute(version, message, moduleName, name):
    text = _getDeprecationWarningString(
        moduleName + "." + name, version, DEPRECATION_WARNING_FORMAT + ": " + message
    )
    pep726hook.deprecate_attribute(
        sys.modules[moduleName], name, text, warn=_warn_through_warning_method
    )


# -- cryptography: cryptography/utils.py, deprecated ---------------------------
def cryptography_deprecated(value, module_name, message, warning_class, name=None):
    module = sys.modules[module_name]
    pep726hook.enable(module)
    if name is None:
        # pyOpenSSL's form, ``X = deprecated(value, __name__, ...)``: the
        # module body stores the marker, which becomes the deprecation.
        return pep726hook.deprecated(value, message, category=warning_class)
    vars(module)[name] = value
    pep726hook.deprecate_attribute(module, name, message, category=warning_class)
    return value


# -- zope.deprecation: zope/deprecation/deprecation.py, deprecated -------------
from zope.deprecation import __show__


def _warn_unless_suppressed(message, category, stacklevel):
    # zope's Suppressor (and __show__.off()) silence every deprecation.
    if __show__():
        warnings.warn(message, category, stacklevel)


def zope_deprecated(specifier, message, cls=DeprecationWarning):
    module = sys.modules[sys._getframe(1).f_globals["__name__"]]
    names = (specifier,) if isinstance(specifier, str) else specifier
    for name in names:
        pep726hook.deprecate_attribute(
            module, name, name + ": " + message, category=cls, warn=_warn_unless_suppressed
        )
"""


# Each module's body deprecates ``Old`` with the library's helper, as the
# libraries' own modules do.  {helper} is the shipped helper or the converted one.
MODULE_HEAD = "x = 1\n\nclass New:\n    pass\n\nOld = New\n"
MODULE_BODIES = {
    "twisted": (
        "from incremental import Version\n{import_line}\n" + MODULE_HEAD + "\n"
        'deprecatedModuleAttribute(Version("bench", 1, 0, 0), "use New", __name__, "Old")\n'
    ),
    "cryptography": (
        # CryptographyDeprecationWarning: every release has it (DeprecatedInNN
        # names come and go with the releases).
        "from cryptography import utils\n{import_line}\n" + MODULE_HEAD + "\ndeprecated(New, "
        '__name__, "Old is deprecated; use New", utils.CryptographyDeprecationWarning, name="Old")\n'
    ),
    "zope": ("{import_line}\n" + MODULE_HEAD + '\ndeprecated("Old", "use New")\n'),
}
SHIPPED_IMPORTS = {
    "twisted": "from twisted.python.deprecate import deprecatedModuleAttribute",
    "cryptography": "from cryptography.utils import deprecated",
    "zope": "from zope.deprecation import deprecated",
}
CONVERTED_IMPORTS = {
    "twisted": "from bench_converted_helpers import "
    "twisted_deprecatedModuleAttribute as deprecatedModuleAttribute",
    "cryptography": "from bench_converted_helpers import cryptography_deprecated as deprecated",
    "zope": "from bench_converted_helpers import zope_deprecated as deprecated",
}
# A thousand names, ``Old`` and ``Old1`` ... ``Old999``, bound in the body.
MANY_NAMES = f"\nfor _i in range(1, {MANY}):\n    globals()['Old' + str(_i)] = _i\n"
DEPRECATE_MANY = (
    f"for _i in range({MANY}):\n"
    "    _name = 'Old' + (str(_i) if _i else '')\n"
    "    pep726hook.deprecate_attribute(__name__, _name, _name + ' is deprecated')\n"
)
OWN_BODIES = {
    "attribute": "import pep726hook\n\n"
    + MODULE_HEAD
    + '\npep726hook.deprecate_attribute(__name__, "Old", "Old is deprecated; use New")\n',
    "marker": "import pep726hook\n\n"
    + MODULE_HEAD.replace(
        "Old = New", 'Old = pep726hook.deprecated(New, "Old is deprecated; use New")'
    )
    + "\npep726hook.enable(__name__)\n",
    "thousand": "import pep726hook\n\n" + MODULE_HEAD + MANY_NAMES + DEPRECATE_MANY,
}
# What importing a module costs, per import: a module of a thousand functions
# (each of which the move may have to find and give the private builtins) and
# the module of a thousand names, each plain and deprecating.  Every variant
# imports pep726hook (already imported by then: a dict look-up), so that the
# difference is the deprecation's alone.
FUNCTIONS = "".join(f"\ndef f{i}(a):\n    return a + x\n" for i in range(MANY))
IMPORT_BODIES = {
    "functions": {
        "plain": "import pep726hook\n\n" + MODULE_HEAD + FUNCTIONS,
        "deprecating": "import pep726hook\n\n"
        + MODULE_HEAD
        + FUNCTIONS
        + OWN_BODIES["attribute"].split(MODULE_HEAD)[1],
    },
    "names": {
        "plain": "import pep726hook\n\n" + MODULE_HEAD + MANY_NAMES,
        "deprecating": OWN_BODIES["thousand"],
    },
}
IMPORT_COPIES = (1, 4)  # the two loop counts: modules imported per run


def installed_libraries() -> list[str]:
    """The libraries this interpreter has; a message for each one missing."""
    found = []
    for library, module in LIBRARIES.items():
        try:
            found_spec = importlib.util.find_spec(module) is not None
        except ImportError:
            found_spec = False
        if found_spec:
            found.append(library)
        else:
            print(f"skipped {library}: {module} is not installed", file=sys.stderr)
    return found


def engines() -> list[str]:
    import pep726hook

    return list(pep726hook.available_engines())


def _selected(names: list[str], only: str) -> list[str]:
    prefixes = tuple(prefix for prefix in only.split(",") if prefix)
    return [name for name in names if not prefixes or name.startswith(prefixes)]


def groups() -> list[str]:
    """Every subject and setup this interpreter runs, ``plain`` first.

    The converted helpers and the thousand names run under the interpreter's
    first engine (native where it has one) only, pep726hook's two forms under
    each: a run of the whole set stays within a few minutes.
    """
    first, *_ = engines()
    names = ["plain"]
    for library in installed_libraries():
        names += [f"{library}/proxy", f"{library}/{first}"]
    names += [f"{form}/{engine}" for form in ("attribute", "marker") for engine in engines()]
    return [*names, f"thousand/{first}"]


def cases(only: str = "") -> list[str]:
    """Every read this interpreter can run, in the order of the tables: ``group/read``.

    *only*: comma-separated prefixes ("plain,twisted/proxy"); empty for all.  The
    plain module has no ``other`` reads: they are its own reads.
    """
    names = [
        f"{group}/{read}"
        for group in groups()
        for read in READS
        if group != "plain" or not read.startswith("other ")
    ]
    return _selected(names, only)


def base_case(case: str) -> str:
    """The plain module's read that *case* is compared with."""
    return "plain/" + split_case(case)[1].replace("other ", "")


def split_case(case: str) -> tuple[str, str]:
    group, _, read = case.rpartition("/")
    return group, read


def import_cases(only: str = "") -> list[str]:
    names = []
    for kind in IMPORT_BODIES:
        names += [f"import/{kind}/{setup}" for setup in ("plain", *engines())]
    return _selected(names, only)


def module_name(group: str) -> str:
    if group == "plain":
        return "bench_plain"
    subject, setup = group.split("/")
    if subject in OWN_FORMS:
        return f"bench_{subject}"
    return f"bench_{subject}_{'proxy' if setup == 'proxy' else 'pep726hook'}"


def write_modules(directory: str) -> None:
    """The benchmark's modules, one per subject and setup, and the converted helpers."""
    import compileall

    files = {
        "bench_plain": MODULE_HEAD,
        "bench_other": MODULE_HEAD,
        "bench_converted_helpers": CONVERTED_HELPERS,
    }
    for library, body in MODULE_BODIES.items():
        files[f"bench_{library}_proxy"] = body.format(import_line=SHIPPED_IMPORTS[library])
        files[f"bench_{library}_pep726hook"] = body.format(import_line=CONVERTED_IMPORTS[library])
    for form, body in OWN_BODIES.items():
        files[f"bench_{form}"] = body
    for kind, bodies in IMPORT_BODIES.items():
        for variant, body in bodies.items():
            for copy in range(max(IMPORT_COPIES)):
                files[f"bench_import_{kind}_{variant}_{copy}"] = body
    for name, source in files.items():
        with open(os.path.join(directory, f"{name}.py"), "w", encoding="utf-8") as file:
            file.write(source)
    # Bytecode written now, by this interpreter, so that no measured import compiles.
    compileall.compile_dir(directory, quiet=1)


def prepare(group: str, modules: str) -> tuple[Any, Any]:
    """Set *group* up in this process; return the deprecating module and the other one."""
    import warnings

    warnings.simplefilter("ignore")
    sys.path.insert(0, modules)
    if group != "plain":
        setup = group.split("/")[1]
        if setup != "proxy":
            os.environ["PEP726HOOK_ENGINE"] = setup
    # import_module returns what sys.modules holds once the body ran: the proxy.
    module = importlib.import_module(module_name(group))
    # One read through the module first, as its users make: pep726hook may
    # finish what the end of the module's import leaves to do at that read.
    getattr(module, "x")  # noqa: B009
    return module, importlib.import_module("bench_other")


def reader(read: str) -> Callable[[int, Any], float]:
    """A function timing *loops* x 10 of *read* (``x``, ``other miss``, ...) on a module argument."""
    # Imported here: the script's directory is on sys.path when it runs, not
    # when a test loads it from its file.
    from _shared import module_miss_reader, module_reader

    what = read.rsplit(maxsplit=1)[-1]
    if what == "miss":
        return module_miss_reader("missing", READS_PER_LOOP)
    return module_reader(what, READS_PER_LOOP)


def target(read: str, module: Any, other: Any) -> Any:
    """The module *read* reads: the deprecating one, or the other one for ``other ...``."""
    return other if read.startswith("other ") else module

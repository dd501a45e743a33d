"""Start-up activation, called by the ``pep726hook.pth`` line (or ``.start`` entry).

Site runs the ``.pth`` line in every Python process of the environment, so this
module stays tiny: it imports nothing that start-up has not already imported
(no ``threading``, which breaks gevent's monkey-patching, virtualenv#1895; no
``typing``), writes nothing to stdout, and never stops the process from
starting.
"""

import os
import sys

# The environment variables of activation, defined here because start-up
# imports this module and nothing else of ours but the C extension (each
# further module costs `python -c pass` about 0.8 %): the rest of the package
# imports them from here.  The .pth line and _pep726hook_startup, which cannot
# import anything before they know the hook is wanted, spell the first one out.
ACTIVATION_VARIABLE = "PEP726HOOK"
ENGINE_VARIABLE = "PEP726HOOK_ENGINE"

# The spellings of $PEP726HOOK, compared case-insensitively.  Any other value
# leaves the hook off and says so on stderr: a typo must not pass unnoticed.
# The .pth line imports us whenever the variable is set, whatever its value:
# `"PEP726HOOK" in os.environ` is the cheapest test site can compile, and every
# process of the environment compiles it.  An off value costs the processes
# that set it this module and the package's lazy __init__.
START_UP_ROUTE = f"${ACTIVATION_VARIABLE} at start-up"

ON_VALUES = ("1", "true", "yes", "on")
OFF_VALUES = ("", "0", "false", "no", "off")

# Site runs every .pth line of a venv twice on CPython 3.8-3.14 (measured):
# site.venv() adds the venv's site-packages and main() adds it again, and
# addsitedir() reads the .pth files of a directory it already knows
# (cpython#75723 is the lib64 -> lib case of the same; 3.15's rewritten site
# runs them once): the second call must neither install again nor repeat a warning.
_attempted = False

# Whether activate() patched the module type itself, for the installation
# state (_state) to take over when the API is first used: importing _install,
# _engines and _native_engine cost 6 % of `python -c pass`, and the native
# engine needs none of them to start.  Handed over once (claim_start_up_patch).
_started_native = False


def activation_requested(value: "str | None") -> "bool | None":
    """Tell whether a ``$PEP726HOOK`` *value* turns the hook on; None if it means nothing."""
    if value is None:
        return False
    value = value.strip().lower()
    if value in ON_VALUES:
        return True
    if value in OFF_VALUES:
        return False
    return None


def activate() -> None:
    """Install the hook when ``$PEP726HOOK`` is on (``1``, ``true``, ``yes``, ``on``).

    The engine comes from ``$PEP726HOOK_ENGINE``.  Safe to call any number of
    times (site runs a venv's ``.pth`` files twice before 3.15).  An unknown
    ``$PEP726HOOK`` value, a wrong engine name or an engine that cannot run
    here costs one line on stderr (never a warning, which ``-W error`` would
    turn into a failed start-up); the process starts without the hook.
    """
    global _attempted
    if _attempted:
        return
    value = os.environ.get(ACTIVATION_VARIABLE)
    wanted = activation_requested(value)
    if wanted is False:
        return
    _attempted = True
    if wanted is None:
        sys.stderr.write(
            f"pep726hook: hook not activated: ${ACTIVATION_VARIABLE}={value!r} is not "
            f"one of {', '.join(ON_VALUES)} (on) or {', '.join(OFF_VALUES[1:])} (off)\n"
        )
        return
    try:
        if not _start_native_engine_alone():
            from ._install import install, record_route

            install(None)
            record_route(START_UP_ROUTE)
    except Exception as error:  # start-up must go on whatever happened
        sys.stderr.write(f"pep726hook: hook not activated at start-up: {error}\n")


def _start_native_engine_alone() -> bool:
    """Patch the module type the way ``install()`` would, without importing it.

    Only where ``install(None)`` would pick the native engine and do nothing
    more: ``$PEP726HOOK_ENGINE`` unset, ``auto`` or ``native``, the extension
    built, the main interpreter, nothing patched or installed yet.  Anything
    else (and every error message) is left to ``install()``.
    """
    global _started_native
    if __name__.rpartition(".")[0] + "._state" in sys.modules:
        return False  # a sitecustomize or an earlier .pth got there first
    if os.environ.get(ENGINE_VARIABLE, "").strip().lower() not in ("", "auto", "native"):
        return False
    try:
        # Not built for PyPy and free-threaded builds (setup.py): the search
        # then fails in a package directory the import system has listed already.
        from . import _native
    except ImportError:
        return False
    state = _native.state()
    if not state["main"] or state["patched"]:
        return False
    _native.install()
    _started_native = True
    main = sys.modules.get("__main__")
    if issubclass(type(main), type(sys)):
        # What install() does for __main__ (_install._main_to_upgrade, by the
        # real type); a class refusing it keeps its class there too.
        try:  # noqa: SIM105 (contextlib is not imported at start-up)
            _native.upgrade_type(type(main))
        except TypeError:
            pass
    return True


def claim_start_up_patch() -> "str | None":
    """Hand the module-type patch :func:`activate` made over, once; return its route.

    Returns None when activation patched nothing or the patch was claimed
    already: a copy of the installation state imported again after
    ``uninstall()`` must not take over a patch that is gone.
    """
    global _started_native
    if not _started_native:
        return None
    _started_native = False
    return START_UP_ROUTE

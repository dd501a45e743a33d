"""Start-up activation, called by the ``pep726hook.pth`` line (or ``.start`` entry).

Site runs the ``.pth`` line in every Python process of the environment, so this
module stays tiny: it imports nothing that start-up has not already imported
(no ``threading``, which breaks gevent's monkey-patching, virtualenv#1895; no
``typing``), writes nothing to stdout, and never stops the process from
starting.
"""

# One statement, not isort's one per name: each `from . import` of a package
# runs importlib's _handle_fromlist, Python code that every process setting
# $PEP726HOOK would pay again.
import os  # noqa: I001
import sys

from . import (
    _ACTIVATION_VARIABLE as ACTIVATION_VARIABLE,
    _ENGINE_VARIABLE as ENGINE_VARIABLE,
    _FAST_GETATTR_VARIABLE as FAST_GETATTR_VARIABLE,
    _OFF_VALUES as OFF_VALUES,
    _ON_VALUES as ON_VALUES,
    _switch_spelling as switch_spelling,
)

# The spellings of $PEP726HOOK (ON_VALUES, OFF_VALUES).  Any other value
# leaves the hook off and says so on stderr: a typo must not pass unnoticed.
# The .pth line imports us whenever the variable is set, whatever its value:
# `"PEP726HOOK" in os.environ` is the cheapest test site can compile, and every
# process of the environment compiles it.  An off value costs the processes
# that set it this module and the package's lazy __init__.
START_UP_ROUTE = f"${ACTIVATION_VARIABLE} at start-up"

# Site runs every .pth line of a venv twice on CPython 3.8-3.14 (measured):
# site.venv() adds the venv's site-packages and main() adds it again, and
# addsitedir() reads the .pth files of a directory it already knows
# (cpython#75723 is the lib64 -> lib case of the same; 3.15's rewritten site
# runs them once): the second call must neither install again nor repeat a warning.
_attempted = False

# The route by which the module type was patched here without install(), by
# activate() or the runner (start_native_engine), for the installation state
# (_state) to take over when the API is first used: importing _install,
# _engines and _native_engine cost 6 % of `python -c pass`, and the native
# engine needs none of them to start.  Handed over once (claim_start_up_patch).
_patched_by: "str | None" = None


def activate() -> None:
    """Install the hook when ``$PEP726HOOK`` is on (``1``, ``true``, ``yes``, ``on``).

    The engine comes from ``$PEP726HOOK_ENGINE``, and
    ``$PEP726HOOK_FAST_GETATTR`` on turns the fast-getattr switch on too
    (``install()`` then, never the native engine alone: the switch needs the
    finder).  Safe to call any number of
    times (site runs a venv's ``.pth`` files twice before 3.15).  An unknown
    ``$PEP726HOOK`` value, a wrong engine name, an engine that cannot run
    here or a bad ``$PEP726HOOK_FAST_GETATTR`` costs one line on stderr
    (never a warning, which ``-W error`` would turn into a failed start-up);
    the process starts without the hook.
    """
    global _attempted
    if _attempted:
        return
    value = os.environ.get(ACTIVATION_VARIABLE)
    wanted = switch_spelling(value)
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
        if not (
            _names_the_native_engine(os.environ.get(ENGINE_VARIABLE, ""))
            and fast_getattr_is_off(os.environ.get(FAST_GETATTR_VARIABLE))
            and _start_native_engine_alone(START_UP_ROUTE)
        ):
            from ._install import install, record_route

            install(None)
            record_route(START_UP_ROUTE)
    except Exception as error:  # start-up must go on whatever happened
        sys.stderr.write(f"pep726hook: hook not activated at start-up: {error}\n")


# Whether a $PEP726HOOK_FAST_GETATTR value leaves the switch off; any other
# value, a bad one included, is install()'s: the switch needs its finder, and
# it reports a bad value.  (Comments, not a docstring: every byte of this
# module's bytecode costs every process that sets $PEP726HOOK.)
def fast_getattr_is_off(value: "str | None") -> bool:
    return value is None or value.strip().lower() in OFF_VALUES


def _names_the_native_engine(value: str) -> bool:
    """Tell whether an engine *value* (option or variable) lets the native engine start alone."""
    return value.strip().lower() in ("", "auto", "native")


def start_native_engine(route: str, requested: str) -> bool:
    """Have the native engine serve the process, as ``install(requested)`` would; say if it does.

    For the runner, which then starts its program without importing
    ``install()`` and the engines (about 10 % of ``python -c pass``).
    *requested* is a validated engine name; anything but ``auto`` or
    ``native``, and any case :func:`_start_native_engine_alone` leaves to
    ``install()``, returns False.  A patch that start-up made and nothing
    took over yet is kept, under *route* from now on, as ``install()``
    keeps an active engine that ``auto`` or its own name asks for.
    """
    global _patched_by
    if not _names_the_native_engine(requested):
        return False
    if _patched_by is not None:
        _patched_by = route
        return True
    return _start_native_engine_alone(route)


def _start_native_engine_alone(route: str) -> bool:
    """Patch the module type the way ``install()`` would, without importing it.

    Only where ``install()`` would pick the native engine and do nothing
    more: the extension built, the main interpreter, nothing patched or
    installed yet.  Anything else (and every error message) is left to
    ``install()``.  *route* says what turned the hook on.
    """
    global _patched_by
    if __name__.rpartition(".")[0] + "._state" in sys.modules:
        return False  # a sitecustomize or an earlier .pth got there first
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
    _patched_by = route
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
    """Hand the module-type patch made here over, once; return its route.

    Returns None when nothing was patched here or the patch was claimed
    already: a copy of the installation state imported again after
    ``uninstall()`` must not take over a patch that is gone.
    """
    global _patched_by
    route, _patched_by = _patched_by, None
    return route

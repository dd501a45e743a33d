"""The ``pep726hook`` command and ``python -m pep726hook``.

``pep726hook [run] [--engine E] [--] TARGET [args...]`` runs TARGET as
``python TARGET args...`` would, with PEP 726 hooks on; ``pep726hook scan ...``
hands over to the scanner.  Only our own options come before TARGET; whatever
follows it belongs to the target, as with ``python``, ``coverage run`` and
``pdb``.
"""

from __future__ import annotations

import importlib
import os
import sys

from . import __version__
from ._engines import (
    ENGINE_NAMES,
    ENGINE_VARIABLE,
    available_engines,
    native_unavailable_reason,
    normalize_engine_name,
    requested_engine_name,
)
from ._install import engine as active_engine
from ._install import install_replacing, record_route

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Sequence

#: Set by the runner so that child Python processes activate the hook at start-up.
ACTIVATION_VARIABLE = "PEP726HOOK"
USAGE_STATUS = 2

USAGE = """\
usage: {prog} [--engine ENGINE] [--] TARGET [args ...]
       {prog} run [--engine ENGINE] [--] TARGET [args ...]
       {prog} scan [scan arguments ...]
       {prog} info
       {prog} -h | --help | --version
"""

HELP = """\
Run a Python program with PEP 726 module __setattr__/__delattr__ hooks on.

TARGET is what you would give python itself:
  script.py            run a script file
  DIRECTORY | ZIPFILE  run the __main__.py inside it
  -m module            run a module (a package runs its __main__)
  -c code              run a string of code
Everything after TARGET is passed to the program in sys.argv.

options (only before TARGET):
  --engine ENGINE  auto, native or class (default: ${variable}, else auto)
  --               end of our options: the next argument is a script path
  -h, --help       show this help and exit
  --version        show the version and exit

subcommands:
  run              the same as giving TARGET directly (for a script named "scan")
  scan             hand the remaining arguments to the pep726hook scanner
  info             show the engines this interpreter has (and why one is
                   missing) and whether the hook is on in this process

The program runs as __main__ exactly as with `python TARGET`, and
{activation}=1 and {variable}=<engine> are exported so that child
Python processes (subprocess, multiprocessing, concurrent.futures) start with
the hook on as well.  An engine named here replaces one that {activation}
already turned on at start-up.  Exit status: the program's own; 1 after an
uncaught exception; after Ctrl-C the process ends by SIGINT as python's does;
2 for a usage error.
"""


class UsageError(Exception):
    """The command line is wrong; the message says how."""


class Options:
    """What the command line asks for."""

    def __init__(
        self,
        action: str,
        kind: str = "",
        target: str = "",
        args: Sequence[str] = (),
        engine: str | None = None,
    ) -> None:
        self.action = action
        self.kind = kind
        self.target = target
        self.args: list[str] = list(args)
        self.engine: str | None = engine

    def __repr__(self) -> str:
        return (
            f"Options(action={self.action!r}, kind={self.kind!r}, target={self.target!r}, "
            f"args={self.args!r}, engine={self.engine!r})"
        )


def parse_run_arguments(argv: Sequence[str]) -> Options:
    """Parse ``[--engine E] [--] TARGET [args...]``; raise :class:`UsageError` if wrong."""
    engine: str | None = None
    index = 0
    while index < len(argv):
        arg = argv[index]
        if arg == "--":
            if index + 1 >= len(argv):
                raise UsageError("missing TARGET after '--'")
            return Options("run", "script", argv[index + 1], argv[index + 2 :], engine)
        if arg in ("-h", "--help"):
            return Options("help")
        if arg == "--version":
            return Options("version")
        if arg == "--engine" or arg.startswith("--engine="):
            engine, index = _engine_option(argv, index)
            continue
        if arg.startswith(("-m", "-c")):
            return _flagged_target(argv, index, engine)
        if arg == "-":
            raise UsageError("reading the program from standard input is not supported")
        if arg.startswith("-"):
            raise UsageError(
                f"unrecognized option {arg!r} (the program's own options go after TARGET)"
            )
        return Options("run", "script", arg, argv[index + 1 :], engine)
    raise UsageError("missing TARGET (a script, a directory or zip file, -m module or -c code)")


def _engine_option(argv: Sequence[str], index: int) -> tuple[str, int]:
    """Read ``--engine E`` or ``--engine=E`` at *index*; return E and the next index."""
    arg = argv[index]
    if "=" in arg:
        value = arg.partition("=")[2]
    else:
        index += 1
        if index >= len(argv):
            raise UsageError("argument --engine: expected one argument")
        value = argv[index]
    try:
        name = normalize_engine_name(value)
    except ValueError:
        choices = ", ".join(repr(name) for name in ENGINE_NAMES)
        raise UsageError(
            f"argument --engine: invalid choice: {value!r} (choose from {choices})"
        ) from None
    return name, index + 1


def _flagged_target(argv: Sequence[str], index: int, engine: str | None) -> Options:
    """Read ``-m module`` / ``-c code`` (also glued, ``-mmodule``) at *index*."""
    flag, value = argv[index][:2], argv[index][2:]
    kind, what = ("module", "a module name") if flag == "-m" else ("code", "code")
    rest = index + 1
    if not value:
        if rest >= len(argv):
            raise UsageError(f"argument {flag}: expected {what}")
        value = argv[rest]
        rest += 1
    return Options("run", kind, value, argv[rest:], engine)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``pep726hook`` and ``python -m pep726hook``; return the exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    prog = program_name()
    if args and args[0] == "scan":
        return _scan(prog, args[1:])
    if args and args[0] == "info":
        return _info(prog, args[1:])
    if args and args[0] == "run":
        args = args[1:]
    try:
        options = parse_run_arguments(args)
    except UsageError as error:
        return usage_error(prog, str(error))
    if options.action == "help":
        sys.stdout.write(USAGE.format(prog=prog) + "\n")
        sys.stdout.write(HELP.format(variable=ENGINE_VARIABLE, activation=ACTIVATION_VARIABLE))
        return 0
    if options.action == "version":
        sys.stdout.write(version_line())
        return 0
    return run(options, prog)


def run(options: Options, prog: str = "pep726hook") -> int:
    """Install the hook, export it to child processes, and run the target."""
    # Imported here so that `pep726hook scan` does not pay for runpy.
    from ._runner import Runner, TargetError, report_exception

    try:
        requested = requested_engine_name(options.engine)
        install_for_run(requested)
    except (ValueError, RuntimeError) as error:
        # Unknown $PEP726HOOK_ENGINE, or an engine that cannot run here.
        return usage_error(prog, str(error))
    record_route("the runner")
    os.environ[ACTIVATION_VARIABLE] = "1"
    # Children get the engine as asked, not as resolved: "auto" resolves the
    # same way in a child process, and to the class engine in a sub-interpreter
    # that cannot load the extension, where "native" would fail at start-up
    # (CPython's test_import SubinterpImportTests.test_isolated_config).
    os.environ[ENGINE_VARIABLE] = requested
    runner = Runner(options.kind, options.target, options.args)
    try:
        runner.prepare()
    except TargetError as error:
        sys.stderr.write(f"{prog}: {error}\n")
        return error.status
    except SystemExit:
        raise
    except BaseException as error:
        # `-m pkg.mod` imports pkg first: its exceptions are the program's own.
        return report_exception(error)
    return runner.run()


def install_for_run(requested: str) -> None:
    """Install the hook with the validated engine name *requested*.

    The hook may already be on because this process started with
    ``PEP726HOOK=1``.  The rule of every route that takes an engine option
    (this one and the pytest plugin): an engine named there replaces the
    active one; ``auto`` (or naming none) keeps it.
    """
    install_replacing(requested)


def version_line() -> str:
    """``pep726hook VERSION (IMPLEMENTATION X.Y.Z; engines: ...)``, saying why native is missing."""
    implementation = sys.implementation.name
    python = ".".join(str(part) for part in sys.version_info[:3])
    engines = ", ".join(available_engines())
    # Where the extension should exist and does not, say so: pip hides why.
    unexpected = _native_expected() and "native" not in engines
    missing = "; native engine unavailable, see `pep726hook info`" if unexpected else ""
    return f"pep726hook {__version__} ({implementation} {python}; engines: {engines}{missing})\n"


def info() -> str:
    """What ``pep726hook info`` prints: engines, why one is missing, how the hook is on."""
    from ._bootstrap import ON_VALUES, activation_requested
    from ._install import route

    lines = [f"pep726hook {__version__}"]
    python = ".".join(str(part) for part in sys.version_info[:3])
    lines.append(f"python: {sys.implementation.name} {python} ({sys.executable})")
    engines = available_engines()
    lines.append(f"engines available: {', '.join(engines)} (auto picks {engines[0]})")
    reason = native_unavailable_reason()
    if reason is None:
        lines.append("native engine: available")
    else:
        lines.append(f"native engine: unavailable: {reason}")
        hint = native_build_hint()
        if hint:
            lines.append(f"  {hint}")
    current = active_engine()
    if current is None:
        lines.append("hook in this process: off")
    else:
        lines.append(f"hook in this process: on, {current} engine, turned on by {route()}")
    value = os.environ.get(ACTIVATION_VARIABLE)
    meaning = {True: "on", False: "off", None: f"not understood: use one of {', '.join(ON_VALUES)}"}
    shown = "unset" if value is None else repr(value)
    lines.append(f"${ACTIVATION_VARIABLE}: {shown} ({meaning[activation_requested(value)]})")
    engine_value = os.environ.get(ENGINE_VARIABLE)
    if engine_value is None:
        lines.append(f"${ENGINE_VARIABLE}: unset (auto)")
    else:
        try:
            lines.append(f"${ENGINE_VARIABLE}: {engine_value!r} ({requested_engine_name(None)})")
        except ValueError as error:
            lines.append(f"${ENGINE_VARIABLE}: {engine_value!r} ({error})")
    return "\n".join(lines) + "\n"


def _info(prog: str, argv: list[str]) -> int:
    if argv:
        return usage_error(prog, f"info takes no arguments, not {argv[0]!r}")
    sys.stdout.write(info())
    return 0


def native_build_hint() -> str | None:
    """How to find out why the C extension is missing on CPython, or None if that is not why."""
    from . import _native_engine

    error = getattr(_native_engine, "_native_error", None)
    if not isinstance(error, ModuleNotFoundError) or error.name != f"{__package__}._native":
        return None
    if not _native_expected():
        return None
    return (
        "the C extension was not built when pep726hook was installed (pip hides the "
        "compiler's error); to see it: pip install --force-reinstall --no-deps "
        "--no-binary pep726hook --no-cache-dir -v pep726hook"
    )


def _native_expected() -> bool:
    # setup.py builds the extension for CPython with the GIL only.
    return sys.implementation.name == "cpython" and "t" not in getattr(sys, "abiflags", "")


def program_name() -> str:
    """The name to show in messages: how the user started us."""
    argv0 = sys.argv[0] if sys.argv else ""
    if os.path.basename(argv0) == "__main__.py":
        return "python -m pep726hook"
    return os.path.basename(argv0) or "pep726hook"


def usage_error(prog: str, message: str) -> int:
    """Report a usage error as argparse does: usage, then ``prog: error: message``."""
    sys.stderr.write(USAGE.format(prog=prog))
    sys.stderr.write(f"{prog}: error: {message}\n")
    return USAGE_STATUS


def _scan(prog: str, argv: list[str]) -> int:
    # Imported only when asked for: running a program must not pay for it.
    try:
        scanner = importlib.import_module(f"{__package__}._scan")
    except ImportError as error:
        if error.name != f"{__package__}._scan":
            raise
        return usage_error(prog, "the scan subcommand is not available in this installation")
    status = scanner.main(argv)
    return int(status or 0)

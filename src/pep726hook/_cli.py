"""The ``pep726hook`` command and ``python -m pep726hook``.

``pep726hook [run] [--engine E] [--] TARGET [args...]`` runs TARGET as
``python TARGET args...`` would, with PEP 726 hooks on; ``pep726hook scan ...``
hands over to the scanner; ``pep726hook info`` says which engines run here.
Only our own options come before TARGET; whatever follows it belongs to the
target, as with ``python``, ``coverage run`` and ``pdb``.

Running a program is the common case and the one whose start-up counts: the
command line is parsed by hand (no argparse), and this module imports nothing
at the top but what the interpreter has imported before us.
"""

import os
import sys

from . import __version__
from ._bootstrap import ACTIVATION_VARIABLE
from ._compat import CPYTHON_WITH_GIL, IMPLEMENTATION

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Sequence

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
  --version        show the version and the engines available, and exit

subcommands:
  run              the same as giving TARGET directly (for a script named "scan")
  scan             find the modules PEP 726 hooks concern, without importing
                   them (`{prog} scan --help`)
  info             show the engines this interpreter has (and why one is
                   missing) and whether the hook is on in this process

The program runs as __main__ exactly as with `python TARGET`, and
{activation}=1 and {variable}=<engine> are exported so that child
Python processes (subprocess, multiprocessing, concurrent.futures) start with
the hook on as well.  An engine named here replaces one that {activation}
already turned on at start-up.

exit status: the program's own, as with python (1 after an uncaught
exception; after Ctrl-C the process ends by SIGINT, as python's does, which a
shell reports as 130); 2 for a usage error.
"""

INFO_USAGE = "usage: {prog} info [-h]\n"

INFO_HELP = """\
Show what pep726hook can do in this interpreter: its version, the engines
available (and why the native engine is missing, with how to see the
compiler's error), whether the hook is on in this process and what turned it
on, and how ${activation} and ${variable} are understood.

options:
  -h, --help  show this help and exit
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
        args: "Sequence[str]" = (),
        engine: "str | None" = None,
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


def parse_run_arguments(argv: "Sequence[str]") -> Options:
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


def _engine_option(argv: "Sequence[str]", index: int) -> "tuple[str, int]":
    """Read ``--engine E`` or ``--engine=E`` at *index*; return E and the next index."""
    from ._engines import ENGINE_NAMES, normalize_engine_name

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


def _flagged_target(argv: "Sequence[str]", index: int, engine: "str | None") -> Options:
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


def main(argv: "Sequence[str] | None" = None) -> int:
    """Entry point of ``pep726hook`` and ``python -m pep726hook``; return the exit status.

    What we print ourselves (help, version, ``info``, the scanner's report)
    ends as python's own ``--help`` does when the reader of a pipe has gone
    (``| head -1``): quietly, with the status it would have had.  A program
    run by the runner meets a closed pipe, and Ctrl-C, as under python.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    prog = program_name()
    if args and args[0] in ("scan", "info"):
        _stdout_or_devnull()
    if args and args[0] == "scan":
        return _finish_output(_scan(prog, args[1:]))
    if args and args[0] == "info":
        return _finish_output(_info(prog, args[1:]))
    if args and args[0] == "run":
        args = args[1:]
    try:
        options = parse_run_arguments(args)
    except UsageError as error:
        return usage_error(prog, str(error))
    if options.action == "help":
        text = (
            USAGE.format(prog=prog)
            + "\n"
            + HELP.format(prog=prog, variable=_engine_variable(), activation=ACTIVATION_VARIABLE)
        )
        return _finish_output(_print(text))
    if options.action == "version":
        return _finish_output(_print(version_line()))
    return run(options, prog)


def run(options: Options, prog: str = "pep726hook") -> int:
    """Install the hook, export it to child processes, and run the target."""
    from ._engines import ENGINE_VARIABLE, requested_engine_name
    from ._install import record_route
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
        _write(sys.stderr, f"{prog}: {error}\n")
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
    from ._install import install_replacing

    install_replacing(requested)


def version_line() -> str:
    """``pep726hook VERSION (IMPLEMENTATION X.Y.Z; engines: ...)``, saying why native is missing."""
    from ._engines import available_engines

    engines = ", ".join(available_engines())
    # Where the extension should exist and does not, say so: pip hides why.
    unexpected = _native_expected() and "native" not in engines
    missing = "; native engine unavailable, see `pep726hook info`" if unexpected else ""
    return (
        f"pep726hook {__version__} ({IMPLEMENTATION} {_python_version()}; "
        f"engines: {engines}{missing})\n"
    )


def info() -> str:
    """What ``pep726hook info`` prints: engines, why one is missing, how the hook is on."""
    from ._bootstrap import ON_VALUES, activation_requested
    from ._engines import (
        ENGINE_VARIABLE,
        available_engines,
        native_unavailable_reason,
        requested_engine_name,
    )
    from ._install import engine as active_engine
    from ._install import route

    lines = [f"pep726hook {__version__}"]
    lines.append(f"python: {IMPLEMENTATION} {_python_version()} ({sys.executable})")
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


def _info(prog: str, argv: "list[str]") -> int:
    if argv and argv[0] in ("-h", "--help"):
        text = (
            INFO_USAGE.format(prog=prog)
            + "\n"
            + INFO_HELP.format(variable=_engine_variable(), activation=ACTIVATION_VARIABLE)
        )
        return _print(text)
    if argv:
        return usage_error(prog, f"info takes no arguments, not {argv[0]!r}")
    return _print(info())


def native_build_hint() -> "str | None":
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
    return CPYTHON_WITH_GIL


def _python_version() -> str:
    # "3.12.1", "3.14.0rc1": the version as python --version says it.
    return sys.version.split()[0]


def _engine_variable() -> str:
    from ._engines import ENGINE_VARIABLE

    return ENGINE_VARIABLE


def program_name() -> str:
    """The name to show in messages: how the user started us."""
    argv0 = sys.argv[0] if sys.argv else ""
    if os.path.basename(argv0) == "__main__.py":
        return "python -m pep726hook"
    return os.path.basename(argv0) or "pep726hook"


def usage_error(prog: str, message: str) -> int:
    """Report a usage error as argparse does: usage, then ``prog: error: message``."""
    _write(sys.stderr, USAGE.format(prog=prog) + f"{prog}: error: {message}\n")
    return USAGE_STATUS


def _print(text: str) -> int:
    """Write *text*, our own output, to stdout in one piece; return 0.

    In one write, as python writes its ``--help``: a reader that stops after
    the first line (``| head -1``) has then received all of it, and neither
    side sees a broken pipe.
    """
    _write(sys.stdout, text)
    return 0


def _stdout_or_devnull() -> None:
    """Give output of ours nowhere to go when stdout was closed, as python's own options do.

    Started with descriptor 1 closed (``>&-``), Python has ``sys.stdout`` None:
    ``print()`` then prints nothing, but argparse moves its help to stderr and
    a report written to the stream fails.  python's own ``--help`` prints
    nothing and exits 0.
    """
    if sys.stdout is None:
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 (for the rest of the process)


def _write(stream: "object", text: str) -> None:
    if stream is None:
        return  # started with that descriptor closed: python's own options print nothing
    try:
        stream.write(text)  # type: ignore[attr-defined]
    except BrokenPipeError:
        _discard(stream)


def _finish_output(status: int) -> int:
    """Flush our own output while we can still tell a reader that has gone; return *status*."""
    stdout = sys.stdout
    if stdout is not None:
        try:
            stdout.flush()
        except BrokenPipeError:
            _discard(stdout)
    return status


def _discard(stream: "object") -> None:
    """Send the rest of *stream*, whose reader has gone, to the null device.

    As the Python documentation advises for SIGPIPE (signal module, "Note on
    SIGPIPE"): the interpreter's last flush at exit would otherwise fail
    again and print "Exception ignored ... BrokenPipeError".  The exit status
    stays what it would have been, as with ``python --help | head -1``.
    """
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, stream.fileno())  # type: ignore[attr-defined]
        finally:
            os.close(devnull)
    except (OSError, AttributeError, ValueError):
        pass  # not a file descriptor of ours to redirect: nothing more to say


def _scan(prog: str, argv: "list[str]") -> int:
    # Imported only when asked for: running a program must not pay for it.
    import importlib

    try:
        scanner = importlib.import_module(f"{__package__}._scan")
    except ImportError as error:
        if error.name != f"{__package__}._scan":
            raise
        return usage_error(prog, "the scan subcommand is not available in this installation")
    try:
        status = scanner.main(argv)
    except BrokenPipeError:
        # Python 3.8's argparse lets its --help meet the closed pipe (3.9+
        # ignore it); the scan's own report handles a reader gone itself.
        _discard(sys.stdout)
        return 0
    return int(status or 0)

"""The ``pep726hook`` command and ``python -m pep726hook``.

``pep726hook [run] [--engine E] [--] TARGET [args...]`` runs TARGET as
``python TARGET args...`` would, with PEP 726 hooks on; ``pep726hook scan ...``
hands over to the scanner; ``pep726hook info`` says which engines run here.
Only our own options come before TARGET; whatever follows it belongs to the
target, as with ``python``, ``coverage run`` and ``pdb``.

Running a program is the common case and the one whose start-up counts: the
runner (:mod:`._runner`) parses those command lines by hand (no argparse) and
runs them without this module, which ``python -m pep726hook`` imports only
for the rest (help, version, subcommands, usage errors).
"""

import os
import sys

from . import _ACTIVATION_VARIABLE as ACTIVATION_VARIABLE
from . import _ENGINE_VARIABLE as ENGINE_VARIABLE
from . import _FAST_GETATTR_VARIABLE as FAST_GETATTR_VARIABLE
from . import _ON_VALUES as ON_VALUES
from . import __version__
from ._compat import CPYTHON_WITH_GIL, IMPLEMENTATION
from ._layout import GLUE, help_width, wrap_words
from ._runner import (
    Options,
    UsageError,
    discard,
    parse_run_arguments,
    program_name,
    run,
    start_engine,
    write,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Sequence

USAGE_STATUS = 2

#: The command lines of ``pep726hook``, each after the program's name.
USAGE_FORMS = (
    "[--engine ENGINE] [--fast-getattr] [--] TARGET [args ...]",
    "run [--engine ENGINE] [--fast-getattr] [--] TARGET [args ...]",
    "scan [scan arguments ...]",
    "info",
    "-h | --help | --version",
)

# The help texts are laid out by fit_help(): paragraphs start at the margin,
# and a list entry is two spaces, its term, two or more spaces and its
# description, which may go on in lines indented deeper.
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
  --fast-getattr   also pass every module that defines a PEP 562 __getattr__
                   to pep726hook.enable(), which keeps its reads fast on
                   CPython 3.11-3.14 (default: ${fast_getattr}, else off)
  --               end of our options: the next argument is a script path
  -h, --help       show this help and exit
  --version        show the version and the engines available, and exit

subcommands:
  run   the same as giving TARGET directly (for a script named "scan")
  scan  find the modules PEP 726 hooks concern, without importing them
        (`{prog} scan --help`)
  info  show the engines this interpreter has (and why one is missing)
        and whether the hook is on in this process

The program runs as __main__ exactly as with `python TARGET`, and
{activation}=1 and {variable}=<engine> are exported (and
{fast_getattr}=1 with --fast-getattr) so that child Python processes
(subprocess, multiprocessing, concurrent.futures) start with the hook on as
well. An engine named here replaces one that {activation} already turned on
at start-up.

exit status: the program's own, as with python (1 after an uncaught
exception; after Ctrl-C the process ends by SIGINT, as python's does, which a
shell reports as 130); 2 for a usage error.
"""

INFO_USAGE_FORMS = ("info [-h]",)

INFO_HELP = """\
Show what pep726hook can do in this interpreter: its version, the engines
available (and why the native engine is missing, with how to see the
compiler's error), whether the hook is on in this process and what turned it
on, and how ${activation}, ${variable} and ${fast_getattr} are understood.

options:
  -h, --help  show this help and exit
"""


def _glued(text: str) -> str:
    import re

    return re.sub(r"`[^`]*`", lambda match: match.group().replace(" ", GLUE), text)


def fit_usage(prog: str, forms: "Sequence[str]", width: int) -> str:
    """``usage: PROG FORM`` for each of *forms*, wrapped between options as argparse does."""
    import re

    lines = []
    for number, form in enumerate(forms):
        head = f"{'usage:' if number == 0 else '      '} {prog}"
        # A bracketed option, or a word: the units that are never split.
        units = re.findall(r"\[[^\]]*\]|\S+", form)
        text = " ".join(unit.replace(" ", GLUE) for unit in units)
        more = " " * (len(head) + 1)
        if len(more) > width * 3 // 4:
            more = " " * 11  # a long program name: under the first words instead
        lines += wrap_words(f"{head} {text}", width, "", more)
    return "\n".join(lines) + "\n"


def fit_help(text: str, width: int) -> str:
    """*text* (laid out as :data:`HELP` is) wrapped to *width*, lists kept in columns.

    The descriptions of a list start in one column, two spaces after its
    longest term; where that leaves them too little room, or for a term too
    long for the column, they start on the next line, indented.
    """
    out: list[str] = []
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        if not line:
            out.append("")
            index += 1
        elif line.startswith("  "):
            entries: list[tuple[str, str]] = []
            while index < len(lines) and lines[index].startswith("  "):
                line = lines[index]
                if line.startswith("   ") and entries:
                    term, description = entries[-1]
                    entries[-1] = (term, f"{description} {line.strip()}")
                else:
                    term, _, description = line[2:].partition("  ")
                    entries.append((term, description.strip()))
                index += 1
            out += _fit_entries(entries, width)
        else:
            paragraph = []
            while index < len(lines) and lines[index] and not lines[index].startswith(" "):
                paragraph.append(lines[index])
                index += 1
            out += wrap_words(_glued(" ".join(paragraph)), width)
    return "".join(line + "\n" for line in out)


#: The widest term that keeps its description beside it.
_MAX_TERM = 22
#: The narrowest description column worth keeping beside the terms.
_MIN_DESCRIPTION = 30


def _fit_entries(entries: "list[tuple[str, str]]", width: int) -> "list[str]":
    short = [len(term) for term, _ in entries if len(term) <= _MAX_TERM]
    column = 2 + max(short, default=0) + 2
    if width - column < _MIN_DESCRIPTION:
        column = 6
    lines: list[str] = []
    for term, description in entries:
        first = f"  {term}"
        text = _glued(description)
        if len(first) + 2 <= column:
            lines += wrap_words(text, width, first.ljust(column), " " * column)
        else:
            lines.append(first)
            lines += wrap_words(text, width, " " * column)
    return lines


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
        return _finish_output(_print(_help_text(USAGE_FORMS, HELP, prog)))
    if options.action == "version":
        return _finish_output(_print(version_line()))
    return _run(options, prog)


def _help_text(forms: "Sequence[str]", details: str, prog: str) -> str:
    """The usage *forms* and *details*, names filled in, fitted to the terminal's width."""
    names = {
        "prog": prog,
        "variable": ENGINE_VARIABLE,
        "activation": ACTIVATION_VARIABLE,
        "fast_getattr": FAST_GETATTR_VARIABLE,
    }
    width = help_width()
    return fit_usage(prog, forms, width) + "\n" + fit_help(details.format(**names), width)


def _run(options: "Options", prog: str) -> int:
    try:
        started = start_engine(options.engine, options.fast_getattr)
    except UsageError as error:
        return usage_error(prog, str(error))
    return run(options, started, prog)


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
    from . import _switch_spelling
    from ._engines import (
        available_engines,
        engine_from_environment,
        native_unavailable_reason,
    )
    from ._fast_getattr import switch_value
    from ._install import engine as active_engine
    from ._install import fast_getattr_is_on, route

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
        if fast_getattr_is_on():
            lines.append(_fast_getattr_status(current))
    value = os.environ.get(ACTIVATION_VARIABLE)
    meaning = {True: "on", False: "off", None: f"not understood: use one of {', '.join(ON_VALUES)}"}
    shown = "unset" if value is None else repr(value)
    lines.append(f"${ACTIVATION_VARIABLE}: {shown} ({meaning[_switch_spelling(value)]})")
    engine_value = os.environ.get(ENGINE_VARIABLE)
    if engine_value is None:
        lines.append(f"${ENGINE_VARIABLE}: unset (auto)")
    else:
        try:
            lines.append(f"${ENGINE_VARIABLE}: {engine_value!r} ({engine_from_environment()})")
        except (ValueError, RuntimeError) as error:
            lines.append(f"${ENGINE_VARIABLE}: {engine_value!r} ({error})")
    fast_value = os.environ.get(FAST_GETATTR_VARIABLE)
    if fast_value is None:
        lines.append(f"${FAST_GETATTR_VARIABLE}: unset (off)")
    else:
        try:
            on = switch_value(fast_value, f"${FAST_GETATTR_VARIABLE}")
            lines.append(f"${FAST_GETATTR_VARIABLE}: {fast_value!r} ({'on' if on else 'off'})")
        except ValueError as error:
            lines.append(f"${FAST_GETATTR_VARIABLE}: {fast_value!r} ({error})")
    return "\n".join(lines) + "\n"


def _fast_getattr_status(engine: str) -> str:
    if engine == "native":
        return "fast getattr: on (modules defining __getattr__ pass to enable())"
    return "fast getattr: on, but it does nothing under the class engine"


def _info(prog: str, argv: "list[str]") -> int:
    if argv and argv[0] in ("-h", "--help"):
        return _print(_help_text(INFO_USAGE_FORMS, INFO_HELP, prog))
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


def usage_error(prog: str, message: str) -> int:
    """Report a usage error as argparse does: usage, then ``prog: error: message``."""
    write(sys.stderr, fit_usage(prog, USAGE_FORMS, help_width()) + f"{prog}: error: {message}\n")
    return USAGE_STATUS


def _print(text: str) -> int:
    """Write *text*, our own output, to stdout in one piece; return 0.

    In one write, as python writes its ``--help``: a reader that stops after
    the first line (``| head -1``) has then received all of it, and neither
    side sees a broken pipe.
    """
    write(sys.stdout, text)
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


def _finish_output(status: int) -> int:
    """Flush our own output while we can still tell a reader that has gone; return *status*."""
    stdout = sys.stdout
    if stdout is not None:
        try:
            stdout.flush()
        except BrokenPipeError:
            discard(stdout)
    return status


def _scan(prog: str, argv: "list[str]") -> int:
    # Imported only when asked for: running a program must not pay for it.
    from ._scan import main as scan_main

    try:
        status = scan_main(argv)
    except BrokenPipeError:
        # Python 3.8's argparse lets its --help meet the closed pipe (3.9+
        # ignore it); the scan's own report handles a reader gone itself.
        discard(sys.stdout)
        return 0
    return int(status or 0)

"""The ``pep726hook scan`` command line."""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

from .._layout import help_width, wrap_words
from ._files import Exclusion
from ._model import KINDS, ScanResult, UnknownDistributionError
from ._scanner import scan

if TYPE_CHECKING:
    from collections.abc import Sequence

#: Where the documentation of the command lives (installed copies have no docs/).
DOCS_URL = "https://github.com/pep726hook/pep726hook/blob/main/docs/scan.md"

#: Exit statuses: the scan completed (and found no --fail-on kind), found one, usage error.
OK_STATUS, FOUND_STATUS, USAGE_STATUS = 0, 1, 2


def _kinds(value: str) -> list[str]:
    """The argparse type of ``--fail-on``: a comma-separated list of finding kinds."""
    kinds = [kind.strip() for kind in value.split(",") if kind.strip()]
    unknown = [kind for kind in kinds if kind not in KINDS]
    if unknown or not kinds:
        raise argparse.ArgumentTypeError(
            f"unknown finding kind {', '.join(map(repr, unknown)) or repr(value)} "
            f"(choose from {', '.join(KINDS)})"
        )
    return kinds


def _looks_like_path(name: str) -> bool:
    """Whether a DIST argument is more likely a directory meant for ``--path``.

    No distribution name holds a path separator; a name that exists as a file
    or directory here may be one too, and the hint costs nothing if not.
    """
    separators = [separator for separator in ("/", os.sep, os.altsep) if separator]
    return any(separator in name for separator in separators) or os.path.exists(name)


def _unreadable(path: str) -> str | None:
    """Why *path*, named on the command line, cannot be scanned; None if it can.

    A file or directory in a tree that cannot be read is listed as skipped;
    one named by the user is a usage error, as a typo in the name is.
    """
    if not os.path.exists(path):
        return f"no such file or directory: {path}"
    try:
        if os.path.isdir(path):
            os.listdir(path)
        else:
            # Non-blocking: a FIFO is not waited for here (the scan skips it).
            os.close(os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)))
    except OSError as exc:
        return f"cannot read {path}: {exc.strerror or exc}"
    return None


def exit_status(result: ScanResult, fail_on: Sequence[str]) -> int:
    """:data:`FOUND_STATUS` if *result* has a finding of a kind in *fail_on*, else :data:`OK_STATUS`.

    Skipped files do not count: a file that cannot be parsed here (Python 2
    code, a newer syntax) is no reason to fail a CI job.
    """
    wanted = set(fail_on)
    return FOUND_STATUS if any(f.kind in wanted for f in result.findings) else OK_STATUS


class _HelpFormatter(argparse.HelpFormatter):
    """argparse's layout, within 40 to 80 columns, with lines broken only between words.

    argparse alone fills the whole terminal, however wide, and breaks a word
    longer than a line (the documentation's URL) in two.
    """

    def __init__(self, prog: str) -> None:
        super().__init__(prog, width=help_width())

    def _split_lines(self, text: str, width: int) -> list[str]:
        return wrap_words(" ".join(text.split()), width)

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        return "\n".join(wrap_words(" ".join(text.split()), width, indent))


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``pep726hook scan``."""
    parser = argparse.ArgumentParser(
        prog="pep726hook scan",
        formatter_class=_HelpFormatter,
        description=(
            "Report modules with module-level __setattr__/__delattr__, the ModuleType "
            "__class__ workaround, and PEP 562 __getattr__/__dir__, without importing "
            "or executing anything."
        ),
        epilog=(
            "Installed distributions are scanned unless --path is given without DIST or --site; "
            "pep726hook itself only when named as DIST. "
            "Findings in the standard library are informational, not suggestions to edit "
            "CPython. "
            "The table fits the terminal's width ($COLUMNS). "
            "Exit status: 1 when --fail-on is given and a finding of a kind it names was "
            "reported, 2 on a usage error, 0 otherwise (the scan completed; files that could "
            "not be read or parsed are listed but do not change the status). "
            f"Finding kinds: {', '.join(KINDS)}. "
            f"Documentation, including the --json schema: {DOCS_URL}"
        ),
    )
    parser.add_argument(
        "distributions",
        nargs="*",
        metavar="DIST",
        help="scan only these installed distributions (default: all on sys.path)",
    )
    parser.add_argument(
        "--path",
        action="append",
        default=[],
        metavar="PATH",
        help="scan the source tree or file PATH; modules are named relative to it (repeatable)",
    )
    parser.add_argument(
        "--stdlib",
        action="store_true",
        help="also scan the standard library of this interpreter, without its own tests",
    )
    parser.add_argument(
        "--stdlib-tests",
        action="store_true",
        help="also scan the standard library's own test packages (its test, tests and "
        "idle_test directories); implies --stdlib",
    )
    parser.add_argument(
        "--site",
        action="append",
        metavar="DIR",
        help="look for distributions in DIR instead of sys.path (repeatable)",
    )
    parser.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="GLOB",
        help="leave out files whose path relative to their site, --path or stdlib directory, "
        "or a directory above them, matches GLOB; a GLOB without '/' matches any one "
        "directory or file name (e.g. tests, 'test_*.py', mypkg/_vendor; repeatable)",
    )
    parser.add_argument(
        "--fail-on",
        action="append",
        default=[],
        type=_kinds,
        metavar="KIND[,KIND]",
        help="exit with status 1 if a finding of one of these kinds is reported (repeatable)",
    )
    parser.add_argument(
        "--thorough",
        action="store_true",
        help="parse every file that mentions a hook name in full (slower; also reports "
        "syntax errors outside the statements of interest)",
    )
    parser.add_argument(
        "--jobs",
        type=int,
        metavar="N",
        help="worker processes (default: one per CPU for large scans; 1: none)",
    )
    parser.add_argument(
        "--diff",
        action="append",
        default=[],
        metavar="PATH",
        help="scan the source tree or file PATH (as --path does) and print, instead of the "
        "report, a unified diff that replaces each PEP 562 __getattr__ serving a static set "
        "of names with declarations, keeping it as the fallback without pep726hook; "
        "writes no file (apply it with patch -p1); says on stderr why a __getattr__ gets "
        "none (repeatable)",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="print JSON (schema pep726hook.scan/1) instead of a table",
    )
    return parser


def _check_arguments(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Exit through *parser* with a usage error for what argparse itself lets through."""
    for option, paths in (("--path", args.path), ("--diff", args.diff)):
        for path in paths:
            problem = _unreadable(path)
            if problem:
                parser.error(f"argument {option}: {problem}")
    if args.diff:
        # The diff is for code the user may edit: the trees named, nothing installed.
        others = [
            name
            for name, given in (
                ("DIST", args.distributions),
                ("--path", args.path),
                ("--site", args.site),
                ("--stdlib", args.stdlib or args.stdlib_tests),
                ("--json", args.json),
                ("--fail-on", args.fail_on),
            )
            if given
        ]
        if others:
            parser.error(f"argument --diff: not allowed with {', '.join(others)}")
    for directory in args.site or ():
        problem = _unreadable(directory) or (
            None if os.path.isdir(directory) else f"not a directory: {directory}"
        )
        if problem:
            parser.error(f"argument --site: {problem}")
    if args.jobs is not None and args.jobs < 0:
        parser.error("--jobs must be 0 or more")
    try:
        Exclusion(args.exclude)
    except ValueError as exc:
        parser.error(f"argument --exclude: {exc}")


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``pep726hook scan`` with *argv* (without the ``scan`` word); return the exit status."""
    from . import _report

    parser = build_parser()
    try:
        args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
        _check_arguments(parser, args)
        try:
            result = scan(
                args.distributions,
                args.path + args.diff,
                stdlib=args.stdlib,
                stdlib_tests=args.stdlib_tests,
                site=args.site,
                thorough=args.thorough,
                jobs=args.jobs,
                exclude=args.exclude,
            )
        except UnknownDistributionError as exc:
            where = "in " + os.pathsep.join(args.site) if args.site else "on sys.path"
            message = f"no installed distribution named {exc} {where}"
            paths = [name for name in exc.names if _looks_like_path(name)]
            if paths and os.path.exists(paths[0]):
                message += f"; to scan a source tree or file, give it as --path {paths[0]}"
            elif paths:
                message += f" (nor any file or directory {paths[0]})"
            parser.error(message)
    except SystemExit as exc:
        # argparse exits for --help and usage errors; callers get a status instead.
        return exc.code if isinstance(exc.code, int) else USAGE_STATUS
    try:
        if args.diff:
            from ._declarations import write_diffs

            write_diffs(result, sys.stdout, sys.stderr)
        elif args.json:
            _report.write_json(result, sys.stdout)
        else:
            _report.write_table(result, sys.stdout)
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader (``| head``) has gone; that is not a failed scan.  Point
        # stdout at devnull so the interpreter's final flush stays quiet.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    return exit_status(result, [kind for kinds in args.fail_on for kind in kinds])

"""The ``pep726hook scan`` command line."""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

from ._model import UnknownDistributionError
from ._scanner import scan

if TYPE_CHECKING:
    from collections.abc import Sequence


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``pep726hook scan``."""
    parser = argparse.ArgumentParser(
        prog="pep726hook scan",
        description=(
            "Report modules with module-level __setattr__/__delattr__, the ModuleType "
            "__class__ workaround, and PEP 562 __getattr__/__dir__, without importing "
            "or executing anything."
        ),
        epilog=(
            "Installed distributions are scanned unless --path is given without DIST or --site. "
            "Exit status: 0 when the scan completed (findings or not), 2 on a usage error. "
            "The --json schema is described in docs/scan.md."
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
        metavar="DIR",
        help="scan the source tree DIR; modules are named relative to it (repeatable)",
    )
    parser.add_argument(
        "--stdlib", action="store_true", help="also scan the standard library of this interpreter"
    )
    parser.add_argument(
        "--site",
        action="append",
        metavar="DIR",
        help="look for distributions in DIR instead of sys.path (repeatable)",
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
        "--json",
        action="store_true",
        help="print JSON (schema pep726hook.scan/1) instead of a table",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``pep726hook scan`` with *argv* (without the ``scan`` word); return the exit status."""
    from . import _report

    parser = build_parser()
    try:
        args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
        for directory in [*args.path, *(args.site or ())]:
            if not os.path.isdir(directory):
                parser.error(f"not a directory: {directory}")
        if args.jobs is not None and args.jobs < 0:
            parser.error("--jobs must be 0 or more")
        try:
            result = scan(
                args.distributions,
                args.path,
                stdlib=args.stdlib,
                site=args.site,
                thorough=args.thorough,
                jobs=args.jobs,
            )
        except UnknownDistributionError as exc:
            where = "in " + os.pathsep.join(args.site) if args.site else "on sys.path"
            parser.error(f"no installed distribution named {exc} {where}")
    except SystemExit as exc:
        # argparse exits for --help and usage errors; callers get a status instead.
        return exc.code if isinstance(exc.code, int) else 2
    try:
        if args.json:
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
    return 0

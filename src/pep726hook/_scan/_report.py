"""Rendering of ``pep726hook scan`` results: a table for people, JSON for tools.

The JSON document itself is made by :meth:`ScanResult.to_json`, public through
``pep726hook.ScanResult``; its layout (schema ``pep726hook.scan/1``) is
documented in docs/scan.md
(https://github.com/pep726hook/pep726hook/blob/main/docs/scan.md).
"""

from __future__ import annotations

import json
import shutil
from typing import TYPE_CHECKING, Any

from .._layout import GLUE, wrap_words

if TYPE_CHECKING:
    from typing import TextIO

    from ._model import ScanResult

# Module-level hooks are what they are: no confidence to state.
_HOOK_KINDS = frozenset(("module_setattr", "module_delattr", "module_getattr", "module_dir"))
_HEADERS = ("LOCATION", "DISTRIBUTION", "MODULE", "KIND", "DETAIL")


def to_json(result: ScanResult) -> dict[str, Any]:
    """The JSON document of *result*, as plain Python objects."""
    return result.to_json()


def write_json(result: ScanResult, out: TextIO) -> None:
    """Write *result* as indented JSON followed by a newline."""
    json.dump(to_json(result), out, indent=2)
    out.write("\n")


#: The narrowest report: below this, wrapping would leave a word or two per line.
MIN_WIDTH = 40
#: The narrowest DETAIL column of the table; below it, each finding is a block of lines.
_MIN_DETAIL_WIDTH = 30
#: The widest lines of prose under a finding: wider ones are hard to read.
_NOTE_WIDTH = 100


def report_width() -> int:
    """The width to fit the table to: ``$COLUMNS``, else the terminal's, else 80; at least 40."""
    return max(MIN_WIDTH, shutil.get_terminal_size().columns)


def write_table(result: ScanResult, out: TextIO, width: int | None = None) -> None:
    """Write *result* for people: one finding per row, then a summary, fitted to *width*.

    *width* defaults to :func:`report_width`.  When the LOCATION, DISTRIBUTION,
    MODULE and KIND columns leave DETAIL room enough, findings are rows of an
    aligned table whose DETAIL wraps within its column; otherwise each finding
    is a block: its location alone, then what it is, then its detail.  Notes
    under a finding (confidence, related places, read cost, suggestion) wrap
    to the width, indented, at most 100 columns wide.
    """
    width = report_width() if width is None else max(width, MIN_WIDTH)
    lines: list[str] = []
    rows = [
        (f"{f.path}:{f.line}", f.distribution or "-", f.module, f.kind, f.detail)
        for f in result.findings
    ]
    table = True
    if rows:
        widths = [max(len(row[i]) for row in [_HEADERS, *rows]) for i in range(len(_HEADERS) - 1)]
        detail_start = sum(widths) + 2 * len(widths)
        detail_width = width - detail_start
        longest_word = max(len(word) for row in rows for word in row[-1].split() or [""])
        table = detail_width >= max(_MIN_DETAIL_WIDTH, longest_word)

        def cells(row: tuple[str, ...]) -> str:
            return "  ".join(cell.ljust(cell_width) for cell, cell_width in zip(row, widths))

        if table:
            lines.append(f"{cells(_HEADERS)}  {_HEADERS[-1]}")
        else:
            lines.append("LOCATION")
            lines += wrap_words("KIND in MODULE (distribution DISTRIBUTION)", width, "  ")
            lines.append("  DETAIL")
        for finding, row in zip(result.findings, rows):
            if table:
                detail = wrap_words(row[-1], detail_width)
                lines.append(f"{cells(row)}  {detail[0]}".rstrip())
                lines.extend(" " * detail_start + part for part in detail[1:])
            else:
                lines.append("")  # blocks of several lines read better apart
                lines.append(row[0])
                where = f"{finding.kind} in {finding.module}"
                if finding.distribution:
                    where += f" (distribution {finding.distribution})"
                lines.extend(wrap_words(where, width, "  "))
                lines.extend(wrap_words(row[-1], width, "  "))
            notes = [] if finding.kind in _HOOK_KINDS else [f"confidence: {finding.confidence}"]
            notes += [f"{r.role}: {r.path}:{r.line}" for r in finding.related]
            if finding.read_cost:
                notes.append(f"read cost: {finding.read_cost}")
            if finding.suggestion:
                notes.append(f"suggestion: {finding.suggestion}")
            for note in notes:
                lines.extend(wrap_words(note, min(width, _NOTE_WIDTH), "    ", "      "))
    if rows and not table:
        lines.append("")
    for skipped in result.skipped:
        lines.extend(wrap_words(f"skipped {skipped.path}: {skipped.reason}", width, "", "    "))
    modules = len({(f.distribution, f.module) for f in result.findings})
    # A count and its noun, and the interpreter's name and version, stay on one line.
    summary = (
        f"{_count(len(result.findings), 'finding')} in {_count(modules, 'module')};"
        f" scanned{GLUE}{_count(result.scanned_files, 'file')} ({result.parsed_files}{GLUE}parsed),"
        f" {len(result.skipped)}{GLUE}skipped; {result.python.replace(' ', GLUE)}"
    )
    lines.extend(wrap_words(summary, width, "", "    "))
    out.write("".join(line + "\n" for line in lines))


def _count(number: int, noun: str) -> str:
    return f"{number}{GLUE}{noun}{'s' * (number != 1)}"

"""Rendering of ``pep726hook scan`` results: a table for people, JSON for tools.

The JSON document itself is made by :meth:`ScanResult.to_json`, public through
``pep726hook.ScanResult``; its layout (schema ``pep726hook.scan/1``) is
documented in docs/scan-output.md
(https://github.com/pep726hook/pep726hook/blob/main/docs/scan-output.md).
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from typing import TYPE_CHECKING, Any, Optional, Tuple

from .._layout import GLUE, wrap_words

if TYPE_CHECKING:
    from typing import TextIO

    from ._model import ScanFinding, ScanResult

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

    *width* defaults to :func:`report_width`.  First comes what the findings
    change under pep726hook (:func:`behaviour_note`).  When the LOCATION,
    DISTRIBUTION, MODULE and KIND columns leave DETAIL room enough, findings
    are rows of an aligned table whose DETAIL wraps within its column;
    otherwise each finding is a block: its location alone, then what it is,
    then its detail.  Notes under a finding (confidence, related places, read
    cost, suggestion) wrap to the width, indented, at most 100 columns wide.
    A read cost and suggestion that several findings share is said once,
    after the findings, with the modules it applies to; each of those
    findings points to it by number.
    """
    width = report_width() if width is None else max(width, MIN_WIDTH)
    lines: list[str] = []
    if result.findings:
        lines.extend(wrap_words(behaviour_note(result), min(width, _NOTE_WIDTH)))
        lines.append("")
    shared = _shared_advice(result)
    lines += _finding_lines(result, shared, width)
    lines += _shared_notes(result, shared, width)
    if any(f.kind == "module_dir" for f in result.findings):
        lines.extend(wrap_words(_DIR_NOTE, min(width, _NOTE_WIDTH), "", "    "))
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


#: What a ``module_dir`` finding is, said once under the table.
_DIR_NOTE = (
    "module_dir: a PEP 562 __dir__ only changes what dir(module) lists; it costs reads nothing,"
    " pep726hook leaves it as it is, and nothing is to be done about it (it is listed because"
    " it usually comes with a __getattr__ whose names it lists)."
)

#: The kinds whose code pep726hook runs differently: their hooks start running.
_BEHAVING_KINDS = ("module_setattr", "module_delattr")


def behaviour_note(result: ScanResult) -> str:
    """What installing pep726hook changes for the code of *result*'s findings, said up front.

    pep726hook gives module-level ``__setattr__``/``__delattr__`` hooks their
    PEP 726 meaning; it leaves every other module as it was (a ``__getattr__``
    module too, unless the fast-getattr switch is on or the module opts in).
    """
    hooks = sorted({f.kind for f in result.findings if f.kind in _BEHAVING_KINDS})
    if not hooks:
        return (
            "None of these findings changes how the code behaves under pep726hook, which runs"
            " only module-level __setattr__/__delattr__ hooks (there are none here) and leaves"
            " other modules as they are: they say what reads of these modules cost and how the"
            " code could be written with PEP 726."
        )
    return (
        f"Under pep726hook, the hooks of the {' and '.join(hooks)} findings start running on"
        " stores and deletions through their modules (PEP 726); none of the other findings"
        " changes how the code behaves: they say what reads cost and how the code could be"
        " written with PEP 726."
    )


_Advice = Tuple[Optional[str], Optional[str]]


def _advice_of(finding: ScanFinding) -> _Advice:
    return finding.read_cost, finding.suggestion


def _advice_notes(finding: ScanFinding) -> list[str]:
    notes = []
    if finding.read_cost:
        notes.append(f"read cost: {finding.read_cost}")
    if finding.suggestion:
        notes.append(f"suggestion: {finding.suggestion}")
    return notes


def _shared_advice(result: ScanResult) -> dict[_Advice, int]:
    """The read cost and suggestion pairs that more than one finding has, numbered in order."""
    counts = Counter(_advice_of(f) for f in result.findings if f.read_cost or f.suggestion)
    shared: dict[_Advice, int] = {}
    for finding in result.findings:
        advice = _advice_of(finding)
        if counts[advice] > 1 and advice not in shared:
            shared[advice] = len(shared) + 1
    return shared


def _shared_notes(result: ScanResult, shared: dict[_Advice, int], width: int) -> list[str]:
    """Each shared read cost and suggestion once, with the modules it applies to."""
    lines: list[str] = []
    for advice, number in shared.items():
        modules = list(dict.fromkeys(f.module for f in result.findings if _advice_of(f) == advice))
        where = f"[{number}] for {_count(len(modules), 'module')}: {', '.join(modules)}"
        lines.extend(wrap_words(where, min(width, _NOTE_WIDTH), "", "    "))
        for note in _advice_notes(next(f for f in result.findings if _advice_of(f) == advice)):
            lines.extend(wrap_words(note, min(width, _NOTE_WIDTH), "    ", "      "))
        lines.append("")
    return lines


def _finding_lines(result: ScanResult, shared: dict[_Advice, int], width: int) -> list[str]:
    """The findings, as rows of a table or as blocks (see :func:`write_table`)."""
    rows = [
        (f"{f.path}:{f.line}", f.distribution or "-", f.module, f.kind, f.detail)
        for f in result.findings
    ]
    if not rows:
        return []
    lines: list[str] = []
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
        number = shared.get(_advice_of(finding))
        see = f"see note [{number}]" if number is not None else None
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
            if see is not None:
                where, see = f"{where}; {see}", None
            lines.extend(wrap_words(where, width, "  "))
            lines.extend(wrap_words(row[-1], width, "  "))
        notes = [] if finding.kind in _HOOK_KINDS else [f"confidence: {finding.confidence}"]
        notes += [f"{r.role}: {r.path}:{r.line}" for r in finding.related]
        notes += [see] if see is not None else [] if number is not None else _advice_notes(finding)
        for note in notes:
            lines.extend(wrap_words(note, min(width, _NOTE_WIDTH), "    ", "      "))
    if not table:
        lines.append("")
    return lines


def _count(number: int, noun: str) -> str:
    return f"{number}{GLUE}{noun}{'s' * (number != 1)}"

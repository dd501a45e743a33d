"""Rendering of ``pep726hook scan`` results: a table for people, JSON for tools.

The JSON layout (schema ``pep726hook.scan/1``) is documented in docs/scan.md
(https://github.com/pep726hook/pep726hook/blob/main/docs/scan.md); change it
only together with that document and the schema version.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ._model import SCHEMA

if TYPE_CHECKING:
    from typing import TextIO

    from ._model import ScanResult

# Module-level hooks are what they are: no confidence to state.
_HOOK_KINDS = frozenset(("module_setattr", "module_delattr", "module_getattr", "module_dir"))
_HEADERS = ("LOCATION", "DISTRIBUTION", "MODULE", "KIND", "DETAIL")


def to_json(result: ScanResult) -> dict[str, Any]:
    """The JSON document of *result*, as plain Python objects."""
    return {
        "schema": SCHEMA,
        "python": result.python,
        "scanned_files": result.scanned_files,
        "skipped": [{"path": s.path, "reason": s.reason} for s in result.skipped],
        "findings": [
            {
                "distribution": f.distribution,
                "module": f.module,
                "path": f.path,
                "line": f.line,
                "kind": f.kind,
                "detail": f.detail,
                "suggestion": f.suggestion,
                "confidence": f.confidence,
                "class_line": f.class_line,
                "install_line": f.install_line,
                "read_cost": f.read_cost,
                "related": [
                    {
                        "role": r.role,
                        "path": r.path,
                        "line": r.line,
                        "module": r.module,
                        "distribution": r.distribution,
                        "name": r.name,
                    }
                    for r in f.related
                ],
            }
            for f in result.findings
        ],
    }


def write_json(result: ScanResult, out: TextIO) -> None:
    """Write *result* as indented JSON followed by a newline."""
    json.dump(to_json(result), out, indent=2)
    out.write("\n")


def write_table(result: ScanResult, out: TextIO) -> None:
    """Write *result* as an aligned table, one finding per row, then a summary."""
    rows = [
        (f"{f.path}:{f.line}", f.distribution or "-", f.module, f.kind, f.detail)
        for f in result.findings
    ]
    if rows:
        widths = [max(len(row[i]) for row in [_HEADERS, *rows]) for i in range(len(_HEADERS) - 1)]

        def line(cells: tuple[str, ...]) -> str:
            padded = [cell.ljust(width) for cell, width in zip(cells, widths)]
            return "  ".join([*padded, cells[-1]]).rstrip()

        out.write(line(_HEADERS) + "\n")
        for finding, row in zip(result.findings, rows):
            out.write(line(row) + "\n")
            if finding.kind not in _HOOK_KINDS:
                out.write(f"    confidence: {finding.confidence}\n")
            for related in finding.related:
                out.write(f"    {related.role}: {related.path}:{related.line}\n")
            if finding.read_cost:
                out.write(f"    read cost: {finding.read_cost}\n")
            if finding.suggestion:
                out.write(f"    suggestion: {finding.suggestion}\n")
    for skipped in result.skipped:
        out.write(f"skipped {skipped.path}: {skipped.reason}\n")
    modules = len({(f.distribution, f.module) for f in result.findings})
    out.write(
        f"{len(result.findings)} finding{'s' * (len(result.findings) != 1)} in {modules}"
        f" module{'s' * (modules != 1)}; scanned {result.scanned_files}"
        f" file{'s' * (result.scanned_files != 1)}"
        f" ({result.parsed_files} parsed), {len(result.skipped)} skipped; {result.python}\n"
    )

"""What ``pep726hook scan`` reports: the records of its results and the JSON schema name."""

from __future__ import annotations

from typing import Any, NamedTuple

SCHEMA = "pep726hook.scan/1"

#: The finding kinds, in the order the report explains them.
KINDS = (
    "module_setattr",
    "module_delattr",
    "class_workaround",
    "wrapper_workaround",
    "helper_workaround",
    "helper_call",
    "dict_property_module",
    "module_getattr",
    "module_dir",
)

#: How sure a finding is that the code intercepts stores on a module when it runs.
CONFIDENCES = ("high", "medium", "low")


class SourceFile(NamedTuple):
    """One ``.py`` file to scan and where it comes from."""

    path: str
    #: ``/``-separated path relative to the import root (site or source directory).
    relative: str
    distribution: str | None
    #: The distributions (PEP 503 normalised names) that *distribution* requires.
    requires: frozenset[str] = frozenset()
    #: Whether the file belongs to the standard library.
    stdlib: bool = False
    #: Why a directory of a tree could not be listed (then *path* is that
    #: directory, reported as skipped); None for a file to read.
    unlisted: str | None = None

    @property
    def module(self) -> str:
        """The dotted module name (computed on demand: few files ever need it)."""
        return _module_name(self.relative)


class ScanRelated(NamedTuple):
    """Another place a :class:`ScanFinding` involves: a helper, its caller, a call's class."""

    #: ``"caller"``, ``"helper"``, ``"class"`` or ``"install"``.
    role: str
    #: The absolute path of its file.
    path: str
    #: Its 1-based line.
    line: int
    #: The dotted name of its module.
    module: str
    #: The distribution its file belongs to; None for the standard library and paths.
    distribution: str | None
    #: The dotted name of the function (for ``helper``), else None.
    name: str | None = None


class ScanFinding(NamedTuple):
    """One construct that :func:`pep726hook.scan` reports: a hook, a workaround or a call of one.

    The fields are those of a finding in the ``--json`` output (schema
    ``pep726hook.scan/1``), with tuples for arrays; see the documentation of
    ``pep726hook scan`` for each kind and what its texts say.
    """

    #: The distribution's name as in its metadata; None for the standard library and paths.
    distribution: str | None
    #: The dotted module name (the relative path when the file has no importable name).
    module: str
    #: The absolute path of the file.
    path: str
    #: The 1-based line of the hook, of the workaround's class statement, or of the call.
    line: int
    #: ``"module_setattr"``, ``"module_delattr"``, ``"class_workaround"``,
    #: ``"wrapper_workaround"``, ``"helper_workaround"``, ``"helper_call"``,
    #: ``"dict_property_module"``, ``"module_getattr"`` or ``"module_dir"``.
    kind: str
    #: The source line of a hook, or what a workaround installs, where and how.
    detail: str
    #: What to do about it, or None where nothing is to be done (hooks but ``__getattr__``).
    suggestion: str | None
    #: ``"high"``, ``"medium"`` or ``"low"``: how sure the scan is that it runs as reported.
    confidence: str = "high"
    #: Line of the class statement of the workaround, when the finding has one.
    class_line: int | None = None
    #: Line of the statement that installs it (in this file), when known.
    install_line: int | None = None
    #: What reads of the affected module cost, on which interpreters.
    read_cost: str | None = None
    #: Other places the finding involves: a helper, its callers, a call's class and install.
    related: tuple[ScanRelated, ...] = ()


class ScanSkipped(NamedTuple):
    """A candidate file that :func:`pep726hook.scan` could not read, decode or parse."""

    #: The absolute path of the file.
    path: str
    #: Why: ``cannot read: ...``, ``cannot decode ...``, ``syntax error at line N: ...``.
    reason: str


class ScanResult(NamedTuple):
    """Everything one :func:`pep726hook.scan` found."""

    #: The interpreter that scanned, e.g. ``"CPython 3.12.1"`` (its grammar parsed the files).
    python: str
    #: The ``.py`` files read, each counted once.
    scanned_files: int
    #: How many of them had to be parsed.
    parsed_files: int
    #: The files that could not be read, decoded or parsed, sorted by path.
    skipped: list[ScanSkipped]
    #: Sorted by distribution (named ones first), path, line and kind.
    findings: list[ScanFinding]

    def to_json(self) -> dict[str, Any]:
        """The document ``pep726hook scan --json`` prints, as plain Python objects.

        Its layout (schema ``pep726hook.scan/1``) is documented with the
        command (docs/scan-output.md); change it only together with that document and
        the schema version.
        """
        return {
            "schema": SCHEMA,
            "python": self.python,
            "scanned_files": self.scanned_files,
            "skipped": [{"path": s.path, "reason": s.reason} for s in self.skipped],
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
                for f in self.findings
            ],
        }


class UnknownDistributionError(LookupError):
    """Raised for DIST names that no visible distribution has; ``names`` are those names."""

    def __init__(self, *names: str) -> None:
        super().__init__(*names)
        self.names = names

    def __str__(self) -> str:
        return ", ".join(self.names)


def _module_name(relative: str) -> str:
    """The dotted module name of a ``/``-separated path relative to an import root.

    Paths that cannot be imported under a dotted name (a ``..`` part, a
    directory called ``foo-1.0``) are reported by that relative path instead.
    """
    parts = relative.split("/")
    stem = parts[-1][:-3] if parts[-1].endswith(".py") else parts[-1]
    parts[-1] = stem
    if stem == "__init__" and len(parts) > 1:
        del parts[-1]
    if all(part.isidentifier() for part in parts):
        return ".".join(parts)
    return relative

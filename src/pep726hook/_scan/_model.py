"""What ``pep726hook scan`` reports: the records of its results and the JSON schema name."""

from __future__ import annotations

from typing import NamedTuple

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

    @property
    def module(self) -> str:
        """The dotted module name (computed on demand: few files ever need it)."""
        return _module_name(self.relative)


class Related(NamedTuple):
    """Another place a finding involves: a helper's caller, or the helper a call reaches."""

    #: ``caller``, ``helper``, ``class`` or ``install``.
    role: str
    path: str
    line: int
    module: str
    distribution: str | None
    #: The dotted name of the function (for ``helper``), else None.
    name: str | None = None


class Finding(NamedTuple):
    """One reported construct; the fields are those of the JSON schema."""

    distribution: str | None
    module: str
    path: str
    line: int
    kind: str
    detail: str
    suggestion: str | None
    confidence: str = "high"
    #: Line of the class statement of the workaround, when the finding has one.
    class_line: int | None = None
    #: Line of the statement that installs it (in this file), when known.
    install_line: int | None = None
    #: What reads of the affected module cost, on which interpreters.
    read_cost: str | None = None
    related: tuple[Related, ...] = ()


class Skipped(NamedTuple):
    """A candidate file that could not be read, decoded or parsed."""

    path: str
    reason: str


class ScanResult(NamedTuple):
    """Everything one scan found."""

    python: str
    scanned_files: int
    parsed_files: int
    skipped: list[Skipped]
    findings: list[Finding]


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

"""Which files ``pep726hook scan`` covers: installed distributions, source trees, the stdlib.

Distributions are found through ``importlib.metadata`` (or the
``importlib_metadata`` backport before Python 3.10) and listed from their
RECORD; nothing is imported.
"""

from __future__ import annotations

import fnmatch
import os
import re
import sys
import sysconfig
from typing import TYPE_CHECKING

from ._model import SourceFile, UnknownDistributionError

if sys.version_info >= (3, 10):
    import importlib.metadata as importlib_metadata
else:  # pragma: no cover - exercised on 3.8/3.9 only
    try:
        import importlib_metadata
    except ImportError:  # the backport is a declared dependency; degrade rather than fail
        import importlib.metadata as importlib_metadata  # type: ignore[no-redef]


if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

#: This package's distribution name, normalised.
_OWN_DISTRIBUTION = "pep726hook"

_SKIPPED_DIRS = frozenset(("__pycache__", "site-packages", "dist-packages"))

#: The standard library's own test packages (``test``, ``unittest/test``,
#: ``idlelib/idle_test``, ``lib2to3/tests``, ...): CPython's tests, which no
#: program imports, left out of ``--stdlib`` unless asked for.
STDLIB_TEST_DIRS = frozenset(("test", "tests", "idle_test"))


_NAME_HEADER_RE = re.compile(r"^Name:[ \t]*(\S.*?)[ \t\r]*$", re.MULTILINE)


class Exclusion:
    """``--exclude`` globs: which files, by their path relative to their root, a scan leaves out.

    The root is the directory a file's module name is relative to: the site
    directory of an installed distribution, DIR of ``--path DIR``, the
    standard library's directory.  A glob without ``/`` is matched against
    every part of the path (``tests`` leaves out every ``tests`` directory,
    ``conftest.py`` every such file); a glob with ``/`` against the path from
    its start and each of its leading directories (``pkg/_vendor`` leaves out
    that directory).  As in :mod:`fnmatch`, ``*`` also matches ``/``.
    """

    def __init__(self, globs: Sequence[str] = ()) -> None:
        part_globs: list[str] = []
        path_globs: list[str] = []
        for glob in globs:
            pattern = glob.replace(os.sep, "/").strip("/")
            while pattern.startswith("./"):
                pattern = pattern[2:]
            if not pattern or pattern == ".":
                raise ValueError(f"empty exclude pattern: {glob!r}")
            if os.path.isabs(glob):
                raise ValueError(
                    f"exclude pattern {glob!r} is absolute: patterns are matched against paths "
                    "relative to the site, --path or standard library directory"
                )
            (path_globs if "/" in pattern else part_globs).append(pattern)
        self._part = self._compile(part_globs)
        self._path = self._compile(path_globs)

    @staticmethod
    def _compile(globs: list[str]) -> re.Pattern[str] | None:
        if not globs:
            return None
        # File systems that ignore case (normcase folds it) match globs without case too.
        flags = re.IGNORECASE if os.path.normcase("A") == "a" else 0
        return re.compile("|".join(f"(?:{fnmatch.translate(glob)})" for glob in globs), flags)

    def __bool__(self) -> bool:
        return self._part is not None or self._path is not None

    def excludes(self, relative: str) -> bool:
        """Whether the ``/``-separated *relative* path, or a directory above it, is excluded."""
        parts = relative.split("/")
        if self._part is not None and any(self._part.match(part) for part in parts):
            return True
        if self._path is not None:
            for end in range(1, len(parts) + 1):
                if self._path.match("/".join(parts[:end])):
                    return True
        return False


def normalize(name: str) -> str:
    """A distribution name as PEP 503 compares them."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _distribution_header(
    dist: importlib_metadata.Distribution,
) -> tuple[str | None, frozenset[str]]:
    """The name of *dist* and the normalised names of the distributions it requires.

    The Name and Requires-Dist headers are all that is needed; a regex over the
    head of METADATA is much cheaper than the full email parse behind
    ``dist.metadata``, and one read serves both.
    """
    try:
        text = dist.read_text("METADATA")
    except Exception:  # a broken distribution must not end the scan
        text = None
    requires: frozenset[str] = frozenset()
    if text:
        head = text.partition("\n\n")[0]
        requires = frozenset(normalize(name) for name in _REQUIRES_RE.findall(head))
        match = _NAME_HEADER_RE.search(head)
        if match:
            return match.group(1), requires
    try:
        name = dist.metadata["Name"]
    except Exception:  # a broken METADATA must not end the scan
        return None, requires
    return (name if isinstance(name, str) and name else None), requires


# Any extra or environment marker counts: the requirement may hold here.
_REQUIRES_RE = re.compile(r"^Requires-Dist:[ \t]*([A-Za-z0-9][A-Za-z0-9._-]*)", re.MULTILINE)


def find_distributions(
    names: Sequence[str] = (), site: Sequence[str] | None = None
) -> list[tuple[str, importlib_metadata.Distribution]]:
    """The distributions to scan, as ``(name, distribution)`` pairs.

    *site* is the list of directories searched (``sys.path`` when None).  A
    name seen twice keeps its first distribution, as an import would.  With
    *names*, only those are returned, and :class:`UnknownDistributionError`
    lists any that were not found; without, every distribution but
    pep726hook itself.
    """
    return [(name, dist) for name, dist, _ in _find_distributions(names, site)]


def _find_distributions(
    names: Sequence[str], site: Sequence[str] | None
) -> list[tuple[str, importlib_metadata.Distribution, frozenset[str]]]:
    """:func:`find_distributions`, with what each distribution requires."""
    if site is None:
        found = importlib_metadata.distributions()
    else:
        found = importlib_metadata.distributions(path=list(site))
    by_name: dict[str, tuple[str, importlib_metadata.Distribution, frozenset[str]]] = {}
    for dist in found:
        name, requires = _distribution_header(dist)
        if name is not None:
            by_name.setdefault(normalize(name), (name, dist, requires))
    if not names:
        # pep726hook's own modules are not the user's to migrate: a scan of
        # every distribution leaves it out, naming it as DIST scans it.
        by_name.pop(_OWN_DISTRIBUTION, None)
        return [by_name[key] for key in sorted(by_name)]
    wanted = [normalize(name) for name in names]
    missing = [name for name, key in zip(names, wanted) if key not in by_name]
    if missing:
        raise UnknownDistributionError(*missing)
    return [by_name[key] for key in dict.fromkeys(wanted)]


def distribution_files(
    name: str, dist: importlib_metadata.Distribution, requires: frozenset[str] = frozenset()
) -> Iterator[SourceFile]:
    """The ``.py`` files that *dist* installed (*requires*: what it requires, normalised)."""
    # Plain string methods over RECORD instead of a PackagePath object per
    # row: large environments have tens of thousands of rows.
    record = dist.read_text("RECORD")
    if record is not None:
        # Rows are "path,hash,size", and csv quotes a path (then the row starts
        # with '"') only when it holds a comma, a quote or a line break.  So in
        # an unquoted row ".py," can only end the path, and splitting there
        # leaves each .py path at the end of a piece, after the last newline.
        pieces = record.split(".py,")
        pieces.pop()
        relatives = [piece[piece.rfind("\n") + 1 :] + ".py" for piece in pieces]
        if '"' in record:
            import csv  # rarely needed

            quoted = csv.reader(row for row in record.splitlines() if row[:1] == '"')
            relatives = [path for path in relatives if path[:1] != '"']
            relatives.extend(row[0] for row in quoted if row and row[0].endswith(".py"))
        base = str(dist.locate_file(""))
        prefix = os.path.join(base, "")
        for relative in relatives:
            if relative[:1] in "./\\" or "/." in relative or ":" in relative:
                path = os.path.normpath(os.path.join(base, relative))
                yield SourceFile(path, relative, name, requires)
            else:
                yield SourceFile(prefix + relative, relative, name, requires)
        return
    # Without RECORD (egg-info), the list comes from SOURCES.txt or
    # installed-files.txt, whose paths are often relative to a source checkout
    # rather than to the install; only the files that exist are the module's.
    for file in dist.files or ():
        if file.suffix == ".py":
            path = os.path.normpath(str(dist.locate_file(file)))
            if os.path.isfile(path):
                yield SourceFile(path, file.as_posix(), name, requires)


def tree_files(
    root: str,
    prune_site: bool = False,
    exclude: Exclusion | None = None,
    stdlib: bool = False,
    skip_dirs: frozenset[str] = frozenset(),
) -> Iterator[SourceFile]:
    """The ``.py`` files under *root*, named by their path relative to it.

    Hidden directories and ``__pycache__`` are skipped; with *prune_site*, so
    are ``site-packages``/``dist-packages`` (left to distribution scanning),
    and so are directories named in *skip_dirs*, at any depth.  Directories
    and files that *exclude* names are not visited.  A *root* that is a file
    is that file alone (whatever its name ends in: it was named), its module
    named after it.  A directory that cannot be listed comes as a
    :class:`SourceFile` whose ``unlisted`` says why, for the scan to report
    it as skipped rather than leave its files out unsaid.
    """
    root = os.path.abspath(root)
    if not os.path.isdir(root):
        name = os.path.basename(root)
        if not (exclude and exclude.excludes(name)):
            yield SourceFile(root, name, None, frozenset(), stdlib)
        return
    unlisted: list[OSError] = []
    for directory, dirs, files in os.walk(root, onerror=unlisted.append):
        for error in unlisted:
            yield _unlisted(error, root, stdlib)
        unlisted.clear()
        relative_dir = os.path.relpath(directory, root).replace(os.sep, "/")
        prefix = "" if relative_dir == "." else relative_dir + "/"
        dirs[:] = sorted(
            d
            for d in dirs
            if not d.startswith(".")
            and not (d in _SKIPPED_DIRS and (prune_site or d == "__pycache__"))
            and d not in skip_dirs
            and not (exclude and exclude.excludes(prefix + d))
        )
        for file in sorted(files):
            if file.endswith(".py") and not (exclude and exclude.excludes(prefix + file)):
                path = os.path.join(directory, file)
                yield SourceFile(path, prefix + file, None, frozenset(), stdlib)
    for error in unlisted:
        yield _unlisted(error, root, stdlib)


def _unlisted(error: OSError, root: str, stdlib: bool) -> SourceFile:
    """The stand-in of a directory under *root* that *error* kept from being listed."""
    path = str(error.filename or root)
    relative = os.path.relpath(path, root).replace(os.sep, "/")
    reason = f"cannot list directory: {error.strerror or error}"
    return SourceFile(path, relative, None, frozenset(), stdlib, reason)


def stdlib_root() -> str:
    """The directory of the running interpreter's standard library."""
    return sysconfig.get_paths()["stdlib"]


def collect_files(
    distributions: Sequence[str] = (),
    paths: Sequence[str] = (),
    stdlib: bool = False,
    site: Sequence[str] | None = None,
    exclude: Sequence[str] = (),
    *,
    stdlib_tests: bool = False,
) -> list[SourceFile]:
    """The files a scan covers.

    Installed distributions (all of them, or those named in *distributions*)
    are included unless *paths* were given without *distributions* or *site*;
    *site* replaces ``sys.path`` as the place they are looked up.  *stdlib*
    adds the standard library without its test packages
    (:data:`STDLIB_TEST_DIRS`), *stdlib_tests* with them.  Files that the
    *exclude* globs name are left out (see :class:`Exclusion`; ValueError for
    an absolute or empty glob).
    """
    exclusion = Exclusion(exclude)
    files: list[SourceFile] = []
    if distributions or site is not None or not paths:
        for name, dist, requires in _find_distributions(distributions, site):
            listed = distribution_files(name, dist, requires)
            if exclusion:
                listed = (f for f in listed if not exclusion.excludes(f.relative))
            files.extend(listed)
    if stdlib or stdlib_tests:
        skip = frozenset() if stdlib_tests else STDLIB_TEST_DIRS
        files.extend(tree_files(stdlib_root(), True, exclusion, stdlib=True, skip_dirs=skip))
    for root in paths:
        files.extend(tree_files(root, exclude=exclusion))
    return files

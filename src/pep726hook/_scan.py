"""``pep726hook scan``: find the modules that PEP 726 hooks concern, without importing them.

The scanner reads installed distributions (through ``importlib.metadata``, or
the ``importlib_metadata`` backport before Python 3.10), the standard library
or plain source trees, and reports, per module:

* module-level ``__setattr__`` / ``__delattr__`` (their behaviour changes
  once pep726hook is installed),
* the ``__class__`` workaround: a ``ModuleType`` subclass that overrides
  ``__setattr__`` / ``__delattr__`` or has setter properties, installed on the
  module itself, with the PEP 726 spelling that replaces it,
* PEP 562 ``__getattr__`` / ``__dir__`` (informational).

Nothing scanned is imported or executed: files are read as bytes, filtered
cheaply (:mod:`pep726hook._scan_filter`), and only the remaining candidates
are parsed with :mod:`ast` (:mod:`pep726hook._scan_analysis`).  This module
finds the files, reads them, shares the work between processes and is the
command line.
"""

from __future__ import annotations

import argparse
import errno
import os
import re
import stat
import sys
import sysconfig
from typing import TYPE_CHECKING, NamedTuple

from ._scan_filter import Index, ParsePlan, has_token, may_matter, plan_parse

if sys.version_info >= (3, 10):
    import importlib.metadata as importlib_metadata
else:  # pragma: no cover - exercised on 3.8/3.9 only
    try:
        import importlib_metadata
    except ImportError:  # the backport is a declared dependency; degrade rather than fail
        import importlib.metadata as importlib_metadata  # type: ignore[no-redef]

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Sequence

SCHEMA = "pep726hook.scan/1"

#: The finding kinds, in the order the report explains them.
KINDS = ("module_setattr", "module_delattr", "class_workaround", "module_getattr", "module_dir")

_KIND_ORDER = {kind: index for index, kind in enumerate(KINDS)}

_SKIPPED_DIRS = frozenset(("__pycache__", "site-packages", "dist-packages"))


class SourceFile(NamedTuple):
    """One ``.py`` file to scan and where it comes from."""

    path: str
    #: ``/``-separated path relative to the import root (site or source directory).
    relative: str
    distribution: str | None

    @property
    def module(self) -> str:
        """The dotted module name (computed on demand: few files ever need it)."""
        return _module_name(self.relative)


class Finding(NamedTuple):
    """One reported construct; the fields are those of the JSON schema."""

    distribution: str | None
    module: str
    path: str
    line: int
    kind: str
    detail: str
    suggestion: str | None


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
    """Raised for DIST names that no visible distribution has."""


# --------------------------------------------------------------------------- enumeration


_NAME_HEADER_RE = re.compile(r"^Name:[ \t]*(\S.*?)[ \t\r]*$", re.MULTILINE)


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


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


def _distribution_name(dist: importlib_metadata.Distribution) -> str | None:
    # The Name header is all that is needed; a regex over the head of METADATA
    # is much cheaper than the full email parse behind ``dist.metadata``.
    try:
        text = dist.read_text("METADATA")
    except Exception:  # a broken distribution must not end the scan
        text = None
    if text:
        match = _NAME_HEADER_RE.search(text.partition("\n\n")[0])
        if match:
            return match.group(1)
    try:
        name = dist.metadata["Name"]
    except Exception:  # a broken METADATA must not end the scan
        return None
    return name if isinstance(name, str) and name else None


def find_distributions(
    names: Sequence[str] = (), site: Sequence[str] | None = None
) -> list[tuple[str, importlib_metadata.Distribution]]:
    """The distributions to scan, as ``(name, distribution)`` pairs.

    *site* is the list of directories searched (``sys.path`` when None).  A
    name seen twice keeps its first distribution, as an import would.  With
    *names*, only those are returned, and :class:`UnknownDistributionError`
    lists any that were not found.
    """
    if site is None:
        found = importlib_metadata.distributions()
    else:
        found = importlib_metadata.distributions(path=list(site))
    by_name: dict[str, tuple[str, importlib_metadata.Distribution]] = {}
    for dist in found:
        name = _distribution_name(dist)
        if name is not None:
            by_name.setdefault(_normalize(name), (name, dist))
    if not names:
        return [by_name[key] for key in sorted(by_name)]
    wanted = [_normalize(name) for name in names]
    missing = [name for name, key in zip(names, wanted) if key not in by_name]
    if missing:
        raise UnknownDistributionError(", ".join(missing))
    return [by_name[key] for key in dict.fromkeys(wanted)]


def distribution_files(name: str, dist: importlib_metadata.Distribution) -> Iterator[SourceFile]:
    """The ``.py`` files that *dist* installed."""
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
                yield SourceFile(os.path.normpath(os.path.join(base, relative)), relative, name)
            else:
                yield SourceFile(prefix + relative, relative, name)
        return
    # Without RECORD (egg-info), the list comes from SOURCES.txt or
    # installed-files.txt, whose paths are often relative to a source checkout
    # rather than to the install; only the files that exist are the module's.
    for file in dist.files or ():
        if file.suffix == ".py":
            path = os.path.normpath(str(dist.locate_file(file)))
            if os.path.isfile(path):
                yield SourceFile(path, file.as_posix(), name)


def tree_files(root: str, prune_site: bool = False) -> Iterator[SourceFile]:
    """The ``.py`` files under *root*, named by their path relative to it.

    Hidden directories and ``__pycache__`` are skipped; with *prune_site*, so
    are ``site-packages``/``dist-packages`` (left to distribution scanning).
    """
    root = os.path.abspath(root)
    for directory, dirs, files in os.walk(root):
        dirs[:] = sorted(
            d
            for d in dirs
            if not d.startswith(".")
            and not (d in _SKIPPED_DIRS and (prune_site or d == "__pycache__"))
        )
        relative_dir = os.path.relpath(directory, root).replace(os.sep, "/")
        prefix = "" if relative_dir == "." else relative_dir + "/"
        for file in sorted(files):
            if file.endswith(".py"):
                yield SourceFile(os.path.join(directory, file), prefix + file, None)


def stdlib_root() -> str:
    """The directory of the running interpreter's standard library."""
    return sysconfig.get_paths()["stdlib"]


# --------------------------------------------------------------------------- scanning


def _python_description() -> str:
    version = ".".join(str(part) for part in sys.version_info[:3])
    implementation = {"cpython": "CPython", "pypy": "PyPy"}.get(
        sys.implementation.name, sys.implementation.name
    )
    return f"{implementation} {version}"


class _Progress:
    """A one-line counter on a terminal's stderr; silent otherwise."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.enabled = total > 200 and sys.stderr.isatty()
        self.last = 0.0
        self.shown = False

    def update(self, done: int) -> None:
        if not self.enabled:
            return
        import time

        now = time.monotonic()
        if now - self.last >= 0.1:
            self.last = now
            self.shown = True
            sys.stderr.write(f"\rpep726hook scan: {done}/{self.total} files")
            sys.stderr.flush()

    def close(self) -> None:
        if self.shown:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()


if hasattr(os, "readv"):

    def _read_into(fd: int, buffer: bytearray | memoryview) -> int:
        return os.readv(fd, [buffer])

else:  # PyPy, Windows

    def _read_into(fd: int, buffer: bytearray | memoryview) -> int:
        # os.read() allocates what it is asked for: asking for the whole
        # buffer would cost a megabyte per file (on PyPy 7.3.11 that made
        # reading ten times slower).  The caller reads on to the end.
        chunk = os.read(fd, min(len(buffer), 1 << 16))
        buffer[: len(chunk)] = chunk
        return len(chunk)


class _Reader:
    """Reads files into one buffer that is reused from file to file.

    A new ``bytes`` object per file would cost an allocation, and for large
    files fresh pages from the kernel, for content that is looked at once:
    only the few files that need parsing are copied out (:meth:`data`).
    """

    # O_NONBLOCK keeps a FIFO that happens to end in ".py" from blocking the scan.
    _FLAGS = os.O_RDONLY | getattr(os, "O_BINARY", 0) | getattr(os, "O_NONBLOCK", 0)

    def __init__(self, size: int = 1 << 20) -> None:
        self.buffer = bytearray(size)

    def read(self, path: str) -> int:
        """Read all of *path* into :attr:`buffer` and return its length (OSError if it cannot)."""
        fd = os.open(path, self._FLAGS)
        try:
            length = 0
            while True:
                if length == len(self.buffer):
                    self._grow(fd, length)
                # Read until a read returns nothing, as grep does: a short read
                # is not the end of a file on every file system.
                count = _read_into(fd, memoryview(self.buffer)[length:] if length else self.buffer)
                if not count:
                    if not length:
                        # An empty file, or a FIFO or device with nothing to read.
                        self._require_regular_file(fd)
                    return length
                length += count
        finally:
            os.close(fd)

    def _grow(self, fd: int, length: int) -> None:
        # A device such as /dev/zero would fill any buffer.
        size = self._require_regular_file(fd)
        grown = bytearray(max(2 * length, size + 1))
        grown[:length] = self.buffer
        self.buffer = grown

    @staticmethod
    def _require_regular_file(fd: int) -> int:
        """The size of the file open as *fd*; OSError unless it is a regular file.

        Only reads that return nothing or fill the buffer pay for this fstat.
        """
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        return info.st_size

    def data(self, length: int) -> bytes:
        """A copy of the first *length* bytes of the buffer."""
        return bytes(memoryview(self.buffer)[:length])


def scan_file(
    source: SourceFile, thorough: bool = False, reader: _Reader | None = None
) -> tuple[list[Finding], Skipped | None, bool]:
    """Scan one file: its findings, why it was skipped (or None), whether it was parsed.

    By default only files that :func:`plan_parse` cannot rule out are parsed,
    and only as far as needed.  With *thorough*, every file that mentions one
    of the names is parsed whole; the findings are the same (tests check that),
    but syntax errors anywhere in those files are reported.
    """
    if reader is None:
        reader = _Reader(1 << 16)
    try:
        length = reader.read(source.path)
    except OSError as exc:
        return [], Skipped(source.path, f"cannot read: {exc.strerror or exc}"), False
    buffer = reader.buffer
    if not (has_token(buffer, length) if thorough else may_matter(buffer, length)):
        return [], None, False
    data = reader.data(length)
    index = Index(data)
    plan = ParsePlan(True, []) if thorough else plan_parse(data, index, source.module)
    if not plan.whole_file and not plan.hook_lines:
        return [], None, False
    # Few files get this far.  Importing the parser (ast, tokenize) only now
    # keeps it off the start-up path, and forked workers import it in parallel.
    from ._scan_analysis import Unparsable, analyse_source, analyse_statements

    try:
        found = None
        if not plan.whole_file:
            found = analyse_statements(data, plan.hook_lines, source.path, index)
        if found is None:
            found = analyse_source(data, source.path, source.module)
    except Unparsable as exc:
        return [], Skipped(source.path, str(exc)), True
    findings = [
        Finding(source.distribution, source.module, source.path, line, kind, detail, hint)
        for line, kind, detail, hint in found
    ]
    return findings, None, True


class _Results:
    """What scanning some of the files found; picklable, to come back from a worker."""

    def __init__(self) -> None:
        self.findings: list[Finding] = []
        self.skipped: list[Skipped] = []
        self.parsed = 0
        #: Numbers of the chunks scanned, in a process that shares the work.
        self.chunks: list[int] = []

    def scan(self, files: Iterable[SourceFile], thorough: bool, reader: _Reader) -> None:
        for source in files:
            found, skip, was_parsed = scan_file(source, thorough, reader)
            self.findings.extend(found)
            if skip is not None:
                self.skipped.append(skip)
            self.parsed += was_parsed

    def add(self, other: _Results) -> None:
        self.findings.extend(other.findings)
        self.skipped.extend(other.skipped)
        self.parsed += other.parsed
        self.chunks.extend(other.chunks)


# Below this many files, forking costs more than it saves.
_FORK_THRESHOLD = 500


def _can_fork() -> bool:
    # Only where fork() is the native way to start a process: macOS system
    # libraries are not fork-safe, and spawning would re-import everything,
    # which costs more than it saves.  A child forked while another thread holds
    # a lock can deadlock, so only from a single-threaded process.
    if not sys.platform.startswith("linux") or not hasattr(os, "fork"):
        return False
    threading = sys.modules.get("threading")
    return threading is None or threading.active_count() == 1


class _Chunks:
    """The files cut into numbered chunks that processes claim one at a time.

    Claiming is reading a 4-byte number from a pipe written in full before
    any process starts: a read of 4 bytes from a pipe that holds only whole
    numbers returns exactly one, so processes sharing the read end never
    split or share one, and a process that runs faster simply claims more.
    At most 1024 numbers keep the pipe within its smallest possible size (one
    4096-byte page), so writing them all can never block.
    """

    _MAX_CHUNKS = 1024

    def __init__(self, files: list[SourceFile]) -> None:
        self.files = files
        # Small chunks balance the processes' loads; 32 files take a
        # millisecond or so, against one read() to claim them.
        self.size = max(32, -(-len(files) // self._MAX_CHUNKS))
        self.count = -(-len(files) // self.size)
        self._read_end, write_end = os.pipe()
        try:
            os.write(write_end, b"".join(n.to_bytes(4, "little") for n in range(self.count)))
        finally:
            os.close(write_end)

    def claim(self) -> int | None:
        """The number of an unclaimed chunk, or None when all are taken."""
        record = os.read(self._read_end, 4)
        return int.from_bytes(record, "little") if record else None

    def files_of(self, number: int) -> list[SourceFile]:
        return self.files[number * self.size : (number + 1) * self.size]

    def scan_claimed(self, thorough: bool, progress: _Progress | None = None) -> _Results:
        """Claim chunks and scan them until none are left."""
        results = _Results()
        reader = _Reader()
        while True:
            number = self.claim()
            if number is None:
                return results
            if progress is not None:
                # Chunks are claimed in order, so this counts the others' too.
                progress.update(number * self.size)
            results.scan(self.files_of(number), thorough, reader)
            results.chunks.append(number)

    def close(self) -> None:
        os.close(self._read_end)


def _fork_child(chunks: _Chunks, thorough: bool) -> tuple[int, int] | None:
    """Scan claimed chunks in a forked child: ``(pid, pipe to read its pickled result)``, or None."""
    import pickle

    read_end, write_end = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(read_end)
        os.close(write_end)
        return None
    if pid == 0:  # pragma: no cover - the child's coverage is not collected
        status = 1
        try:
            os.close(read_end)
            payload = pickle.dumps(chunks.scan_claimed(thorough), pickle.HIGHEST_PROTOCOL)
            with os.fdopen(write_end, "wb") as pipe:
                pipe.write(payload)
            status = 0
        finally:
            # Skip atexit handlers and the parent's buffered output copied into the child.
            os._exit(status)
    os.close(write_end)
    return pid, read_end


def _child_result(pid: int, read_end: int) -> _Results | None:
    import pickle

    with os.fdopen(read_end, "rb") as pipe:
        payload = pipe.read()
    _, status = os.waitpid(pid, 0)
    if status != 0 or not payload:
        return None
    result: _Results = pickle.loads(payload)  # our own child's output
    return result


def _scan_all(
    files: list[SourceFile], thorough: bool, jobs: int | None, progress: _Progress
) -> _Results:
    """Scan *files*, spread over *jobs* processes where that pays (see :func:`scan_files`)."""
    if jobs is None:
        jobs = 1 if len(files) < _FORK_THRESHOLD else min(os.cpu_count() or 1, 8)
    if jobs <= 1 or not _can_fork():
        results = _Results()
        results.scan(_with_progress(files, progress), thorough, _Reader())
        return results
    chunks = _Chunks(files)
    try:
        children = [child for _ in range(jobs - 1) if (child := _fork_child(chunks, thorough))]
        results = chunks.scan_claimed(thorough, progress)
    finally:
        chunks.close()
    for pid, read_end in children:
        child_results = _child_result(pid, read_end)
        if child_results is not None:
            results.add(child_results)
    # A child that failed took its chunks with it: scan them here.
    missing = sorted(set(range(chunks.count)).difference(results.chunks))
    reader = _Reader()
    for number in missing:
        results.scan(chunks.files_of(number), thorough, reader)
    return results


def _with_progress(files: list[SourceFile], progress: _Progress) -> Iterator[SourceFile]:
    for done, source in enumerate(files):
        if not done % 64:
            progress.update(done)
        yield source


def scan_files(
    files: Iterable[SourceFile], thorough: bool = False, *, jobs: int | None = None
) -> ScanResult:
    """Scan *files* (duplicates by path are scanned once); see :func:`scan_file`.

    *jobs* is the number of processes (None: one per CPU, at most 8, for scans
    of 500 files or more on Linux; 0 or 1: this process only).  Workers are
    forked, so nothing is re-imported.
    """
    unique: dict[str, SourceFile] = {}
    for source in files:
        unique.setdefault(os.path.normcase(source.path), source)
    progress = _Progress(len(unique))
    try:
        result = _scan_all(list(unique.values()), thorough, jobs, progress)
    finally:
        progress.close()
    findings = sorted(
        result.findings,
        key=lambda f: (
            f.distribution is None,
            f.distribution or "",
            f.path,
            f.line,
            _KIND_ORDER[f.kind],
        ),
    )
    skipped = sorted(result.skipped)
    return ScanResult(_python_description(), len(unique), result.parsed, skipped, findings)


def collect_files(
    distributions: Sequence[str] = (),
    paths: Sequence[str] = (),
    stdlib: bool = False,
    site: Sequence[str] | None = None,
) -> list[SourceFile]:
    """The files a scan covers.

    Installed distributions (all of them, or those named in *distributions*)
    are included unless *paths* were given without *distributions* or *site*;
    *site* replaces ``sys.path`` as the place they are looked up.  *stdlib* adds the standard library.
    """
    files: list[SourceFile] = []
    if distributions or site is not None or not paths:
        for name, dist in find_distributions(distributions, site):
            files.extend(distribution_files(name, dist))
    if stdlib:
        files.extend(tree_files(stdlib_root(), prune_site=True))
    for root in paths:
        files.extend(tree_files(root))
    return files


def scan(
    distributions: Sequence[str] = (),
    paths: Sequence[str] = (),
    *,
    stdlib: bool = False,
    site: Sequence[str] | None = None,
    thorough: bool = False,
    jobs: int | None = None,
) -> ScanResult:
    """Collect the files (see :func:`collect_files`) and scan them (see :func:`scan_files`)."""
    return scan_files(collect_files(distributions, paths, stdlib, site), thorough, jobs=jobs)


# --------------------------------------------------------------------------- command line


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
    from . import _scan_report

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
            _scan_report.write_json(result, sys.stdout)
        else:
            _scan_report.write_table(result, sys.stdout)
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader (``| head``) has gone; that is not a failed scan.  Point
        # stdout at devnull so the interpreter's final flush stays quiet.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    return 0

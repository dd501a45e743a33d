"""Scanning files: reading them, filtering, parsing the few candidates, in parallel.

Files are read as bytes into a reused buffer, filtered cheaply
(:mod:`._filter`), and only the remaining candidates are parsed with
:mod:`ast` (:mod:`._analysis`).  Large scans are shared between forked
worker processes.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
from typing import TYPE_CHECKING, NamedTuple

from .._compat import IMPLEMENTATION
from ._files import collect_files
from ._filter import Index, ParsePlan, has_token, may_matter, plan_parse
from ._model import KINDS, ScanFinding, ScanRelated, ScanResult, ScanSkipped, SourceFile

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Sequence

    from ._analysis import Item
    from ._callers import Helper

_KIND_ORDER = {kind: index for index, kind in enumerate(KINDS)}


def _python_description() -> str:
    # "CPython 3.12.1", "PyPy 3.11.13": the version as python --version says it.
    implementation = {"cpython": "CPython", "pypy": "PyPy"}.get(IMPLEMENTATION, IMPLEMENTATION)
    return f"{implementation} {sys.version.split()[0]}"


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
) -> tuple[list[ScanFinding], ScanSkipped | None, bool]:
    """Scan one file: its findings, why it was skipped (or None), whether it was parsed.

    By default only files that :func:`plan_parse` cannot rule out are parsed,
    and only as far as needed.  With *thorough*, every file that mentions one
    of the names is parsed whole; the findings are the same (tests check that),
    but syntax errors anywhere in those files are reported.
    """
    results = _Results()
    results.scan_one(source, thorough, reader or _Reader(1 << 16))
    skipped = results.skipped[0] if results.skipped else None
    return results.findings, skipped, bool(results.parsed)


def _finding(source: SourceFile, item: Item) -> ScanFinding:
    related: tuple[ScanRelated, ...] = ()
    if item.helper is not None and item.helper_line is not None:
        name = f"{source.module}.{item.helper}"
        helper = ScanRelated("helper", source.path, item.helper_line, source.module, None, name)
        related = (helper._replace(distribution=source.distribution),)
    advice = item.suggestion
    if source.stdlib and advice is not None:
        # Nobody should edit CPython to migrate it: say what the finding is for.
        from ._advice import stdlib_advice

        advice = stdlib_advice(item.kind)
    elif source.distribution is not None and advice is not None and not advice.startswith("none"):
        # Who scans an environment mostly uses what is installed in it.
        from ._advice import user_advice

        advice = user_advice(item.kind, advice)
    return ScanFinding(
        source.distribution,
        source.module,
        source.path,
        item.line,
        item.kind,
        item.detail,
        advice,
        item.confidence,
        item.class_line,
        item.install_line,
        item.read_cost,
        related,
    )


class _Work(NamedTuple):
    """What a pass over the files does: scan them, or look for calls of *helpers* in them."""

    thorough: bool = False
    helpers: tuple[Helper, ...] = ()


class _Results:
    """What a pass over some of the files found; picklable, to come back from a worker."""

    def __init__(self) -> None:
        self.findings: list[ScanFinding] = []
        self.skipped: list[ScanSkipped] = []
        self.parsed = 0
        #: Numbers of the chunks scanned, in a process that shares the work.
        self.chunks: list[int] = []
        #: ``helper_call`` findings, and each helper's finding -> its callers.
        self.calls: list[ScanFinding] = []
        self.callers: dict[ScanFinding, list[ScanRelated]] = {}

    def scan(self, files: Iterable[SourceFile], work: _Work, reader: _Reader) -> None:
        if work.helpers:
            from ._callers import find_callers

            calls, callers = find_callers(files, list(work.helpers), reader)
            self.calls.extend(calls)
            self._add_callers(callers)
            return
        for source in files:
            self.scan_one(source, work.thorough, reader)

    def scan_one(self, source: SourceFile, thorough: bool, reader: _Reader) -> None:
        """Scan one file (see :func:`scan_file`) and add what it found."""
        if source.unlisted is not None:
            self.skipped.append(ScanSkipped(source.path, source.unlisted))
            return
        try:
            length = reader.read(source.path)
        except OSError as exc:
            self.skipped.append(ScanSkipped(source.path, f"cannot read: {exc.strerror or exc}"))
            return
        buffer = reader.buffer
        if not (has_token(buffer, length) if thorough else may_matter(buffer, length)):
            return
        data = reader.data(length)
        index = Index(data)
        plan = ParsePlan(True, []) if thorough else plan_parse(data, index, source.module)
        if not plan.whole_file and not plan.hook_lines:
            return
        # Few files get this far.  Importing the parser (ast, tokenize) only now
        # keeps it off the start-up path, and forked workers import it in parallel.
        from ._analysis import analyse
        from ._parsing import Unparsable

        self.parsed += 1
        hook_lines = None if plan.whole_file else plan.hook_lines
        try:
            analysed = analyse(data, source.path, source.module, hook_lines, index)
        except Unparsable as exc:
            self.skipped.append(ScanSkipped(source.path, str(exc)))
            return
        found = [_finding(source, item) for item in analysed.found]
        self.findings.extend(found)
        if analysed.tree is not None and any(f.kind == "helper_workaround" for f in found):
            # The calls of a helper in its own module are found in the tree at
            # hand: the pass that looks for callers then need not parse it again.
            from ._callers import helpers, own_calls

            calls, callers = own_calls(analysed.tree, data, source, helpers(found))
            self.calls.extend(calls)
            self._add_callers(callers)

    def _add_callers(self, callers: dict[ScanFinding, list[ScanRelated]]) -> None:
        for finding, related in callers.items():
            self.callers.setdefault(finding, []).extend(related)

    def add(self, other: _Results) -> None:
        self.findings.extend(other.findings)
        self.skipped.extend(other.skipped)
        self.parsed += other.parsed
        self.chunks.extend(other.chunks)
        self.calls.extend(other.calls)
        self._add_callers(other.callers)


# Below this many files, forking costs more than it saves.
_FORK_THRESHOLD = 500


def _can_fork() -> bool:
    # Only where fork() is the native way to start a process: macOS system
    # libraries are not fork-safe, and spawning would re-import everything,
    # which costs more than it saves.  A child forked while another thread holds
    # a lock can deadlock, so only from a single-threaded process.
    if not sys.platform.startswith("linux") or not hasattr(os, "fork"):
        return False
    return _thread_count() == 1


def _thread_count() -> int:
    """The threads of this process, as the kernel counts them.

    ``threading.active_count()`` misses threads started with ``_thread`` or
    from C (pytest-xdist's execnet starts its worker threads that way), and
    forking beside one of those is what CPython 3.12+ warns about.
    """
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:  # /proc not mounted
        threading = sys.modules.get("threading")
        return 1 if threading is None else threading.active_count()


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

    def scan_claimed(self, work: _Work, progress: _Progress | None = None) -> _Results:
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
            results.scan(self.files_of(number), work, reader)
            results.chunks.append(number)

    def close(self) -> None:
        os.close(self._read_end)


def _fork_child(chunks: _Chunks, work: _Work) -> tuple[int, int] | None:
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
            payload = pickle.dumps(chunks.scan_claimed(work), pickle.HIGHEST_PROTOCOL)
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
    files: list[SourceFile], work: _Work, jobs: int | None, progress: _Progress
) -> _Results:
    """Scan *files*, spread over *jobs* processes where that pays (see :func:`scan_files`)."""
    if jobs is None:
        jobs = 1 if len(files) < _FORK_THRESHOLD else min(os.cpu_count() or 1, 8)
    if jobs <= 1 or not _can_fork():
        results = _Results()
        results.scan(_with_progress(files, progress), work, _Reader())
        return results
    chunks = _Chunks(files)
    try:
        children = [child for _ in range(jobs - 1) if (child := _fork_child(chunks, work))]
        results = chunks.scan_claimed(work, progress)
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
        results.scan(chunks.files_of(number), work, reader)
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
        result = _scan_all(list(unique.values()), _Work(thorough), jobs, progress)
    finally:
        progress.close()
    findings = result.findings
    if any(f.kind == "helper_workaround" for f in findings):
        findings = _with_callers(result, list(unique.values()), jobs)
    findings = sorted(
        findings,
        key=lambda f: (
            f.distribution is None,
            f.distribution or "",
            f.path,
            f.line,
            _KIND_ORDER[f.kind],
        ),
    )
    skipped = sorted(result.skipped)
    scanned = sum(source.unlisted is None for source in unique.values())
    return ScanResult(_python_description(), scanned, result.parsed, skipped, findings)


def _with_callers(first: _Results, files: list[SourceFile], jobs: int | None) -> list[ScanFinding]:
    """The findings of *first* with a ``helper_call`` finding per call of an installing helper.

    The first pass found the calls in each helper's own module.  Only scans
    that found such a helper pay for this second pass, over the files that
    can import one (shared between processes only with ``jobs``).
    """
    from ._callers import helpers, importers

    found = helpers(first.findings)
    files = importers(files, found) if found else []
    if files:
        # A byte search in each file and a few parses: less than forking costs,
        # unless asked for.
        first.add(_scan_all(files, _Work(helpers=tuple(found)), jobs or 1, _Progress(0)))
    callers = first.callers
    updated = [
        f._replace(related=f.related + tuple(sorted(callers[f], key=_place))) if f in callers else f
        for f in first.findings
    ]
    return updated + first.calls


def _place(related: ScanRelated) -> tuple[str, int]:
    return related.path, related.line


def scan(
    distributions: Sequence[str] = (),
    paths: Sequence[str] = (),
    *,
    stdlib: bool = False,
    site: Sequence[str] | None = None,
    thorough: bool = False,
    jobs: int | None = None,
    exclude: Sequence[str] = (),
    stdlib_tests: bool = False,
) -> ScanResult:
    """Find the modules that PEP 726 hooks concern, without importing them: ``pep726hook scan``.

    Scans the ``.py`` files of the installed *distributions* named (default:
    every distribution on ``sys.path``, or in the *site* directories instead,
    except pep726hook itself), of the source trees or single files in
    *paths* (then installed distributions only if *distributions* or *site*
    are given too), and with
    *stdlib* of the standard library but its own test packages (``test``,
    ``tests`` and ``idle_test`` directories), which *stdlib_tests* adds too;
    *exclude* globs leave files out, matched against their paths relative to
    their root as ``--exclude`` does.  Findings in the standard library are
    informational: their suggestions say so instead of proposing an edit.
    *thorough* parses every file that names a hook in full (same findings,
    slower, more syntax errors reported).  *jobs*: worker processes; None
    forks up to one per CPU, at most 8, for scans of 500 files or more, on
    Linux, from a process with one thread only; 1 scans in this process.

    Nothing scanned is imported or executed.  Raises LookupError
    (``UnknownDistributionError``) for a distribution name that is not
    installed, FileNotFoundError for a path that does not exist,
    NotADirectoryError for a site that is not a directory, ValueError for
    an absolute or empty exclude glob or a negative *jobs*, and TypeError for
    a single string given where a sequence of them is expected.
    """
    for argument, value in [
        ("distributions", distributions),
        ("paths", paths),
        ("site", site),
        ("exclude", exclude),
    ]:
        if isinstance(value, (str, bytes)):
            raise TypeError(f"{argument} must be a sequence of strings, not one string: {value!r}")
    for path in paths:
        if not os.path.exists(path):
            raise FileNotFoundError(errno.ENOENT, "no such file or directory", path)
    for directory in site or ():
        if not os.path.isdir(directory):
            raise NotADirectoryError(errno.ENOTDIR, "not a directory", directory)
    if jobs is not None and jobs < 0:
        raise ValueError(f"jobs must be 0 or more, not {jobs}")
    files = collect_files(distributions, paths, stdlib, site, exclude, stdlib_tests=stdlib_tests)
    return scan_files(files, thorough, jobs=jobs)

"""What keeps ``pep726hook scan`` fast must not change what it finds.

The byte-level shortcuts (the optional ``_memfind`` extension, the reusable
read buffer, RECORD parsing with string methods, the pre-filter and partial
parsing, work shared between forked processes) are each checked against the
plain way of doing the same thing.
"""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path
from typing import Any, Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pep726hook
from pep726hook import _scan
from pep726hook._scan import _filter, _scanner

try:
    from pep726hook._scan import _memfind
except ImportError:
    _memfind = None  # type: ignore[assignment]

needs_memfind = pytest.mark.skipif(
    _memfind is None, reason="pep726hook._scan._memfind is not built"
)


def python_find(haystack: Any, needle: bytes, start: int = 0, end: Any = None) -> int:
    """What ``_filter.find`` is where the extension is not built."""
    result: int = haystack.find(needle, start, end)
    return result


@pytest.fixture(params=["memfind", "bytes.find"])
def find_implementation(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run a test with the C search where it is built, and with bytes.find everywhere."""
    if request.param == "memfind":
        if _memfind is None:
            pytest.skip("pep726hook._scan._memfind is not built")
        monkeypatch.setattr(_filter, "find", _memfind.find)
    else:
        monkeypatch.setattr(_filter, "find", python_find)
    return str(request.param)


# ---------------------------------------------------------------- _memfind


@needs_memfind
@settings(max_examples=500, deadline=None)
@given(
    haystack=st.binary(max_size=40) | st.sampled_from([b"__setattr__ modules", b"a" * 100]),
    needle=st.binary(max_size=4) | st.sampled_from([b"r__", b"modules", b"attr__", b""]),
    bounds=st.lists(st.none() | st.integers(-60, 60), max_size=2),
)
def test_memfind_is_bytes_find(haystack: bytes, needle: bytes, bounds: list[int | None]) -> None:
    assert _memfind.find(haystack, needle, *bounds) == haystack.find(needle, *bounds)
    assert _memfind.find(bytearray(haystack), memoryview(needle), *bounds) == haystack.find(
        needle, *bounds
    )


@needs_memfind
def test_memfind_rejects_what_bytes_find_rejects() -> None:
    assert _memfind.find(b"abc", b"c", 0, 10**30) == 2  # out-of-range indices clamp
    with pytest.raises(TypeError, match="bytes-like object is required"):
        _memfind.find("text", b"t")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="bytes-like object is required"):
        _memfind.find(b"text", "t")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="slice indices must be integers"):
        _memfind.find(b"text", b"t", 1.5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="takes from 2 to 4 positional arguments"):
        _memfind.find(b"text")  # type: ignore[call-arg]
    with pytest.raises(BufferError):
        _memfind.find(memoryview(b"abcd")[::2], b"a")
    assert _memfind.find.__text_signature__ == (
        "($module, haystack, needle, start=None, end=None, /)"
    )


def test_extensions_are_built_where_promised() -> None:
    """PyPy never builds them; the CPython test sessions demand both (a compile
    error would otherwise just skip the tests that need them)."""
    if sys.implementation.name != "cpython":
        assert _memfind is None
        assert "native" not in pep726hook.available_engines()
        return
    if os.environ.get("PEP726HOOK_TEST_REQUIRE_EXTENSIONS") != "1":
        pytest.skip(
            "the C extensions are optional on this CPython: set"
            " PEP726HOOK_TEST_REQUIRE_EXTENSIONS=1 to demand them"
        )
    assert _memfind is not None
    assert "native" in pep726hook.available_engines()


# ---------------------------------------------------------------- reading


def test_reader_reads_files_of_any_size(tmp_path: Path) -> None:
    reader = _scanner._Reader(size=16)
    for size in (0, 1, 15, 16, 17, 100, 5000):
        path = tmp_path / f"f{size}.py"
        content = bytes(i % 251 for i in range(size))
        path.write_bytes(content)
        assert reader.data(reader.read(str(path))) == content
    assert len(reader.buffer) >= 5001


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_reader_refuses_devices(tmp_path: Path) -> None:
    reader = _scanner._Reader(size=64)
    for device in ("/dev/zero", "/dev/null"):
        link = tmp_path / f"{Path(device).name}.py"
        link.symlink_to(device)
        with pytest.raises(OSError, match="not a regular file"):
            reader.read(str(link))


# ---------------------------------------------------------------- RECORD


class FakeDistribution:
    """Just what :func:`_scan.distribution_files` reads of a distribution."""

    def __init__(self, base: Path, record: str | None) -> None:
        self.base = base
        self.record = record

    def read_text(self, name: str) -> str | None:
        assert name == "RECORD"
        return self.record

    def locate_file(self, path: str) -> Path:
        return self.base / path


def test_record_rows(tmp_path: Path) -> None:
    record = (
        "pkg/__init__.py,sha256=abc,10\r\n"
        "pkg/data.pyc,,\r\n"
        "pkg/not.py.txt,,\r\n"
        '"pkg/we,ird.py",sha256=def,3\r\n'
        '"pkg/a.py,b.py",,\r\n'
        '"pkg/quo""te.py",,\r\n'
        "../../bin/tool.py,,\r\n"
        "pkg/mod.py,,\r\n"
        "pkg-1.0.dist-info/RECORD,,\r\n"
    )
    dist: Any = FakeDistribution(tmp_path / "site", record)
    files = list(_scan.distribution_files("pkg", dist))
    base = str(tmp_path / "site")
    assert {f.relative: f.path for f in files} == {
        "pkg/__init__.py": os.path.join(base, "pkg/__init__.py"),
        "pkg/we,ird.py": os.path.join(base, "pkg/we,ird.py"),
        "pkg/a.py,b.py": os.path.join(base, "pkg/a.py,b.py"),
        'pkg/quo"te.py': os.path.join(base, 'pkg/quo"te.py'),
        "../../bin/tool.py": str(tmp_path.parent / "bin" / "tool.py"),
        "pkg/mod.py": os.path.join(base, "pkg/mod.py"),
    }
    assert {f.distribution for f in files} == {"pkg"}


def test_record_rows_agree_with_csv(tmp_path: Path) -> None:
    """The string-method parse of RECORD lists what the csv module would."""
    import csv
    import io

    rows = [
        [f"pkg/m{i}.py" if i % 3 else f"pkg/m{i}.txt", f"sha256={i}", str(i)] for i in range(200)
    ]
    rows += [["pkg/with,comma.py", "", ""], ['pkg/with"quote.py', "", ""]]
    text = io.StringIO()
    csv.writer(text, lineterminator="\n").writerows(rows)
    dist: Any = FakeDistribution(tmp_path, text.getvalue())
    listed = sorted(f.relative for f in _scan.distribution_files("pkg", dist))
    assert listed == sorted(row[0] for row in rows if row[0].endswith(".py"))


# ---------------------------------------------------------------- fast path == parse


def fast_and_thorough(tmp_path: Path, source: str, module: str = "mod") -> tuple[Any, Any]:
    path = tmp_path.joinpath(*module.split(".")).with_suffix(".py")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source))
    files = list(_scan.tree_files(str(tmp_path)))
    fast = _scan.scan_files(files, jobs=1)
    thorough = _scan.scan_files(files, thorough=True, jobs=1)
    return fast, thorough


WORKAROUND_CLASS = """\
import sys, types

class C(types.ModuleType):
    def __setattr__(self, name, value):
        pass

"""

# Each case: source, and the (line, kind) findings both paths must report.
CASES: list[tuple[str, str, list[tuple[int, str]]]] = [
    (
        "triple quote inside a short string",
        """\
        Q = '\"\"\"'
        def __getattr__(name):
            return name
        """,
        [(2, "module_getattr")],
    ),
    (
        "hook after a docstring closes on the same line",
        """\
        X = \"\"\"doc
        \"\"\"; __getattr__ = print
        """,
        [(2, "module_getattr")],
    ),
    (
        "hook spelled in a docstring and a comment",
        """\
        \"\"\"
        def __getattr__(name):
        \"\"\"
        # def __dir__(): ...
        """,
        [],
    ),
    (
        "fake class line in a string above a real top-level hook",
        """\
        Q = "'''"
        X = '''
        class Fake:
        '''
        if True:
            def __dir__():
                return []
        """,
        [(6, "module_dir")],
    ),
    (
        "method under a real class after a string with a triple quote",
        """\
        Q = "'''"
        class Real:
            def __getattr__(self, name):
                return name
        """,
        [],
    ),
    (
        "parenthesized class",
        WORKAROUND_CLASS + "sys.modules[__name__].__class__ = (C)\n",
        [(3, "class_workaround")],
    ),
    (
        "setattr on the module",
        WORKAROUND_CLASS + "setattr(sys.modules[__name__], '__class__', C)\n",
        [(3, "class_workaround")],
    ),
    (
        "alias of the module",
        WORKAROUND_CLASS + "this = sys.modules[__name__]\nthis.__class__ = C\n",
        [(3, "class_workaround")],
    ),
    ("another module's key", WORKAROUND_CLASS + "sys.modules[name] = C(name)\n", []),
    ("a literal key of another module", WORKAROUND_CLASS + "sys.modules['x'] = C('x')\n", []),
    (
        "the module's own name as key",
        WORKAROUND_CLASS + "sys.modules['pkg.mod'] = C('pkg.mod')\n",
        [(3, "class_workaround")],
    ),
    (
        "__spec__.name as key",
        WORKAROUND_CLASS + "sys.modules[__spec__.name] = C(__spec__.name)\n",
        [(3, "class_workaround")],
    ),
    (
        "a class that is not the one defined",
        WORKAROUND_CLASS + "sys.modules[__name__].__class__ = int\n",
        [],
    ),
    (
        "a dotted class",
        WORKAROUND_CLASS + "sys.modules[__name__].__class__ = types.ModuleType\n",
        [],
    ),
    (
        "a class defined in a top-level if",
        """\
        import sys, types
        if True:
            class C(types.ModuleType):
                @property
                def x(self):
                    return 1
                @x.setter
                def x(self, value):
                    pass
        sys.modules[__name__].__class__ = C
        """,
        [(3, "class_workaround")],
    ),
]


@pytest.mark.parametrize(("source", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_fast_path_agrees_with_a_full_parse(
    tmp_path: Path, find_implementation: str, source: str, expected: list[tuple[int, str]]
) -> None:
    fast, thorough = fast_and_thorough(tmp_path, source, module="pkg.mod")
    assert fast.skipped == thorough.skipped == []
    assert fast.findings == thorough.findings
    assert [(f.line, f.kind) for f in fast.findings] == expected


@pytest.mark.skipif(sys.version_info < (3, 12), reason="PEP 701 f-strings")
def test_fstrings_that_nest_their_quotes(tmp_path: Path) -> None:
    fast, thorough = fast_and_thorough(
        tmp_path,
        """\
        d = {"it's": 1}
        X = f"{d["it's"]}"
        Y = f\"\"\"{
            d[\"\"\"it's\"\"\"]
        }\"\"\"
        def __getattr__(name):
            return name
        """,
    )
    assert fast.findings == thorough.findings
    assert [(f.line, f.kind) for f in fast.findings] == [(6, "module_getattr")]


def test_hook_names_in_the_text_of_one_line_strings_are_not_parsed(
    tmp_path: Path, find_implementation: str
) -> None:
    # A long literal whose text spells a hook binding (pydoc_data's topics)
    # would otherwise be parsed whole, as the statement around the name.
    fast, thorough = fast_and_thorough(
        tmp_path,
        """\
        TOPICS = {
            'setattr': 'def __setattr__(self, name, value):\\n'
                       "    __dir__ = list  # not code\\n",
        }
        """,
    )
    assert fast.findings == thorough.findings == []
    assert fast.parsed_files == 0


def test_hook_bindings_after_strings_on_their_line_are_found(
    tmp_path: Path, find_implementation: str
) -> None:
    # Quotes are paired from the start of the line: a closed string before a
    # binding does not hide it, and a line that the line before continues
    # with a backslash (a string may go on onto it) is left to the parser.
    fast, thorough = fast_and_thorough(
        tmp_path,
        """\
        x = 'a'; __dir__ = list
        s = 'abc\\
        def'; __getattr__ = len
        """,
    )
    assert fast.findings == thorough.findings
    assert [(f.line, f.kind) for f in fast.findings] == [(1, "module_dir"), (3, "module_getattr")]


def test_fast_path_agrees_with_thorough_on_stdlib(find_implementation: str) -> None:
    """The byte-level pre-filter may only skip work: same findings as parsing everything."""
    files = list(_scan.tree_files(_scan.stdlib_root(), prune_site=True))
    assert len(files) > 500
    fast = _scan.scan_files(files, jobs=1)
    thorough = _scan.scan_files(files, thorough=True, jobs=1)
    assert fast.findings == thorough.findings
    assert fast.parsed_files < thorough.parsed_files / 2


# ---------------------------------------------------------------- sharing the work


def many_files(tmp_path: Path, count: int) -> list[_scan.SourceFile]:
    for index in range(count):
        body = "def __getattr__(name):\n    return name\n" if index % 7 == 0 else "x = 1\n"
        (tmp_path / f"m{index}.py").write_text(body)
    return list(_scan.tree_files(str(tmp_path)))


@pytest.mark.skipif(not _scanner._can_fork(), reason="workers are forked on Linux only")
def test_every_chunk_is_scanned_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files = many_files(tmp_path, 500)
    serial = _scan.scan_files(files, jobs=1)
    claimed: list[int] = []
    child_result: Callable[..., Any] = _scanner._child_result

    def recording_child_result(pid: int, read_end: int) -> Any:
        result = child_result(pid, read_end)
        claimed.extend(result.chunks)
        return result

    scan_claimed = _scanner._Chunks.scan_claimed

    def recording_scan_claimed(self: Any, *args: Any, **kwargs: Any) -> Any:
        result = scan_claimed(self, *args, **kwargs)
        claimed.extend(result.chunks)
        return result

    monkeypatch.setattr(_scanner, "_child_result", recording_child_result)
    monkeypatch.setattr(_scanner._Chunks, "scan_claimed", recording_scan_claimed)
    assert _scan.scan_files(files, jobs=3) == serial
    assert sorted(claimed) == list(range(-(-500 // 32)))


def test_chunks_never_outgrow_a_one_page_pipe(tmp_path: Path) -> None:
    source = _scan.SourceFile(str(tmp_path / "x.py"), "x.py", None)
    chunks = _scanner._Chunks([source] * 200_000)
    try:
        assert chunks.count <= 1024 and chunks.size * chunks.count >= 200_000
        numbers = []
        while (number := chunks.claim()) is not None:
            numbers.append(number)
        assert numbers == list(range(chunks.count))
    finally:
        chunks.close()

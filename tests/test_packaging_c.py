"""The C extensions' portable paths, which this machine's C library would not take.

``_memfind`` searches with the C library's ``memmem()`` where there is one and
with ``memchr()``/``memcmp()`` elsewhere (the Windows C library has no
``memmem()``).  Defining ``PEP726HOOK_MEMFIND_PORTABLE`` forces the second path;
these tests compile it that way from the source tree, next to the installed
package, and check it against ``bytes.find``.  They need the C sources (a
checkout or the sdist), a C compiler and CPython's headers, and are skipped
without them unless the session demands the extensions
(``PEP726HOOK_TEST_REQUIRE_EXTENSIONS=1``).
"""

from __future__ import annotations

import importlib.util
import os
import shlex
import subprocess
import sys
import sysconfig
from pathlib import Path
from types import ModuleType
from typing import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

SOURCE = Path(__file__).resolve().parents[1] / "src" / "pep726hook" / "_scan" / "_memfind.c"


def _compile(directory: Path, *defines: str) -> Path:
    """Build _memfind.c as an extension module file in directory."""
    if sys.implementation.name != "cpython" or os.name != "posix":
        pytest.skip(
            "builds with a POSIX C compiler for CPython (Windows always takes the portable path)"
        )
    if not SOURCE.exists():
        pytest.skip(f"no C source at {SOURCE}")
    compiler = shlex.split(sysconfig.get_config_var("CC") or "cc")
    paths = sysconfig.get_paths()
    output = directory / ("_memfind" + sysconfig.get_config_var("EXT_SUFFIX"))
    link = ["-undefined", "dynamic_lookup"] if sys.platform == "darwin" else []
    command = [
        *compiler, "-shared", "-fPIC", "-O1", *defines,
        f"-I{paths['include']}", f"-I{paths['platinclude']}",
        str(SOURCE), "-o", str(output), *link,
    ]  # fmt: skip
    try:
        subprocess.run(command, check=True, capture_output=True, text=True)
    except (OSError, subprocess.CalledProcessError) as error:
        detail = getattr(error, "stderr", "") or error
        if os.environ.get("PEP726HOOK_TEST_REQUIRE_EXTENSIONS") == "1":
            pytest.fail(f"cannot compile {SOURCE.name}: {detail}")
        pytest.skip(f"cannot compile {SOURCE.name}: {detail}")
    return output


def _load(path: Path) -> ModuleType:
    # The init function's name comes from the last part of the module's name.
    spec = importlib.util.spec_from_file_location("portable_build._memfind", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def portable_build(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    yield _compile(tmp_path_factory.mktemp("portable"), "-DPEP726HOOK_MEMFIND_PORTABLE")


@pytest.fixture(scope="module")
def portable_memfind(portable_build: Path) -> ModuleType:
    return _load(portable_build)


def test_portable_build_does_not_call_memmem(portable_build: Path, tmp_path: Path) -> None:
    # The symbol's name as the dynamic linker reads it (the docstrings mention
    # "memmem()", never followed by a NUL byte).
    assert b"memmem\x00" not in portable_build.read_bytes()
    if sys.platform.startswith("linux"):
        # The default build does, where the C library has it: the macro is what differs.
        assert b"memmem\x00" in _compile(tmp_path).read_bytes()


@settings(max_examples=500, deadline=None)
@given(
    haystack=st.binary(max_size=40) | st.sampled_from([b"__setattr__ modules", b"a" * 100]),
    needle=st.binary(max_size=4) | st.sampled_from([b"r__", b"modules", b"attr__", b""]),
    bounds=st.lists(st.none() | st.integers(-60, 60), max_size=2),
)
def test_portable_memfind_is_bytes_find(
    portable_memfind: ModuleType, haystack: bytes, needle: bytes, bounds: list[int | None]
) -> None:
    assert portable_memfind.find(haystack, needle, *bounds) == haystack.find(needle, *bounds)
    assert portable_memfind.find(bytearray(haystack), memoryview(needle), *bounds) == (
        haystack.find(needle, *bounds)
    )


@pytest.mark.parametrize(
    ("haystack", "needle"),
    [
        (b"\xff\x00\xffab", b"\xffa"),  # a first byte above 127 (memchr's int argument)
        (b"aaaaab", b"aab"),  # a partial match just before the real one
        (b"abc", b"abc"),  # the needle is the whole haystack
        (b"abc", b"abcd"),  # longer than the haystack
        (b"ab", b"b"),  # at the last position
    ],
)
def test_portable_memfind_edge_cases(
    portable_memfind: ModuleType, haystack: bytes, needle: bytes
) -> None:
    assert portable_memfind.find(haystack, needle) == haystack.find(needle)

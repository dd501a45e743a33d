"""Test, lint and transparency sessions; ``tools/run-tests.sh`` is the entry point.

Interpreters are found on PATH as ``python3.X`` and ``pypy3``; with pyenv, set
``PYENV_VERSION=3.13.0:3.12.1:3.11.7:3.10.13:3.9.18:3.8.18`` (``tools/run-tests.sh``
does).  Virtual environments are reused between runs: every session reinstalls
the project itself (``pip install .``, never editable, so the C extension is
built the way users get it), only the dependencies are kept.
"""

from __future__ import annotations

import nox
import nox.command

nox.options.reuse_venv = "yes"
nox.options.error_on_missing_interpreters = True
nox.options.sessions = ["lint", "tests", "cpython_import_tests"]

CPYTHONS = ["3.8", "3.9", "3.10", "3.11", "3.12", "3.13"]
PYTHONS = [*CPYTHONS, "pypy3"]
TEST_DEPS = ["pytest>=7", "hypothesis>=6"]
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
    session.install(*TEST_DEPS)
    _install_project(session)
    session.run(
        "python",
        "-c",
        "import pep726hook; print('pep726hook engines:', pep726hook.available_engines())",
    )
    # Run from the tests directory's parent, against the installed package
    # (src/ is not on sys.path).  pytest's exit status 5 ("no tests ran") is a
    # failure here like any other non-zero status.  On CPython both C
    # extensions must have been built: a compile error must fail the session,
    # not quietly skip the tests that need them.
    cpython = session.python != "pypy3"
    env = {"PEP726HOOK_TEST_REQUIRE_EXTENSIONS": "1" if cpython else "0"}
    session.run("python", "-m", "pytest", *session.posargs, env=env)


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

"""The ``pep726hook`` command line outside the program it runs: help, version, ``info``, ``scan``.

What the command prints itself ends as python's own ``--help`` does when the
reader of a pipe goes away (``| head -1``): quietly, with the status it would
have had.  Ctrl-C ends every subcommand as it ends python: the traceback, then
death by SIGINT.  The runner's own behaviour is in test_runner.py.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from _venv import TIMEOUT, Venv, describe, write

import pep726hook

POSIX = os.name == "posix"
ENTRY_POINTS = {
    "pep726hook": ["pep726hook"],
    "python -m pep726hook": ["python", "-m", "pep726hook"],
}
# Each subcommand that prints something of its own, and a word of what it prints.
OWN_OUTPUT = {
    "--help": (["--help"], "usage:"),
    "-h": (["-h"], "usage:"),
    "--version": (["--version"], "pep726hook "),
    "run --help": (["run", "--help"], "usage:"),
    "info": (["info"], "engines available:"),
    "info --help": (["info", "--help"], "usage:"),
    "info -h": (["info", "-h"], "usage:"),
    "scan --help": (["scan", "--help"], "usage:"),
    # The report opens with what pep726hook changes for the findings.
    "scan": (["scan", "--path", "tree"], "Under pep726hook"),
}
HOOKED_TREE = "def __setattr__(name, value):\n    globals()[name] = value\n"


def command(venv: Venv, argv: list[str]) -> list[str]:
    """*argv* with its program resolved in the venv, as Venv.run resolves it."""
    candidate = venv.bin / argv[0]
    return [str(candidate) if candidate.exists() else argv[0], *argv[1:]]


def run_with_reader_gone(
    venv: Venv, argv: list[str], cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run *argv* with stdout a pipe whose reader has already gone (every write fails)."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run(
            command(venv, argv),
            stdout=write_end,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            env=venv.env(env),
            cwd=str(cwd),
            text=True,
            timeout=TIMEOUT,
            check=False,
        )
    finally:
        os.close(write_end)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A working directory with a source tree for ``scan`` to report on."""
    for index in range(800):  # more report than a pipe holds (64 KiB)
        write(tmp_path / "tree" / f"hooked_{index}.py", HOOKED_TREE)
    return tmp_path


def test_help_and_version(venv: Venv) -> None:
    for argv in (["pep726hook", "--help"], ["python", "-m", "pep726hook", "-h"]):
        result = venv.run(argv)
        assert result.returncode == 0, describe(result)
        assert "usage:" in result.stdout
        assert "-m module" in result.stdout
        assert "info" in result.stdout
    result = venv.run(["pep726hook", "--version"])
    assert result.returncode == 0
    assert result.stdout.startswith(f"pep726hook {pep726hook.__version__} (")


@pytest.mark.parametrize("spelling", ["--help", "-h"])
def test_info_has_help(venv: Venv, spelling: str) -> None:
    result = venv.run(["pep726hook", "info", spelling])
    assert result.returncode == 0, describe(result)
    assert result.stdout.startswith("usage: pep726hook info [-h]\n")
    assert "$PEP726HOOK_ENGINE" in result.stdout
    assert result.stderr == ""


def test_info_refuses_other_arguments(venv: Venv) -> None:
    result = venv.run(["pep726hook", "info", "extra"])
    assert result.returncode == 2, describe(result)
    assert result.stderr.splitlines()[-1] == (
        "pep726hook: error: info takes no arguments, not 'extra'"
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([], "missing TARGET"),
        (["--engine", "bogus", "x.py"], "invalid choice: 'bogus'"),
        (["--engine"], "expected one argument"),
        (["--bogus", "x.py"], "unrecognized option '--bogus'"),
        (["-m"], "argument -m: expected a module name"),
        (["-c"], "argument -c: expected code"),
        (["--"], "missing TARGET after '--'"),
        (["-"], "standard input"),
    ],
)
def test_usage_errors(venv: Venv, argv: list[str], message: str) -> None:
    result = venv.run(["pep726hook", *argv])
    assert result.returncode == 2, describe(result)
    assert result.stderr.startswith("usage: pep726hook")
    last_line = result.stderr.splitlines()[-1]
    assert last_line.startswith("pep726hook: error: ")
    assert message in last_line
    assert "Traceback" not in result.stderr


def test_scan_subcommand_is_dispatched(venv: Venv, tmp_path: Path) -> None:
    write(tmp_path / "scan", "print('the script named scan')\n")
    result = venv.run(["pep726hook", "scan", "--help"], cwd=tmp_path)
    assert result.returncode == 0, describe(result)
    assert "the script named scan" not in result.stdout
    assert result.stdout.startswith("usage: ")
    assert "Traceback" not in result.stderr, describe(result)


@pytest.mark.skipif(not POSIX, reason="pipes and signals as POSIX has them")
@pytest.mark.parametrize("unbuffered", ["", "1"], ids=["buffered", "unbuffered"])
@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
@pytest.mark.parametrize("case", sorted(OWN_OUTPUT))
def test_own_output_to_a_reader_that_has_gone_ends_quietly(
    venv: Venv, tree: Path, case: str, entry: str, unbuffered: str
) -> None:
    argv, _word = OWN_OUTPUT[case]
    full = [*ENTRY_POINTS[entry], *argv]
    expected = venv.run(full, cwd=tree)
    env = {"PYTHONUNBUFFERED": unbuffered} if unbuffered else None
    result = run_with_reader_gone(venv, full, tree, env)
    # No "BrokenPipeError", no "Exception ignored": python's own --help is
    # silent there, and the status is the one a reader that stayed sees.
    assert result.stderr == "", describe(result)
    assert result.returncode == expected.returncode, describe(result)


@pytest.mark.skipif(
    not POSIX or shutil.which("head") is None, reason="needs a POSIX shell and head"
)
@pytest.mark.parametrize("case", ["--help", "info --help", "scan --help", "scan"])
def test_first_line_through_head_as_python_help(venv: Venv, tree: Path, case: str) -> None:
    argv, word = OWN_OUTPUT[case]
    # Not compared with `python --help | head -1` run here: whether head has
    # gone before python's last write is a race, and python then dies of
    # SIGPIPE (141) where it otherwise exits 0.  Ours ends quietly with the
    # status of a reader that stayed, whichever way the race goes.
    line = " ".join(command(venv, ["pep726hook", *argv]))
    # Unbuffered, each write of ours reaches the pipe on its own: the case
    # where head had gone before a later write came.
    script = f'{line} | head -1; echo "status ${{PIPESTATUS[0]}}"'
    status = venv.run(["pep726hook", *argv], cwd=tree).returncode
    for _ in range(5):
        result = venv.run(["bash", "-c", script], env={"PYTHONUNBUFFERED": "1"}, cwd=tree)
        lines = result.stdout.splitlines()
        assert len(lines) == 2 and word in lines[0], describe(result)
        assert result.stderr == "", describe(result)
        assert lines[1] == f"status {status}", describe(result)


@pytest.mark.skipif(not POSIX, reason="a shell's >&- closes a descriptor")
@pytest.mark.parametrize("case", ["--help", "--version", "info", "scan --help"])
def test_own_output_with_stdout_closed_is_skipped_as_python_does(
    venv: Venv, tmp_path: Path, case: str
) -> None:
    argv, _word = OWN_OUTPUT[case]
    python = venv.run(["sh", "-c", "python --help >&-"])
    assert (python.returncode, python.stderr) == (0, ""), describe(python)
    line = " ".join(command(venv, ["pep726hook", *argv]))
    result = venv.run(["sh", "-c", f"{line} >&-"], cwd=tmp_path)
    assert (result.returncode, result.stderr) == (0, ""), describe(result)


# Delivers Ctrl-C (SIGINT) while the process writes its first output: the
# moment a user's Ctrl-C most often meets a command that prints.  A test run
# started as a background job (`nox ... &` from a script) passes SIGINT on
# ignored, and python then installs no handler for it: the child first takes
# the handler a terminal user's python has.
INTERRUPT_ON_FIRST_WRITE = """\
import os, signal, sys

signal.signal(signal.SIGINT, signal.default_int_handler)

class InterruptOnFirstWrite:
    def __init__(self, stream):
        self.stream = stream
        self.sent = False

    def write(self, text):
        if not self.sent:
            self.sent = True
            os.kill(os.getpid(), signal.SIGINT)
        return self.stream.write(text)

    def __getattr__(self, name):
        return getattr(self.stream, name)

sys.stdout = InterruptOnFirstWrite(sys.stdout)
"""


@pytest.mark.skipif(not POSIX, reason="death by a signal is POSIX's")
@pytest.mark.parametrize(
    "case", ["--help", "--version", "info", "info --help", "scan --help", "scan"]
)
def test_ctrl_c_ends_a_subcommand_as_it_ends_python(venv: Venv, tree: Path, case: str) -> None:
    argv, _word = OWN_OUTPUT[case]
    write(tree / "interrupting" / "sitecustomize.py", INTERRUPT_ON_FIRST_WRITE)
    env = {"PYTHONPATH": str(tree / "interrupting")}
    expected = venv.run(["python", "-c", "print('hello')"], env=env, cwd=tree)
    assert expected.returncode == -signal.SIGINT, describe(expected)
    for entry in ENTRY_POINTS.values():
        result = venv.run([*entry, *argv], env=env, cwd=tree)
        assert result.returncode == expected.returncode, describe(result)
        assert result.stderr.startswith("Traceback (most recent call last):\n"), describe(result)
        assert result.stderr.endswith("\nKeyboardInterrupt\n"), describe(result)


# Every help the command prints, and its usage on a usage error.
HELPS = {
    "--help": ["--help"],
    "-h": ["-h"],
    "run --help": ["run", "--help"],
    "info --help": ["info", "--help"],
    "scan --help": ["scan", "--help"],
    "usage error": ["--bogus"],
}


@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
@pytest.mark.parametrize("case", sorted(HELPS))
def test_help_fits_80_columns_broken_between_words(venv: Venv, case: str, entry: str) -> None:
    argv = [*ENTRY_POINTS[entry], *HELPS[case]]
    words = None
    for columns in (60, 80, 120):
        result = venv.run(argv, env={"COLUMNS": str(columns)})
        assert result.returncode == (2 if case == "usage error" else 0), describe(result)
        text = result.stderr if case == "usage error" else result.stdout
        lines = text.splitlines()
        if case == "usage error":
            lines = lines[:-1]  # the message, on one line as argparse writes it
        for line in lines:
            # Only a word longer than a line (the documentation's URL) goes beyond.
            assert len(line) <= min(columns, 80) or len(line.split()) == 1, (columns, line)
            assert len(line) <= 80, (columns, line)
        # No word was cut in two: the same words at every width.
        if words is None:
            words = text.split()
        assert text.split() == words, columns


@pytest.mark.parametrize("columns", ["0", "-1", "wide"])
@pytest.mark.parametrize("case", ["--help", "info --help", "scan --help"])
def test_help_ignores_columns_that_is_no_positive_number(
    venv: Venv, case: str, columns: str
) -> None:
    # As Python's shutil.get_terminal_size() does: the output is no terminal, so 80.
    argv = ["pep726hook", *HELPS[case]]
    expected = venv.run(argv, env={"COLUMNS": "80"})
    result = venv.run(argv, env={"COLUMNS": columns})
    assert (result.returncode, result.stderr) == (0, ""), describe(result)
    assert result.stdout == expected.stdout


def test_scan_of_a_bad_path_is_a_usage_error(venv: Venv, tmp_path: Path) -> None:
    for argv, message in [
        (["--path", "missing"], "argument --path: no such file or directory: missing"),
        (["./missing"], "no installed distribution named ./missing on sys.path"),
        (["--site", "missing"], "argument --site: no such file or directory: missing"),
    ]:
        result = venv.run(["pep726hook", "scan", *argv], cwd=tmp_path)
        assert result.returncode == 2, describe(result)
        assert result.stdout == "" and "Traceback" not in result.stderr, describe(result)
        assert result.stderr.startswith("usage: pep726hook scan"), describe(result)
        assert f"pep726hook scan: error: {message}" in result.stderr, describe(result)


def test_python_version_is_shown_as_python_shows_it(venv: Venv) -> None:
    python = venv.run(["python", "--version"])
    version = (python.stdout or python.stderr).split()[1]
    result = venv.run(["pep726hook", "--version"])
    assert f" {version}; engines: " in result.stdout, describe(result)
    assert sys.implementation.name in result.stdout

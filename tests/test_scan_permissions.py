"""``pep726hook scan`` on a path that its user may not read, run by that user even as root."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import tempfile
from typing import Any, Callable

import pytest

import pep726hook
from pep726hook import _scan

#: The user a test drops to when it runs as root, which reads every file (CI runs as root).
_NOBODY = 65534


def _without_privileges(run: Callable[[], Any]) -> Any:
    """``run()``'s result (JSON-able), run by an unprivileged user.

    As root, a forked child drops to the user nobody before it runs, so that
    file permissions apply to it as they do to everyone else; otherwise it
    runs here.  The child cannot read root's files (the interpreter's own
    directory among them), so what it imports must be imported first, here.
    """
    if os.geteuid() != 0:
        return run()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through the pipe
        outcome: Any = {"failed": "no result"}
        try:
            os.close(read_end)
            os.setgroups([])
            os.setgid(_NOBODY)
            os.setuid(_NOBODY)
            outcome = {"result": run()}
        except BaseException as exc:  # any failure must reach the parent
            outcome = {"failed": repr(exc)}
        finally:
            os.write(write_end, json.dumps(outcome).encode())
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        data = pipe.read()
    os.waitpid(pid, 0)
    outcome = json.loads(data.decode())
    assert "failed" not in outcome, f"child failed: {outcome['failed']}"
    return outcome["result"]


def _main_without_privileges(argv: list[str]) -> tuple[int, str]:
    """``_scan.main(argv)`` run by an unprivileged user: its status and what it wrote to stderr."""
    # Warm the imports of the usage-error path before a fork.
    with contextlib.redirect_stderr(io.StringIO()):
        _scan.main(["--path", os.path.join(argv[-1], "missing")])

    def run() -> tuple[int, str]:
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            return _scan.main(argv), err.getvalue()

    status, text = _without_privileges(run)
    return status, text


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs POSIX users and fork")
@pytest.mark.parametrize("what", ["file", "directory"])
def test_path_without_read_permission_is_a_usage_error(what: str) -> None:
    # Made where the unprivileged user can reach it: pytest's own temporary
    # directories are private to the user running the tests.
    base = tempfile.mkdtemp(prefix="pep726hook-scan-")
    try:
        os.chmod(base, 0o755)
        path = os.path.join(base, "private")
        if what == "file":
            with open(path, "w") as file:
                file.write("def __dir__(): ...\n")
        else:
            os.mkdir(path)
        os.chmod(path, 0)
        status, err = _main_without_privileges(["--path", path])
    finally:
        # Removing needs write permission on base only, which its owner has.
        shutil.rmtree(base)
    assert status == 2, err
    assert "Traceback" not in err
    assert err.endswith(f"argument --path: cannot read {path}: Permission denied\n")


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs POSIX users and fork")
def test_a_file_it_may_not_read_in_a_scanned_tree_is_skipped_with_the_reason() -> None:
    base = tempfile.mkdtemp(prefix="pep726hook-scan-")
    try:
        os.chmod(base, 0o755)
        readable = os.path.join(base, "readable.py")
        private = os.path.join(base, "private.py")
        for path in (readable, private):
            with open(path, "w") as file:
                file.write("def __setattr__(name, value): ...\n")
        os.chmod(readable, 0o644)
        os.chmod(private, 0)
        # Warm what the scan imports (its parser among them) before a fork.
        pep726hook.scan(paths=[readable], jobs=1)

        def run() -> tuple[list[str], list[list[str]]]:
            result = pep726hook.scan(paths=[base], jobs=1)
            return (
                sorted(finding.path for finding in result.findings),
                [list(skipped) for skipped in result.skipped],
            )

        found, skipped = _without_privileges(run)
    finally:
        shutil.rmtree(base)
    assert found == [readable]
    assert skipped == [[private, "cannot read: Permission denied"]]

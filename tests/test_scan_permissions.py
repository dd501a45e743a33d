"""``pep726hook scan`` on a path that its user may not read, run by that user even as root."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import sys
import tempfile

import pytest

from pep726hook import _scan

#: The user a test drops to when it runs as root, which reads every file (CI runs as root).
_NOBODY = 65534


def _main_without_privileges(argv: list[str]) -> tuple[int, str]:
    """``_scan.main(argv)`` run by an unprivileged user: its status and what it wrote to stderr.

    As root, a forked child drops to the user nobody before it runs, so that
    file permissions apply to it as they do to everyone else; otherwise it
    runs here.  The child cannot read root's files (the interpreter's own
    directory among them), so what it imports is imported first, here.
    """
    if os.geteuid() != 0:
        err = io.StringIO()
        saved, sys.stderr = sys.stderr, err
        try:
            return _scan.main(argv), err.getvalue()
        finally:
            sys.stderr = saved
    # Warm the imports of the usage-error path before forking.
    with contextlib.redirect_stderr(io.StringIO()):
        _scan.main(["--path", os.path.join(argv[-1], "missing")])
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through the pipe
        status, text = 70, ""
        try:
            os.close(read_end)
            os.setgroups([])
            os.setgid(_NOBODY)
            os.setuid(_NOBODY)
            err = io.StringIO()
            sys.stderr = err
            status, text = _scan.main(argv), err.getvalue()
        except BaseException as exc:  # any failure must reach the parent
            text = f"child failed: {exc!r}"
        finally:
            os.write(write_end, json.dumps([status, text]).encode())
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        data = pipe.read()
    os.waitpid(pid, 0)
    status, text = json.loads(data.decode())
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

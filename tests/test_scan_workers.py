"""``pep726hook scan`` sharing its work: progress on a terminal, forked workers and the threads beside them."""

from __future__ import annotations

import _thread
import io
import os
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest
from _scan_helpers import (
    build_site,
)

from pep726hook import _scan
from pep726hook._scan import _scanner


@pytest.fixture
def site(tmp_path: Path) -> Path:
    return build_site(tmp_path)


def test_progress_only_on_a_terminal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for index in range(300):
        (tmp_path / f"m{index}.py").write_text("x = 1\n")

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    _scan.scan(paths=[str(tmp_path)], jobs=1)
    assert "pep726hook scan:" in terminal.getvalue()
    assert terminal.getvalue().endswith("\r\x1b[K")


def test_forked_workers_give_the_same_result(site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files = _scan.collect_files(site=[str(site)])
    serial = _scan.scan_files(files, jobs=1)
    forks = []
    fork_child = _scanner._fork_child

    def counting_fork_child(*args: Any) -> Any:
        forks.append(args)
        return fork_child(*args)

    monkeypatch.setattr(_scanner, "_fork_child", counting_fork_child)
    assert _scan.scan_files(files, jobs=3) == serial
    assert len(forks) == (2 if _scanner._can_fork() else 0)

    # A child that fails has its share scanned by the parent.
    def failed_child(pid: int, read_end: int) -> None:
        os.close(read_end)
        os.waitpid(pid, 0)

    monkeypatch.setattr(_scanner, "_child_result", failed_child)
    assert _scan.scan_files(files, jobs=2) == serial


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="workers are forked on Linux only")
def test_no_fork_beside_a_thread_that_threading_does_not_know(site: Path) -> None:
    # pytest-xdist's execnet starts its threads with _thread, which
    # threading.active_count() does not see; forking beside one of them is
    # what CPython 3.12+ warns about ("This process is multi-threaded").
    started, release = _thread.allocate_lock(), _thread.allocate_lock()
    started.acquire()
    release.acquire()

    def wait() -> None:
        started.release()
        with release:
            pass

    _thread.start_new_thread(wait, ())
    started.acquire()
    try:
        assert not _scanner._can_fork()
        with warnings.catch_warnings():
            warnings.simplefilter("error", DeprecationWarning)
            _scan.scan_files(_scan.collect_files(site=[str(site)]), jobs=3)
    finally:
        release.release()

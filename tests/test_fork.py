"""fork() while another thread installs and uninstalls: no child may hang.

A child process gets a copy of every lock as it was at the fork, held or not,
and only the forking thread.  A lock held by any other thread at that moment
stays held for ever in the child, and the child's first install() or
uninstall() that needs it hangs.  That covers pep726hook's own locks and the
import system's per-module locks while another thread is importing one of
pep726hook's modules (the first install() of a process imports them).

Each round is a fresh interpreter whose main thread forks ten children while a
second thread loops ``install(engine); uninstall()``: the first fork while that
thread's first install() imports the package's modules (a finder of the test
holds that import open until the fork), the others at random points.
Every child runs under an alarm: a hung child dies of SIGALRM and is counted,
instead of hanging the test.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from _venv import clean_env

import pep726hook

pytestmark = pytest.mark.skipif(
    not hasattr(os, "fork") or not hasattr(os, "register_at_fork"),
    reason="needs os.fork and os.register_at_fork (POSIX)",
)

ROUNDS = 4  # fresh interpreters per engine, run side by side
CHILDREN = 10
CHILD_ALARM = 5  # seconds before a child that has not finished counts as hung
ROUND_LIMIT = 60.0  # seconds before a whole round counts as hung

FORK_WHILE_INSTALLING = """
import os, signal, sys, threading, time, warnings
import pep726hook

warnings.simplefilter("ignore", DeprecationWarning)  # 3.12+: fork() with threads
engine, children_count, alarm = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
importing = threading.Event()
forked = threading.Event()


class PauseFirstImportOfThePackage:
    # Holds the worker's first import of one of the package's modules (its
    # import lock taken) until the main thread has forked, or for half a
    # second if the fork waits for that import to end.
    def find_spec(self, name, path=None, target=None):
        if name.startswith("pep726hook.") and not importing.is_set():
            importing.set()
            forked.wait(0.5)
        return None


sys.meta_path.insert(0, PauseFirstImportOfThePackage())
stop = threading.Event()

def churn():
    while not stop.is_set():
        pep726hook.install(engine)
        pep726hook.uninstall()

worker = threading.Thread(target=churn, daemon=True)
worker.start()
importing.wait(5)
children = []
for i in range(children_count):
    # The first fork lands while the worker imports the package's modules,
    # the others while it installs and uninstalls.
    time.sleep(0.0002 * i)
    pid = os.fork()
    if pid == 0:
        signal.alarm(alarm)
        pep726hook.install(engine)
        pep726hook.uninstall()
        os._exit(0)
    forked.set()
    children.append(pid)
stop.set()
worker.join()
failed = sum(os.waitpid(pid, 0)[1] != 0 for pid in children)
print(failed, "of", len(children), "children hung or failed")
"""


@pytest.mark.parametrize("engine_name", pep726hook.available_engines())
def test_children_forked_while_another_thread_installs_never_hang(engine_name: str) -> None:
    command = [
        sys.executable,
        "-c",
        FORK_WHILE_INSTALLING,
        engine_name,
        str(CHILDREN),
        str(CHILD_ALARM),
    ]
    rounds = [
        subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=clean_env(),  # no $PEP726HOOK: the package is imported by the rounds
        )
        for _ in range(ROUNDS)
    ]
    outcomes = []
    for process in rounds:
        try:
            stdout, stderr = process.communicate(timeout=ROUND_LIMIT)
        except subprocess.TimeoutExpired:
            process.kill()
            stdout, stderr = process.communicate()
            stderr = f"round hung after {ROUND_LIMIT:.0f}s\n{stderr}"
        outcomes.append((process.returncode, stdout, stderr))
    expected = f"0 of {CHILDREN} children hung or failed\n"
    assert [o for o in outcomes if o[:2] != (0, expected)] == []

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


# Registering the fork handlers costs every process that merely imports the
# package (PEP726HOOK=1 start-up does): they are registered with
# os.register_at_fork only when a lock of the package is first needed.
REGISTRATIONS = """
import os
registered = []
register = os.register_at_fork
os.register_at_fork = lambda **handlers: registered.append(handlers) or register(**handlers)
import pep726hook
print(len(registered))
pep726hook.available_engines  # a lazy import: takes the package's import lock
print(len(registered))
"""


@pytest.mark.skipif(not hasattr(os, "register_at_fork"), reason="POSIX only")
def test_fork_handlers_are_registered_at_the_first_lazy_import_not_at_import() -> None:
    result = subprocess.run(
        [sys.executable, "-c", REGISTRATIONS],
        capture_output=True,
        text=True,
        env=clean_env(),  # no $PEP726HOOK: the package is imported by the program
        check=True,
    )
    assert result.stdout == "0\n1\n"


# The interpreter keeps its fork handlers to its very end: were they the
# package's functions, their namespace would keep every module of the package
# alive through finalisation, which then clears each one name by name
# (+0.7M instructions of `python -c pass` with PEP726HOOK=1 and the class
# engine, CPython 3.12).
MODULES_OUTLIVING_THE_PACKAGE = """
import gc, os, sys, weakref
import pep726hook
pep726hook.install("class")  # registers the fork handlers and every lock's guard
pep726hook.uninstall()
names = [name for name in sys.modules if name.partition(".")[0] == "pep726hook"]
modules = [weakref.ref(sys.modules.pop(name)) for name in names]
del pep726hook
gc.collect()
print(len(names) > 3, [m().__name__ for m in modules if m() is not None])
pid = os.fork()  # the handlers of a package that is gone take nothing
if pid == 0:
    os._exit(0)
print(os.waitpid(pid, 0)[1])
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="POSIX only")
def test_fork_handlers_keep_no_module_of_the_package_alive() -> None:
    result = subprocess.run(
        [sys.executable, "-c", MODULES_OUTLIVING_THE_PACKAGE],
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=60,
        check=False,
    )
    assert (result.returncode, result.stdout, result.stderr) == (0, "True []\n0\n", "")


REGISTERED_TWICE = """
import os, threading
import pep726hook
import pep726hook._state as state
pep726hook.install()
pep726hook.uninstall()
# A second registration, as two threads' first lazy imports may both make.
os.register_at_fork(
    before=pep726hook._before_fork,
    after_in_parent=pep726hook._after_fork_in_parent,
    after_in_child=pep726hook._after_fork_in_child,
)
pid = os.fork()
if pid == 0:
    pep726hook.install()
    pep726hook.uninstall()
    os._exit(0)
assert os.waitpid(pid, 0)[1] == 0
# Every lock the fork took is free again for another thread.
free = []
def take():
    free.append(pep726hook._import_lock.acquire(timeout=5))
    free.append(state.lock.acquire(timeout=5))
thread = threading.Thread(target=take)
thread.start()
thread.join()
print(free)
"""


def test_fork_handlers_registered_twice_take_and_release_each_lock_once() -> None:
    result = subprocess.run(
        [sys.executable, "-W", "ignore::DeprecationWarning", "-c", REGISTERED_TWICE],
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=60,
        check=False,
    )
    assert (result.returncode, result.stdout, result.stderr) == (0, "[True, True]\n", "")


def test_fork_handlers_leave_the_locks_alone_after_a_fork_they_did_not_prepare() -> None:
    # Handlers registered while another thread's fork is under way run only
    # its second half: the parent's must not release what the first never took.
    pep726hook._after_fork_in_parent()
    assert pep726hook._import_lock.acquire(blocking=False)
    pep726hook._import_lock.release()

"""Deprecated module attributes under ``-W error``: each deprecated access raises, and nothing else does."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from _deprecation_helpers import LIBRARY, MESSAGE
from _venv import (
    ENGINES,
    TIMEOUT,
    clean_env,
    describe,
)

# -- -W error ------------------------------------------------------------------------------

W_ERROR_CHILD = """
import sys
import depmod
from depmod import plain
failures = []
def expect_error(what, action):
    try:
        action()
    except DeprecationWarning as error:
        failures.append(f"{what}: {error}")
    else:
        failures.append(f"{what}: no error")
expect_error("read", lambda: depmod.Old)
expect_error("getattr", lambda: getattr(depmod, "Old"))
expect_error("hasattr", lambda: hasattr(depmod, "Old"))
def from_import():
    from depmod import Old
expect_error("from-import", from_import)
expect_error("store", lambda: setattr(depmod, "Old", 1))
expect_error("delete", lambda: delattr(depmod, "Old"))
assert depmod.plain == 1 and depmod.New
depmod.plain = 2
del depmod.plain
print("\\n".join(failures))
"""


@pytest.mark.parametrize("engine_name", ENGINES)
@pytest.mark.parametrize("installed", [False, True])
def test_w_error_turns_each_deprecated_access_into_an_exception_and_nothing_else(
    engine_name: str, installed: bool, tmp_path: Path
) -> None:
    (tmp_path / "depmod.py").write_text(textwrap.dedent(LIBRARY), encoding="utf-8")
    env = clean_env()
    env["PEP726HOOK_ENGINE"] = engine_name
    env["PYTHONPATH"] = str(tmp_path)
    if installed:
        env["PEP726HOOK"] = "1"
    result = subprocess.run(
        [sys.executable, "-W", "error::DeprecationWarning", "-c", W_ERROR_CHILD],
        capture_output=True,
        text=True,
        env=env,
        timeout=TIMEOUT,
        check=False,
    )
    assert result.returncode == 0, describe(result)
    what = ["read", "getattr", "hasattr", "from-import", "store", "delete"]
    # A store ends the deprecation only once it warned: under -W error the
    # warning is raised first, so every access still meets the deprecated name.
    assert result.stdout.splitlines() == [f"{w}: {MESSAGE}" for w in what]

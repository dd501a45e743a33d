"""What the native-engine tests share: a module with logging hooks, a fresh interpreter to run code in."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import types
from pathlib import Path
from typing import Any

import pytest

import pep726hook
from pep726hook import _native_engine

ModuleType = types.ModuleType
SRC = str(Path(pep726hook.__file__).resolve().parent.parent)
_MISSING = object()
# Stores that find a namespace without hooks often enough for the native
# engine to remember it (3.12+ watch a namespace after a few such stores).
HOOKLESS_STORES = 20

#: A module of native-engine tests runs only where the extension loads.
REQUIRES_NATIVE = pytest.mark.skipif(
    "native" not in pep726hook.available_engines(),
    reason=f"native engine unavailable: {_native_engine.unavailable_reason()}",
)


def hooked_module(
    name: str = "hooked", log: list[Any] | None = None, cls: type = ModuleType
) -> Any:
    """Return a module of class *cls* whose hooks append to *log*."""
    module = cls(name)
    record = [] if log is None else log
    module.__dict__["__setattr__"] = lambda n, v: record.append(("set", n, v))
    module.__dict__["__delattr__"] = lambda n: record.append(("del", n))
    return module


def run_python(code: str) -> subprocess.CompletedProcess[str]:
    """Run *code* in a fresh interpreter with our sources importable."""
    env = dict(os.environ, PYTHONPATH=SRC)
    env.pop("PEP726HOOK", None)
    env.pop("PEP726HOOK_ENGINE", None)
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


def _subclass_calling_super() -> type:
    # The shape of mpmath 1.4.1's guard class.
    class Guard(ModuleType):
        calls: list[str] = []  # noqa: RUF012

        def __setattr__(self, name: str, value: Any) -> None:
            type(self).calls.append(f"guard set {name}")
            super().__setattr__(name, value)

        def __delattr__(self, name: str) -> None:
            type(self).calls.append(f"guard del {name}")
            super().__delattr__(name)

    return Guard

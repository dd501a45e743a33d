"""Facts about the running interpreter, each named once.

Every ``sys.version_info`` / ``sys.implementation`` / GIL question the package
asks is answered here, under a name that says what the answer is used for, so
that a reader looking for "what differs on 3.12" or "what differs on PyPy"
finds it in one file.  Start-up code imports this module, so it imports nothing
but :mod:`sys` and stays a handful of assignments.
"""

import sys

IMPLEMENTATION: str = sys.implementation.name
VERSION: "tuple[int, int]" = (sys.version_info[0], sys.version_info[1])
CPYTHON = IMPLEMENTATION == "cpython"
# Free-threaded builds carry "t" in their ABI flags (PEP 703).  Checked without
# sysconfig, whose import would cost start-up more than this whole package.
FREE_THREADED = "t" in getattr(sys, "abiflags", "")
CPYTHON_WITH_GIL = CPYTHON and not FREE_THREADED

# --- engines, finder and activation ------------------------------------------------------

# --- runner --------------------------------------------------------------------------------

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

# setup.py builds the native engine's C extension only there: it rewrites
# ModuleType's slot in place, which threads of a free-threaded build read
# without a lock (docs/native-engine.md, "Free-threaded builds").
NATIVE_ENGINE_IS_BUILT = CPYTHON_WITH_GIL
# Python 3.12 dropped find_module() from the import system: finders without
# find_spec() are skipped there, and asked the old way before (pytest#12179).
ASK_LEGACY_FINDERS = VERSION < (3, 12)
# Python 3.15 dropped the load_module() fallback (gh-97850): the import system
# calls exec_module() on every loader.
LEGACY_LOADERS_ARE_RUN = VERSION < (3, 15)
# CPython trims importlib's frames from a failing module body's traceback by
# their file name ("<frozen importlib._bootstrap>"); PyPy trims nothing.
TRIMS_IMPORTLIB_FRAMES = CPYTHON

# --- runner --------------------------------------------------------------------------------

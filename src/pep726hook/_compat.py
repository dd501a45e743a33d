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
# CPython 3.12+ give each interpreter its own dict of every builtin type;
# before, all interpreters share ModuleType's dict (and so the native
# engine's entries in it).
TYPE_DICTS_ARE_PER_INTERPRETER = CPYTHON and VERSION >= (3, 12)
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

# What `python TARGET` gives the program, version by version, which the runner
# reproduces (_runner.py); then how CPython's file reader reads a script.

# 3.9+ make a script's __main__.__file__, its code objects' file name and the
# sys.path entry of a directory or zip file target absolute; 3.8 keeps the
# path as typed.
MAIN_PATHS_ARE_ABSOLUTE = VERSION >= (3, 9)
# How a relative path becomes absolute there.  CPython puts the working
# directory and a separator in front of the path as typed, nothing normalised
# (`./bin/../tool.py` stays `/cwd/./bin/../tool.py`, and the working directory
# `/` gives `//tool.py`), and keeps an absolute path as typed; so does PyPy
# 3.11 for a script's __file__.  PyPy 3.9's __file__, PyPy's file name of a
# script's code (tracebacks, warnings) and PyPy's directory and zip file
# targets are os.path.abspath's normalised path, absolute or not.
MAIN_SCRIPT_PATH_IS_NORMALISED = IMPLEMENTATION == "pypy" and VERSION < (3, 11)
MAIN_CODE_PATH_IS_NORMALISED = IMPLEMENTATION == "pypy"
MAIN_DIRECTORY_PATH_IS_NORMALISED = IMPLEMENTATION == "pypy"
# __main__ starts with an empty __annotations__ dict before 3.14, which
# creates module annotations only when asked for (PEP 649).
MAIN_HAS_ANNOTATIONS_DICT = VERSION < (3, 14)
# 3.15 sets __cached__ on no module, __main__ included (neither runpy nor
# `python script.py` does): spec.cached is where it lives now.
MAIN_HAS_CACHED = VERSION < (3, 15)
# 3.15 compiles a script and -c code as module "__main__", which is what a
# `-W error::SyntaxWarning:__main__` filter matches.
COMPILES_MAIN_AS_A_MODULE = VERSION >= (3, 15)
# `python -c CODE` honours a PEP 263 coding declaration in CODE on 3.8 and
# 3.9 (CPython and PyPy); CPython 3.10+ and PyPy 3.11 compile the command as
# the text it is.
COMMAND_HONOURS_CODING_DECLARATION = VERSION < (3, 10)
# CPython 3.13+ put the source of -c code into linecache before running it,
# so that tracebacks (and, where it is keyed by file name, warnings) show its
# lines.  How it is keyed changed within 3.13 (3.13.0: the file name "<string>";
# 3.13.5 and 3.14+: each code object of it), so the runner asks linecache itself.
COMMAND_SOURCE_IN_LINECACHE = CPYTHON and VERSION >= (3, 13)
# An uncaught exception is also recorded as sys.last_exc from 3.12 on.
RECORDS_LAST_EXC = VERSION >= (3, 12)
# "can't open file 'x.py'": CPython quotes the missing script's name, PyPy does not.
QUOTES_A_MISSING_SCRIPT = IMPLEMENTATION != "pypy"

# CPython's file reader reads a script unlike compile() of the same bytes
# (_runner_source.py); PyPy reads a script as compile() does.
FILE_READER_DIFFERS_FROM_COMPILE = CPYTHON
# 3.8 and 3.9: the old tokenizer reads newlines universally and reports a
# source that ends too early on the line after the last, without its text.
OLD_FILE_TOKENIZER = VERSION < (3, 10)
# 3.10's file tokenizer has read one line ahead when it meets an
# undecodable byte: the error names the line after it.
FILE_READER_READS_A_LINE_AHEAD = VERSION == (3, 10)
# 3.14+ decode the whole file before tokenizing: an undeclared non-UTF-8 byte
# is compile()'s own error plus the file name, declared UTF-8 is checked, and
# a declared encoding is checked from the end of the declaration's line on.
FILE_READER_DECODES_THE_FILE = VERSION >= (3, 14)
# 3.8's SyntaxError for an undecodable script carries its line number.
ENCODING_ERRORS_HAVE_A_LINE = VERSION < (3, 9)
# Where the "Non-UTF-8 code" message sends the reader.
PEP_263_URL = (
    "http://python.org/dev/peps/pep-0263/"
    if VERSION < (3, 9)
    else "https://python.org/dev/peps/pep-0263/"
    if VERSION < (3, 11)
    else "https://peps.python.org/pep-0263/"
)

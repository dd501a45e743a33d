"""Run a script, module, directory, zip file or code string as ``__main__``.

The runner does what ``python TARGET args`` does, with the hook already
installed: it prepares ``sys.argv``, ``sys.path[0]`` and a real ``__main__``
module (the shape of coverage.py's ``execfile.PyRunner``), then runs the
target's code in that module.  Module resolution (``-m``, and ``__main__`` of a
directory or zip file) is runpy's own, as pdb and cProfile use it, so packages,
error messages and ``__spec__`` come out as Python gives them.
"""

from __future__ import annotations

import builtins
import contextlib
import os
import re
import runpy
import sys
from importlib.machinery import BuiltinImporter, SourceFileLoader, SourcelessFileLoader
from importlib.util import MAGIC_NUMBER

from ._class_engine import defines_hooks
from ._finder import code_may_define_hooks
from ._install import is_installed, upgrade

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import CodeType, ModuleType, TracebackType
    from typing import Any, NoReturn, Sequence
else:
    ModuleType = type(sys)

_NUL_TO_END_OF_LINE = re.compile(rb"\0[^\n]*\n?")
# PEP 263's regular expression, on bytes.
_CODING_DECLARATION = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")
# 3.15 no longer sets __cached__ on any module, __main__ included (neither
# runpy nor `python script.py` does): spec.cached is where it lives now.
_MODULES_HAVE_CACHED = sys.version_info < (3, 15)

# Files whose frames are ours or runpy's: they are trimmed from the front of a
# traceback so that the user sees what ``python TARGET`` would have shown.
_HERE = os.path.dirname(os.path.abspath(__file__))
_RUNNER_FILES = frozenset(
    {
        os.path.join(_HERE, "_runner.py"),
        os.path.join(_HERE, "_cli.py"),
        os.path.join(_HERE, "__main__.py"),
        os.path.abspath(runpy.__file__) if runpy.__file__ else "",
        "<frozen runpy>",
    }
)


class TargetError(Exception):
    """The target cannot be run; the message is what ``python`` would say.

    *status* is the exit status ``python`` itself gives for the same mistake.
    """

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


class _RunpyError(Exception):
    """Raised by runpy's module resolution for a module it cannot run."""


class Runner:
    """Prepares ``__main__`` for one target, then runs it.

    *kind* is ``"script"`` (a file, a directory or a zip file), ``"module"``
    (``-m``) or ``"code"`` (``-c``); *target* is the path, module name or
    source as typed; *args* are the target's own arguments.
    """

    def __init__(self, kind: str, target: str, args: Sequence[str]) -> None:
        if kind not in ("script", "module", "code"):
            raise ValueError(f"unknown target kind {kind!r}")
        self.kind = kind
        self.target = target
        self.args = list(args)
        self.module: ModuleType | None = None
        self.code: CodeType | None = None

    # -- preparing ---------------------------------------------------------

    def prepare(self) -> ModuleType:
        """Set up ``sys.argv``, ``sys.path[0]`` and a fresh ``__main__``; return it.

        Raises :class:`TargetError` when the target cannot be found or read.
        Code that the target owns may already run here: ``-m pkg.mod`` imports
        ``pkg`` first, as Python does, so install the hook before calling this.
        """
        if self.kind == "code":
            self._prepare_code()
        elif self.kind == "module":
            self._prepare_module()
        else:
            importer = _path_importer(self.target)
            if importer is None:
                self._prepare_script()
            else:
                self._prepare_main_of(self.target)
        module = self.module
        assert module is not None
        # A module object, never a bare dict: pickle looks classes up on
        # sys.modules['__main__'] (cpython#132737).
        sys.modules["__main__"] = module
        # Upgraded before its code runs when that code can bind a hook, so
        # `import __main__; __main__.x = 1` calls it while the body still runs;
        # any other __main__ stays a plain module, as the finder leaves
        # modules whose code cannot bind one (issue 13, finding 15).
        assert self.code is not None
        if code_may_define_hooks(self.code):
            upgrade(module)
        return module

    def _prepare_code(self) -> None:
        # python -c puts '' (the current directory, looked up at each import) first.
        _set_path0("")
        sys.argv = ["-c", *self.args]
        self.code = _compile(self.target.encode("utf-8"), "<string>")
        self.module = _new_main({"__loader__": BuiltinImporter})

    def _prepare_module(self) -> None:
        _set_path0(os.getcwd())
        # While the module is being found, Python reports argv[0] as "-m".
        sys.argv = ["-m", *self.args]
        try:
            _name, spec, code = runpy._get_module_details(  # type: ignore[attr-defined]
                self.target, _RunpyError
            )
        except _RunpyError as error:
            raise TargetError(str(error), 1) from None
        self.code = code
        self.module = _new_main(_namespace_from_spec(spec))
        sys.argv[0] = spec.origin

    def _prepare_main_of(self, location: str) -> None:
        """A directory or zip file: run its ``__main__`` as Python does (via runpy)."""
        path_entry = location if sys.version_info < (3, 9) else os.path.abspath(location)
        # Python puts the archive first even under -P: that is where __main__ is.
        if _safe_path():
            sys.path.insert(0, path_entry)
        else:
            _set_path0(path_entry)
        sys.argv = [self.target, *self.args]
        try:
            _name, spec, code = runpy._get_main_module_details(  # type: ignore[attr-defined]
                _RunpyError
            )
        except _RunpyError as error:
            raise TargetError(str(error), 1) from None
        self.code = code
        self.module = _new_main(_namespace_from_spec(spec))

    def _prepare_script(self) -> None:
        typed = self.target
        # 3.9+ gives __main__.__file__ (and code objects) the absolute path.
        filename = typed if sys.version_info < (3, 9) else os.path.abspath(typed)
        try:
            with open(typed, "rb") as file:
                data = file.read()
        except OSError as error:
            # 3.8 names the file as typed; 3.9+ by its absolute path; PyPy
            # does not quote it.
            shown = filename if sys.implementation.name == "pypy" else repr(filename)
            raise TargetError(
                f"can't open file {shown}: [Errno {error.errno}] {error.strerror}", 2
            ) from None
        if not _safe_path():
            # Python uses the directory of the script with symlinks resolved.
            _set_path0(os.path.dirname(os.path.realpath(typed)))
        sys.argv = [typed, *self.args]
        loader: Any
        if _is_compiled(typed, data):
            loader = SourcelessFileLoader("__main__", filename)
            try:
                self.code = loader.get_code("__main__")
            except ImportError as error:
                raise TargetError(f"can't run {shown_name(typed)}: {error}", 1) from None
        else:
            loader = SourceFileLoader("__main__", filename)
            self.code = _compile_script(_as_python_reads_a_script(data, filename), filename)
        namespace: dict[str, Any] = {"__file__": filename, "__loader__": loader}
        if _MODULES_HAVE_CACHED:
            namespace["__cached__"] = None
        self.module = _new_main(namespace)

    # -- running -----------------------------------------------------------

    def run(self) -> int:
        """Run the prepared code in ``__main__``; return the exit status.

        ``SystemExit`` passes through untouched.  Any other exception is
        reported through ``sys.excepthook`` without our frames and gives 1;
        ``KeyboardInterrupt`` is re-raised once reported (see
        :func:`report_exception`).
        """
        if self.module is None or self.code is None:
            self.prepare()
        module, code = self.module, self.code
        assert module is not None and code is not None
        try:
            exec(code, module.__dict__)
        except SystemExit:
            raise
        except BaseException as error:
            return report_exception(error)
        finally:
            # A hook bound another way (globals()[...], exec) still counts for
            # what runs after the body: threads, atexit handlers.
            if is_installed() and defines_hooks(module):
                upgrade(module)
        return 0


def report_exception(error: BaseException) -> int:
    """Print *error* as an uncaught exception, minus runner frames; return its status.

    A ``KeyboardInterrupt`` is raised again once printed, for the interpreter
    to end the process as it ends ``python TARGET`` after Ctrl-C.
    """
    error.__traceback__ = without_runner_frames(error.__traceback__)
    # What the interpreter records for an uncaught exception, for pdb.pm() in
    # `python -i` style post-mortems and for atexit handlers that look.
    sys.last_type, sys.last_value, sys.last_traceback = (
        type(error),
        error,
        error.__traceback__,
    )
    if sys.version_info >= (3, 12):
        sys.last_exc = error
    sys.excepthook(type(error), error, error.__traceback__)
    if isinstance(error, KeyboardInterrupt):
        _leave_as_interrupted(error)
    return 1


def _leave_as_interrupted(error: KeyboardInterrupt) -> NoReturn:
    """Let *error*, already printed, end the process the way the interpreter does.

    After Ctrl-C, CPython (3.8+) and PyPy shut down as usual, atexit handlers
    included, and then kill themselves with SIGINT, so that a parent sees the
    signal (a shell loop stops; ``subprocess`` reports -2).  They do so only
    for a ``KeyboardInterrupt`` that leaves the main program, so ours leaves;
    a one-shot excepthook keeps the interpreter from printing it again.
    """
    shown = error.__traceback__
    previous = sys.excepthook

    def already_reported(
        exc_type: type[BaseException], exc: BaseException, traceback: TracebackType | None
    ) -> None:
        sys.excepthook = previous
        if exc is not error:
            previous(exc_type, exc, traceback)
            return
        # Post-mortem tools see what was printed, not our frames.
        error.__traceback__ = sys.last_traceback = shown
        if sys.version_info >= (3, 12):
            sys.last_exc = error

    sys.excepthook = already_reported
    raise error


def without_runner_frames(traceback: TracebackType | None) -> TracebackType | None:
    """Drop the leading frames that belong to the runner (or runpy) from *traceback*."""
    while traceback is not None and traceback.tb_frame.f_code.co_filename in _RUNNER_FILES:
        traceback = traceback.tb_next
    return traceback


def shown_name(path: str) -> str:
    """Quote *path* the way Python's own start-up messages do."""
    return repr(os.path.abspath(path))


def _path_importer(path: str) -> object | None:
    """Return the path entry finder for *path* if it is a directory or zip file.

    This is how runpy and Python's start-up tell "run ``__main__`` from here"
    apart from "run this file".
    """
    import pkgutil

    if not os.path.exists(path):
        return None
    try:
        return pkgutil.get_importer(path)
    except ImportError:
        return None


def _safe_path() -> bool:
    # -P / PYTHONSAFEPATH (3.11+): nothing unsafe is put in front of sys.path.
    return bool(getattr(sys.flags, "safe_path", False))


def _set_path0(entry: str) -> None:
    """Replace the entry Python put first for the runner itself with the target's."""
    if _safe_path():
        return
    if sys.path:
        sys.path[0] = entry
    else:
        sys.path.insert(0, entry)


def _is_compiled(path: str, data: bytes) -> bool:
    return path.endswith(".pyc") or data[:4] == MAGIC_NUMBER


def _compile(source: bytes, filename: str) -> CodeType:
    # Bytes so that a coding declaration is honoured; dont_inherit so that our
    # own `from __future__ import annotations` does not leak into the target.
    if sys.version_info >= (3, 15):
        # 3.15 compiles a script and -c code as module "__main__", which is
        # what a `-W error::SyntaxWarning:__main__` filter matches.
        return compile(source, filename, "exec", dont_inherit=True, module="__main__")
    return compile(source, filename, "exec", dont_inherit=True)


# Errors a 3.8/3.9 parser raises when the source ends too early.
_EOF_ERRORS = ("unexpected EOF while parsing", "expected an indented block")
_NO_BLOCK_AT_EOF = "expected an indented block"  # 3.10+: "... after 'if' statement on line 1"
_NON_UTF_8 = "Non-UTF-8 code starting with "


def _compile_script(source: bytes, filename: str) -> CodeType:
    """Compile a script's source as ``python SCRIPT`` does, errors included.

    CPython reads a script through its file tokenizer, which, when the source
    ends too early, has already moved past the last line, where compile()'s
    string tokenizer stays on it (issue 13, finding 14).  3.8 and 3.9 then
    report the error on the line after the last, with no text (an unclosed
    triple-quoted string: numbered past even that line), and read newlines
    universally; 3.10+ keep the line but an indented block missing at the end
    has no column.
    """
    if not _CPYTHON:
        return _compile(source, filename)
    old_tokenizer = sys.version_info < (3, 10)
    if old_tokenizer:
        source = source.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    try:
        return _compile(source, filename)
    except SyntaxError as error:
        lines = source.splitlines()
        at_end = error.lineno == max(len(lines), 1) and (error.offset or 0) > len(
            (error.text or "").rstrip("\r\n")
        )
        if not old_tokenizer:
            if error.msg.startswith(_NON_UTF_8) and sys.version_info >= (3, 14):
                # "... starting with '\xff' in file /abs/script.py on line 1, ..."
                head, _, tail = error.msg.partition(" on line ")
                error.msg = f"{head} in file {filename} on line {tail}"
                error.args = (error.msg, *error.args[1:])
            if at_end and error.msg.startswith(_NO_BLOCK_AT_EOF):
                error.offset = 0
                error.args = (error.msg, (*error.args[1][:2], 0, *error.args[1][3:]))
            raise
        if error.msg == "EOF while scanning triple-quoted string literal":
            error.lineno = source.count(b"\n") + 2
        elif at_end and error.msg in _EOF_ERRORS:
            error.lineno, error.text = len(lines) + 1, ""
        else:
            raise
        error.args = (error.msg, (error.filename, error.lineno, error.offset, error.text))
        raise


def _null_bytes_are_a_syntax_error() -> bool:
    # gh-96670 (CPython 3.11.x, 3.12): the parser itself refuses NUL bytes, in
    # strings as in files; before, compile() raised ValueError for a string
    # and the file reader silently cut each line at its NUL.
    try:
        compile(b"\0", "<probe>", "exec", dont_inherit=True)
    except SyntaxError:
        return True
    except ValueError:
        return False
    return True


_CPYTHON = sys.implementation.name == "cpython"
_PEP_263 = (
    "http://python.org/dev/peps/pep-0263/"
    if sys.version_info < (3, 9)
    else "https://python.org/dev/peps/pep-0263/"
    if sys.version_info < (3, 11)
    else "https://peps.python.org/pep-0263/"
)


def _as_python_reads_a_script(data: bytes, filename: str) -> bytes:
    """Return the source ``python SCRIPT`` would compile, or raise its SyntaxError.

    CPython reads a script through its file tokenizer, which treats NUL bytes
    and undecodable bytes differently from ``compile()`` of the same bytes
    (issue 13, finding 14): the runner must fail, or run, as ``python`` does.
    """
    nul = data.find(b"\0")
    if nul >= 0:
        if not _null_bytes_are_a_syntax_error():
            # CPython 3.8-3.10: the line ends at its NUL; the rest of it,
            # newline included, is never seen.  PyPy 3.9 has rules of its own.
            return _NUL_TO_END_OF_LINE.sub(b"", data) if _CPYTHON else data
        line_start = data.rfind(b"\n", 0, nul) + 1
        lineno = data.count(b"\n", 0, nul) + 1
        text = data[line_start:nul].decode("utf-8", "replace")
        raise SyntaxError(
            "source code cannot contain null bytes", (filename, lineno, 0, text, lineno, 0)
        )
    if not _CPYTHON:
        return data
    declared = _declared_encoding(data)
    if declared is None:
        if sys.version_info < (3, 14):
            # 3.14+: compile() reports it (_compile_script adds "in file ...").
            _check_undeclared_utf_8(data, filename)
    elif _is_utf_8(declared):
        # The file reader passes declared UTF-8 through undecoded: compile()
        # then fails as python does, except 3.14+, which decodes the file.
        if sys.version_info >= (3, 14):
            _check_declared_utf_8(data, filename)
    else:
        with contextlib.suppress(LookupError):  # compile() reports it as python does
            _check_declared(data, declared, filename)
    return data


def _check_declared(data: bytes, declared: str, filename: str) -> None:
    first_newline = data.find(b"\n")
    on_first_line = _CODING_DECLARATION.match(data[: max(first_newline, 0)]) is not None
    if sys.version_info >= (3, 14):
        # The file reader decodes from the newline that ends the
        # declaration's line on, and counts the byte's position from there.
        rest = first_newline if on_first_line else data.find(b"\n", first_newline + 1)
        try:
            data[max(rest, 0) :].decode(declared)
        except UnicodeDecodeError as error:
            raise SyntaxError(str(error), (filename, 0, -1, None, None, None)) from None
        return
    try:
        data.decode(declared)
    except UnicodeDecodeError:
        message = f"encoding problem: {declared}"
        if sys.version_info < (3, 9):
            # Numbered as the line that declares the encoding.
            declaration_line = 1 if on_first_line else 2
            raise SyntaxError(message, (filename, declaration_line, 0, None)) from None
        raise SyntaxError(message) from None


def _check_undeclared_utf_8(data: bytes, filename: str) -> None:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as error:
        lineno = data.count(b"\n", 0, error.start) + 1
        if sys.version_info[:2] == (3, 10):
            lineno += 1  # 3.10's file tokenizer has read one line ahead
        shown = filename if sys.version_info < (3, 9) else os.path.abspath(filename)
        message = (
            f"Non-UTF-8 code starting with '\\x{data[error.start]:02x}' in file {shown} "
            f"on line {lineno}, but no encoding declared; see {_PEP_263} for details"
        )
        if sys.version_info < (3, 9):
            raise SyntaxError(message, (filename, lineno, 0, None)) from None
        raise SyntaxError(message) from None


def _is_utf_8(encoding: str) -> bool:
    # The tokenizer's own normalisation (get_normal_name): "UTF_8", "utf-8-sig"...
    name = encoding[:12].lower().replace("_", "-")
    return name == "utf-8" or name.startswith("utf-8-")


def _check_declared_utf_8(data: bytes, filename: str) -> None:
    """Raise the SyntaxError 3.14+'s file reader gives for invalid declared UTF-8."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as error:
        line_start = data.rfind(b"\n", 0, error.start) + 1
        line_end = data.find(b"\n", error.start)
        line = data[line_start : len(data) if line_end < 0 else line_end + 1]
        try:
            line.decode("utf-8")
        except UnicodeDecodeError as in_line:
            lineno = data.count(b"\n", 0, error.start) + 1
            text = line.decode("utf-8", "replace")
            raise SyntaxError(
                f"(unicode error) {in_line}", (filename, lineno, 0, text, lineno, -1)
            ) from None


def _declared_encoding(data: bytes) -> str | None:
    """Return the PEP 263 coding declaration of the first two lines, if any."""
    for line in data.split(b"\n", 2)[:2]:
        match = _CODING_DECLARATION.match(line)
        if match:
            return match.group(1).decode("ascii")
    return None


def _namespace_from_spec(spec: Any) -> dict[str, Any]:
    # The globals runpy._run_code gives a module run with `python -m`.
    namespace = {
        "__file__": spec.origin,
        "__loader__": spec.loader,
        "__package__": spec.parent,
        "__spec__": spec,
    }
    if _MODULES_HAVE_CACHED:
        namespace["__cached__"] = spec.cached
    return namespace


def _new_main(extra: dict[str, Any]) -> ModuleType:
    """Return a fresh ``__main__`` with the globals Python gives its main module."""
    module = ModuleType("__main__")
    namespace = module.__dict__
    if sys.version_info < (3, 14):
        # 3.14 creates module annotations lazily (PEP 649); before, __main__ has them.
        namespace["__annotations__"] = {}
    namespace.update(
        {
            "__builtins__": builtins,
            "__doc__": None,
            "__loader__": None,
            "__package__": None,
            "__spec__": None,
        }
    )
    namespace.update(extra)
    return module

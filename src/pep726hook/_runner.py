"""Run a script, module, directory, zip file or code string as ``__main__``.

The runner does what ``python TARGET args`` does, with the hook already
installed: a :class:`Runner` prepares ``sys.argv``, ``sys.path[0]`` and a real
``__main__`` module, then runs the target's code in that module (the shape of
coverage.py's ``execfile.PyRunner``).  Module resolution (``-m``, and
``__main__`` of a directory or zip file) is runpy's own, as pdb and cProfile
use it, so packages, error messages and ``__spec__`` come out as Python gives
them.

The common command lines, ``[run] [--engine E] [--fast-getattr] [--] TARGET [args...]``, are
parsed here too, so that ``python -m pep726hook TARGET`` starts its program
without the full command (:mod:`._cli`: help, version, ``info``, ``scan``,
usage errors).

Every program started through the runner pays for what this module imports
before its first line runs, so it imports only what the target needs: runpy
for a module, a directory or a zip file, the file reader's rules
(:mod:`._runner_source`) for a script, nothing for ``-c`` code (but
:mod:`linecache` on CPython 3.13+, as python itself).  The native engine
starts as ``PEP726HOOK=1`` starts it (the package's ``__init__``), without
``install()`` and the engines, which are imported only for the class engine,
a program that binds a hook, or an engine that cannot start that way.  This
module has no ``from __future__`` import: ``exec()`` of ``-c`` code inherits
the future features of the module that calls it.
"""

import os
import sys

from . import _ACTIVATION_VARIABLE as ACTIVATION_VARIABLE
from . import _ENGINE_VARIABLE as ENGINE_VARIABLE
from . import _FAST_GETATTR_VARIABLE as FAST_GETATTR_VARIABLE
from . import _fast_getattr_is_off as fast_getattr_is_off
from . import _start_native_engine as start_native_engine
from ._compat import (
    COMMAND_HONOURS_CODING_DECLARATION,
    COMMAND_SOURCE_IN_LINECACHE,
    COMPILES_MAIN_AS_A_MODULE,
    MAIN_CODE_PATH_IS_NORMALISED,
    MAIN_DIRECTORY_PATH_IS_NORMALISED,
    MAIN_HAS_ANNOTATIONS_DICT,
    MAIN_HAS_CACHED,
    MAIN_PATHS_ARE_ABSOLUTE,
    MAIN_SCRIPT_PATH_IS_NORMALISED,
    QUOTES_A_MISSING_SCRIPT,
    RECORDS_LAST_EXC,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import CodeType, ModuleType, TracebackType
    from typing import Any, NoReturn, Sequence
else:
    ModuleType = type(sys)

# PEP 726's two names: a module binds a hook by defining one of them.
_HOOK_NAMES = ("__setattr__", "__delattr__")
_HERE = os.path.dirname(os.path.abspath(__file__))
# Our own files, whose frames are trimmed from the front of a traceback so
# that the user sees what ``python TARGET`` would have shown (runpy's too).
_RUNNER_FILES = frozenset(
    os.path.join(_HERE, name)
    for name in ("_runner.py", "_runner_source.py", "_cli.py", "__main__.py")
)


# What the hook is said to be turned on by (`pep726hook info`, pytest's header).
ROUTE = "the runner"


class UsageError(Exception):
    """The command line is wrong; the message says how."""


class Options:
    """What the command line asks for."""

    def __init__(
        self,
        action: str,
        kind: str = "",
        target: str = "",
        args: "Sequence[str]" = (),
        engine: "str | None" = None,
        *,
        fast_getattr: bool = False,
    ) -> None:
        self.action = action
        self.kind = kind
        self.target = target
        self.args: list[str] = list(args)
        self.engine: str | None = engine
        # --fast-getattr: the switch on, whatever $PEP726HOOK_FAST_GETATTR says.
        self.fast_getattr = fast_getattr

    def __repr__(self) -> str:
        return (
            f"Options(action={self.action!r}, kind={self.kind!r}, target={self.target!r}, "
            f"args={self.args!r}, engine={self.engine!r}, fast_getattr={self.fast_getattr!r})"
        )


def parse_run_arguments(argv: "Sequence[str]") -> Options:
    """Parse ``[--engine E] [--fast-getattr] [--] TARGET [args...]``; raise :class:`UsageError`."""
    engine: str | None = None
    fast_getattr = False
    index = 0
    while index < len(argv):
        arg = argv[index]
        if arg == "--":
            if index + 1 >= len(argv):
                raise UsageError("missing TARGET after '--'")
            return Options(
                "run",
                "script",
                argv[index + 1],
                argv[index + 2 :],
                engine,
                fast_getattr=fast_getattr,
            )
        if arg in ("-h", "--help"):
            return Options("help")
        if arg == "--version":
            return Options("version")
        if arg == "--engine" or arg.startswith("--engine="):
            engine, index = _engine_option(argv, index)
            continue
        if arg == "--fast-getattr":
            fast_getattr = True
            index += 1
            continue
        if arg.startswith(("-m", "-c")):
            options = _flagged_target(argv, index, engine)
            options.fast_getattr = fast_getattr
            return options
        if arg == "-":
            raise UsageError("reading the program from standard input is not supported")
        if arg.startswith("-"):
            raise UsageError(
                f"unrecognized option {arg!r} (the program's own options go after TARGET)"
            )
        return Options("run", "script", arg, argv[index + 1 :], engine, fast_getattr=fast_getattr)
    raise UsageError("missing TARGET (a script, a directory or zip file, -m module or -c code)")


def _engine_option(argv: "Sequence[str]", index: int) -> "tuple[str, int]":
    """Read ``--engine E`` or ``--engine=E`` at *index*; return E and the next index."""
    from ._engines import ENGINE_NAMES, normalize_engine_name

    arg = argv[index]
    if "=" in arg:
        value = arg.partition("=")[2]
    else:
        index += 1
        if index >= len(argv):
            raise UsageError("argument --engine: expected one argument")
        value = argv[index]
    try:
        name = normalize_engine_name(value)
    except ValueError:
        choices = ", ".join(repr(name) for name in ENGINE_NAMES)
        raise UsageError(
            f"argument --engine: invalid choice: {value!r} (choose from {choices})"
        ) from None
    return name, index + 1


def _flagged_target(argv: "Sequence[str]", index: int, engine: "str | None") -> Options:
    """Read ``-m module`` / ``-c code`` (also glued, ``-mmodule``) at *index*."""
    flag, value = argv[index][:2], argv[index][2:]
    kind, what = ("module", "a module name") if flag == "-m" else ("code", "code")
    rest = index + 1
    if not value:
        if rest >= len(argv):
            raise UsageError(f"argument {flag}: expected {what}")
        value = argv[rest]
        rest += 1
    return Options("run", kind, value, argv[rest:], engine)


def program_name() -> str:
    """The name to show in messages: how the user started us."""
    argv0 = sys.argv[0] if sys.argv else ""
    if os.path.basename(argv0) == "__main__.py":
        return "python -m pep726hook"
    return os.path.basename(argv0) or "pep726hook"


def run_command_line(argv: "Sequence[str]") -> "int | None":
    """Run the program a ``[run] [--engine E] [--] TARGET [args...]`` command line names.

    Returns its exit status, or None for anything else (a subcommand, help,
    the version, a command line in error), which is the full command's to
    handle (:func:`._cli.main`): nothing has been done then.  Raises
    :class:`UsageError` when the engine cannot start.
    """
    if argv and argv[0] in ("scan", "info"):
        return None
    if argv and argv[0] == "run":
        argv = argv[1:]
    try:
        options = parse_run_arguments(argv)
    except UsageError:
        return None
    if options.action != "run":
        return None
    started = start_engine(options.engine, options.fast_getattr)
    return run(options, started, program_name())


def start_engine(option: "str | None", fast_getattr: bool = False) -> "tuple[str, bool]":
    """Turn the hook on with the engine named by *option* or ``$PEP726HOOK_ENGINE``.

    With *fast_getattr* (``--fast-getattr``) or ``$PEP726HOOK_FAST_GETATTR``
    on, the fast-getattr switch too (:func:`.install`).  Returns the engine
    as asked (validated, not resolved: ``auto`` stays ``auto``), and whether
    ``__main__`` needs upgrading (not with the native engine, whose patch
    serves every plain module).  Raises :class:`UsageError` for an unknown
    name, an engine that cannot run here, or a bad
    ``$PEP726HOOK_FAST_GETATTR``.  The rule of every route that takes an
    engine option (this one and the pytest plugin): an engine named there
    replaces the active one; ``auto`` (or naming none) keeps it.
    """
    if option is None:
        value = os.environ.get(ENGINE_VARIABLE, "")
        requested = value.strip().lower() or "auto"
    else:
        requested = option
    switch_off = not fast_getattr and fast_getattr_is_off(os.environ.get(FAST_GETATTR_VARIABLE))
    if switch_off and start_native_engine(ROUTE, requested):
        return requested, False
    from ._engines import engine_from_environment, requested_engine_name
    from ._install import engine, install_replacing, record_route

    try:
        requested = engine_from_environment() if option is None else requested_engine_name(option)
        install_replacing(requested, True if fast_getattr else None)
    except (ValueError, RuntimeError) as error:
        # Unknown $PEP726HOOK_ENGINE or $PEP726HOOK_FAST_GETATTR, or an
        # engine that cannot run here.
        raise UsageError(str(error)) from None
    record_route(ROUTE)
    return requested, engine() != "native"


def run(options: Options, started: "tuple[str, bool]", prog: str = "pep726hook") -> int:
    """Export the hook to child processes and run the target, the engine started.

    *started* is what :func:`start_engine` returned.
    """
    requested, upgrade = started
    os.environ[ACTIVATION_VARIABLE] = "1"
    # Children get the engine as asked, not as resolved: "auto" resolves the
    # same way in a child process, and to the class engine in a sub-interpreter
    # that cannot load the extension, where "native" would fail at start-up
    # (CPython's test_import SubinterpImportTests.test_isolated_config).
    os.environ[ENGINE_VARIABLE] = requested
    if options.fast_getattr:
        os.environ[FAST_GETATTR_VARIABLE] = "1"
    runner = Runner(options.kind, options.target, options.args, upgrade)
    try:
        runner.prepare()
    except TargetError as error:
        write(sys.stderr, f"{prog}: {error}\n")
        return error.status
    except SystemExit:
        raise
    except BaseException as error:
        # `-m pkg.mod` imports pkg first: its exceptions are the program's own.
        return report_exception(error)
    return runner.run()


def write(stream: "object", text: str) -> None:
    """Write our own *text* to *stream*, quietly when it is closed or its reader has gone."""
    if stream is None:
        return  # started with that descriptor closed: python's own options print nothing
    try:
        stream.write(text)  # type: ignore[attr-defined]
    except BrokenPipeError:
        discard(stream)


def discard(stream: "object") -> None:
    """Send the rest of *stream*, whose reader has gone, to the null device.

    As the Python documentation advises for SIGPIPE (signal module, "Note on
    SIGPIPE"): the interpreter's last flush at exit would otherwise fail
    again and print "Exception ignored ... BrokenPipeError".  The exit status
    stays what it would have been, as with ``python --help | head -1``.
    """
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, stream.fileno())  # type: ignore[attr-defined]
        finally:
            os.close(devnull)
    except (OSError, AttributeError, ValueError):
        pass  # not a file descriptor of ours to redirect: nothing more to say


class TargetError(Exception):
    """The target cannot be run; the message is what ``python`` would say.

    *status* is the exit status ``python`` itself gives for the same mistake.
    Also the error class runpy's module resolution raises for a module it
    cannot run (status 1, as python's).
    """

    def __init__(self, message: str, status: int = 1) -> None:
        super().__init__(message)
        self.status = status


class Runner:
    """Prepares ``__main__`` for one target, then runs it.

    *kind* is ``"script"`` (a file, a directory or a zip file), ``"module"``
    (``-m``) or ``"code"`` (``-c``); *target* is the path, module name or
    source as typed; *args* are the target's own arguments.  *upgrade* false
    says that the active engine calls the hooks of any plain module (the
    native engine): ``__main__`` then needs no upgrade, nor its code to be
    looked at for hooks before it runs.
    """

    def __init__(self, kind: str, target: str, args: "Sequence[str]", upgrade: bool = True) -> None:
        if kind not in ("script", "module", "code"):
            raise ValueError(f"unknown target kind {kind!r}")
        self.kind = kind
        self.target = target
        self.args = list(args)
        self.upgrade = upgrade
        self.module: ModuleType | None = None
        # What run() executes: a code object, or the source of -c code that
        # cannot bind a hook, which exec() compiles itself (see _prepare_code).
        self.code: CodeType | str | bytes | None = None
        # The new __main__'s namespace, read after its body ran.
        self._namespace: dict[str, Any] = {}

    # -- preparing ---------------------------------------------------------

    def prepare(self) -> "ModuleType":
        """Set up ``sys.argv``, ``sys.path[0]`` and a fresh ``__main__``; return it.

        Raises :class:`TargetError` when the target cannot be found or read.
        Code that the target owns may already run here: ``-m pkg.mod`` imports
        ``pkg`` first, as Python does, so install the hook before calling this.
        """
        if self.kind == "code":
            may_bind_hooks = self._prepare_code()
        elif self.kind == "module":
            may_bind_hooks = self._prepare_module()
        elif _path_importer(self.target) is None:
            may_bind_hooks = self._prepare_script()
        else:
            may_bind_hooks = self._prepare_main_of(self.target)
        module = self.module
        assert module is not None
        # A module object, never a bare dict: pickle looks classes up on
        # sys.modules['__main__'] (cpython#132737).
        sys.modules["__main__"] = module
        # Upgraded before its code runs when that code can bind a hook, so
        # `import __main__; __main__.x = 1` calls it while the body still runs;
        # any other __main__ stays a plain module, as the finder leaves
        # modules whose code cannot bind one (lazy_loader and others check
        # `type(module) is ModuleType`).
        if may_bind_hooks:
            from ._install import upgrade

            upgrade(module)
        return module

    def _prepare_code(self) -> bool:
        # python -c puts '' (the current directory, looked up at each import) first.
        _set_path0("")
        sys.argv = ["-c", *self.args]
        source: str | bytes = self.target
        if COMMAND_HONOURS_CODING_DECLARATION:
            source = self.target.encode("utf-8")
        may_bind_hooks = self.upgrade and _may_name_a_hook(self.target)
        # Where linecache keys -c source by the file name "<string>" (3.13.0 to
        # 3.13.4), python compiles before it registers the source: warnings
        # raised by the compiler show no line, those raised at run time do.
        compile_first = COMMAND_SOURCE_IN_LINECACHE and not _linecache_keys_by_code()
        if may_bind_hooks or COMPILES_MAIN_AS_A_MODULE or compile_first:
            from ._runner_source import compile_main

            self.code = code = compile_main(source, "<string>")
            may_bind_hooks = may_bind_hooks and _code_may_bind_hooks(code)
        else:
            # compile() first builds the classes of the ast module (about a
            # quarter of `python -c pass` on 3.12, as many instructions as
            # the rest of the runner): exec() of the source compiles it
            # without them, as python does, under the same name "<string>".
            self.code = source
        if COMMAND_SOURCE_IN_LINECACHE:
            _show_command_lines(self.target, self.code)
        self._new_main({"__loader__": _builtin_importer()})
        return may_bind_hooks

    def _prepare_module(self) -> bool:
        import runpy

        _set_path0(os.getcwd())
        # While the module is being found, Python reports argv[0] as "-m".
        sys.argv = ["-m", *self.args]
        try:
            _name, spec, code = runpy._get_module_details(  # type: ignore[attr-defined]
                self.target, TargetError
            )
        except TargetError as error:
            raise TargetError(str(error)) from None
        self.code = code
        self._new_main(_namespace_from_spec(spec))
        sys.argv[0] = spec.origin
        return self.upgrade and _code_may_bind_hooks(code)

    def _prepare_main_of(self, location: str) -> bool:
        """A directory or zip file: run its ``__main__`` as Python does (via runpy)."""
        import runpy

        path_entry = _main_path(location, MAIN_DIRECTORY_PATH_IS_NORMALISED)
        # Python puts the archive first even under -P: that is where __main__ is.
        if _safe_path():
            sys.path.insert(0, path_entry)
        else:
            _set_path0(path_entry)
        sys.argv = [self.target, *self.args]
        try:
            _name, spec, code = runpy._get_main_module_details(  # type: ignore[attr-defined]
                TargetError
            )
        except TargetError as error:
            raise TargetError(str(error)) from None
        self.code = code
        self._new_main(_namespace_from_spec(spec))
        return self.upgrade and _code_may_bind_hooks(code)

    def _prepare_script(self) -> bool:
        import importlib.machinery

        from ._runner_source import compile_script

        typed = self.target
        filename = _main_path(typed, MAIN_SCRIPT_PATH_IS_NORMALISED)
        try:
            with open(typed, "rb") as file:
                data = file.read()
        except OSError as error:
            shown = repr(filename) if QUOTES_A_MISSING_SCRIPT else filename
            raise TargetError(
                f"can't open file {shown}: [Errno {error.errno}] {error.strerror}", 2
            ) from None
        if not _safe_path():
            _set_path0(_script_directory(typed))
        sys.argv = [typed, *self.args]
        loader: Any
        if _is_compiled(typed, data):
            loader = importlib.machinery.SourcelessFileLoader("__main__", filename)
            try:
                code = loader.get_code("__main__")
            except ImportError as error:
                raise TargetError(f"can't run {shown_name(typed)}: {error}", 1) from None
        else:
            loader = importlib.machinery.SourceFileLoader("__main__", filename)
            code = compile_script(data, _main_path(typed, MAIN_CODE_PATH_IS_NORMALISED))
        self.code = code
        namespace: dict[str, Any] = {"__file__": filename, "__loader__": loader}
        if MAIN_HAS_CACHED:
            namespace["__cached__"] = None
        self._new_main(namespace)
        return self.upgrade and _code_may_bind_hooks(code)

    def _new_main(self, extra: "dict[str, Any]") -> None:
        """Make a fresh ``__main__`` with the globals Python gives its main module."""
        module = ModuleType("__main__")
        namespace = module.__dict__
        if MAIN_HAS_ANNOTATIONS_DICT:
            namespace["__annotations__"] = {}
        namespace.update(
            {
                "__builtins__": sys.modules["builtins"],
                "__doc__": None,
                "__loader__": None,
                "__package__": None,
                "__spec__": None,
            }
        )
        namespace.update(extra)
        self.module = module
        self._namespace = namespace

    # -- running -----------------------------------------------------------

    def run(self) -> int:
        """Run the prepared code in ``__main__``; return the exit status.

        ``SystemExit`` passes through untouched.  Any other exception is
        reported through ``sys.excepthook`` without our frames and gives 1;
        ``KeyboardInterrupt`` is re-raised once reported (see
        :func:`report_exception`).
        """
        if self.module is None:
            self.prepare()
        code, namespace = self.code, self._namespace
        assert code is not None
        try:
            exec(code, namespace)
        except SystemExit:
            raise
        except BaseException as error:
            if COMMAND_SOURCE_IN_LINECACHE and isinstance(code, (str, bytes)):
                # Now, for the lines of the functions of -c code as well (see
                # _show_command_lines): what it costs no longer delays the program.
                from ._runner_source import compile_main

                _show_command_lines(self.target, compile_main(code, "<string>"))
            return report_exception(error)
        finally:
            # A hook bound another way (globals()[...], exec) still counts for
            # what runs after the body: threads, atexit handlers.
            if any(name in namespace for name in _HOOK_NAMES):
                from ._install import is_installed, upgrade

                if is_installed():
                    assert self.module is not None
                    upgrade(self.module)
        return 0


def _may_name_a_hook(source: str) -> bool:
    """Tell whether the text of *source* may bind a hook by name.

    Only a name spelt in the text can be bound at the top level, and a
    non-ASCII identifier may be another spelling of one (NFKC), so such
    source is compiled to be sure.
    """
    return not source.isascii() or any(name in source for name in _HOOK_NAMES)


def _linecache_keys_by_code() -> bool:
    import linecache

    return hasattr(linecache, "_interactive_cache")


def _show_command_lines(source: str, code: "CodeType | str | bytes") -> None:
    """Put -c *source* into linecache as python does, for tracebacks and warnings to show.

    Where linecache keys interactive source by code object (3.13.5+ and
    3.14+: it has ``_interactive_cache``), each code object of the source is a
    key of its own, and warnings, which look lines up by file name, show none;
    given the source not compiled yet (*code* is the source), only the top
    level is registered now, which costs no compile() (see _prepare_code), and
    its functions' lines once an exception is reported (Runner.run).  Before,
    the file name "<string>" is the key.
    """
    import linecache

    entry = (len(source), None, [line + "\n" for line in source.splitlines()], "<string>")
    if not _linecache_keys_by_code():
        linecache.cache["<string>"] = entry
    elif isinstance(code, (str, bytes)):
        linecache._interactive_cache[("<string>", "<module>", 1)] = entry  # type: ignore[attr-defined]
    else:
        linecache._register_code(code, source, "<string>")  # type: ignore[attr-defined]


def _code_may_bind_hooks(code: "CodeType") -> bool:
    from ._finder import code_may_define_hooks

    return code_may_define_hooks(code)


def _builtin_importer() -> "Any":
    # What python -c gives __main__.__loader__; runpy (and so `python -m`)
    # imports importlib.machinery before we run, the console script does not.
    # Not `from importlib.machinery import ...`: that form asks the module for
    # __path__, which 3.14's module __getattr__ answers by importing warnings.
    import importlib.machinery

    return importlib.machinery.BuiltinImporter


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
    if RECORDS_LAST_EXC:
        sys.last_exc = error
    sys.excepthook(type(error), error, error.__traceback__)
    if isinstance(error, KeyboardInterrupt):
        _leave_as_interrupted(error)
    return 1


def _leave_as_interrupted(error: KeyboardInterrupt) -> "NoReturn":
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
        exc_type: "type[BaseException]",
        exc: BaseException,
        traceback: "TracebackType | None",
    ) -> None:
        sys.excepthook = previous
        if exc is not error:
            previous(exc_type, exc, traceback)
            return
        # Post-mortem tools see what was printed, not our frames.
        error.__traceback__ = sys.last_traceback = shown
        if RECORDS_LAST_EXC:
            sys.last_exc = error

    sys.excepthook = already_reported
    raise error


def without_runner_frames(traceback: "TracebackType | None") -> "TracebackType | None":
    """Drop the leading frames that belong to the runner (or runpy) from *traceback*."""
    runpy = sys.modules.get("runpy")
    runpy_files = {"<frozen runpy>", getattr(runpy, "__file__", None) or "<frozen runpy>"}
    while traceback is not None:
        filename = traceback.tb_frame.f_code.co_filename
        if filename not in _RUNNER_FILES and filename not in runpy_files:
            break
        traceback = traceback.tb_next
    return traceback


def shown_name(path: str) -> str:
    """Quote *path* the way Python's own start-up messages do."""
    return repr(os.path.abspath(path))


def _path_importer(path: str) -> "object | None":
    """Return the path entry finder for *path* if it is a directory or zip file.

    This is how runpy and Python's start-up tell "run ``__main__`` from here"
    apart from "run this file": the first of ``sys.path_hooks`` that accepts
    *path*, cached as the import system caches it (``pkgutil.get_importer``,
    without importing pkgutil).
    """
    if not os.path.exists(path):
        return None
    try:
        return sys.path_importer_cache[path]
    except KeyError:
        pass
    for hook in sys.path_hooks:
        try:
            importer = hook(path)
        except ImportError:
            continue
        return sys.path_importer_cache.setdefault(path, importer)
    return None


def _main_path(typed: str, normalised: bool) -> str:
    """The path of a script, directory or zip file target as ``python TARGET`` names it.

    ``__file__``, the code's file name (tracebacks, warnings) and a
    directory's ``sys.path`` entry; ``sys.argv[0]`` is always *typed*, and
    ``sys.path[0]`` for a script the real directory.
    """
    if not MAIN_PATHS_ARE_ABSOLUTE:
        return typed
    if normalised or os.name != "posix":  # Windows: GetFullPathNameW normalises as abspath does
        return os.path.abspath(typed)
    if os.path.isabs(typed):
        return typed
    return os.getcwd() + os.sep + typed


def _script_directory(typed: str) -> str:
    """The ``sys.path[0]`` of a script: the directory python puts there.

    CPython's is the real directory of the script, every symlink resolved.
    PyPy's resolves a symlink to the script itself, and none to a directory
    on the way: its own function tells, exactly.
    """
    resolve = getattr(sys, "pypy_resolvedirof", None)
    if resolve is not None:
        return str(resolve(typed))
    return os.path.dirname(os.path.realpath(typed))


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
    import importlib.util

    return path.endswith(".pyc") or data[:4] == importlib.util.MAGIC_NUMBER


def _namespace_from_spec(spec: "Any") -> "dict[str, Any]":
    # The globals runpy._run_code gives a module run with `python -m`.
    namespace = {
        "__file__": spec.origin,
        "__loader__": spec.loader,
        "__package__": spec.parent,
        "__spec__": spec,
    }
    if MAIN_HAS_CACHED:
        namespace["__cached__"] = spec.cached
    return namespace

"""Read and compile a script as ``python SCRIPT`` does, errors included.

CPython reads a script through its file tokenizer, which treats NUL bytes,
undecodable bytes and a source that ends too early differently from
``compile()`` of the same bytes: the runner must fail, or run, exactly as
``python`` does (tests/test_runner.py, the broken-script tests).  Each
difference is a named fact of :mod:`._compat`.

Imported only for a script target: running a module or ``-c`` code pays for
none of this, and :mod:`re` is imported only for a script whose first two
lines mention a coding declaration (or, on 3.8-3.10, that holds a NUL byte).
"""

from ._compat import (
    COMPILES_MAIN_AS_A_MODULE,
    ENCODING_ERRORS_HAVE_A_LINE,
    FILE_READER_DECODES_THE_FILE,
    FILE_READER_DIFFERS_FROM_COMPILE,
    FILE_READER_READS_A_LINE_AHEAD,
    OLD_FILE_TOKENIZER,
    PEP_263_URL,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from re import Pattern
    from types import CodeType

# Errors a 3.8/3.9 parser raises when the source ends too early.
_EOF_ERRORS = ("unexpected EOF while parsing", "expected an indented block")
_NO_BLOCK_AT_EOF = "expected an indented block"  # 3.10+: "... after 'if' statement on line 1"
_NON_UTF_8 = "Non-UTF-8 code starting with "
# PEP 263's regular expression, on bytes; compiled on first use.
_CODING_DECLARATION = rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)"


def compile_main(source: "bytes | str", filename: str) -> "CodeType":
    """Compile *source* as the code of ``__main__``, as ``python`` compiles a script or ``-c``.

    ``dont_inherit`` so that no ``__future__`` import of ours reaches the
    target.  A coding declaration is honoured for bytes.
    """
    if COMPILES_MAIN_AS_A_MODULE:
        return compile(  # type: ignore[call-overload,no-any-return]
            source, filename, "exec", dont_inherit=True, module="__main__"
        )
    return compile(source, filename, "exec", dont_inherit=True)


def compile_script(data: bytes, filename: str) -> "CodeType":
    """Return the code of the script whose file holds *data*, or raise python's SyntaxError."""
    return _compile_as_read(_as_python_reads_a_script(data, filename), filename)


def _compile_as_read(source: bytes, filename: str) -> "CodeType":
    """Compile a script's source with the errors of CPython's file tokenizer.

    When the source ends too early that tokenizer has already moved past the
    last line, where compile()'s string tokenizer stays on it.  3.8 and 3.9
    then report the error on the line after the last, with no text (an
    unclosed triple-quoted string: numbered past even that line), and read
    newlines universally; 3.10+ keep the line but an indented block missing
    at the end has no column.
    """
    if not FILE_READER_DIFFERS_FROM_COMPILE:
        return compile_main(source, filename)
    if OLD_FILE_TOKENIZER:
        source = source.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    try:
        return compile_main(source, filename)
    except SyntaxError as error:
        lines = source.splitlines()
        at_end = error.lineno == max(len(lines), 1) and (error.offset or 0) > len(
            (error.text or "").rstrip("\r\n")
        )
        if not OLD_FILE_TOKENIZER:
            if error.msg.startswith(_NON_UTF_8) and FILE_READER_DECODES_THE_FILE:
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
    # and the file reader silently cut each line at its NUL.  Asked of the
    # parser rather than of the version: the change came in a bug-fix release.
    try:
        compile(b"\0", "<probe>", "exec", dont_inherit=True)
    except SyntaxError:
        return True
    except ValueError:
        return False
    return True


def _as_python_reads_a_script(data: bytes, filename: str) -> bytes:
    """Return the source ``python SCRIPT`` would compile, or raise its SyntaxError."""
    nul = data.find(b"\0")
    if nul >= 0:
        if not _null_bytes_are_a_syntax_error():
            # CPython 3.8-3.10: the line ends at its NUL; the rest of it,
            # newline included, is never seen.  PyPy 3.9 has rules of its own.
            if not FILE_READER_DIFFERS_FROM_COMPILE:
                return data
            import re

            return re.sub(rb"\0[^\n]*\n?", b"", data)
        line_start = data.rfind(b"\n", 0, nul) + 1
        lineno = data.count(b"\n", 0, nul) + 1
        text = data[line_start:nul].decode("utf-8", "replace")
        raise SyntaxError(
            "source code cannot contain null bytes", (filename, lineno, 0, text, lineno, 0)
        )
    if not FILE_READER_DIFFERS_FROM_COMPILE:
        return data
    declared = _declared_encoding(data)
    if declared is None:
        if not FILE_READER_DECODES_THE_FILE:
            # 3.14+: compile() reports it (_compile_as_read adds "in file ...").
            _check_undeclared_utf_8(data, filename)
    elif _is_utf_8(declared):
        # The file reader passes declared UTF-8 through undecoded: compile()
        # then fails as python does, except 3.14+, which decodes the file.
        if FILE_READER_DECODES_THE_FILE:
            _check_declared_utf_8(data, filename)
    else:
        # Not contextlib.suppress: a script's start-up should not import contextlib.
        try:  # noqa: SIM105
            _check_declared(data, declared, filename)
        except LookupError:
            pass  # an unknown encoding: compile() reports it as python does
    return data


def _check_declared(data: bytes, declared: str, filename: str) -> None:
    first_newline = data.find(b"\n")
    on_first_line = _coding_declaration().match(data[: max(first_newline, 0)]) is not None
    if FILE_READER_DECODES_THE_FILE:
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
        if ENCODING_ERRORS_HAVE_A_LINE:
            # Numbered as the line that declares the encoding.
            declaration_line = 1 if on_first_line else 2
            raise SyntaxError(message, (filename, declaration_line, 0, None)) from None
        raise SyntaxError(message) from None


def _check_undeclared_utf_8(data: bytes, filename: str) -> None:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as error:
        lineno = data.count(b"\n", 0, error.start) + 1
        if FILE_READER_READS_A_LINE_AHEAD:
            lineno += 1
        message = (
            f"Non-UTF-8 code starting with '\\x{data[error.start]:02x}' in file {filename} "
            f"on line {lineno}, but no encoding declared; see {PEP_263_URL} for details"
        )
        if ENCODING_ERRORS_HAVE_A_LINE:
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


def _declared_encoding(data: bytes) -> "str | None":
    """Return the PEP 263 coding declaration of the first two lines, if any."""
    first_two = data.split(b"\n", 2)[:2]
    # Most scripts declare nothing: no regular expression (nor `re`) for them.
    if not any(b"coding" in line for line in first_two):
        return None
    for line in first_two:
        match = _coding_declaration().match(line)
        if match:
            return match.group(1).decode("ascii")
    return None


_compiled: "list[Pattern[bytes]]" = []


def _coding_declaration() -> "Pattern[bytes]":
    if not _compiled:
        import re

        _compiled.append(re.compile(_CODING_DECLARATION))
    return _compiled[0]

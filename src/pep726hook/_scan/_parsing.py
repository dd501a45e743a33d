"""Decoding and parsing Python source for ``pep726hook scan``, as the interpreter would.

Nothing is compiled to bytecode or executed.
"""

from __future__ import annotations

import ast
import gc
import io
import tokenize
import warnings


class Unparsable(Exception):
    """Why a candidate file was skipped."""


def decode_source(data: bytes) -> str:
    """Decode Python source the way the interpreter would (PEP 263 cookie, BOM)."""
    return decode(data)[0]


def decode(data: bytes) -> tuple[str, str]:
    """The text of *data* and its encoding, or :class:`Unparsable` with the reason."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        raise Unparsable(f"cannot decode: {exc.msg}") from None
    try:
        return data.decode(encoding), encoding
    except UnicodeDecodeError as exc:
        raise Unparsable(f"cannot decode as {encoding}: {exc.reason} at byte {exc.start}") from None
    except LookupError:
        raise Unparsable(f"cannot decode: unknown encoding {encoding}") from None


def parse_source(data: bytes, path: str) -> ast.Module:
    """The syntax tree of *data*, or :class:`Unparsable` with the reason."""
    return parse_text(decode_source(data), path)


def parse_text(text: str, path: str) -> ast.Module:
    # A syntax tree is many small objects and no cycles: collections triggered
    # while building one cost more than the parse itself on big files.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        with warnings.catch_warnings():
            # Invalid escape sequences and the like would otherwise reach stderr.
            warnings.simplefilter("ignore")
            tree = ast.parse(text, filename=path)
    except SyntaxError as exc:
        raise Unparsable(f"syntax error at line {exc.lineno}: {exc.msg}") from None
    except (ValueError, RecursionError, MemoryError) as exc:
        raise Unparsable(f"cannot parse: {type(exc).__name__}: {exc}") from None
    finally:
        if gc_was_enabled:
            gc.enable()
    return tree

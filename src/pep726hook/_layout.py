"""Laying text out for a terminal: the help of the ``pep726hook`` command and the scan's report.

Lines break between words only, and help is never wider than 80 columns.
Loaded by the command line only (help, usage errors, ``scan``), never by a
program that the runner starts.
"""

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import List

#: The widest help we print, whatever the terminal: wider lines are hard to read.
MAX_HELP_WIDTH = 80
#: The narrowest: below it, wrapping would leave a word or two per line.
MIN_HELP_WIDTH = 40


def help_width() -> int:
    """The width to lay help out in: the terminal's (``$COLUMNS`` first), within 40 to 80.

    A ``$COLUMNS`` that is not a positive number is ignored, as
    :func:`shutil.get_terminal_size` ignores it (then the terminal's width,
    else 80).
    """
    import shutil

    columns = shutil.get_terminal_size().columns
    return min(MAX_HELP_WIDTH, max(MIN_HELP_WIDTH, columns))


def wrap_words(text: str, width: int, indent: str = "", more: "str | None" = None) -> "List[str]":
    """*text* in lines of at most *width*, the first after *indent*, the others after *more*.

    Lines break between words only, never inside one, not at its hyphens
    either (``--fast-getattr``, ``3.11-3.14``, paths): a word longer than a
    line (a URL) stays whole, alone on its line.  Words joined by
    :data:`GLUE` stay on one line, printed with a space between them.
    """
    import textwrap

    lines = textwrap.wrap(
        text,
        width,
        initial_indent=indent,
        subsequent_indent=indent if more is None else more,
        break_long_words=False,
        break_on_hyphens=False,
    )
    return [line.replace(GLUE, " ") for line in lines] or [indent.rstrip()]


#: Joins words that :func:`wrap_words` keeps on one line (a bracketed option
#: of a usage line, a command in backquotes, "CPython 3.12.1").
GLUE = "\N{NO-BREAK SPACE}"

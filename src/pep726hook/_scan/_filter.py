"""The byte-level half of ``pep726hook scan``: what of a file must be parsed.

Every file of an environment is read, but few need parsing.  The functions
here look at raw bytes only, cheaply and conservatively: :func:`may_matter`
rules out most files with a few substring searches, :func:`plan_parse` narrows
the rest down to the top-level statements that may bind a hook name (or to
the whole file, when it may install a class on itself), and
:func:`statement_span` finds a statement's extent.  They may only skip work:
whatever they rule out, parsing would have found nothing in (the tests check
this against a full parse of the standard library).
"""

from __future__ import annotations

import bisect
import re
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

try:
    from ._memfind import find
except ImportError:  # not built (PyPy, no compiler): bytes.find, about 3x slower on source

    def find(
        haystack: bytes | bytearray,
        needle: bytes,
        start: int | None = None,
        end: int | None = None,
        /,
    ) -> int:
        return haystack.find(needle, start, end)


# A file none of whose bytes spell one of these cannot hold any finding, so it is
# never decoded or parsed; this is what keeps a whole-environment scan cheap.
_TOKENS = (
    b"__setattr__",
    b"__delattr__",
    b"__getattr__",
    b"__dir__",
    b"__class__",
    b"ModuleType",
    b"__getattribute__",
    b"__dict__",
)

_ATTR_HOOK_NAMES = frozenset((b"__setattr__", b"__delattr__", b"__getattr__"))
# Any installation of a class on the module goes through ``X.modules[...]``
# (``sys.modules[__name__]``, ``.get(__name__)``, or a name bound to either):
# what follows ``.modules``.
_INDEXED_RE = re.compile(rb"[ \t]*(?:\[|\.[ \t]*get\b)")
# A class statement whose bases mention ModuleType or type(...).  (The pattern
# starts with a literal so that the regex engine can skip ahead quickly; the
# bound on the bases keeps a file of many unclosed "class X(" linear to search.)
_MODULE_CLASS_RE = re.compile(
    rb"class[ \t]+(\w+)[ \t]*\([^:]{0,1000}?(?:ModuleType|\btype[ \t]*\()"
)
# A reported workaround class overrides one of these, defines a property, or
# (a wrapper object) intercepts reads; "getattr" also stands for __getattribute__.
_OVERRIDE_TOKENS = (b"setattr__", b"delattr__", b"setter", b"deleter", b"property", b"getattr")
# What follows ``<something>.__class__`` in an assignment (not a comparison).
_ASSIGNMENT_RE = re.compile(rb"[ \t]*=(?!=)")
# ``X.modules[...] = Name(`` or ``= name``: a module replaced by an instance,
# made there or bound to a name before.  (The key may hold brackets itself:
# ``sys.modules[sys._getframe(1).f_globals["__name__"]]``.)
_REPLACES_MODULE_RE = re.compile(
    rb"modules[ \t]*\[([^\n]*?)\][ \t]*=(?!=)[ \t]*([\w.]+)[ \t]*(\()?"
)
# A subscript key that is a plain name, or a string literal without escapes.
_STRING_KEY_RE = re.compile(rb"""[ \t]*(['"])([^'"\\]*)\1[ \t]*\Z""")
# ``setattr(m, "__class__"``, up to the closing quote of the name.
_SETATTR_CLASS_RE = re.compile(rb"setattr\([^,\n]*,[ \t]*['\"]__class__['\"]\Z")
# The value after ``__class__ =``: a name (group 1), and whether something
# follows that makes it an attribute, call or subscript instead (group 2).
_ASSIGNED_NAME_RE = re.compile(rb"[ \t]*([A-Za-z_][A-Za-z0-9_]*)([ \t]*[.(\[])?")
_SETATTR_VALUE_RE = re.compile(rb"[ \t]*,[ \t]*([A-Za-z_][A-Za-z0-9_]*)[ \t]*\)")
_CONTINUATION_RE = re.compile(rb"(?:else|elif|except|finally)\b")
_BODY_STATEMENT_RE = re.compile(rb"(?:class|def|async[ \t]+def)\b")
_NAME_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
_NAME_BYTES_AND_DOT = _NAME_BYTES | {0x2E}


def mentions(data: bytes | bytearray, needles: Iterable[bytes], end: int | None = None) -> bool:
    """True when ``data[:end]`` holds one of *needles*."""
    return any(find(data, needle, 0, end) >= 0 for needle in needles)


def has_token(data: bytes | bytearray, end: int | None = None) -> bool:
    """True when ``data[:end]`` mentions one of the names any finding needs."""
    return any(find(data, token, 0, end) >= 0 for token in _TOKENS)


def may_matter(data: bytes | bytearray, end: int) -> bool:
    """:func:`has_token` for ``data[:end]``, narrowed to what :func:`plan_parse` can use.

    ``__class__`` and ``ModuleType`` only matter where a class can be
    installed, which always spells ``modules``.
    """
    # Every scan of the bytes costs about as much as reading them.  b"ttr__"
    # stands for the three __*attr__ names, and b"r__" ends both it and
    # b"__dir__": most files, which have neither, cost two scans instead of three.
    if find(data, b"r__", 0, end) >= 0 and (
        find(data, b"ttr__", 0, end) >= 0 or find(data, b"__dir__", 0, end) >= 0
    ):
        return True
    # A wrapper object put in sys.modules needs no __class__: it intercepts
    # reads (__getattribute__), or is a module-like object whose __dict__ is a
    # property.
    return find(data, b"modules", 0, end) >= 0 and (
        find(data, b"__class__", 0, end) >= 0
        or find(data, b"ModuleType", 0, end) >= 0
        or find(data, b"ttribute__", 0, end) >= 0
        or find(data, b"__dict__", 0, end) >= 0
    )


class ParsePlan(NamedTuple):
    """What of a file must be parsed: all of it, some statements, or nothing."""

    whole_file: bool
    #: Starts of the lines that may bind a hook name at module level.
    hook_lines: list[int]


def plan_parse(data: bytes, index: Index | None = None, module: str | None = None) -> ParsePlan:
    """Cheap, conservative look at raw bytes: which parts parsing must examine.

    It rules out the common case of hook names that appear only as attribute
    accesses (``object.__setattr__(self, ...)``), in comments and strings, or
    as methods in the body of a top-level ``class``/``def``, and workaround-like
    classes that the file never installs on itself.  *module* is the file's
    dotted module name, when known: ``sys.modules["that.name"] = C()`` is the
    only string key that installs on the module itself.  *index* may be shared
    with :func:`~pep726hook._scan._analysis.analyse`.  What it
    cannot rule out is left to the parser: the whole file when a workaround is
    possible (that needs the class and its installation together), otherwise
    just the top-level statements around the possible hook bindings.
    """
    if index is None:
        index = Index(data)
    if _may_install_own_class(index, module):
        return ParsePlan(True, [])
    lines: list[int] = []
    for start, end in _hook_names(data):
        if (
            _may_bind_at_top_level(data, start, end)
            and not _inside_class_or_def(index, start)
            and index.is_code(start)
        ):
            lines.append(data.rfind(b"\n", 0, start) + 1)
    return ParsePlan(False, sorted(set(lines)))


def _hook_names(data: bytes) -> Iterator[tuple[int, int]]:
    """Start and end of every hook name in *data*.

    The three ``__*attr__`` names share one scan for their common tail: a scan
    of the bytes is what costs, not the few occurrences it finds.
    """
    for tail in _occurrences(data, b"attr__"):
        if tail >= 5 and data[tail - 5 : tail + 6] in _ATTR_HOOK_NAMES:
            yield tail - 5, tail + 6
    for start in _occurrences(data, b"__dir__"):
        yield start, start + 7


def _occurrences(data: bytes, needle: bytes) -> Iterator[int]:
    """Every start of *needle* in *data* (non-overlapping)."""
    position = find(data, needle)
    while position >= 0:
        yield position
        position = find(data, needle, position + len(needle))


def _follows_dot(data: bytes, position: int) -> bool:
    """Whether a "." (and maybe blanks) comes right before *position*."""
    before = position - 1
    while before >= 0 and data[before] in b" \t":
        before -= 1
    return before >= 0 and data[before] == 0x2E


def _may_install_own_class(index: Index, module: str | None = None) -> bool:
    """Whether the file of *index* may install one of its classes on itself.

    Only classes with overrides to report count.

    The checks run cheapest and most selective first: most files that get
    here never index ``X.modules``, or only install a class they do not
    define (``mock.__class__ = int``), or spell the workaround only in text.
    """
    data = index.data
    indexed = any(
        _follows_dot(data, position) and _INDEXED_RE.match(data, position + 7)
        for position in _occurrences(data, b"modules")
    )
    if not indexed and find(data, b"__class__") < 0:
        return False
    names = _installed_names(data, module)
    if not indexed:
        # Without X.modules[...], only a helper can install a class: on a module
        # it is given, as its __class__, so a ModuleType subclass.  Only the
        # classes it may install need their place in the file checked.
        if names is not None and not names:
            return False
        installed = names
        names = {
            match.group(1)
            for match in _MODULE_CLASS_RE.finditer(data)
            if (installed is None or match.group(1) in installed)
            and not _inside_class_or_def(index, match.start())
        }
    if names is not None:
        if not names:
            return False
        if names.isdisjoint(_CLASS_LINES.captures(data)):
            return False
        # The analysis knows the classes of the module's top level (and of its
        # top-level if/try blocks), not those made in a function or class body.
        if not any(
            name in names and not _inside_class_or_def(index, start)
            for start, name in _CLASS_LINES.starts(data)
        ):
            return False
    return any(find(data, token) >= 0 for token in _OVERRIDE_TOKENS)


def _may_be_target_key(key: bytes, module: str | None) -> bool:
    """Whether the ``sys.modules`` key *key* may name a module the analysis follows.

    Any expression may be a helper's parameter or the caller's module name,
    but the only string keys that count are the module's own name and
    ``__main__``: ``sys.modules["fake"] = Fake()`` in a test installs something else.
    """
    string = _STRING_KEY_RE.match(key)
    if string is not None and module is not None:
        return string.group(2) in (module.encode(), b"__main__")
    return True


def _instance_names(data: bytes, name: bytes) -> set[bytes]:
    """The callees of ``name = Callee(`` bindings in *data*: what *name* may be an instance of."""
    # The pattern starts with the name, not a look-behind, for the regex
    # engine's fast literal search; the byte before is checked here.
    pattern = re.escape(name) + rb"[ \t]*=(?!=)[ \t]*([A-Za-z_]\w*)[ \t]*\("
    return {
        match.group(1)
        for match in re.finditer(pattern, data)
        if not match.start() or data[match.start() - 1] not in _NAME_BYTES_AND_DOT
    }


def _installed_names(data: bytes, module: str | None = None) -> set[bytes] | None:
    """Names of the classes *data* may install on a module; None when that cannot be told.

    A workaround installs a class by name: ``X.__class__ = C``,
    ``setattr(X, "__class__", C)`` or ``X.modules[...] = C(...)``.  A value
    that is clearly not a bare name (``types.ModuleType``, ``type(x)``) installs
    nothing the analysis reports; anything unclear makes the answer None.
    """
    names: set[bytes] = set()
    for position in _occurrences(data, b"__class__"):
        end = position + 9
        assignment = _ASSIGNMENT_RE.match(data, end)
        if assignment is not None and _follows_dot(data, position):
            value = _ASSIGNED_NAME_RE.match(data, assignment.end())
            if value is None:
                return None
            if not value.group(2):
                names.add(value.group(1))
        elif position and data[position - 1] in b"'\"":
            line_start = data.rfind(b"\n", 0, position) + 1
            call = _SETATTR_CLASS_RE.search(data, line_start, end + 1)
            if call is None:
                continue
            start = call.start()
            if start and (data[start - 1] in _NAME_BYTES or data[start - 1] == 0x2E):
                continue  # obj.setattr(...), mysetattr(...)
            value = _SETATTR_VALUE_RE.match(data, call.end())
            if value is None:
                return None
            names.add(value.group(1))
    for match in _REPLACES_MODULE_RE.finditer(data):
        replacement: bytes = match.group(2)
        if b"." in replacement or not _may_be_target_key(match.group(1), module):
            continue
        if match.group(3):
            names.add(replacement)
        else:  # through an intermediate name
            names |= _instance_names(data, replacement)
    return names


def _may_bind_at_top_level(data: bytes, start: int, end: int) -> bool:
    """Whether the hook name at ``data[start:end]`` could be a name being bound."""
    before = data[start - 1] if start else 0x0A
    after = data[end] if end < len(data) else 0x0A
    # ``x.__getattr__``, ``"__getattr__"``, ``my__dir__`` are never bindings.
    if before in b".'\"" or before in _NAME_BYTES or after in _NAME_BYTES:
        return False
    line_start = data.rfind(b"\n", 0, start) + 1
    prefix = data[line_start:start]
    hash_at = prefix.find(b"#")
    # A "#" after a quote might be inside a string, so only a plain one marks a comment.
    if hash_at >= 0 and b"'" not in prefix[:hash_at] and b'"' not in prefix[:hash_at]:
        return False
    return not _in_text_of_its_line(data, line_start, prefix)


def _in_text_of_its_line(data: bytes, line_start: int, prefix: bytes) -> bool:
    """Whether the line beginning with *prefix* surely goes on inside a comment or a string.

    Quotes are paired from the start of the line, so only plain lines are
    judged: none with a backslash or a triple quote before the name, nor one
    that the line before continues with a backslash (a string may go on onto
    it); other lines get False, "not known".  A line that is itself inside a
    triple-quoted string is text whatever the answer.  This is what keeps a
    hook name in the text of a long literal (the ``topics`` dict of
    ``pydoc_data``) from making the whole literal be parsed.
    """
    if b"'" not in prefix and b'"' not in prefix:
        return False
    if b"\\" in prefix or b"'''" in prefix or b'"""' in prefix:
        return False
    before = line_start - 2  # the byte before the line's newline
    if before >= 0 and data[before] == 0x0D:
        before -= 1
    if before >= 0 and data[before] == 0x5C:
        return False
    quote = 0
    for byte in prefix:
        if not quote:
            if byte in (0x22, 0x27):
                quote = byte
            elif byte == 0x23:
                return True  # a comment
        elif byte == quote:
            quote = 0
    return quote != 0


def _indent_width(data: bytes, line_start: int) -> tuple[int, int]:
    """Width (tabs to multiples of 8, as Python counts) and byte length of a line's indent."""
    end = line_start
    while end < len(data) and data[end] in b" \t\f":
        end += 1
    return len(data[line_start:end].expandtabs(8)), end - line_start


class _LineStarts:
    """Finds the lines whose start matches a one-line pattern.

    A regex that begins with a newline is several times faster than ``^``
    with ``re.MULTILINE``: the regex engine skips ahead to each newline
    instead of trying every position.  The first line, which follows no
    newline, is checked on its own.
    """

    def __init__(self, start_of_line: bytes) -> None:
        self._after_newline = re.compile(b"\n" + start_of_line)
        self._first_line = re.compile(start_of_line)

    def starts(self, data: bytes) -> Iterator[tuple[int, bytes]]:
        """Start and group 1 of every matching line (the pattern must have a group)."""
        first = self._first_line.match(data)
        if first:
            yield 0, first.group(1)
        for match in self._after_newline.finditer(data):
            yield match.start() + 1, match.group(1)

    def all_starts(self, data: bytes) -> list[int]:
        """Start of every matching line, in order."""
        starts = [match.start() + 1 for match in self._after_newline.finditer(data)]
        if self._first_line.match(data):
            starts.insert(0, 0)
        return starts

    def captures(self, data: bytes) -> list[bytes]:
        """Group 1 of every matching line (the pattern must have one)."""
        groups: list[bytes] = self._after_newline.findall(data)
        first = self._first_line.match(data)
        if first:
            groups.append(first.group(1))
        return groups

    def next_after(self, data: bytes, position: int) -> int:
        """Start of the first matching line after *position*, or -1."""
        match = self._after_newline.search(data, position)
        return match.start() + 1 if match else -1

    def last_before(self, data: bytes, end: int) -> int:
        """Start of the last matching line before *end*, or -1.

        The answer is usually a few lines up: windows growing from *end* find
        it without matching the whole file.
        """
        window = 4096
        while True:
            low = max(0, end - window - 1)
            found = -1
            for match in self._after_newline.finditer(data, low, end):
                found = match.start() + 1
            if found >= 0:
                return found
            if low == 0:
                return 0 if end > 0 and self._first_line.match(data, 0, end) else -1
            window *= 4


# Lines that begin at column 0 with something other than a comment or a
# closing bracket: top-level statements, or text that looks like one.
_COLUMN0 = _LineStarts(rb"[^ \t\r\n\f#)\]}]")
# ``class Name`` at any indentation (classes in top-level if/try blocks count).
_CLASS_LINES = _LineStarts(rb"[ \t]*class[ \t]+(\w+)")


# String literals and comments.  A triple-quoted string runs to its closing
# quotes, any other to its closing quote or the end of the line (a backslash
# escapes the next character, a line break included); a prefix (r, b, f) does
# not change where a string ends.  This agrees with the tokenizer on every
# file of the standard library; only PEP 701 f-strings that nest their own
# quote character can throw it off, and then only until the end of the line.
_TEXT_RE = re.compile(
    rb"#[^\r\n]*"
    rb'|"""[^"\\]*(?:(?:\\.|"(?!""))[^"\\]*)*(?:"""|\Z)'
    rb"|'''[^'\\]*(?:(?:\\.|'(?!''))[^'\\]*)*(?:'''|\Z)"
    rb'|"[^"\\\r\n]*(?:\\.[^"\\\r\n]*)*"?'
    rb"|'[^'\\\r\n]*(?:\\.[^'\\\r\n]*)*'?",
    re.DOTALL,
)


class Index:
    """Per-file facts that several hook names in one file ask about, computed once."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self._is_code: dict[int, bool] = {}
        self._text_starts: list[int] | None = None
        self._text_ends: list[int] = []
        self._column0_asked = False
        self._column0_starts: list[int] | None = None

    def column0_before(self, end: int) -> int:
        """Start of the last line before *end* that begins at column 0 (see ``_COLUMN0``), or -1.

        The first question is answered by a search back from *end*, which
        usually looks at a few lines.  A file asked again (several hook names,
        a statement's extent) has the starts of all such lines listed, once,
        and answered from that list: the searches back from each position
        would otherwise look at the same lines again, all of a long statement's.
        """
        starts = self._column0_starts
        if starts is None:
            if not self._column0_asked:
                self._column0_asked = True
                return _COLUMN0.last_before(self.data, end)
            starts = self._column0_starts = _COLUMN0.all_starts(self.data)
        index = bisect.bisect_left(starts, end) - 1
        return starts[index] if index >= 0 else -1

    def is_code(self, position: int) -> bool:
        """Whether *position* is outside string literals and comments.

        An even count of triple quotes before *position* is taken as "code"
        (cheap, and right unless a triple quote hides in a shorter string or a
        comment); an odd count is checked against where strings really are
        (about ten times the cost of the count, so only then).
        """
        known = self._is_code.get(position)
        if known is None:
            known = _outside_triple_quotes(self.data, position) or not self._in_text(position)
            self._is_code[position] = known
        return known

    def _in_text(self, position: int) -> bool:
        if self._text_starts is None:
            spans = [match.span() for match in _TEXT_RE.finditer(self.data)]
            self._text_starts = [start for start, _ in spans]
            self._text_ends = [end for _, end in spans]
        index = bisect.bisect_right(self._text_starts, position) - 1
        return index >= 0 and self._text_starts[index] < position < self._text_ends[index]


def _inside_class_or_def(index: Index, start: int) -> bool:
    """Whether the code at *start* lies in the body of a ``class`` or ``def``.

    A line's enclosing blocks start at the earlier lines indented less than it; if one
    of them is a ``class`` or ``def``, the line is in its body.  The usual case
    is settled by the nearest column-0 line alone.  A ``class``/``def`` line
    can be fake (text inside a triple-quoted string); the answer is then "not
    known to be inside", so the statement gets parsed.
    """
    data = index.data
    line_start = data.rfind(b"\n", 0, start) + 1
    indent, _ = _indent_width(data, line_start)
    if indent == 0:
        return False
    owner = index.column0_before(line_start)
    if owner >= 0 and _BODY_STATEMENT_RE.match(data, owner):
        return index.is_code(owner)
    end = line_start
    while True:
        owner = _shallower_line(data, end, indent)
        if owner < 0:
            return False
        width, skip = _indent_width(data, owner)
        if _BODY_STATEMENT_RE.match(data, owner + skip):
            return index.is_code(owner)
        if width == 0:
            return False
        indent, end = width, owner


_SHALLOW_LINES: dict[int, _LineStarts] = {}


def _shallower_line(data: bytes, end: int, indent: int) -> int:
    """Start of the last code line before *end* indented less than *indent*, or -1."""
    if b"\t" in data:
        return _shallower_line_slow(data, end, indent)
    lines = _SHALLOW_LINES.get(indent)
    if lines is None:
        lines = _SHALLOW_LINES[indent] = _LineStarts(rb" {0,%d}[^ \t\r\n\f#]" % (indent - 1))
    return lines.last_before(data, end)


def _shallower_line_slow(data: bytes, end: int, indent: int) -> int:
    # Tabs make the width of an indent depend on more than its length.
    while end > 0:
        owner = data.rfind(b"\n", 0, end - 1) + 1
        width, skip = _indent_width(data, owner)
        first = data[owner + skip : owner + skip + 1]
        if width < indent and first and first not in b"#\r\n":
            return owner
        end = owner
    return -1


def _outside_triple_quotes(data: bytes, position: int) -> bool:
    return data.count(b'"""', 0, position) % 2 == 0 and data.count(b"'''", 0, position) % 2 == 0


def statement_span(index: Index, line_start: int) -> tuple[int, int] | None:
    """Byte range of the top-level statement holding the line at *line_start* of *index*'s file."""
    data = index.data
    start = index.column0_before(line_start + 1)
    # else/elif/except/finally continue a compound statement begun further up.
    while start > 0 and _CONTINUATION_RE.match(data, start):
        earlier = index.column0_before(start)
        if earlier < 0:
            break
        start = earlier
    if start < 0:
        return None
    end = start
    while True:
        following = _COLUMN0.next_after(data, end)
        if following < 0:
            return start, len(data)
        # ... and a decorator continues onto its def.
        if not (_CONTINUATION_RE.match(data, following) or data[end] == 0x40):
            return start, following
        end = following

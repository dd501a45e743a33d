"""``pep726hook scan --diff``: the declarations that replace a static ``__getattr__``, as a diff.

The code added after the function declares each name the function serves
(:class:`~pep726hook._scan._static_getattr.Plan`) with
``pep726hook.lazy_attribute()`` or ``pep726hook.removed_attribute()`` and then
deletes ``__getattr__`` from the namespace, which is what lets reads of the
module be specialised; where pep726hook (or a version with those functions)
cannot be imported, nothing changes and the function stays the fallback.
The names are found when the module runs: the literals the tests list, then
the members of the module-level collections they name, in the function's
order, each declared by the first branch that serves it, after the
warnings of the branches before it, exactly as a read reaches them today.
"""

from __future__ import annotations

import ast
import difflib
import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import TextIO

    from ._model import ScanResult
    from ._static_getattr import Plan, Rule

_PREFIX = "_pep726hook_"


def declarations(plan: Plan, indent: str) -> list[str]:
    """The lines (without line ends) that declare what *plan*'s function serves.

    A line holding a copied expression that spans lines holds ``\\n``.
    """
    p = plan.parameter
    used = {"lazy": False, "removed": False}
    body: list[str] = []
    warns = any(rule.action == "warn" for rule in plan.rules)
    if warns:
        body.append(f"{_PREFIX}warning, {_PREFIX}category = None, DeprecationWarning")
    keywords = f", warning={_PREFIX}warning, category={_PREFIX}category" if warns else ""
    for rule in _merged(plan):
        body.append(f"if {_wrap(rule.test)}:")
        if rule.action == "lazy":
            used["lazy"] = True
            body.append(f"    {_PREFIX}lazy(__name__, {p})")
            body.append("    continue")
        elif rule.action == "removed":
            used["removed"] = True
            body.append(f"    {_PREFIX}removed(__name__, {p}, {_wrap(rule.message)}{keywords})")
            body.append("    continue")
        else:
            message, category = _wrap(rule.message), _wrap(rule.category)
            body.append(f"    {_PREFIX}warning, {_PREFIX}category = {message}, {category}")
    if warns:
        # A name that only warned reaches the final raise, warning first.
        used["removed"] = True
        body.append(f"if {_PREFIX}warning is not None:")
        body.append(f"    {_PREFIX}removed(__name__, {p}, {_wrap(plan.default_message)}{keywords})")
    literals = list(dict.fromkeys(repr(name) for rule in plan.rules for name in rule.names))
    collections = list(dict.fromkeys(c for rule in plan.rules for c in rule.collections))
    literal_tuple = f"({', '.join(literals)}{',' * (len(literals) == 1)})"
    if not collections:
        names = literal_tuple
    else:
        # Each name once; which branch serves it is decided below, in the function's order.
        parts = ([literal_tuple] if literals else []) + collections
        names = f"dict.fromkeys([{', '.join('*' + part for part in parts)}])"
    functions = [name for name in ("lazy", "removed") if used[name]]
    imports = "".join(f"        {name}_attribute as {_PREFIX}{name},\n" for name in functions)
    deleted = ", ".join(f"{_PREFIX}{name}" for name in functions)
    lines = [
        "# The names __getattr__ serves, declared (written by pep726hook scan --diff):",
        "# with pep726hook, __getattr__ leaves the namespace and reads of this module",
        "# stay specialised; without it, __getattr__ stays and serves them as before.",
        "try:",
        f"    from pep726hook import (\n{imports}    )",
        "except ImportError:",
        "    pass",
        "else:",
        "",
        f"    def {_PREFIX}declare():",
        f"        for {p} in {names}:",
        f"            if not isinstance({p}, str) or {p} in globals():",
        "                continue  # __getattr__ never served it",
        *("            " + line for line in body),
        "",
        f"    {_PREFIX}declare()",
        f"    del {deleted}, {_PREFIX}declare, __getattr__",
    ]
    # A copied expression over several lines keeps its continuation lines as
    # they were written: inside its parentheses indentation does not matter,
    # and inside a triple-quoted string it is part of the text.
    return [indent + line if line else "" for line in lines]


def _wrap(source: str | None) -> str:
    """*source* as one expression wherever it is placed: parenthesised if it spans lines."""
    source = source or ""
    return f"({source})" if "\n" in source else source


def _merged(plan: Plan) -> list[Rule]:
    """The rules, with runs of submodules listed as literals merged into one membership test."""
    merged: list[Rule] = []
    for rule in plan.rules:
        previous = merged[-1] if merged else None
        if (
            previous is not None
            and rule.action == previous.action == "lazy"
            and not rule.collections
            and not previous.collections
        ):
            names = previous.names + rule.names
            test = f"{plan.parameter} in ({', '.join(map(repr, names))})"
            merged[-1] = previous._replace(names=names, test=test)
        else:
            merged.append(rule)
    return merged


def convert(text: str, plan: Plan) -> str:
    """*text* with the declarations of *plan* added after its ``__getattr__``."""
    function = plan.function
    lines = text.splitlines(keepends=True)
    end = function.end_lineno or function.lineno
    newline = "\r\n" if lines and lines[0].endswith("\r\n") else "\n"
    indent = lines[function.lineno - 1][: function.col_offset]
    added = [line.replace("\n", newline) + newline for line in declarations(plan, indent)]
    if end == len(lines) and not lines[-1].endswith(("\n", "\r")):
        lines[-1] += newline
    return "".join([*lines[:end], newline, *added, *lines[end:]])


def unified_diff(relative: str, before: str, after: str) -> str:
    """A diff of *before* and *after* that ``patch -p1`` applies in the directory of *relative*."""
    return "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True),
            after.splitlines(keepends=True),
            f"a/{relative}",
            f"b/{relative}",
        )
    )


def parse_check(text: str, path: str) -> None:
    """Raise SyntaxError if the converted *text* does not parse (a bug of the conversion)."""
    ast.parse(text, filename=path)


def write_diffs(result: ScanResult, out: TextIO, err: TextIO) -> None:
    """Print to *out* a diff per static ``__getattr__`` of *result*; to *err*, why not for others.

    Nothing is written to any file: apply the diff with ``patch -p1`` from
    the current directory, whose relative paths its headers name.
    """
    from ._markers import declares
    from ._parsing import Unparsable, decode_source, parse_text
    from ._static_getattr import Plan, find_getattr, module_bindings, plan_getattr

    for skipped in result.skipped:
        err.write(f"{skipped.path}: no diff: {skipped.reason}\n")
    for finding in result.findings:
        if finding.kind != "module_getattr":
            continue
        where = f"{finding.path}:{finding.line}"
        try:
            with open(finding.path, "rb") as file:
                text = decode_source(file.read())
            # Only the statements around the hook may have been parsed so far.
            tree = parse_text(text, finding.path)
        except OSError as exc:
            err.write(f"{where}: no diff: cannot read: {exc.strerror or exc}\n")
            continue
        except Unparsable as exc:
            err.write(f"{where}: no diff: {exc}\n")
            continue
        if declares(text):
            err.write(f"{where}: no diff: the module declares names with pep726hook already\n")
            continue
        function = find_getattr(tree, finding.line)
        if function is None:
            err.write(f"{where}: no diff: __getattr__ is not a def statement\n")
            continue
        module = finding.module
        if os.path.basename(finding.path) == "__init__.py" and module == "__init__":
            module = ""  # a package's __init__ given alone: its dotted name is unknown
        plan = plan_getattr(function, text, module, module_bindings(tree))
        if not isinstance(plan, Plan):
            reason = plan.reason
            if not module and "not the submodule" in reason:
                reason += " (the package's name is unknown: give the directory above it)"
            err.write(f"{where}: no diff: line {plan.line}: {reason}\n")
            continue
        if "\r" in text and "\r\n" not in text:
            err.write(f"{where}: no diff: the file's lines end with a bare carriage return\n")
            continue
        after = convert(text, plan)
        try:
            parse_check(after, finding.path)
        except (SyntaxError, ValueError) as exc:
            # Never a patch that breaks the module: say so instead.
            err.write(f"{where}: no diff: the converted module would not parse ({exc})\n")
            continue
        relative = os.path.relpath(finding.path).replace(os.sep, "/")
        out.write(unified_diff(relative, text, after))

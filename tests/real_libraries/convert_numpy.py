"""Convert an installed numpy 2.x's PEP 562 ``__getattr__`` into pep726hook declarations.

    python tests/real_libraries/convert_numpy.py [PATH/TO/numpy/__init__.py]

Edits numpy's ``__init__.py`` in place (by default the one the running
interpreter would import; numpy itself is not imported): after numpy's
``__dir__`` it adds a block that, where ``pep726hook.lazy_attribute`` and
``pep726hook.removed_attribute`` can be imported, declares every name
numpy's ``__getattr__`` serves and then deletes ``__getattr__`` from the
namespace.  CPython 3.11-3.14 never specialise reads of a module whose
namespace holds ``__getattr__`` (https://github.com/python/cpython/issues/143469),
so ``np.float64`` then reads as fast as a plain module's name.  Where
pep726hook or that API is missing, the block does nothing and numpy's own
``__getattr__`` serves those names, as before.

The declarations are numpy's own, read from its ``__getattr__``:

- ``if attr == "linalg": import numpy.linalg as linalg; return linalg``:
  ``lazy_attribute(numpy, "linalg")``;
- a branch that raises ``AttributeError(message)`` (``array_api``), or
  chooses between the two (``distutils``): ``removed_attribute`` with that
  message, under the same condition;
- the tail, run for every name of the tables it tests
  (``__future_scalars__``, ``__former_attrs__``, ``__expired_attributes__``)
  and every name it compares with: ``removed_attribute`` with the message
  numpy raises for it and the warning (``FutureWarning``,
  ``DeprecationWarning``) numpy gives first, both built by numpy's own
  expressions, copied from its source.  Where that error is CPython's own
  miss (numpy's last ``raise``, without ``name=None``: ``np.bytes``), the
  declaration has no message, so that the read misses as on a plain module
  after the warning; a name that reaches it without a warning is left
  undeclared.

A name the namespace already holds is left alone (numpy's ``__getattr__``
never sees it either).  A ``__getattr__`` of any other shape (numpy 1.x's,
or a future one with statements this script does not know) is refused with
exit status 2 and nothing is written: the real_packages session then fails
rather than test numpy unconverted.  Running it twice changes nothing.
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import sys

MARKER = (
    "# Declared to pep726hook (converted by pep726hook's tests/real_libraries/convert_numpy.py)."
)


# The helper that declares a name numpy deprecates (a warning, then a value).
DEPRECATED_HELPER = [
    "        def deprecated(attr, message, category, factory):",
    "            if attr not in namespace and attr not in declared:",
    "                declared.add(attr)",
    "                _deprecate_attribute(",
    "                    module, attr, message, category=category, factory=factory",
    "                )",
    "",
]


class Unconvertible(Exception):
    """numpy's ``__getattr__`` has a shape this conversion does not know."""


def _is_attr(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id == "attr"


def _compared_literal(test: ast.expr) -> str | None:
    """``attr == "name"``: the name; None for anything else."""
    if (
        isinstance(test, ast.Compare)
        and _is_attr(test.left)
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.Eq)
        and isinstance(test.comparators[0], ast.Constant)
        and isinstance(test.comparators[0].value, str)
    ):
        return test.comparators[0].value
    return None


def _tested_table(test: ast.expr) -> str | None:
    """``attr in __table__``: the table's name; None for anything else."""
    if (
        isinstance(test, ast.Compare)
        and _is_attr(test.left)
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.In)
        and isinstance(test.comparators[0], ast.Name)
    ):
        return test.comparators[0].id
    return None


def _lazy_import(body: list[ast.stmt], name: str) -> bool:
    """``import numpy.<name> as <name>; return <name>``."""
    return (
        len(body) == 2
        and isinstance(body[0], ast.Import)
        and len(body[0].names) == 1
        and body[0].names[0].name == f"numpy.{name}"
        and body[0].names[0].asname == name
        and isinstance(body[1], ast.Return)
        and isinstance(body[1].value, ast.Name)
        and body[1].value.id == name
    )


def _raised_message(body: list[ast.stmt]) -> ast.expr | None:
    """``raise AttributeError(MESSAGE[, name=None])``: MESSAGE; None for anything else."""
    if len(body) != 1 or not isinstance(body[0], ast.Raise):
        return None
    call = body[0].exc
    if not (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Name)
        and call.func.id == "AttributeError"
        and len(call.args) == 1
        and all(
            k.arg == "name" and isinstance(k.value, ast.Constant) and k.value.value is None
            for k in call.keywords
        )
    ):
        return None
    return call.args[0]


# The message of CPython's own miss of a module attribute, as numpy builds it.
PLAIN_MISS_MESSAGES = (
    "'module {!r} has no attribute {!r}'.format(__name__, attr)",
    "f'module {__name__!r} has no attribute {attr!r}'",
)


def _is_a_plain_miss(statement: ast.stmt, message: ast.expr) -> bool:
    """Whether *statement* raises what a plain module's miss raises: CPython's message, no name=None."""
    assert isinstance(statement, ast.Raise) and isinstance(statement.exc, ast.Call)
    return not statement.exc.keywords and ast.unparse(message) in PLAIN_MISS_MESSAGES


def _warning(body: list[ast.stmt]) -> tuple[ast.expr, ast.expr] | None:
    """``warnings.warn(MESSAGE, CATEGORY, stacklevel=2)``: (MESSAGE, CATEGORY); None otherwise."""
    if len(body) != 1 or not isinstance(body[0], ast.Expr):
        return None
    call = body[0].value
    if not (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and isinstance(call.func.value, ast.Name)
        and call.func.value.id == "warnings"
        and call.func.attr == "warn"
    ):
        return None
    arguments = list(call.args)
    keywords = {k.arg: k.value for k in call.keywords}
    stacklevel = keywords.pop("stacklevel", None)
    if "category" in keywords:
        arguments.append(keywords.pop("category"))
    if (
        len(arguments) != 2
        or keywords
        or not (isinstance(stacklevel, ast.Constant) and stacklevel.value == 2)
    ):
        # Only stacklevel=2 names the reader's line, which removed_attribute() warns at.
        return None
    return arguments[0], arguments[1]


def _branch(name: str, body: list[ast.stmt], indent: str) -> list[str]:
    """The declaration of one ``if attr == name:`` branch of the head."""
    if _lazy_import(body, name):
        return [f"{indent}lazy({name!r})"]
    message = _raised_message(body)
    if message is not None:
        return [f"{indent}removed({name!r}, {ast.unparse(message)})"]
    if len(body) == 1 and isinstance(body[0], ast.If):
        # numpy's "distutils": a submodule where it is shipped, else removed.
        choice = body[0]
        return [
            f"{indent}if {ast.unparse(choice.test)}:",
            *_branch(name, choice.body, indent + "    "),
            f"{indent}else:",
            *_branch(name, choice.orelse, indent + "    "),
        ]
    raise Unconvertible(f"the branch for {name!r} neither imports numpy.{name} nor raises")


def _head(statement: ast.If, lines: list[str]) -> list[str]:
    """Declare each name of the ``if attr == ...: ... elif ...`` chain; return the names."""
    names = []
    node: ast.stmt | None = statement
    while node is not None:
        if not isinstance(node, ast.If):
            raise Unconvertible("the chain of comparisons ends with an else")
        name = _compared_literal(node.test)
        if name is None:
            raise Unconvertible(f"line {node.lineno}: not a comparison of attr with a string")
        lines += _branch(name, node.body, " " * 8)
        names.append(name)
        if len(node.orelse) > 1:
            raise Unconvertible(f"line {node.lineno}: an else of more than one statement")
        node = node.orelse[0] if node.orelse else None
    return names


def _last_raise(statement: ast.stmt) -> list[str]:
    """The declaration of what __getattr__'s last statement raises, for every name of the tables."""
    message = _raised_message([statement])
    if message is None:
        raise Unconvertible("__getattr__ does not end with raise AttributeError(...)")
    if _is_a_plain_miss(statement, message):
        # numpy's own miss: after its warning (np.bytes), the error a plain
        # module's miss raises, its name filled in.
        return [
            "            if warning is not None:",
            "                removed(attr, None, warning, category)",
        ]
    return [f"            removed(attr, {ast.unparse(message)}, warning, category)"]


def _tail(statements: list[ast.stmt], lines: list[str]) -> None:
    """Declare every name the tail (after the chain) warns about or raises for."""
    tables, literals, loop, functions = [], [], [], []
    for index, statement in enumerate(statements):
        last = index == len(statements) - 1
        if last:
            loop += _last_raise(statement)
            break
        if not isinstance(statement, ast.If) or statement.orelse:
            raise Unconvertible(f"line {statement.lineno}: not an if statement without else")
        table = _tested_table(statement.test)
        literal = _compared_literal(statement.test)
        if table is None and literal is None:
            raise Unconvertible(f"line {statement.lineno}: tests neither a table nor a name")
        if table is not None:
            tables.append(table)
        if literal is not None:
            literals.append(literal)
        warning = _warning(statement.body)
        message = _raised_message(statement.body)
        served = _warning(statement.body[:1])
        loop.append(f"            if {ast.unparse(statement.test)}:")
        if (
            literal is not None
            and served is not None
            and len(statement.body) > 1
            and isinstance(statement.body[-1], ast.Return)
        ):
            # numpy 2.0-2.4's "chararray": a warning, then a value.
            factory = f"_value_of_{literal}"
            functions += [
                f"        def {factory}():",
                *(
                    f"            {line}"
                    for part in statement.body[1:]
                    for line in ast.unparse(part).splitlines()
                ),
                "",
            ]
            text, category = (ast.unparse(part) for part in served)
            loop += [
                f"                deprecated(attr, {text}, {category}, {factory})",
                "                continue",
            ]
        elif warning is not None:
            text, category = (ast.unparse(part) for part in warning)
            loop.append(f"                warning, category = {text}, {category}")
        elif message is not None:
            loop += [
                f"                removed(attr, {ast.unparse(message)}, warning, category)",
                "                continue",
            ]
        else:
            raise Unconvertible(f"line {statement.lineno}: neither warns nor raises")
    names = " | ".join([*(f"set({table})" for table in tables), repr(set(literals) or set())])
    lines += [
        "",
        *functions,
        "        # Then what the rest of __getattr__ does for the names of its tables:",
        "        # the warning it gives first, if any, and the error it raises.",
        f"        for attr in sorted({names}):",
        "            warning = category = None",
        *loop,
    ]


def convert(source: str) -> str:
    """Return *source* (numpy's ``__init__.py``) with the declarations added."""
    if MARKER in source:
        return source
    if not hasattr(ast, "unparse"):
        raise Unconvertible("the conversion needs Python 3.9 or later (ast.unparse)")
    tree = ast.parse(source)
    getattr_function = dir_function = None
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == "__getattr__":
            getattr_function = node
        if isinstance(node, ast.FunctionDef) and node.name == "__dir__":
            dir_function = node
    if getattr_function is None or dir_function is None:
        raise Unconvertible("no module-level __getattr__ and __dir__")
    if [a.arg for a in getattr_function.args.args] != ["attr"]:
        raise Unconvertible("__getattr__'s parameter is not named attr")
    body = list(getattr_function.body)
    while body and isinstance(body[0], ast.Import):
        if [alias.name for alias in body[0].names] != ["warnings"]:
            raise Unconvertible(f"line {body[0].lineno}: an import other than warnings")
        body.pop(0)
    if not body or not isinstance(body[0], ast.If):
        raise Unconvertible("__getattr__ does not start with `if attr == ...`")
    indent = " " * dir_function.col_offset
    declarations: list[str] = []
    _head(body[0], declarations)
    _tail(body[1:], declarations)
    deprecates = any(" deprecated(attr, " in line for line in declarations)
    block = [
        "",
        MARKER,
        "# Where pep726hook offers lazy_attribute() and removed_attribute(), the",
        "# names __getattr__ serves are declared to it and __getattr__ leaves the",
        "# namespace: CPython 3.11-3.14 never specialise reads of a module whose",
        "# namespace holds __getattr__ (https://github.com/python/cpython/issues/143469).",
        "# Elsewhere __getattr__ serves them, as before.",
        "try:",
        "    from pep726hook import lazy_attribute as _lazy_attribute",
        "    from pep726hook import removed_attribute as _removed_attribute",
        *(
            ["    from pep726hook import deprecate_attribute as _deprecate_attribute"]
            if deprecates
            else []
        ),
        "except ImportError:",
        "    pass",
        "else:",
        "    def _declare_attributes(module):",
        "        namespace = vars(module)",
        "        declared = set()",
        "",
        "        def lazy(attr):",
        "            if attr not in namespace and attr not in declared:",
        "                declared.add(attr)",
        "                _lazy_attribute(module, attr)",
        "",
        "        def removed(attr, message, warning=None, category=None):",
        "            if attr not in namespace and attr not in declared:",
        "                declared.add(attr)",
        "                _removed_attribute(",
        "                    module, attr, message, warning=warning,",
        "                    category=category or DeprecationWarning,",
        "                )",
        "",
        *(DEPRECATED_HELPER if deprecates else []),
        "        # First the names __getattr__ compares with, in its order.",
        *declarations,
        "",
        "    _declare_attributes(sys.modules[__name__])",
        "    del _declare_attributes, _lazy_attribute, _removed_attribute",
        *(["    del _deprecate_attribute"] if deprecates else []),
        "    del __getattr__",
    ]
    lines = source.splitlines(keepends=True)
    end = dir_function.end_lineno
    assert end is not None
    added = "".join(f"{indent}{line}\n" if line else "\n" for line in block)
    return "".join(lines[:end]) + added + "".join(lines[end:])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", help="numpy/__init__.py (default: the importable one)")
    parser.add_argument(
        "--print", action="store_true", help="print the converted file instead of writing it"
    )
    args = parser.parse_args(argv)
    path = args.path
    if path is None:
        spec = importlib.util.find_spec("numpy")
        if spec is None or spec.origin is None:
            print("convert_numpy: numpy is not installed", file=sys.stderr)
            return 2
        path = spec.origin
    with open(path, encoding="utf-8") as file:
        source = file.read()
    try:
        converted = convert(source)
    except Unconvertible as error:
        print(f"convert_numpy: {path}: {error}; nothing written", file=sys.stderr)
        return 2
    if args.print:
        sys.stdout.write(converted)
    elif converted == source:
        print(f"convert_numpy: {path} is converted already")
    else:
        compile(converted, path, "exec")
        with open(path, "w", encoding="utf-8") as file:
            file.write(converted)
        print(f"convert_numpy: converted {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""``pep726hook scan --diff``: declarations replacing a ``__getattr__`` that serves static names.

The fixtures are small modules of the shapes numpy, scipy, scikit-learn and
networkx write (written here, not copied from them).  Each converted module is
checked three ways: the diff applies with ``patch -p1``; without the
declarations API the module keeps its ``__getattr__`` and behaves as before;
with it (a stand-in that records the calls) the names are declared and
``__getattr__`` leaves the namespace.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pep726hook import _scan

NUMPY_SHAPE = """\
    import sys
    __former_attrs__ = {n: f"np.{n} was an alias of the builtin {n}" for n in ("object", "str")}
    __future_scalars__ = {"str", "bytes"}
    from ._expired import __expired_attributes__

    if not getattr(sys, "_never", False):
        def __getattr__(attr):
            import warnings

            if attr == "linalg":
                import numpyish.linalg as linalg
                return linalg
            elif attr == "fft":
                import numpyish.fft as fft
                return fft
            if attr in __future_scalars__:
                warnings.warn(
                    f"In the future `np.{attr}` will be "
                    "the scalar.", FutureWarning, stacklevel=2)

            if attr in __former_attrs__:
                raise AttributeError(__former_attrs__[attr]{NAME})

            if attr in __expired_attributes__:
                raise AttributeError(
                    f"`np.{attr}` was removed. "
                    f"{__expired_attributes__[attr]}"{NAME}
                )

            raise AttributeError(f"module {__name__!r} has no attribute {attr!r}")
"""

SCIPY_SHAPE = """\
    import importlib as _importlib

    submodules = [
        "linalg",
        "stats",
    ]

    __all__ = submodules + ["test"]


    def __dir__():
        return __all__


    def __getattr__(name):
        if name in submodules:
            return _importlib.import_module(f"{PKG}.{name}")
        else:
            try:
                return globals()[name]
            except KeyError:
                raise AttributeError(f"Module '{PKG}' has no attribute '{name}'")
"""

NETWORKX_SHAPE = """\
    def __getattr__(name):
        \"\"\"Remove functions and provide informative error messages.\"\"\"
        if name == "read_yaml":
            raise AttributeError("read_yaml has been removed; use yaml directly")
        raise AttributeError(f"module {__name__} has no attribute {name}")
"""

# Shapes that get no diff, and what the scan says of each.
REFUSED = {
    # networkx once raised ImportError for removed modules.
    "nx_import_error": (
        'def __getattr__(name):\n    if name == "nx_yaml":\n'
        '        raise ImportError("nx_yaml has been removed")\n'
        "    raise AttributeError(name)\n",
        "line 3: it raises ImportError, where a declared removal raises AttributeError",
    ),
    # scikit-learn's estimators: a value computed on first read.
    "sk_estimators": (
        "import importlib\n_where = {'Ridge': 'sk.linear'}\n"
        "def __getattr__(name):\n    if name in _where:\n"
        "        module = importlib.import_module(_where[name])\n"
        "        return getattr(module, name)\n    raise AttributeError(name)\n",
        "line 5: a branch computes what it returns ('module = importlib.import_module(_where[name])'):"
        " only a submodule of this module or a removal can be declared",
    ),
    # Every name imported as a submodule: no static set.
    "lazy_any": (
        "import importlib\ndef __getattr__(name):\n"
        "    return importlib.import_module(f'{__name__}.{name}')\n",
        "line 3: \"return importlib.import_module(f'{__name__}.{name}')\" is neither a test of the"
        " name, an import, a warning nor the final raise: what the function serves is not a"
        " static set of names",
    ),
    # The collection changes after it is bound.
    "mutated": (
        "import importlib\nsubs = ['a']\nsubs.append('b')\n"
        "def __getattr__(name):\n    if name in subs:\n"
        "        return importlib.import_module(f'{__name__}.{name}')\n"
        "    raise AttributeError(name)\n",
        "line 5: subs is bound or changed at lines [2, 3] at module level, not once",
    ),
}

#: A stand-in for the declarations API: records each call in the module's _declared.
API_STANDIN = """\
import sys

def _record(module, *call):
    sys.modules[module].__dict__.setdefault("_declared", []).append(call)

def lazy_attribute(module, name, *, factory=None):
    _record(module, "lazy", name)

def removed_attribute(module, name, message, *, warning=None, category=DeprecationWarning):
    _record(module, "removed", name, message, warning, category.__name__)
"""


def write(root: Path, files: dict[str, str]) -> None:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")


def run_diff(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, root: Path
) -> tuple[str, str]:
    monkeypatch.chdir(root)
    assert _scan.main(["--diff", "."]) == 0
    out, err = capsys.readouterr()
    return out, err


def apply(root: Path, diff: str) -> None:
    if shutil.which("patch") is None:
        pytest.skip("needs the patch program")
    done = subprocess.run(
        ["patch", "-p1", "--batch"],
        cwd=root,
        input=diff,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def run(root: Path, code: str, api: bool) -> str:
    """Run *code* in a fresh interpreter with *root* first on sys.path (and the stand-in API)."""
    paths = [str(root)]
    if api:
        write(root.parent / "api", {"pep726hook/__init__.py": API_STANDIN})
        paths.insert(0, str(root.parent / "api"))
    else:
        # pep726hook installed without the declarations API: the import fails.
        write(root.parent / "old", {"pep726hook/__init__.py": "def enable(m): pass\n"})
        paths.insert(0, str(root.parent / "old"))
    prelude = f"import sys; sys.path[:0] = {paths!r}\n"
    done = subprocess.run(
        [sys.executable, "-W", "error::DeprecationWarning", "-c", prelude + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_numpy_shape(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "tree"
    write(
        root,
        {
            # AttributeError takes name= from Python 3.10 on.
            "numpyish/__init__.py": NUMPY_SHAPE.replace(
                "{NAME}", ", name=None" if sys.version_info >= (3, 10) else ""
            ),
            "numpyish/_expired.py": "__expired_attributes__ = {'cast': 'Use asarray.'}\n",
            "numpyish/linalg.py": "",
            "numpyish/fft.py": "",
        },
    )
    diff, err = run_diff(capsys, monkeypatch, root)
    assert err == ""
    assert diff.startswith("--- a/numpyish/__init__.py\n+++ b/numpyish/__init__.py\n")
    apply(root, diff)
    # Without the API, __getattr__ serves the names as before.
    before = run(
        root,
        """
        import numpyish, warnings
        print(numpyish.linalg.__name__, "__getattr__" in vars(numpyish))
        try:
            numpyish.cast
        except AttributeError as exc:
            print(exc)
        """,
        api=False,
    )
    assert before == "numpyish.linalg True\n`np.cast` was removed. Use asarray.\n"
    after = run(
        root,
        """
        import numpyish
        print("__getattr__" in vars(numpyish))
        for call in numpyish._declared:
            print(*call, sep=" | ")
        """,
        api=True,
    )
    lines = after.splitlines()
    # The lazy names come first, as the function lists them; the members of a
    # set come in whatever order the set has.
    assert lines[:3] == ["False", "lazy | linalg", "lazy | fft"]
    assert sorted(lines[3:]) == sorted(
        [
            # str: warns (a future scalar), then the former alias's message.
            "removed | str | np.str was an alias of the builtin str"
            " | In the future `np.str` will be the scalar. | FutureWarning",
            # bytes: warns, then misses as on a plain module (no message).
            "removed | bytes | None | In the future `np.bytes` will be the scalar. | FutureWarning",
            "removed | object | np.object was an alias of the builtin object | None | DeprecationWarning",
            "removed | cast | `np.cast` was removed. Use asarray. | None | DeprecationWarning",
        ]
    )


@pytest.mark.parametrize("package,collection", [("sci", "submodules"), ("skl", "_submodules")])
def test_scipy_and_scikit_learn_shape(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    package: str,
    collection: str,
) -> None:
    root = tmp_path / "tree"
    source = SCIPY_SHAPE.replace("{PKG}", package).replace("submodules", collection)
    write(root, {f"{package}/__init__.py": source, f"{package}/linalg.py": "X = 1\n"})
    write(root, {f"{package}/stats.py": "Y = 2\n"})
    diff, err = run_diff(capsys, monkeypatch, root)
    assert err == ""
    apply(root, diff)
    before = run(root, f"import {package}; print({package}.stats.Y)", api=False)
    assert before == "2\n"
    after = run(
        root,
        f"import {package}; print('__getattr__' in vars({package}), {package}._declared)",
        api=True,
    )
    assert after == "False [('lazy', 'linalg'), ('lazy', 'stats')]\n"


def test_networkx_shape(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "tree"
    write(root, {"nx/__init__.py": NETWORKX_SHAPE})
    diff, err = run_diff(capsys, monkeypatch, root)
    assert err == ""
    apply(root, diff)
    after = run(root, "import nx; print('__getattr__' in vars(nx), nx._declared)", api=True)
    message = "read_yaml has been removed; use yaml directly"
    assert after == f"False [('removed', 'read_yaml', {message!r}, None, 'DeprecationWarning')]\n"
    # Converted: no second diff, and the finding says the function is the fallback now.
    diff, err = run_diff(capsys, monkeypatch, root)
    assert diff == ""
    assert err.endswith(": no diff: the module declares names with pep726hook already\n")
    for thorough in (False, True):
        (finding,) = _scan.scan(paths=[str(root)], thorough=thorough).findings
        assert finding.suggestion == (
            "none: the module declares its names with pep726hook (lazy_attribute(),"
            " removed_attribute()) and keeps __getattr__ as its fallback without pep726hook"
        )
        assert (finding.read_cost or "").startswith("only where pep726hook cannot be imported: ")


def test_what_cannot_be_converted_exactly_gets_no_diff_and_says_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "tree"
    write(root, {f"{name}.py": text for name, (text, _) in REFUSED.items()})
    before = {p.name: p.read_bytes() for p in root.iterdir()}
    diff, err = run_diff(capsys, monkeypatch, root)
    assert diff == ""
    lines = sorted(err.splitlines())
    assert len(lines) == len(REFUSED)
    for line, (name, (_, reason)) in zip(lines, sorted(REFUSED.items())):
        assert line.startswith(f"{root / name}.py:") and ": no diff: " in line
        assert reason in line, line
    # --diff writes nothing.
    assert {p.name: p.read_bytes() for p in root.iterdir()} == before


def test_static_getattr_finding_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path, {"nx/__init__.py": NETWORKX_SHAPE, "other.py": REFUSED["lazy_any"][0]})
    # scipy's names sit in a module-level list: the statement parsed alone
    # cannot tell, so the whole file is parsed (without --thorough too).
    write(tmp_path, {"sci/__init__.py": SCIPY_SHAPE.replace("{PKG}", "sci")})
    write(tmp_path, {"mutated.py": REFUSED["mutated"][0]})
    for thorough in (False, True):
        result = _scan.scan(paths=[str(tmp_path)], thorough=thorough)
        advice = {f.module: f.suggestion or "" for f in result.findings}
        assert advice["nx"].startswith(
            "this __getattr__ serves a static set of names (1 removed name): declare them with"
            " pep726hook.lazy_attribute() and pep726hook.removed_attribute() instead"
        )
        assert "pep726hook scan --diff FILE" in advice["nx"]
        assert advice["sci"].startswith(
            "this __getattr__ serves a static set of names (the submodules listed in"
            " submodules): declare them"
        )
        assert "static" not in advice["other"]
        assert "static" not in advice["mutated"]


@pytest.mark.parametrize(
    "more,named",
    [
        (["--json"], "--json"),
        (["somedist"], "DIST"),
        (["--path", "."], "--path"),
        (["--stdlib"], "--stdlib"),
        (["--fail-on", "module_getattr"], "--fail-on"),
    ],
)
def test_diff_covers_only_its_paths(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, more: list[str], named: str
) -> None:
    assert _scan.main(["--diff", str(tmp_path), *more]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.endswith(f"error: argument --diff: not allowed with {named}\n")


def test_a_file_that_does_not_parse_whole_gets_no_diff(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The scan parses only the statement of the hook; the diff needs the whole file.
    write(tmp_path, {"broken.py": textwrap.dedent(NETWORKX_SHAPE) + "\ndef broken(:\n    pass\n"})
    diff, err = run_diff(capsys, monkeypatch, tmp_path)
    assert diff == ""
    assert err.startswith(f"{tmp_path / 'broken.py'}:1: no diff: syntax error at line 7: ")
    assert err.count("\n") == 1


# Each form the conversion reads, in a package pkg with submodules a and b,
# and the calls its declarations make.
FORMS = {
    "imports": (
        """\
        def __getattr__(name):
            if name == "a":
                import pkg.a as a
                return a
            elif name == "b":
                import pkg.b as b
                return b
            raise AttributeError(name)
        """,
        [("lazy", "a"), ("lazy", "b")],
    ),
    "relative import_module": (
        """\
        import importlib

        def __getattr__(name):
            if name in ("a", "b"):
                return importlib.import_module("." + name, __name__)
            raise AttributeError(name)
        """,
        [("lazy", "a"), ("lazy", "b")],
    ),
    "or, and import_module imported": (
        """\
        from importlib import import_module

        def __getattr__(name):
            if name == "a" or name == "b":
                return import_module(f"pkg.{name}")
            raise AttributeError(name)
        """,
        [("lazy", "a"), ("lazy", "b")],
    ),
    "warned removal": (
        """\
        import warnings

        def __getattr__(name):
            if name == "old":
                warnings.warn("old is going", DeprecationWarning, stacklevel=2)
                raise AttributeError("old was removed")
            raise AttributeError(name)
        """,
        [("removed", "old", "old was removed", "old is going", "DeprecationWarning")],
    ),
    "collection a function in the same block also names": (
        """\
        import importlib
        SUBS = ("a", "b")
        if True:
            def helper():
                SUBS = [name for name in "xy"]
                SUBS.append(1)
                return SUBS

            def __getattr__(name):
                if name in SUBS:
                    return importlib.import_module(f"{__name__}.{name}")
                raise AttributeError(name)
        """,
        [("lazy", "a"), ("lazy", "b")],
    ),
    "a test over several lines": (
        """\
        import importlib

        def __getattr__(name):
            if (name == "a"
                    or name == "b"):
                return importlib.import_module(f"{__name__}.{name}")
            raise AttributeError(name)
        """,
        [("lazy", "a"), ("lazy", "b")],
    ),
    "a triple-quoted message": (
        """\
        def __getattr__(name):
            if name == "old":
                raise AttributeError(
                    \"\"\"old was removed.
            Use new.\"\"\"
                )
            raise AttributeError(name)
        """,
        [("removed", "old", "old was removed.\n    Use new.", None, "DeprecationWarning")],
    ),
    "dict of messages": (
        """\
        _gone = {"x": "use y", "z": "use w", 0: "no attribute name is 0"}

        def __getattr__(name):
            if name in _gone:
                raise AttributeError(f"{name} was removed: {_gone[name]}")
            raise AttributeError(name)
        """,
        [
            ("removed", "x", "x was removed: use y", None, "DeprecationWarning"),
            ("removed", "z", "z was removed: use w", None, "DeprecationWarning"),
        ],
    ),
}


@pytest.mark.parametrize("crlf", [False, True])
@pytest.mark.parametrize("form", sorted(FORMS))
def test_each_form_is_declared_as_the_function_serves_it(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    form: str,
    crlf: bool,
) -> None:
    source, calls = FORMS[form]
    root = tmp_path / "tree"
    write(root, {"pkg/__init__.py": source, "pkg/a.py": "A = 1\n", "pkg/b.py": "B = 2\n"})
    if crlf:
        init = root / "pkg" / "__init__.py"
        init.write_bytes(init.read_bytes().replace(b"\n", b"\r\n"))
    diff, err = run_diff(capsys, monkeypatch, root)
    assert err == ""
    apply(root, diff)
    if crlf:
        assert b"\n" not in (root / "pkg" / "__init__.py").read_bytes().replace(b"\r\n", b"")
    # Without the API, the function serves the names as before.
    name = calls[0][1]
    before = run(
        root,
        f"""
        import pkg, warnings
        warnings.simplefilter("ignore")
        try:
            print(pkg.{name}.__name__)
        except AttributeError as exc:
            print(exc)
        print('__getattr__' in vars(pkg))
        """,
        api=False,
    )
    served = f"pkg.{name}" if calls[0][0] == "lazy" else calls[0][2]
    assert before == f"{served}\nTrue\n"
    after = run(root, "import pkg; print('__getattr__' in vars(pkg), pkg._declared)", api=True)
    assert after == f"False {calls!r}\n"


REFUSED_FORMS = {
    "warning before a submodule": (
        "import importlib, warnings\nW = {'a'}\ndef __getattr__(name):\n"
        "    if name in W:\n        warnings.warn('a moves')\n"
        "    if name == 'a':\n        return importlib.import_module('pkg.a')\n"
        "    raise AttributeError(name)\n",
        "line 3: a submodule is served after a branch that warns",
    ),
    "falls off its end": (
        "import importlib\ndef __getattr__(name):\n    if name == 'a':\n"
        "        return importlib.import_module('pkg.a')\n",
        "line 2: it does not end by raising AttributeError",
    ),
    "decorated": (
        "import functools\n@functools.lru_cache\ndef __getattr__(name):\n"
        "    raise AttributeError(name)\n",
        "line 3: it is decorated",
    ),
    "a test the scan does not read": (
        "def __getattr__(name):\n    if name.startswith('_'):\n"
        "        raise AttributeError(name)\n    raise AttributeError(name)\n",
        "line 2: the test \"name.startswith('_')\" is not a test of the name it converts",
    ),
    "collection bound after the function": (
        "def __getattr__(name):\n    if name in GONE:\n        raise AttributeError('gone')\n"
        "    raise AttributeError(name)\nGONE = ('x',)\n",
        "line 2: GONE is bound after the function (line 5)",
    ),
    "a dunder name": (
        "def __getattr__(name):\n    if name == '__version__':\n"
        "        raise AttributeError('no version')\n    raise AttributeError(name)\n",
        "line 1: declarations cannot serve the dunder name __version__",
    ),
    "two definitions": (
        "def __getattr__(name):\n    raise AttributeError(name)\n"
        "def __getattr__(name):\n    if name == 'x':\n        raise AttributeError('x')\n"
        "    raise AttributeError(name)\n",
        "line 3: __getattr__ is bound more than once, at lines [1, 3]",
    ),
    "message from a name rebound later": (
        "MSG = 'gone'\ndef __getattr__(name):\n    if name == 'x':\n"
        "        raise AttributeError(MSG)\n    raise AttributeError(name)\nMSG = 'really gone'\n",
        "line 4: 'MSG' uses MSG, which is not bound at module level before the function only",
    ),
}


def test_the_forms_it_cannot_convert_exactly_say_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for index, (text, reason) in enumerate(REFUSED_FORMS.values()):
        root = tmp_path / str(index)
        write(root, {"pkg/__init__.py": text})
        diff, err = run_diff(capsys, monkeypatch, root)
        assert diff == ""
        assert err.startswith(str(root / "pkg" / "__init__.py"))
        assert err.endswith(f": no diff: {reason}\n"), err


def test_a_package_given_alone_is_told_to_give_the_directory_above(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path, {"pkg/__init__.py": FORMS["imports"][0]})
    monkeypatch.chdir(tmp_path)
    assert _scan.main(["--diff", "pkg/__init__.py"]) == 0
    out, err = capsys.readouterr()
    assert out == ""
    assert err.endswith(
        "no diff: line 4: it returns pkg.a, not the submodule the name names"
        " (the package's name is unknown: give the directory above it)\n"
    )


@pytest.mark.parametrize(
    "text,whole",
    [
        # Refused whatever the module holds: only the function's statement is parsed.
        (
            "X = {}\ndef __getattr__(name):\n    if name in X:\n"
            "        globals()[name] = v = X[name]\n        return v\n"
            "    raise AttributeError(name)\n",
            False,
        ),
        # Static but for X, which only the whole module can tell: parsed whole.
        (
            "X = {'a': 'gone'}\ndef __getattr__(name):\n    if name in X:\n"
            "        raise AttributeError(X[name])\n    raise AttributeError(name)\n",
            True,
        ),
    ],
)
def test_the_whole_module_is_parsed_only_when_its_names_decide(text: str, whole: bool) -> None:
    from pep726hook._scan._analysis import analyse
    from pep726hook._scan._filter import Index, plan_parse

    data = text.encode()
    plan = plan_parse(data, Index(data), "m")
    assert not plan.whole_file and plan.hook_lines
    analysed = analyse(data, "m.py", "m", plan.hook_lines, Index(data))
    assert (analysed.tree is not None) == whole
    (item,) = analysed.found
    assert ("static set of names" in (item.suggestion or "")) == whole

"""``pep726hook scan``: every shape in which code intercepts a module's stores.

Each shape is a small fixture distribution written for these tests (never
imported), and each test checks the finding's kind, the lines of the class,
of the install and of the callers, its confidence, its read-cost note and its
suggestion text.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any, Dict

import pytest

from pep726hook import _scan
from pep726hook._scan import _advice, _report

Files = Dict[str, str]

# A helper that replaces the module named by its argument with a wrapper that
# warns on reads of deprecated names and forwards stores and deletes.
DEPRECATE = """\
    import sys
    import warnings


    class _ModuleWithDeprecations:
        def __init__(self, module, names):
            self.__dict__["_module"] = module
            self.__dict__["_names"] = names

        def __getattr__(self, name):
            if name in self._names:
                warnings.warn(name + " is deprecated", DeprecationWarning, stacklevel=2)
            return getattr(self._module, name)

        def __setattr__(self, name, value):
            setattr(self._module, name, value)

        def __delattr__(self, name):
            delattr(self._module, name)


    def deprecated(value, module_name, names):
        module = sys.modules[module_name]
        sys.modules[module_name] = _ModuleWithDeprecations(module, names)  # install
        return value
"""

# A helper that imports a package by name and swaps its class.
ATTACH = """\
    import importlib
    import types


    class _Guard(types.ModuleType):
        def __setattr__(self, name, value):
            if name.isupper():
                raise AttributeError(name + " is a constant")
            super().__setattr__(name, value)


    def attach(package_name):
        pkg = importlib.import_module(package_name)
        pkg.__class__ = _Guard  # install
"""

# A wrapper that is no ModuleType subclass, installed through a name.
PROXY = """\
    import sys


    class _ModuleProxy:
        def __init__(self, module):
            object.__setattr__(self, "_module", module)

        def __getattribute__(self, name):
            return getattr(object.__getattribute__(self, "_module"), name)

        def __setattr__(self, name, value):
            setattr(object.__getattribute__(self, "_module"), name, value)


    module = _ModuleProxy(sys.modules[__name__])
    sys.modules[__name__] = module  # install
"""

# The module to guard is the caller's, found through its frame.
FRAMED = """\
    import sys


    class _ReadOnly(type(sys)):
        def __delattr__(self, name):
            raise AttributeError(name)


    def protect():
        name = sys._getframe(1).f_globals["__name__"]
        sys.modules[name].__class__ = _ReadOnly  # install
"""

# A stand-in for __main__ whose namespace is the dictionary it was given.
MAINLIKE = """\
    import sys


    class UserModule:
        def __init__(self, namespace):
            object.__setattr__(self, "_namespace", namespace)

        @property
        def __dict__(self):
            return self._namespace


    def run_as_main(namespace):
        main = UserModule(namespace)
        sys.modules["__main__"] = main  # install
        return main
"""

# A class with a setter-only property: stores are guarded, reads are plain.
SETTER_ONLY = """\
    import sys
    import types


    def _set_precision(module, value):
        raise AttributeError("set the context's precision instead")


    class _Context(types.ModuleType):
        precision = property(fset=_set_precision)


    sys.modules[__name__].__class__ = _Context  # install
"""


def make_dist(site: Path, name: str, files: Files, requires: str = "") -> None:
    """Install *files* into *site* as distribution *name* (METADATA and RECORD by hand)."""
    info = site / f"{name}-1.0.dist-info"
    info.mkdir(parents=True)
    headers = f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n"
    if requires:
        headers += f"Requires-Dist: {requires}\n"
    (info / "METADATA").write_text(headers + "\nA description.\nRequires-Dist: not-a-header\n")
    record = [f"{info.name}/METADATA,,", f"{info.name}/RECORD,,"]
    for relative, content in files.items():
        path = site / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(content), encoding="utf-8")
        record.append(f"{relative},,")
    (info / "RECORD").write_text("\n".join(record) + "\n")


def line_of(source: str, text: str) -> int:
    """The 1-based line of *source* (dedented) that holds *text*, which must be unique."""
    (line,) = [n for n, row in enumerate(textwrap.dedent(source).splitlines(), 1) if text in row]
    return line


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("shapes") / "site"
    make_dist(
        root,
        "guardlib",
        {
            "guardlib/__init__.py": """\
                from guardlib import _deprecate

                RED = 1
                _deprecate.deprecated(None, __name__, {"RED"})
            """,
            "guardlib/_deprecate.py": DEPRECATE,
            "guardlib/colors.py": """\
                from ._deprecate import deprecated

                BLUE = deprecated(2, __name__, {"BLUE"})
            """,
            "guardlib/unrelated.py": """\
                def deprecated(value):
                    return value

                deprecated(3)
            """,
            "guardattach/__init__.py": "",
            "guardattach/core.py": ATTACH,
        },
    )
    make_dist(
        root,
        "uses-guard",
        {
            "usesguard/__init__.py": """\
                import guardattach.core as core

                core.attach(__name__)
            """,
            "usesguard/other.py": """\
                from guardattach.core import attach as protect

                def later():
                    protect(__name__)
            """,
        },
        requires="GuardLib[extra] >= 1.0 ; python_version >= '3.8'",
    )
    # The same calls in a distribution that does not declare the requirement:
    # it cannot import the helper where the metadata is right, and is not read.
    make_dist(
        root,
        "undeclared",
        {"undeclared.py": "import guardattach.core\n\nguardattach.core.attach(__name__)\n"},
    )
    make_dist(
        root,
        "shapes",
        {
            "shapes/__init__.py": "",
            "shapes/proxied.py": PROXY,
            "shapes/framed.py": FRAMED,
            "shapes/consts.py": """\
                from shapes.framed import protect

                protect()
            """,
            "shapes/mainlike.py": MAINLIKE,
            "shapes/setter_only.py": SETTER_ONLY,
        },
    )
    return root


@pytest.fixture(scope="module")
def document(site: Path) -> dict[str, Any]:
    return _report.to_json(_scan.scan(site=[str(site)]))


def findings(document: dict[str, Any], module: str, kind: str) -> list[dict[str, Any]]:
    return [f for f in document["findings"] if f["module"] == module and f["kind"] == kind]


#: How the suggestion of a finding in an installed distribution starts: its user reads it.
FOR_USERS = (
    "for you, as a user of the distribution: nothing to change: the code is the distribution's"
    " own, and works as before. For its authors: "
)


def for_authors(suggestion: str) -> str:
    """The part of an installed distribution's suggestion that is for its authors."""
    assert suggestion.startswith(FOR_USERS), suggestion
    return suggestion[len(FOR_USERS) :]


def related(finding: dict[str, Any], role: str) -> list[tuple[str, int]]:
    return [(r["module"], r["line"]) for r in finding["related"] if r["role"] == role]


def test_helper_replacing_a_named_module_with_a_wrapper(document: dict[str, Any]) -> None:
    (finding,) = findings(document, "guardlib._deprecate", "helper_workaround")
    assert finding["line"] == finding["class_line"] == line_of(DEPRECATE, "class _Module")
    assert finding["install_line"] == line_of(DEPRECATE, "# install")
    assert finding["confidence"] == "medium"
    assert "on a module passed to deprecated" in finding["detail"]
    assert related(finding, "helper") == [("guardlib._deprecate", line_of(DEPRECATE, "def dep"))]
    assert finding["related"][0]["name"] == "guardlib._deprecate.deprecated"
    # Both callers of the same distribution, through a relative and an absolute
    # import; not the unrelated function of the same name.
    assert related(finding, "caller") == [("guardlib", 4), ("guardlib.colors", 3)]
    assert finding["read_cost"].startswith(
        "the module is replaced by a _ModuleWithDeprecations object, not a module"
    )
    assert "(_ModuleWithDeprecations.__getattr__), on every interpreter" in finding["read_cost"]
    suggestion = for_authors(finding["suggestion"])
    # A deprecation: deprecate_attribute() from the helper, no hooks.
    assert suggestion.startswith(
        "have deprecated call pep726hook.deprecate_attribute(module, name, message) for each"
        " name on the module it is given"
    )
    assert "keeping class _ModuleWithDeprecations only as the fallback" in suggestion
    assert "the module stays in sys.modules and its own code keeps the names" in suggestion
    assert "__setattr__" not in suggestion


def test_calls_of_a_helper_in_the_same_distribution(document: dict[str, Any]) -> None:
    (call,) = findings(document, "guardlib.colors", "helper_call")
    assert (call["line"], call["confidence"], call["distribution"]) == (3, "medium", "guardlib")
    assert call["class_line"] is None and call["install_line"] is None
    helper = [r for r in call["related"] if r["role"] != "helper"]
    assert [(r["role"], r["line"]) for r in helper] == [
        ("class", line_of(DEPRECATE, "class _Module")),
        ("install", line_of(DEPRECATE, "# install")),
    ]
    assert "calls guardlib._deprecate.deprecated (" in call["detail"]
    assert call["suggestion"].startswith(
        "nothing to change in this call once guardlib._deprecate.deprecated installs PEP 726 hooks"
    )
    assert call["read_cost"].startswith("the module is replaced by a _ModuleWithDeprecations")
    assert findings(document, "guardlib", "helper_call")[0]["line"] == 4
    assert not findings(document, "guardlib.unrelated", "helper_call")


def test_helper_swapping_the_class_of_an_imported_package(document: dict[str, Any]) -> None:
    (finding,) = findings(document, "guardattach.core", "helper_workaround")
    assert finding["distribution"] == "guardlib"
    assert finding["class_line"] == line_of(ATTACH, "class _Guard")
    assert finding["install_line"] == line_of(ATTACH, "# install")
    assert "installed on a module passed to attach by __class__ assignment" in finding["detail"]
    assert finding["read_cost"] == (
        "reads take the subclass path, not the specialised module read, on CPython 3.11-3.13"
    )
    # Callers in another distribution, by imported name (module alias, renamed function).
    assert related(finding, "caller") == [("usesguard", 3), ("usesguard.other", 4)]
    suggestion = for_authors(finding["suggestion"])
    assert suggestion.startswith('have attach put the hooks "def __setattr__(name, value): ..."')
    assert "no PEP 562 __getattr__ is needed" in suggestion


def test_calls_across_distributions_are_low_confidence(document: dict[str, Any]) -> None:
    calls = [f for f in document["findings"] if f["kind"] == "helper_call"]
    across = [
        (f["module"], f["line"], f["confidence"])
        for f in calls
        if f["distribution"] == "uses-guard"
    ]
    assert across == [("usesguard", 3, "low"), ("usesguard.other", 4, "low")]
    assert not [f for f in calls if f["distribution"] == "undeclared"]
    assert all(
        "of distribution guardlib" in f["detail"]
        for f in calls
        if f["distribution"] == "uses-guard"
    )


def test_wrapper_object_through_an_intermediate_name(document: dict[str, Any]) -> None:
    (finding,) = findings(document, "shapes.proxied", "wrapper_workaround")
    assert finding["class_line"] == line_of(PROXY, "class _ModuleProxy")
    assert finding["install_line"] == line_of(PROXY, "# install")
    binding = line_of(PROXY, "module = _ModuleProxy")
    assert (
        f"sys.modules replacement through the name module (bound at line {binding})"
        in (finding["detail"])
    )
    assert "overrides __setattr__, __getattribute__" in finding["detail"]
    assert finding["confidence"] == "high"
    assert finding["read_cost"] == (
        "every read of this module goes through Python code (_ModuleProxy.__getattribute__),"
        " on every interpreter"
    )
    suggestion = for_authors(finding["suggestion"])
    assert suggestion.startswith('define module-level "def __setattr__(name, value): ..."')
    assert 'the reads it computes become a PEP 562 "def __getattr__(name): ..."' in suggestion
    assert "every read of this module goes through Python code" in suggestion  # the cost today


def test_helper_taking_the_module_from_the_callers_frame(document: dict[str, Any]) -> None:
    (finding,) = findings(document, "shapes.framed", "helper_workaround")
    assert finding["class_line"] == line_of(FRAMED, "class _ReadOnly")
    assert finding["install_line"] == line_of(FRAMED, "# install")
    assert "on the module of the caller of protect (from its frame)" in finding["detail"]
    assert related(finding, "caller") == [("shapes.consts", 3)]
    assert '"def __delattr__(name): ..."' in finding["suggestion"]
    assert "__setattr__" not in finding["suggestion"]


def test_main_like_object_with_a_dict_property(document: dict[str, Any]) -> None:
    (finding,) = findings(document, "shapes.mainlike", "dict_property_module")
    assert finding["class_line"] == line_of(MAINLIKE, "class UserModule")
    assert finding["install_line"] == line_of(MAINLIKE, "# install")
    assert "installed as __main__" in finding["detail"]
    assert "__dict__ property" in finding["detail"]
    assert finding["confidence"] == "medium"
    assert finding["read_cost"].startswith("the module is replaced by a UserModule object")
    assert finding["suggestion"].startswith("none needed for pep726hook: PEP 726 hooks run for")
    assert "module.__dict__.update(namespace)" in finding["suggestion"]


def test_setter_only_property_needs_no_pep562_getattr(document: dict[str, Any]) -> None:
    (finding,) = findings(document, "shapes.setter_only", "class_workaround")
    assert finding["class_line"] == line_of(SETTER_ONLY, "class _Context")
    assert "setter property precision" in finding["detail"]
    suggestion = for_authors(finding["suggestion"])
    assert suggestion.startswith(
        'define module-level "def __setattr__(name, value): ..." and opt in with'
        " pep726hook.enable(__name__)"
    )
    assert "def __getattr__(name)" not in suggestion
    assert "no PEP 562 __getattr__ is needed" in suggestion
    assert "__delattr__" not in suggestion


def test_namespace_getattr_states_its_read_cost(tmp_path: Path) -> None:
    (tmp_path / "lazy.py").write_text("def __getattr__(name):\n    raise AttributeError(name)\n")
    (finding,) = _scan.scan(paths=[str(tmp_path)]).findings
    assert finding.kind == "module_getattr"
    assert finding.read_cost == (
        "reads of this module are not specialised while its namespace holds __getattr__,"
        " on CPython 3.11-3.14"
    )


def scan_source(tmp_path: Path, source: str, thorough: bool = False) -> list[_scan.ScanFinding]:
    (tmp_path / "mod.py").write_text(textwrap.dedent(source))
    return _scan.scan(paths=[str(tmp_path)], thorough=thorough).findings


OPT_IN = (
    "to keep its reads specialised, opt the module in with"
    " pep726hook.enable(__name__, fast_getattr=True)"
)


def test_namespace_getattr_is_told_to_opt_in(tmp_path: Path) -> None:
    (finding,) = scan_source(tmp_path, "def __getattr__(name):\n    raise AttributeError(name)\n")
    assert finding.suggestion is not None
    assert finding.suggestion.startswith(OPT_IN)
    assert '"For library authors"' in finding.suggestion  # the choice and its costs
    # The application's switch, which needs no edit of the module.
    assert (
        "an application can do the same for every module with a __getattr__, without editing"
        " any: python -m pep726hook --fast-getattr, or PEP726HOOK_FAST_GETATTR=1"
    ) in finding.suggestion
    assert "deprecat" not in finding.suggestion


DEPRECATING_GETATTR = """\
    import warnings

    def __getattr__(name):
        if name == "OLD":
            warnings.warn("OLD is deprecated; use NEW", DeprecationWarning, stacklevel=2)
            return NEW
        if name == "config":
            return _load_config()
        raise AttributeError(name)
"""

# numpy.core's shape: every value it returns comes right after a warning.
ONLY_DEPRECATED_GETATTR = """\
    def __getattr__(attr_name):
        from numpy._core import numeric
        from ._utils import _raise_warning
        sentinel = object()
        ret = getattr(numeric, attr_name, sentinel)
        if ret is sentinel:
            raise AttributeError(f"module 'numpy.core.numeric' has no attribute {attr_name}")
        _raise_warning(attr_name, "numeric")
        return ret
"""


@pytest.mark.parametrize("thorough", [False, True])
def test_getattr_that_only_serves_deprecated_names_gets_the_deprecation_hint(
    tmp_path: Path, thorough: bool
) -> None:
    (finding,) = scan_source(tmp_path, ONLY_DEPRECATED_GETATTR, thorough)
    assert finding.suggestion is not None
    assert finding.suggestion.startswith(
        "this __getattr__ only serves deprecated names (it warns before every value it returns):"
        " declare each with pep726hook.deprecate_attribute(__name__, name, message, factory=...)"
    )
    # One return without a warning before it and the hint is not given.
    (finding,) = scan_source(
        tmp_path.joinpath("other").mkdir() or tmp_path / "other",
        ONLY_DEPRECATED_GETATTR.replace("        _raise_warning", "        _log"),
        thorough,
    )
    assert finding.suggestion is not None and finding.suggestion.startswith(OPT_IN)


@pytest.mark.parametrize("thorough", [False, True])
def test_deprecating_getattr_is_told_to_opt_in_and_about_deprecate_attribute(
    tmp_path: Path, thorough: bool
) -> None:
    (finding,) = scan_source(tmp_path, DEPRECATING_GETATTR, thorough)
    assert finding.suggestion is not None
    # Opting in keeps the module's reads specialised under the native engine;
    # deprecate_attribute() is the way for the deprecated names themselves.
    assert finding.suggestion.startswith(OPT_IN)
    advice = finding.suggestion.partition("; where this __getattr__ serves deprecated names,")[2]
    assert advice.startswith(
        " pep726hook.deprecate_attribute(__name__, name, message) warns on reads, imports,"
        " stores and deletions through the module while the module's own code keeps the names"
    )
    assert '"Migrating a deprecation helper"' in advice
    # What a deprecating module's reads cost is the deprecation documentation's to say.
    assert "specialis" not in advice and "namespace" not in advice


# The pattern of the "For library authors" guide: the class and the
# __getattr__ exist only where pep726hook cannot be imported.
FALLBACK_ONLY = """\
    try:
        import pep726hook
    except ImportError:
        import sys, types

        class _Guarded(types.ModuleType):
            def __setattr__(self, name, value):
                raise AttributeError(name)

        sys.modules[__name__].__class__ = _Guarded

        def __getattr__(name):
            raise AttributeError(name)
    else:
        pep726hook.enable(__name__)
"""


@pytest.mark.parametrize("thorough", [False, True])
def test_getattr_in_the_fallback_branch_is_the_fallback_like_the_class(
    tmp_path: Path, thorough: bool
) -> None:
    by_kind = {f.kind: f for f in scan_source(tmp_path, FALLBACK_ONLY, thorough)}
    assert set(by_kind) == {"class_workaround", "module_getattr"}
    for finding, what in [
        (by_kind["class_workaround"], "class _Guarded"),
        (by_kind["module_getattr"], "__getattr__"),
    ]:
        assert finding.suggestion == (
            f"none: the module opts in with pep726hook.enable() and keeps {what} as its"
            " fallback without pep726hook"
        )
        assert finding.read_cost is not None
        assert finding.read_cost.startswith("only where pep726hook cannot be imported: ")


@pytest.mark.parametrize("thorough", [False, True])
def test_getattr_alone_in_the_fallback_branch_is_the_fallback(
    tmp_path: Path, thorough: bool
) -> None:
    # No class: only the try statement is parsed (unless thorough), and the
    # enable() call may lie outside it.
    source = """\
        try:
            from pep726hook import enable
        except ModuleNotFoundError:
            def __getattr__(name):
                raise AttributeError(name)
        else:
            enable = None

        import pep726hook
        pep726hook.enable(__name__)
    """
    (finding,) = scan_source(tmp_path, source, thorough)
    assert finding.kind == "module_getattr"
    assert finding.suggestion is not None and finding.suggestion.startswith("none:")
    assert finding.read_cost is not None and finding.read_cost.startswith("only where")


def test_getattr_outside_the_fallback_branch_keeps_its_cost(tmp_path: Path) -> None:
    # Bound whether or not pep726hook imports: the module pays for it, unless
    # the native engine serves it, which the suggestion says.
    source = (
        textwrap.dedent(FALLBACK_ONLY)
        + "\ndef __getattr__(name):\n    raise AttributeError(name)\n"
    )
    (_, fallback, bound) = scan_source(tmp_path, source)
    assert fallback.read_cost is not None and bound.read_cost is not None
    assert fallback.read_cost.startswith("only where")
    assert bound.read_cost == OPTED_IN_READ_COST
    assert bound.suggestion is not None
    assert bound.suggestion.startswith("none: the module opts in with pep726hook.enable() (")


OPTED_IN_READ_COST = (
    "none where pep726hook.enable() takes __getattr__ out of the namespace (its native engine:"
    " by default on CPython 3.11, on 3.12-3.14 with enable(..., fast_getattr=True) or the"
    " application's fast-getattr switch); where it stays there (the class engine, by default on"
    " 3.12-3.14, or without pep726hook), reads of this module are not specialised while its"
    " namespace holds __getattr__, on CPython 3.11-3.14"
)


@pytest.mark.parametrize("thorough", [False, True])
def test_read_cost_of_an_opted_in_getattr_agrees_with_its_suggestion(
    tmp_path: Path, thorough: bool
) -> None:
    # The shape docs/library-authors.md teaches: a lazy PEP 562 __getattr__
    # in a module that opts in.  Its cost line used to say "not specialised"
    # outright, above a suggestion saying its reads are kept specialised.
    source = """\
        import pep726hook

        def __getattr__(name):
            if name == "heavy":
                import json
                return json
            raise AttributeError(name)

        pep726hook.enable(__name__)
    """
    (finding,) = scan_source(tmp_path, source, thorough)
    assert finding.kind == "module_getattr"
    assert finding.read_cost == OPTED_IN_READ_COST
    assert finding.suggestion is not None
    assert finding.suggestion.startswith("none: the module opts in with pep726hook.enable() (")
    assert "specialised" not in finding.suggestion.replace("keeps its reads specialised", "")


def test_import_error_branch_of_a_module_that_does_not_opt_in_is_no_fallback(
    tmp_path: Path,
) -> None:
    source = """\
        try:
            from ._speedups import __getattr__
        except ImportError:
            def __getattr__(name):
                raise AttributeError(name)
    """
    findings = scan_source(tmp_path, source)
    assert [f.kind for f in findings] == ["module_getattr", "module_getattr"]
    assert all(f.suggestion and f.suggestion.startswith(OPT_IN) for f in findings)


@pytest.mark.parametrize(
    "kind", ["helper_workaround", "helper_call", "wrapper_workaround", "dict_property_module"]
)
def test_fail_on_accepts_the_new_kinds(
    site: Path, kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _scan.main(["--site", str(site), "--fail-on", kind]) == 1
    assert _scan.main(["--path", str(tmp_path), "--fail-on", kind]) == 0
    capsys.readouterr()


def test_table_lists_callers_and_read_cost(
    site: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "1000")  # one row per finding, whatever the paths
    assert _scan.main(["--site", str(site), "uses-guard", "guardlib"]) == 0
    # The first line of each note under a row (the notes wrap at 100 columns).
    lines = [line for line in capsys.readouterr().out.splitlines() if line[4:5] != " "]
    (row,) = [line for line in lines if "helper_workaround" in line and "core.py" in line]
    following = lines[lines.index(row) + 1 : lines.index(row) + 7]
    assert following[0] == "    confidence: medium"
    assert following[1].startswith("    helper: ") and following[1].endswith("core.py:12")
    assert following[2].endswith("usesguard/__init__.py:3")
    assert following[3].endswith("usesguard/other.py:4")
    assert following[4].startswith("    read cost: reads take the subclass path")
    # Its user first (the authors' part, "have attach put the hooks", wraps further on).
    assert following[5].startswith("    suggestion: for you, as a user of the distribution:")


def test_stdlib_lazy_module_is_reported(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert _scan.main(["--stdlib", "--site", str(tmp_path), "--json", "--jobs", "1"]) == 0
    document = json.loads(capsys.readouterr().out)
    (finding,) = [
        f
        for f in document["findings"]
        if f["module"] == "importlib.util" and "_LazyModule" in f["detail"]
    ]
    assert finding["kind"] == "helper_workaround"
    assert "installed on a module passed to LazyLoader.exec_module" in finding["detail"]
    assert "__delattr__" in finding["detail"]
    assert finding["read_cost"] == (
        "every read of this module goes through Python code (_LazyModule.__getattribute__),"
        " on every interpreter"
    )
    assert finding["related"][0]["name"] == "importlib.util.LazyLoader.exec_module"
    # A method is not followed to its callers.
    assert [r["role"] for r in finding["related"]] == ["helper"]
    # Nobody is told to edit CPython.
    assert finding["suggestion"] == _advice.STDLIB_NOTE

"""install(), uninstall() and the other public functions."""

from __future__ import annotations

import re
import sys
import sysconfig
import types
from pathlib import Path

import pytest
from _venv import (
    ENGINES,
    EXPECTED_ENGINES,
    WriteModule,
    describe,
    our_finders,
    run_fresh_python,
)

import pep726hook

# The documented API (README.md): adding or removing a name is a decision, made here too.
PUBLIC_API = {
    "DeprecatedValue",
    "EngineUnavailableError",
    "Installation",
    "ScanFinding",
    "ScanRelated",
    "ScanResult",
    "ScanSkipped",
    "__version__",
    "available_engines",
    "declared_getattr",
    "deprecate_attribute",
    "deprecated",
    "enable",
    "engine",
    "install",
    "is_installed",
    "is_upgraded",
    "lazy_attribute",
    "removed_attribute",
    "scan",
    "uninstall",
    "upgrade",
}


def test_public_api_is_exactly_what_all_names() -> None:
    assert set(pep726hook.__all__) == PUBLIC_API
    # isidentifier(): pytest's assertion rewriting may add "@py_builtins" and
    # the like when it rewrites this package as a plugin.
    public = {n for n in dir(pep726hook) if not n.startswith("_") and n.isidentifier()}
    assert public - {"annotations"} == PUBLIC_API - {"__version__"}
    for name in PUBLIC_API:
        assert hasattr(pep726hook, name)


API_PAGE = Path(__file__).resolve().parent.parent / "docs" / "api.md"
# What a user calls first leads the API page; the scanner's records come last.
API_PAGE_OPENS_WITH = ["install", "Installation", "enable", "deprecate_attribute", "deprecated"]
API_PAGE_ENDS_WITH = ["ScanResult", "ScanFinding", "ScanRelated", "ScanSkipped", "__version__"]


def test_api_page_documents_every_public_name_once_in_the_order_users_meet_them() -> None:
    page = API_PAGE.read_text(encoding="utf-8")
    documented = re.findall(r"^\.\. (?:auto\w+|data):: pep726hook\.(\w+)$", page, re.M)
    assert sorted(documented) == sorted(PUBLIC_API)
    assert documented[: len(API_PAGE_OPENS_WITH)] == API_PAGE_OPENS_WITH
    assert documented[-len(API_PAGE_ENDS_WITH) :] == API_PAGE_ENDS_WITH


@pytest.mark.parametrize(
    "function",
    [
        pep726hook.deprecated,
        pep726hook.deprecate_attribute,
        pep726hook.lazy_attribute,
        pep726hook.removed_attribute,
        pep726hook.declared_getattr,
    ],
)
def test_public_signatures_name_only_types_a_reader_can_resolve(function: object) -> None:
    # The annotations are mostly strings (typing is not imported at run
    # time); each name in them must be a builtin, a standard typing or module
    # type, or a public name of the package: never a private alias that a
    # reader of the API page cannot look up.
    import builtins
    import typing

    annotations = getattr(function, "__annotations__").values()
    spelled = [a if isinstance(a, str) else getattr(a, "__name__", "None") for a in annotations]
    names = set(re.findall(r"[A-Za-z_]\w*", " ".join(spelled)))
    unresolvable = {
        name
        for name in names
        if not any(hasattr(source, name) for source in (builtins, typing, types))
        and name not in PUBLIC_API
    }
    # deprecated()'s type variable, which the API page names T and defines.
    assert unresolvable <= {"_T"}


def test_importing_the_package_loads_no_private_module() -> None:
    # Start-up activation imports the package: its public names are loaded on
    # first use, so that a process that never installs pays for nothing else.
    code = (
        "import sys, pep726hook\n"
        "print(sorted(m for m in sys.modules if m.startswith('pep726hook')))\n"
        "pep726hook.install\n"
        "print('pep726hook._install' in sys.modules, 'install' in dir(pep726hook))\n"
    )
    result = run_fresh_python(code)
    assert result.stdout == "['pep726hook']\nTrue True\n", describe(result)


def test_unknown_attribute_raises_attribute_error() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        pep726hook.no_such_name  # type: ignore[attr-defined]  # noqa: B018


def test_install_twice_keeps_one_finder_and_one_engine(engine: str) -> None:
    again = pep726hook.install()
    assert not again.installed_now
    assert again.engine == engine == pep726hook.engine()
    expected = 1 if engine == "class" else 0
    assert len(our_finders()) == expected
    if engine == "class":
        assert sys.meta_path[0] is our_finders()[0]


def test_uninstall_restores_meta_path_and_module_classes(
    engine: str, write_module: WriteModule
) -> None:
    write_module(
        "hooked_then_uninstalled", "def __setattr__(name, value):\n    raise AttributeError(name)\n"
    )
    import hooked_then_uninstalled  # type: ignore[import-not-found]

    with pytest.raises(AttributeError):
        hooked_then_uninstalled.x = 1
    pep726hook.uninstall()
    assert not pep726hook.is_installed()
    assert pep726hook.engine() is None
    assert our_finders() == []
    assert type(hooked_then_uninstalled) is types.ModuleType
    hooked_then_uninstalled.x = 1
    assert hooked_then_uninstalled.x == 1


def test_uninstall_when_not_installed_does_nothing() -> None:
    assert not pep726hook.is_installed()
    pep726hook.uninstall()
    assert not pep726hook.is_installed()


def test_context_manager_uninstalls_only_what_it_installed() -> None:
    with pep726hook.install("class") as outer:
        assert outer.installed_now
        with pep726hook.install() as inner:
            assert not inner.installed_now
        assert pep726hook.is_installed()
    assert not pep726hook.is_installed()


@pytest.mark.parametrize("engine_name", ENGINES)
def test_install_upgrades_already_imported_modules_that_define_hooks(
    write_module: WriteModule, engine_name: str
) -> None:
    write_module(
        "imported_before_install", "seen = []\ndef __setattr__(n, v):\n    seen.append(n)\n"
    )
    import imported_before_install  # type: ignore[import-not-found]

    imported_before_install.x = 1
    assert imported_before_install.seen == []
    with pep726hook.install(engine_name):
        imported_before_install.y = 2
        assert imported_before_install.seen == ["y"]


def test_unknown_engine_name_is_a_value_error() -> None:
    with pytest.raises(
        ValueError, match="engine must be one of 'auto', 'native', 'class', not 'fast'"
    ):
        pep726hook.install("fast")
    assert not pep726hook.is_installed()


def test_engine_variable_is_used_when_no_engine_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PEP726HOOK_ENGINE", "class")
    with pep726hook.install() as installation:
        assert installation.engine == "class"
    monkeypatch.setenv("PEP726HOOK_ENGINE", "bogus")
    with pytest.raises(
        ValueError,
        match="the environment variable PEP726HOOK_ENGINE must be one of "
        "'auto', 'native', 'class', not 'bogus'",
    ):
        pep726hook.install()


@pytest.mark.parametrize("engine_name", ENGINES)
def test_installing_a_different_engine_while_installed_is_refused(engine_name: str) -> None:
    # Refused whether or not the other engine could run here: the installed
    # one is named first.
    other = {"class": "native", "native": "class"}[engine_name]
    with pep726hook.install(engine_name):
        meta_path = list(sys.meta_path)
        with pytest.raises(
            RuntimeError, match=f"already installed with the '{engine_name}' engine"
        ) as refused:
            pep726hook.install(other)
        assert type(refused.value) is RuntimeError
        assert pep726hook.engine() == engine_name
        assert sys.meta_path == meta_path


@pytest.mark.skipif("native" in EXPECTED_ENGINES, reason="the native engine runs here")
def test_native_engine_request_fails_clearly_where_unavailable() -> None:
    with pytest.raises(pep726hook.EngineUnavailableError, match="native engine"):
        pep726hook.install("native")
    assert not pep726hook.is_installed()


@pytest.mark.skipif(not sysconfig.get_config_var("Py_GIL_DISABLED"), reason="needs free-threading")
def test_free_threaded_build_says_why_there_is_no_native_engine() -> None:
    assert pep726hook.available_engines() == ("class",)
    with pytest.raises(pep726hook.EngineUnavailableError, match="free-threaded") as raised:
        pep726hook.install("native")
    assert "no public way to stop them" in str(raised.value)
    assert "class engine" in str(raised.value)
    with pep726hook.install("auto") as installation:
        assert installation.engine == "class"


def test_auto_prefers_the_native_engine_where_available() -> None:
    with pep726hook.install("auto") as installation:
        assert installation.engine == EXPECTED_ENGINES[0]


def test_upgrade_needs_an_installed_engine() -> None:
    with pytest.raises(RuntimeError, match="not installed"):
        pep726hook.upgrade(types.ModuleType("m"))

"""pytest plugin (entry point ``pytest11``): PEP 726 hooks for test modules and conftests.

``pytest --pep726hook`` (or ``pep726hook = true`` in the ini file, or
``--pep726hook-engine ENGINE``) installs the hook for the whole session before
any conftest is collected.  Whichever way the hook was turned on (this option,
the ``.pth`` file with ``PEP726HOOK=1``, ``python -m pep726hook -m pytest``),
the plugin keeps our finder in front of pytest's assertion rewriter, which
pytest puts first on ``sys.meta_path`` after a ``.pth`` installed ours: our
finder asks the rewriter for the spec, so modules are both rewritten and
upgraded, in every ``--import-mode``.

The engine rule is the runner's: an engine named by ``--pep726hook-engine`` or
the ini file replaces the one already active (``PEP726HOOK=1``, the runner);
``auto``, or naming none, keeps it.
"""

from __future__ import annotations

import os

import pytest

from . import _ACTIVATION_VARIABLE as ACTIVATION_VARIABLE
from . import _ENGINE_VARIABLE as ENGINE_VARIABLE
from . import _FAST_GETATTR_VARIABLE as FAST_GETATTR_VARIABLE
from ._engines import ENGINE_NAMES, engine_from_environment, normalize_engine_name
from ._install import engine as active_engine
from ._install import (
    ensure_finder_first,
    fast_getattr_is_on,
    install_replacing,
    is_installed,
    record_route,
    route,
    uninstall,
)

_activated_key = pytest.StashKey[bool]()


def pytest_addoption(parser: pytest.Parser) -> None:
    """Register ``--pep726hook``, ``--pep726hook-engine`` and their ini options."""
    group = parser.getgroup("pep726hook", "PEP 726 module __setattr__/__delattr__ hooks")
    group.addoption(
        "--pep726hook",
        action="store_true",
        default=None,
        dest="pep726hook",
        help="turn PEP 726 module hooks on for the whole session, before collection",
    )
    group.addoption(
        "--pep726hook-engine",
        default=None,
        dest="pep726hook_engine",
        metavar="ENGINE",
        help=(
            f"{', '.join(ENGINE_NAMES)}: engine to use, replacing one already active "
            f"(implies --pep726hook; default: ${ENGINE_VARIABLE} or auto)"
        ),
    )
    group.addoption(
        "--pep726hook-fast-getattr",
        action="store_true",
        default=None,
        dest="pep726hook_fast_getattr",
        help=(
            "also pass every module that defines a PEP 562 __getattr__ to "
            "pep726hook.enable(), keeping its reads fast on CPython 3.11-3.14 "
            f"(implies --pep726hook; default: ${FAST_GETATTR_VARIABLE}, else off)"
        ),
    )
    parser.addini(
        "pep726hook",
        type="bool",
        default=False,
        help="turn PEP 726 module hooks on for the whole session",
    )
    parser.addini(
        "pep726hook_engine",
        default="",
        help="engine for the pep726hook ini option: auto, native or class",
    )
    parser.addini(
        "pep726hook_fast_getattr",
        type="bool",
        default=False,
        help="turn the hook on with the fast-getattr switch (see --pep726hook-fast-getattr)",
    )


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config) -> None:
    """Turn the hook on before pytest imports the initial conftests."""
    _activate(early_config)
    ensure_finder_first()


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Catch up when this plugin was registered after the initial conftests."""
    _activate(config)
    ensure_finder_first()


def pytest_report_header(config: pytest.Config) -> list[str]:
    """Name the engine in use and how it was turned on; nothing while the hook is off."""
    current = active_engine()
    if current is None:
        return []
    fast = ", fast getattr" if fast_getattr_is_on() else ""
    return [f"pep726hook: {current} engine{fast} (turned on by {route()})"]


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    """Move our finder back in front if anything was inserted since configure."""
    ensure_finder_first()


@pytest.hookimpl(tryfirst=True)
def pytest_collection(session: pytest.Session) -> None:
    """Last check before test modules are imported."""
    ensure_finder_first()


def _option(config: pytest.Config, dest: str) -> object:
    # Before pytest has parsed the whole command line (at initial-conftest
    # time) only known_args_namespace holds our options.
    namespace = getattr(config, "known_args_namespace", None)
    value = getattr(namespace, dest, None)
    if value is None:
        value = config.getoption(dest, default=None)
    return value


def _activate(config: pytest.Config) -> None:
    if config.stash.get(_activated_key, False):
        return
    config.stash[_activated_key] = True
    engine_option = _option(config, "pep726hook_engine")
    ini_engine = str(config.getini("pep726hook_engine") or "").strip() or None
    fast_getattr = bool(_option(config, "pep726hook_fast_getattr")) or bool(
        config.getini("pep726hook_fast_getattr")
    )
    wanted = bool(_option(config, "pep726hook")) or bool(config.getini("pep726hook"))
    if not (wanted or engine_option or fast_getattr):
        return
    try:
        if engine_option:
            requested = normalize_engine_name(str(engine_option), "--pep726hook-engine")
        elif ini_engine:
            requested = normalize_engine_name(ini_engine, "the pep726hook_engine ini option")
        else:
            requested = engine_from_environment()
        installation = install_replacing(requested, True if fast_getattr else None)
    except (ValueError, TypeError, RuntimeError) as error:
        raise pytest.UsageError(f"pep726hook: {error}") from None
    if installation.installed_now:
        record_route("the pytest plugin")
        config.add_cleanup(_uninstall_if_installed)
    _export(config, requested, fast_getattr)


def _export(config: pytest.Config, engine: str, fast_getattr: bool) -> None:
    """Pass the hook on to child processes (pytester subprocesses, xdist workers).

    *engine* is passed on as asked, as the runner does: "auto" resolves per
    interpreter, also in sub-interpreters that cannot load the extension.
    The fast-getattr switch asked for here is exported too; one turned on by
    ``$PEP726HOOK_FAST_GETATTR`` is inherited as it is.
    """
    names = (ACTIVATION_VARIABLE, ENGINE_VARIABLE, FAST_GETATTR_VARIABLE)
    saved = {name: os.environ.get(name) for name in names}
    os.environ[ACTIVATION_VARIABLE] = "1"
    os.environ[ENGINE_VARIABLE] = engine
    if fast_getattr:
        os.environ[FAST_GETATTR_VARIABLE] = "1"

    def restore() -> None:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value

    config.add_cleanup(restore)


def _uninstall_if_installed() -> None:
    if is_installed():
        uninstall()

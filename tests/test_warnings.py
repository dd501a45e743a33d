"""A hook's ``warnings.warn(..., stacklevel=N)`` names the same line under both engines.

The native engine calls a hook from the module type's C slot, so stacklevel=2
is the line that stored or deleted the attribute, as with PEP 726's reference
implementation; the class engine's own frame must not count.
"""

from __future__ import annotations

import inspect
import sys
import warnings
from pathlib import Path
from typing import Callable

import pytest
from _venv import Venv, describe, run_fresh_script, write

import pep726hook

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

WARNING_MODULE = """\
import warnings

def __setattr__(name, value):
    warnings.warn(f"set {name}", DeprecationWarning, stacklevel=2)
    globals()[name] = value

def __delattr__(name):
    warnings.warn(f"del {name}", DeprecationWarning, stacklevel=2)
    del globals()[name]
"""


def test_stacklevel_two_names_the_storing_line(
    engine: str, write_module: Callable[..., Path]
) -> None:
    write_module("warns_on_store", WARNING_MODULE)
    import warns_on_store

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        here = inspect.currentframe()
        assert here is not None
        warns_on_store.x = 1
        store_line = here.f_lineno - 1
        setattr(warns_on_store, "y", 2)
        setattr_line = here.f_lineno - 1
        del warns_on_store.x
        del_line = here.f_lineno - 1
    assert [str(w.message) for w in caught] == ["set x", "set y", "del x"]
    assert {w.filename for w in caught} == {__file__}
    assert [w.lineno for w in caught] == [store_line, setattr_line, del_line]


def test_stacklevel_two_from_a_subclass_setattr_names_the_subclass(
    engine: str, write_module: Callable[..., Path]
) -> None:
    # class X(ModuleType) whose __setattr__ calls super(): under the native
    # engine the hook's caller is X.__setattr__; the class engine agrees.
    write_module(
        "warns_with_subclass",
        "import sys, types\n"
        "class Custom(types.ModuleType):\n"
        "    def __setattr__(self, name, value):\n"
        "        super().__setattr__(name, value)  # CUSTOM\n"
        "sys.modules[__name__].__class__ = Custom\n" + WARNING_MODULE,
    )
    module = sys.modules.get("warns_with_subclass") or __import__("warns_with_subclass")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module.z = 3
    (warning,) = caught
    source = Path(warning.filename).read_text(encoding="utf-8").splitlines()
    assert source[warning.lineno - 1].endswith("# CUSTOM"), (warning.filename, warning.lineno)


def test_deprecation_example_points_at_the_callers_line(engine: str) -> None:
    sys.path.insert(0, str(EXAMPLES / "deprecation"))
    import shapes

    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            here = inspect.currentframe()
            assert here is not None
            shapes.default_colour = "red"
            line = here.f_lineno - 1
        (warning,) = caught
        assert (warning.filename, warning.lineno) == (__file__, line)
    finally:
        del sys.modules["shapes"]


def test_deprecation_is_shown_under_default_filters_for_main(
    venv: Venv, venv_engine: str, tmp_path: Path
) -> None:
    # Python shows DeprecationWarning by default only when it is attributed to
    # __main__; attributed to pep726hook it used to vanish.
    write(tmp_path / "old.py", WARNING_MODULE)
    write(tmp_path / "main.py", "import old\nold.x = 1\ndel old.x\n")
    result = venv.run_python(
        ["main.py"], env={"PEP726HOOK": "1", "PEP726HOOK_ENGINE": venv_engine}, cwd=tmp_path
    )
    assert result.returncode == 0, describe(result)
    assert "main.py:2: DeprecationWarning: set x" in result.stderr, describe(result)
    assert "main.py:3: DeprecationWarning: del x" in result.stderr, describe(result)
    assert "pep726hook" not in result.stderr


OPTED_IN_WARNING_MODULE = WARNING_MODULE + "\nimport pep726hook\npep726hook.enable(__name__)\n"


def test_stacklevel_two_from_an_opted_in_module_names_the_storing_line(
    opt_in_engine: str, write_module: Callable[..., Path]
) -> None:
    # The class engine's opted-in class used to call the hook from its own
    # copy of __setattr__, whose frame warnings counted: the warning named
    # pep726hook/_enable.py.
    write_module("warns_opted_in", OPTED_IN_WARNING_MODULE)
    import warns_opted_in

    assert pep726hook.engine(warns_opted_in) == opt_in_engine
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        here = inspect.currentframe()
        assert here is not None
        warns_opted_in.x = 1
        store_line = here.f_lineno - 1
        del warns_opted_in.x
        del_line = here.f_lineno - 1
    assert [str(w.message) for w in caught] == ["set x", "del x"]
    assert [(w.filename, w.lineno) for w in caught] == [
        (__file__, store_line),
        (__file__, del_line),
    ]


@pytest.mark.parametrize("route", ["enable", "install"])
def test_deprecation_from_a_hook_is_shown_under_default_filters_for_main(
    opt_in_engine: str, tmp_path: Path, route: str
) -> None:
    # Python shows DeprecationWarning by default only when it is attributed to
    # __main__; attributed to pep726hook it vanished.  Plain `python main.py`.
    source = OPTED_IN_WARNING_MODULE if route == "enable" else WARNING_MODULE
    write(tmp_path / "old.py", source)
    install = "import pep726hook; pep726hook.install()\n" if route == "install" else ""
    write(tmp_path / "main.py", install + "import old\nold.x = 1\ndel old.x\n")
    result = run_fresh_script(tmp_path, {"PEP726HOOK_ENGINE": opt_in_engine})
    assert result.returncode == 0, describe(result)
    first = 3 if route == "install" else 2
    assert f"main.py:{first}: DeprecationWarning: set x" in result.stderr, describe(result)
    assert f"main.py:{first + 1}: DeprecationWarning: del x" in result.stderr, describe(result)
    assert "pep726hook" not in result.stderr

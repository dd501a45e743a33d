"""The deprecation examples work, silently, when pep726hook cannot be imported.

Their output with pep726hook, under each engine, is checked with every other
example's in test_examples.py; here each runs in a fresh process where
``import pep726hook`` fails, under ``-W error``: a fallback that warned, or
that touched pep726hook at all, would fail it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from _venv import ENGINES, TIMEOUT, clean_env, describe
from test_examples import EXPECTED_OUTPUT, WITHOUT_PEP726HOOK

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
DEPRECATION_EXAMPLES = ("deprecation", "attribute_deprecation", "lazy_attach")

WITHOUT = """
import runpy, sys
sys.modules["pep726hook"] = None   # `import pep726hook` raises ImportError
runpy.run_path("main.py", run_name="__main__")
assert "pep726hook" not in sys.modules or sys.modules["pep726hook"] is None
"""


@pytest.mark.parametrize("name", DEPRECATION_EXAMPLES)
def test_example_runs_without_pep726hook_and_without_warnings(name: str) -> None:
    directory = EXAMPLES / name
    env = clean_env()
    env["PYTHONPATH"] = str(directory)
    result = subprocess.run(
        [sys.executable, "-W", "error", "-c", WITHOUT],
        cwd=directory,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert result.returncode == 0, describe(result)
    expected = WITHOUT_PEP726HOOK.get(name, EXPECTED_OUTPUT[name])
    assert result.stdout.splitlines() == expected, describe(result)
    assert result.stderr == ""


@pytest.mark.parametrize("engine_name", ENGINES)
def test_deprecation_example_under_w_error_stops_at_the_first_old_name(
    engine_name: str,
) -> None:
    # A library's users running their tests with -W error see the first
    # deprecated use as an exception at their own line, and nothing before.
    directory = EXAMPLES / "deprecation"
    env = clean_env()
    env["PEP726HOOK_ENGINE"] = engine_name
    env["PYTHONPATH"] = str(directory)
    code = "import shapes\nprint(shapes.default_color, shapes.Circle(1))\nshapes.Round\n"
    result = subprocess.run(
        [sys.executable, "-W", "error::DeprecationWarning", "-c", code],
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert result.returncode == 1, describe(result)
    assert result.stdout == "black Circle(1)\n"
    assert 'File "<string>", line 3, in <module>' in result.stderr, describe(result)
    assert result.stderr.rstrip().endswith(
        "DeprecationWarning: shapes.Round is deprecated; use shapes.Circle"
    ), describe(result)

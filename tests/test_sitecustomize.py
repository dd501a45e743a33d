"""The documented sitecustomize recipe turns the hook on at start-up."""

from __future__ import annotations

from pathlib import Path

from _venv import RECORDING_MODULE, Venv, describe, write

# The two lines docs/activation.md tells people to put in sitecustomize.py.
RECIPE = """\
import pep726hook
pep726hook.install()
"""

def test_sitecustomize_recipe(venv: Venv, tmp_path: Path) -> None:
    write(tmp_path / "custom" / "sitecustomize.py", RECIPE)
    write(tmp_path / "helper.py", RECORDING_MODULE)
    code = (
        "import sys, sitecustomize, pep726hook, helper\n"
        "helper.x = 1\n"
        "print(sitecustomize.__file__.endswith('custom/sitecustomize.py'), "
        "pep726hook.is_installed(), helper.calls)\n"
    )
    result = venv.run_python(
        ["-c", code], env={"PYTHONPATH": str(tmp_path / "custom")}, cwd=tmp_path
    )
    assert result.returncode == 0, describe(result)
    assert result.stdout == "True True ['x']\n"
    assert result.stderr == ""


def test_sitecustomize_recipe_honours_the_engine_variable(venv: Venv, tmp_path: Path) -> None:
    write(tmp_path / "custom" / "sitecustomize.py", RECIPE)
    result = venv.run_python(
        ["-c", "import pep726hook; print(pep726hook.engine())"],
        env={"PYTHONPATH": str(tmp_path / "custom"), "PEP726HOOK_ENGINE": "class"},
    )
    assert result.stdout == "class\n", describe(result)


def test_sitecustomize_recipe_gives_main_its_hooks(
    venv: Venv, venv_engine: str, tmp_path: Path
) -> None:
    write(tmp_path / "custom" / "sitecustomize.py", RECIPE)
    write(
        tmp_path / "prog.py",
        """\
        import __main__
        calls = []
        def __setattr__(name, value):
            calls.append(name)
            globals()[name] = value
        __main__.x = 1
        import pep726hook
        print(calls, pep726hook.engine())
        """,
    )
    result = venv.run_python(
        ["prog.py"],
        env={"PYTHONPATH": str(tmp_path / "custom"), "PEP726HOOK_ENGINE": venv_engine},
        cwd=tmp_path,
    )
    assert result.stdout == f"['x'] {venv_engine}\n", describe(result)

"""Build hooks that pyproject.toml cannot express.

Both C extensions are optional: they are skipped on PyPy and other non-CPython
interpreters, and a failed compile only loses speed.  Without
``pep726hook._native`` there is no native engine (the class engine needs no
compiler); without ``pep726hook._scan._memfind`` ``pep726hook scan`` searches
bytes with ``bytes.find``.
"""

from __future__ import annotations

import os
import platform
import sys
import sysconfig

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

try:
    from setuptools.command.editable_wheel import editable_wheel
except ImportError:  # setuptools < 64 has no PEP 660 editable installs
    editable_wheel = None


def _read_pep639_with_old_setuptools() -> None:
    """Let setuptools < 77 read the PEP 639 ``license``/``license-files`` of pyproject.toml.

    Setuptools 77, the first release that understands a license expression,
    needs Python 3.9, so Python 3.8 builds with 75.3 (pyproject.toml pins the
    series, the last for 3.8, whose code no longer changes), which rejects
    ``license = "MIT"`` as an invalid table.  It is given what it does
    understand: ``license = {text = "MIT"}`` and ``tool.setuptools.license-files``,
    so its wheel says ``License: MIT`` (metadata 2.1) and ships the same
    LICENSE file where newer setuptools writes ``License-Expression: MIT``.
    """
    import setuptools

    if int(setuptools.__version__.partition(".")[0]) >= 77:
        return
    from setuptools.config import pyprojecttoml

    load_file = pyprojecttoml.load_file

    def load_file_as_before_pep639(filepath: str) -> dict[str, object]:
        config: dict[str, dict[str, object]] = load_file(filepath)
        project = config.get("project", {})
        if isinstance(project.get("license"), str):
            project["license"] = {"text": project["license"]}
        if "license-files" in project:
            tool = config.setdefault("tool", {}).setdefault("setuptools", {})
            tool["license-files"] = project.pop("license-files")  # type: ignore[index]
        return config  # type: ignore[return-value]

    pyprojecttoml.load_file = load_file_as_before_pep639


_read_pep639_with_old_setuptools()


class OptionalBuildExt(build_ext):
    """Build C extensions, but let the installation go on if that fails."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as error:  # any compiler failure is survivable
            self._report(error)

    def build_extension(self, ext: Extension) -> None:
        try:
            super().build_extension(ext)
        except Exception as error:
            self._report(error, ext.name)

    def _report(self, error: BaseException, name: str | None = None) -> None:
        consequence = {
            "pep726hook._native": "the pure-Python class engine will be used",
            "pep726hook._scan._memfind": "pep726hook scan will search with bytes.find",
        }.get(name or "", "pure-Python code will be used")
        what = f"C extension {name}" if name else "C extensions"
        sys.stderr.write(f"warning: pep726hook's {what} not built ({error}); {consequence}\n")


# The native engine, one file per responsibility (native.h says which).
NATIVE_HEADER = "src/c/native/native.h"
NATIVE_SOURCES = [
    f"src/c/native/{name}.c"
    for name in (
        "module",
        "patch",
        "store",
        "opt_in",
        "weak_table",
        "getattr_wrapper",
        "relocated_getattr",
        "descriptor",
        "hookless_cache",
        "call_guard",
        "namespace_walk",
        "subclasses",
        "deprecating_modules",
        "deprecated_descriptor",
        "declared_miss",
        "declared_alone",
        "declared_front_door",
        "deprecated_alone",
        "deprecation_watchers",
        "rebinding_pass",
        "frame_builtins",
    )
]


def _extensions() -> list[Extension]:
    if platform.python_implementation() != "CPython":
        return []
    memfind = Extension("pep726hook._scan._memfind", ["src/pep726hook/_scan/_memfind.c"])
    if sysconfig.get_config_var("Py_GIL_DISABLED"):
        # The native engine patches a shared type and relies on the GIL.
        return [memfind]
    return [Extension("pep726hook._native", NATIVE_SOURCES, depends=[NATIVE_HEADER]), memfind]


# Start-up files that go to the root of site-packages, not into the package:
# the .pth line activates the hook in processes started with PEP726HOOK=1.
# Named to sort after setuptools' __editable__*.pth, so an editable install's
# path is set up first.
#
# The PEP 829 .start file (an entry point in a top-level module) is shipped
# only where the .pth line may not run: CPython 3.18+ ignores .pth import lines.
# On 3.15-3.17 any .start file makes site import pkgutil and re in every
# process (+70% start-up instructions), and a .start suppresses the import
# lines of the .pth of the same name, so the two never both activate.  A pure
# wheel (built by PyPy) may end up on any CPython, so it carries both.
STARTUP_FILES: tuple[str, ...] = ("pep726hook.pth",)
if platform.python_implementation() != "CPython" or sys.version_info >= (3, 18):
    STARTUP_FILES += ("pep726hook.start", "_pep726hook_startup.py")
_HERE = os.path.dirname(os.path.abspath(__file__))


def _startup_file(name: str) -> str:
    return os.path.join(_HERE, "src", name)


class BuildPyWithStartupFiles(build_py):
    """Build the package and put the start-up files at the wheel's root."""

    def run(self) -> None:
        super().run()
        self._remove_stale_modules()
        for name in STARTUP_FILES:
            self.copy_file(_startup_file(name), os.path.join(self.build_lib, name))

    def _remove_stale_modules(self) -> None:
        """Remove the modules that an earlier build left in ``build/`` and this one did not write.

        setuptools copies the sources into ``build/lib*`` and never deletes
        anything there, and the wheel takes that whole directory: a module
        deleted or moved since the last build of the same clone would be
        installed again (https://github.com/pypa/setuptools/issues/1871).
        """
        written = {os.path.abspath(path) for path in super().get_outputs(include_bytecode=False)}
        roots = {package.partition(".")[0] for package in self.packages or ()}
        for root in roots:
            for directory, _, names in os.walk(os.path.join(self.build_lib, root)):
                for name in names:
                    path = os.path.abspath(os.path.join(directory, name))
                    if name.endswith((".py", ".pyi")) and path not in written:
                        os.remove(path)

    def get_outputs(self, include_bytecode: bool = True) -> list[str]:
        outputs = list(super().get_outputs(include_bytecode))
        return outputs + [os.path.join(self.build_lib, name) for name in STARTUP_FILES]


class _StrategyWithStartupFiles:
    """Wraps an editable-install strategy to add the start-up files to its wheel."""

    def __init__(self, strategy: object) -> None:
        self._strategy = strategy

    def __enter__(self) -> _StrategyWithStartupFiles:
        self._strategy.__enter__()
        return self

    def __exit__(self, *exc_info: object) -> object:
        return self._strategy.__exit__(*exc_info)

    def __call__(self, wheel: object, files: object, mapping: object) -> None:
        self._strategy(wheel, files, mapping)
        for name in STARTUP_FILES:
            wheel.write(_startup_file(name), arcname=name)


cmdclass: dict[str, type] = {"build_ext": OptionalBuildExt, "build_py": BuildPyWithStartupFiles}

if editable_wheel is not None:

    class EditableWheelWithStartupFiles(editable_wheel):
        """``pip install -e``: the editable wheel carries the start-up files too."""

        def _select_strategy(self, *args: object, **kwargs: object) -> object:
            strategy = super()._select_strategy(*args, **kwargs)
            return _StrategyWithStartupFiles(strategy)

    cmdclass["editable_wheel"] = EditableWheelWithStartupFiles


setup(
    ext_modules=_extensions(),
    cmdclass=cmdclass,
)

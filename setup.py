"""Build hooks that pyproject.toml cannot express.

The C extension ``pep726hook._native`` is optional: it is skipped on PyPy and
other non-CPython interpreters, and a failed compile only loses the native
engine (the class engine needs no compiler).
"""

from __future__ import annotations

import platform
import sys
import sysconfig

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


class OptionalBuildExt(build_ext):
    """Build C extensions, but let the installation go on if that fails."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as error:  # noqa: BLE001 - any compiler failure is survivable
            self._report(error)

    def build_extension(self, ext: Extension) -> None:
        try:
            super().build_extension(ext)
        except Exception as error:  # noqa: BLE001
            self._report(error)

    def _report(self, error: BaseException) -> None:
        sys.stderr.write(
            f"warning: pep726hook's C extension was not built ({error}); "
            "the pure-Python class engine will be used\n"
        )


def _native_extensions() -> list[Extension]:
    if platform.python_implementation() != "CPython":
        return []
    if sysconfig.get_config_var("Py_GIL_DISABLED"):
        return []
    return [Extension("pep726hook._native", ["src/pep726hook/_native.c"])]


setup(ext_modules=_native_extensions(), cmdclass={"build_ext": OptionalBuildExt})

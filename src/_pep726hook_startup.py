"""PEP 829 start-up entry point, named by ``pep726hook.start``.

Site calls the ``module:callable`` of a ``.start`` file and skips the import
line of the ``.pth`` file of the same name.  The wheel ships the pair only
where the ``.pth`` line may not run (CPython 3.18+ ignores import lines; pure
wheels), see ``setup.py``: on 3.15-3.17 any ``.start`` file costs every process
an import of ``pkgutil`` and ``re``.  The entry point lives in this top-level
module because naming ``pep726hook:_activate`` would import the package
in every process, even with ``PEP726HOOK`` unset.

PYTEST_DONT_REWRITE: pytest would otherwise warn that this module, imported at
start-up, cannot be rewritten (see ``pep726hook/__init__.py``).
"""

import os


def activate() -> None:
    """Hand over to the package's ``_activate()`` when ``$PEP726HOOK`` is set.

    The bootstrap tells on from off values and reports unknown ones.
    """
    # pep726hook._ACTIVATION_VARIABLE, spelt out as in the .pth line:
    # importing it would import the package in every process.
    if os.environ.get("PEP726HOOK", "0") in ("", "0"):
        return
    try:
        from pep726hook import _activate as bootstrap
    except ImportError:  # the package is gone but this file stayed (coverage#223)
        return
    bootstrap()

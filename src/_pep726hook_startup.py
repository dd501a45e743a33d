"""Python 3.15+ start-up entry point (PEP 829), named by ``pep726hook.start``.

From 3.15 site calls the ``module:callable`` in ``pep726hook.start`` instead of
running the import line of ``pep726hook.pth``.  The entry point lives in this
top-level module because naming ``pep726hook._bootstrap`` there would import
the whole package in every process, even with ``PEP726HOOK`` unset.

PYTEST_DONT_REWRITE: pytest would otherwise warn that this module, imported at
start-up, cannot be rewritten (see ``pep726hook/__init__.py``).
"""

import os


def activate() -> None:
    """Hand over to ``pep726hook._bootstrap.activate`` when ``$PEP726HOOK`` is set.

    The bootstrap tells on from off values and reports unknown ones.
    """
    if os.environ.get("PEP726HOOK", "0") in ("", "0"):
        return
    try:
        from pep726hook._bootstrap import activate as bootstrap
    except ImportError:  # the package is gone but this file stayed (coverage#223)
        return
    bootstrap()

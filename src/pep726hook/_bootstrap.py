"""Start-up activation, called by the ``pep726hook.pth`` line (or ``.start`` entry).

Site runs the ``.pth`` line in every Python process of the environment, so this
module stays tiny: it imports nothing that start-up has not already imported
(no ``threading``, which breaks gevent's monkey-patching, virtualenv#1895; no
``typing``), writes nothing to stdout, and never stops the process from
starting.
"""

import os
import sys

ACTIVATION_VARIABLE = "PEP726HOOK"

# A venv on a 64-bit POSIX system has lib64 -> lib, and site may process the
# same site-packages (and so our .pth line) twice (cpython#75723): the second
# call must neither install again nor repeat a warning.
_attempted = False


def activate() -> None:
    """Install the hook when ``$PEP726HOOK`` is ``1``, with ``$PEP726HOOK_ENGINE``.

    Safe to call any number of times (a venv may run its ``.pth`` files twice,
    cpython#75723).  A wrong engine name or an engine that cannot run here
    costs one line on stderr; the process starts without the hook.
    """
    global _attempted
    if _attempted or os.environ.get(ACTIVATION_VARIABLE) != "1":
        return
    _attempted = True
    try:
        from ._install import install

        install(None)
    except Exception as error:  # start-up must go on whatever happened
        sys.stderr.write(f"pep726hook: hook not activated at start-up: {error}\n")

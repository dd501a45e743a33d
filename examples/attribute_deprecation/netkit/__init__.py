"""A networking package that deprecates names of its own modules from outside them."""

from netkit import protocols
from netkit._deprecate import Version, deprecated_module_attribute

# The port is configured elsewhere now; protocols.py itself is left untouched.
deprecated_module_attribute(
    Version("netkit", 2, 1), "pass port= to netkit.listen()", protocols.__name__, "DEFAULT_PORT"
)


def listen(port):
    return f"listening on {port}"

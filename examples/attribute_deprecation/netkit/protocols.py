"""Line protocols.  ``LineReceiver`` is the old name of ``LineProtocol``."""

from netkit._deprecate import Version, deprecated_module_attribute


class LineProtocol:
    delimiter = b"\r\n"


LineReceiver = LineProtocol
DEFAULT_PORT = 8007

deprecated_module_attribute(
    Version("netkit", 2, 0), "use netkit.protocols.LineProtocol", __name__, "LineReceiver"
)

"""Run with plain Python: python examples/attribute_deprecation/main.py

The package deprecates the attributes itself; nothing here turns pep726hook on.
Without pep726hook installed, the attributes work silently.
"""

import os
import warnings

with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import netkit
    from netkit import protocols

    print("LineReceiver is LineProtocol:", protocols.LineReceiver is protocols.LineProtocol)
    print("DEFAULT_PORT:", protocols.DEFAULT_PORT)
    print(netkit.listen(8080))
    del protocols.LineReceiver  # delete: the name is gone, the deprecation with it
    print("hasattr(protocols, 'LineReceiver'):", hasattr(protocols, "LineReceiver"))
for warning in caught:
    where = f"{os.path.basename(warning.filename)}:{warning.lineno}"
    print(f"{where}: {warning.category.__name__}: {warning.message}")
if not caught:
    print("no warnings: pep726hook is not installed, the attributes are ordinary")

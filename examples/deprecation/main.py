"""Run with plain Python: python examples/deprecation/main.py

The package deprecates its old names itself; nothing here turns pep726hook on.
Without pep726hook installed, the old names work silently.
"""

import os
import warnings

with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import shapes
    from shapes import Round  # the old name, imported

    print("Round(2) ->", Round(2))
    print("shapes.default_colour ->", shapes.default_colour)  # read
    shapes.default_colour = "red"  # set: the deprecation ends, the name is ordinary now
    print("shapes.default_colour ->", shapes.default_colour)
    print("shapes.default_color ->", shapes.default_color, "(unchanged)")
for warning in caught:
    where = f"{os.path.basename(warning.filename)}:{warning.lineno}"
    print(f"{where}: {warning.category.__name__}: {warning.message}")
if not caught:
    print("no warnings: pep726hook is not installed, the old names are plain aliases")

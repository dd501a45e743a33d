"""Run with: python -m pep726hook examples/deprecation/main.py"""

import warnings

import shapes

with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    shapes.default_colour = "red"  # the old name, set
    print("default_color is now", shapes.default_color)
for warning in caught:
    print(f"{warning.category.__name__}: {warning.message}")
if not caught:
    raise SystemExit("setting the old name did not warn: is pep726hook active?")

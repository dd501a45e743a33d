"""Run with plain Python: python examples/lazy_attach/main.py

The package guards its lazily attached names itself; nothing here turns
pep726hook on, and it works the same without pep726hook installed.
"""

import sys

import lazystats

print("lazystats.mean loaded before use:", "lazystats.mean" in sys.modules)
print("lazystats.mean([1, 2, 3]) =", lazystats.mean([1, 2, 3]))
# Importing the submodule lazystats.mean made the import system store it as
# lazystats.mean; the package's __setattr__ hook dropped that binding.
print("lazystats.mean loaded now:", "lazystats.mean" in sys.modules)
print("lazystats.mean is a", type(lazystats.mean).__name__)
if not callable(lazystats.mean):
    raise SystemExit("the submodule shadows the function: the package's guard is not active")
print("lazystats.stdev([2, 4, 4, 4, 5, 5, 7, 9]) =", lazystats.stdev([2, 4, 4, 4, 5, 5, 7, 9]))
lazystats.precision = 3  # any other name is stored as usual
print("lazystats.precision =", lazystats.precision)
print("public names:", [n for n in dir(lazystats) if not n.startswith("_")])

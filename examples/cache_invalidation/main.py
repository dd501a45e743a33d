"""Run with: python -m pep726hook examples/cache_invalidation/main.py"""

import units

print("length unit:", units.table()["length"])
print("length unit:", units.table()["length"], "(cached)")
units.system = "imperial"
print("length unit:", units.table()["length"])
if units.table()["length"] != "ft":
    raise SystemExit("the cache was not invalidated: is pep726hook active?")

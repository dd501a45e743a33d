"""Run with: python -m pep726hook examples/mpmath_guard/main.py"""

import mpguard as mp

print("working precision:", mp.mp.dps, "digits ->", mp.mpf("3.14159265358979323846264338327950288"))
try:
    mp.dps = 50  # the classic mistake
except AttributeError as error:
    print("AttributeError:", error)
else:
    raise SystemExit(
        "mp.dps = 50 went through: is pep726hook active? Run with python -m pep726hook"
    )
mp.mp.dps = 50
print("working precision:", mp.mp.dps, "digits ->", mp.mpf("3.14159265358979323846264338327950288"))

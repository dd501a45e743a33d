"""Run with plain Python: python examples/library_optin/main.py

The library opts itself in; nothing here turns pep726hook on.
"""

import mpcompat as mp

print("working precision:", mp.mp.dps, "digits ->", mp.mpf("3.14159265358979323846264338327950288"))
try:
    mp.dps = 50  # the classic mistake
except AttributeError as error:
    print("AttributeError:", error)
else:
    raise SystemExit("mp.dps = 50 went through: the library's guard is not active")
mp.mp.dps = 50
print("working precision:", mp.mp.dps, "digits ->", mp.mpf("3.14159265358979323846264338327950288"))
mp.pi_digits = 36  # any other name is stored as usual
print("mp.pi_digits =", mp.pi_digits)

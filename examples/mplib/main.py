"""Run with: python -m pep726hook examples/mplib/main.py"""

import mplib

mplib.foo = "spam"
del mplib.foo
for statement in ("mplib.CONSTANT = 42", "del mplib.CONSTANT", "mplib.dps = 0"):
    try:
        exec(statement)
    except (AttributeError, ValueError) as error:
        print(f"{statement:22} -> {type(error).__name__}: {error}")
    else:
        raise SystemExit(f"{statement} went through: is pep726hook active?")
print("prec, dps =", mplib.prec, mplib.dps)
mplib.dps = 5
print("after mplib.dps = 5: prec, dps =", mplib.prec, mplib.dps)

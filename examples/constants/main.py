"""Run with: python -m pep726hook examples/constants/main.py"""

import physics

for statement in ("physics.SPEED_OF_LIGHT = 3e8", "del physics.PLANCK"):
    try:
        exec(statement)
    except AttributeError as error:
        print(f"{statement:30} -> AttributeError: {error}")
    else:
        raise SystemExit(f"{statement} went through: is pep726hook active?")
physics.note = "lower-case names stay writable"
print(physics.note, "| c =", physics.SPEED_OF_LIGHT)

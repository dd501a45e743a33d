"""Run with: python -m pep726hook examples/sys_validation/main.py"""

import settings

settings.registry = {"a": 1}
for statement in (
    "settings.registry = 123",
    "settings.excepthook = None",
    "del settings.excepthook",
):
    try:
        exec(statement)
    except (TypeError, AttributeError) as error:
        print(f"{statement:28} -> {type(error).__name__}: {error}")
    else:
        raise SystemExit(f"{statement} went through: is pep726hook active?")
print("registry:", settings.registry)

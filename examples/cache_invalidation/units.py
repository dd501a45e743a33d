"""A conversion table cached per setting, dropped whenever the setting changes."""

import functools

system = "metric"


@functools.lru_cache(maxsize=None)
def table():
    print(f"  (building the {system} table)")
    return {"metric": {"length": "m", "mass": "kg"}, "imperial": {"length": "ft", "mass": "lb"}}[
        system
    ]


def __setattr__(name, value):
    if name == "system":
        if value not in ("metric", "imperial"):
            raise ValueError(f"unknown unit system {value!r}")
        table.cache_clear()
    globals()[name] = value

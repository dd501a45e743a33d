"""Statistics functions, each imported on first use."""

from lazystats import _lazy

__getattr__, __dir__, __all__, __setattr__ = _lazy.attach(
    __name__, {"mean": ["mean"], "spread": ["variance", "stdev"]}
)

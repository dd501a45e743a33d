"""Physical constants that cannot be rebound or deleted from outside."""

SPEED_OF_LIGHT = 299_792_458  # m/s
PLANCK = 6.626_070_15e-34  # J s


def __setattr__(name, value):
    if name.isupper():
        raise AttributeError(f"{__name__}.{name} is a constant")
    globals()[name] = value


def __delattr__(name):
    if name.isupper():
        raise AttributeError(f"{__name__}.{name} is a constant")
    del globals()[name]

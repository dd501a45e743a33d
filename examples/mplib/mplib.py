"""The example from PEP 726: precision settings kept consistent, a read-only constant."""

CONSTANT = 3.14
prec = 53
dps = 15


def dps_to_prec(n):
    """Return the number of bits required to represent n decimals accurately."""
    return max(1, round((int(n) + 1) * 3.3219280948873626))


def prec_to_dps(n):
    """Return the number of accurate decimals that can be represented with n bits."""
    return max(1, round(int(n) / 3.3219280948873626) - 1)


def validate(n):
    n = int(n)
    if n <= 0:
        raise ValueError("Positive integer expected")
    return n


def __setattr__(name, value):
    if name == "CONSTANT":
        raise AttributeError("Read-only attribute!")
    if name == "dps":
        value = validate(value)
        globals()["dps"] = value
        globals()["prec"] = dps_to_prec(value)
        return
    if name == "prec":
        value = validate(value)
        globals()["prec"] = value
        globals()["dps"] = prec_to_dps(value)
        return
    globals()[name] = value


def __delattr__(name):
    if name in ("CONSTANT", "dps", "prec"):
        raise AttributeError("Read-only attribute!")
    del globals()[name]

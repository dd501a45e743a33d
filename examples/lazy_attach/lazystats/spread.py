from lazystats import mean as _mean_of


def variance(values):
    centre = _mean_of(values)
    return sum((v - centre) ** 2 for v in values) / len(values)


def stdev(values):
    return variance(values) ** 0.5

"""A small geometry package whose old names are deprecated through its own helper.

``Round`` was renamed ``Circle`` and ``default_colour`` ``default_color``.
Reading, setting or deleting an old name warns (with pep726hook installed);
``from shapes import Round`` warns once, at the importing line.
"""

from shapes import _utils

default_color = "black"


class Circle:
    def __init__(self, radius):
        self.radius = radius

    def __repr__(self):
        return f"Circle({self.radius})"


Round = _utils.deprecated(Circle, __name__, "shapes.Round is deprecated; use shapes.Circle")
default_colour = _utils.deprecated(
    default_color, __name__, "shapes.default_colour is deprecated; use shapes.default_color"
)

_utils.finish_deprecations(__name__)

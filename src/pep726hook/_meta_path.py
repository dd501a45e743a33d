"""``sys.meta_path`` as a list that the import system walks with our finder first.

The class engine's finder must see every import first: it wraps the loader of
whichever finder serves the module, and that wrapper is what makes the
module's hooks work while its body runs.  Tools put their own finder in front
of it, most of them with ``sys.meta_path.insert(0, finder)`` (typeguard,
pyximport, plugin systems), and the module they import next would then load
without hooks: nothing of ours runs on that import.

So ``sys.meta_path`` becomes a :class:`FinderFirstList` while the class engine
is installed.  It is a list like any other, holding exactly what its users
put in it, in their order (``index()``, ``[0]``, ``pop(0)``, ``remove()``
mean what they meant); only iterating it, which is how the import system
walks it (``for finder in sys.meta_path`` in ``importlib._bootstrap``),
yields our finder first.  Our finder then asks the others in their order, so
a finder put in front still comes before every finder it was put in front of.

A list built from it and bound in its place (``sys.meta_path = [f, *sys.meta_path]``)
is noticed when the old list is freed, right then on CPython, and replaced by
a :class:`FinderFirstList` with the same items.  This module imports nothing.
"""

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Iterable, Iterator


class FinderFirstList(list):  # type: ignore[type-arg]
    """A list whose iteration yields :attr:`finder` first, wherever it sits.

    ``finder`` may be absent (removed by its owner, or never added): the list
    then iterates as a plain list does.
    """

    # Class defaults: a copy made with copy.copy() or pickle starts without them.
    finder: "Any" = None
    on_dropped: "Callable[[Any], None] | None" = None

    def __init__(
        self,
        items: "Iterable[Any]" = (),
        finder: "Any" = None,
        on_dropped: "Callable[[Any], None] | None" = None,
    ) -> None:
        # Not iterated when it is a list: ours would come out in walk order.
        super().__init__(in_place_order(items) if isinstance(items, list) else items)
        self.finder = finder
        self.on_dropped = on_dropped

    def __iter__(self) -> "Iterator[Any]":
        # Called once per import: one test when our finder sits first.
        if self and self[0] is self.finder:
            return _list_iter(self)
        return _list_iter(walk_order(self, self.finder))

    # ``[f] + sys.meta_path`` calls __radd__ before list's own concatenation
    # (the right operand's type is a subclass that defines it), so this common
    # way of putting a finder in front keeps the list what it is.
    def __add__(self, other: "Any") -> "Any":
        return self._like(list.__add__(list.copy(self), other))

    def __radd__(self, other: "Any") -> "Any":
        if not isinstance(other, list):
            return NotImplemented
        return self._like(list.__add__(list.copy(other), list.copy(self)))

    def _like(self, items: "Iterable[Any]") -> "FinderFirstList":
        # Same finder, same callback: whichever of the two is freed while the
        # other is sys.meta_path finds the finder still walked first and stops.
        return FinderFirstList(items, self.finder, self.on_dropped)

    def __del__(self) -> None:
        on_dropped = self.on_dropped
        if on_dropped is not None:
            # A finalizer must not raise (it would be printed as "Exception
            # ignored"); at worst the next import that reaches our finder puts
            # it first again.  Not contextlib.suppress: nothing is imported.
            try:  # noqa: SIM105
                on_dropped(self.finder)
            except Exception:
                pass


_list_iter = list.__iter__


def walk_order(finders: "Iterable[Any]", finder: "Any") -> "list[Any]":
    """Return a plain list of *finders* with *finder* moved first, if it is there."""
    items = in_place_order(finders)
    if items and items[0] is finder:
        return items
    for position, item in enumerate(items):
        if item is finder:
            del items[position]
            items.insert(0, finder)
            break
    return items


def finder_first(
    finders: "Iterable[Any]", finder: "Any", on_dropped: "Callable[[Any], None] | None"
) -> FinderFirstList:
    """Return a :class:`FinderFirstList` of *finders* (in their order) that walks *finder* first.

    *on_dropped* is called with *finder* when the list is freed (for instance
    because ``sys.meta_path`` was bound to another list); it runs as a
    finalizer: at any point, in any thread, and must never block.
    """
    return FinderFirstList(finders, finder, on_dropped)


def in_place_order(finders: "Iterable[Any]") -> "list[Any]":
    """Return a plain list of *finders* in the order they sit in, not the walk order."""
    return list.copy(finders) if isinstance(finders, list) else list(finders)

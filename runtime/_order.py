"""Tree order: where a child sits among its siblings, looked up without rescanning them."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Generic, TypeVar

T = TypeVar("T", bound=Hashable)


class SiblingPositions(Generic[T]):
    """Child positions for sorting many nodes into tree order.

    Each parent's children are indexed the first time one of them is asked for, so sorting
    k nodes under one parent of n children costs O(n + k) rather than the O(n k) of a
    ``children.index`` per node, which made committing a wide list quadratic.
    """

    def __init__(self, children_of: Callable[[T], Sequence[T]]) -> None:
        self._children_of = children_of
        self._positions: dict[T, dict[T, int]] = {}

    def of(self, parent: T, child: T) -> int:
        positions = self._positions.get(parent)
        if positions is None:
            children = self._children_of(parent)
            positions = self._positions[parent] = {c: i for i, c in enumerate(children)}
        return positions[child]

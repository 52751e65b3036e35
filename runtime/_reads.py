"""What `read_semantics` answers: the whole tree, the changes since a generation, or nothing new."""

from __future__ import annotations

import attrs

from ._node import Announcement, Issue, SemanticsNode


@attrs.frozen
class Full:
    """The whole committed snapshot at `generation`: the answer to a read without ``since``,
    or since a generation the journal no longer holds."""

    generation: int
    root: int | None
    focused: int | None
    nodes: tuple[SemanticsNode, ...]
    """Every node of the snapshot in tree order (parents before children)."""
    issues: tuple[Issue, ...]


@attrs.frozen
class Delta:
    """What changed from `from_generation` to `to_generation` (in JSON ``from`` and
    ``to``): the answer to a read since a generation the journal holds (one of the last 64)."""

    from_generation: int
    to_generation: int
    root: int | None
    focused: int | None
    upserted: tuple[SemanticsNode, ...]
    """Nodes added or changed since ``from_generation``, in current tree order."""
    removed: tuple[int, ...]
    """Node ids present at ``from_generation`` and gone now, in removal order."""
    issues: tuple[Issue, ...]
    """Always the whole current list of issues."""
    announcements: tuple[Announcement, ...]


@attrs.frozen
class Unchanged:
    """What a read since the current `generation` answers: nothing has changed."""

    generation: int


ReadResult = Full | Delta | Unchanged

"""The public semantics node: one immutable record per node of a committed snapshot."""

from __future__ import annotations

import attrs

from ._enums import ActionKind, Checked, Live, Relation, Role
from ._ids import SemanticId


@attrs.frozen
class Point:
    x: float
    y: float


@attrs.frozen
class Size:
    width: float
    height: float


@attrs.frozen
class Frame:
    origin: Point
    size: Size

    def contains(self, x: float, y: float) -> bool:
        return (
            self.origin.x <= x < self.origin.x + self.size.width
            and self.origin.y <= y < self.origin.y + self.size.height
        )


@attrs.frozen
class NodeState:
    focused: bool = False
    disabled: bool = False
    selected: bool = False
    pressed: bool = False
    checked: Checked | None = None
    expanded: bool | None = None
    invalid: bool = False
    required: bool = False
    read_only: bool = False
    busy: bool = False
    multiline: bool = False
    password: bool = False
    modal: bool = False


@attrs.frozen
class Numeric:
    current: float | None = None
    min: float | None = None
    max: float | None = None
    step: float | None = None
    value_text: str | None = None


@attrs.frozen
class TextSelection:
    start: int
    end: int


@attrs.frozen
class TextInfo:
    selection: TextSelection | None = None
    caret: int | None = None
    editable: bool = False


@attrs.frozen
class Collection:
    row_index: int | None = None
    row_count: int | None = None
    row_span: int | None = None
    column_index: int | None = None
    column_count: int | None = None
    column_span: int | None = None
    set_size: int | None = None
    set_position: int | None = None


@attrs.frozen
class SemanticsNode:
    """One node of a committed snapshot, as agents read it (JSON: ids as strings, enums
    as their values); a `node_id` is never reused for another node."""

    node_id: int
    semantic_id: SemanticId | None
    role: Role
    children: tuple[int, ...] = ()
    level: int | None = None
    url: str | None = None
    label: str | None = None
    value: str | None = None
    description: str | None = None
    state: NodeState = NodeState()
    numeric: Numeric | None = None
    text: TextInfo | None = None
    collection: Collection | None = None
    relations: tuple[tuple[Relation, tuple[int, ...]], ...] = ()
    live: Live = Live.OFF
    atomic: bool = False
    actions: tuple[ActionKind, ...] = ()
    focus_order: int | None = None
    frame: Frame = Frame(Point(0, 0), Size(0, 0))

    def relation(self, kind: Relation) -> tuple[int, ...]:
        for name, targets in self.relations:
            if name is kind:
                return targets
        return ()


@attrs.frozen
class DuplicateSemanticId:
    semantic_id: SemanticId
    nodes: tuple[int, ...]


@attrs.frozen
class MissingRelationTarget:
    source: int
    relation: Relation
    semantic_id: SemanticId


@attrs.frozen
class AmbiguousRelationTarget:
    source: int
    relation: Relation
    semantic_id: SemanticId
    nodes: tuple[int, ...]


Issue = DuplicateSemanticId | MissingRelationTarget | AmbiguousRelationTarget


@attrs.frozen
class Announcement:
    node_id: int
    generation: int
    live: Live
    atomic: bool
    text: str

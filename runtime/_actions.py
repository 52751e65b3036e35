"""Typed actions, targets and preconditions: what an agent asks the runtime to do."""

from __future__ import annotations

from typing import Literal

import attrs

from ._enums import ActionKind, Role, ScrollDirection
from ._ids import SemanticId


@attrs.frozen
class SimpleAction:
    """An action that carries no payload (activate, focus, submit, …)."""

    kind: ActionKind


@attrs.frozen
class SetText:
    value: str
    kind: Literal[ActionKind.SET_TEXT] = ActionKind.SET_TEXT


@attrs.frozen
class Scroll:
    direction: ScrollDirection
    kind: Literal[ActionKind.SCROLL] = ActionKind.SCROLL


@attrs.frozen
class SetNumericValue:
    value: float
    kind: Literal[ActionKind.SET_NUMERIC_VALUE] = ActionKind.SET_NUMERIC_VALUE


@attrs.frozen
class SetSelection:
    start: int
    end: int
    kind: Literal[ActionKind.SET_SELECTION] = ActionKind.SET_SELECTION


SemanticsAction = SimpleAction | SetText | Scroll | SetNumericValue | SetSelection

PAYLOAD_KINDS = frozenset(
    {ActionKind.SET_TEXT, ActionKind.SCROLL, ActionKind.SET_NUMERIC_VALUE, ActionKind.SET_SELECTION}
)


@attrs.frozen
class BySemanticId:
    id: SemanticId


@attrs.frozen
class ByNodeId:
    id: int


@attrs.frozen
class PathStep:
    """One step of a path: the ``index``-th child matching every filter given (at least one)."""

    index: int = 0
    role: Role | None = None
    label: str | None = None
    value: str | None = None
    semantic_id: SemanticId | None = None

    def has_filter(self) -> bool:
        return any(f is not None for f in (self.role, self.label, self.value, self.semantic_id))


@attrs.frozen
class ByPath:
    steps: tuple[PathStep, ...]


Target = BySemanticId | ByNodeId | ByPath


@attrs.frozen
class Latest:
    """Act on whatever generation is current."""


@attrs.frozen
class Exact:
    """Act only if the current generation is exactly this one."""

    generation: int


Precondition = Latest | Exact
